"""pymetal's built-in matmul, sort and scan kernels against NumPy, measured in
the same run (each pymetal run followed by the NumPy run, repeated; medians):
  matmul 1024^3 float32 (GFLOP/s)   vs a @ b         target >= 0.25x
  sort 1M float32 (values)          vs np.sort(kind="stable")
  argsort 1M float32                vs np.argsort(kind="stable")
  cumsum 16M float32                vs np.cumsum
"""
import os
import statistics
import time

import numpy as np
import pymetal as pm
from pymetal.arrays.kernels.matmul import matmul
from pymetal.arrays.kernels.scan import cumulative
from pymetal.arrays.kernels.sort import sort


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(ours, numpy, repeats):
    ours(), numpy()  # warm up (compile / page in)
    a, b = [], []
    for _ in range(repeats):
        a.append(timed(ours))
        b.append(timed(numpy))
    return statistics.median(a), statistics.median(b)


def line(name, ours, numpy, target=None, extra=""):
    ratio = numpy / ours
    verdict = "" if target is None else "  (target >= %sx: %s)" % (target, "ok" if ratio >= target else "BELOW")
    print(f"  {name:28s} pymetal {ours * 1e3:8.2f} ms   NumPy {numpy * 1e3:8.2f} ms   "
          f"ratio {ratio:5.2f}x{extra}{verdict}")


def synced(fn):
    def run():
        fn()
        pm.synchronize()
    return run


def main():
    rng = np.random.default_rng(0)
    print(f"pymetal {pm.device().backend} backend, {os.cpu_count()} cores (medians, interleaved):")

    n = 1024
    a_np = rng.standard_normal((n, n), dtype=np.float32)
    b_np = rng.standard_normal((n, n), dtype=np.float32)
    a, b, c = pm.asarray(a_np), pm.asarray(b_np), pm.empty((n, n), np.float32)
    ours, ref = interleaved(synced(lambda: matmul(a, b, c)), lambda: a_np @ b_np, 9)
    flops = 2.0 * n ** 3
    line("matmul 1024^3 float32", ours, ref, 0.25,
         "   %.1f vs %.1f GFLOP/s" % (flops / ours / 1e9, flops / ref / 1e9))

    x_np = rng.standard_normal(1 << 20, dtype=np.float32)
    x = pm.asarray(x_np)
    values, indices = pm.empty(x_np.shape, np.float32), pm.empty(x_np.shape, np.int64)
    ours, ref = interleaved(synced(lambda: sort(x, values)), lambda: np.sort(x_np, kind="stable"), 9)
    line("sort 1M float32", ours, ref)
    ours, ref = interleaved(synced(lambda: sort(x, out_indices=indices)),
                            lambda: np.argsort(x_np, kind="stable"), 9)
    line("argsort 1M float32", ours, ref)

    y_np = rng.standard_normal(16 << 20, dtype=np.float32)
    y, out = pm.asarray(y_np), pm.empty(y_np.shape, np.float32)
    ours, ref = interleaved(synced(lambda: cumulative(y, out)), lambda: np.cumsum(y_np), 9)
    line("cumsum 16M float32", ours, ref)


if __name__ == "__main__":
    main()
