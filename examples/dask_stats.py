"""Statistics over a dataset bigger than a memory budget, on a Dask cluster of pymetal workers.

A LocalCluster of 2 worker processes (on several Macs: `dask scheduler` on one, `dask worker
tcp://SCHEDULER:8786 --nthreads 1 --resources GPU=1` on each; see the README's "Past one
machine") generates normal samples with da.random under the "pymetal" array backend (each
chunk made by pm.random's Philox kernels on the worker that holds it) and reduces them with
mean, std and a histogram. No process ever holds the whole dataset: a chunk is generated,
reduced and dropped, so the total can exceed every machine's memory; the results are printed
next to the exact values of the distribution.

    python examples/dask_stats.py --gb 8     # 8 GB of float32 samples
"""
import argparse
import math

import numpy as np

LOC, SCALE = 3.0, 2.0


def main(gb: float = 0.0625, chunk_mb: int = 16) -> str:
    try:
        import dask
        import dask.array as da
        import distributed
    except ImportError as e:
        raise ImportError("this example needs dask and distributed: pip install -e '.[test]'") from e
    import pymetal as pm
    import pymetal.dask  # noqa: F401  (the "pymetal" array backend, when pymetal is not installed)

    n = int(gb * 2**30) // 4
    chunk = chunk_mb * 2**20 // 4
    edges = np.linspace(LOC - 4 * SCALE, LOC + 4 * SCALE, 9)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with dask.config.set({"array.backend": "pymetal"}):
            x = da.random.default_rng(2026).normal(LOC, SCALE, size=n, chunks=chunk)  # float32
        counts, _ = da.histogram(x, bins=edges)
        mean, std, counts = dask.compute(x.mean(), x.std(), counts)
    assert type(mean) is pm.Array and type(counts) is pm.Array  # computed as pymetal chunks

    # The exact values: N(LOC, SCALE) and its probability per bin.
    def cdf(v):
        return 0.5 * (1 + math.erf((v - LOC) / (SCALE * math.sqrt(2))))

    want = [n * (cdf(b) - cdf(a)) for a, b in zip(edges[:-1], edges[1:])]
    print(f"{n:,} float32 samples ({n * 4 / 2**30:.3f} GiB) in {x.npartitions} pymetal chunks on 2 workers")
    print(f"  mean {float(mean):.5f}  (exact {LOC})")
    print(f"  std  {float(std):.5f}  (exact {SCALE})")
    print("  histogram bin        count     expected")
    for a, b, got, exp in zip(edges[:-1], edges[1:], counts.tolist(), want):
        print(f"  [{a:5.1f}, {b:5.1f})  {got:11,d}  {exp:11,.0f}")
    err = max(abs(float(mean) - LOC), abs(float(std) - SCALE))
    tol = 5 * SCALE / math.sqrt(n) + 1e-3
    worst = max(abs(g - e) / math.sqrt(e + 1) for g, e in zip(counts.tolist(), want))  # in standard deviations
    if err > tol or worst > 6:
        raise AssertionError(f"statistics off: mean/std error {err:.2g} (tolerance {tol:.2g}), "
                             f"histogram {worst:.1f} sigma")
    return f"dask_stats: mean/std of {n:,} samples within {err:.1e}, histogram within {worst:.1f} sigma"


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gb", type=float, default=0.0625, help="dataset size in GiB (default 1/16)")
    p.add_argument("--chunk-mb", type=int, default=16, help="chunk size in MiB")
    args = p.parse_args()
    print(main(args.gb, args.chunk_mb))
