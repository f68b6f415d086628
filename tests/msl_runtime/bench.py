"""Benchmarks of the MSL runtime (kernels.cpp), ratios measured in one run.

Usage: python3 bench.py path/to/kernels.so
Prints ns per threadgroup_barrier per thread, SAXPY vs NumPy `a*x+y`, and a
grid-stride simd_sum reduction vs numpy.sum (16M float32, 2 OS threads).
A ratio > 1 means the kernel is faster than NumPy.
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads spin on the same cores
import numpy as np  # noqa: E402

import pmrt

NTHREADS = min(2, os.cpu_count() or 1)


def best(fn, reps=7):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def run_ok(k, L, nthreads=NTHREADS):
    rc = pmrt.run(k, L, nthreads=nthreads)
    assert rc == (0, ""), rc


def bench_barrier(lib):
    k = lib["barrier_loop"]
    iters = np.array([2000], dtype=np.uint32)
    out = np.zeros(1024, dtype=np.uint32)
    res = {}
    for tpg in (1024, 256, 32):
        L = pmrt.make_launch([out, iters], groups=(1,), tpg=(tpg,))
        run_ok(k, L, 1)
        t = best(lambda: run_ok(k, L, 1), 5)
        res[tpg] = t / (iters[0] * tpg) * 1e9
    print("threadgroup_barrier: " + ", ".join(f"{v:.1f} ns per thread ({tpg} threads)" for tpg, v in res.items()))
    return res[1024]


def bench_saxpy(lib):
    n = 16 * 1024 * 1024
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a = np.float32(2.5)
    t_np = best(lambda: a * x + y)
    ab = np.array([a], dtype=np.float32)
    out = {}
    for kname in ("saxpy", "saxpy_fibers"):
        L = pmrt.make_launch([y, x, ab], threads=(n,), tpg=(256,))
        run_ok(lib[kname], L)
        out[kname] = best(lambda: run_ok(lib[kname], L), 7 if kname == "saxpy" else 3)
    print(f"SAXPY 16M float32: numpy {t_np * 1e3:.2f} ms, LOOP kernel {out['saxpy'] * 1e3:.2f} ms "
          f"({NTHREADS} threads) -> ratio {t_np / out['saxpy']:.2f}x; "
          f"same kernel as fibers {out['saxpy_fibers'] * 1e3:.1f} ms")
    return t_np / out["saxpy"]


def bench_sum(lib):
    n = 16 * 1024 * 1024
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n, dtype=np.float32)
    t_np = best(lambda: x.sum())
    n4 = np.array([n // 4], dtype=np.uint32)
    k = lib["sum_grid"]
    results = []
    for groups, tpg in ((64, 256), (128, 256), (256, 256), (512, 256), (256, 128), (512, 128)):
        partial = np.zeros(groups, dtype=np.float32)
        L = pmrt.make_launch([x, partial, n4], groups=(groups,), tpg=(tpg,))

        def go():
            run_ok(k, L)
            return partial.sum(dtype=np.float64)

        s = go()
        assert abs(s - x.sum(dtype=np.float64)) < 1e-2 * np.sqrt(n), (s, x.sum(dtype=np.float64))
        t = best(go)
        results.append((t, groups, tpg))
    t, groups, tpg = min(results)
    print(f"grid-stride simd_sum reduction 16M float32: numpy.sum {t_np * 1e3:.2f} ms, kernel {t * 1e3:.2f} ms "
          f"({groups} groups x {tpg} threads, {NTHREADS} OS threads) -> ratio {t_np / t:.2f}x  "
          f"[" + ", ".join(f"{g}x{p}: {tt * 1e3:.2f} ms" for tt, g, p in results) + "]")
    return t_np / t


def main():
    lib = pmrt.Library(sys.argv[1])
    bench_barrier(lib)
    bench_saxpy(lib)
    bench_sum(lib)


if __name__ == "__main__":
    main()
