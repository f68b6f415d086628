"""GPU-style kernels on the CPU backend against NumPy, measured in the same run.

Kernels written the way one writes them for an Apple GPU (grid-stride loops
whose neighbouring threads read neighbouring addresses, SIMD-group reductions,
threadgroup memory, per-group partials, simdgroup_matrix GEMM). Targets (issue 7):
  grid-stride simd_sum over 16M float32, float4 x 4 per step   >= 1.0x np.sum
  grid-stride simd_sum over 16M float32, one float per step    >= 1.0x np.sum
  GPU-style argmax over 16M float32                            >= 0.5x np.argmax
  simdgroup_matrix GEMM 1024^3 (tests/python/msl/kernels/simdgroup_gemm.metal)
                                                               >= 20 GFLOP/s
Each line times pymetal and NumPy alternately (medians of the repeats) and
also gives the ratio by pymetal's CPU time spread over the cores: what the
wall time would be if the cores were not shared. A launch shape is the
caller's choice on a GPU too: a few are tried, the best one is reported, and
all are listed.

Usage: python scripts/bench_gpu_patterns.py [--quick]   (--quick: 1M floats, GEMM 128^3, one repeat:
a check that every kernel runs and agrees with NumPy, not a measurement)
"""
import os
import statistics
import sys
import time

import numpy as np
import pymetal as pm

# The kernels the tests check, in tests/python/msl/kernels/ (read through the tests' msl_kernels.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
import msl_kernels  # noqa: E402

SOURCE = ("#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;\n"
          + msl_kernels.source("grid_stride_sum4_argmax.metal")  # sum4, argmax
          + msl_kernels.source("grid_stride_sum.metal"))  # gs_sum: the plainest form, one float per step


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(ours, theirs, repeats, settle=0.0):
    """Medians of `repeats` alternating runs of ours() and theirs(): (ours, ours' CPU time, theirs).
    `settle`: seconds to wait after theirs() (OpenBLAS's idle threads spin for up to ~0.1 s after
    a matmul, taking a core from whatever runs next)."""
    a, cpu, b = [], [], []
    for _ in range(repeats):
        start = time.process_time()
        a.append(timed(ours))
        cpu.append(time.process_time() - start)
        b.append(timed(theirs))
        time.sleep(settle)
    return statistics.median(a), statistics.median(cpu), statistics.median(b)


def report(name, ours, cpu, numpy, target, shapes=None):
    # The CPU time over the cores is what the wall time would be on otherwise
    # idle cores (the machine may be shared); NumPy's calls use one core.
    ratio = numpy / ours
    print(f"  {name:40s} pymetal {ours * 1e3:8.2f} ms (CPU {cpu * 1e3:7.2f} ms)   NumPy {numpy * 1e3:7.2f} ms   "
          f"ratio {ratio:5.2f}x, {numpy / (cpu / CORES):5.2f}x by CPU time  "
          f"(target >= {target}x: {'ok' if ratio >= target else 'OVER'})")
    if shapes:
        print("      " + " ".join(f"[{g}x{t}: {s * 1e3:.2f} ms]" for (g, t), s in shapes.items()))


SHAPES = [(64, 256), (256, 256), (16, 1024), (1024, 64)]
CORES = os.cpu_count()


def best_shape(run, repeats=3):
    """Each launch shape's median time; returns {shape: seconds}."""
    out = {}
    for shape in SHAPES:
        run(shape)  # warm up (and compile)
        out[shape] = statistics.median(timed(lambda: run(shape)) for _ in range(repeats))
    return out


def main():
    quick = "--quick" in sys.argv[1:]
    repeats = 1 if quick else int(os.environ.get("REPEATS", "7"))
    lib = pm.compile(SOURCE)
    n = (1 if quick else 16) << 20
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32)
    x = pm.asarray(x_np)
    print(f"pymetal {pm.device().backend} backend, {os.cpu_count()} cores, REPEATS={repeats}:")
    reference = x_np.sum(dtype=np.float64)

    for name, kernel, count in [("grid-stride sum, float4 x 4 per step", lib.sum4, np.uint32(n // 4)),
                                ("grid-stride sum, one float per step", lib.gs_sum, np.uint32(n))]:
        partials = {g: pm.zeros(g, np.float32) for g, _ in SHAPES}

        def run(shape, kernel=kernel, count=count, partials=partials):
            kernel(x, partials[shape[0]], count, groups=shape[0], threadgroup=shape[1])
            return partials[shape[0]].numpy().sum(dtype=np.float64)
        for shape in SHAPES:
            total = run(shape)
            assert abs(total - reference) <= 1e-3 * np.abs(x_np).sum(), (name, shape, total, reference)
        shapes = best_shape(run, 1 if quick else 3)
        shape = min(shapes, key=shapes.get)
        ours, cpu, numpy = interleaved(lambda: run(shape), lambda: x_np.sum(), repeats)
        report(f"{name} ({shape[0]}x{shape[1]})", ours, cpu, numpy, 1.0, shapes)

    pval = {g: pm.zeros(g, np.float32) for g, _ in SHAPES}
    pidx = {g: pm.zeros(g, np.uint32) for g, _ in SHAPES}

    def run_argmax(shape):
        g = shape[0]
        lib.argmax(x, pval[g], pidx[g], np.uint32(n), groups=g, threadgroup=shape[1])
        v, i = pval[g].numpy(), pidx[g].numpy()
        return int(i[v == v.max()].min())
    expected = int(np.argmax(x_np))
    for shape in SHAPES:
        assert run_argmax(shape) == expected, shape
    shapes = best_shape(run_argmax, 1 if quick else 3)
    shape = min(shapes, key=shapes.get)
    ours, cpu, numpy = interleaved(lambda: run_argmax(shape), lambda: np.argmax(x_np), repeats)
    report(f"GPU-style argmax ({shape[0]}x{shape[1]})", ours, cpu, numpy, 0.5, shapes)

    # simdgroup GEMM: 4 simdgroups of 32 threads per threadgroup, a 16x16 block each.
    gemm = pm.compile("#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;\n"
                      + msl_kernels.source("simdgroup_gemm.metal")).sgm_gemm
    size = 128 if quick else int(os.environ.get("GEMM_SIZE", "1024"))
    A = rng.standard_normal((size, size), dtype=np.float32)
    B = rng.standard_normal((size, size), dtype=np.float32)
    Ap, Bp, Cp = pm.asarray(A), pm.asarray(B), pm.zeros((size, size), np.float32)
    dims = [np.uint32(size)] * 3

    def run_gemm():
        gemm(Ap, Bp, Cp, *dims, np.uint32(0), groups=(size // 16, size // 16), threadgroup=128)
        pm.synchronize()
    run_gemm()
    np.testing.assert_allclose(Cp.numpy(), A @ B, rtol=1e-3, atol=1e-3 * np.sqrt(size))
    ours, cpu, numpy = interleaved(run_gemm, lambda: A @ B, max(3, repeats // 2), settle=0.3)
    flops = 2.0 * size ** 3
    gflops = flops / ours / 1e9
    print(f"  {'simdgroup_matrix GEMM ' + str(size) + '^3':40s} pymetal {ours * 1e3:8.2f} ms "
          f"({gflops:5.2f} GFLOP/s, {flops / (cpu / CORES) / 1e9:5.2f} by CPU time)   NumPy @ {numpy * 1e3:7.2f} ms "
          f"({flops / numpy / 1e9:6.1f} GFLOP/s)   ratio {numpy / ours:5.3f}x  "
          f"(target >= 20 GFLOP/s: {'ok' if gflops >= 20 else 'OVER'})")


if __name__ == "__main__":
    main()
