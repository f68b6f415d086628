"""Validation builds on idioms of real kernel files (ggml-metal.metal), in our own small kernels.

A validation build (PM_VALIDATION) makes a kernel's buffer and threadgroup pointer parameters
checked pointers (a class) and its threadgroup arrays checked views. Each idiom below compiled
without validation and was refused with it; each must run as without validation, and the checks
must still catch an access out of bounds, naming the right parameter.
"""

import numpy as np
import pytest

import pymetal as pm

VALIDATION = {"PM_VALIDATION": 1}
MODES = [False, True]
IDS = ["plain", "validation"]


# ggml's kernel_col2im_1d / kernel_snake: an explicit instantiation that writes out its parameter
# types without names (and without their attributes), and one whose names differ from the template's.
UNNAMED_SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

struct Args { int n; float scale; };

template <typename T>
kernel void scale_add(constant Args & args, device const T * x, device const float * b, device T * dst,
                      uint i [[thread_position_in_grid]]) {
    if (int(i) < args.n) dst[i] = T(float(x[i]) * args.scale + b[i]);
}
template [[host_name("scale_add_f32")]] kernel void scale_add<float>(constant Args &, device const float *,
                                                                      device const float *, device float *, uint);
template [[host_name("scale_add_f16")]] kernel void scale_add<half>(constant Args & a, device const half * src,
                                                                     device const float * bias, device half * out,
                                                                     uint);
"""


@pytest.mark.parametrize("validation", MODES, ids=IDS)
@pytest.mark.parametrize("n", [1, 7, 100])
@pytest.mark.parametrize("name,dtype", [("scale_add_f32", np.float32), ("scale_add_f16", np.float16)])
def test_instantiation_with_unnamed_parameter_types(validation, n, name, dtype):
    lib = pm.compile(UNNAMED_SOURCE, defines=VALIDATION if validation else None)
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(np.float32)
    dst = np.zeros(n, dtype)
    args = np.array([(n, 1.5)], np.dtype([("n", "i4"), ("scale", "f4")]))
    lib.function(name)(args, x, b, dst, grid=n)
    want = (x.astype(np.float32) * np.float32(1.5) + b).astype(dtype)
    np.testing.assert_allclose(dst.astype(np.float32), want.astype(np.float32), rtol=1e-3 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("name", ["scale_add_f32", "scale_add_f16"])
def test_instantiation_with_unnamed_parameter_types_stays_checked(name):
    """The checks are the template's, named as the template names the parameter (not `src`)."""
    lib = pm.compile(UNNAMED_SOURCE, defines=VALIDATION)
    dtype = np.float32 if name.endswith("f32") else np.float16
    args = np.array([(8, 1.0)], np.dtype([("n", "i4"), ("scale", "f4")]))
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 5 of `x`"):
        lib.function(name)(args, np.zeros(5, dtype), np.zeros(8, np.float32), np.zeros(8, dtype), grid=8)


# ggml's kernel_flash_attn_ext: one checked parameter assigned another (`k = pad;`, both buffers of
# the kernel), then read through; and a pointer into a threadgroup array by arithmetic on the array
# (`simdgroup_load(mk, sk + 8*i, ...)`, `float * pqk = sqk + ...`).
ASSIGN_SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

kernel void pick(device const float * k [[buffer(0)]], device const float * pad [[buffer(1)]],
                 device float * out [[buffer(2)]], constant int & use_pad [[buffer(3)]],
                 constant int & offset [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    if (use_pad) {
        k = pad;
    }
    out[i] = k[i + offset];
}

kernel void tg_rows(device const float * x [[buffer(0)]], device float * out [[buffer(1)]],
                    uint lid [[thread_position_in_threadgroup]]) {
    threadgroup float sk[2 * 64];
    threadgroup float so[64];
    threadgroup float * row = sk + 64 + 2 * lid;   // the second 8x8 tile, two elements a thread
    row[0] = x[2 * lid];
    row[1] = x[2 * lid + 1];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 m;
    simdgroup_load(m, sk + 64, 8, 0, true);      // transposed
    simdgroup_store(m, so + 0, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[2 * lid] = so[2 * lid];
    out[2 * lid + 1] = so[2 * lid + 1];
}
"""


@pytest.mark.parametrize("validation", MODES, ids=IDS)
@pytest.mark.parametrize("n", [1, 7, 64])
def test_checked_parameter_assigned_another(validation, n):
    lib = pm.compile(ASSIGN_SOURCE, defines=VALIDATION if validation else None)
    k = np.arange(n, dtype=np.float32)
    pad = -np.arange(n + 2, dtype=np.float32)
    out = np.zeros(n, np.float32)
    lib.pick(k, pad, out, np.int32(0), np.int32(0), grid=n)
    np.testing.assert_array_equal(out, k)
    lib.pick(k, pad, out, np.int32(1), np.int32(2), grid=n)
    np.testing.assert_array_equal(out, pad[2:])


def test_assigned_parameter_checks_against_its_new_buffer():
    """After `k = pad`, k's accesses are checked against pad's length and named `pad`."""
    lib = pm.compile(ASSIGN_SOURCE, defines=VALIDATION)
    k = np.zeros(16, np.float32)
    pad = np.zeros(4, np.float32)
    out = np.zeros(4, np.float32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element [45] of `pad` \[\[buffer\(1\)\]\]"):
        lib.pick(k, pad, out, np.int32(1), np.int32(2), grid=4)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 16 of `k` \[\[buffer\(0\)\]\]"):
        lib.pick(k, pad, np.zeros(16, np.float32), np.int32(0), np.int32(1), grid=16)


@pytest.mark.parametrize("validation", MODES, ids=IDS)
def test_threadgroup_array_plus_offset(validation):
    lib = pm.compile(ASSIGN_SOURCE, defines=VALIDATION if validation else None)
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    lib.tg_rows(x, out, groups=1, threadgroup=32)
    np.testing.assert_array_equal(out.reshape(8, 8), x.reshape(8, 8).T)


# MLX's dot.h: `*reinterpret_cast<const device vec<T, 4>*>(a + i)` of a buffer parameter (a checked
# pointer, a class, in a validation build), and of a threadgroup array.
CAST_SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void sum4(const device T* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {
    threadgroup float tg[4 * 32];
    float4 v = float4(*reinterpret_cast<const device vec<T, 4>*>(a + 4 * i));
    reinterpret_cast<threadgroup float4*>(tg)[lid] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const threadgroup float4* t = reinterpret_cast<const threadgroup float4*>(tg);
    out[i] = dot(t[lid], float4(1));
}
template [[host_name("sum4_float")]] kernel void sum4<float>(const device float*, device float*, uint, uint);
template [[host_name("sum4_half")]] kernel void sum4<half>(const device half*, device float*, uint, uint);
"""


@pytest.mark.parametrize("validation", MODES, ids=IDS)
@pytest.mark.parametrize("n", [1, 5, 32])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reinterpret_cast_of_checked_pointer(validation, n, dtype):
    lib = pm.compile(CAST_SOURCE, defines=VALIDATION if validation else None)
    a = np.random.default_rng(n).standard_normal(4 * n).astype(dtype)
    out = np.zeros(n, np.float32)
    lib.function("sum4_float" if dtype == np.float32 else "sum4_half")(a, out, grid=n, threadgroup=min(n, 32))
    np.testing.assert_allclose(out, a.astype(np.float32).reshape(n, 4).sum(1), rtol=1e-5, atol=1e-5)


# A helper that receives a plain pointer (MLX's gemv: `GEMVKernel::run(..., device T* out_vec, ...)`
# shifts its last rows back, `out_row = out_vec_size - TM`, and writes `out_vec[out_row + tm]`: with
# fewer rows than TM, before the start). The checked pointer becomes a plain one at the call; the
# validation build records the array it points into and checks the helper's `p[i]` against it.
HELPER_SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

template <int TM>
struct RowSum {
    static METAL_FUNC void run(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                               int rows, int shift, uint tid) {
        int row = int(tid) * TM + shift;
        row = row + TM <= rows ? row : rows - TM;   // the last rows shifted back (MLX's gemv)
        for (int tm = 0; tm < TM; tm++) out[row + tm] = x[clamp(row + tm, 0, rows - 1)] * 2;
    }
};

kernel void row_twice(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      constant int& rows [[buffer(2)]], constant int& shift [[buffer(3)]],
                      uint tid [[thread_position_in_grid]]) {
    RowSum<2>::run(x, out, rows, shift, tid);
}

kernel void row_twice_inline(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                             constant int& rows [[buffer(2)]], constant int& shift [[buffer(3)]],
                             uint tid [[thread_position_in_grid]]) {
    int row = int(tid) * 2 + shift;
    row = row + 2 <= rows ? row : rows - 2;
    for (int tm = 0; tm < 2; tm++) out[row + tm] = x[clamp(row + tm, 0, rows - 1)] * 2;
}

// pointers a helper may make and use without leaving the array: the end pointer `&p[n]`, a pointer
// one past the end indexed backwards, a thread array, a cast of a threadgroup array
METAL_FUNC float sum_back(const device float* end, int n) {
    float s = 0;
    for (int k = 1; k <= n; k++) s += end[-k];
    return s;
}
METAL_FUNC float first_of(thread const float* v) { return v[0] + v[1]; }
METAL_FUNC void put(threadgroup float* t, int at, float v) { t[at] = v; }

kernel void helpers_in_bounds(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              constant int& n [[buffer(2)]], constant int& at [[buffer(3)]],
                              uint lid [[thread_position_in_threadgroup]]) {
    threadgroup float tg[4];
    thread float v[2] = {x[0], 1.0f};
    const device float* end = x + n;
    put(tg, int(lid) + at, float(lid));
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid] = sum_back(end, n) + first_of(v) + tg[lid];
}
"""


@pytest.mark.parametrize("validation", MODES, ids=IDS)
@pytest.mark.parametrize("kernel", ["row_twice", "row_twice_inline"])
@pytest.mark.parametrize("rows", [2, 5, 8])
def test_helper_dispatched_correctly(validation, kernel, rows):
    lib = pm.compile(HELPER_SOURCE, defines=VALIDATION if validation else None)
    x = np.arange(rows, dtype=np.float32) + 1
    out = np.zeros(rows, np.float32)
    lib.function(kernel)(x, out, np.int32(rows), np.int32(0), grid=-(-rows // 2))
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("kernel", ["row_twice", "row_twice_inline"])
def test_read_past_the_end_is_caught(kernel):
    """In the kernel's body and in the helper alike, naming the kernel's parameter."""
    lib = pm.compile(HELPER_SOURCE, defines=VALIDATION)
    x = np.ones(5, np.float32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 5 of `x` \[\[buffer\(0\)\]\], which has 5 "):
        lib.function(kernel)(x, np.zeros(8, np.float32), np.int32(8), np.int32(0), grid=4)


@pytest.mark.parametrize("kernel", ["row_twice", "row_twice_inline"])
def test_write_before_the_start_is_caught(kernel):
    """MLX's gemv with one row and TM rows a thread: `out_row = 1 - TM` writes before `out`."""
    lib = pm.compile(HELPER_SOURCE, defines=VALIDATION)
    x = np.ones(1, np.float32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element -1 of `out` \[\[buffer\(1\)\]\], which has 1 "):
        lib.function(kernel)(x, np.zeros(1, np.float32), np.int32(1), np.int32(0), grid=1)


def test_write_past_the_end_in_helper_is_caught():
    lib = pm.compile(HELPER_SOURCE, defines=VALIDATION)
    x = np.ones(8, np.float32)
    out = np.zeros(6, np.float32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 6 of `out` \[\[buffer\(1\)\]\].*line 11 "):
        lib.row_twice(x, out, np.int32(8), np.int32(0), grid=4)  # 8 rows computed, `out` has 6


@pytest.mark.parametrize("validation", MODES, ids=IDS)
@pytest.mark.parametrize("n", [1, 3, 4])
def test_helper_pointers_in_bounds_not_reported(validation, n):
    lib = pm.compile(HELPER_SOURCE, defines=VALIDATION if validation else None)
    x = np.arange(n, dtype=np.float32) + 1
    out = np.zeros(4, np.float32)
    lib.helpers_in_bounds(x, out, np.int32(n), np.int32(0), groups=1, threadgroup=4)
    np.testing.assert_array_equal(out, x.sum() + x[0] + 1 + np.arange(4))


def test_helper_threadgroup_array_out_of_bounds_is_caught():
    lib = pm.compile(HELPER_SOURCE, defines=VALIDATION)
    x = np.ones(4, np.float32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 4 of the threadgroup array `tg` declared at line 42"):
        lib.helpers_in_bounds(x, np.zeros(4, np.float32), np.int32(4), np.int32(1), groups=1, threadgroup=4)
