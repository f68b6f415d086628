"""MSL as real projects write it (MLX, llama.cpp's ggml, whisper.cpp), against NumPy:
kernels instantiated through function-type typedefs, Apple's __metal_* builtins,
members overloaded on the address space of `this`, <metal_type_traits>,
matrices, function constants, include paths and the C++ Metal refuses.

Each source is compiled once per module (the CPU backend caches libraries on disk).
"""

import os

import numpy as np
import pytest

import pymetal as pm

SIZES = [1, 31, 33, 1000, 100003]
HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"


@pytest.fixture
def rng():
    return np.random.default_rng(11)


# ---------------------------------------------------------------------------
# 1. Explicit instantiation through a function-type typedef (ggml's host names)
# ---------------------------------------------------------------------------

TYPEDEF_SRC = HEADER + r"""
template <typename T>
kernel void kernel_axpb(device const T * x [[buffer(0)]], device T * y [[buffer(1)]],
                        constant float & a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = T(a * float(x[i]) + 1.0f);
}
typedef decltype(kernel_axpb<float>) kernel_axpb_f32_t;
typedef decltype(kernel_axpb<half>) kernel_axpb_f16_t;
// ggml also spells the function type out
typedef void (kernel_axpb_i32_t)(device const int *, device int *, constant float &, uint);

template [[host_name("axpb_f32")]] kernel kernel_axpb_f32_t kernel_axpb<float>;
template [[host_name("axpb_f16")]] kernel kernel_axpb_f16_t kernel_axpb<half>;
template [[host_name("axpb_i32")]] kernel kernel_axpb_i32_t kernel_axpb<int>;
"""


@pytest.fixture(scope="module")
def typedef_lib(dev):
    return pm.compile(TYPEDEF_SRC)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name,dtype", [("axpb_f32", np.float32), ("axpb_f16", np.float16), ("axpb_i32", np.int32)])
def test_typedef_instantiation(typedef_lib, rng, n, name, dtype):
    x = (rng.standard_normal(n) * 100).astype(dtype)
    y = np.zeros(n, dtype)
    a = np.array([1.5], np.float32)
    typedef_lib.function(name)(x, y, a, grid=n)
    ref = (1.5 * x.astype(np.float64) + 1.0).astype(dtype)  # clang may contract a * x + 1 into an fma
    if dtype == np.int32:
        np.testing.assert_array_equal(y, ref)
    else:
        tol = 1e-3 if dtype == np.float16 else 1e-6
        np.testing.assert_allclose(y.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)
    assert sorted(typedef_lib.functions) == ["axpb_f16", "axpb_f32", "axpb_i32"]


# ---------------------------------------------------------------------------
# 2. Apple's __metal_* builtins, as MLX's bf16_math.h uses them
# ---------------------------------------------------------------------------

BUILTINS_SRC = HEADER + r"""
// MLX style: bfloat overloads of the math functions written on the builtins,
// in metal, metal::fast and metal::precise.
#define instantiate_math(itype, mfast)                                                         \
    METAL_FUNC itype abs(itype x) { return static_cast<itype>(__metal_fabs(static_cast<float>(x), mfast)); } \
    METAL_FUNC itype exp(itype x) { return static_cast<itype>(__metal_exp(static_cast<float>(x), mfast)); }  \
    METAL_FUNC itype fmax3(itype x, itype y, itype z) {                                          \
        return static_cast<itype>(__metal_fmax3(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z), mfast)); \
    }
namespace metal {
instantiate_math(bfloat, __METAL_MAYBE_FAST_MATH__)
namespace fast { instantiate_math(bfloat, __METAL_FAST_MATH__) }
namespace precise { instantiate_math(bfloat, __METAL_PRECISE_MATH__) }
METAL_FUNC bfloat simd_shuffle_down(bfloat data, ushort delta) {
    return as_type<bfloat>(__metal_simd_shuffle_down(as_type<ushort>(data), delta));
}
METAL_FUNC bfloat simd_shuffle_and_fill_down(bfloat data, bfloat fill, ushort delta) {
    return as_type<bfloat>(__metal_simd_shuffle_and_fill_down(as_type<ushort>(data), as_type<ushort>(fill), delta,
                                                              __metal_get_simdgroup_size(ushort())));
}
METAL_FUNC bfloat simd_sum(bfloat data) { return static_cast<bfloat>(__metal_simd_sum(static_cast<float>(data))); }
}

kernel void math_builtins(device const float * x [[buffer(0)]], device float * out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    float v = x[i];
    device float * o = out + 10 * i;
    o[0] = __metal_fabs(v, __METAL_MAYBE_FAST_MATH__);
    o[1] = __metal_exp(v, __METAL_PRECISE_MATH__);
    o[2] = __metal_exp(v, __METAL_FAST_MATH__);
    o[3] = __metal_fma(v, 2.0f, 0.5f);
    o[4] = __metal_fmin3(v, 0.25f, -v, __METAL_MAYBE_FAST_MATH__);
    o[5] = __metal_fmedian3(v, 0.25f, -v, __METAL_MAYBE_FAST_MATH__);
    int e;
    o[6] = __metal_frexp(v, &e);
    o[7] = e;
    o[8] = __metal_pow(fabs(v), 1.5f, __METAL_PRECISE_MATH__);
    o[9] = fast::abs(v) + precise::fmax3(v, 0.0f, 1.0f); // the float overloads stay visible
}

kernel void bf16_builtins(device const float * x [[buffer(0)]], device float * out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    bfloat b = bfloat(x[i]);
    device float * o = out + 4 * i;
    o[0] = float(abs(b));
    o[1] = float(fast::exp(b));
    o[2] = float(precise::fmax3(b, bfloat(0.5f), -b));
    o[3] = float(exp(b));
}

kernel void simd_builtins(device const float * x [[buffer(0)]], device float * out [[buffer(1)]],
                          uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    bfloat b = bfloat(x[i]);
    device float * o = out + 5 * i;
    o[0] = __metal_simd_sum(x[i]);
    o[4] = __metal_simd_xor(x[i]);  // MLX calls it on floats: their bits combine
    o[1] = float(simd_shuffle_down(b, 1));
    o[2] = float(simd_shuffle_and_fill_down(b, bfloat(-1.0f), 2));
    o[3] = float(__metal_get_simdgroup_size(ushort()));
}
"""


@pytest.fixture(scope="module")
def builtins_lib(dev):
    return pm.compile(BUILTINS_SRC)


def _bf16(x):
    """float32 -> nearest bfloat (round to nearest even) -> float32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("n", SIZES)
def test_math_builtins(builtins_lib, rng, n):
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    out = np.zeros((n, 10), np.float32)
    builtins_lib.math_builtins(x, out, grid=n)
    m, e = np.frexp(x)
    np.testing.assert_array_equal(out[:, 0], np.abs(x))
    np.testing.assert_allclose(out[:, 1], np.exp(x), rtol=2e-6)
    np.testing.assert_allclose(out[:, 2], np.exp(x), rtol=1e-4)
    np.testing.assert_allclose(out[:, 3], x * 2 + 0.5, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[:, 4], np.minimum(np.minimum(x, 0.25), -x))
    np.testing.assert_array_equal(out[:, 5], np.median(np.stack([x, np.full_like(x, 0.25), -x]), axis=0))
    np.testing.assert_array_equal(out[:, 6], m)
    np.testing.assert_array_equal(out[:, 7], e)
    np.testing.assert_allclose(out[:, 8], np.abs(x).astype(np.float64) ** 1.5, rtol=1e-5)
    np.testing.assert_array_equal(out[:, 9], np.abs(x) + np.maximum(np.maximum(x, 0), 1))


@pytest.mark.parametrize("n", SIZES)
def test_bfloat_overloads_on_builtins(builtins_lib, rng, n):
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    out = np.zeros((n, 4), np.float32)
    builtins_lib.bf16_builtins(x, out, grid=n)
    b = _bf16(x)
    np.testing.assert_array_equal(out[:, 0], np.abs(b))
    np.testing.assert_allclose(out[:, 1], _bf16(np.exp(b)), rtol=1e-2)
    np.testing.assert_array_equal(out[:, 2], np.maximum(np.maximum(b, 0.5), -b))
    np.testing.assert_allclose(out[:, 3], _bf16(np.exp(b)), rtol=1e-2)


@pytest.mark.parametrize("n,tg", [(1, 1), (33, 32), (100, 40), (4097, 256)])
def test_simd_builtins(builtins_lib, rng, n, tg):
    x = rng.integers(-50, 50, n).astype(np.float32)  # exact sums
    out = np.zeros((n, 5), np.float32)
    builtins_lib.simd_builtins(x, out, grid=n, threadgroup=tg)
    b = _bf16(x)
    for start in range(0, n, tg):
        size = min(tg, n - start)
        for s in range(0, size, 32):
            lo, hi = start + s, start + min(s + 32, size)
            k = hi - lo
            np.testing.assert_array_equal(out[lo:hi, 0], np.full(k, x[lo:hi].sum()))
            bits = np.bitwise_xor.reduce(x[lo:hi].view(np.uint32))
            np.testing.assert_array_equal(out[lo:hi, 4].view(np.uint32), np.full(k, bits, np.uint32))
            # lanes with a source lane in the simdgroup (the others are undefined on a GPU)
            np.testing.assert_array_equal(out[lo:hi - 1, 1], b[lo + 1:hi])
            fill = np.concatenate([b[lo + 2:hi], np.full(min(2, k), -1.0, np.float32)])[:k]
            if k == 32:  # fill lanes come from the full simdgroup's width
                np.testing.assert_array_equal(out[lo:hi, 2], fill)
            else:
                np.testing.assert_array_equal(out[lo:hi - 2, 2], fill[:max(k - 2, 0)])
    np.testing.assert_array_equal(out[:, 3], 32)


# ---------------------------------------------------------------------------
# 3. Members overloaded on the address space of `this` (MLX's complex.h)
# 4. <metal_type_traits>
# ---------------------------------------------------------------------------

TRAITS_SRC = HEADER + r"""
#include <metal_type_traits>

static_assert(is_floating_point_v<half> && is_floating_point_v<bfloat> && is_floating_point_v<float>);
static_assert(!is_floating_point_v<float4> && is_vector_v<float4> && is_vector_v<bool2> && !is_vector_v<float>);
static_assert(vec_elements<float3>::value == 3 && is_same_v<make_scalar_t<half4>, half>);
static_assert(is_integral_v<bool> && is_integral_v<ushort> && !is_integral_v<float> && is_arithmetic_v<half>);
static_assert(is_signed_v<int> && is_signed_v<half> && is_unsigned_v<uint> && !is_signed_v<uint>);
static_assert(is_same_v<conditional_t<true, int, float>, int> && is_same_v<make_unsigned_t<int>, uint>);
static_assert(is_same_v<remove_cv_t<const volatile float>, float> && is_same_v<decay_t<const int &>, int>);
static_assert(is_convertible_v<half, float> && !is_convertible_v<float, device float *>);
static_assert(is_same<enable_if<true, int>::type, int>::value && integral_constant<int, 3>::value == 3);

struct cplx;
template <typename T>
static constexpr constant bool can_convert = !is_same_v<T, cplx> && is_convertible_v<T, float>;

struct cplx {
    float re;
    float im;
    cplx() thread : re(0), im(0) {}
    cplx() threadgroup : re(0), im(0) {}
    cplx() device : re(0), im(0) {}
    cplx() constant : re(0), im(0) {}
    constexpr cplx(float r, float i) : re(r), im(i) {}
    template <typename T, typename = typename enable_if<can_convert<T>>::type>
    constexpr cplx(T x) thread : re(x), im(0) {}
    template <typename T, typename = typename enable_if<can_convert<T>>::type>
    constexpr cplx(T x) threadgroup : re(x), im(0) {}
    template <typename T, typename = typename enable_if<can_convert<T>>::type>
    constexpr cplx(T x) device : re(x), im(0) {}

    float norm2() const thread { return re * re + im * im; }
    float norm2() const threadgroup { return re * re + im * im; }
    float norm2() const device { return re * re + im * im; }
    float norm2() const constant { return re * re + im * im; }
    operator float() const thread { return re; }
    operator float() const device { return re; }
  public:
    struct parts {
        float a, b;
        float sum() thread { return a + b; }
        float sum() device { return a + b; }
    };
};
constexpr cplx operator*(cplx a, cplx b) { return cplx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }

template <typename T>
enable_if_t<is_floating_point_v<T>, T> twice(T x) { return x + x; }
template <typename T>
enable_if_t<is_integral_v<T>, T> twice(T x) { return x * 3; } // tells the overloads apart

kernel void cmul(device const cplx * a [[buffer(0)]], device const cplx * b [[buffer(1)]],
                 device float * out [[buffer(2)]], uint i [[thread_position_in_grid]],
                 uint t [[thread_position_in_threadgroup]]) {
    threadgroup cplx tmp[256];
    tmp[t] = a[i] * b[i];
    cplx scale = 2.0f;            // converting constructor, thread address space
    cplx p = tmp[t] * scale;
    out[4 * i + 0] = p.re;
    out[4 * i + 1] = p.im;
    out[4 * i + 2] = a[i].norm2() + tmp[t].norm2() * 0.0f;  // device and threadgroup overloads
    device const cplx::parts * q = (device const cplx::parts *)(a + i);
    cplx::parts local = *q;
    out[4 * i + 3] = twice(local.sum()) + float(twice(int(1))) + float(a[i]);
}
"""


@pytest.fixture(scope="module")
def traits_lib(dev):
    return pm.compile(TRAITS_SRC)


@pytest.mark.parametrize("n", SIZES)
def test_address_space_overloads_and_traits(traits_lib, rng, n):
    a = rng.standard_normal((n, 2)).astype(np.float32)
    b = rng.standard_normal((n, 2)).astype(np.float32)
    out = np.zeros((n, 4), np.float32)
    traits_lib.cmul(a, b, out, grid=n, threadgroup=256)
    ca = a[:, 0].astype(np.complex128) + 1j * a[:, 1]
    cb = b[:, 0].astype(np.complex128) + 1j * b[:, 1]
    p = ca * cb * 2
    np.testing.assert_allclose(out[:, 0], p.real, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[:, 1], p.imag, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[:, 2], np.abs(ca) ** 2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:, 3], 2 * (a[:, 0] + a[:, 1]) + 3 + a[:, 0], rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# 7. Function constants: values per pipeline, by name or by index
# ---------------------------------------------------------------------------

CONSTANTS_SRC = HEADER + r"""
constant bool has_w [[function_constant(20)]];
constant float eps [[function_constant(1)]];
constant bool has_eps = is_function_constant_defined(eps);
constant int reps [[function_constant(2)]];
constant half hscale [[function_constant(3)]];
constant uint2 shape [[function_constant(4)]];
constant bfloat bscale [[function_constant(5)]];
constant bool use_w = has_w && true;   // a constant derived from another: still a use of has_w

// out = x * w (with has_w) / sqrt(mean(x^2) + eps) over rows of `cols`
kernel void rms_norm(device const float * x [[buffer(0)]], device const float * w [[buffer(1)]],
                     device float * out [[buffer(2)]], constant uint & cols [[buffer(3)]],
                     uint row [[thread_position_in_grid]]) {
    float s = 0.0f;
    for (uint c = 0; c < cols; c++) s += x[row * cols + c] * x[row * cols + c];
    float inv = rsqrt(s / float(cols) + (has_eps ? eps : 1e-5f));
    for (uint c = 0; c < cols; c++) {
        float v = x[row * cols + c] * inv;
        if (use_w) v *= w[c];
        out[row * cols + c] = v;
    }
}

kernel void repeat_add(device float * out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    for (int k = 0; k < reps; k++) out[i] += float(hscale) + float(bscale) + float(shape.x * shape.y);
}

kernel void no_constants(device float * out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = 7.0f; }
"""


@pytest.fixture(scope="module")
def constants_lib(dev):
    return pm.compile(CONSTANTS_SRC)


def _rms_ref(x, w, eps):
    inv = 1.0 / np.sqrt((x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + eps)
    return x * inv * (w if w is not None else 1.0)


@pytest.mark.parametrize("rows,cols", [(1, 1), (33, 7), (1000, 64)])
@pytest.mark.parametrize("constants", [{"has_w": True}, {20: False}, {"has_w": True, "eps": 0.25}, {20: True, 1: 2.0}])
def test_function_constants_rms(constants_lib, rng, rows, cols, constants):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    out = np.zeros_like(x)
    fn = constants_lib.function("rms_norm", constants=constants)
    fn(x, w, out, np.array([cols], np.uint32), grid=rows)
    has_w = constants.get("has_w", constants.get(20))
    eps = constants.get("eps", constants.get(1, 1e-5))
    np.testing.assert_allclose(out, _rms_ref(x, w if has_w else None, eps), rtol=1e-5, atol=1e-6)
    # the same values give the same pipeline
    assert constants_lib.function("rms_norm", constants=dict(constants)) is fn


@pytest.mark.parametrize("n", [1, 33, 1000])
def test_function_constants_types(constants_lib, n):
    out = np.zeros(n, np.float32)
    values = {"reps": 3, "hscale": 0.5, "shape": (2, 3), "bscale": 0.25}
    constants_lib.function("repeat_add", constants=values)(out, grid=n)
    np.testing.assert_array_equal(out, np.full(n, 3 * (0.5 + 0.25 + 6)))
    out = np.zeros(n, np.float32)
    constants_lib.function("repeat_add", constants={2: 0, 3: 1.0, 4: [1, 1], 5: 1.0})(out, grid=n)
    np.testing.assert_array_equal(out, np.zeros(n))


def test_function_constants_reflection_and_errors(constants_lib):
    declared = {c["name"]: c for c in constants_lib.function_constants("rms_norm")}
    assert declared["has_w"]["index"] == 20 and declared["has_w"]["type"] == "bool" and declared["has_w"]["required"]
    assert declared["eps"]["type"] == "float" and not declared["eps"]["required"]  # guarded by is_function_constant_defined
    assert declared["shape"]["type"] == "uint2" and not declared["shape"]["required"]
    out = np.zeros(4, np.float32)
    constants_lib.no_constants(out, grid=4)  # a kernel that uses none runs without values
    np.testing.assert_array_equal(out, 7)
    x = np.ones((2, 2), np.float32)
    with pytest.raises(pm.CompileError, match=r"has_w.*20.*constants="):
        constants_lib.rms_norm(x, x, x, np.array([2], np.uint32), grid=2)
    with pytest.raises(pm.CompileError, match=r"function constant 'has_w' \(index 20, bool\).*no value"):
        constants_lib.function("rms_norm", constants={"eps": 1.0})
    with pytest.raises(ValueError, match=r"no function constant 'has_x'.*has_w \[20\] \(bool\)"):
        constants_lib.function("rms_norm", constants={"has_x": True})
    with pytest.raises(ValueError, match=r"no function constant 7"):
        constants_lib.function("rms_norm", constants={7: True})
    with pytest.raises(TypeError, match=r"'has_w' \(bool\): 1.5 is not a bool"):
        constants_lib.function("rms_norm", constants={"has_w": 1.5})
    with pytest.raises(ValueError, match=r"'reps' \(int\).*out of range"):
        constants_lib.function("repeat_add", constants={"reps": 2 ** 40})
    with pytest.raises(TypeError, match=r"'shape' \(uint2\) needs 2 values"):
        constants_lib.function("repeat_add", constants={"shape": 3})
    with pytest.raises(ValueError, match=r"given twice"):
        constants_lib.function("rms_norm", constants={"has_w": True, 20: False})
    with pytest.raises(ValueError, match=r"declares no function constants"):
        pm.compile(HEADER + "kernel void k(device float* o, uint i [[thread_position_in_grid]]) { o[i] = 1; }") \
            .function("k", constants={"a": 1})
    with pytest.raises(pm.FunctionNotFoundError):
        constants_lib.function("missing", constants={"has_w": True})
    with pytest.raises(pm.CompileError, match=r"'not_one' is not a function constant"):
        pm.compile(HEADER + "constant bool d = is_function_constant_defined(not_one);")


# ---------------------------------------------------------------------------
# 5. Matrices: floatNxM, halfNxM, matrix<T, C, R>
# ---------------------------------------------------------------------------

MATRIX_SRC = HEADER + r"""
// out per i: m * v (4), v * m (4), (m * b)[c] (16), transpose(m) (16), det(m), det(m3), det(m2),
//            m3 * v.xyz (3), float2x3 * float2 (3), float3 row * float2x3 (2), diag/ctor checks (4), half (4)
kernel void matrices(device const float4x4 * ms [[buffer(0)]], device const float4x4 * bs [[buffer(1)]],
                     device const float4 * vs [[buffer(2)]], device const float3x3 * m3s [[buffer(3)]],
                     device const half4x4 * hs [[buffer(4)]], device float * out [[buffer(5)]],
                     uint i [[thread_position_in_grid]]) {
    float4x4 m = ms[i];
    float4 v = vs[i];
    device float * o = out + 62 * i;
    float4 mv = m * v;
    float4 vm = v * m;
    float4x4 mb = m * bs[i];
    float4x4 t = transpose(m);
    for (int k = 0; k < 4; k++) { o[k] = mv[k]; o[4 + k] = vm[k]; }
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) { o[8 + 4 * c + r] = mb[c][r]; o[24 + 4 * c + r] = t[c][r]; }
    float3x3 m3 = m3s[i];
    float2x2 m2(m[0].xy, m[1].xy);
    o[40] = determinant(m);
    o[41] = determinant(m3);
    o[42] = determinant(m2);
    float3 m3v = m3 * v.xyz;
    float2x3 a(m3[0], m3[1]);            // two float3 columns
    float3 av = a * v.xy;
    float2 ra = v.xyz * a;
    for (int k = 0; k < 3; k++) { o[43 + k] = m3v[k]; o[46 + k] = av[k]; }
    o[49] = ra.x; o[50] = ra.y;
    float3x3 d(2.0f);                    // the diagonal
    float2x2 s(1.0f, 2.0f, 3.0f, 4.0f);  // column by column
    o[51] = d[0][0] + d[1][1] * 10.0f + d[0][1] * 100.0f;
    o[52] = s[1][0];
    o[53] = (s * 2.0f - s)[0][1];
    o[54] = (-s + s)[1][1];
    half4x4 h = hs[i];
    half4 hv = h * half4(v);
    float4x4 hf = float4x4(h);
    o[55] = float(hv.x); o[56] = float(hv.w); o[57] = hf[2][3]; o[58] = float(determinant(half2x2(h[0].xy, h[1].xy)));
    o[59] = sizeof(float3x3); o[60] = sizeof(half4x3); o[61] = sizeof(float2x4);
}
"""


@pytest.fixture(scope="module")
def matrix_lib(dev):
    return pm.compile(MATRIX_SRC)


@pytest.mark.parametrize("n", [1, 33, 1000])
def test_matrices(matrix_lib, rng, n):
    ms = rng.standard_normal((n, 4, 4)).astype(np.float32)   # [i][column][row]
    bs = rng.standard_normal((n, 4, 4)).astype(np.float32)
    vs = rng.standard_normal((n, 4)).astype(np.float32)
    m3s = rng.standard_normal((n, 3, 4)).astype(np.float32)  # float3 columns are 16 bytes
    hs = rng.standard_normal((n, 4, 4)).astype(np.float16)
    out = np.zeros((n, 62), np.float32)
    matrix_lib.matrices(ms, bs, vs, m3s, hs, out, grid=n)
    M = ms.transpose(0, 2, 1).astype(np.float64)             # as mathematical matrices (rows x columns)
    B = bs.transpose(0, 2, 1).astype(np.float64)
    M3 = m3s[:, :, :3].transpose(0, 2, 1).astype(np.float64)
    v = vs.astype(np.float64)
    tol = dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[:, 0:4], np.einsum("nij,nj->ni", M, v), **tol)
    np.testing.assert_allclose(out[:, 4:8], np.einsum("ni,nij->nj", v, M), **tol)
    np.testing.assert_allclose(out[:, 8:24].reshape(n, 4, 4), (M @ B).transpose(0, 2, 1), **tol)
    np.testing.assert_allclose(out[:, 24:40].reshape(n, 4, 4), ms.transpose(0, 2, 1), **tol)
    np.testing.assert_allclose(out[:, 40], np.linalg.det(M), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out[:, 41], np.linalg.det(M3), **tol)
    np.testing.assert_allclose(out[:, 42], np.linalg.det(M[:, :2, :2]), **tol)
    np.testing.assert_allclose(out[:, 43:46], np.einsum("nij,nj->ni", M3, v[:, :3]), **tol)
    np.testing.assert_allclose(out[:, 46:49], np.einsum("nij,nj->ni", M3[:, :, :2], v[:, :2]), **tol)
    np.testing.assert_allclose(out[:, 49:51], np.einsum("ni,nij->nj", v[:, :3], M3[:, :, :2]), **tol)
    np.testing.assert_array_equal(out[:, 51:55], np.tile([22.0, 3.0, 2.0, 0.0], (n, 1)))
    H = hs.transpose(0, 2, 1).astype(np.float64)
    hv = np.einsum("nij,nj->ni", H, vs.astype(np.float16).astype(np.float64))
    np.testing.assert_allclose(out[:, 55], hv[:, 0], rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(out[:, 56], hv[:, 3], rtol=2e-2, atol=2e-2)
    np.testing.assert_array_equal(out[:, 57], hs[:, 2, 3].astype(np.float32))
    np.testing.assert_allclose(out[:, 58], np.linalg.det(H[:, :2, :2]), rtol=2e-2, atol=2e-2)
    np.testing.assert_array_equal(out[0, 59:62], [48, 32, 32])  # MSL sizes: padded 3-element columns


# ---------------------------------------------------------------------------
# Compiling a project: include paths, quoted includes next to the file, defines,
# language version; a multi-file project in the style of MLX's kernels/ folder
# ---------------------------------------------------------------------------

PROJECTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "msl_projects")
KERNELS = os.path.join(PROJECTS, "mlxlike", "kernels")
DTYPES = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "bfloat16": "bf16"}


@pytest.fixture(scope="module")
def binary_lib(dev):
    with open(os.path.join(KERNELS, "binary.metal")) as f:
        return pm.compile(f.read(), include_dirs=[PROJECTS])


@pytest.fixture(scope="module")
def rms_lib(dev):
    return pm.load(os.path.join(KERNELS, "rms_norm.metal"))  # its #include "utils.h" is found next to it


def _sample(rng, shape, tname):
    if tname == "int32":
        return rng.integers(-1000, 1000, shape).astype(np.int32)
    x = rng.standard_normal(shape).astype(np.float32)
    return x.astype(np.float16) if tname == "float16" else x


def _as_bf16_bits(x):
    return (_bf16(x).view(np.uint32) >> 16).astype(np.uint16)


def _from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


REFS = {"Add": np.add, "Multiply": np.multiply, "Maximum": np.maximum}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", ["Add", "Multiply", "Maximum"])
@pytest.mark.parametrize("tname", ["float32", "float16", "int32", "bfloat16"])
def test_project_binary_kernels(binary_lib, rng, n, op, tname):
    a, b = _sample(rng, n, tname), _sample(rng, n, tname)
    if tname == "bfloat16":
        a_bits, b_bits = _as_bf16_bits(a), _as_bf16_bits(b)
        out = np.zeros(n, np.uint16)
        binary_lib.function("vv_%s%s" % (op, tname))(a_bits, b_bits, out, grid=n)
        ref = _bf16(REFS[op](_from_bf16_bits(a_bits), _from_bf16_bits(b_bits)))
        np.testing.assert_array_equal(_from_bf16_bits(out), ref)
        return
    out = np.zeros(n, a.dtype)
    binary_lib.function("vv_%s%s" % (op, tname))(a, b, out, grid=n)
    np.testing.assert_array_equal(out, REFS[op](a, b))
    binary_lib.function("sv_%s%s" % (op, tname))(a[:1], b, out, grid=n)
    np.testing.assert_array_equal(out, REFS[op](a[:1], b))


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (64, 33), (7, 1, 300)])
def test_project_strided_kernel(binary_lib, rng, shape):
    base = rng.standard_normal([2 * s for s in shape]).astype(np.float32)
    a = base[tuple(slice(None, None, 2) for _ in shape)]  # a strided view of base
    x = rng.standard_normal(shape[::-1]).astype(np.float32)
    b = x.T                                               # a transposed view of x
    out = np.zeros(shape, np.float32)
    strides = [np.array([s // 4 for s in v.strides], np.int64) for v in (a, b)]
    binary_lib.g_Addfloat32(base, x, out, np.array(shape, np.int32), strides[0], strides[1],
                            np.array([len(shape)], np.int32), grid=out.size)
    np.testing.assert_array_equal(out, a + b)


@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 31), (17, 1000), (2, 4099)])
@pytest.mark.parametrize("tname", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("has_w", [True, False])
def test_project_rms_norm(rms_lib, rng, rows, cols, tname, has_w):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    eps = np.array([1e-5], np.float32)
    size = np.array([cols], np.uint32)
    fn = rms_lib.function("rms" + tname, constants={"has_w": has_w})
    if tname == "bfloat16":
        xb, wb = _as_bf16_bits(x), _as_bf16_bits(w)
        out = np.zeros((rows, cols), np.uint16)
        fn(xb, wb, out, eps, size, groups=rows, threadgroup=256)
        got, x, w, tol = _from_bf16_bits(out), _from_bf16_bits(xb), _from_bf16_bits(wb), 2e-2
    else:
        dtype = DTYPES[tname]
        x, w = x.astype(dtype), w.astype(dtype)
        out = np.zeros((rows, cols), dtype)
        fn(x, w, out, eps, size, groups=rows, threadgroup=256)
        got, tol = out.astype(np.float32), 1e-5 if dtype == np.float32 else 2e-3
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-5)
    if has_w:
        ref = ref * w.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * 4)


def test_compile_options(dev, tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("#pragma once\n#define SCALE 3\n")
    (tmp_path / "inc" / "twice.h").write_text('#pragma once\n#include "scale.h"\ninline float twice(float x) { return 2 * x; }\n')
    src = HEADER + r"""
#include "twice.h"
#include <twice.h>
#include "scale.h"
kernel void k(device float * o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    o[i] = twice(o[i]) * SCALE + OFFSET + __METAL_VERSION__;
}
"""
    out = np.ones(5, np.float32)
    pm.compile(src, include_dirs=[str(tmp_path / "inc")], defines={"OFFSET": 10}, language_version="3.2").k(out, grid=5)
    np.testing.assert_array_equal(out, 2 * 3 + 10 + 320)
    out = np.ones(5, np.float32)
    pm.compile(src, include_dirs=tmp_path / "inc", defines=["OFFSET=1"], language_version="3.0").k(out, grid=5)
    np.testing.assert_array_equal(out, 2 * 3 + 1 + 300)
    with pytest.raises(ValueError, match="language_version='4.0'"):
        pm.compile(src, language_version="4.0")
    with pytest.raises(FileNotFoundError):
        pm.compile(src, include_dirs=[str(tmp_path / "missing")])
    with pytest.raises(TypeError, match="not both"):
        pm.compile(src, defines={"A": 1}, macros={"A": 1})
    with pytest.raises(pm.CompileError, match="twice.h"):
        pm.compile(src, defines={"OFFSET": 1})  # no include path: the header is not found


def test_diagnostics_in_included_files(dev, tmp_path):
    (tmp_path / "helpers.h").write_text("#pragma once\n\ninline float broken(float x) {\n    return x + undefined_name;\n}\n")
    main = tmp_path / "main.metal"
    main.write_text(HEADER + '#include "helpers.h"\n\nkernel void k(device float * o [[buffer(0)]]) { o[0] = broken(1); }\n')
    with pytest.raises(pm.CompileError) as e:
        pm.load(str(main))
    assert "%s:4:16: error: use of undeclared identifier 'undefined_name'" % (tmp_path / "helpers.h") in str(e.value)


def test_diagnostics_use_the_users_columns(dev):
    src = HEADER + (
        "kernel void k(device float * o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
        "    float4 v = float4(1, 2, 3, 4) + float4(o[i], 0, 0, 0) + undefined_thing;\n"
        "    o[i] = v.x;\n"
        "}\n")
    with pytest.raises(pm.CompileError) as e:
        pm.compile(src)
    line = src.split("\n")[3]
    message = str(e.value)
    assert "program_source:4:%d: error: use of undeclared identifier 'undefined_thing'" % (
        line.index("undefined_thing") + 1) in message
    assert line in message and "pm_make" not in message  # the excerpt is the user's line


# ---------------------------------------------------------------------------
# 6. Position attributes on ordinary functions (ggml's *_impl helpers)
# 8. max_total_threads_per_threadgroup depending on template parameters (MLX's sort.metal)
# ---------------------------------------------------------------------------

POSITIONS_SRC = HEADER + r"""
void store_impl(device float * o, uint3 tgpig [[threadgroup_position_in_grid]],
                ushort tiisg [[thread_index_in_simdgroup]], ushort sgitg [[simdgroup_index_in_threadgroup]]) {
    o[tgpig.x * 64 + sgitg * 32 + tiisg] = float(tgpig.x) * 1000.0f + float(sgitg) * 100.0f + float(tiisg);
}
template <typename T>
void add_impl(device T * o, uint i [[thread_position_in_grid]]) { o[i] += T(1); }

template <typename T, short BLOCK_THREADS, short N_PER_THREAD = 1>
[[kernel, max_total_threads_per_threadgroup(BLOCK_THREADS * N_PER_THREAD)]]
void block_kernel(device T * o [[buffer(0)]], uint3 tgpig [[threadgroup_position_in_grid]],
                  ushort tiisg [[thread_index_in_simdgroup]], ushort sgitg [[simdgroup_index_in_threadgroup]],
                  uint i [[thread_position_in_grid]]) {
    store_impl(o, tgpig, tiisg, sgitg);
    add_impl(o, i);
}
#define instantiate_block(name, ...) \
    template [[host_name(name)]] [[kernel]] decltype(block_kernel<__VA_ARGS__>) block_kernel<__VA_ARGS__>;
instantiate_block("block_64", float, 64)
instantiate_block("block_128", float, 32, 4)

constant constexpr int kThreads = 96;
[[kernel, max_total_threads_per_threadgroup(kThreads)]]
void fixed(device float * o [[buffer(0)]], uint i [[thread_position_in_grid]]) { add_impl(o, i); }
"""


@pytest.fixture(scope="module")
def positions_lib(dev):
    return pm.compile(POSITIONS_SRC)


@pytest.mark.parametrize("groups", [1, 3, 50])
def test_position_attributes_on_helpers(positions_lib, groups):
    out = np.zeros(groups * 64, np.float32)
    positions_lib.block_64(out, groups=groups, threadgroup=64)
    g, s, t = np.meshgrid(np.arange(groups), np.arange(2), np.arange(32), indexing="ij")
    np.testing.assert_array_equal(out, (g * 1000.0 + s * 100.0 + t + 1).ravel())


def test_template_dependent_max_threads(positions_lib):
    assert positions_lib.block_64.max_threads_per_threadgroup == 64
    assert positions_lib.block_128.max_threads_per_threadgroup == 128
    assert positions_lib.fixed.max_threads_per_threadgroup == 96
    with pytest.raises(ValueError, match="64"):
        positions_lib.block_64(np.zeros(128, np.float32), groups=1, threadgroup=128)


# ---------------------------------------------------------------------------
# 9. <metal_pack>, fmax3 / fmin3 / fmedian3
# ---------------------------------------------------------------------------

PACK_SRC = HEADER + r"""
#include <metal_pack>
kernel void pack(device const float4 * x [[buffer(0)]], device uint * p [[buffer(1)]],
                 device float4 * u [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float4 v = x[i];
    p[6 * i + 0] = pack_float_to_unorm4x8(v);
    p[6 * i + 1] = pack_float_to_snorm4x8(v);
    p[6 * i + 2] = pack_float_to_unorm2x16(v.xy);
    p[6 * i + 3] = pack_float_to_snorm2x16(v.zw);
    p[6 * i + 4] = pack_half_to_unorm4x8(half4(v));
    p[6 * i + 5] = pack_float_to_unorm1010102(v);
    u[4 * i + 0] = unpack_unorm4x8_to_float(p[6 * i]);
    u[4 * i + 1] = unpack_snorm4x8_to_float(p[6 * i + 1]);
    u[4 * i + 2] = float4(unpack_unorm2x16_to_float(p[6 * i + 2]), unpack_snorm2x16_to_float(p[6 * i + 3]));
    u[4 * i + 3] = float4(unpack_unorm10a2_to_float(p[6 * i + 5]));
}
kernel void minmax3(device const float * x [[buffer(0)]], device const float * y [[buffer(1)]],
                    device const float * z [[buffer(2)]], device float * out [[buffer(3)]],
                    uint i [[thread_position_in_grid]]) {
    out[3 * i + 0] = fmax3(x[i], y[i], z[i]);
    out[3 * i + 1] = fmin3(x[i], y[i], z[i]);
    out[3 * i + 2] = float(fmedian3(half(x[i]), half(y[i]), half(z[i])));
}
"""


@pytest.fixture(scope="module")
def pack_lib(dev):
    return pm.compile(PACK_SRC)


def _quantise(x, scale, signed, bits):
    lo = -1.0 if signed else 0.0
    # in float arithmetic, as the MSL rule (x * 255.0f, round to nearest even)
    q = np.rint(np.clip(np.nan_to_num(x, nan=0.0), lo, 1.0).astype(np.float32) * np.float32(scale)).astype(np.int64)
    return q & ((1 << bits) - 1)


def _pack(parts, bits):
    out = np.zeros(parts[0].shape, np.uint64)
    shift = 0
    for part, b in zip(parts, bits):
        out |= part.astype(np.uint64) << np.uint64(shift)
        shift += b
    return out.astype(np.uint32)


@pytest.mark.parametrize("n", [1, 33, 1000])
def test_pack_functions(pack_lib, rng, n):
    x = rng.uniform(-1.3, 1.3, (n, 4)).astype(np.float32)
    x[0, 0] = 0.5 / 255  # a tie: rounds to even
    p = np.zeros((n, 6), np.uint32)
    u = np.zeros((n, 4, 4), np.float32)
    pack_lib.pack(x, p, u, grid=n)
    un8 = [_quantise(x[:, k], 255, False, 8) for k in range(4)]
    sn8 = [_quantise(x[:, k], 127, True, 8) for k in range(4)]
    np.testing.assert_array_equal(p[:, 0], _pack(un8, [8] * 4))
    np.testing.assert_array_equal(p[:, 1], _pack(sn8, [8] * 4))
    np.testing.assert_array_equal(p[:, 2], _pack([_quantise(x[:, k], 65535, False, 16) for k in (0, 1)], [16, 16]))
    np.testing.assert_array_equal(p[:, 3], _pack([_quantise(x[:, k], 32767, True, 16) for k in (2, 3)], [16, 16]))
    xh = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(p[:, 4], _pack([_quantise(xh[:, k], 255, False, 8) for k in range(4)], [8] * 4))
    np.testing.assert_array_equal(p[:, 5], _pack([_quantise(x[:, k], 1023, False, 10) for k in range(3)]
                                                 + [_quantise(x[:, 3], 3, False, 2)], [10, 10, 10, 2]))
    np.testing.assert_allclose(u[:, 0], np.stack(un8, 1) / 255.0, rtol=1e-6)
    signed = np.stack([np.where(q >= 128, q - 256, q) for q in sn8], 1)
    np.testing.assert_allclose(u[:, 1], np.maximum(signed / 127.0, -1), rtol=1e-6)
    np.testing.assert_allclose(u[:, 2, :2], np.clip(x[:, :2], 0, 1), atol=1 / 65535)
    np.testing.assert_allclose(u[:, 2, 2:], np.clip(x[:, 2:], -1, 1), atol=1 / 32767)
    np.testing.assert_allclose(u[:, 3, :3], np.clip(x[:, :3], 0, 1), atol=0.5 / 1023 + 1e-7)


@pytest.mark.parametrize("n", [1, 33, 1000])
def test_fmax3_fmin3_fmedian3(pack_lib, rng, n):
    x, y, z = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = np.zeros((n, 3), np.float32)
    pack_lib.minmax3(x, y, z, out, grid=n)
    np.testing.assert_array_equal(out[:, 0], np.maximum(np.maximum(x, y), z))
    np.testing.assert_array_equal(out[:, 1], np.minimum(np.minimum(x, y), z))
    h = np.stack([x, y, z]).astype(np.float16)
    np.testing.assert_array_equal(out[:, 2], np.median(h.astype(np.float32), axis=0))


# ---------------------------------------------------------------------------
# What Metal refuses fails here too
# ---------------------------------------------------------------------------

KERNEL_WITH = "kernel void k(device float * o [[buffer(0)]], uint i [[thread_position_in_grid]]) { %s }\n"


@pytest.mark.parametrize("body,word", [
    ("double d = o[i]; o[i] = d;", "double"),
    ("float * p = new float[4]; o[i] = p[0];", "new"),
    ("delete o;", "delete"),
    ("if (o[i] < 0) throw 1;", "throw"),
    ("try { o[i] = 1; } catch (...) {}", "try"),
    ("static thread_local float t = 0; o[i] = t;", "thread_local"),
    ("goto end; end: o[i] = 1;", "goto"),
    ("o[i] = float(sizeof(typeid(float)));", "typeid"),
])
def test_refused_cpp(dev, body, word):
    with pytest.raises(pm.CompileError, match=r"program_source:\d+:\d+: error: '%s' is not supported" % word):
        pm.compile(HEADER + KERNEL_WITH % body)


def test_refused_declarations(dev):
    with pytest.raises(pm.CompileError, match="'virtual' is not supported: Metal has no virtual functions"):
        pm.compile(HEADER + "struct B { virtual float f() { return 1; } };\n" + KERNEL_WITH % "o[i] = 1;")
    with pytest.raises(pm.CompileError, match="dynamic_cast"):
        pm.compile(HEADER + "struct B {}; struct D : B {};\n" + KERNEL_WITH % "B b; D * d = dynamic_cast<D *>(&b); o[i] = 1;")
    # a deleted special member is not the delete operator
    lib = pm.compile(HEADER + "struct S { float v; S() = default; S(const S &) = delete; };\n" + KERNEL_WITH % "S s; s.v = 2; o[i] = s.v;")
    out = np.zeros(3, np.float32)
    lib.k(out, grid=3)
    np.testing.assert_array_equal(out, 2)


def test_missing_metal_stdlib(dev, tmp_path):
    out = np.zeros(3, np.float32)
    # Metal's scalar and vector types are built in: a kernel that uses only them needs no header
    pm.compile(KERNEL_WITH % "o[i] = 1;").k(out, grid=3)
    np.testing.assert_array_equal(out, 1)
    # namespace metal (and its functions) exist only where a Metal header is included
    for src in ("using namespace metal;\n" + KERNEL_WITH % "o[i] = 1;", KERNEL_WITH % "o[i] = metal::sqrt(4.0f);"):
        with pytest.raises(pm.CompileError, match=r"includes no Metal header: add #include <metal_stdlib>"):
            pm.compile(src)
    # any Metal header counts, also through the user's own header
    pm.compile("#include <metal_math>\n" + KERNEL_WITH % "o[i] = metal::sqrt(4.0f);").k(out, grid=3)
    np.testing.assert_array_equal(out, 2)
    (tmp_path / "common.h").write_text("#pragma once\n#include <metal_stdlib>\n")
    (tmp_path / "k.metal").write_text('#include "common.h"\n' + KERNEL_WITH % "o[i] = 5;")
    pm.load(str(tmp_path / "k.metal")).k(out, grid=3)
    np.testing.assert_array_equal(out, 5)


def test_function_constant_index_expressions(dev):
    src = HEADER + r"""
#define FC_MUL_MV 600
constant short FC_nsg [[function_constant(FC_MUL_MV + 0)]];
constant short FC_nxpsg [[function_constant((FC_MUL_MV + 1) * 1)]];
kernel void k(device float * o [[buffer(2 * 2 - 4)]], uint i [[thread_position_in_grid]]) { o[i] = FC_nsg * 10 + FC_nxpsg; }
"""
    lib = pm.compile(src)
    assert [(c["name"], c["index"], c["type"]) for c in lib.function_constants("k")] == [
        ("FC_nsg", 600, "short"), ("FC_nxpsg", 601, "short")]
    out = np.zeros(33, np.float32)
    lib.function("k", constants={600: 4, "FC_nxpsg": -7})(out, grid=33)
    np.testing.assert_array_equal(out, 33)


def test_front_end_errors_use_the_users_columns(dev):
    line = "kernel void k(device float * o [[buffer(0)]]) { float4 a = float4(SQ(1.0f), 2, 3, 4); double d = a.x; o[0] = d; }"
    src = HEADER + "#define SQ(x) ((x) * (x))\n" + line + "\n"
    with pytest.raises(pm.CompileError) as e:
        pm.compile(src)
    message = str(e.value)
    assert "program_source:4:%d: error: 'double' is not supported" % (line.index("double") + 1) in message
    assert line in message  # the excerpt is the user's line, macros unexpanded


def test_declarations_overloaded_on_address_spaces(dev):
    # MLX's steel/utils/type_traits.h: specializations per address space, and traits of its own
    src = HEADER + r"""
namespace metal {
template <typename T> struct is_empty : metal::bool_constant<__is_empty(T)> {};
template <typename... Ts> struct make_void { typedef void type; };
template <typename T> struct pointer_element {};
template <typename T> struct pointer_element<thread T *> { using type = remove_cv_t<T>; };
template <typename T> struct pointer_element<device T *> { using type = remove_cv_t<T>; };
template <typename T> struct pointer_element<constant T *> { using type = remove_cv_t<T>; };
template <typename T> struct pointer_element<threadgroup T *> { using type = remove_cv_t<T>; };
template <typename T> using pointer_element_t = typename pointer_element<remove_cv_t<T>>::type;
template <short val> struct is_integral<integral_constant<decltype(val), val>> : true_type {};
}
inline float first(device const float * p) { return p[0]; }
inline float first(threadgroup const float * p) { return p[0]; }
inline float first(constant float * p) { return p[0]; }
struct Loader {
    float get(device const float * p) const { return p[1]; }
    float get(threadgroup const float * p) const { return p[1]; }
};
kernel void k(device float * o [[buffer(0)]], constant float * c [[buffer(1)]], uint i [[thread_position_in_grid]],
              uint l [[thread_position_in_threadgroup]]) {
    threadgroup float t[64][2];
    t[l][0] = o[2 * i];
    t[l][1] = o[2 * i + 1];
    static_assert(is_same_v<pointer_element_t<constant float *>, float> && is_integral_v<integral_constant<short, 3>>);
    static_assert(!is_empty<float4>::value);
    pointer_element_t<device float *> v = first(o + 2 * i) + first(t[l]) + first(c) + Loader().get(t[l]) + Loader().get(o + 2 * i);
    o[2 * i] = v;
}
"""
    rng = np.random.default_rng(3)
    for n in (1, 33, 1000):
        o = rng.standard_normal((n, 2)).astype(np.float32)
        c = np.array([1.5], np.float32)
        ref = 2 * o[:, 0] + 1.5 + 2 * o[:, 1]
        pm.compile(src).k(o, c, grid=n, threadgroup=64)
        np.testing.assert_allclose(o[:, 0], ref, rtol=1e-6, atol=1e-5)
    different = HEADER + """
inline float first(device const float * p) { return p[0]; }
inline float first(threadgroup const float * p) { return p[1]; }
kernel void k(device float * o [[buffer(0)]]) { o[0] = first(o); }
"""
    with pytest.raises(pm.CompileError, match=r"program_source:5:1: error: overloads that differ only in address spaces"):
        pm.compile(different)


CONSTANT_CONST_SRC = HEADER + r"""
// MLX's utils.h: one helper per address space of shape / strides, `constant const` spelled out
inline size_t elem_to_loc(uint elem, device const int * shape, device const size_t * strides, int ndim) {
    size_t loc = 0;
    for (int i = ndim - 1; i >= 0; --i) { loc += (elem % shape[i]) * strides[i]; elem /= shape[i]; }
    return loc;
}
inline size_t elem_to_loc(uint elem, constant const int * shape, constant const size_t * strides, int ndim) {
    size_t loc = 0;
    for (int i = ndim - 1; i >= 0; --i) { loc += (elem % shape[i]) * strides[i]; elem /= shape[i]; }
    return loc;
}
template <typename T>
kernel void gather_device(device const T * x [[buffer(0)]], device T * out [[buffer(1)]],
                          device const int * shape [[buffer(2)]], device const size_t * strides [[buffer(3)]],
                          constant const int & ndim [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    out[i] = x[elem_to_loc(i, shape, strides, ndim)];
}
template <typename T>
kernel void gather_constant(device const T * x [[buffer(0)]], device T * out [[buffer(1)]],
                            constant const int * shape [[buffer(2)]], constant const size_t * strides [[buffer(3)]],
                            constant const int & ndim [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    out[i] = x[elem_to_loc(i, shape, strides, ndim)];
}
template [[host_name("gather_device_f32")]] kernel void gather_device<float>(
    device const float *, device float *, device const int *, device const size_t *, constant const int &, uint [[thread_position_in_grid]]);
template [[host_name("gather_constant_f32")]] kernel void gather_constant<float>(
    device const float *, device float *, constant const int *, constant const size_t *, constant const int &, uint [[thread_position_in_grid]]);
template [[host_name("gather_constant_i16")]] kernel void gather_constant<short>(
    device const short *, device short *, constant const int *, constant const size_t *, constant const int &, uint [[thread_position_in_grid]]);
"""


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (31, 33), (7, 1, 5), (101, 1000)])
@pytest.mark.parametrize("name,dtype", [("gather_device_f32", np.float32), ("gather_constant_f32", np.float32),
                                        ("gather_constant_i16", np.int16)])
def test_constant_const_overloads(dev, rng, shape, name, dtype):
    # `constant const T*` and `device const T*` overloads are one C++ function here (same body)
    lib = pm.compile(CONSTANT_CONST_SRC)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    view = x.T  # gather the transpose through strides counted in elements
    out = np.zeros(view.size, dtype)
    strides = np.array([s // x.itemsize for s in view.strides], np.uint64)
    if out.size:
        lib.function(name)(x, out, np.array(view.shape, np.int32), strides, np.array(x.ndim, np.int32), grid=out.size)
    np.testing.assert_array_equal(out, view.ravel())


def test_constant_const_draws_no_warning(dev):
    # Metal takes `constant const T&` silently; the one error is not buried under duplicate-const warnings
    src = HEADER + "kernel void k(device float * o [[buffer(0)]], constant const float & a [[buffer(1)]]) { o[0] = a + nope; }"
    with pytest.raises(pm.CompileError) as e:
        pm.compile(src)
    assert "undeclared identifier 'nope'" in str(e.value)
    assert "warning" not in str(e.value)


ARRAY_SRC = r"""
#include <metal_stdlib>
#include <metal_array>
using namespace metal;
// MLX's DivMod: a functor returning metal::array<T, 2>, initialised from a braced list
struct DivMod {
    template <typename T> metal::array<T, 2> operator()(T x, T y) { return {T(x / y), T(x % y)}; }
};
template <typename T, typename Op>
kernel void two_out(device const T * a [[buffer(0)]], device const T * b [[buffer(1)]], device T * c [[buffer(2)]],
                    device T * d [[buffer(3)]], uint i [[thread_position_in_grid]]) {
    auto out = Op()(a[i], b[i]);
    c[i] = out[0];
    d[i] = out.back() + T(out.size() - 2 + out.empty());
}
template [[host_name("divmod_i32")]] kernel void two_out<int, DivMod>(
    device const int *, device const int *, device int *, device int *, uint i [[thread_position_in_grid]]);
template [[host_name("divmod_u16")]] kernel void two_out<ushort, DivMod>(
    device const ushort *, device const ushort *, device ushort *, device ushort *, uint i [[thread_position_in_grid]]);
kernel void sum3(device const float * x [[buffer(0)]], device float * o [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    metal::array<float, 3> v = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
    float s = 0;
    for (float e : v) s += e;
    o[i] = s;
}
"""


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name,dtype", [("divmod_i32", np.int32), ("divmod_u16", np.uint16)])
def test_metal_array(dev, rng, n, name, dtype):
    lib = pm.compile(ARRAY_SRC)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -1000), 1000, n).astype(dtype)
    b = rng.integers(1, 50, n).astype(dtype) * np.where(rng.random(n) < 0.5, 1, -1 if info.min else 1).astype(dtype)
    c, d = np.zeros(n, dtype), np.zeros(n, dtype)
    lib.function(name)(a, b, c, d, grid=n)
    q = np.trunc(a.astype(np.float64) / b).astype(dtype)  # MSL divides toward zero, as C++
    np.testing.assert_array_equal(c, q)
    np.testing.assert_array_equal(d, (a - q * b).astype(dtype))
    x = rng.standard_normal((n, 3)).astype(np.float32)
    o = np.zeros(n, np.float32)
    lib.sum3(x, o, grid=n)
    np.testing.assert_allclose(o, x.sum(axis=1), rtol=1e-5, atol=1e-5)
