"""The Python Array API standard's namespace on pymetal: completeness, signatures,
the inspection API, float64 policy, complex64, the new functions (unique_*, isin,
diff, broadcast_shapes, nextafter, real/imag/conj) and the fft extension,
against NumPy on random data."""

import inspect

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import optable as _ops
from arraytest import ALL, FLOATS, INTS, assert_same, dtype_id, random

C64 = np.dtype(np.complex64)
F32 = np.dtype(np.float32)

# The standard's main namespace (2024.12): 134 functions (the issue says 133; the standard
# lists these), plus __array_namespace_info__, constants and dtypes.
# from_dlpack and the linalg extension are built on the `linalg` branch (issue 12's other half).
SPEC_FUNCTIONS = """
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones ones_like tril triu zeros
zeros_like astype can_cast finfo iinfo isdtype result_type abs acos acosh add asin asinh atan atan2 atanh
bitwise_and bitwise_left_shift bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign
cos cosh divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf isnan less
less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or logical_xor maximum minimum multiply
negative nextafter not_equal positive pow real reciprocal remainder round sign signbit sin sinh square sqrt
subtract tan tanh trunc take take_along_axis matmul matrix_transpose tensordot vecdot broadcast_arrays
broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape roll squeeze stack tile unstack argmax
argmin count_nonzero nonzero searchsorted where unique_all unique_counts unique_inverse unique_values argsort
sort cumulative_prod cumulative_sum max mean min prod std sum var all any diff broadcast_shapes
""".split()
OTHER_BRANCH = {"from_dlpack"}
FFT_FUNCTIONS = ("fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift ifftshift").split()
SHAPES = [(0,), (1,), (257,), (3, 5), (2, 3, 4), (4, 0, 3)]


def test_namespace_is_complete():
    assert len(SPEC_FUNCTIONS) == 134
    missing = [n for n in SPEC_FUNCTIONS if n not in OTHER_BRANCH and not callable(getattr(pm, n, None))]
    assert missing == []
    assert pm.__array_api_version__ == "2024.12"
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        assert hasattr(pm, name)
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64", "complex64", "complex128"):
        t = getattr(pm, name)  # NumPy's scalar type, as NumPy's namespace has (callable: pm.float64(2.5))
        assert isinstance(t, type) and issubclass(t, np.generic) and np.dtype(t) == t and t == np.dtype(name)
    assert [n for n in FFT_FUNCTIONS if not callable(getattr(pm.fft, n, None))] == []


def _compatible(spec, ours):
    """Every parameter of the spec's signature can be passed as the spec passes it."""
    theirs = inspect.signature(spec).parameters
    mine = inspect.signature(ours).parameters
    P = inspect.Parameter
    problems = []
    for name, p in theirs.items():
        if p.kind == P.VAR_POSITIONAL:
            if not any(q.kind == P.VAR_POSITIONAL for q in mine.values()):
                problems.append("*%s" % name)
            continue
        if p.kind == P.POSITIONAL_ONLY:
            pos = [q for q in mine.values() if q.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
            idx = list(theirs).index(name)
            if idx >= len(pos):
                problems.append(name)
            continue
        q = mine.get(name)
        if q is None or q.kind not in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD):
            problems.append(name)
        elif p.default is not P.empty and q.default is P.empty:
            problems.append("%s (no default)" % name)
    return problems


def test_signatures_match_the_standard():
    strict = pytest.importorskip("array_api_strict")
    bad = {}
    for name in SPEC_FUNCTIONS:
        if name in OTHER_BRANCH:
            continue
        problems = _compatible(getattr(strict, name), getattr(pm, name))
        if problems:
            bad[name] = problems
    for name in FFT_FUNCTIONS:
        problems = _compatible(getattr(strict.fft, name), getattr(pm.fft, name))
        if problems:
            bad["fft." + name] = problems
    assert bad == {}


def test_array_namespace_and_info(dev):
    x = pm.asarray([1.0, 2.0])
    assert x.__array_namespace__() is pm
    assert x.__array_namespace__(api_version="2023.12") is pm
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")
    info = pm.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    assert info.default_device() is dev and info.devices() == [dev] and x.device is dev
    assert info.default_dtypes(device=dev) == {"real floating": pm.float32, "complex floating": pm.complex64,
                                               "integral": pm.int64, "indexing": pm.int64}
    all_dt = info.dtypes()
    assert "float64" not in all_dt and "complex128" not in all_dt  # no double precision on the device
    assert set(all_dt) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                           "float32", "complex64"}
    assert set(info.dtypes(kind="real floating")) == {"float32"}
    assert set(info.dtypes(kind="complex floating")) == {"complex64"}
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {"bool", "uint8", "uint16", "uint32", "uint64"}
    assert set(info.dtypes(kind="numeric")) == set(all_dt) - {"bool"}
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="gpu7")


def test_float64_policy(dev, float64_error):
    # dtype objects and the pure data-type functions know float64; arrays refuse it (policy "error")
    assert pm.result_type(pm.float32, pm.float64) == pm.float64
    assert pm.result_type(pm.complex64, pm.float64) == pm.complex128
    assert pm.can_cast(pm.float32, pm.float64) and not pm.can_cast(pm.float64, pm.float32)
    assert pm.finfo(pm.float64).bits == 64 and pm.finfo(pm.complex128).dtype == pm.float64
    assert pm.isdtype(pm.float64, "real floating") and pm.isdtype(pm.complex128, "complex floating")
    with pytest.raises(TypeError, match="float64"):
        pm.zeros(3, dtype=pm.float64)
    with pytest.raises(TypeError, match="complex128"):
        pm.asarray(np.zeros(3, np.complex128))
    # Python data without a dtype: the device's defaults
    assert pm.asarray([1.5]).dtype == F32 and pm.asarray([1 + 2j]).dtype == C64
    # integer input to float functions: float32
    assert pm.exp(pm.arange(3)).dtype == F32 and pm.mean(pm.arange(3)).dtype == F32


def test_complex_dtype_functions():
    assert pm.result_type(pm.complex64, pm.float32) == C64
    assert pm.result_type(pm.complex64, pm.int64, pm.bool) == C64
    assert pm.result_type(pm.float32, 1j) == C64 and pm.result_type(1j) == C64
    assert pm.can_cast(pm.float32, pm.complex64) and not pm.can_cast(pm.complex64, pm.float32)
    f = pm.finfo(pm.complex64)
    assert f.dtype == F32 and f.bits == 32 and f.eps == np.finfo(np.float32).eps
    assert pm.isdtype(pm.complex64, "numeric") and not pm.isdtype(pm.complex64, "real floating")
    assert pm.isdtype(pm.complex64, ("integral", "complex floating"))
    with pytest.raises(TypeError):
        pm.isdtype("float32", "numeric")  # a dtype object, not a string


# ---- complex64 ---------------------------------------------------------------------------------

def crandom(rng, shape, lo=-3, hi=3):
    return (random(rng, shape, F32, lo, hi) + 1j * random(rng, shape, F32, lo, hi)).astype(C64)


COMPLEX_UNARY = [op.name for op in _ops.UNARY.values() if "c" in op.kinds]
# Functions whose result is computed from exp/log/trig: single-precision tolerance.
_APPROX = {"sqrt", "reciprocal", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
           "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sign", "abs"}


def test_complex_unary_list():
    assert set(COMPLEX_UNARY) >= {"abs", "negative", "positive", "sign", "square", "sqrt", "reciprocal", "exp",
                                  "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
                                  "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "round", "isnan",
                                  "isinf", "isfinite", "conj", "real", "imag"}


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary(dev, rng, name):
    op = _ops.UNARY[name]
    ref = {"reciprocal": lambda z: 1 / z, "round": lambda z: np.round(z)}.get(name, getattr(np, op.numpy or name))
    for shape in SHAPES + [(5000,)]:
        z = crandom(rng, shape)
        x = pm.asarray(z)
        got = getattr(pm, name)(x)
        want = np.asarray(ref(z))
        if want.dtype == np.complex128:
            want = want.astype(C64)
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        g = got.numpy()
        if want.dtype == C64:
            tol = 3e-5 if name in _APPROX else 0
            scale = np.maximum(np.abs(want), 1)
            assert np.all(np.abs(g - want) <= tol * scale), name
        else:
            np.testing.assert_allclose(g, want, rtol=3e-6 if name in _APPROX else 0)
        # a strided view takes the general kernel
        if len(shape) == 2:
            assert_same(getattr(pm, name)(x.T), getattr(pm, name)(x).T.numpy(), rtol=0, atol=0)


def test_complex_special_values(dev):
    z = np.array([complex(np.inf, 0), complex(0, np.inf), complex(np.nan, 1), complex(1, np.nan), 0j,
                  complex(-0.0, 0.0)], C64)
    x = pm.asarray(z)
    np.testing.assert_array_equal(pm.isnan(x).numpy(), np.isnan(z))
    np.testing.assert_array_equal(pm.isinf(x).numpy(), np.isinf(z))
    np.testing.assert_array_equal(pm.isfinite(x).numpy(), np.isfinite(z))
    np.testing.assert_array_equal(pm.abs(x).numpy(), np.abs(z))
    assert pm.sqrt(pm.asarray(np.array([complex(-4, 0)], C64))).numpy()[0] == 2j
    assert pm.exp(pm.asarray(np.array([complex(1, 0)], C64))).numpy()[0].imag == 0
    w = pm.sqrt(pm.asarray(np.array([complex(3, np.inf)], C64))).numpy()[0]
    assert w.real == np.inf and w.imag == np.inf


# Where C99 Annex G leaves the sign of an infinite part unspecified (sinh(+inf + i inf) = +-inf + i NaN, ...).
_UNSPECIFIED_SIGN = {"sin", "sinh", "asin", "acos"}


@pytest.mark.parametrize("name", [n for n in COMPLEX_UNARY if n not in ("conj", "real", "imag", "round")])
def test_complex_special_values_grid(dev, name):
    # every pair of 0, -0, 1, -1, 2.5, inf, -inf, NaN as (real, imaginary): NumPy follows C99 Annex G
    vals = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]
    z = np.array([complex(a, b) for a in vals for b in vals], C64)
    op = _ops.UNARY[name]
    with np.errstate(all="ignore"):
        want = (1 / z) if name == "reciprocal" else getattr(np, op.numpy or name)(z)
    if name == "sign":  # the standard: NaN + NaN j if a part is NaN (NumPy keeps an infinite part's direction)
        want = np.where(np.isnan(z.real) | np.isnan(z.imag), np.complex64(complex(np.nan, np.nan)), want)
    if name == "expm1":  # the standard where NumPy's exp(z) - 1 gives NaN parts: expm1(x) + yj on the
        axis = want.copy()  # real axis, -1 + 0j and inf + NaN j for infinite real parts
        axis.real, axis.imag = np.expm1(z.real), z.imag
        want = np.where(z.imag == 0, axis, want)
        edge = np.isinf(z.real) & ~np.isfinite(z.imag)
        want = np.where(edge, np.where(z.real > 0, np.complex64(complex(np.inf, np.nan)), np.complex64(-1)), want)
    got = getattr(pm, name)(pm.asarray(z)).numpy()
    assert got.dtype == want.dtype
    parts = [(got, want)] if want.dtype.kind != "c" else [(got.real, want.real), (got.imag, want.imag)]
    for g, w in parts:
        if name in _UNSPECIFIED_SIGN:
            g, w = np.where(np.isinf(w), np.abs(g), g), np.where(np.isinf(w), np.abs(w), w)
        same = (g == w) | (np.isnan(g) & np.isnan(w)) | np.isclose(g, w, rtol=1e-5, atol=1e-6)
        assert same.all(), [(z[i], got[i], want[i]) for i in np.nonzero(~same)[0][:5]]
    # signed zeros on the branch cuts pick the side
    for f, v in (("asinh", complex(-0.0, 2.5)), ("atan", complex(-0.0, 2.5)), ("acosh", complex(-2.5, -0.0)),
                 ("atanh", complex(2.5, -0.0)), ("sqrt", complex(-4, -0.0)), ("log", complex(-1, -0.0))):
        g = getattr(pm, f)(pm.asarray(np.array([v], C64))).numpy()[0]
        w = getattr(np, {"asinh": "arcsinh", "atan": "arctan", "acosh": "arccosh", "atanh": "arctanh"}.get(f, f))(
            np.complex64(v))
        assert np.isclose(g, w, rtol=1e-5), (f, v, g, w)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "pow", "equal", "not_equal"])
def test_complex_binary(dev, rng, name):
    ref = getattr(np, _ops.BINARY[name].numpy or name)
    for sa, sb in [((0,), (0,)), ((1,), (1,)), ((257,), (257,)), ((3, 5), (5,)), ((3, 1), (1, 4)), ((5, 4), ())]:
        a, b = crandom(rng, sa), crandom(rng, sb)
        if name in ("equal", "not_equal") and a.size and b.size:
            a.flat[0] = b.flat[0]
        got = getattr(pm, name)(pm.asarray(a), pm.asarray(b))
        want = ref(a, b)
        if want.dtype == bool:
            assert_same(got, want, dtype=bool)
        else:
            assert got.dtype == C64
            scale = np.maximum(np.abs(want), 1)
            assert np.all(np.abs(got.numpy() - want) <= 3e-5 * scale), name


def test_complex_mixed_operands_and_operators(dev, rng):
    z = crandom(rng, (4, 6))
    f = random(rng, (6,), F32)
    i = random(rng, (4, 1), np.dtype(np.int32))
    x = pm.asarray(z)
    for got, want in [(x + pm.asarray(f), z + f), (pm.asarray(f) * x, f * z), (x - pm.asarray(i), z - i),
                      (x + 2j, z + 2j), (1.5 * x, 1.5 * z), (x / 2, z / 2), (-x, -z), (x ** 2, z ** 2),
                      (x == x, z == z), (pm.asarray(f) + 1j, f + 1j)]:
        got_np = got.numpy()
        assert got_np.dtype == np.asarray(want).dtype or (got_np.dtype == C64 and np.asarray(want).dtype.kind == "c")
        np.testing.assert_allclose(got_np, want, rtol=2e-6, atol=1e-6)
    assert abs(x).dtype == F32
    y = pm.asarray(z.copy())
    y += 1j
    np.testing.assert_allclose(y.numpy(), z + 1j)
    assert complex(pm.asarray(np.complex64(1 + 2j))) == 1 + 2j
    assert_same(pm.full((2, 2), 1 - 1j), np.full((2, 2), 1 - 1j, C64), dtype=C64)
    assert_same(pm.where(pm.asarray([True, False]), pm.asarray(z[0, :2]), 0j), np.where([True, False], z[0, :2], 0j))


def test_complex_conversions(dev, rng):
    z = crandom(rng, (3, 7))
    for dt in ALL:
        a = random(rng, (3, 7), dt, 0, 5)
        want = a.astype(np.float32).astype(C64) if dt in FLOATS[1:] else a.astype(C64)
        assert_same(pm.astype(pm.asarray(a), pm.complex64), want, dtype=C64, rtol=0, atol=0)
    with pytest.raises(TypeError, match="complex"):
        pm.astype(pm.asarray(z), pm.float32)  # the standard does not define it: use real/abs
    assert_same(pm.astype(pm.asarray(z), pm.bool), z != 0)
    assert_same(pm.asarray(z)[1:, ::2], z[1:, ::2], dtype=C64, rtol=0, atol=0)
    assert_same(pm.reshape(pm.asarray(z).T, (21,)), z.T.reshape(21), dtype=C64, rtol=0, atol=0)


@pytest.mark.parametrize("shape,axis", [((0,), None), ((1,), None), ((1000,), None), ((3, 257), 1),
                                        ((40, 3), 0), ((4, 5, 6), (0, 2)), ((100000,), None)])
def test_complex_reductions(dev, rng, shape, axis):
    z = crandom(rng, shape, -1, 1)
    x = pm.asarray(z)
    for name in ("sum", "mean", "prod"):
        if name == "mean" and z.size == 0:
            continue
        got = getattr(pm, name)(x, axis=axis)
        zz = z if name != "prod" else (z / np.abs(z)).astype(C64)  # unit moduli: no under/overflow
        if name == "prod":
            got = pm.prod(pm.asarray(zz), axis=axis)
        want = getattr(np, name)(zz.astype(np.complex128), axis=axis)
        assert got.dtype == C64
        n = max(1, z.size)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4 + 1e-6 * n ** 0.5, atol=1e-5 * n ** 0.5)
    assert_same(pm.any(x, axis=axis), np.any(z, axis=axis))
    assert_same(pm.all(x, axis=axis), np.all(z, axis=axis))
    for name in ("max", "min", "argmax"):
        with pytest.raises(TypeError, match="complex"):
            getattr(pm, name)(x)
    if z.size:  # NumPy's var of complex (the standard leaves it undefined): real, mean |x - mean|^2
        np.testing.assert_allclose(pm.var(x, axis=axis).numpy(), np.var(z.astype(np.complex128), axis=axis),
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((1, 1), (1, 1)), ((2, 3, 70), (70, 9)), ((5,), (5, 2)),
                                   ((4, 0), (0, 3)), ((6,), (6,))])
def test_complex_matmul_and_vecdot(dev, rng, sa, sb):
    a, b = crandom(rng, sa, -1, 1), crandom(rng, sb, -1, 1)
    got = pm.matmul(pm.asarray(a), pm.asarray(b))
    assert got.dtype == C64
    np.testing.assert_allclose(got.numpy(), np.matmul(a.astype(np.complex128), b.astype(np.complex128)),
                               rtol=1e-5, atol=1e-5 * max(1, sa[-1]) ** 0.5)
    r = random(rng, sb, F32, -1, 1)  # mixed: real operand promoted
    np.testing.assert_allclose((pm.asarray(a) @ pm.asarray(r)).numpy(), a.astype(np.complex128) @ r,
                               rtol=1e-5, atol=1e-5 * max(1, sa[-1]) ** 0.5)
    v, w = crandom(rng, (3, 7)), crandom(rng, (7,))
    np.testing.assert_allclose(pm.vecdot(pm.asarray(v), pm.asarray(w)).numpy(),
                               np.vecdot(v.astype(np.complex128), w), rtol=1e-5, atol=1e-5)


def test_complex_scans_creation_and_order_errors(dev, rng):
    z = crandom(rng, (4, 33))
    for axis in (0, 1):
        for initial in (False, True):
            want = np.cumsum(z.astype(np.complex128), axis=axis)
            if initial:
                pad = [(0, 0), (0, 0)]
                pad[axis] = (1, 0)
                want = np.pad(want, pad)
            got = pm.cumulative_sum(pm.asarray(z), axis=axis, include_initial=initial)
            assert got.dtype == C64
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    for num, endpoint in ((5, True), (4, False), (1, True), (0, True)):
        got = pm.linspace(1 - 2j, 3 + 4j, num, endpoint=endpoint)
        assert got.dtype == C64
        np.testing.assert_allclose(got.numpy(), np.linspace(1 - 2j, 3 + 4j, num, endpoint=endpoint), rtol=1e-6)
    u = (z / np.abs(z)).astype(C64)  # unit moduli: long products neither under- nor overflow
    for axis in (0, 1):
        got = pm.cumulative_prod(pm.asarray(u), axis=axis)
        np.testing.assert_allclose(got.numpy(), np.cumprod(u.astype(np.complex128), axis=axis), rtol=1e-5, atol=2e-5)
    got = pm.cumulative_prod(pm.asarray(z[:, :5]), axis=1, include_initial=True)
    np.testing.assert_allclose(got.numpy()[:, 1:], np.cumprod(z[:, :5].astype(np.complex128), axis=1), rtol=2e-5)
    np.testing.assert_allclose(got.numpy()[:, 0], 1)
    x = pm.asarray(z)
    for f in (lambda v: pm.clip(v, 0, 1), lambda v: pm.searchsorted(v[0], v[1])):
        with pytest.raises(TypeError, match="complex"):
            f(x)
    # NumPy's order of complex numbers (the standard leaves it unspecified): real part, then imaginary
    np.testing.assert_array_equal(pm.sort(x).numpy(), np.sort(z))
    np.testing.assert_array_equal(pm.argsort(x).numpy(), np.argsort(z, kind="stable"))


def test_complex_unique(dev, rng):
    z = crandom(rng, (300,), -2, 2)
    z = np.round(z)  # repeats
    z[[3, 7]] = complex(np.nan, 1)
    for got_all in (pm.unique_all(pm.asarray(z.reshape(20, 15))),):
        values, index, inverse, counts = np.unique(z, return_index=True, return_inverse=True,
                                                   return_counts=True, equal_nan=False)
        # NumPy orders complex values by real then imaginary part too; NaNs last, each its own value
        assert_same(got_all.values, values, dtype=C64, rtol=0, atol=0)
        assert_same(got_all.indices, index)
        assert_same(got_all.counts, counts)
        np.testing.assert_array_equal(got_all.values.numpy()[got_all.inverse_indices.numpy()], z.reshape(20, 15))
    assert_same(pm.unique_values(pm.asarray(z)), values, rtol=0, atol=0)


# ---- special values of the real functions -------------------------------------------------------

_SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-40, 3e38], F32)
_NOT_STANDARD = {"relu", "sigmoid", "softplus", "silu", "gelu", "gelu_tanh", "erf", "rsqrt", "leaky_relu", "exp2"}


def _same_special(g, w):
    """Equal including the sign of zero (NaN equals NaN); finite non-zero results within float32 rounding."""
    if g.dtype == bool:
        return g == w
    exact = (g == w) & (np.signbit(g) == np.signbit(w))
    return exact | (np.isnan(g) & np.isnan(w)) | (np.isclose(g, w, rtol=3e-6, atol=0) & (g != 0))


@pytest.mark.parametrize("name", [n for n, op in _ops.UNARY.items() if "f" in op.kinds and n not in _NOT_STANDARD])
def test_real_special_values_unary(dev, name):
    op = _ops.UNARY[name]
    with np.errstate(all="ignore"):
        want = (1 / _SPECIAL) if name == "reciprocal" else getattr(np, op.numpy or name)(_SPECIAL)
    got = getattr(pm, name)(pm.asarray(_SPECIAL)).numpy()
    ok = _same_special(got, want)
    assert ok.all(), [(_SPECIAL[i], got[i], want[i]) for i in np.nonzero(~ok)[0][:5]]


@pytest.mark.parametrize("name", [n for n, op in _ops.BINARY.items() if "f" in op.kinds and n not in _NOT_STANDARD])
def test_real_special_values_binary(dev, name):
    # every pair of special values (signed zeros, infinities, NaN, a subnormal, near-overflow)
    op = _ops.BINARY[name]
    a, b = np.repeat(_SPECIAL, _SPECIAL.size), np.tile(_SPECIAL, _SPECIAL.size)
    with np.errstate(all="ignore"):
        want = getattr(np, op.numpy or name)(a, b)
        if name == "floor_divide":  # the standard with one infinite operand: inf // 2 = inf, 3 // -inf = -0
            want = np.where(np.isinf(a) != np.isinf(b), a / b, want)
    got = getattr(pm, name)(pm.asarray(a), pm.asarray(b)).numpy()
    ok = _same_special(got, want)
    assert ok.all(), [(a[i], b[i], got[i], want[i]) for i in np.nonzero(~ok)[0][:5]]


# ---- new functions against NumPy ---------------------------------------------------------------

@pytest.mark.parametrize("dt", [F32, np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.float16), np.dtype(bool)],
                         ids=dtype_id)
def test_unique_all(dev, rng, dt):
    for shape in [(0,), (1,), (300,), (7, 9), (2, 0)]:
        a = random(rng, shape, dt, 0, 12)
        if dt.kind == "f" and a.size > 3:
            a.flat[[0, 2]] = np.nan
        res = pm.unique_all(pm.asarray(a))
        values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                                   return_counts=True, equal_nan=False)
        assert_same(res.values, values, dtype=dt, rtol=0, atol=0)
        assert_same(res.indices, index, dtype=np.int64)
        assert_same(res.counts, counts, dtype=np.int64)
        assert res.inverse_indices.shape == a.shape and res.inverse_indices.dtype == np.int64
        inv = res.inverse_indices.numpy()
        np.testing.assert_array_equal(res.values.numpy()[inv], a)  # NaNs: each one its own value
        c = pm.unique_counts(pm.asarray(a))
        assert_same(c.values, values, rtol=0, atol=0)
        assert_same(c.counts, counts)
        i = pm.unique_inverse(pm.asarray(a))
        assert_same(i.values, values, rtol=0, atol=0)
        np.testing.assert_array_equal(i.inverse_indices.numpy(), inv)


@pytest.mark.parametrize("dt", [F32, np.dtype(np.int64), np.dtype(np.int8)], ids=dtype_id)
def test_isin(dev, rng, dt):
    for sa, sb in [((0,), (3,)), ((5,), (0,)), ((1,), (1,)), ((300,), (50,)), ((4, 6), (2, 3))]:
        a, b = random(rng, sa, dt, 0, 40), random(rng, sb, dt, 0, 40)
        assert_same(pm.isin(pm.asarray(a), pm.asarray(b)), np.isin(a, b))
        assert_same(pm.isin(pm.asarray(a), pm.asarray(b), invert=True), np.isin(a, b, invert=True))


@pytest.mark.parametrize("dt", [F32, np.dtype(np.int32), np.dtype(np.uint16), np.dtype(bool)], ids=dtype_id)
def test_diff(dev, rng, dt):
    for shape, axis, n in [((1,), -1, 1), ((300,), 0, 1), ((300,), 0, 3), ((4, 7), 0, 2), ((4, 7), -1, 1),
                           ((2, 3, 5), 1, 1), ((5,), 0, 0), ((3, 0), 0, 1), ((2,), 0, 4)]:
        a = random(rng, shape, dt, 0, 50)
        assert_same(pm.diff(pm.asarray(a), axis=axis, n=n), np.diff(a, axis=axis, n=n), dtype=dt)
    a = random(rng, (3, 4), dt, 0, 50)
    p, q = random(rng, (3, 1), dt, 0, 50), random(rng, (3, 2), dt, 0, 50)
    assert_same(pm.diff(pm.asarray(a), prepend=pm.asarray(p), append=pm.asarray(q)),
                np.diff(a, prepend=p, append=q))
    with pytest.raises(ValueError):
        pm.diff(pm.asarray(np.float32(1)))


def test_broadcast_shapes():
    for shapes in [[(3, 1), (1, 4)], [(2, 1, 5), (7, 1), ()], [(0,), (1,)], [(4,)], []]:
        assert pm.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    with pytest.raises(ValueError):
        pm.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize("dt", FLOATS, ids=dtype_id)
def test_nextafter(dev, rng, dt):
    for shape in [(0,), (1,), (257,), (3, 5)]:
        a, b = random(rng, shape, dt, -3, 3), random(rng, shape, dt, -3, 3)
        if a.size > 2:
            a.flat[0], b.flat[0] = 0, -1
            a.flat[1] = b.flat[1]
        got = pm.nextafter(pm.asarray(a), pm.asarray(b)).numpy()
        if dt == np.float32 or dt == np.float16:
            np.testing.assert_array_equal(got, np.nextafter(a, b))
        else:  # bfloat16: one step in the bits, towards b
            bits, gbits = a.view(np.uint16).astype(np.int64), got.view(np.uint16).astype(np.int64)
            same = a == b
            assert np.all(np.abs(gbits - bits)[~same & (a != 0)] == 1)
            assert np.all(np.sign(got.astype(np.float32) - a.astype(np.float32))[~same]
                          == np.sign(b.astype(np.float32) - a.astype(np.float32))[~same])
    assert np.isnan(pm.nextafter(pm.asarray([np.nan]), pm.asarray([1.0])).numpy()[0])


@pytest.mark.parametrize("dt", ALL, ids=dtype_id)
def test_real_imag_conj_of_real_arrays(dev, rng, dt):
    a = random(rng, (4, 5), dt, 0, 9)
    if dt == np.bool_:
        for f in (pm.real, pm.imag, pm.conj):
            with pytest.raises(TypeError):
                f(pm.asarray(a))
        return
    assert_same(pm.real(pm.asarray(a)), a, dtype=dt, rtol=0, atol=0)
    assert_same(pm.imag(pm.asarray(a)), np.zeros_like(a), dtype=dt, rtol=0, atol=0)
    assert_same(pm.conj(pm.asarray(a)), a, dtype=dt, rtol=0, atol=0)
    assert_same(np.conjugate(pm.asarray(a)), a, dtype=dt, rtol=0, atol=0)  # NumPy's ufunc runs the kernel


@pytest.mark.parametrize("dt", INTS, ids=dtype_id)
def test_rounding_functions_keep_integers(dev, rng, dt):
    a = random(rng, (5, 7), dt, -100, 100)
    a.flat[0] = np.iinfo(dt).max  # int64: 2**63 - 1 would not survive a trip through float32
    for name in ("floor", "ceil", "trunc", "round"):
        assert_same(getattr(pm, name)(pm.asarray(a)), a, dtype=dt)
        assert_same(getattr(pm, name)(pm.asarray(a)[:, ::2]), a[:, ::2], dtype=dt)
    for name, want in (("isnan", False), ("isinf", False), ("isfinite", True)):
        assert_same(getattr(pm, name)(pm.asarray(a)), np.full(a.shape, want))


def test_creation_signatures_accept_the_standard_keywords(dev):
    x = pm.ones((2, 3))
    assert pm.empty_like(x, dtype=pm.int32).dtype == np.int32
    assert_same(pm.full_like(x, 7, dtype=pm.int8), np.full((2, 3), 7, np.int8))
    assert_same(pm.asarray([1, 2], dtype=pm.uint8, copy=True), np.array([1, 2], np.uint8))
    assert_same(pm.zeros_like(x), np.zeros((2, 3), np.float32))


# ---- fft ---------------------------------------------------------------------------------------

FFT_SHAPES = [(1,), (8,), (7,), (100,), (4, 6), (3, 5, 4)]


def _close(got, want, dt):
    assert got.dtype == dt, (got.dtype, dt)
    want = np.asarray(want)
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-5 * scale)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_one_axis(dev, rng, norm):
    for shape in FFT_SHAPES:
        z = crandom(rng, shape)
        r = random(rng, shape, F32, -3, 3)
        for axis in range(-len(shape), len(shape)):
            for n in (None, 5, 16):
                kw = dict(n=n, axis=axis, norm=norm)
                _close(pm.fft.fft(pm.asarray(z), **kw), np.fft.fft(z.astype(np.complex128), **kw), C64)
                _close(pm.fft.ifft(pm.asarray(z), **kw), np.fft.ifft(z.astype(np.complex128), **kw), C64)
                _close(pm.fft.rfft(pm.asarray(r), **kw), np.fft.rfft(r.astype(np.float64), **kw), C64)
                _close(pm.fft.ihfft(pm.asarray(r), **kw), np.fft.ihfft(r.astype(np.float64), **kw), C64)
                if shape[axis] > 1 or n:
                    _close(pm.fft.irfft(pm.asarray(z), **kw), np.fft.irfft(z.astype(np.complex128), **kw), F32)
                    _close(pm.fft.hfft(pm.asarray(z), **kw), np.fft.hfft(z.astype(np.complex128), **kw), F32)


def test_fft_n_dimensional(dev, rng):
    for shape, s, axes in [((4, 6), None, None), ((3, 5, 4), None, (0, 2)), ((3, 5, 4), (4, 8), (1, 2)),
                           ((6, 6), (3, -1), None), ((8,), None, None)]:
        z = crandom(rng, shape)
        r = random(rng, shape, F32, -3, 3)
        for norm in ("backward", "ortho"):
            kw = dict(s=s, axes=axes, norm=norm)
            nax = axes if axes is not None or s is None else tuple(range(len(shape) - len(s), len(shape)))
            nps = None if s is None else [shape[a] if v == -1 else v for v, a in zip(s, nax)]
            nkw = dict(s=nps, axes=nax, norm=norm)
            _close(pm.fft.fftn(pm.asarray(z), **kw), np.fft.fftn(z.astype(np.complex128), **nkw), C64)
            _close(pm.fft.ifftn(pm.asarray(z), **kw), np.fft.ifftn(z.astype(np.complex128), **nkw), C64)
            _close(pm.fft.rfftn(pm.asarray(r), **kw), np.fft.rfftn(r.astype(np.float64), **nkw), C64)
            if s is not None and s[-1] == -1:  # the whole last axis is used: n = 2 (m - 1) (NumPy takes n = m)
                nkw["s"] = nps[:-1] + [2 * (shape[nax[-1]] - 1)]
            _close(pm.fft.irfftn(pm.asarray(z), **kw), np.fft.irfftn(z.astype(np.complex128), **nkw), F32)


@pytest.mark.parametrize("n", [2, 64, 1 << 16, 97, 1000, 10007])
def test_fft_long_and_prime_lengths(dev, rng, n):
    # power-of-two lengths take the radix-2 passes, the others Bluestein's convolution
    z = crandom(rng, (2, n), -1, 1)
    want = np.fft.fft(z.astype(np.complex128), axis=-1)
    got = pm.fft.fft(pm.asarray(z))
    assert got.dtype == C64
    err = np.abs(got.numpy() - want).max() / np.abs(want).max()
    assert err < 2e-6 * max(1, np.log2(n)), err
    back = pm.fft.ifft(got).numpy()
    assert np.abs(back - z).max() < 2e-6 * max(1, np.log2(n))
    zt = pm.asarray(np.ascontiguousarray(z.T))  # the same transform along axis 0 of a strided layout
    np.testing.assert_allclose(pm.fft.fft(zt, axis=0).numpy().T, got.numpy(), rtol=0, atol=1e-6 * np.abs(want).max())


def test_fft_round_trip_and_input_types(dev, rng):
    z = crandom(rng, (64,))
    x = pm.asarray(z)
    _close(pm.fft.ifft(pm.fft.fft(x)), z, C64)
    r = random(rng, (33,), F32)
    _close(pm.fft.irfft(pm.fft.rfft(pm.asarray(r)), n=33), r, F32)
    _close(pm.fft.fft(pm.asarray(r)), np.fft.fft(r.astype(np.float64)), C64)  # real input promoted
    _close(pm.fft.rfft(pm.arange(8)), np.fft.rfft(np.arange(8.0)), C64)  # integers: float32
    with pytest.raises(TypeError):
        pm.fft.rfft(x)
    with pytest.raises(ValueError):
        pm.fft.fft(x, norm="bad")
    with pytest.raises(ValueError):
        pm.fft.fft(x, n=0)
    with pytest.raises(ValueError):
        pm.fft.fft(pm.zeros((3, 0), dtype=pm.complex64))
    assert pm.fft.fft(pm.zeros((0, 4), dtype=pm.complex64)).shape == (0, 4)


def test_fft_frequencies_and_shifts(dev, rng):
    for n in (1, 2, 7, 8, 1001):
        for d in (1.0, 0.25):
            _close(pm.fft.fftfreq(n, d=d), np.fft.fftfreq(n, d=d), F32)
            _close(pm.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d), F32)
    assert pm.fft.fftfreq(4, dtype=pm.float16).dtype == np.float16
    for shape in [(0,), (1,), (7,), (8,), (4, 5), (3, 4, 5)]:
        a = random(rng, shape, F32)
        assert_same(pm.fft.fftshift(pm.asarray(a)), np.fft.fftshift(a), rtol=0, atol=0)
        assert_same(pm.fft.ifftshift(pm.asarray(a)), np.fft.ifftshift(a), rtol=0, atol=0)
        if len(shape) > 1:
            assert_same(pm.fft.fftshift(pm.asarray(a), axes=(0,)), np.fft.fftshift(a, axes=(0,)), rtol=0, atol=0)
            assert_same(pm.fft.ifftshift(pm.asarray(a), axes=-1), np.fft.ifftshift(a, axes=-1), rtol=0, atol=0)
