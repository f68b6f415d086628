"""Validation builds: a checked pointer passed whole to a function template.

In a validation build (PM_VALIDATION) a kernel's buffer and threadgroup pointer parameters are
checked pointers (a class), from which no template deduces `T` of `const device T*` or `device
T*&`. MLX's fp_quantized.h advances its pointers through such a helper (`adjust_matrix_offsets(x,
w, scales, y, ...)`); the validation build passes the checked pointer's own pointer there
(CheckedArguments.swift, `::pm::rt::vref`), so the call compiles, the helper advances the kernel's
pointer, and the kernel's later accesses are still checked against the bound array. Our own
kernels in that idiom, compiled with and without validation.
"""

import numpy as np
import pytest

import pymetal as pm

VALIDATION = {"PM_VALIDATION": 1}

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// deduces T through references to pointers, and advances them (MLX's adjust_matrix_offsets)
template <typename T>
METAL_FUNC void advance_rows(const device T*& x, device T*& y, const device int*& rows, int row, int n) {
    x += row * n;
    y += row * n;
    rows += row;
}

// deduces T by value
template <typename T>
METAL_FUNC T row_sum(const device T* x, int n) {
    T s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}

// explicit template arguments, a reference to a pointer
template <typename T, int K>
METAL_FUNC void skip(device T*& p) { p += K; }

// a threadgroup pointer, deduced
template <typename T>
METAL_FUNC void fill_tg(threadgroup T* t, T v, uint i) { t[i] = v; }

template <typename T>
[[kernel]] void scaled_rows(
    const device T* x [[buffer(0)]],
    device T* y [[buffer(1)]],
    const device int* scale [[buffer(2)]],
    constant int& n [[buffer(3)]],
    threadgroup T* tg [[threadgroup(0)]],
    uint row [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]]) {
    advance_rows(x, y, scale, int(row), n);
    fill_tg(tg, T(scale[0]), lid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    T s = row_sum(x, n);
    for (int i = int(lid); i < n; i += 4) y[i] = x[i] * tg[lid] + s;
}

template [[host_name("scaled_rows_float")]] [[kernel]] decltype(scaled_rows<float>) scaled_rows<float>;
template [[host_name("scaled_rows_int")]] [[kernel]] decltype(scaled_rows<int>) scaled_rows<int>;

kernel void skip_then_write(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                            device float* z [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y += i;
    skip<float, 1>(y);            // a checked pointer, explicit template arguments
    y[0] = x[i] * 2;
    device float* w = z + i;      // a plain pointer (converted from a checked one): passed as it is
    skip<float, 1>(w);
    w[0] = x[i] + 1;
}

// threadgroup arrays given to templates: decayed to a pointer, and bound as an array (MLX's
// gemm_loop_aligned(Xs, Ws, ...))
template <typename T>
METAL_FUNC void stage(threadgroup T* tile, const device T* x, uint lid) { tile[lid] = x[lid]; }
template <typename T, int N>
METAL_FUNC T total(threadgroup T (&tile)[N]) {
    T s = 0;
    for (int i = 0; i < N; i++) s += tile[i];
    return s;
}

template <typename T>
[[kernel]] void tile_sum(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                         uint g [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {
    threadgroup T tile[8];
    x += g * 8;
    stage(tile, x, lid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) y[g] = total(tile);
}
template [[host_name("tile_sum_float")]] [[kernel]] decltype(tile_sum<float>) tile_sum<float>;

// reads one element past the row it advanced to, for the last row: out of bounds of x
template <typename T>
[[kernel]] void read_past(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                          const device int* rows [[buffer(2)]], constant int& n [[buffer(3)]],
                          uint row [[thread_position_in_grid]]) {
    advance_rows(x, y, rows, int(row), n);
    y[0] = x[n];
}
template [[host_name("read_past_float")]] [[kernel]] decltype(read_past<float>) read_past<float>;
"""


@pytest.fixture(params=[False, True], ids=["plain", "validation"])
def lib(request):
    return pm.compile(SOURCE, macros=VALIDATION if request.param else None)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("rows, n", [(1, 1), (3, 5), (4, 17)])
def test_template_helpers_take_checked_pointers(lib, dtype, rows, n):
    rng = np.random.default_rng(rows * 100 + n)
    x = rng.integers(-20, 20, (rows, n)).astype(dtype)
    scale = rng.integers(1, 5, rows).astype(np.int32)
    y = np.zeros_like(x)
    name = "scaled_rows_float" if dtype == np.float32 else "scaled_rows_int"
    lib.function(name)(x, y, scale, np.int32(n), groups=rows, threadgroup=4, threadgroup_memory={0: 4 * 4})
    want = x * scale[:, None].astype(dtype) + x.sum(axis=1, keepdims=True, dtype=dtype)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("n", [1, 6, 33])
def test_explicit_arguments_and_plain_pointers(lib, n):
    x = np.arange(n, dtype=np.float32)
    y = np.full(n + 1, 9, np.float32)
    z = np.full(n + 1, 9, np.float32)
    lib.skip_then_write(x, y, z, grid=n)
    np.testing.assert_array_equal(y, np.concatenate([[9], x * 2]))
    np.testing.assert_array_equal(z, np.concatenate([[9], x + 1]))


@pytest.mark.parametrize("groups", [1, 5])
def test_threadgroup_arrays_given_to_templates(lib, groups):
    x = np.random.default_rng(groups).standard_normal(8 * groups).astype(np.float32)
    y = np.zeros(groups, np.float32)
    lib.tile_sum_float(x, y, groups=groups, threadgroup=8)
    np.testing.assert_allclose(y, x.reshape(groups, 8).sum(axis=1), rtol=1e-5, atol=1e-6)


def test_advanced_pointer_stays_checked():
    lib = pm.compile(SOURCE, macros=VALIDATION)
    rows, n = 3, 4
    x = np.arange(rows * n, dtype=np.float32).reshape(rows, n)
    y = np.zeros((rows, n), np.float32)
    idx = np.zeros(rows, np.int32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 12 of `x`"):
        lib.read_past_float(x, y, idx, np.int32(n), grid=rows)
    ok = np.arange((rows + 1) * n, dtype=np.float32)
    lib.read_past_float(ok, y, idx, np.int32(n), grid=rows)  # one row more: in bounds
    np.testing.assert_array_equal(y[:, 0], ok[n::n][:rows])


# A `void *` buffer (ggml's `device const void * src0`, read through casts) and an absent optional
# buffer whose read goes unused (MLX's and candle's GEMMs build their epilogue from `addmm_params`
# whatever `use_out_source` is): the validation build compiles and runs both as a GPU does.
OPTIONAL_SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

struct Params { float alpha; float beta; };
struct Scale {
    float a, b;
    Scale(float a_, float b_) : a(a_), b(b_) {}
    float operator()(float x, float c) const { return a * x + b * c; }
};

constant bool has_c [[function_constant(0)]];

kernel void axpby(const device void* x_raw [[buffer(0)]],
                  device float* y [[buffer(1)]],
                  const device float* c [[buffer(2), function_constant(has_c)]],
                  const constant Params* p [[buffer(3), function_constant(has_c)]],
                  uint i [[thread_position_in_grid]]) {
    const device float* x = (const device float*)x_raw;
    const Scale op(p->alpha, p->beta);   // read whether or not it is used
    y[i] = has_c ? op(x[i], c[i]) : x[i];
}
"""


@pytest.mark.parametrize("validation", [False, True], ids=["plain", "validation"])
@pytest.mark.parametrize("n", [1, 7, 64])
def test_void_buffer_and_absent_optional_buffer(validation, n):
    lib = pm.compile(OPTIONAL_SOURCE, macros=VALIDATION if validation else None)
    x = np.arange(n, dtype=np.float32) - 3
    y = np.zeros(n, np.float32)
    lib.function("axpby", constants={"has_c": False})(x, y, grid=n)
    np.testing.assert_array_equal(y, x)
    c = np.full(n, 2, np.float32)
    params = np.array([(3.0, 0.5)], np.dtype([("alpha", "f4"), ("beta", "f4")]))
    lib.function("axpby", constants={"has_c": True})(x, y, c, params, grid=n)
    np.testing.assert_array_equal(y, 3 * x + 1)


def test_present_optional_buffer_stays_checked():
    lib = pm.compile(OPTIONAL_SOURCE, macros=VALIDATION)
    x = np.zeros(8, np.float32)
    y = np.zeros(8, np.float32)
    params = np.array([(1.0, 1.0)], np.dtype([("alpha", "f4"), ("beta", "f4")]))
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 4 of `c`"):
        lib.function("axpby", constants={"has_c": True})(x, y, np.zeros(4, np.float32), params, grid=8)


# Instantiations that spell the kernel's type another way: through a function typedef with plain
# pointers (ggml, candle's quantized.metal), and with a written parameter list that leaves out the
# template's `function_constant` (candle's GEMM instantiations).
SPELLED_SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

constant bool has_bias [[function_constant(0)]];

typedef void (add_t)(device const float* x, device float* y, constant int& n, uint i);

template <typename T>
kernel void add_one(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], constant int& n [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) {
    if (int(i) < n) y[i] = x[i] + 1;
}
template [[host_name("add_one_float")]] kernel add_t add_one<float>;

template <typename T>
kernel void biased(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                   device const T* bias [[buffer(2), function_constant(has_bias)]],
                   uint i [[thread_position_in_grid]]) {
    y[i] = has_bias ? x[i] + bias[i] : x[i];
}
template [[host_name("biased_float")]] kernel void biased<float>(
    device const float* x [[buffer(0)]], device float* y [[buffer(1)]], device const float* bias [[buffer(2)]],
    uint i [[thread_position_in_grid]]);
"""


@pytest.mark.parametrize("validation", [False, True], ids=["plain", "validation"])
def test_typedef_and_written_out_instantiations(validation):
    lib = pm.compile(SPELLED_SOURCE, macros=VALIDATION if validation else None)
    x = np.arange(5, dtype=np.float32)
    y = np.zeros(5, np.float32)
    lib.function("add_one_float", constants={"has_bias": False})(x, y, np.int32(5), grid=5)
    np.testing.assert_array_equal(y, x + 1)
    lib.function("biased_float", constants={"has_bias": False})(x, y, grid=5)
    np.testing.assert_array_equal(y, x)
    lib.function("biased_float", constants={"has_bias": True})(x, y, np.full(5, 2, np.float32), grid=5)
    np.testing.assert_array_equal(y, x + 2)
