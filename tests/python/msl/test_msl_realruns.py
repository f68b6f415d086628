"""Kernels in the idioms of MLX's softmax, layer_norm, arg_reduce and reduce files, run the way
MLX's host code dispatches them (threadgroups of up to 1,024 threads, partial tails, several
simdgroups combined through threadgroup memory), against NumPy, in every execution mode.

The real files were run the same way (issue 26's follow-up: softmax, rms_norm, layer_norm,
reduce, arg_reduce, steel GEMM, gemv, scan, sort, candle's reduce.metal); these are our own
kernels for the patterns those runs exercised, so that a regression in the headers, the
front end or the runtime shows here without the projects' sources.
"""

import numpy as np
import pytest

from msl_kernels import MODES, compile_mode

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// Online softmax over a long row, one threadgroup per row (MLX's softmax_looped): every thread
// keeps a running max and a normalizer rescaled when the max grows; simdgroups meet through
// threadgroup memory indexed by lane, which is why the group must have 32 simdgroups.
template <typename T, int N = 4>
[[kernel]] void softmax_rows(const device T* in [[buffer(0)]], device T* out [[buffer(1)]],
                             constant int& n [[buffer(2)]],
                             uint row [[threadgroup_position_in_grid]],
                             uint lid [[thread_position_in_threadgroup]],
                             uint lsize [[threads_per_threadgroup]],
                             uint lane [[thread_index_in_simdgroup]],
                             uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tg_max[32];
    threadgroup float tg_sum[32];
    in += row * size_t(n);
    out += row * size_t(n);
    float m = -FLT_MAX, s = 0;  // finite: exp(-inf - m) must be 0, not exp(NaN)
    for (int base = 0; base < n; base += int(lsize) * N) {
        int at = base + int(lid) * N;
        float v[N];
        for (int i = 0; i < N; i++) v[i] = at + i < n ? float(in[at + i]) : -INFINITY;
        float before = m;
        for (int i = 0; i < N; i++) m = max(m, v[i]);
        s *= before == m ? 1.0f : exp(before - m);
        for (int i = 0; i < N; i++) s += exp(v[i] - m);
    }
    float mine = m;
    m = simd_max(m);
    s = simd_sum(s * (mine == m ? 1.0f : exp(mine - m)));
    if (lane == 0) tg_max[sg] = m;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float group_max = simd_max(tg_max[lane]);
    if (lane == 0) tg_sum[sg] = s * (m == group_max ? 1.0f : exp(m - group_max));
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float inv = 1.0f / simd_sum(tg_sum[lane]);
    for (int base = 0; base < n; base += int(lsize) * N) {
        int at = base + int(lid) * N;
        for (int i = 0; i < N && at + i < n; i++) out[at + i] = T(exp(float(in[at + i]) - group_max) * inv);
    }
}
template [[host_name("softmax_rows_float")]] [[kernel]] decltype(softmax_rows<float>) softmax_rows<float>;
template [[host_name("softmax_rows_half")]] [[kernel]] decltype(softmax_rows<half>) softmax_rows<half>;

// Layer norm of a short row in one pass (MLX's layer_norm_single_row): N elements a thread kept
// in a private array, a sum over the group through threadgroup memory, a tail for the last
// thread. The tail starts at max(n, 0): MLX's own kernel starts it at n, which is negative in
// the threads past the row's end, so it writes below the private array (undefined behaviour
// that a GPU hides; on the CPU it overwrote a spilled pointer of MLX's half instantiation).
inline float group_sum(float x, threadgroup float* buf, uint lane, uint sg) {
    x = simd_sum(x);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) buf[sg] = x;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return simd_sum(buf[lane]);
}
template <typename T, int N = 8>
[[kernel]] void norm_rows(const device T* x [[buffer(0)]], const device T* w [[buffer(1)]],
                          device T* out [[buffer(2)]], constant uint& axis [[buffer(3)]],
                          uint row [[threadgroup_position_in_grid]],
                          uint lid [[thread_position_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float buf[32];
    if (sg == 0) buf[lane] = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float v[N] = {0};
    x += row * size_t(axis) + lid * N;
    out += row * size_t(axis) + lid * N;
    w += lid * N;
    const int n = axis - lid * N;  // negative past the row's end
    for (int i = 0; i < min(n, N); i++) v[i] = x[i];
    float total = 0;
    for (int i = 0; i < N; i++) total += v[i];
    float mean = group_sum(total, buf, lane, sg) / axis;
    float sq = 0;
    for (int i = max(n, 0); i < N; i++) v[i] = mean;
    for (int i = 0; i < N; i++) { v[i] -= mean; sq += v[i] * v[i]; }
    float r = metal::precise::rsqrt(group_sum(sq, buf, lane, sg) / axis + 1e-5f);
    for (int i = 0; i < min(n, N); i++) out[i] = w[i] * static_cast<T>(v[i] * r);
}
template [[host_name("norm_rows_float")]] [[kernel]] decltype(norm_rows<float>) norm_rows<float>;
template [[host_name("norm_rows_half")]] [[kernel]] decltype(norm_rows<half>) norm_rows<half>;

// Argmax along a row (MLX's arg_reduce_general): an index/value pair, a simd_shuffle_down
// overload for the pair, a reduction loop over the simdgroup width the kernel is given as a
// position attribute, partials of every simdgroup combined by the first; ties go to the
// lower index, as NumPy's.
struct Best { uint index; float val; };
Best simd_shuffle_down(Best b, ushort delta) {
    return Best{simd_shuffle_down(b.index, delta), simd_shuffle_down(b.val, delta)};
}
inline Best better(Best a, Best b) {
    return (a.val > b.val || (a.val == b.val && a.index < b.index)) ? a : b;
}
kernel void argmax_rows(const device float* in [[buffer(0)]], device uint* out [[buffer(1)]],
                        constant uint& n [[buffer(2)]],
                        uint3 row [[threadgroup_position_in_grid]],
                        uint3 lid [[thread_position_in_threadgroup]],
                        uint3 lsize [[threads_per_threadgroup]],
                        uint width [[threads_per_simdgroup]],
                        uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup Best partial[32];
    in += row.y * size_t(n);
    Best best{0, -INFINITY};
    for (uint at = lid.x * 4; at < n; at += lsize.x * 4)
        for (uint i = at; i < min(at + 4, n); i++) best = better(best, Best{i, in[i]});
    for (uint d = width / 2; d > 0; d /= 2) best = better(best, simd_shuffle_down(best, d));
    if (lane == 0) partial[sg] = best;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg != 0) return;
    best = lane < (lsize.x + width - 1) / width ? partial[lane] : Best{0, -INFINITY};
    for (uint d = width / 2; d > 0; d /= 2) best = better(best, simd_shuffle_down(best, d));
    if (lane == 0) out[row.y] = best.index;
}

// A barrier after some threads returned (MLX's col_reduce_small and gemv return early and then
// meet at a barrier; Apple GPUs let them): the threads that returned count as arrived
// (runtime_common.h, gpu_barriers; PYMETAL_VALIDATION=1 reports it: test_barrier_divergence.py).
kernel void early_return_barrier(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float t[64];
    if (i >= n) return;
    t[l] = float(i);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = t[l];
}
"""

ROW_SIZES = [1, 3, 31, 100, 4095, 4096, 4097, 10000]


@pytest.fixture(scope="module", params=MODES)
def lib(dev, request):
    return compile_mode(SOURCE, request.param)


@pytest.mark.parametrize("n", ROW_SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax_rows_of_1024_threads(lib, n, dtype):
    rng = np.random.default_rng(n)
    rows = 3
    x = (rng.standard_normal((rows, n)) * 4).astype(dtype)
    out = np.full_like(x, np.nan)
    fn = lib.function("softmax_rows_" + ("float" if dtype == np.float32 else "half"))
    fn(x, out, np.int32(n), groups=rows, threadgroup=1024)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    tol = 1e-5 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=tol, atol=tol * 1e-2)


@pytest.mark.parametrize("axis", [1, 7, 8, 9, 100, 255, 256, 257, 1000, 4097, 6656])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_norm_rows_with_threads_past_the_row(lib, axis, dtype):
    rng = np.random.default_rng(axis)
    rows = 2
    x = (rng.standard_normal((rows, axis)) * 2 + 1).astype(dtype)
    w = rng.uniform(0.5, 1.5, axis).astype(dtype)
    out = np.full_like(x, np.nan)
    threads = 32 * (((axis + 7) // 8 + 31) // 32)  # as MLX's host code sizes the group
    fn = lib.function("norm_rows_" + ("float" if dtype == np.float32 else "half"))
    fn(x, w, out, np.uint32(axis), groups=rows, threadgroup=threads)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=1, keepdims=True)
    want = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w
    tol = 2e-5 if dtype == np.float32 else 4e-3
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("n,threads", [(1, 32), (5, 32), (33, 32), (128, 32), (1000, 256), (4097, 1024), (20000, 1024)])
def test_argmax_pairs_through_shuffles(lib, n, threads):
    rng = np.random.default_rng(n)
    rows = 3
    x = rng.integers(0, 20, (rows, n)).astype(np.float32)  # ties: the first index wins
    out = np.full(rows, 0xFFFFFFFF, np.uint32)
    lib.argmax_rows(x, out, np.uint32(n), grid=(threads, rows, 1), threadgroup=(threads, 1, 1))
    np.testing.assert_array_equal(out, np.argmax(x, axis=1))


@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 40, 63, 64])
def test_barrier_after_early_return_runs_as_on_a_gpu(lib, n):
    out = np.full(64, -1, np.float32)
    lib.early_return_barrier(out, np.uint32(n), grid=64, threadgroup=64)
    want = np.where(np.arange(64) < n, np.arange(64), -1).astype(np.float32)
    np.testing.assert_array_equal(out, want)


# MLX's layer_norm (half) used a float it had written below a private array as a pointer: x86-64
# reports such a non-canonical address as a general-protection fault at address 0, which the
# error called "a null pointer". It now names what happened.
DEREF_SRC = r"""
#include <metal_stdlib>
using namespace metal;
kernel void deref(device float* out [[buffer(0)]], constant ulong& bits [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    out[i] = *reinterpret_cast<device const float*>(bits);
}
"""


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64"), reason="x86-64 faults")
@pytest.mark.parametrize("mode", MODES)
def test_fault_on_data_used_as_pointer_is_named(dev, mode):
    import pymetal as pm

    lib = compile_mode(DEREF_SRC, mode)
    out = np.zeros(1, np.float32)
    with pytest.raises(pm.KernelError, match="general-protection fault: a non-canonical address"):
        lib.deref(out, np.uint64(0x4060000040600000), grid=1)  # two floats 3.5, as in layer_norm
    with pytest.raises(pm.KernelError, match="a null pointer"):
        lib.deref(out, np.uint64(0), grid=1)
    x = np.full(1, 2.5, np.float32)
    lib.deref(out, np.uint64(x.ctypes.data), grid=1)  # a real address still reads
    assert out[0] == 2.5
