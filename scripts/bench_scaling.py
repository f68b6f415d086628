"""The scaling curve of issue 25 at every power of two: time against size for
add (np.asarray(a + b): the op, then a host read) and sum (float(pm.sum(a))),
pymetal against NumPy, float32, 1K to 64M elements (scripts/bench_latency.py
measures the same in steps of 4x, with the latency figures).

Wall time (time.perf_counter: multi-threaded kernels run on several cores, which
thread time would not count), many calls per sample, NumPy and pymetal samples
interleaved, medians. The crossover is the smallest size from which pymetal is
at least as fast at every larger size measured. On a loaded machine (other
processes on the cores) the kernels' second core is often missing: say so with
the figures. The "kernels" column runs with the host path for small arrays off
(pymetal/arrays/small.py).
Usage: python scripts/bench_scaling.py [--max LOG2] [--rounds R]   (default: 26 (64M), 7)
"""
import argparse

import numpy as np

import pymetal as pm
from bench_latency import scaling


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=26, help="largest size, as a power of two (default 26: 64M)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    print(f"pymetal on {pm.device().name}, NumPy {np.__version__}")
    scaling([1 << k for k in range(10, args.max + 1)], args.rounds)


if __name__ == "__main__":
    main()
