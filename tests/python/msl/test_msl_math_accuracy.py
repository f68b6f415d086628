"""Accuracy of MSL math (exp, exp2, log, log2, sin, cos, tan, tanh, pow) on the
CPU backend, against float64 NumPy, over the whole float range.

Bounds are the Metal Shading Language specification's, section 8.4 "ULPs and
Relative Error" (MSL 3.x/4.x; the 2017 MSL 2.0 spec had them in section 7.4):
  - Table 8.1, single precision (precise math, pymetal's default safe mode and
    metal::precise::): exp, exp2, log, log2, sin, cos <= 4 ulp; tan <= 6 ulp;
    tanh <= 5 ulp; pow <= 16 ulp.
  - Table 8.2, single precision with fast math (metal::fast::, fast_math=True):
      exp(x), exp2(x): <= 3 + floor(fabs(2 * x)) ulp
      log(x):  x in [0.5, 2]: absolute error <= 2^-21; other x > 0: <= 3 ulp
      log2(x): x in [0.5, 2]: absolute error <= 2^-22; other x > 0: <= 2 ulp
      sin(x), cos(x): x in [-pi, pi]: absolute error <= 2^-13 ("larger otherwise")
      tan(x):  "implemented as sin(x) * (1.0 / cos(x))"
      tanh(x): "implemented as (t - 1.0) / (t + 1.0), where t = exp(2.0 * x)"
      pow(x, y): "implemented as exp2(y * log2(x))"
    For the "implemented as" rows the bound here is the error that formula may
    have given the table's bounds for its parts (x / y <= 2.5 ulp, 1.0 / x <=
    1 ulp, other arithmetic correctly rounded). Fast math leaves NaN / INF
    inputs undefined, and denormals may be flushed (section 8.1), so the fast
    tests use finite normal inputs and accept a flushed subnormal result.
  - Table 8.3, half precision: exp, exp2, log, log2, sin, cos, tan, tanh <= 1 ulp
    (pow is not in that table; it is held to 1 ulp too).
ULP (section 8.4): the distance between the two floats around the exact
result; here the float spacing at |reference| (2^-149 for subnormals).

erf is not an MSL function: kernels bring their own (MLX and tinygrad do). The
one the benchmark uses (msl_erf.metal) is tested against math.erf at 4 ulp,
the bound of table 8.1's exp that it is built on.
"""

import math
import os
import pathlib
import platform

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"
UNARY = ["exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh"]
PRECISE_ULP = {"exp": 4, "exp2": 4, "log": 4, "log2": 4, "sin": 4, "cos": 4, "tan": 6, "tanh": 5, "pow": 16}
REFERENCE = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin,
             "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "pow": np.power}
ERF_SOURCE = (pathlib.Path(__file__).parent / "msl_erf.metal").read_text()


def _kernels(prefix, dtype):
    """One kernel per function: y[i] = <prefix>f(x[i]) (pow: x[i], y[i] -> out[i])."""
    unary = "\n".join(
        f"kernel void {prefix.replace('::', '_')}{name}_{dtype}(device const {dtype}* x [[buffer(0)]], "
        f"device {dtype}* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {{ y[i] = {prefix}{name}(x[i]); }}"
        for name in UNARY)
    return unary + (
        f"\nkernel void {prefix.replace('::', '_')}pow_{dtype}(device const {dtype}* x [[buffer(0)]], "
        f"device const {dtype}* p [[buffer(1)]], device {dtype}* y [[buffer(2)]], "
        f"uint i [[thread_position_in_grid]]) {{ y[i] = {prefix}pow(x[i], p[i]); }}\n")


# Safe mode: every variant for float, the unqualified (precise) one for half,
# erf and float4. Fast-math mode: the float variants only (they pick the mode's).
SOURCE = (HEADER + ERF_SOURCE
          + "\nkernel void erf_float(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],"
          + " uint i [[thread_position_in_grid]]) { y[i] = erf(x[i]); }\n"
          + "kernel void vec4_float(device const float4* x [[buffer(0)]], device float4* y [[buffer(1)]],"
          + " uint i [[thread_position_in_grid]]) { float4 v = x[i];"
          + " y[5 * i] = exp(v); y[5 * i + 1] = log2(v); y[5 * i + 2] = sin(v); y[5 * i + 3] = tanh(v);"
          + " y[5 * i + 4] = pow(v, v.wzyx); }\n"
          + _kernels("", "half") + "".join(_kernels(prefix, "float") for prefix in ["", "precise::", "fast::"]))
FAST_SOURCE = HEADER + "".join(_kernels(prefix, "float") for prefix in ["", "precise::", "fast::"])


@pytest.fixture(scope="module")
def lib():
    return pm.compile(SOURCE)


@pytest.fixture(scope="module")
def fast_lib():
    """Fast-math mode: unqualified calls are the fast variants."""
    return pm.compile(FAST_SOURCE, fast_math=True)


def _run(lib, kernel, *inputs):
    out = pm.empty(len(inputs[0]), inputs[0].dtype)
    getattr(lib, kernel)(*[pm.asarray(a) for a in inputs], out, grid=len(inputs[0]))
    return out.numpy()


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 1e-45, -1e-45, 1e-40, -1e-40,
                    1.1754942e-38, 1.1754944e-38, 3.4028235e38, -3.4028235e38,
                    # exp / exp2 overflow and underflow edges
                    88.72283, 88.72284, -87.33654, -103.97208, -103.97209, -104.0, 127.99999, 128.0,
                    -126.0, -149.0, -149.5, -150.0, -150.1,
                    # sin / cos / tan: near multiples of pi/2, huge arguments
                    1.5707964, -1.5707964, 3.1415927, 4.712389, 6.2831855, 1e5, 1e10, 1e20, 1e30,
                    16367173.0 * 2.0 ** 72, 8e37, 1e38, -1e38], np.float32)


def float_sample(seed=0, per_exponent=48):
    """Every exponent (both signs, subnormals included) with random mantissas, plus SPECIAL."""
    rng = np.random.default_rng(seed)
    exponents = np.repeat(np.arange(256, dtype=np.uint32), per_exponent)
    mantissas = rng.integers(0, 1 << 23, len(exponents), dtype=np.uint32)
    signs = rng.integers(0, 2, len(exponents), dtype=np.uint32)
    bits = (signs << 31) | (exponents << 23) | mantissas
    # also every mantissa pattern's neighbourhood of 1 (log near 1, exp near 0)
    near_one = (np.uint32(0x3f800000) + rng.integers(-(1 << 16), 1 << 16, 2048)).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), near_one.view(np.float32), SPECIAL])


def all_halfs():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


# ---------------------------------------------------------------------------
# ULP error
# ---------------------------------------------------------------------------
def ulp(ref, dtype):
    """Spacing of dtype at |ref| (float64), the spec's ulp."""
    info = np.finfo(dtype)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.abs(ref)))
    e = np.clip(np.nan_to_num(e, neginf=info.minexp), info.minexp, info.maxexp - 1)
    return np.exp2(e - info.nmant)


def ulp_error(got, ref, dtype):
    """|got - ref| in ulps of dtype at ref; infinities count as 2^(maxexp) (where
    rounding overflows), so an overflow to inf near the largest float is measured."""
    top = 2.0 ** np.finfo(dtype).maxexp
    with np.errstate(invalid="ignore"):
        g = np.clip(got.astype(np.float64), -top, top)
        r = np.clip(ref, -top, top)
        err = np.abs(g - r) / ulp(r, dtype)
    both_nan = np.isnan(got) & np.isnan(ref)
    err = np.where(both_nan, 0.0, err)
    return np.where(np.isnan(got) != np.isnan(ref), np.inf, err)


def reference(name, *args):
    with np.errstate(all="ignore"):
        return REFERENCE[name](*[a.astype(np.float64) for a in args])


def assert_within(name, x, got, ref, bound_ulps, dtype, extra=None):
    err = ulp_error(got, ref, dtype)
    bound = np.broadcast_to(np.asarray(bound_ulps, np.float64), err.shape)
    bad = ~(err <= bound)
    if extra is not None:
        bad &= ~extra
    if bad.any():
        i = np.flatnonzero(bad)[:8]
        pytest.fail(f"{name}: {bad.sum()} of {len(x)} outside the bound; worst {np.max(err[bad]):.3g} ulp;"
                    f" x={x[i]!r} got={got[i]!r} ref={ref[i]!r} bound={bound[i]!r}")


# ---------------------------------------------------------------------------
# Precise float (table 8.1)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("prefix", ["", "precise_"])
def test_precise_float(lib, name, prefix):
    x = float_sample()
    got = _run(lib, f"{prefix}{name}_float", x)
    assert_within(prefix + name, x, got, reference(name, x), PRECISE_ULP[name], np.float32)


@pytest.fixture(scope="module")
def own_trig_lib():
    """sin / cos / tan from vmath.h's own code, as on machines without glibc's libmvec."""
    return pm.compile(HEADER + _kernels("", "float") + _kernels("", "half"), macros={"PM_LIBMVEC": "0"})


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_precise_trig_without_libmvec(own_trig_lib, name):
    x = float_sample(8)
    got = _run(own_trig_lib, f"{name}_float", x)
    assert_within(name, x, got, reference(name, x), PRECISE_ULP[name], np.float32)
    h = all_halfs()
    assert_within(name + " (half)", h, _run(own_trig_lib, f"{name}_half", h), reference(name, h), 1, np.float16)


def test_libmvec_where_glibc_has_it(lib):
    """On x86-64 with glibc >= 2.35, precise sin, cos and tan are libmvec's
    (loaded into this process with the kernel library)."""
    version = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    if platform.machine() != "x86_64" or not version or not version.startswith("glibc 2."):
        pytest.skip("libmvec is used on x86-64 glibc only")
    if tuple(int(p) for p in version.split()[1].split(".")[:2]) < (2, 35):
        pytest.skip("glibc < 2.35: vmath.h's own sin / cos / tan")
    _run(lib, "sin_float", np.ones(64, np.float32))
    with open("/proc/self/maps") as maps:
        assert "libmvec.so.1" in maps.read()


def pow_sample(seed=1):
    """Bases over the whole range and exponents from small fractions to huge
    (odd / even integers, non-integers, both signs), plus every special pair."""
    rng = np.random.default_rng(seed)
    n = 12288
    x = float_sample(seed)[:n]
    y = np.concatenate([
        (rng.standard_normal(n // 4) * 4).astype(np.float32),
        rng.integers(-40, 40, n // 4).astype(np.float32),        # integers: sign rules for x < 0
        (rng.standard_normal(n // 4) * 1e-3).astype(np.float32),
        float_sample(seed + 1)[: n // 4]])                       # any float
    specials = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan,
                         1e-45, 2.0 ** 24, 2.0 ** 24 + 2, 1e38], np.float32)
    sx, sy = np.meshgrid(specials, specials)
    return np.concatenate([x, sx.ravel()]), np.concatenate([y, sy.ravel()])


@pytest.mark.parametrize("prefix", ["", "precise_"])
def test_precise_pow(lib, prefix):
    x, y = pow_sample()
    got = _run(lib, f"{prefix}pow_float", x, y)
    assert_within(prefix + "pow", np.stack([x, y], 1), got, reference("pow", x, y), PRECISE_ULP["pow"], np.float32)


def test_precise_signed_zeros(lib):
    """Odd functions keep the sign of zero; pow's C99 special cases."""
    zeros = np.array([0.0, -0.0], np.float32)
    for name in ["sin", "tan", "tanh"]:
        assert np.array_equal(np.signbit(_run(lib, f"{name}_float", zeros)), [False, True]), name
    x = np.array([-0.0, -0.0, -0.0, -np.inf, -np.inf, -1.0, 1.0, np.nan, -8.0], np.float32)
    y = np.array([3.0, -3.0, 2.0, 3.0, -3.0, np.inf, np.nan, 0.0, 1.0 / 3.0], np.float32)
    got = _run(lib, "pow_float", x, y)
    expected = np.array([-0.0, -np.inf, 0.0, -np.inf, -0.0, 1.0, 1.0, 1.0, np.nan], np.float32)
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


# ---------------------------------------------------------------------------
# Fast float (table 8.2)
# ---------------------------------------------------------------------------
def normal_sample(seed=2):
    x = float_sample(seed)
    return x[np.isfinite(x) & ((np.abs(x) >= np.finfo(np.float32).tiny) | (x == 0))]


def flushed(got, ref):
    """Section 8.1: a subnormal result may be flushed to zero."""
    return (np.abs(ref) < np.finfo(np.float32).tiny) & (got == 0)


def fast_bound(name, x, ref):
    """Table 8.2's bound for fast `name` at x, in float ulps at ref; NaN where the
    table bounds nothing (those inputs are not tested)."""
    u = ulp(ref, np.float32)
    with np.errstate(all="ignore"):
        if name in ("exp", "exp2"):
            return 3 + np.floor(np.abs(2.0 * x))
        if name in ("log", "log2"):
            absolute, ulps = (2.0 ** -21, 3) if name == "log" else (2.0 ** -22, 2)
            inside = (x >= 0.5) & (x <= 2)
            return np.where(x > 0, np.where(inside, absolute / u, ulps), np.nan)
        if name in ("sin", "cos"):
            return np.where(np.abs(x) <= np.pi, 2.0 ** -13 / u, np.nan)
        if name == "tan":  # sin(x) * (1 / cos(x)), sin and cos within 2^-13
            s, c = np.sin(x), np.cos(x)
            d = 2.0 ** -13 * (1 / np.abs(c) + np.abs(s) / (c * c))
            return np.where(np.abs(x) <= np.pi, d / u + 2.5, np.nan)  # + reciprocal 1 ulp, product 0.5
        if name == "tanh":  # (t - 1) / (t + 1), t = exp(2x) within 3 + floor(|4x|) ulp
            t = np.exp(2.0 * x)
            dt = (3 + np.floor(np.abs(4.0 * x))) * ulp(t, np.float32)
            d = (2 * dt / (t + 1) ** 2 + ulp(t - 1, np.float32) / 2 / (t + 1)
                 + np.abs(ref) * ulp(t + 1, np.float32) / 2 / (t + 1))
            return np.where(np.abs(x) <= 40, d / u + 2.5, np.nan)  # t finite; division 2.5 ulp
    raise AssertionError(name)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("which", ["fast_", "fast-math mode "])
def test_fast_float(lib, fast_lib, name, which):
    x = normal_sample()
    if name in ("sin", "cos", "tan"):  # the bounded domain, densely
        x = np.concatenate([x, np.linspace(-np.pi, np.pi, 20001, dtype=np.float32)])
    if name == "tanh":
        x = np.concatenate([x, np.linspace(-12, 12, 20001, dtype=np.float32)])
    got = _run(lib, f"fast_{name}_float", x) if which == "fast_" else _run(fast_lib, f"{name}_float", x)
    ref = reference(name, x)
    bound = fast_bound(name, x, ref)
    # fast math may assume results are not INF (section 8.4's note): finite ones only
    tested = ~np.isnan(bound) & (np.abs(ref) <= np.finfo(np.float32).max)
    assert tested.sum() > 1000
    assert_within("fast " + name, x[tested], got[tested], ref[tested], bound[tested], np.float32,
                  extra=flushed(got, ref)[tested])
    if name in ("sin", "cos", "tan") or name == "tanh":
        assert np.all(np.abs(got[np.isfinite(x) & ~tested]) <= (np.inf if name == "tan" else 1))
    if name == "tanh":  # saturates where the formula's t overflows
        assert np.array_equal(got[np.abs(x) >= 9], np.sign(x[np.abs(x) >= 9]))


def test_fast_pow(lib):
    """exp2(y * log2(x)) for x > 0: log2's error times |y|, the product's rounding,
    then exp2's bound at t = y log2 x."""
    rng = np.random.default_rng(3)
    x = normal_sample(4)
    x = np.abs(x[x != 0])
    y = (rng.standard_normal(len(x)) * 3).astype(np.float32)
    with np.errstate(all="ignore"):
        l = np.log2(x.astype(np.float64))
        t = y * l
        ok = np.abs(t) < 126  # a normal result
    x, y, l, t = x[ok], y[ok], l[ok], t[ok]
    got = _run(lib, "fast_pow_float", x, y)
    ref = reference("pow", x, y)
    log_err = np.where((x >= 0.5) & (x <= 2), 2.0 ** -22, 2 * ulp(l, np.float32))
    dt = np.abs(y) * log_err + ulp(t, np.float32) / 2
    bound = math.log(2) * dt * np.abs(ref) / ulp(ref, np.float32) + 3 + np.floor(np.abs(2 * t))
    assert_within("fast pow", np.stack([x, y], 1), got, ref, bound, np.float32)


# Inputs where the fast code gives other results than the precise code:
# arguments past the fast reduction's range, subnormals (fast log ignores
# them), pow in float rather than double. (exp, exp2, tanh differ only for NaN.)
DIFFERENT = {"sin": np.linspace(1e6, 1e7, 1000, dtype=np.float32),
             "log": np.linspace(1e-40, 1e-39, 1000, dtype=np.float32),
             "pow": np.linspace(0.5, 40, 1000, dtype=np.float32)}
DIFFERENT.update(cos=DIFFERENT["sin"], tan=DIFFERENT["sin"], log2=DIFFERENT["log"])


@pytest.mark.parametrize("name", UNARY + ["pow"])
def test_mode_picks_the_variant(lib, fast_lib, name):
    """Unqualified calls are precise:: in safe mode and fast:: in fast-math mode
    (compared within one library: -ffast-math changes the code around them)."""
    for x in [np.linspace(0.25, 4, 1000, dtype=np.float32), DIFFERENT.get(name)]:
        if x is None:
            continue
        args = (x, x[::-1].copy()) if name == "pow" else (x,)
        assert np.array_equal(_run(lib, f"{name}_float", *args), _run(lib, f"precise_{name}_float", *args))
        assert np.array_equal(_run(fast_lib, f"{name}_float", *args), _run(fast_lib, f"fast_{name}_float", *args))
    if name in DIFFERENT:
        x = DIFFERENT[name]
        args = (x, x[::-1].copy()) if name == "pow" else (x,)
        assert not np.array_equal(_run(fast_lib, f"{name}_float", *args), _run(fast_lib, f"precise_{name}_float", *args))


# ---------------------------------------------------------------------------
# Half (table 8.3): every half value
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", UNARY)
def test_precise_half_exhaustive(lib, name):
    x = all_halfs()
    got = _run(lib, f"{name}_half", x)
    assert_within(name + " (half)", x, got, reference(name, x), 1, np.float16)


def test_precise_half_pow(lib):
    rng = np.random.default_rng(5)
    x = all_halfs()
    y = rng.choice(np.array([0.5, -0.5, 2, -2, 3, -3, 1.5, 0.1, 7.25, -4.75], np.float16), len(x))
    got = _run(lib, "pow_half", x, y)
    assert_within("pow (half)", np.stack([x, y], 1), got, reference("pow", x, y), 1, np.float16)


# ---------------------------------------------------------------------------
# Vectors go through the same functions; erf (the kernel's own)
# ---------------------------------------------------------------------------
def test_float4_matches_scalar(lib):
    x = float_sample(6)[: 4 * 1024]
    x4 = x.reshape(-1, 4)
    out = pm.empty(5 * len(x), np.float32)
    lib.vec4_float(pm.asarray(x), out, grid=len(x4))
    got = out.numpy().reshape(-1, 5, 4)
    p = x4[:, ::-1].ravel().copy()
    for k, (kernel, args) in enumerate([("exp_float", (x,)), ("log2_float", (x,)), ("sin_float", (x,)),
                                        ("tanh_float", (x,)), ("pow_float", (x, p))]):
        assert np.array_equal(got[:, k].ravel(), _run(lib, kernel, *args), equal_nan=True), kernel


def test_erf(lib):
    x = np.concatenate([float_sample(7), np.linspace(-5, 5, 20001, dtype=np.float32)])
    got = _run(lib, "erf_float", x)
    ref = np.array([math.erf(v) if math.isfinite(v) else math.copysign(1.0, v) if math.isinf(v) else math.nan
                    for v in x.tolist()])
    assert_within("erf", x, got, ref, 4, np.float32)


@pytest.mark.parametrize("n", [1, 31, 1000, 4097])
def test_sizes(lib, n):
    """Sizes that leave partial threadgroups and SIMD remainders of the vector loop."""
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32) * 20
    for name in UNARY:
        got = _run(lib, f"{name}_float", x)
        assert_within(name, x, got, reference(name, x), PRECISE_ULP[name], np.float32)

