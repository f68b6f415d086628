"""Real-world MSL, round 2 (issue 26): the language features that MLX, candle, ggml and
metal-flash-attention kernels rely on and pymetal refused (see the list in the issue, A to Q).
Each snippet is compiled and run, and its results checked against NumPy; a few kernels of our
own in those projects' idioms use the features together.
"""

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"
SIZES = [1, 7, 32, 33, 1000]


@pytest.fixture
def rng():
    return np.random.default_rng(26)


# ---------------------------------------------------------------------------
# A. [[buffer(n), function_constant(c)]]: optional buffers
# ---------------------------------------------------------------------------

OPTIONAL_SRC = HEADER + r"""
constant bool has_b [[function_constant(0)]];
kernel void k(device float* o [[buffer(0)]], device const float* b [[buffer(1), function_constant(has_b)]],
              uint i [[thread_position_in_grid]]) { o[i] = has_b ? b[i] : 0; }

// MLX's steel GEMM idiom: D = alpha * (A @ B) + beta * C, with C and its parameters optional,
// and a batch stride bound only when batched.
struct AddParams { float alpha; float beta; };
constant bool use_out_source [[function_constant(10)]];
constant bool has_batch [[function_constant(11)]];
template <typename T>
[[kernel]] void gemm(const device T* A [[buffer(0)]], const device T* B [[buffer(1)]],
                     const device T* C [[buffer(2), function_constant(use_out_source)]],
                     device T* D [[buffer(3)]], constant uint3& mnk [[buffer(4)]],
                     const constant AddParams& add [[buffer(5), function_constant(use_out_source)]],
                     const constant uint& batch_stride [[buffer(6), function_constant(has_batch)]],
                     uint3 gid [[thread_position_in_grid]]) {
    const uint M = mnk.x, N = mnk.y, K = mnk.z;
    if (gid.x >= N || gid.y >= M) return;
    const uint offset = has_batch ? gid.z * batch_stride : 0;
    float acc = 0;
    for (uint k = 0; k < K; k++) acc += float(A[offset + gid.y * K + k]) * float(B[k * N + gid.x]);
    const uint out = gid.z * M * N + gid.y * N + gid.x;
    if (use_out_source) acc = add.alpha * acc + add.beta * float(C[out]);
    D[out] = T(acc);
}
template [[host_name("gemm_f32")]] [[kernel]] decltype(gemm<float>) gemm<float>;
template [[host_name("gemm_f16")]] [[kernel]] decltype(gemm<half>) gemm<half>;
"""


@pytest.fixture(scope="module")
def optional_lib(dev):
    return pm.compile(OPTIONAL_SRC)


@pytest.mark.parametrize("n", SIZES)
def test_optional_buffer_absent_and_present(optional_lib, rng, n):
    absent = optional_lib.function("k", constants={0: False})
    assert [a.index for a in absent.arguments] == [0]  # as Metal's reflection: b is not in the signature
    o = np.full(n, 5, np.float32)
    absent(o, grid=n)
    np.testing.assert_array_equal(o, np.zeros(n, np.float32))
    present = optional_lib.function("k", constants={"has_b": True})
    assert [a.index for a in present.arguments] == [0, 1]
    b = rng.standard_normal(n).astype(np.float32)
    present(o, b, grid=n)
    np.testing.assert_array_equal(o, b)


def test_optional_buffer_refused_when_absent(optional_lib):
    absent = optional_lib.function("k", constants={0: False})
    o, b = np.zeros(4, np.float32), np.ones(4, np.float32)
    with pytest.raises(TypeError, match="1 argument"):
        absent(o, b, grid=4)
    present = optional_lib.function("k", constants={0: True})
    with pytest.raises(TypeError):
        present(o, grid=4)


def test_optional_buffer_needs_its_constant(optional_lib):
    with pytest.raises(pm.CompileError, match="has_b"):
        optional_lib.function("k")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("use_c", [False, True])
@pytest.mark.parametrize("batch", [0, 3])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (5, 7, 3), (17, 33, 9)])
def test_optional_buffers_gemm(optional_lib, rng, dtype, use_c, batch, m, n, k):
    name = "gemm_f32" if dtype == np.float32 else "gemm_f16"
    fn = optional_lib.function(name, constants={"use_out_source": use_c, "has_batch": batch > 0})
    nb = max(batch, 1)
    a = rng.standard_normal((nb, m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((nb, m, n)).astype(dtype)
    d = np.zeros((nb, m, n), dtype)
    mnk = np.array([m, n, k], np.uint32)
    add = np.array([1.5, -0.5], np.float32)
    args = [a, b] + ([c] if use_c else []) + [d, mnk] + ([add] if use_c else []) + ([np.uint32(m * k)] if batch else [])
    assert len(fn.arguments) == len(args)
    fn(*args, grid=(n, m, nb))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if use_c:
        ref = 1.5 * ref + -0.5 * c.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 2e-2
    np.testing.assert_allclose(d.astype(np.float64), ref, rtol=tol, atol=tol * (k + 1))


def test_optional_attribute_needs_a_constant_name(dev):
    with pytest.raises(pm.CompileError, match="function_constant on a kernel parameter"):
        pm.compile(HEADER + "kernel void k(device float* o [[buffer(0), function_constant(3)]]) { o[0] = 1; }")


# ---------------------------------------------------------------------------
# B. Attributes on parameters of constructors, members, static members, function types
# ---------------------------------------------------------------------------

MEMBER_ATTR_SRC = HEADER + r"""
struct L { ushort s; METAL_FUNC L(ushort sg [[simdgroup_index_in_threadgroup]], ushort ln [[thread_index_in_simdgroup]]) thread : s(sg*32+ln) {} };
struct S { static METAL_FUNC void f(threadgroup float* t [[threadgroup(0)]], uint l [[thread_position_in_threadgroup]]) { t[l] = l; } };
typedef void (k_t)(device float* o, uint3 tg [[threadgroup_position_in_grid]]);
template <typename T> kernel void kt(device T* o, uint3 tg [[threadgroup_position_in_grid]]) { o[tg.x] = 1; }
template [[host_name("k")]] kernel k_t kt<float>;

// MLX's steel idiom: a loader built from the thread's simdgroup and lane, a static member
// that takes threadgroup memory, called from a kernel.
struct Loader {
    ushort thread_idx;
    METAL_FUNC Loader(ushort simd_group_id [[simdgroup_index_in_threadgroup]],
                      ushort simd_lane_id [[thread_index_in_simdgroup]]) thread
        : thread_idx(simd_group_id * 32 + simd_lane_id) {}
    METAL_FUNC float load(const device float* x, uint base [[threadgroup_position_in_grid]]) const {
        return x[base + thread_idx];
    }
};
struct Reverse {
    static METAL_FUNC void run(threadgroup float* tmp [[threadgroup(0)]], uint lid [[thread_position_in_threadgroup]],
                               uint n [[threads_per_threadgroup]]) {
        float v = tmp[n - 1 - lid];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        tmp[lid] = v;
    }
};
kernel void reverse_blocks(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                           uint tgid [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
                           uint n [[threads_per_threadgroup]],
                           ushort sg [[simdgroup_index_in_threadgroup]], ushort lane [[thread_index_in_simdgroup]]) {
    threadgroup float tmp[64];
    Loader loader(sg, lane);
    tmp[lid] = loader.load(x, tgid * n);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    Reverse::run(tmp, lid, n);
    y[tgid * n + lid] = tmp[lid];
}
"""


@pytest.fixture(scope="module")
def member_lib(dev):
    return pm.compile(MEMBER_ATTR_SRC)


@pytest.mark.parametrize("groups", [1, 3])
def test_attribute_on_function_type_typedef(member_lib, groups):
    o = np.zeros(groups, np.float32)
    member_lib.function("k")(o, groups=groups, threadgroup=1)
    np.testing.assert_array_equal(o, np.ones(groups, np.float32))


@pytest.mark.parametrize("groups", [1, 5])
def test_attributes_on_member_and_constructor_parameters(member_lib, rng, groups):
    x = rng.standard_normal(groups * 64).astype(np.float32)
    y = np.zeros_like(x)
    member_lib.function("reverse_blocks")(x, y, groups=groups, threadgroup=64)
    np.testing.assert_array_equal(y, x.reshape(groups, 64)[:, ::-1].ravel())


# ---------------------------------------------------------------------------
# H. Apple-internal names under `#pragma METAL internals : enable`
# ---------------------------------------------------------------------------

INTERNALS_SRC = HEADER + r"""
#pragma METAL internals : enable
template <typename T> constexpr constant bool isx = _disjunction<is_same<T, int>, is_same<T, uint>>::value;
struct P { float v; int i; };
template <> struct _numeric_limits_impl<P> { static constexpr P lowest() { return P{-1.0f, 0}; } };
template <typename T> constexpr constant bool is_simd_t = __is_valid_simdgroup_type<T>::value;

// candle's idiom: an arg-max over (value, index) pairs whose identity comes from numeric_limits.
template <typename T> struct indexed { uint i; T v; };
template <typename T> struct _numeric_limits_impl<indexed<T>> {
    static constexpr indexed<T> lowest() { return indexed<T>{0, numeric_limits<T>::lowest()}; }
};
kernel void traits(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    o[0] = isx<int>; o[1] = isx<uint>; o[2] = isx<float>;
    o[3] = numeric_limits<P>::lowest().v;
    o[4] = is_simd_t<float>; o[5] = is_simd_t<half4>; o[6] = is_simd_t<long>; o[7] = is_simd_t<int2>;
    o[8] = numeric_limits<float>::max(); o[9] = numeric_limits<indexed<half>>::lowest().v;
    o[10] = _conjunction<is_same<int, int>, is_same<float, int>>::value;
}
kernel void argmax(const device float* x [[buffer(0)]], device uint* out [[buffer(1)]], constant uint& n [[buffer(2)]],
                   uint i [[thread_position_in_grid]]) {
    indexed<float> best = numeric_limits<indexed<float>>::lowest();
    for (uint j = 0; j < n; j++) if (x[j] > best.v) best = indexed<float>{j, x[j]};
    out[i] = best.i;
}
"""


def test_internal_library_names(dev):
    lib = pm.compile(INTERNALS_SRC)
    o = np.zeros(11, np.float32)
    lib.function("traits")(o, grid=1)
    np.testing.assert_array_equal(o, [1, 1, 0, -1, 1, 1, 0, 1, np.finfo(np.float32).max, -65504, 0])


@pytest.mark.parametrize("n", [1, 7, 100])
def test_internal_numeric_limits_argmax(dev, rng, n):
    lib = pm.compile(INTERNALS_SRC)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.uint32)
    lib.function("argmax")(x, out, np.uint32(n), grid=1)
    assert out[0] == np.argmax(x)


# ---------------------------------------------------------------------------
# F. `forward` is no name of namespace metal (MLX's rope.metal)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("forward", [False, True])
def test_forward_function_constant(dev, forward):
    lib = pm.compile(HEADER + r"""
constant bool forward [[function_constant(1)]];
kernel void k(device float* o, uint i [[thread_position_in_grid]]) { if (forward) o[i] = 1; }
kernel void rope(const device float2* x [[buffer(0)]], device float2* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    float theta = 0.5f * float(i);
    float c = metal::precise::cos(theta), s = metal::precise::sin(theta);
    float2 v = x[i];
    y[i] = forward ? float2(v.x * c - v.y * s, v.x * s + v.y * c) : float2(v.x * c + v.y * s, -v.x * s + v.y * c);
}
""")
    o = np.zeros(33, np.float32)
    lib.function("k", constants={"forward": forward})(o, grid=33)
    np.testing.assert_array_equal(o, np.full(33, float(forward), np.float32))
    x = np.random.default_rng(1).standard_normal((33, 2)).astype(np.float32)
    y = np.zeros_like(x)
    lib.function("rope", constants={1: forward})(x, y, grid=33)
    t = 0.5 * np.arange(33)
    z = (x[:, 0] + 1j * x[:, 1]) * np.exp((1j if forward else -1j) * t)
    np.testing.assert_allclose(y, np.stack([z.real, z.imag], 1), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# N. MAXHALF; O. no __HAVE_SIMDGROUP_FUTURE__ without <metal_simdgroup_future>
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
def test_maxhalf(dev, n):
    lib = pm.compile(HEADER + r"""
kernel void k(device half* o, uint i [[thread_position_in_grid]]) { o[i] = -MAXHALF; }
// ggml's flash-attention mask padding: -MAXHALF where the mask is off, else the score
kernel void pad(const device half* s [[buffer(0)]], const device uchar* m [[buffer(1)]], device half* o [[buffer(2)]],
                uint i [[thread_position_in_grid]]) { o[i] = m[i] ? s[i] : -MAXHALF; }
""")
    o = np.zeros(n, np.float16)
    lib.function("k")(o, grid=n)
    np.testing.assert_array_equal(o, np.full(n, -np.finfo(np.float16).max, np.float16))
    s = np.random.default_rng(n).standard_normal(n).astype(np.float16)
    m = (np.arange(n) % 3 == 0).astype(np.uint8)
    lib.function("pad")(s, m, o, grid=n)
    np.testing.assert_array_equal(o, np.where(m, s, np.float16(-65504)))


def test_simdgroup_future_not_advertised(dev):
    lib = pm.compile(HEADER + r"""
#if defined(__HAVE_SIMDGROUP_FUTURE__)
#include <metal_simdgroup_future>
#endif
kernel void k(device float* o, uint i [[thread_position_in_grid]]) {
#if defined(__HAVE_SIMDGROUP_FUTURE__)
    o[i] = 2;
#else
    o[i] = 1;
#endif
}
""")
    o = np.zeros(5, np.float32)
    lib.function("k")(o, grid=5)
    np.testing.assert_array_equal(o, np.ones(5, np.float32))


# ---------------------------------------------------------------------------
# K. simdgroup_matrix products written as a * b; Q. make_filled_simdgroup_matrix<T, 8>
# ---------------------------------------------------------------------------

SGM_SRC = HEADER + r"""
kernel void k(device float* o, uint i [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 a, b; simdgroup_load(a, o, 8); simdgroup_load(b, o, 8); simdgroup_float8x8 c = a * b; simdgroup_store(c, o, 8); }

// MLX's Winograd idiom: (G * g) * Gt, one 8x8 tile per simdgroup
template <typename T>
kernel void winograd(const device T* G [[buffer(0)]], const device T* g [[buffer(1)]], const device T* Gt [[buffer(2)]],
                     device T* out [[buffer(3)]], uint tg [[threadgroup_position_in_grid]],
                     ushort sg [[simdgroup_index_in_threadgroup]]) {
    const uint tile = tg * 2 + sg;
    simdgroup_matrix<T, 8, 8> mG, mg, mGt;
    simdgroup_load(mG, G);
    simdgroup_load(mg, g + tile * 64);
    simdgroup_load(mGt, Gt);
    simdgroup_matrix<T, 8, 8> r = (mG * mg) * mGt;
    simdgroup_store(r, out + tile * 64);
}
template [[host_name("winograd_f32")]] [[kernel]] decltype(winograd<float>) winograd<float>;
template [[host_name("winograd_f16")]] [[kernel]] decltype(winograd<half>) winograd<half>;

template <typename T> void f(device T* o) { simdgroup_matrix<T, 8, 8> m = make_filled_simdgroup_matrix<T, 8>((T) 0.0f); simdgroup_store(m, o, 8); }
kernel void q(device float* o, uint i [[thread_index_in_simdgroup]]) { f<float>(o); }
// ggml's idiom: a filled accumulator of a template type, plus a product
template <typename qk_t>
kernel void filled(const device qk_t* a [[buffer(0)]], device qk_t* o [[buffer(1)]], ushort lane [[thread_index_in_simdgroup]]) {
    simdgroup_matrix<qk_t, 8, 8> acc = make_filled_simdgroup_matrix<qk_t, 8>((qk_t) 2.0f);
    simdgroup_matrix<qk_t, 8, 8> x;
    simdgroup_load(x, a);
    simdgroup_multiply_accumulate(acc, x, x, acc);
    simdgroup_store(acc, o);
}
template [[host_name("filled_f32")]] [[kernel]] decltype(filled<float>) filled<float>;
template [[host_name("filled_f16")]] [[kernel]] decltype(filled<half>) filled<half>;
"""


@pytest.fixture(scope="module")
def sgm_lib(dev):
    return pm.compile(SGM_SRC)


def test_simdgroup_matrix_operator(sgm_lib, rng):
    a = rng.standard_normal((8, 8)).astype(np.float32)
    o = a.copy()
    sgm_lib.function("k")(o, groups=1, threadgroup=32)
    np.testing.assert_allclose(o, a @ a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("groups", [1, 3])
def test_simdgroup_matrix_operator_chain(sgm_lib, rng, dtype, groups):
    G, Gt = (rng.standard_normal((8, 8)) / 3).astype(dtype), (rng.standard_normal((8, 8)) / 3).astype(dtype)
    g = (rng.standard_normal((groups * 2, 8, 8)) / 3).astype(dtype)
    out = np.zeros_like(g)
    name = "winograd_f32" if dtype == np.float32 else "winograd_f16"
    sgm_lib.function(name)(G, g, Gt, out, groups=groups, threadgroup=64)
    inner = (G.astype(np.float32) @ g.astype(np.float32)).astype(dtype)  # the first product is stored as T
    ref = inner.astype(np.float32) @ Gt.astype(np.float32)
    tol = 1e-5 if dtype == np.float32 else 1e-2
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_make_filled_with_template_type(sgm_lib, rng, dtype):
    o = np.ones(64, np.float32)
    sgm_lib.function("q")(o, groups=1, threadgroup=32)
    np.testing.assert_array_equal(o, np.zeros(64, np.float32))
    a = (rng.standard_normal((8, 8)) / 2).astype(dtype)
    out = np.zeros_like(a)
    sgm_lib.function("filled_f32" if dtype == np.float32 else "filled_f16")(a, out, groups=1, threadgroup=32)
    ref = a.astype(np.float32) @ a.astype(np.float32) + 2
    tol = 1e-5 if dtype == np.float32 else 1e-2
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# C. Vector conversions written as casts; D. vectors built through an alias or vec<T, N>;
# M. static_cast between half and bfloat
# ---------------------------------------------------------------------------

CAST_SRC = HEADER + r"""
kernel void k(device const half4* a, device float4* o, uint i [[thread_position_in_grid]]) { o[i] = (float4) a[i]; }
template <typename TC, typename T> kernel void kt(device const T* a, device TC* o, uint i [[thread_position_in_grid]]) { o[i] = TC(a[i]); }
template [[host_name("k2")]] kernel void kt<float4, half4>(device const half4*, device float4*, uint);
template [[host_name("k2i")]] kernel void kt<int4, float4>(device const float4*, device int4*, uint);
kernel void k3(device const half4* a, device float4* o, uint i [[thread_position_in_grid]]) { o[i] = static_cast<float4>(a[i]); }
// same size: a conversion too, not a bit cast
kernel void k4(device const float4* a, device int4* o, uint i [[thread_position_in_grid]]) { o[i] = (int4) a[i] + (int4) (half4) a[i]; }
// a scalar cast to a vector fills it; casts inside an expression bind to their operand only
kernel void k5(device const float* a, device float4* o, uint i [[thread_position_in_grid]]) {
    o[i] = (float4) a[i] * 2.0f + (float4) -a[i];
}

// the operand of a cast may be a template's call; a comparison stays outside the cast
template <typename T> METAL_FUNC T load_at(device const T* p, uint i) { return p[i]; }
kernel void k6(device const half4* a, device float4* o, uint i [[thread_position_in_grid]]) {
    o[i] = (float4) load_at<half4>(a, i) + (float4) a[i].x * (float) ((float) i < 2.0f);
}

kernel void d(device float2* o, uint i [[thread_position_in_grid]]) { using c_T = vec<float, 2>; o[i] = c_T(o[i].x, -o[i].y); }
template <typename IdxT> kernel void dv(device IdxT* o, uint i [[thread_position_in_grid]]) {
    vec<IdxT, 2> p = vec<IdxT, 2>(IdxT(i), IdxT(2 * i));
    o[2 * i] = p.x; o[2 * i + 1] = p.y;
}
template [[host_name("dv_int")]] kernel void dv<int>(device int*, uint);

kernel void m(device const half* a, device bfloat* o, uint i [[thread_position_in_grid]]) { o[i] = static_cast<bfloat>(a[i]); }
kernel void m2(device const bfloat* a, device half* o, uint i [[thread_position_in_grid]]) { o[i] = static_cast<half>(a[i]); }

// ggml's kernel_unary_impl idiom: an f16 op computed in float through template vector types
template <typename T, typename TC> kernel void unary_gelu(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                                                         uint i [[thread_position_in_grid]]) {
    const TC x = (TC) src[i];
    const TC y = 0.5f * x * (1.0f + precise::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    dst[i] = (T) y;
}
template [[host_name("gelu_f16_4")]] kernel void unary_gelu<half4, float4>(device const half4*, device half4*, uint);
template [[host_name("gelu_f32")]] kernel void unary_gelu<float, float>(device const float*, device float*, uint);

// MLX's fft idiom: complex values as an alias of vec<T, 2>, multiplied through the alias
template <typename T> struct cplx { using c_T = vec<T, 2>;
    static METAL_FUNC c_T mul(c_T a, c_T b) { return c_T(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); } };
kernel void cmul(device const float2* a, device const float2* b, device float2* o, uint i [[thread_position_in_grid]]) {
    o[i] = cplx<float>::mul(a[i], b[i]);
}
"""


@pytest.fixture(scope="module")
def cast_lib(dev):
    return pm.compile(CAST_SRC)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["k", "k2", "k3"])
def test_vector_casts_convert(cast_lib, rng, n, name):
    a = (rng.standard_normal((n, 4)) * 100).astype(np.float16)
    o = np.zeros((n, 4), np.float32)
    cast_lib.function(name)(a, o, grid=n)
    np.testing.assert_array_equal(o, a.astype(np.float32))


@pytest.mark.parametrize("n", SIZES)
def test_same_size_vector_casts_convert(cast_lib, rng, n):
    a = (rng.standard_normal((n, 4)) * 100).astype(np.float32)
    o = np.zeros((n, 4), np.int32)
    cast_lib.function("k4")(a, o, grid=n)
    np.testing.assert_array_equal(o, a.astype(np.int32) + a.astype(np.float16).astype(np.int32))
    cast_lib.function("k2i")(a, o, grid=n)
    np.testing.assert_array_equal(o, a.astype(np.int32))


@pytest.mark.parametrize("n", SIZES)
def test_cast_of_template_call(cast_lib, rng, n):
    a = (rng.standard_normal((n, 4)) * 10).astype(np.float16)
    o = np.zeros((n, 4), np.float32)
    cast_lib.function("k6")(a, o, grid=n)
    f = a.astype(np.float32)
    np.testing.assert_array_equal(o, f + f[:, :1] * (np.arange(n) < 2)[:, None])


@pytest.mark.parametrize("n", SIZES)
def test_scalar_cast_to_vector(cast_lib, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    o = np.zeros((n, 4), np.float32)
    cast_lib.function("k5")(a, o, grid=n)
    np.testing.assert_array_equal(o, np.repeat((a * 2 - a)[:, None], 4, 1))


@pytest.mark.parametrize("n", SIZES)
def test_vector_alias_construction(cast_lib, rng, n):
    o = rng.standard_normal((n, 2)).astype(np.float32)
    ref = o * [1, -1]
    cast_lib.function("d")(o, grid=n)
    np.testing.assert_array_equal(o, ref)
    v = np.zeros(2 * n, np.int32)
    cast_lib.function("dv_int")(v, grid=n)
    np.testing.assert_array_equal(v, np.stack([np.arange(n), 2 * np.arange(n)], 1).ravel())
    a, b = rng.standard_normal((n, 2)).astype(np.float32), rng.standard_normal((n, 2)).astype(np.float32)
    cast_lib.function("cmul")(a, b, o, grid=n)
    z = (a[:, 0] + 1j * a[:, 1]) * (b[:, 0] + 1j * b[:, 1])
    np.testing.assert_allclose(o, np.stack([z.real, z.imag], 1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", SIZES)
def test_half_bfloat_static_cast(cast_lib, rng, n):
    a = (rng.standard_normal(n) * 1000).astype(np.float16)
    o = np.zeros(n, pm.bfloat16)
    cast_lib.function("m")(a, o.view(np.uint16), grid=n)  # NumPy binds bfloat16 through its bits
    np.testing.assert_array_equal(o.astype(np.float32), a.astype(np.float32).astype(pm.bfloat16).astype(np.float32))
    back = np.zeros(n, np.float16)
    cast_lib.function("m2")(o.view(np.uint16), back, grid=n)
    np.testing.assert_array_equal(back, o.astype(np.float32).astype(np.float16))


@pytest.mark.parametrize("n", SIZES)
def test_unary_through_template_vector_casts(cast_lib, rng, n):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    ref = 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    y = np.zeros_like(x)
    cast_lib.function("gelu_f32")(x.ravel(), y.ravel(), grid=4 * n)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    h, yh = x.astype(np.float16), np.zeros((n, 4), np.float16)
    cast_lib.function("gelu_f16_4")(h, yh, grid=n)
    href = 0.5 * h.astype(np.float32) * (1 + np.tanh(0.7978845608 * (h.astype(np.float32) + 0.044715 * h.astype(np.float32) ** 3)))
    np.testing.assert_allclose(yh.astype(np.float32), href.astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("groups", [1, 3])
def test_vector_cast_in_lockstep_kernel(dev, rng, groups):
    # a kernel with SIMD-group calls runs statement by statement (Lockstep.swift): the rewritten
    # casts must stay whole in its copies of each statement
    lib = pm.compile(HEADER + r"""
kernel void ls(device const half4* a, device float* o, uint i [[thread_position_in_grid]]) {
    float4 v = (float4) a[i] * 2.0f;
    float s = simd_sum(v.x + v.y + (float) (half) v.z + static_cast<float4>(a[i]).w);
    o[i] = s + ((int4) v).x;
}
""")
    n = groups * 64
    a = rng.standard_normal((n, 4)).astype(np.float16)
    o = np.zeros(n, np.float32)
    lib.function("ls")(a, o, groups=groups, threadgroup=64)
    f = a.astype(np.float32)
    per = 2 * f[:, 0] + 2 * f[:, 1] + (2 * f[:, 2]).astype(np.float16).astype(np.float32) + f[:, 3]
    sums = np.repeat(per.reshape(-1, 32).sum(1), 32)
    np.testing.assert_allclose(o, sums + np.trunc(2 * f[:, 0]), rtol=1e-5, atol=1e-4)


# ---------------------------------------------------------------------------
# J. METAL_FUNC members with constant T& parameters; I. address-space-qualified defaulted
# constructors; L. instantiations whose template arguments hold casts; P. #pragma unroll (MACRO(...))
# ---------------------------------------------------------------------------

MEMBERS_SRC = HEADER + r"""
struct ix { METAL_FUNC uint g(uint i, constant size_t& n) { return i + n; } };
kernel void j(constant size_t& n, device float* o, uint i [[thread_position_in_grid]]) { ix f; o[i] = f.g(i, n); }

// candle's strided indexer idiom
struct strided_indexer {
    constant const size_t* dims; constant const size_t* strides;
    METAL_FUNC uint index(uint i, constant size_t& ndim) const {
        uint loc = 0;
        for (uint d = ndim; d-- > 0;) { loc += (i % dims[d]) * strides[d]; i /= dims[d]; }
        return loc;
    }
};
kernel void strided_copy(constant size_t& ndim [[buffer(0)]], constant size_t* dims [[buffer(1)]],
                         constant size_t* strides [[buffer(2)]], device const float* x [[buffer(3)]],
                         device float* y [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    strided_indexer ix{dims, strides};
    y[i] = x[ix.index(i, ndim)];
}

template <typename T> struct MD { T m; float d; constexpr MD<T>() = default; constexpr MD<T>() threadgroup = default; };
kernel void md(device float* o, uint i [[thread_position_in_grid]]) { MD<float> a; a.m = 1; o[i] = a.m; }
// candle's online-softmax pair, kept in threadgroup memory and in registers
template <typename T> struct MD2 {
    T m; float d;
    constexpr MD2<T>() = default;
    constexpr MD2<T>() threadgroup = default;
    constexpr MD2<T>(T m_, float d_) : m(m_), d(d_) {}
};
template <typename T> METAL_FUNC MD2<T> md_combine(MD2<T> a, MD2<T> b) {
    T m = max(a.m, b.m);
    return MD2<T>(m, a.d * exp(float(a.m - m)) + b.d * exp(float(b.m - m)));
}
kernel void softmax_denominator(device const float* x [[buffer(0)]], device float2* out [[buffer(1)]],
                                constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    threadgroup MD2<float> shared[1];
    MD2<float> acc(-INFINITY, 0.0f);
    for (uint k = 0; k < n; k++) acc = md_combine(acc, MD2<float>(x[k], 1.0f));
    if (i == 0) shared[0] = acc;
    out[i] = float2(acc.m, acc.d);
}

template <typename T, bool B> kernel void kt(device T* o, uint i [[thread_position_in_grid]]) { o[i] = B; }
template [[host_name("l")]] [[kernel]] decltype(kt<float, (bool)1>) kt<float, (bool)1>;
template [[host_name("l0")]] [[kernel]] decltype(kt<float, (bool)0>) kt<float, (bool)0>;

#define MIN(x, y) ((x) < (y) ? (x) : (y))
template <short N> void f(device float* o, uint i) {
  #pragma unroll (MIN(N/2, 4))
  for (short j = 0; j < N; ++j) o[i] += j; }
kernel void p(device float* o, uint i [[thread_position_in_grid]]) { f<8>(o, i); }
"""


@pytest.fixture(scope="module")
def members_lib(dev):
    return pm.compile(MEMBERS_SRC)


@pytest.mark.parametrize("n", SIZES)
def test_metal_func_member_constant_reference(members_lib, n):
    o = np.zeros(n, np.float32)
    members_lib.function("j")(np.uint64(3), o, grid=n)
    np.testing.assert_array_equal(o, np.arange(n, dtype=np.float32) + 3)


@pytest.mark.parametrize("shape,axes", [((1,), (0,)), ((3, 5), (1, 0)), ((2, 3, 7), (2, 0, 1))])
def test_strided_indexer_members(members_lib, rng, shape, axes):
    x = rng.standard_normal(shape).astype(np.float32)
    view = x.transpose(axes)
    strides = np.array([s // 4 for s in view.strides], np.uint64)
    y = np.zeros(view.size, np.float32)
    members_lib.function("strided_copy")(np.uint64(view.ndim), np.array(view.shape, np.uint64), strides, x, y,
                                          grid=view.size)
    np.testing.assert_array_equal(y, view.ravel())


@pytest.mark.parametrize("n", [1, 9, 200])
def test_address_space_defaulted_constructor(members_lib, rng, n):
    o = np.zeros(n, np.float32)
    members_lib.function("md")(o, grid=n)
    np.testing.assert_array_equal(o, np.ones(n, np.float32))
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros((3, 2), np.float32)
    members_lib.function("softmax_denominator")(x, out, np.uint32(n), grid=3)
    np.testing.assert_allclose(out[:, 0], x.max())
    np.testing.assert_allclose(out[:, 1], np.exp(x - x.max()).sum(), rtol=1e-5)


@pytest.mark.parametrize("name,value", [("l", 1), ("l0", 0)])
def test_instantiation_with_cast_arguments(members_lib, name, value):
    o = np.full(17, 7, np.float32)
    members_lib.function(name)(o, grid=17)
    np.testing.assert_array_equal(o, np.full(17, value, np.float32))


@pytest.mark.parametrize("n", SIZES)
def test_pragma_unroll_with_macro(members_lib, n):
    o = np.zeros(n, np.float32)
    members_lib.function("p")(o, grid=n)
    np.testing.assert_array_equal(o, np.full(n, 28, np.float32))


# ---------------------------------------------------------------------------
# G. An initializer on a threadgroup array; E. a braced list as a vector argument
# ---------------------------------------------------------------------------

TG_INIT_SRC = HEADER + r"""
kernel void k(device float* o, uint i [[thread_position_in_grid]]) { threadgroup float b[32] = {0}; b[i % 32] += 1; o[i] = b[0]; }

// MLX's layer_norm idiom: the initialised declaration, then the kernel's own initialisation behind a
// barrier, simdgroup partial sums, and the total read by every thread
kernel void row_sum(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint gid [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
                    uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                    uint n [[threads_per_threadgroup]]) {
    threadgroup float local_buffer[32] = {0};
    threadgroup float total = 0, count = 0;
    if (sg == 0) local_buffer[lane] = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = simd_sum(x[gid * n + lid]);
    if (lane == 0) local_buffer[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) { total = 0; for (uint j = 0; j < 32; j++) total += local_buffer[j]; count = n; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid * n + lid] = total / count;
}
"""


@pytest.mark.parametrize("groups,width", [(1, 32), (3, 64), (2, 1024)])
def test_threadgroup_array_initializer(dev, rng, groups, width):
    lib = pm.compile(TG_INIT_SRC)
    lib.function("k")(np.zeros(width, np.float32), groups=1, threadgroup=width)  # compiles and runs
    x = rng.standard_normal((groups, width)).astype(np.float32)
    out = np.zeros_like(x)
    lib.function("row_sum")(x, out, groups=groups, threadgroup=width)
    np.testing.assert_allclose(out, np.repeat(x.mean(1, keepdims=True), width, 1), rtol=1e-5, atol=1e-6)


BRACED_SRC = HEADER + r"""
METAL_FUNC uint g(uint3 e) { return e.x + e.y + e.z; }
kernel void k(device uint* o, uint3 i [[thread_position_in_grid]]) { o[i.x] = g({2 * i.x, i.y, i.z}); }

// MLX's binary_two idiom: a location from a braced position and strides
template <typename IdxT>
METAL_FUNC IdxT elem_to_loc_2(uint3 elem, constant const int* shape, constant const int64_t* strides) {
    return IdxT(elem.x) * IdxT(strides[1]) + IdxT(elem.y) * IdxT(strides[0]) + IdxT(elem.z) * IdxT(shape[0] * 0);
}
struct Pair { float a; int b; };
METAL_FUNC float pick(Pair p, float2 q) { return p.a * float(p.b) + q.x - q.y; }
kernel void strided2(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                     constant const int* shape [[buffer(2)]], constant const int64_t* strides [[buffer(3)]],
                     uint2 index [[thread_position_in_grid]], uint2 grid [[threads_per_grid]]) {
    const uint N = 2;
    for (uint k = 0; k < N; k++) {
        auto loc = elem_to_loc_2<int64_t>({N * index.x + k, index.y, 0}, shape, strides);
        y[index.y * grid.x * N + N * index.x + k] = x[loc] + pick({0.5f, 2}, {1.0f, float(k)});
    }
}
"""


@pytest.mark.parametrize("n", SIZES)
def test_braced_list_vector_argument(dev, n):
    lib = pm.compile(BRACED_SRC)
    o = np.zeros(n, np.uint32)
    lib.function("k")(o, grid=(n, 1, 1))
    np.testing.assert_array_equal(o, 2 * np.arange(n))


@pytest.mark.parametrize("rows,cols", [(1, 2), (3, 8), (5, 34)])
def test_braced_list_mlx_binary_idiom(dev, rng, rows, cols):
    lib = pm.compile(BRACED_SRC)
    base = rng.standard_normal((cols, rows)).astype(np.float32)
    x = base.T  # a transposed view: element (r, c) at c * rows + r
    y = np.zeros((rows, cols), np.float32)
    strides = np.array([1, rows], np.int64)  # row stride, column stride of x in elements
    lib.function("strided2")(base, y, np.array([rows, cols], np.int32), strides, grid=(cols // 2, rows))
    extra = 0.5 * 2 + 1.0 - (np.arange(cols) % 2)
    np.testing.assert_array_equal(y, x + extra[None, :].astype(np.float32))
