"""GPU-style kernels on the CPU backend against NumPy, measured in the same run.

Kernels written the way one writes them for an Apple GPU (grid-stride loops
whose neighbouring threads read neighbouring addresses, SIMD-group reductions,
threadgroup memory, per-group partials, simdgroup_matrix GEMM). Targets (issue 7):
  grid-stride simd_sum over 16M float32, float4 x 4 per step   >= 1.0x np.sum
  grid-stride simd_sum over 16M float32, one float per step    >= 1.0x np.sum
  GPU-style argmax over 16M float32                            >= 0.5x np.argmax
  simdgroup_matrix GEMM 1024^3 (tests/python/msl/test_msl_conformance.py's kernel)
                                                               >= 20 GFLOP/s
Each line times pymetal and NumPy alternately (medians of the repeats) and
also gives the ratio by pymetal's CPU time spread over the cores: what the
wall time would be if the cores were not shared. A launch shape is the
caller's choice on a GPU too: a few are tried, the best one is reported, and
all are listed.
"""
import os
import statistics
import time

import numpy as np
import pymetal as pm

SOURCE = """
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

// Thread gid reads 4 float4 (64 bytes) per step, steps of the whole grid. n4 % 4 == 0.
kernel void sum4(device const float4* x [[buffer(0)]], device float* partials [[buffer(1)]],
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

// The plainest form: one float per step.
kernel void sum1(device const float* x [[buffer(0)]], device float* partials [[buffer(1)]],
                 constant uint& n [[buffer(2)]],
                 uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                 uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                 uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float shared[32];
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) acc += x[i];
    float s = simd_sum(acc);
    if (lane == 0) shared[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < sgs ? shared[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) partials[group] = v;
    }
}

// argmax, the GPU way: grid-stride per thread, then the simdgroup's maximum
// (simd_max) and its first index (simd_min over the lanes holding it), then
// threadgroup memory and the first simdgroup, one (value, index) per group.
kernel void argmax(device const float* x [[buffer(0)]], device float* pval [[buffer(1)]],
                   device uint* pidx [[buffer(2)]], constant uint& n [[buffer(3)]],
                   uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                   uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float sval[32];
    threadgroup uint sidx[32];
    float best = -INFINITY;
    uint bi = 0xFFFFFFFFu;
    for (uint i = gid; i < n; i += grid) {
        float v = x[i];
        if (v > best) { best = v; bi = i; }
    }
    float m = simd_max(best);
    uint mi = simd_min(best == m ? bi : 0xFFFFFFFFu);
    if (lane == 0) { sval[sg] = m; sidx[sg] = mi; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < sgs ? sval[lane] : -INFINITY;
        uint j = lane < sgs ? sidx[lane] : 0xFFFFFFFFu;
        float m2 = simd_max(v);
        uint j2 = simd_min(v == m2 ? j : 0xFFFFFFFFu);
        if (lane == 0) { pval[group] = m2; pidx[group] = j2; }
    }
}
"""


def conformance_gemm_source():
    """The simdgroup-matrix GEMM kernel of the conformance suite, verbatim."""
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "..", "tests", "python", "test_msl_conformance.py")).read()
    start = text.index("kernel void sgm_gemm(")
    start = text.rindex("\n//", 0, start)
    end = text.index("\n}\n", start) + 3
    return "#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;\n" + text[start:end]


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
    repeats = int(os.environ.get("REPEATS", "7"))
    lib = pm.compile(SOURCE)
    n = 16 << 20
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32)
    x = pm.asarray(x_np)
    print(f"pymetal {pm.device().backend} backend, {os.cpu_count()} cores, REPEATS={repeats}:")
    reference = x_np.sum(dtype=np.float64)

    for name, kernel, count in [("grid-stride sum, float4 x 4 per step", lib.sum4, np.uint32(n // 4)),
                                ("grid-stride sum, one float per step", lib.sum1, np.uint32(n))]:
        partials = {g: pm.zeros(g, np.float32) for g, _ in SHAPES}

        def run(shape, kernel=kernel, count=count, partials=partials):
            kernel(x, partials[shape[0]], count, groups=shape[0], threadgroup=shape[1])
            return partials[shape[0]].numpy().sum(dtype=np.float64)
        for shape in SHAPES:
            total = run(shape)
            assert abs(total - reference) <= 1e-3 * np.abs(x_np).sum(), (name, shape, total, reference)
        shapes = best_shape(run)
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
    shapes = best_shape(run_argmax)
    shape = min(shapes, key=shapes.get)
    ours, cpu, numpy = interleaved(lambda: run_argmax(shape), lambda: np.argmax(x_np), repeats)
    report(f"GPU-style argmax ({shape[0]}x{shape[1]})", ours, cpu, numpy, 0.5, shapes)

    # simdgroup GEMM: 4 simdgroups of 32 threads per threadgroup, a 16x16 block each.
    gemm = pm.compile(conformance_gemm_source()).sgm_gemm
    size = int(os.environ.get("GEMM_SIZE", "1024"))
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
