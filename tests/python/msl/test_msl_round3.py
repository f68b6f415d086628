"""Real-world MSL, round 3 (issue 26, item 1, against today's MLX, candle and ggml kernel files):
the language features those files use that pymetal still refused after round 2. Each snippet is
our own, written in the projects' idioms; it is compiled, run, and checked against NumPy.
"""

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"
SIZES = [1, 7, 32, 33, 1000]


@pytest.fixture
def rng():
    return np.random.default_rng(263)


# ---------------------------------------------------------------------------
# metal::remove_addrspace_t (MLX's steel/utils/integral_constant.h)
# ---------------------------------------------------------------------------

ADDRSPACE_SRC = HEADER + r"""
template <int v> using Int = integral_constant<int, v>;
// compile-time arithmetic on integral constants: the constexpr result's type, without address space
template <typename T, T tv, typename U, U uv>
METAL_FUNC constexpr auto operator*(integral_constant<T, tv>, integral_constant<U, uv>) {
    constexpr auto res = tv * uv;
    using res_t = metal::remove_addrspace_t<decltype(res)>;
    return integral_constant<res_t, res>{};
}
static_assert(is_same_v<remove_addrspace_t<const device float>, const float>, "cv-qualifiers stay");
static_assert(is_same_v<remove_addrspace<threadgroup int>::type, int>, "the struct form");
kernel void scale(const device float* x [[buffer(0)]], device float* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    constexpr auto k = Int<3>{} * Int<5>{};
    y[i] = x[i] * decltype(k)::value;
}
"""


@pytest.mark.parametrize("n", SIZES)
def test_remove_addrspace(dev, rng, n):
    lib = pm.compile(ADDRSPACE_SRC)
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    lib.function("scale")(x, y, grid=n)
    np.testing.assert_array_equal(y, x * 15)


# ---------------------------------------------------------------------------
# uniform<T> / make_uniform (MLX's gemv.h)
# ---------------------------------------------------------------------------

UNIFORM_SRC = HEADER + r"""
static_assert(is_same_v<decltype(make_uniform(3)), uniform<int>>, "make_uniform makes a uniform");
static_assert(is_same_v<decltype(make_uniform(3) * make_uniform(2)), uniform<int>>, "uniform op uniform is uniform");
static_assert(is_same_v<decltype(make_uniform(3) * 2), int>, "uniform op T is a T");
static_assert(!is_convertible_v<int, uniform<int>>, "a T becomes uniform only through make_uniform");
// one row of y = A x per thread, in blocks of BN with a leftover loop, trip counts held uniform
template <typename T, int BN>
kernel void gemv(const device T* A [[buffer(0)]], const device T* x [[buffer(1)]], device float* y [[buffer(2)]],
                 constant int& in_size_ [[buffer(3)]], uint row [[thread_position_in_grid]]) {
    constexpr const uniform<int> loop_stride = make_uniform(BN);
    const uniform<int> in_size = make_uniform(in_size_);
    const uniform<int> n_iter = in_size / loop_stride;
    const uniform<int> last_iter = loop_stride * n_iter;
    const uniform<int> leftover = in_size - last_iter;
    float acc = 0;
    for (int i = 0; i < n_iter; ++i)
        for (int j = 0; j < BN; j++) acc += float(A[row * in_size + i * BN + j]) * float(x[i * BN + j]);
    if (leftover > 0)
        for (int j = 0; j < leftover; j++) acc += float(A[row * in_size + last_iter + j]) * float(x[last_iter + j]);
    y[row] = acc;
}
template [[host_name("gemv_f32")]] kernel void gemv<float, 4>(const device float*, const device float*, device float*,
                                                              constant int&, uint);
template [[host_name("gemv_f16")]] kernel void gemv<half, 8>(const device half*, const device half*, device float*,
                                                             constant int&, uint);
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 7), (5, 8), (17, 33)])
def test_uniform_gemv(dev, rng, dtype, rows, cols):
    lib = pm.compile(UNIFORM_SRC)
    a = rng.standard_normal((rows, cols)).astype(dtype)
    x = rng.standard_normal(cols).astype(dtype)
    y = np.zeros(rows, np.float32)
    lib.function("gemv_f32" if dtype == np.float32 else "gemv_f16")(a, x, y, np.int32(cols), grid=rows)
    np.testing.assert_allclose(y, a.astype(np.float64) @ x.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_uniform_header(dev):
    lib = pm.compile("#include <metal_uniform>\nkernel void k(device int* o, uint i [[thread_position_in_grid]]) {"
                     " metal::uniform<int> u = metal::make_uniform(int(i) + 2); o[i] = -u + (u << make_uniform(1)); }")
    o = np.zeros(9, np.int32)
    lib.function("k")(o, grid=9)
    np.testing.assert_array_equal(o, np.arange(9) + 2)


# ---------------------------------------------------------------------------
# coherent(device) / coherent(system) (MLX's fence.metal)
# ---------------------------------------------------------------------------

COHERENT_SRC = HEADER + r"""
kernel void publish(volatile coherent(system) device uint* flags [[buffer(0)]], constant uint& value [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    flags[i] = value + i;
    atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);
}
kernel void copy(coherent(device) device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) { y[i] = x[i] * 2; }
"""


@pytest.mark.parametrize("n", SIZES)
def test_coherent_qualifier(dev, rng, n):
    lib = pm.compile(COHERENT_SRC)
    flags = np.zeros(n, np.uint32)
    lib.function("publish")(flags, np.uint32(40), grid=n)
    np.testing.assert_array_equal(flags, 40 + np.arange(n))
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    fn = lib.function("copy")
    assert not fn.arguments[0].writable
    fn(x, y, grid=n)
    np.testing.assert_array_equal(y, 2 * x)


# ---------------------------------------------------------------------------
# Direct-initialisation of a vector, `short2 offset(a, b);` (MLX's reduce_col.h, steel_conv.h)
# ---------------------------------------------------------------------------

DIRECT_INIT_SRC = HEADER + r"""
float4 scaled(float4 v, float s);          // prototypes at namespace and class scope stay prototypes
struct Pos { int2 at(int k) const; int2 p; };
int2 Pos::at(int k) const { return p * k; }
kernel void k(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float2 half_of(float a, float b);      // and in a block
    short lid = short(i);
    const short n_blocks = 3, n_reads = 4;
    short2 offset((lid % n_blocks) * n_reads, lid / n_blocks);
    const int2 a(0, lid), b(7, 8);
    float2 h(half2(1.5h, 2.5h));
    uint3 u(offset.x, uint2(a.y, 1));
    Pos q{int2(1, 2)};
    float2 f = half_of(2, 6);
    o[4 * i + 0] = offset.x + 10 * offset.y;
    o[4 * i + 1] = 100 * a.y + b.x * b.y;
    o[4 * i + 2] = int(h.y * 10) + int(scaled(float4(1), 3).w) + q.at(3).y;
    o[4 * i + 3] = int(u.x + u.y + u.z) + int(f.x + f.y);
}
float4 scaled(float4 v, float s) { return v * s; }
float2 half_of(float a, float b) { return float2(a, b) / 2; }
"""


@pytest.mark.parametrize("n", SIZES)
def test_vector_direct_initialisation(dev, n):
    lib = pm.compile(DIRECT_INIT_SRC)
    o = np.zeros((n, 4), np.int32)
    lib.function("k")(o, grid=n)
    i = np.arange(n)
    off = np.stack([(i % 3) * 4, i // 3], 1)
    ref = np.stack([off[:, 0] + 10 * off[:, 1], 100 * i + 56, np.full(n, 25 + 3 + 6),
                    off[:, 0] + i + 1 + 4], 1)
    np.testing.assert_array_equal(o, ref)


# ---------------------------------------------------------------------------
# Explicit instantiations that name no template arguments (MLX's conv.metal)
# ---------------------------------------------------------------------------

DEDUCED_SRC = HEADER + r"""
template <int N> struct Params { int n; int stride[N]; };
// gather every stride-th element: the instantiations below deduce T and N from their parameter types
template <typename T, int N>
[[kernel]] void unfold(const device T* in [[buffer(0)]], device T* out [[buffer(1)]],
                       const constant Params<N>* p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (int(i) < p->n) out[i] = in[i * p->stride[N - 1]];
}
#define instantiate_unfold(name, itype, n)                                                        \
    template [[host_name("unfold_" #name "_" #n)]] [[kernel]] void unfold(                          \
        const device itype* in [[buffer(0)]], device itype* out [[buffer(1)]],                    \
        const constant Params<n>* p [[buffer(2)]], uint i [[thread_position_in_grid]]);
instantiate_unfold(float32, float, 1)
instantiate_unfold(float32, float, 2)
instantiate_unfold(float16, half, 2)
instantiate_unfold(int32, int, 3)
"""


@pytest.mark.parametrize("name,dtype,dims", [("float32", np.float32, 1), ("float32", np.float32, 2),
                                             ("float16", np.float16, 2), ("int32", np.int32, 3)])
@pytest.mark.parametrize("n", [1, 7, 33])
def test_deduced_instantiation(dev, rng, name, dtype, dims, n):
    lib = pm.compile(DEDUCED_SRC)
    stride = 3
    x = (rng.standard_normal(n * stride) * 100).astype(dtype)
    y = np.zeros(n, dtype)
    params = np.array([n] + [0] * (dims - 1) + [stride], np.int32)
    fn = lib.function("unfold_%s_%d" % (name, dims))
    assert [a.index for a in fn.arguments] == [0, 1, 2]
    fn(x, y, params, grid=n)
    np.testing.assert_array_equal(y, x[::stride])


# ---------------------------------------------------------------------------
# Kernel templates overloaded on their template parameters (MLX's steel_gemm_masked.h)
# ---------------------------------------------------------------------------

OVERLOAD_SRC = HEADER + r"""
struct nomask_t {};
template <typename T, typename mask_t, int WM, bool scale>
[[kernel, max_total_threads_per_threadgroup(WM * 32)]] void masked(
        const device T* x [[buffer(0)]], device T* y [[buffer(1)]], const device mask_t* m [[buffer(2)]],
        uint i [[thread_position_in_grid]]) {
    y[i] = m[i] ? x[i] * (scale ? 2 : 1) : T(0);
}
template <typename T, int WM, bool scale, bool has_mask = false>
[[kernel, max_total_threads_per_threadgroup(WM * 64)]] void masked(
        const device T* x [[buffer(0)]], device T* y [[buffer(1)]], const device bool* m [[buffer(2)]],
        uint i [[thread_position_in_grid]]) {
    y[i] = (!has_mask || m[i]) ? x[i] + (scale ? 10 : 0) : T(-1);
}
template [[host_name("by_mask_type")]] [[kernel]] decltype(masked<float, uchar, 2, true>) masked<float, uchar, 2, true>;
template [[host_name("by_count")]] [[kernel]] decltype(masked<float, 4, true, true>) masked<float, 4, true, true>;
template [[host_name("by_default")]] [[kernel]] decltype(masked<float, 1, false>) masked<float, 1, false>;
"""


@pytest.mark.parametrize("n", SIZES)
def test_overloaded_kernel_templates(dev, rng, n):
    lib = pm.compile(OVERLOAD_SRC)
    x = rng.standard_normal(n).astype(np.float32)
    m = (rng.random(n) < 0.5)
    y = np.zeros_like(x)
    fn = lib.function("by_mask_type")
    assert fn.max_threads_per_threadgroup == 64
    fn(x, y, m.astype(np.uint8), grid=n)
    np.testing.assert_array_equal(y, np.where(m, 2 * x, 0))
    fn = lib.function("by_count")
    assert fn.max_threads_per_threadgroup == 256
    fn(x, y, m, grid=n)
    np.testing.assert_array_equal(y, np.where(m, x + 10, -1))
    fn = lib.function("by_default")
    assert fn.max_threads_per_threadgroup == 64
    fn(x, y, m, grid=n)
    np.testing.assert_array_equal(y, x)


# ---------------------------------------------------------------------------
# A threadgroup array bounded by `a == 0 ? 1 : k::n` (candle's and MLX's gemv)
# ---------------------------------------------------------------------------

TG_BOUND_SRC = HEADER + r"""
template <typename T, int N> struct Kern { typedef T acc_type; static constexpr int tgp_mem_size = N; };
template <typename T, int N>
kernel void k(const device T* x [[buffer(0)]], device T* o [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    using kernel_t = Kern<T, N>;
    threadgroup typename kernel_t::acc_type tgp_memory[kernel_t::tgp_mem_size == 0 ? 1 : kernel_t::tgp_mem_size];
    constexpr uint size = sizeof(tgp_memory) / sizeof(T);
    if (l < size) tgp_memory[l] = x[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    o[i] = tgp_memory[l % size] + T(size * 1000);
}
template [[host_name("k0")]] kernel void k<float, 0>(const device float*, device float*, uint, uint);
template [[host_name("k4")]] kernel void k<float, 4>(const device float*, device float*, uint, uint);
"""


@pytest.mark.parametrize("name,size", [("k0", 1), ("k4", 4)])
@pytest.mark.parametrize("groups,width", [(1, 4), (3, 8), (2, 32)])
def test_threadgroup_bound_with_conditional(dev, rng, name, size, groups, width):
    lib = pm.compile(TG_BOUND_SRC)
    x = rng.integers(-50, 50, (groups, width)).astype(np.float32)
    o = np.zeros_like(x)
    lib.function(name)(x, o, groups=groups, threadgroup=width)
    np.testing.assert_array_equal(o, x[:, np.arange(width) % size] + size * 1000)


# ---------------------------------------------------------------------------
# function_constant(c) with c a bool derived from function constants (candle's mlx_gemm.metal)
# ---------------------------------------------------------------------------

DERIVED_SRC = HEADER + r"""
constant bool has_bias [[function_constant(0)]];
constant bool do_gather [[function_constant(1)]];
constant bool gather_bias = do_gather && has_bias;
constant bool plain_bias = (has_bias && !do_gather) || false;
kernel void k(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
              const device float* bias [[buffer(2), function_constant(has_bias)]],
              const device uint* idx [[buffer(3), function_constant(do_gather)]],
              const device uint* bias_idx [[buffer(4), function_constant(gather_bias)]],
              const constant float& scale [[buffer(5), function_constant(plain_bias)]],
              uint i [[thread_position_in_grid]]) {
    const uint src = do_gather ? idx[i] : i;
    float v = x[src];
    if (gather_bias) v += bias[bias_idx[i]];
    if (plain_bias) v += scale * bias[i];
    y[i] = v;
}
"""


@pytest.mark.parametrize("has_bias", [False, True])
@pytest.mark.parametrize("gather", [False, True])
@pytest.mark.parametrize("n", [1, 7, 33])
def test_derived_function_constant(dev, rng, has_bias, gather, n):
    lib = pm.compile(DERIVED_SRC)
    fn = lib.function("k", constants={"has_bias": has_bias, "do_gather": gather})
    expected = [0, 1] + ([2] if has_bias else []) + ([3] if gather else []) + ([4] if has_bias and gather else []) \
        + ([5] if has_bias and not gather else [])
    assert [a.index for a in fn.arguments] == expected  # as Metal's reflection
    x = rng.standard_normal(n).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    idx = rng.permutation(n).astype(np.uint32)
    bidx = rng.permutation(n).astype(np.uint32)
    y = np.zeros_like(x)
    args = [x, y] + ([bias] if has_bias else []) + ([idx] if gather else []) + ([bidx] if has_bias and gather else []) \
        + ([np.float32(0.5)] if has_bias and not gather else [])
    fn(*args, grid=n)
    ref = x[idx] if gather else x.copy()
    if has_bias:
        ref = ref + (bias[bidx] if gather else 0.5 * bias)
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_derived_function_constant_needs_its_constants(dev):
    lib = pm.compile(DERIVED_SRC)
    with pytest.raises(pm.CompileError, match="do_gather"):
        lib.function("k", constants={"has_bias": True})


def test_derived_constant_must_be_read_from_constants(dev):
    with pytest.raises(pm.CompileError, match="function_constant on a kernel parameter"):
        pm.compile(HEADER + "constant bool a [[function_constant(0)]];\nconstant int n = 3;\n"
                   "constant bool b = a && n > 2;\n"
                   "kernel void k(device float* o [[buffer(0), function_constant(b)]]) { o[0] = 1; }")


# ---------------------------------------------------------------------------
# A class whose constructors are all defaulted is an aggregate (candle's reduce.metal)
# ---------------------------------------------------------------------------

AGGREGATE_SRC = HEADER + r"""
template <typename T>
struct SumSq {
    uint count;
    T sum_sq;
    constexpr SumSq<T>() = default;
    constexpr SumSq<T>() threadgroup = default;
};
template <typename T> struct SumSqOp {
    static constexpr METAL_FUNC SumSq<T> init() { return { 0, 0 }; }
    METAL_FUNC SumSq<T> operator()(SumSq<T> a, T b) { a.sum_sq += b * b; a.count += 1; return a; }
};
struct Kept {                               // another constructor: no aggregate, as in C++17
    int v;
    Kept() = default;
    constexpr Kept(int a, int b) : v(a * b) {}
};
// root mean square per row: one thread per row
template <typename T>
kernel void rms(const device T* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& cols [[buffer(2)]],
                uint row [[thread_position_in_grid]]) {
    SumSqOp<float> op;
    SumSq<float> acc = SumSqOp<float>::init();
    for (uint j = 0; j < cols; j++) acc = op(acc, float(x[row * cols + j]));
    Kept k(2, 3);
    out[row] = sqrt(acc.sum_sq / acc.count) + float(k.v - 6);
}
template [[host_name("rms_f32")]] kernel void rms<float>(const device float*, device float*, constant uint&, uint);
template [[host_name("rms_f16")]] kernel void rms<half>(const device half*, device float*, constant uint&, uint);
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("rows,cols", [(1, 1), (4, 7), (33, 64)])
def test_aggregate_with_defaulted_constructors(dev, rng, dtype, rows, cols):
    lib = pm.compile(AGGREGATE_SRC)
    x = rng.standard_normal((rows, cols)).astype(dtype)
    out = np.zeros(rows, np.float32)
    lib.function("rms_f32" if dtype == np.float32 else "rms_f16")(x, out, np.uint32(cols), grid=rows)
    ref = np.sqrt((x.astype(np.float64) ** 2).mean(1))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_explicit_defaulted_constructor_is_no_aggregate(dev):
    # C++17 too: an explicit constructor keeps a class from being an aggregate; Metal refuses `{1}`
    with pytest.raises(pm.CompileError):
        pm.compile(HEADER + "struct E { int v; explicit E() = default; };\n"
                   "kernel void k(device int* o) { E e = {1}; o[0] = e.v; }")
