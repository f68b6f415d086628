"""The CPU backend against NumPy, measured in the same run (issue targets):
  SAXPY over 16M float32            >= 0.8x NumPy's a*x+y
  one threadgroup_barrier per thread <= 30 ns
GPU-style grid-stride reductions are measured in bench_gpu_patterns.py.
"""
import os
import time

import numpy as np
import pymetal as pm

SOURCE = """
#include <metal_stdlib>
using namespace metal;

kernel void saxpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}

kernel void barriers(device uint* out [[buffer(0)]], constant uint& rounds [[buffer(1)]],
                     uint tid [[thread_index_in_threadgroup]], uint group [[threadgroup_position_in_grid]]) {
    uint x = tid;
    for (uint r = 0; r < rounds; r++) {
        x = x * 3u + r;
        threadgroup_barrier(mem_flags::mem_none);
    }
    if (tid == 0) out[group] = x;
}
"""


def best(fn, repeats=7):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def line(name, ours, numpy, target):
    ratio = numpy / ours
    print(f"  {name:34s} pymetal {ours * 1e3:8.2f} ms   NumPy {numpy * 1e3:8.2f} ms   "
          f"ratio {ratio:5.2f}x  (target >= {target}x: {'ok' if ratio >= target else 'BELOW'})")


def main():
    lib = pm.compile(SOURCE)
    n = 16 << 20
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32)
    y_np = rng.standard_normal(n, dtype=np.float32)
    x, y = pm.asarray(x_np), pm.asarray(y_np)
    a = np.float32(1.5)
    print(f"pymetal {pm.device().backend} backend, {os.cpu_count()} cores:")

    def run_saxpy():
        lib.saxpy(x, y, a, grid=n)
        pm.synchronize()
    ours = best(run_saxpy)
    numpy = best(lambda: a * x_np + y_np)
    expected = a * x_np + y_np.astype(np.float32)
    y2 = pm.asarray(y_np.copy())
    lib.saxpy(x, y2, a, grid=n)
    assert np.allclose(y2.numpy(), expected, rtol=1e-5, atol=1e-5)
    line("SAXPY, 16M float32", ours, numpy, 0.8)

    # One threadgroup of 1024 threads: it runs on one core, so time / (rounds x threads)
    # is the cost of one barrier for one thread (a fiber switch and the bookkeeping).
    rounds, threads = 2000, 1024
    out = pm.zeros(1, np.uint32)

    def run_barriers():
        lib.barriers(out, np.uint32(rounds), groups=1, threadgroup=threads)
        pm.synchronize()
    per_barrier = best(run_barriers, repeats=3) / (rounds * threads)
    print(f"  {'threadgroup_barrier, per thread':34s} {per_barrier * 1e9:8.1f} ns "
          f"(target <= 30 ns: {'ok' if per_barrier <= 30e-9 else 'OVER'})")


if __name__ == "__main__":
    main()
