"""NumPy's API on pymetal (issue 23) against NumPy: einsum, histogram, bincount, percentile and
random normal, in one run.

Each case times pymetal (call + pm.synchronize, so the device work is counted) and NumPy on the
same data, in interleaved rounds; the figures are medians over rounds and the ratio is NumPy's
time over pymetal's (above 1: pymetal is faster). float32 data on both sides.

    python scripts/bench_numpy_api.py            # 1M elements (random normal: 16M), 1024x1024 einsum
    python scripts/bench_numpy_api.py --quick    # small sizes, 3 rounds: a smoke run
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's pymetal

import numpy as np
import pymetal as pm


def cases(n, m, big):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, m)).astype(np.float32)
    b = rng.standard_normal((m, m)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    ints = rng.integers(0, 1000, n)
    pa, pb, px, pi = pm.asarray(a), pm.asarray(b), pm.asarray(x), pm.asarray(ints)
    prng, nrng = pm.random.default_rng(1), np.random.default_rng(1)
    return [
        ("einsum ij,jk->ik %dx%d" % (m, m), lambda: pm.einsum("ij,jk->ik", pa, pb),
         lambda: np.einsum("ij,jk->ik", a, b)),
        ("einsum ij,ij->i %dx%d" % (m, m), lambda: pm.einsum("ij,ij->i", pa, pb),
         lambda: np.einsum("ij,ij->i", a, b)),
        ("histogram %d, 100 bins" % n, lambda: pm.histogram(px, bins=100), lambda: np.histogram(x, bins=100)),
        ("bincount %d" % n, lambda: pm.bincount(pi), lambda: np.bincount(ints)),
        ("percentile %d, q=[5,50,95]" % n, lambda: pm.percentile(px, [5, 50, 95]),
         lambda: np.percentile(x, [5, 50, 95])),
        ("random normal %d" % big, lambda: prng.standard_normal(big),
         lambda: nrng.standard_normal(big, dtype=np.float32)),
    ]


def timed(fn):
    t = time.perf_counter()
    fn()
    pm.synchronize()
    return time.perf_counter() - t


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes, 3 rounds (a smoke run)")
    p.add_argument("--rounds", type=int, default=None)
    args = p.parse_args()
    n, m, big = (1 << 16, 128, 1 << 16) if args.quick else (1 << 20, 1024, 16 << 20)
    rounds = args.rounds or (3 if args.quick else 7)
    print("pymetal %s on %s; %d interleaved rounds, medians" % (pm.__version__, pm.device().name, rounds))
    print("%-32s %12s %12s %8s" % ("case", "pymetal ms", "NumPy ms", "ratio"))
    for name, pm_fn, np_fn in cases(n, m, big):
        timed(pm_fn)  # first use: kernel loads, allocator warm-up
        np_fn()
        tp, tn = [], []
        for _ in range(rounds):
            tp.append(timed(pm_fn))
            t = time.perf_counter()
            np_fn()
            tn.append(time.perf_counter() - t)
        mp, mn = statistics.median(tp), statistics.median(tn)
        print("%-32s %12.2f %12.2f %7.2fx" % (name, mp * 1e3, mn * 1e3, mn / mp), flush=True)


if __name__ == "__main__":
    main()
