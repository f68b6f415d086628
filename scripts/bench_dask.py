"""Dask reduction over pymetal chunks: mean and std over axis 0 of a float32 array.

Three configurations in one run, each on a dask.distributed LocalCluster on 127.0.0.1:
pymetal chunks on 1 worker process, pymetal chunks on 2 worker processes, and NumPy chunks
on 2 worker processes. The data is generated on the workers (da.random under the "pymetal"
or "numpy" array backend) and persisted first, so the timed part is the reduction alone;
the median of --rounds is reported, with ratios, and where the time goes: the workers' task
compute time (from the scheduler's task stream), inter-worker transfers, the rest (scheduling,
the client round trip), and the cost of pickling one chunk (serialisation).

    python scripts/bench_dask.py                  # 4 GB (the issue's size)
    python scripts/bench_dask.py --size-mb 256    # small, for a shared machine
"""
import argparse
import pickle
import statistics
import time

import numpy as np

import dask
import dask.array as da
import distributed

import pymetal as pm
import pymetal.dask  # noqa: F401


def run(workers, backend, size_mb, chunk_mb, cols, rounds):
    rows = size_mb * 2**20 // (4 * cols)
    chunk_rows = max(1, chunk_mb * 2**20 // (4 * cols))
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, memory_limit=0) as cluster, \
            distributed.Client(cluster) as client:
        with dask.config.set({"array.backend": backend}):
            x = da.random.default_rng(0).standard_normal((rows, cols), chunks=(chunk_rows, cols),
                                                          dtype=np.float32)
        x = x.persist()
        distributed.wait(x)
        times, compute, transfer = [], [], []
        for _ in range(rounds):
            client.get_task_stream()  # starts recording
            with distributed.get_task_stream(client) as ts:
                start = time.perf_counter()
                mean, std = dask.compute(x.mean(axis=0), x.std(axis=0))
                times.append(time.perf_counter() - start)
            compute.append(sum(s["stop"] - s["start"] for t in ts.data for s in t["startstops"]
                               if s["action"] == "compute") / workers)
            transfer.append(sum(s["stop"] - s["start"] for t in ts.data for s in t["startstops"]
                                if s["action"] == "transfer") / workers)
        chunk = x.blocks[0, 0].compute()
        start = time.perf_counter()
        bufs: list = []
        pickle.loads(pickle.dumps(chunk, protocol=5, buffer_callback=bufs.append), buffers=bufs)
        serial = time.perf_counter() - start
        assert type(mean) is (pm.Array if backend == "pymetal" else np.ndarray), type(mean)
        check = float(np.abs(np.asarray(mean)).max()), float(np.asarray(std).mean())
    return statistics.median(times), statistics.median(compute), statistics.median(transfer), serial, \
        x.npartitions, check


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mb", type=int, default=4096, help="array size in MiB (default 4096: 4 GB)")
    p.add_argument("--chunk-mb", type=int, default=64, help="chunk size in MiB (default 64)")
    p.add_argument("--cols", type=int, default=256, help="columns (the reduced rows are this long)")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    print(f"mean+std over axis 0 of float32 ({a.size_mb} MiB, {a.chunk_mb} MiB chunks, {a.cols} columns) "
          f"on {pm.device().name}")
    results = {}
    for name, workers, backend in [("pymetal, 1 worker", 1, "pymetal"), ("pymetal, 2 workers", 2, "pymetal"),
                                   ("numpy, 2 workers", 2, "numpy")]:
        wall, comp, xfer, serial, parts, check = run(workers, backend, a.size_mb, a.chunk_mb, a.cols, a.rounds)
        results[name] = wall
        print(f"  {name:20s} {wall * 1e3:8.1f} ms  ({parts} chunks; per worker: tasks {comp * 1e3:.1f} ms, "
              f"transfers {xfer * 1e3:.1f} ms; scheduling+client {max(0.0, wall - comp - xfer) * 1e3:.1f} ms; "
              f"pickle round trip of one chunk {serial * 1e3:.1f} ms)  max|mean| {check[0]:.4f}, "
              f"mean std {check[1]:.4f}")
    one, two, npy = results["pymetal, 1 worker"], results["pymetal, 2 workers"], results["numpy, 2 workers"]
    print(f"scaling 1 -> 2 workers (pymetal): {one / two:.2f}x; pymetal vs NumPy chunks on 2 workers: "
          f"{npy / two:.2f}x (> 1: pymetal faster)")


if __name__ == "__main__":
    main()
