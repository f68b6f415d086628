"""The CPU backend against NumPy, measured in the same run (issue targets):
  SAXPY over 16M float32            >= 0.8x NumPy's a*x+y
  simd_sum + barrier sum over 16M   >= 0.5x NumPy's sum
  one threadgroup_barrier per thread <= 30 ns
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

// Grid-stride sum, GPU style: each thread reads 4 float4 (64 bytes) per step,
// reduces with simd_sum, and one barrier combines the simdgroups. n4 % 4 == 0.
kernel void sum(device const float4* x [[buffer(0)]], device float* partials [[buffer(1)]],
                constant uint& n4 [[buffer(2)]],
                uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float shared[32];
    float4 a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
    for (uint i = gid * 4; i < n4; i += grid * 4) {
        a += x[i]; b += x[i + 1]; c += x[i + 2]; d += x[i + 3];
    }
    float4 acc = (a + b) + (c + d);
    float s = simd_sum(acc.x + acc.y + acc.z + acc.w);
    if (lane == 0) shared[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < sgs ? shared[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) partials[group] = v;
    }
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

    # The launch shape is the caller's choice on a GPU too: try a few, report all.
    reference = x_np.sum(dtype=np.float64)
    shapes = {}
    for groups, per_group in [(64, 256), (256, 256), (8, 1024), (16, 64)]:
        partials = pm.zeros(groups, np.float32)

        def run_sum():
            lib.sum(x, partials, np.uint32(n // 4), groups=groups, threadgroup=per_group)
            return partials.numpy().sum(dtype=np.float64)
        total = run_sum()
        assert abs(total - reference) <= 1e-3 * np.abs(x_np).sum(), (total, reference)
        shapes[(groups, per_group)] = best(run_sum)
    (groups, per_group), ours = min(shapes.items(), key=lambda item: item[1])
    numpy = best(lambda: x_np.sum())
    line(f"sum (simd_sum + barrier), 16M", ours, numpy, 0.5)
    print("  " + " ".join(f"[{g}x{t}: {ms * 1e3:.2f} ms]" for (g, t), ms in shapes.items())
          + f"  best: {groups} groups x {per_group} threads")

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
