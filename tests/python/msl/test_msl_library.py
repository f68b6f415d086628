"""The MSL standard library as kernels see it: math, integer, geometric and
relational functions, vector constructors and swizzles, as_type, packed types,
half literals and device atomics, each checked against NumPy / Python.

Kernels are generated per function and compiled once per module (the CPU
backend caches compiled libraries on disk, keyed by the source).
"""

import numpy as np
import pytest

import pymetal as pm

SIZES = [1, 31, 33, 1000]          # 1, below / above one SIMD group of 32, several groups
ATOMIC_SIZES = [1, 31, 33, 1000, 4099, 100000]

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n\n"


# ---------------------------------------------------------------------------
# Math: unary, binary and ternary functions over float, half and float4
# ---------------------------------------------------------------------------

def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _round_away(x):
    x = _f64(x)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _fract_ref(below_one):
    def f(x):
        x = _f64(x)
        return np.minimum(x - np.floor(x), below_one)
    return f


def _pi_ref(fn):
    def f(x):
        x = _f64(x)
        return fn(np.pi * x)
    return f


# name -> (reference on float64, low, high, exact)
UNARY = {
    "sin": (np.sin, -10, 10, False),
    "cos": (np.cos, -10, 10, False),
    "tan": (np.tan, -1.5, 1.5, False),
    "asin": (np.arcsin, -0.99, 0.99, False),
    "acos": (np.arccos, -0.99, 0.99, False),
    "atan": (np.arctan, -10, 10, False),
    "sinh": (np.sinh, -5, 5, False),
    "cosh": (np.cosh, -5, 5, False),
    "tanh": (np.tanh, -5, 5, False),
    "asinh": (np.arcsinh, -10, 10, False),
    "acosh": (np.arccosh, 1, 10, False),
    "atanh": (np.arctanh, -0.99, 0.99, False),
    "exp": (np.exp, -9, 9, False),
    "exp2": (np.exp2, -13, 13, False),
    "exp10": (lambda x: np.power(10.0, x), -4, 4, False),
    "log": (np.log, 0.01, 100, False),
    "log2": (np.log2, 0.01, 100, False),
    "log10": (np.log10, 0.01, 100, False),
    "sqrt": (np.sqrt, 0, 100, False),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), 0.01, 100, False),
    "cbrt": (np.cbrt, -100, 100, False),
    "sinpi": (_pi_ref(np.sin), -4, 4, False),
    "cospi": (_pi_ref(np.cos), -4, 4, False),
    "tanpi": (_pi_ref(np.tan), -0.45, 0.45, False),
    "ceil": (np.ceil, -10, 10, True),
    "floor": (np.floor, -10, 10, True),
    "trunc": (np.trunc, -10, 10, True),
    "round": (_round_away, -10, 10, True),
    "rint": (np.rint, -10, 10, True),
    "fabs": (np.abs, -10, 10, True),
    "abs": (np.abs, -10, 10, True),
    "sign": (np.sign, -10, 10, True),
    "saturate": (lambda x: np.clip(x, 0, 1), -2, 2, True),
    "fract": (None, -10, 10, True),  # reference depends on the type
}

# name -> (reference, (low, high) per argument)
BINARY = {
    "atan2": (np.arctan2, [(-10, 10), (-10, 10)]),
    "pow": (np.power, [(0.1, 10), (-3, 3)]),
    "powr": (np.power, [(0.1, 10), (-3, 3)]),
    "fmod": (np.fmod, [(-20, 20), (0.5, 5)]),
    "fmax": (np.fmax, [(-10, 10), (-10, 10)]),
    "fmin": (np.fmin, [(-10, 10), (-10, 10)]),
    "max": (np.fmax, [(-10, 10), (-10, 10)]),
    "min": (np.fmin, [(-10, 10), (-10, 10)]),
    "copysign": (np.copysign, [(-10, 10), (-10, 10)]),
    "fdim": (lambda x, y: np.where(x > y, x - y, 0.0), [(-10, 10), (-10, 10)]),
    "step": (lambda e, x: np.where(x < e, 0.0, 1.0), [(-1, 1), (-1, 1)]),
    "divide": (np.divide, [(-10, 10), (0.5, 5)]),
}


def _smoothstep(e0, e1, x):
    t = np.clip((x - e0) / (e1 - e0), 0, 1)
    return t * t * (3 - 2 * t)


TERNARY = {
    "fma": (lambda a, b, c: a * b + c, [(-10, 10), (-10, 10), (-10, 10)]),
    "clamp": (lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), [(-10, 10), (-5, -1), (1, 5)]),
    "mix": (lambda x, y, a: x + (y - x) * a, [(-10, 10), (-10, 10), (0, 1)]),
    "smoothstep": (_smoothstep, [(-2, -0.5), (0.5, 2), (-3, 3)]),
    "max3": (lambda a, b, c: np.maximum(np.maximum(a, b), c), [(-10, 10)] * 3),
    "min3": (lambda a, b, c: np.minimum(np.minimum(a, b), c), [(-10, 10)] * 3),
    "median3": (lambda a, b, c: np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c)), [(-10, 10)] * 3),
}

MATH_TYPES = [("float", np.float32, 1), ("half", np.float16, 1), ("float4", np.float32, 4), ("half4", np.float16, 4)]


def _call_kernel(kernel, function, arity, in_type, out_type):
    """Kernel `kernel`: thread i writes function() of element i of `arity` inputs of in_type."""
    names = {1: ["x", "y"], 2: ["x", "y", "z"], 3: ["a", "b", "c", "out"]}[arity]  # the inputs, then the output
    inputs = "".join("device const %s* %s [[buffer(%d)]], " % (in_type, n, k) for k, n in enumerate(names[:-1]))
    return ("kernel void %s(%sdevice %s* %s [[buffer(%d)]], uint i [[thread_position_in_grid]]) { %s[i] = %s(%s); }"
            % (kernel, inputs, out_type, names[-1], arity, names[-1], function,
               ", ".join(n + "[i]" for n in names[:-1])))


def _math_source():
    lines = [HEADER]
    for t, _, _ in MATH_TYPES:
        for prefix, arity, names in (("u", 1, UNARY), ("b", 2, BINARY), ("t", 3, TERNARY)):
            lines += [_call_kernel("%s_%s_%s" % (prefix, name, t), name, arity, t, t) for name in names]
    lines.append(r"""
kernel void f_frexp(device const float* x [[buffer(0)]], device float* m [[buffer(1)]], device int* e [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) {
    int ex;
    m[i] = frexp(x[i], ex);
    e[i] = ex;
}
kernel void f_ldexp(device const float* x [[buffer(0)]], device const int* k [[buffer(1)]], device float* y [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) { y[i] = ldexp(x[i], k[i]); }
kernel void f_ilogb(device const float* x [[buffer(0)]], device int* y [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) { y[i] = ilogb(x[i]); }
kernel void f_modf(device const float4* x [[buffer(0)]], device float4* f [[buffer(1)]], device float4* ip [[buffer(2)]],
                   uint i [[thread_position_in_grid]]) {
    float4 w;
    f[i] = modf(x[i], w);
    ip[i] = w;
}
kernel void f_sincos(device const half* x [[buffer(0)]], device half* s [[buffer(1)]], device half* c [[buffer(2)]],
                     uint i [[thread_position_in_grid]]) {
    half cv;
    s[i] = sincos(x[i], cv);
    c[i] = cv;
}
kernel void f_nextafter_h(device const half* x [[buffer(0)]], device const half* y [[buffer(1)]], device half* z [[buffer(2)]],
                          uint i [[thread_position_in_grid]]) { z[i] = nextafter(x[i], y[i]); }
kernel void f_nextafter_f(device const float* x [[buffer(0)]], device const float* y [[buffer(1)]], device float* z [[buffer(2)]],
                          uint i [[thread_position_in_grid]]) { z[i] = nextafter(x[i], y[i]); }
kernel void f_namespaces(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    float v = x[i];
    y[4 * i + 0] = metal::precise::sin(v);
    y[4 * i + 1] = fast::exp(v);
    y[4 * i + 2] = precise::sqrt(abs(v));
    y[4 * i + 3] = metal::fast::pow(abs(v), 2.0f);
}
// Mixed scalar / literal arguments, as MSL code writes them.
kernel void f_mixed(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) {
    float v = x[i];
    float4 v4 = float4(v);
    y[8 * i + 0] = max(v, 0);
    y[8 * i + 1] = clamp(v, 0.0, 1.0);
    y[8 * i + 2] = pow(abs(v), 2.0);
    y[8 * i + 3] = mix(v4, float4(1.0f), 0.25).y;
    y[8 * i + 4] = max(v4, 0.5f).z;
    y[8 * i + 5] = fma(v, 2.0f, 1.0);
    y[8 * i + 6] = step(0.0f, v4).w;
    y[8 * i + 7] = smoothstep(-1.0f, 1.0f, v4).x;
}
constant float kScale = 3.0f;
kernel void f_constants(device float* y [[buffer(0)]], device half* h [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    y[0] = M_PI_F; y[1] = M_E_F; y[2] = M_SQRT2_F; y[3] = M_LN2_F;
    y[4] = FLT_MAX; y[5] = FLT_MIN; y[6] = FLT_EPSILON; y[7] = MAXFLOAT;
    y[8] = INFINITY; y[9] = NAN; y[10] = HUGE_VALF; y[11] = numeric_limits<float>::lowest();
    y[12] = numeric_limits<float>::epsilon(); y[13] = float(numeric_limits<int>::max()); y[14] = kScale;
    y[15] = M_1_PI_F;
    h[0] = HALF_MAX; h[1] = HALF_MIN; h[2] = HALF_EPSILON; h[3] = M_PI_H;
    h[4] = numeric_limits<half>::max(); h[5] = numeric_limits<half>::infinity();
}
""")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def math_lib(dev):
    return pm.compile(_math_source())


def _uniform(rng, lo, hi, shape, dtype):
    x = rng.uniform(lo, hi, size=shape).astype(dtype)
    return x


def _shape(n, width):
    return (n,) if width == 1 else (n, width)


def _check_float(out, ref, dtype, exact, what):
    ref = _f64(ref)
    if dtype == np.float16:
        want = ref.astype(np.float32).astype(np.float16).astype(np.float64)
        got = out.astype(np.float64)
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=what)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, err_msg=what)
    else:
        want = ref.astype(np.float32).astype(np.float64)
        got = out.astype(np.float64)
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=what)
        else:
            np.testing.assert_allclose(got, want, rtol=4e-6, atol=2e-6, err_msg=what)


@pytest.mark.parametrize("t,dtype,width", MATH_TYPES, ids=[m[0] for m in MATH_TYPES])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_math(math_lib, rng, name, t, dtype, width):
    ref, lo, hi, exact = UNARY[name]
    n = 257
    x = _uniform(rng, lo, hi, _shape(n, width), dtype)
    if name in ("round", "rint", "ceil", "floor", "trunc", "fract", "sign"):
        flat = x.reshape(-1)
        flat[:24] = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.0, -0.0, 3.0, -3.0, 0.25, -0.75,
                              7.5, -7.5, 0.49, 0.51, 1e-3, -1e-3, 9.5, -9.5, 4.0, 5.5, -5.5, 6.5], dtype=dtype)
    if name in ("sinpi", "cospi"):
        flat = x.reshape(-1)
        flat[:12] = np.array([0, 0.5, 1, 1.5, 2, -0.5, -1, 2.5, 3, -3.5, 0.25, 1 / 6], dtype=dtype)
    y = np.zeros_like(x)
    math_lib.function("u_%s_%s" % (name, t))(x, y, grid=n)
    if name == "fract":
        ref = _fract_ref(float.fromhex("0x1.ffcp-1") if dtype == np.float16 else float.fromhex("0x1.fffffep-1"))
    if name in ("sinpi", "cospi"):
        # exact (0 or +-1) at integers and half-integers, where sin(pi * x) is not
        want = _f64(ref(x))
        want = np.where(np.abs(want) < 1e-12, 0.0, np.where(np.abs(np.abs(want) - 1) < 1e-12, np.sign(want), want))
        special = (2 * _f64(x)) == np.round(2 * _f64(x))
        np.testing.assert_array_equal(_f64(y)[special], want[special])
        _check_float(y, want, dtype, False, name)
        return
    _check_float(y, ref(_f64(x)), dtype, exact, "%s(%s)" % (name, t))


@pytest.mark.parametrize("t,dtype,width", MATH_TYPES, ids=[m[0] for m in MATH_TYPES])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_math(math_lib, rng, name, t, dtype, width):
    ref, ranges = BINARY[name]
    n = 129
    x = _uniform(rng, *ranges[0], _shape(n, width), dtype)
    y = _uniform(rng, *ranges[1], _shape(n, width), dtype)
    z = np.zeros_like(x)
    math_lib.function("b_%s_%s" % (name, t))(x, y, z, grid=n)
    exact = name in ("fmax", "fmin", "max", "min", "copysign", "step", "fmod")
    if name == "fdim" or name == "divide":
        exact = dtype == np.float32
    _check_float(z, ref(_f64(x), _f64(y)), dtype, exact, "%s(%s)" % (name, t))


@pytest.mark.parametrize("t,dtype,width", MATH_TYPES, ids=[m[0] for m in MATH_TYPES])
@pytest.mark.parametrize("name", list(TERNARY))
def test_ternary_math(math_lib, rng, name, t, dtype, width):
    ref, ranges = TERNARY[name]
    n = 129
    a, b, c = (_uniform(rng, lo, hi, _shape(n, width), dtype) for lo, hi in ranges)
    out = np.zeros_like(a)
    math_lib.function("t_%s_%s" % (name, t))(a, b, c, out, grid=n)
    exact = name in ("clamp", "max3", "min3", "median3")
    if dtype == np.float32 and name in ("mix", "smoothstep"):
        np.testing.assert_allclose(out, ref(_f64(a), _f64(b), _f64(c)), rtol=1e-5, atol=1e-5)
        return
    _check_float(out, ref(_f64(a), _f64(b), _f64(c)), dtype, exact, "%s(%s)" % (name, t))


def test_frexp_ldexp_ilogb_modf_sincos(math_lib, rng):
    n = 200
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n)).astype(np.float32)
    x[0] = 1.0
    x[1] = 8.0
    m = np.zeros(n, np.float32)
    e = np.zeros(n, np.int32)
    math_lib.f_frexp(x, m, e, grid=n)
    wm, we = np.frexp(x)
    np.testing.assert_array_equal(m, wm)
    np.testing.assert_array_equal(e, we)

    k = rng.integers(-10, 10, n).astype(np.int32)
    y = np.zeros(n, np.float32)
    math_lib.f_ldexp(x, k, y, grid=n)
    np.testing.assert_array_equal(y, np.ldexp(x, k))

    il = np.zeros(n, np.int32)
    math_lib.f_ilogb(x, il, grid=n)
    np.testing.assert_array_equal(il, np.frexp(x)[1] - 1)

    x4 = rng.uniform(-100, 100, (n, 4)).astype(np.float32)
    f4, ip4 = np.zeros_like(x4), np.zeros_like(x4)
    math_lib.f_modf(x4, f4, ip4, grid=n)
    wf, wi = np.modf(x4)
    np.testing.assert_array_equal(f4, wf)
    np.testing.assert_array_equal(ip4, wi)

    h = rng.uniform(-6, 6, n).astype(np.float16)
    s, c = np.zeros_like(h), np.zeros_like(h)
    math_lib.f_sincos(h, s, c, grid=n)
    np.testing.assert_allclose(s.astype(np.float32), np.sin(h.astype(np.float64)), atol=2e-3)
    np.testing.assert_allclose(c.astype(np.float32), np.cos(h.astype(np.float64)), atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_nextafter(math_lib, rng, dtype):
    n = 300
    x = rng.uniform(-4, 4, n).astype(dtype)
    y = rng.uniform(-4, 4, n).astype(dtype)
    x[:6] = [0, 0, 1, 1, -1, 2]
    y[:6] = [1, -1, 2, 0, -2, 2]
    z = np.zeros_like(x)
    math_lib.function("f_nextafter_h" if dtype == np.float16 else "f_nextafter_f")(x, y, z, grid=n)
    np.testing.assert_array_equal(z, np.nextafter(x, y))


def test_math_namespaces_and_mixed_arguments(math_lib, rng):
    n = 65
    x = rng.uniform(-3, 3, n).astype(np.float32)
    y = np.zeros(4 * n, np.float32)
    math_lib.f_namespaces(x, y, grid=n)
    y = y.reshape(n, 4).astype(np.float64)
    xd = _f64(x)
    np.testing.assert_allclose(y[:, 0], np.sin(xd), rtol=4e-6, atol=1e-6)
    np.testing.assert_allclose(y[:, 1], np.exp(xd), rtol=4e-6)
    np.testing.assert_allclose(y[:, 2], np.sqrt(np.abs(xd)), rtol=4e-6)
    np.testing.assert_allclose(y[:, 3], np.abs(xd) ** 2, rtol=4e-6)

    m = np.zeros(8 * n, np.float32)
    math_lib.f_mixed(x, m, grid=n)
    m = m.reshape(n, 8).astype(np.float64)
    np.testing.assert_array_equal(m[:, 0], np.maximum(x, 0))
    np.testing.assert_array_equal(m[:, 1], np.clip(x, 0, 1))
    np.testing.assert_allclose(m[:, 2], xd ** 2, rtol=4e-6)
    np.testing.assert_allclose(m[:, 3], xd + (1 - xd) * 0.25, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(m[:, 4], np.maximum(x, np.float32(0.5)))
    np.testing.assert_allclose(m[:, 5], 2 * xd + 1, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(m[:, 6], np.where(x < 0, 0.0, 1.0))
    np.testing.assert_allclose(m[:, 7], _smoothstep(-1.0, 1.0, xd), rtol=1e-5, atol=1e-6)


def test_constants(math_lib):
    y = np.zeros(16, np.float32)
    h = np.zeros(6, np.float16)
    math_lib.f_constants(y, h, grid=1)
    f32 = np.finfo(np.float32)
    np.testing.assert_array_equal(y[:4], np.array([np.pi, np.e, np.sqrt(2), np.log(2)], np.float32))
    assert y[4] == f32.max and y[5] == f32.tiny and y[6] == f32.eps and y[7] == f32.max
    assert np.isinf(y[8]) and y[8] > 0 and np.isnan(y[9]) and np.isinf(y[10])
    assert y[11] == -f32.max and y[12] == f32.eps and y[13] == np.float32(2 ** 31 - 1) and y[14] == 3.0
    assert y[15] == np.float32(1 / np.pi)
    f16 = np.finfo(np.float16)
    assert h[0] == f16.max and h[1] == f16.tiny and h[2] == f16.eps and h[3] == np.float16(np.pi)
    assert h[4] == f16.max and np.isinf(h[5])


# ---------------------------------------------------------------------------
# Integer functions
# ---------------------------------------------------------------------------

INT_TYPES = [("int", np.int32), ("uint", np.uint32), ("uchar", np.uint8), ("short", np.int16),
             ("long", np.int64), ("ulong", np.uint64)]
INT1 = ["clz", "ctz", "popcount", "reverse_bits", "abs"]
INT2 = ["absdiff", "addsat", "subsat", "hadd", "rhadd", "mulhi", "rotate", "max", "min"]
INT3 = ["madhi", "madsat", "clamp", "max3", "min3", "median3"]


def _int_source():
    lines = [HEADER]
    for t, _ in INT_TYPES:
        for v in (t, t + "4"):
            unsigned = v if v.startswith("u") else "u" + v  # absdiff's result
            lines += [_call_kernel("i1_%s_%s" % (name, v), name, 1, v, v) for name in INT1]
            lines += [_call_kernel("i2_%s_%s" % (name, v), name, 2, v, unsigned if name == "absdiff" else v)
                      for name in INT2]
            lines += [_call_kernel("i3_%s_%s" % (name, v), name, 3, v, v) for name in INT3]
            lines.append(
                "kernel void ibits_%s(device const %s* x [[buffer(0)]], device const %s* y [[buffer(1)]], "
                "device %s* ex [[buffer(2)]], device %s* ins [[buffer(3)]], constant uint& off [[buffer(4)]], "
                "constant uint& bits [[buffer(5)]], uint i [[thread_position_in_grid]]) {"
                " ex[i] = extract_bits(x[i], off, bits); ins[i] = insert_bits(x[i], y[i], off, bits); }"
                % (v, v, v, v, v))
    lines.append(r"""
kernel void i24(device const int* x [[buffer(0)]], device const int* y [[buffer(1)]], device const int* z [[buffer(2)]],
                device int* m [[buffer(3)]], device int* ma [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    m[i] = mul24(x[i], y[i]);
    ma[i] = mad24(x[i], y[i], z[i]);
}
// MSL code often mixes uint values with int literals.
kernel void imixed(device const uint* x [[buffer(0)]], device uint* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    uint v = x[i];
    y[4 * i + 0] = max(v, 100);
    y[4 * i + 1] = min(v, 50);
    y[4 * i + 2] = clamp(v, 10, 20);
    y[4 * i + 3] = max(uint2(v, 1), 7u).x;
}
""")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def int_lib(dev):
    return pm.compile(_int_source())


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


def _rand_ints(rng, shape, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    specials = [0, 1, info.max, info.min, info.max // 2, 2, 3]
    flat[:len(specials)] = np.array(specials, dtype=dtype)
    return x


def _ref1(name, v, dtype):
    w = _bits(dtype)
    u = v & ((1 << w) - 1)
    if name == "clz":
        return w - u.bit_length()
    if name == "ctz":
        return w if u == 0 else (u & -u).bit_length() - 1
    if name == "popcount":
        return bin(u).count("1")
    if name == "reverse_bits":
        return int(format(u, "0%db" % w)[::-1], 2)
    if name == "abs":
        return abs(v)
    raise AssertionError(name)


def _wrap(v, dtype):
    info = np.iinfo(dtype)
    w = _bits(dtype)
    v &= (1 << w) - 1
    if info.min < 0 and v >= 1 << (w - 1):
        v -= 1 << w
    return v


def _sat(v, dtype):
    info = np.iinfo(dtype)
    return min(max(v, int(info.min)), int(info.max))


def _ref2(name, a, b, dtype):
    w = _bits(dtype)
    if name == "absdiff":
        return abs(a - b)
    if name == "addsat":
        return _sat(a + b, dtype)
    if name == "subsat":
        return _sat(a - b, dtype)
    if name == "hadd":
        return (a + b) >> 1
    if name == "rhadd":
        return (a + b + 1) >> 1
    if name == "mulhi":
        return (a * b) >> w
    if name == "rotate":
        n = (b & ((1 << w) - 1)) % w
        u = a & ((1 << w) - 1)
        return ((u << n) | (u >> (w - n))) & ((1 << w) - 1) if n else u
    if name == "max":
        return max(a, b)
    if name == "min":
        return min(a, b)
    raise AssertionError(name)


def _ref3(name, a, b, c, dtype):
    w = _bits(dtype)
    if name == "madhi":
        return ((a * b) >> w) + c
    if name == "madsat":
        return _sat(a * b + c, dtype)
    if name == "clamp":
        return min(max(a, b), c)
    if name == "max3":
        return max(a, b, c)
    if name == "min3":
        return min(a, b, c)
    if name == "median3":
        return sorted([a, b, c])[1]
    raise AssertionError(name)


def _out_dtype(name, dtype):
    if name == "absdiff":  # absdiff returns the unsigned type of the same size
        return np.dtype("u%d" % np.dtype(dtype).itemsize)
    return dtype


@pytest.mark.parametrize("vec", [False, True], ids=["scalar", "vec4"])
@pytest.mark.parametrize("t,dtype", INT_TYPES, ids=[t for t, _ in INT_TYPES])
def test_integer_functions(int_lib, rng, t, dtype, vec):
    n = 67
    shape = (n, 4) if vec else (n,)
    v = t + "4" if vec else t
    x = _rand_ints(rng, shape, dtype)
    y = _rand_ints(rng, shape, dtype)[::-1].copy()
    z = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
    xs, ys, zs = ([int(q) for q in arr.reshape(-1)] for arr in (x, y, z))
    for name in INT1:
        out = np.zeros_like(x)
        int_lib.function("i1_%s_%s" % (name, v))(x, out, grid=n)
        want = [_wrap(_ref1(name, a, dtype), dtype) for a in xs]
        assert [int(q) for q in out.reshape(-1)] == want, name
    for name in INT2:
        out = np.zeros(shape, _out_dtype(name, dtype))
        int_lib.function("i2_%s_%s" % (name, v))(x, y, out, grid=n)
        od = out.dtype
        want = [_wrap(_ref2(name, a, b, dtype), od) for a, b in zip(xs, ys)]
        assert [int(q) for q in out.reshape(-1)] == want, name
    lo = np.minimum(y, z)
    hi = np.maximum(y, z)
    for name in INT3:
        b_arr, c_arr = (lo, hi) if name == "clamp" else (y, z)
        bs, cs = [int(q) for q in b_arr.reshape(-1)], [int(q) for q in c_arr.reshape(-1)]
        out = np.zeros_like(x)
        int_lib.function("i3_%s_%s" % (name, v))(x, b_arr, c_arr, out, grid=n)
        want = [_wrap(_ref3(name, a, b, c, dtype), dtype) for a, b, c in zip(xs, bs, cs)]
        assert [int(q) for q in out.reshape(-1)] == want, name


@pytest.mark.parametrize("t,dtype", [("int", np.int32), ("uint", np.uint32), ("short", np.int16), ("ulong", np.uint64)])
@pytest.mark.parametrize("off,bits", [(0, 0), (0, 1), (4, 8), (3, 5), (0, 16), (1, 15)])
def test_extract_insert_bits(int_lib, rng, t, dtype, off, bits):
    n = 40
    w = _bits(dtype)
    x = _rand_ints(rng, n, dtype)
    y = _rand_ints(rng, n, dtype)[::-1].copy()
    ex, ins = np.zeros_like(x), np.zeros_like(x)
    int_lib.function("ibits_" + t)(x, y, ex, ins, np.uint32(off), np.uint32(bits), grid=n)
    signed = np.iinfo(dtype).min < 0
    for a, b, e, s in zip(x.tolist(), y.tolist(), ex.tolist(), ins.tolist()):
        ua, ub = a & ((1 << w) - 1), b & ((1 << w) - 1)
        field = (ua >> off) & ((1 << bits) - 1)
        if signed and bits and field >> (bits - 1):
            field -= 1 << bits
        assert e == field
        mask = ((1 << bits) - 1) << off
        assert s == _wrap((ua & ~mask) | ((ub << off) & mask), dtype)


def test_mul24_and_mixed_integer_arguments(int_lib, rng):
    n = 100
    x = rng.integers(-(1 << 11), 1 << 11, n).astype(np.int32)
    y = rng.integers(-(1 << 11), 1 << 11, n).astype(np.int32)
    z = rng.integers(-1000, 1000, n).astype(np.int32)
    m, ma = np.zeros_like(x), np.zeros_like(x)
    int_lib.i24(x, y, z, m, ma, grid=n)
    np.testing.assert_array_equal(m, x * y)
    np.testing.assert_array_equal(ma, x * y + z)

    u = rng.integers(0, 200, n).astype(np.uint32)
    out = np.zeros(4 * n, np.uint32)
    int_lib.imixed(u, out, grid=n)
    out = out.reshape(n, 4)
    np.testing.assert_array_equal(out[:, 0], np.maximum(u, 100))
    np.testing.assert_array_equal(out[:, 1], np.minimum(u, 50))
    np.testing.assert_array_equal(out[:, 2], np.clip(u, 10, 20))
    np.testing.assert_array_equal(out[:, 3], np.maximum(u, 7))


# ---------------------------------------------------------------------------
# Geometric and relational functions, constructors, swizzles, as_type, packed types
# ---------------------------------------------------------------------------

MISC_SRC = HEADER + r"""
kernel void geo3(device const packed_float3* a [[buffer(0)]], device const packed_float3* b [[buffer(1)]],
                 device float* s [[buffer(2)]], device packed_float3* v [[buffer(3)]],
                 uint i [[thread_position_in_grid]]) {
    float3 x = a[i], y = b[i];
    s[4 * i + 0] = dot(x, y);
    s[4 * i + 1] = length(x);
    s[4 * i + 2] = distance(x, y);
    s[4 * i + 3] = length_squared(x) - distance_squared(x, y);
    v[4 * i + 0] = cross(x, y);
    v[4 * i + 1] = normalize(x);
    v[4 * i + 2] = reflect(x, normalize(y));
    v[4 * i + 3] = faceforward(x, y, float3(0, 0, 1));
}
kernel void geo_refract(device const float4* a [[buffer(0)]], device const float4* n [[buffer(1)]],
                        constant float& eta [[buffer(2)]], device float4* out [[buffer(3)]],
                        uint i [[thread_position_in_grid]]) {
    out[i] = refract(normalize(a[i]), normalize(n[i]), eta);
}
kernel void geo_half(device const half4* a [[buffer(0)]], device const half4* b [[buffer(1)]],
                     device half* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[2 * i] = dot(a[i], b[i]);
    out[2 * i + 1] = length(a[i]);
}

kernel void ctors(device const float4* x [[buffer(0)]], device float4* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    float4 v = x[i];
    out[8 * i + 0] = float4(v.xy, v.z, 1.0f);
    out[8 * i + 1] = float4(v.wzyx);
    out[8 * i + 2] = float4(v.x);
    out[8 * i + 3] = float4(float2(v.w, v.z), v.yx);
    out[8 * i + 4] = float4(float3(v.zyx), 2);
    out[8 * i + 5] = float4(int4(v));                  // truncation toward zero
    out[8 * i + 6] = float4(half4(v));                 // rounding through half
    float4 w = v;
    w.xz = float2(-1.0f, -2.0f);
    w.w *= 3.0f;
    out[8 * i + 7] = w.rgba;
}
kernel void int_ctors(device const int* x [[buffer(0)]], device uint4* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    int v = x[i];
    out[3 * i + 0] = uint4(uint2(v, v + 1), 7u, uint(i));
    out[3 * i + 1] = uint4(uchar4(v));                 // wraps to 8 bits
    out[3 * i + 2] = uint4(int4(short2(v), long2(v)));
}
kernel void as_types(device const float* x [[buffer(0)]], device uint* u [[buffer(1)]],
                     device const uint* hbits [[buffer(2)]], device half2* h [[buffer(3)]],
                     device uint* back [[buffer(4)]], uint i [[thread_position_in_grid]]) {
    u[i] = as_type<uint>(x[i]);
    h[i] = as_type<half2>(hbits[i]);
    back[i] = as_type<uint>(as_type<half2>(hbits[i]) * 1.0h) ^ as_type<uint>(as_type<float>(hbits[i]));
}
kernel void relational(device const float4* a [[buffer(0)]], device const float4* b [[buffer(1)]],
                       device float4* sel [[buffer(2)]], device uint* flags [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
    float4 x = a[i], y = b[i];
    bool4 gt = x > y;
    sel[2 * i + 0] = select(x, y, gt);                 // min
    sel[2 * i + 1] = select(x, y, x < 0.0f);
    uint f = 0;
    f |= all(x > y) ? 1u : 0u;
    f |= any(x > y) ? 2u : 0u;
    f |= all(gt) ? 4u : 0u;
    f |= gt.x ? 8u : 0u;
    f |= any(isnan(x)) ? 16u : 0u;
    f |= any(isinf(x)) ? 32u : 0u;
    f |= all(isfinite(x)) ? 64u : 0u;
    f |= signbit(x.y) ? 128u : 0u;
    f |= all(!gt) ? 256u : 0u;
    f |= any(gt && (y > 0.0f)) ? 512u : 0u;
    f |= uint(dot(float4(gt), float4(1.0f))) << 10;  // number of true lanes
    f |= select(0u, 1u, isunordered(x.x, y.x)) << 13;
    flags[i] = f;
}

struct Vertex {
    packed_float3 pos;
    float w;
    packed_half2 uv;
    uchar4 color;
};
kernel void packed_structs(device const Vertex* in [[buffer(0)]], device Vertex* out [[buffer(1)]],
                           device packed_half3* h3 [[buffer(2)]], device float3* f3 [[buffer(3)]],
                           uint i [[thread_position_in_grid]]) {
    Vertex v = in[i];
    float3 p = v.pos;
    out[i].pos = p * 2.0f + float3(v.w);
    out[i].pos.y = p.y - 1.0f;
    out[i].w = v.pos[2] + v.uv.x;
    out[i].uv = half2(v.uv.y, v.uv[0]);
    out[i].color = v.color.wzyx;
    half3 hv = h3[i];
    h3[i] = hv + half3(1.0h, 2.0h, 0.5h);
    f3[i] = f3[i].zxy;
}
kernel void half_literals(device const half* x [[buffer(0)]], device half* y [[buffer(1)]],
                          device float* bf [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    half h = x[i];
    y[i] = h * 1.5h + 0.25h - half(2);
    bf[i] = float(bfloat(float(h)) * 2.0bf);
}
"""


@pytest.fixture(scope="module")
def misc_lib(dev):
    return pm.compile(MISC_SRC)


@pytest.mark.parametrize("n", SIZES)
def test_geometric(misc_lib, rng, n):
    a = rng.uniform(-5, 5, (n, 3)).astype(np.float32)
    b = rng.uniform(-5, 5, (n, 3)).astype(np.float32)
    s = np.zeros(4 * n, np.float32)
    v = np.zeros((4 * n, 3), np.float32)
    misc_lib.geo3(a, b, s, v, grid=n)
    s = s.reshape(n, 4)
    v = v.reshape(n, 4, 3)
    ad, bd = _f64(a), _f64(b)
    tol = dict(rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(s[:, 0], np.sum(ad * bd, axis=1), **tol)
    np.testing.assert_allclose(s[:, 1], np.linalg.norm(ad, axis=1), **tol)
    np.testing.assert_allclose(s[:, 2], np.linalg.norm(ad - bd, axis=1), **tol)
    np.testing.assert_allclose(s[:, 3], np.sum(ad * ad, 1) - np.sum((ad - bd) ** 2, 1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(v[:, 0], np.cross(ad, bd), **tol)
    np.testing.assert_allclose(v[:, 1], ad / np.linalg.norm(ad, axis=1, keepdims=True), **tol)
    nb = bd / np.linalg.norm(bd, axis=1, keepdims=True)
    np.testing.assert_allclose(v[:, 2], ad - 2 * np.sum(nb * ad, 1, keepdims=True) * nb, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(v[:, 3], np.where(bd[:, 2:3] < 0, ad, -ad), **tol)


def test_refract_and_half_geometry(misc_lib, rng):
    n = 50
    i4 = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    n4 = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    out = np.zeros_like(i4)
    eta = 0.8
    misc_lib.geo_refract(i4, n4, np.float32(eta), out, grid=n)
    I = _f64(i4) / np.linalg.norm(_f64(i4), axis=1, keepdims=True)
    N = _f64(n4) / np.linalg.norm(_f64(n4), axis=1, keepdims=True)
    d = np.sum(N * I, 1, keepdims=True)
    k = 1 - eta * eta * (1 - d * d)
    want = np.where(k < 0, 0.0, eta * I - (eta * d + np.sqrt(np.maximum(k, 0))) * N)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)

    a = rng.uniform(-2, 2, (n, 4)).astype(np.float16)
    b = rng.uniform(-2, 2, (n, 4)).astype(np.float16)
    h = np.zeros(2 * n, np.float16)
    misc_lib.geo_half(a, b, h, grid=n)
    h = h.reshape(n, 2).astype(np.float64)
    np.testing.assert_allclose(h[:, 0], np.sum(_f64(a) * _f64(b), 1), rtol=2e-3, atol=1e-2)
    np.testing.assert_allclose(h[:, 1], np.linalg.norm(_f64(a), axis=1), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("n", SIZES)
def test_vector_constructors_and_swizzles(misc_lib, rng, n):
    x = rng.uniform(-100, 100, (n, 4)).astype(np.float32)
    out = np.zeros((8 * n, 4), np.float32)
    misc_lib.ctors(x, out, grid=n)
    out = out.reshape(n, 8, 4)
    one = np.ones(n, np.float32)
    np.testing.assert_array_equal(out[:, 0], np.stack([x[:, 0], x[:, 1], x[:, 2], one], 1))
    np.testing.assert_array_equal(out[:, 1], x[:, ::-1])
    np.testing.assert_array_equal(out[:, 2], np.repeat(x[:, :1], 4, 1))
    np.testing.assert_array_equal(out[:, 3], x[:, [3, 2, 1, 0]])
    np.testing.assert_array_equal(out[:, 4], np.stack([x[:, 2], x[:, 1], x[:, 0], 2 * one], 1))
    np.testing.assert_array_equal(out[:, 5], np.trunc(x))
    np.testing.assert_array_equal(out[:, 6], x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(out[:, 7], np.stack([-one, x[:, 1], -2 * one, 3 * x[:, 3]], 1))

    v = rng.integers(-1000, 1000, n).astype(np.int32)
    iout = np.zeros((3 * n, 4), np.uint32)
    misc_lib.int_ctors(v, iout, grid=n)
    iout = iout.reshape(n, 3, 4).astype(np.int64)
    u32 = lambda a: np.asarray(a, np.int64) & 0xFFFFFFFF  # noqa: E731
    np.testing.assert_array_equal(iout[:, 0], np.stack([u32(v), u32(v + 1), np.full(n, 7), np.arange(n)], 1))
    np.testing.assert_array_equal(iout[:, 1], np.repeat((v.astype(np.int64) & 0xFF)[:, None], 4, 1))
    np.testing.assert_array_equal(iout[:, 2], np.repeat(u32(v)[:, None], 4, 1))


def test_as_type(misc_lib, rng):
    n = 100
    x = rng.standard_normal(n).astype(np.float32)
    u = np.zeros(n, np.uint32)
    hb = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    hb &= ~np.uint32(0x40004000)  # no inf / NaN halves (NaN payloads need not survive * 1.0h)
    h = np.zeros(2 * n, np.float16)
    back = np.ones(n, np.uint32)
    misc_lib.as_types(x, u, hb, h, back, grid=n)
    np.testing.assert_array_equal(u, x.view(np.uint32))
    np.testing.assert_array_equal(h.view(np.uint32), hb)
    np.testing.assert_array_equal(back, np.zeros(n, np.uint32))


@pytest.mark.parametrize("n", SIZES)
def test_select_all_any(misc_lib, rng, n):
    a = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    if n > 3:
        a[0] = [1, 2, 3, 4]
        b[0] = [0, 0, 0, 0]
        a[1, 0], a[2, 1] = np.nan, np.inf
        a[3] = b[3] - 1
    sel = np.zeros((2 * n, 4), np.float32)
    flags = np.zeros(n, np.uint32)
    misc_lib.relational(a, b, sel, flags, grid=n)
    sel = sel.reshape(n, 2, 4)
    gt = a > b
    np.testing.assert_array_equal(sel[:, 0], np.where(gt, b, a))
    np.testing.assert_array_equal(sel[:, 1], np.where(a < 0, b, a))
    want = (gt.all(1) * 1 | gt.any(1) * 2 | gt.all(1) * 4 | gt[:, 0] * 8
            | np.isnan(a).any(1) * 16 | np.isinf(a).any(1) * 32 | np.isfinite(a).all(1) * 64
            | np.signbit(a[:, 1]) * 128 | (~gt).all(1) * 256 | (gt & (b > 0)).any(1) * 512
            | gt.sum(1) << 10 | (np.isnan(a[:, 0]) | np.isnan(b[:, 0])) << 13)
    np.testing.assert_array_equal(flags, want.astype(np.uint32))


@pytest.mark.parametrize("n", SIZES)
def test_packed_types_in_buffers(misc_lib, rng, n):
    vertex = np.dtype({"names": ["pos", "w", "uv", "color"],
                       "formats": [(np.float32, 3), np.float32, (np.float16, 2), (np.uint8, 4)],
                       "offsets": [0, 12, 16, 20], "itemsize": 24})
    vin = np.zeros(n, vertex)
    vin["pos"] = rng.uniform(-10, 10, (n, 3))
    vin["w"] = rng.uniform(-1, 1, n)
    vin["uv"] = rng.uniform(0, 1, (n, 2))
    vin["color"] = rng.integers(0, 256, (n, 4))
    vout = np.zeros(n, vertex)
    h3 = rng.uniform(-4, 4, (n, 3)).astype(np.float16)      # packed_half3: 6-byte stride
    f3 = rng.uniform(-4, 4, (n, 4)).astype(np.float32)      # float3: 16-byte stride
    h3_in, f3_in = h3.copy(), f3.copy()
    misc_lib.packed_structs(vin, vout, h3, f3, grid=n)
    pos, w = _f64(vin["pos"]).astype(np.float32), vin["w"]
    want_pos = pos * 2 + w[:, None]
    want_pos[:, 1] = pos[:, 1] - 1
    np.testing.assert_array_equal(vout["pos"], want_pos.astype(np.float32))
    np.testing.assert_array_equal(vout["w"], vin["pos"][:, 2] + vin["uv"][:, 0].astype(np.float32))
    np.testing.assert_array_equal(vout["uv"], vin["uv"][:, ::-1])
    np.testing.assert_array_equal(vout["color"], vin["color"][:, ::-1])
    np.testing.assert_array_equal(h3, (h3_in + np.array([1, 2, 0.5], np.float16)).astype(np.float16))
    np.testing.assert_array_equal(f3[:, :3], f3_in[:, [2, 0, 1]])


def test_half_and_bfloat_literals(misc_lib, rng):
    n = 77
    x = rng.uniform(-8, 8, n).astype(np.float16)
    y = np.zeros_like(x)
    bf = np.zeros(n, np.float32)
    misc_lib.half_literals(x, y, bf, grid=n)
    # half arithmetic rounds every operation to half (clang may keep float
    # intermediates, as Metal may): allow one half ulp per operation.
    want = x.astype(np.float32) * 1.5 + 0.25 - 2
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=3e-3, atol=1e-2)
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(bf, rounded * 2)


# ---------------------------------------------------------------------------
# Device atomics (threadgroups run on several OS threads: real atomics)
# ---------------------------------------------------------------------------

ATOMIC_SRC = HEADER + r"""
kernel void count(device atomic_uint* counter [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
}
kernel void count_volatile(volatile device atomic_uint* counter [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(counter, 2u, memory_order_relaxed);
    atomic_fetch_sub_explicit(counter, 1u, memory_order_relaxed);
}
kernel void histogram(device const uint* x [[buffer(0)]], device atomic_uint* hist [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(&hist[x[i] % 16], 1u, memory_order_relaxed);
}
kernel void minmax(device const int* x [[buffer(0)]], device atomic_int* mm [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    atomic_fetch_min_explicit(&mm[0], x[i], memory_order_relaxed);
    atomic_fetch_max_explicit(&mm[1], x[i], memory_order_relaxed);
}
kernel void umax(device const uint* x [[buffer(0)]], device atomic_uint* m [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    atomic_fetch_max_explicit(m, x[i], memory_order_relaxed);
}
kernel void fsum(device const float* x [[buffer(0)]], device atomic_float* s [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(s, x[i], memory_order_relaxed);
}
// A float maximum through compare-and-exchange on the bits.
kernel void cas_fmax(device const float* x [[buffer(0)]], device atomic_uint* m [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    uint old = atomic_load_explicit(m, memory_order_relaxed);
    while (as_type<float>(old) < x[i] &&
           !atomic_compare_exchange_weak_explicit(m, &old, as_type<uint>(x[i]),
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}
kernel void cas_count(device atomic_int* c [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    int expected = atomic_load_explicit(c, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(c, &expected, expected + 3,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}
kernel void exchange(device atomic_uint* slot [[buffer(0)]], device uint* old [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    old[i] = atomic_exchange_explicit(slot, i + 1, memory_order_relaxed);
}
kernel void bitmask(device atomic_uint* words [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_or_explicit(&words[i / 32], 1u << (i % 32), memory_order_relaxed);
    atomic_fetch_xor_explicit(&words[i / 32], 0u, memory_order_relaxed);
    atomic_fetch_and_explicit(&words[i / 32], 0xffffffffu, memory_order_relaxed);
}
kernel void store_load(device atomic_uint* a [[buffer(0)]], device uint* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    atomic_store_explicit(&a[i], i * 3, memory_order_relaxed);
    atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);
    out[i] = atomic_load_explicit(&a[i], memory_order_relaxed);
}
kernel void ulong_minmax(device const ulong* x [[buffer(0)]], device atomic_ulong* m [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    atomic_max_explicit(&m[0], x[i], memory_order_relaxed);
    atomic_min_explicit(&m[1], x[i], memory_order_relaxed);
}
// Threadgroup atomics: one counter per group, published by the first thread.
kernel void tg_count(device uint* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]],
                     uint group [[threadgroup_position_in_grid]]) {
    threadgroup atomic_uint n;
    if (lid == 0) atomic_store_explicit(&n, 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&n, 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) out[group] = atomic_load_explicit(&n, memory_order_relaxed);
}
"""


@pytest.fixture(scope="module")
def atomic_lib(dev):
    return pm.compile(ATOMIC_SRC)


@pytest.mark.parametrize("n", ATOMIC_SIZES)
def test_atomic_counter(atomic_lib, n):
    c = np.zeros(1, np.uint32)
    atomic_lib.count(c, grid=n)
    assert int(c[0]) == n
    c[0] = 5
    atomic_lib.count_volatile(c, grid=n)
    assert int(c[0]) == n + 5


@pytest.mark.parametrize("n", ATOMIC_SIZES)
def test_atomic_histogram_min_max(atomic_lib, rng, n):
    x = rng.integers(0, 1 << 31, n, dtype=np.int64).astype(np.uint32)
    hist = np.zeros(16, np.uint32)
    atomic_lib.histogram(x, hist, grid=n)
    np.testing.assert_array_equal(hist, np.bincount(x % 16, minlength=16))

    xi = rng.integers(-(1 << 31), (1 << 31) - 1, n, dtype=np.int64).astype(np.int32)
    mm = np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min], np.int32)
    atomic_lib.minmax(xi, mm, grid=n)
    assert mm[0] == xi.min() and mm[1] == xi.max()

    m = np.zeros(1, np.uint32)
    atomic_lib.umax(x | np.uint32(0x80000000), m, grid=n)  # above INT_MAX: unsigned comparison
    assert m[0] == (x | np.uint32(0x80000000)).max()

    xl = rng.integers(0, 1 << 63, n, dtype=np.uint64) | np.uint64(1 << 63)
    ml = np.array([0, np.iinfo(np.uint64).max], np.uint64)
    atomic_lib.ulong_minmax(xl, ml, grid=n)
    assert ml[0] == xl.max() and ml[1] == xl.min()


@pytest.mark.parametrize("n", ATOMIC_SIZES)
def test_atomic_float_add(atomic_lib, rng, n):
    x = rng.integers(-8, 9, n).astype(np.float32)     # small integers: the sum is exact in any order
    s = np.zeros(1, np.float32)
    atomic_lib.fsum(x, s, grid=n)
    assert s[0] == x.astype(np.float64).sum()
    ones = np.ones(n, np.float32)
    s[0] = 0.5
    atomic_lib.fsum(ones, s, grid=n)
    assert s[0] == n + 0.5


@pytest.mark.parametrize("n", ATOMIC_SIZES)
def test_atomic_compare_exchange(atomic_lib, rng, n):
    x = rng.uniform(0, 1000, n).astype(np.float32)
    m = np.zeros(1, np.uint32)  # as_type<float>(0u) == 0.0f
    atomic_lib.cas_fmax(x, m, grid=n)
    assert m.view(np.float32)[0] == x.max()
    c = np.array([-7], np.int32)
    atomic_lib.cas_count(c, grid=n)
    assert int(c[0]) == 3 * n - 7


@pytest.mark.parametrize("n", ATOMIC_SIZES)
def test_atomic_exchange_is_a_permutation(atomic_lib, n):
    slot = np.zeros(1, np.uint32)
    old = np.zeros(n, np.uint32)
    atomic_lib.exchange(slot, old, grid=n)
    seen = np.sort(np.concatenate([old, slot]))
    np.testing.assert_array_equal(seen, np.arange(n + 1, dtype=np.uint32))


@pytest.mark.parametrize("n", [1, 31, 32, 33, 1000, 4099])
def test_atomic_bitwise_and_store_load(atomic_lib, n):
    words = np.zeros((n + 31) // 32, np.uint32)
    atomic_lib.bitmask(words, grid=n)
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")
    np.testing.assert_array_equal(bits[:n], np.ones(n, np.uint8))
    assert bits[n:].sum() == 0
    a = np.zeros(n, np.uint32)
    out = np.zeros(n, np.uint32)
    atomic_lib.store_load(a, out, grid=n)
    np.testing.assert_array_equal(a, np.arange(n, dtype=np.uint32) * 3)
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("n,tg", [(1, 1), (64, 32), (1000, 128), (100, 64)])
def test_threadgroup_atomics(atomic_lib, n, tg):
    groups = (n + tg - 1) // tg
    out = np.zeros(groups, np.uint32)
    atomic_lib.tg_count(out, grid=n, threadgroup=tg)
    want = np.full(groups, tg, np.uint32)
    want[-1] = n - tg * (groups - 1)   # dispatchThreads: the last group may be partial
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------------------
# User macros with short common names: they apply to the whole translation
# unit, the standard library headers included, and must not break them; and
# the headers bring no libc names (::abs(int), ::div, ...) into user code.
# ---------------------------------------------------------------------------

COMMON_MACROS = {"N": 4, "T": "float", "A": 2, "K": 8, "R": 1, "F": 1, "I": 1, "V": 1, "M": 1}

MACRO_LIB_SRC = HEADER + """
kernel void abs_with_macros(device int* out [[buffer(0)]], device T* f [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
    static_assert(__is_same(decltype(abs(-3)), int), "abs(int) is MSL's, returning int");
    out[i] = abs(-3) * K + abs(-(int)i) + N - A + R * F * I * V * M;
    f[i] = T(N) * fabs(-f[i]);
}
kernel void sync_with_macros(device float* out [[buffer(0)]], device atomic_uint* count [[buffer(1)]],
                             uint tid [[thread_index_in_threadgroup]],
                             uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup T tile[64];
    tile[tid] = T(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    T s = simd_sum(tile[tid]);
    simdgroup_float8x8 a, b, c;
    simdgroup_load(a, tile, 8);
    b = simdgroup_float8x8(1.0f);          // identity
    simdgroup_multiply(c, a, b);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) simdgroup_store(c, tile, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
    out[tid] = s + tile[tid];
}
"""


def test_abs_int_with_common_macros(dev):
    lib = pm.compile(MACRO_LIB_SRC, macros=COMMON_MACROS)
    n = 100
    out = np.zeros(n, np.int32)
    f = np.linspace(-3, 3, n).astype(np.float32)
    want_f = 4 * np.abs(f)
    lib.abs_with_macros(out, f, grid=n)
    np.testing.assert_array_equal(out, 3 * 8 + np.arange(n) + 4 - 2 + 1)
    np.testing.assert_array_equal(f, want_f)


def test_sync_simd_matrix_atomics_with_common_macros(dev):
    lib = pm.compile(MACRO_LIB_SRC, macros=COMMON_MACROS)
    out = np.zeros(64, np.float32)
    count = np.zeros(1, np.uint32)
    lib.sync_with_macros(out, count, grid=64, threadgroup=64)
    t = np.arange(64, dtype=np.float32)
    sums = np.repeat([t[:32].sum(), t[32:].sum()], 32)
    np.testing.assert_array_equal(out, sums + t)
    assert int(count[0]) == 64


def test_metal_func_macro():
    """Apple's <metal_stdlib> defines METAL_FUNC (always-inline); MLX's kernels use it."""
    lib = pm.compile("""
    #include <metal_stdlib>
    using namespace metal;
    template <typename T> METAL_FUNC T twice(T v) { return v + v; }
    kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = twice(float(i)); }
    """)
    out = np.zeros(37, np.float32)
    lib.k(out, grid=37)
    np.testing.assert_array_equal(out, 2 * np.arange(37, dtype=np.float32))


def test_tinygrad_style_kernel_without_buffer_attributes():
    """tinygrad renders buffer parameters without [[buffer(n)]]: Metal numbers them in order."""
    lib = pm.compile("""
    #include <metal_stdlib>
    using namespace metal;
    kernel void E_4_32(device float* data0, const device float* data1, const device float* data2,
                       constant int& scale, uint3 gid [[threadgroup_position_in_grid]],
                       uint3 lid [[thread_position_in_threadgroup]]) {
      int idx = (int)(gid.x * 32 + lid.x);
      float4 a = *((device float4*)(data1 + idx * 4));
      float4 b = *((device float4*)(data2 + idx * 4));
      *((device float4*)(data0 + idx * 4)) = (a + b) * (float)scale;
    }
    """)
    rng = np.random.default_rng(7)
    a = rng.standard_normal(512).astype(np.float32)
    b = rng.standard_normal(512).astype(np.float32)
    out = np.zeros(512, np.float32)
    lib.E_4_32(out, a, b, np.int32(3), groups=4, threadgroup=32)
    np.testing.assert_allclose(out, (a + b) * 3, rtol=1e-6)
