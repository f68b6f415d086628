"""Numerics found by a differential fuzz against NumPy (issue 20): reductions with
dtype=, products with zeros and overflows, complex results with infinite parts,
bfloat16 subnormals, complex input to pm.nn, complex functions near 0 and far out,
and the Array API's special cases of floor_divide, acos and expm1."""

import math
import warnings

import numpy as np
import pytest

import pymetal as pm
from arraytest import BF16, assert_same

F32, C64 = np.float32, np.complex64
INF, NAN = math.inf, math.nan


def _same_bits(got, want, rtol=0.0):
    """Equal values (within rtol where both are finite and non-zero) with NaN where NaN and
    the signs of zeros and infinities, part by part for complex."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    parts = [(g, w)] if g.dtype.kind != "c" else [(g.real, w.real), (g.imag, w.imag)]
    for a, b in parts:
        a, b = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(all="ignore"):
            near = np.abs(a - b) <= rtol * np.abs(b)
        same = ((a == b) | near) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
        assert same.all(), "got %r, want %r at %r" % (a[~same], b[~same], np.nonzero(~same))


# ---- 5. reductions with dtype= accumulate in that dtype; mean never wraps --------------------

def test_reduce_dtype_converts_first(dev):
    a = np.array([2 ** 20] * 4, np.int32)
    assert_same(pm.prod(pm.asarray(a), dtype=pm.float32), np.prod(a, dtype=F32), dtype=F32, rtol=1e-6)
    h = np.array([0.5, 0.5, 0.5], F32)
    assert_same(pm.sum(pm.asarray(h), dtype=pm.int64), np.sum(h, dtype=np.int64), dtype=np.int64)
    assert int(pm.sum(pm.asarray(h), dtype=pm.int64)) == 0


@pytest.mark.parametrize("src,dst", [(np.int32, F32), (np.int64, F32), (F32, np.int64), (F32, np.int32),
                                     (np.float16, F32), (np.int8, np.int16), (np.uint8, np.int8),
                                     (np.int64, np.uint64), (BF16, F32), (F32, np.uint8)])
@pytest.mark.parametrize("shape,axis", [((), None), ((0,), None), ((1,), None), ((7,), None), ((3, 5), 1),
                                        ((5, 3), 0), ((1000,), None), ((2, 3, 4), (0, 2))])
def test_reduce_dtype_against_numpy(dev, rng, src, dst, shape, axis):
    a = (rng.random(shape) * 6 - 2).astype(F32)
    a = a.astype(src) if np.dtype(src).kind in "f" or src is BF16 else np.round(a * 20).astype(src)
    x = pm.asarray(a)
    for name, f in (("sum", np.sum), ("prod", np.prod)):
        if name == "prod" and a.size > 50:
            a2, x2 = a.reshape(-1)[:11], x.reshape(-1)[:11]
        else:
            a2, x2 = a, x
        ax = axis if a2.ndim == a.ndim else None
        want = f(a2.astype(F32) if src is BF16 else a2, axis=ax, dtype=dst)
        got = getattr(pm, name)(x2, axis=ax, dtype=dst)
        assert_same(got, np.asarray(want), dtype=dst, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,axis", [((2,), None), ((1,), None), ((3, 5), 0), ((4, 1001), 1)])
def test_mean_of_big_integers_does_not_wrap(dev, shape, axis):
    a = np.full(shape, 2 ** 62, np.int64)
    a.reshape(-1)[::3] = 2 ** 61 + 12345
    got = pm.mean(pm.asarray(a), axis=axis)
    assert got.dtype == F32  # pymetal's policy: float32 for integers (no float64 on the device)
    np.testing.assert_allclose(got.numpy(), np.mean(a, axis=axis), rtol=1e-6)
    assert (got.numpy() > 0).all()


# ---- 6. products keep NumPy's zeros: no 0 * inf from reassociation ----------------------------

_PROD_CASES = [
    [0, 1e30, 1e30, 1e30],                      # the fuzz case: NumPy 0
    [-0.0, 1e30, 1e30, 1e30],                   # the zero's sign survives
    [0] + [1e30] * 40,                          # zero first, overflows in other lanes
    [2.0] * 20 + [-0.0] + [1e30] * 20 + [-3],   # a zero in the middle: 0 with the sign of the product
    [0, INF], [INF, 1, 1, 1, 0, 1, 1],          # a zero and an infinity among the elements: NaN
    [0] + [1e30] * 30 + [INF],
    [NAN, 0, 1e30, 1e30], [1e30] * 5,           # NaN stays NaN, overflow stays inf
    [2.0] * 9 + [0.5] * 3,
]


def _prod_ref(a, axis=None):
    """The product pymetal promises: NaN where a NaN, or a zero and an infinity, are among
    the elements; a zero (with the product's sign) where a zero is; else the product.
    NumPy's agrees wherever its element-by-element order does not overflow before a zero
    ([1e30, 1e30, 1e30, 0] is NaN in NumPy: inf * 0)."""
    a = np.asarray(a, np.float64)
    with np.errstate(all="ignore"):
        p = np.prod(np.where(a == 0, 1.0, a), axis=axis)
        sign = np.where(np.sum(np.signbit(a), axis=axis) % 2 == 1, -1.0, 1.0)
        zero = np.any(a == 0, axis=axis)
        bad = np.any(np.isnan(a), axis=axis) | (zero & np.any(np.isinf(a), axis=axis))
        return np.where(bad, np.nan, np.where(zero, sign * 0.0, p)).astype(F32)


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu-shapes", "gpu-shapes"])
@pytest.mark.parametrize("case", range(len(_PROD_CASES)))
def test_prod_zero_and_overflow(dev, monkeypatch, gpu, case):
    monkeypatch.setattr(pm.arrays.reduce, "GPU_SHAPES", gpu)
    a = np.array(_PROD_CASES[case], F32)
    with np.errstate(all="ignore"):
        _same_bits(_prod_ref(a), np.prod(a))  # these cases: NumPy's value is the promised one
        _same_bits(pm.prod(pm.asarray(a)).numpy(), np.prod(a))
        # as a column (the column kernels) and as rows of a batch
        _same_bits(pm.prod(pm.asarray(a.reshape(-1, 1)), axis=0).numpy(), np.prod(a.reshape(-1, 1), axis=0))
        b = np.stack([a, np.ones_like(a), -a])
        _same_bits(pm.prod(pm.asarray(b), axis=1).numpy(), np.prod(b, axis=1))
        # reversed, the overflow can come before the zero: NumPy's order then gives NaN, pymetal
        # 0 or NaN (its order is not NumPy's); never NaN without an overflow, NaN or infinity
        r = pm.prod(pm.asarray(a[::-1].copy())).numpy()
        assert r == _prod_ref(a) or (np.isnan(r) and np.isnan(np.prod(a[::-1])))


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu-shapes", "gpu-shapes"])
@pytest.mark.parametrize("n", [513, 5000, 100003])
def test_prod_long_with_zero_and_far_overflow(dev, monkeypatch, gpu, n):
    """Long enough for several chunks: a zero at the start, overflowing values at the end."""
    monkeypatch.setattr(pm.arrays.reduce, "GPU_SHAPES", gpu)
    a = np.ones(n, F32)
    a[3] = -0.0
    a[-40:] = 1e30
    with np.errstate(all="ignore"):
        _same_bits(pm.prod(pm.asarray(a)).numpy(), np.prod(a))
        a[n // 2] = -INF  # now a zero and an infinity: NaN, however far apart
        _same_bits(pm.prod(pm.asarray(a)).numpy(), np.prod(a))
        c = np.ones((n, 3), F32)
        c[1, :] = 0
        c[-30:, :] = 1e30
        c[n // 2, 2] = INF
        _same_bits(pm.prod(pm.asarray(c), axis=0).numpy(), np.prod(c, axis=0))


def test_prod_float16_and_bfloat16(dev):
    for dt in (np.float16, BF16):
        a = np.array([0, 6e4, 6e4, 6e4] if dt == np.float16 else [0, 1e30, 1e30, 1e30], F32).astype(dt)
        assert float(pm.prod(pm.asarray(a))) == 0.0


@pytest.mark.parametrize("n", [1, 7, 8192, 8193, 30000, 100000])
def test_cumulative_prod_keeps_zero_across_chunks(dev, n):
    a = np.ones(n, F32)
    a[min(5, n - 1)] = 0
    if n > 50:
        a[n // 2:n // 2 + 10] = 1e30   # overflows in a later chunk: the running product stays 0
    with np.errstate(all="ignore"):
        _same_bits(pm.cumulative_prod(pm.asarray(a)).numpy(), np.cumprod(a))
        if n > 50:
            b = a.copy()
            b[-3] = INF  # an infinity after the zero: NaN from there on, as NumPy
            _same_bits(pm.cumulative_prod(pm.asarray(b)).numpy(), np.cumprod(b))
            c = a.copy()
            c[5] = -0.0  # sign of zero carried across chunks
            c[n // 2 + 20] = -2.0
            _same_bits(pm.cumulative_prod(pm.asarray(c)).numpy(), np.cumprod(c))
            rows = np.stack([a, b, c, np.full(n, 1.0001, F32)])  # the last: rounding in another order
            _same_bits(pm.cumulative_prod(pm.asarray(rows), axis=1).numpy(), np.cumprod(rows, axis=1), rtol=1e-5)


def test_cumulative_prod_overflow_before_zero(dev):
    a = np.ones(20000, F32)
    a[100:110] = 1e30
    a[15000] = 0   # inf * 0 is NaN in NumPy's order too
    with np.errstate(all="ignore"):
        _same_bits(pm.cumulative_prod(pm.asarray(a)).numpy(), np.cumprod(a))


# ---- 7. complex results with an infinite part -------------------------------------------------

def test_complex_cumulative_sum_infinite_imaginary(dev):
    z = np.array([1 + 1j, complex(0, INF), 2 - 1j], C64)
    _same_bits(pm.cumulative_sum(pm.asarray(z)).numpy(), np.cumsum(z))
    z2 = np.array([[complex(2, 3e38), complex(1, 3e38)]], C64)
    with np.errstate(all="ignore"):
        _same_bits(pm.cumulative_sum(pm.asarray(z2), axis=1).numpy(), np.cumsum(z2, axis=1))


def test_complex_matmul_tensordot_infinite_imaginary(dev):
    a = np.array([[2 + 0j, 1 + 0j]], C64)
    b = np.array([[1 + 3e38j], [0j]], C64)
    with np.errstate(all="ignore"):
        want = (a[:, :, None] * b[None, :, :]).sum(axis=1)  # NumPy's a @ b (BLAS) gives NaN + inf j here
    assert np.isfinite(want.real).all() and np.isinf(want.imag).all()
    _same_bits(pm.matmul(pm.asarray(a), pm.asarray(b)).numpy(), want)
    _same_bits(pm.tensordot(pm.asarray(a), pm.asarray(b), axes=1).numpy(), want)
    for shape in [(0, 3), (1, 1), (3, 5)]:  # parts land in their halves for any shape
        rng = np.random.default_rng(1)
        x = (rng.random(shape) + 1j * rng.random(shape)).astype(C64)
        y = (rng.random(shape[::-1]) - 1j * rng.random(shape[::-1])).astype(C64)
        assert_same(pm.matmul(pm.asarray(x), pm.asarray(y)), x @ y, rtol=1e-5, atol=1e-5)


def test_complex_linspace(dev):
    assert_same(pm.linspace(1 + 2j, 3 - 1j, 5), np.linspace(1 + 2j, 3 - 1j, 5).astype(C64))
    assert pm.linspace(0j, 1j, 0).shape == (0,)


# ---- 8. bfloat16 subnormals; abs(-0) ----------------------------------------------------------

def test_bfloat16_subnormals_kept(dev):
    vals = np.array([1e-39, -3e-40, 2.0 ** -133, 2.0 ** -127, -2.0 ** -130, 1e-38, 0.0, 1.0], F32)
    want = vals.astype(BF16)
    assert (want.astype(F32)[:5] != 0).all()
    got = pm.asarray(vals).astype(pm.bfloat16)
    np.testing.assert_array_equal(got.numpy().view(np.uint16), want.view(np.uint16))
    b = pm.asarray(want)
    np.testing.assert_array_equal(b.astype(pm.float32).numpy(), want.astype(F32))
    for got, ref in [(b * 1.0, want), (b + pm.asarray(np.zeros(8, BF16)), want),
                     (b * pm.asarray(np.full(8, 0.5, BF16)), (want.astype(F32) * 0.5).astype(BF16))]:
        np.testing.assert_array_equal(got.numpy().view(np.uint16), ref.view(np.uint16))


def test_bfloat16_abs_clears_sign(dev):
    a = np.array([-0.0, 0.0, -1.5, -1e-39, np.inf * -1, np.nan], F32).astype(BF16)
    got = pm.abs(pm.asarray(a)).numpy()
    _same_bits(got.astype(F32), np.abs(a.astype(F32)).astype(BF16).astype(F32))
    assert not np.signbit(got.astype(F32)[0])


# ---- 11. pm.nn refuses complex input ---------------------------------------------------------

@pytest.mark.parametrize("fn", ["leaky_relu", "softmax", "log_softmax"])
def test_nn_complex_refused(dev, fn):
    z = pm.asarray(np.array([1 + 2j, -1 - 1j], C64))
    with pytest.raises(TypeError, match="complex"):
        getattr(pm.nn, fn)(z)
    x = np.array([1.0, -2.0, 0.5], F32)  # real input unchanged
    got = getattr(pm.nn, fn)(pm.asarray(x)).numpy()
    e = np.exp(x - x.max())
    want = {"leaky_relu": np.where(x > 0, x, 0.01 * x), "softmax": e / e.sum(),
            "log_softmax": x - x.max() - np.log(e.sum())}[fn]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# ---- 12. complex functions near 0 and far out -------------------------------------------------

_NEAR0 = [complex(r, i) for r in (0.0, 1e-7, -1e-7, 3e-5, 1e-20) for i in (0.0, 1e-7, -2e-6, 1e-3, 1e-20)] \
    + [1e-4 + 1e-4j, -1e-4 - 1e-4j, 0.1 + 0.5j, 0.5j, -0.3 + 0.2j, 0.7 - 0.6j, 2 + 0j, 2j, 5 - 3j]
_FUNCS = [("asinh", np.arcsinh), ("atanh", np.arctanh), ("asin", np.arcsin), ("atan", np.arctan),
          ("acos", np.arccos), ("log1p", np.log1p), ("expm1", np.expm1), ("tanh", np.tanh),
          ("sinh", np.sinh), ("cosh", np.cosh), ("exp", np.exp)]


@pytest.mark.parametrize("name,ref", _FUNCS, ids=[f[0] for f in _FUNCS])
def test_complex_functions_relative_accuracy(dev, name, ref):
    z = np.array(_NEAR0, C64)
    got = getattr(pm, name)(pm.asarray(z)).numpy()
    # the exact values: NumPy in complex128 (its complex64 loses digits near 0), and for
    # log1p / expm1 near 0 their series (NumPy's complex log1p is log(1 + z) even in complex128)
    z2 = z.astype(np.complex128)
    want = ref(z2)
    small = np.abs(z2) < 1e-4
    if name in ("log1p", "expm1"):
        s = -1 if name == "log1p" else 1
        series = z2 + s * z2 ** 2 / 2 + z2 ** 3 / (3 if name == "log1p" else 6)
        want = np.where(small, series, want)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1e-37)
    bad = err > 2e-6
    assert not bad.any(), list(zip(z[bad], got[bad], want[bad]))
    # parts that are exactly zero stay exactly zero (real axis, imaginary axis)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        assert (g[w == 0] == 0).all(), (z[w == 0], g[w == 0])


def test_complex_exp_sinh_cosh_tanh_far_out(dev):
    z = np.array([89 + 1j, 89 + 3j, -89 + 1j, 88.5 - 2j, 100 + 1j, 0.001 + 3e38j, 3e38j, 20 + 3e38j,
                  1 + 1e30j, -5 - 3.3e38j], C64)
    with np.errstate(all="ignore"):
        for name, ref in (("exp", np.exp), ("sinh", np.sinh), ("cosh", np.cosh), ("tanh", np.tanh)):
            got = getattr(pm, name)(pm.asarray(z)).numpy()
            want = ref(z.astype(np.complex128)).astype(C64)  # rounded to complex64: overflow -> inf
            for g, w in ((got.real, want.real), (got.imag, want.imag)):
                assert (np.isinf(g) == np.isinf(w)).all() and not np.isnan(g).any(), (name, z, got, want)
                fin = np.isfinite(w)
                np.testing.assert_allclose(g[fin], w[fin], rtol=2e-5, atol=1e-30, err_msg=name)


# ---- the Array API's special cases (2024.12) --------------------------------------------------

def test_floor_divide_infinities(dev):
    x1 = np.array([INF, INF, -INF, -INF, 3, -3, 3, -3, 0.0, -0.0, INF, NAN, 7, -7, 5, 0], F32)
    x2 = np.array([2, -2, 2, -2, -INF, INF, INF, -INF, INF, INF, INF, 2, 2, 2, 0, 0], F32)
    want = np.array([INF, -INF, -INF, INF, -0.0, -0.0, 0.0, 0.0, 0.0, -0.0, NAN, NAN, 3, -4, INF, NAN], F32)
    a, b = pm.asarray(x1), pm.asarray(x2)
    _same_bits(pm.floor_divide(a, b).numpy(), want)
    _same_bits((a // b).numpy(), want)
    c = pm.asarray(x1.copy())
    c //= b
    _same_bits(c.numpy(), want)
    _same_bits((a // 2.0).numpy()[:4], np.array([INF, INF, -INF, -INF], F32))
    for dt in (np.float16, BF16):  # the same functor for the small floats
        _same_bits(pm.floor_divide(pm.asarray(x1.astype(dt)), pm.asarray(x2.astype(dt))).numpy().astype(F32), want)


def test_acos_of_zero(dev):
    z = np.array([complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0)], C64)
    got = pm.acos(pm.asarray(z)).numpy()
    _same_bits(got, np.array([complex(math.pi / 2, -0.0), complex(math.pi / 2, -0.0), complex(math.pi / 2, 0.0)], C64))


def test_expm1_special_values(dev):
    cases = [(complex(INF, 0.0), complex(INF, 0.0)), (complex(-INF, INF), complex(-1, 0.0)),
             (complex(INF, INF), complex(INF, NAN)), (complex(-INF, NAN), complex(-1, 0.0)),
             (complex(INF, NAN), complex(INF, NAN)), (complex(NAN, 0.0), complex(NAN, 0.0)),
             (complex(0.0, 0.0), complex(0.0, 0.0)), (complex(-0.0, 0.0), complex(-0.0, 0.0)),
             (complex(-INF, 1.0), complex(-1, 0.0)), (complex(1.0, 0.0), complex(math.expm1(1.0), 0.0))]
    z = np.array([c[0] for c in cases], C64)
    got = pm.expm1(pm.asarray(z)).numpy()
    for (zi, w), g in zip(cases, got):
        for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
            ok = (math.isnan(gp) and math.isnan(wp)) or (abs(gp - wp) <= 1e-6 * abs(wp) if math.isfinite(wp) else gp == wp)
            assert ok, (zi, g, w)


@pytest.mark.parametrize("name,ref", _FUNCS + [("tan", np.tan), ("sin", np.sin), ("cos", np.cos)],
                         ids=[f[0] for f in _FUNCS] + ["tan", "sin", "cos"])
def test_complex_functions_uniform_accuracy(dev, name, ref):
    """Over the square |re|, |im| < 3, including near the branch points +-1 and +-i (atanh and
    atan once lost 3 digits there, log1p 4 digits near -1): within 1e-6 of max(|f(z)|, 1)."""
    rng = np.random.default_rng(7)
    z = ((rng.random(20000) * 6 - 3) + 1j * (rng.random(20000) * 6 - 3)).astype(C64)
    z = np.concatenate([z, np.array([-0.9946756 + 0.001597857j, 0.006176063 + 0.9982273j, 1.0027248 + 0.0018j,
                                     -0.99999 + 1e-5j, 1 - 1e-6j, 1e-6 - 1.00001j], C64)])
    got = getattr(pm, name)(pm.asarray(z)).numpy()
    want = ref(z.astype(np.complex128))
    err = np.abs(got - want) / np.maximum(np.abs(want), 1)
    assert err.max() < 1e-6, (z[np.argmax(err)], got[np.argmax(err)], want[np.argmax(err)])


def test_complex_atanh_at_the_branch_points(dev):
    # atanh(1 + 8.3e-23j) was inf + 0.785j: (1 - x)^2 + y^2 underflowed to 0 (differential fuzz)
    z = np.array([1 + 8.3e-23j, -1 - 8.3e-23j, 1 + 1e-38j, 1 - 3e-30j, 1.0000001 + 1e-20j,
                  0.99999994 + 1e-12j, 1 + 1e-5j, -1 + 2e-4j], C64)
    got = pm.atanh(pm.asarray(z)).numpy()
    want = np.arctanh(z.astype(np.complex128))
    np.testing.assert_allclose(got.real, want.real, rtol=2e-6)
    np.testing.assert_allclose(got.imag, want.imag, rtol=2e-6)


@pytest.mark.parametrize("dtype", [np.float32, pm.bfloat16])
def test_std_of_tiny_values(dev, dtype):
    # squares of deviations near 1e-32 underflow float32 where std does not (std was 0)
    a = np.zeros((2, 3, 4), np.float32)
    a[1, 2, 3] = 7.6e-32
    a[0, 1, 2] = -3e-35
    a[1, 0] = 1e-44  # subnormal
    a = a.astype(dtype)
    for axis in (None, 0, (1, 2)):
        want = np.std(a.astype(np.float64), axis=axis)
        got = pm.std(pm.asarray(a), axis=axis).numpy().astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-2 if dtype is pm.bfloat16 else 1e-5, atol=3e-45)  # subnormal steps
        np.testing.assert_allclose(pm.var(pm.asarray(a), axis=axis).numpy().astype(np.float64), want ** 2,
                                   rtol=1e-2, atol=1e-45)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_var_std_of_64_bit_integers_do_not_overflow(dev, dtype):
    # deviations of 64-bit integers reach 1.8e19, whose squares overflow float32 (were inf)
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 3, info.max, info.min // 2, 0], dtype=dtype).reshape(2, 3)
    for axis in (None, 0, 1):
        for f in (np.var, np.std):
            want = f(a, axis=axis)
            got = getattr(pm, f.__name__)(pm.asarray(a), axis=axis).numpy()
            assert np.all(np.isfinite(got))
            np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("src, dst", [(np.int16, np.float16), (np.int16, np.int8), (np.float32, np.int32),
                                      (np.uint8, np.float32), (np.bool_, np.int32)])
def test_cumulative_sum_converts_to_dtype_first(dev, src, dst):
    # NumPy's rule: the elements are converted to dtype, then accumulated in it (was a TypeError)
    a = np.array([[3, 1, 2, 0, 5], [1, 0, 7, 2, 4]]).astype(src)
    got = pm.cumulative_sum(pm.asarray(a), axis=1, dtype=dst, include_initial=True).numpy()
    want = np.concatenate([np.zeros((2, 1), dst), np.cumsum(a, axis=1, dtype=dst)], axis=1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="imaginary"):
        pm.cumulative_sum(pm.asarray(np.array([1j], np.complex64)), dtype=pm.float32)


def test_a_value_an_empty_selection_cannot_hold_is_refused(dev):
    # the scalar is converted before the selection's size is looked at (NumPy raises too)
    v = pm.zeros(3, np.float16)
    for key in (slice(0, 0), pm.asarray(np.zeros(3, bool)), 0):
        with pytest.raises(TypeError):
            v[key] = 1j
    with pytest.raises(OverflowError):
        pm.zeros(3, np.int8)[0:0] = 300


@pytest.mark.parametrize("name", ["ceil", "floor", "round", "trunc"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rounding_keeps_integer_valued_floats(dev, name, dtype):
    # what the data-apis suite's "x_i.is_integer() -> x_i" cases mean (tests/array_api/skips.txt says
    # why they are not run): every integer-valued float, small or huge, of either sign, is its own result
    info = np.finfo(dtype)
    big = [float(info.max), 2.0 ** 24, 2.0 ** 23 + 1, 1.6282082747201562e16, 1e30] if dtype == np.float32 \
        else [float(info.max), 2048.0, 1025.0]
    vals = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -7.0, 12345.0] + big + [-v for v in big], dtype=dtype)
    got = getattr(pm, name)(pm.asarray(vals)).numpy()
    np.testing.assert_array_equal(got, vals)
    assert np.array_equal(np.signbit(got), np.signbit(vals))


def test_complex_sqrt_of_tiny_and_huge_values(dev):
    # (|x| + |z|) / 2 of a subnormal z rounded to 0 (sqrt(1e-45j) was inf); of a huge one it overflowed
    z = np.array([1.4e-45j, 1e-40 + 1e-40j, -1e-44 + 0j, 5.4e-43j, 3e38 + 3e38j, -3e38 + 1e30j, 1e-20j,
                  4 + 3j, -4 - 3j], np.complex64)
    got = pm.sqrt(pm.asarray(z)).numpy()
    want = np.sqrt(z.astype(np.complex128))
    np.testing.assert_allclose(got, want.astype(np.complex64), rtol=3e-7)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("n", [1, 2, 3, 7, -1, -2, 100, -100])
def test_complex_integer_powers_are_exact_products(dev, n):
    # exp(n log z) lost digits ((1.5e14j) ** 1 had a real part of -6.5e6); as NumPy: repeated squaring
    z = np.array([1.4894906e14j, 1 + 2j, 3 - 1j, 0.5 + 0.5j, -2.0 + 0j], np.complex64)
    got = pm.pow(pm.asarray(z), n).numpy()
    with np.errstate(all="ignore"):
        want = (z.astype(np.complex128) ** n).astype(np.complex64)
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-5 * max(1, abs(n)) / 10 + 1e-6)
    np.testing.assert_array_equal(pm.pow(pm.asarray(z[:1]), True).numpy(), z[:1])


def test_var_of_floats_whose_squares_overflow(dev):
    # squared deviations past 1.8e19 overflowed float32 (var was inf where it fits)
    a = np.array([0, 0, 0, -9.2e18, -9.2e18] * 15, np.float32).reshape(5, 15)
    for axis in (None, 0, 1):
        want = np.var(a.astype(np.float64), axis=axis).astype(np.float32)
        got = pm.var(pm.asarray(a), axis=axis).numpy()
        # float32's mean of equal values can be an ulp off them: atol of float32's precision of x**2
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * 9.2e18 ** 2)
    for a in (np.zeros((0, 3), np.float32), np.array([np.inf, 0], np.float32), np.array([np.nan, 1], np.float32),
              np.full(5, 7.0, np.float32), np.array([1.0, 2.0, 3.0, 4.0], np.float32)):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_allclose(pm.var(pm.asarray(a), axis=0).numpy(), np.var(a, axis=0), rtol=1e-6)


def test_complex_results_of_numpy_fallbacks_and_scans(dev):
    v = pm.asarray(np.array([[1 + 2j, 0j], [3j, -1 + 0j]], np.complex64))
    m = np.max(v)  # NumPy orders complex numbers; its scalar comes back as a 0-d pymetal array
    assert isinstance(m, pm.Array) and m.shape == () and complex(m) == np.max(v.numpy())
    got = pm.cumulative_sum(pm.asarray(np.array([0, 1, 2], np.int8)), dtype=pm.complex64)
    assert got.dtype == np.complex64 and got.numpy().tolist() == [0j, 1 + 0j, 3 + 0j]
    with pytest.raises(TypeError, match="complex"):
        pm.searchsorted(pm.asarray([1.0, 2.0]), 1j)


def test_complex_log_of_subnormal_values(dev):
    # |z| of a subnormal z kept few digits: log(-1e-45 - 1e-45j) was -103.28, NumPy -102.93
    z = np.array([-1.4e-45 - 1.4e-45j, 1e-40 + 3e-41j, 1e-38j, 3e-39 - 2e-39j], np.complex64)
    got = pm.log(pm.asarray(z)).numpy()
    np.testing.assert_allclose(got, np.log(z.astype(np.complex128)).astype(np.complex64), rtol=1e-6)


def test_complex_log_past_float_max(dev):
    # |z| overflowed: log(2.4e38 + 2.4e38j) was inf + 0.785j, NumPy 88.72 + 0.785j (differential fuzz)
    z = np.array([2.406159650500376e38 + 2.406159853324472e38j, -3e38 + 1e38j, 3.4e38 - 3.4e38j, 1e30 + 3e38j,
                  3e38 + 0j, 0j, complex(np.inf, np.nan), complex(np.nan, 1.0), complex(-np.inf, 2.0)], np.complex64)
    got = pm.log(pm.asarray(z)).numpy()
    with np.errstate(all="ignore"):
        want = np.log(z.astype(np.complex128))
    for part in ("real", "imag"):  # parts apart: assert_allclose's inf check on complex values is by element
        np.testing.assert_allclose(getattr(got, part), getattr(want, part), rtol=1e-6)


@pytest.mark.parametrize("name", ["log", "log1p", "log2", "log10", "sqrt", "abs", "asinh", "acosh", "atanh",
                                  "asin", "acos", "atan"])
def test_complex_functions_of_parts_near_float_max(dev, name):
    # |1 + z| overflowed: log1p(2.4e38 + 2.4e38j) was inf + 0.785j, NumPy 88.72 + 0.785j
    # (differential fuzz, seed 9105); every function whose value is finite there must be
    z = np.array([2.406159650500376e38 + 2.406159853324472e38j, -3e38 + 1e38j, 3.4e38 - 3.4e38j,
                  1e30 + 3e38j, -3.4e38 - 3.4e38j, 3e38 + 0j, 1e-30 + 3.3e38j], np.complex64)
    got = getattr(pm, name)(pm.asarray(z)).numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, {"asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "asin": "arcsin",
                            "acos": "arccos", "atan": "arctan"}.get(name, name))(z.astype(np.complex128))
        want = want.astype(got.dtype)
    for part in ("real", "imag") if np.iscomplexobj(want) else ("real",):
        np.testing.assert_allclose(getattr(got, part), getattr(want, part), rtol=2e-6, atol=1e-37, err_msg=name)


def test_complex_power_that_underflows_with_an_overflowing_angle(dev):
    # (4e36j) ** (4e36j) = exp(-6.3e36 + 3.4028e38j) is 0; the angle rounded to inf in float and
    # made it nan + nanj (differential fuzz, seed 9103)
    z = pm.asarray(np.array([4.0371106349955965e36j, 3e38j], np.complex64))
    got = pm.pow(z, z).numpy()
    assert np.array_equal(got, np.zeros(2, np.complex64)), got
    # a genuinely infinite input keeps C99's values (exp(x + inf i) for finite x is nan)
    inf = pm.asarray(np.array([complex(0, np.inf)], np.complex64))
    assert np.isnan(pm.pow(inf, pm.asarray(np.array([2.5j], np.complex64))).numpy()).all()


def test_complex_acos_asin_near_the_branch_points(dev):
    # pi/2 - asin(z) cancelled near z = +-1 (acos(1 - 6.1e-5j) had 5 correct digits): Kahan's formulas
    rng = np.random.default_rng(3)
    eps = rng.choice([1e-6, 1e-4, 1e-2], 400) * (rng.standard_normal(400) + 1j * rng.standard_normal(400))
    z = np.concatenate([1 + eps, -1 + eps, eps, [1 - 6.1035156e-05j, 0.5j, 1.1 + 0j, -1.1 + 0j]]).astype(np.complex64)
    for f, nf in ((pm.acos, np.arccos), (pm.asin, np.arcsin)):
        got = f(pm.asarray(z)).numpy()
        want = nf(z.astype(np.complex128))
        np.testing.assert_allclose(got, want, rtol=4e-7, atol=1e-30)


def test_var_of_tiny_values(dev):
    # the scale of var's deviations is never below 1 (1 / 2**-130 overflowed: var was inf)
    for dt in (np.float32, pm.bfloat16):
        a = np.array([[0.0, 0.0], [0.0, 1e-39]], np.float32).astype(dt)
        assert float(pm.var(pm.asarray(a))) == 0.0
        b = np.array([1e-20, 3e-20, 2e-20], np.float32)
        np.testing.assert_allclose(float(pm.var(pm.asarray(b))), np.var(b.astype(np.float64)), rtol=1e-5)


def test_std_where_the_variance_overflows(dev):
    # std was sqrt(var), and var (3.4e38 or more) overflowed float32 although std fits
    b = np.zeros(64, np.float32)
    b[0], b[1] = 1.5e20, -1.5e20
    for dt in (np.float32, pm.bfloat16):
        got = float(pm.std(pm.asarray(b.astype(dt))))
        np.testing.assert_allclose(got, np.std(b.astype(np.float64)), rtol=1e-2 if dt != np.float32 else 1e-5)
    # an integer power's first factor is taken as it is: (1 + 0j) * (inf - 0j) had a NaN part
    assert complex(pm.pow(pm.asarray(np.array(4294967296j, np.complex64)), 4)) == complex(np.inf, 0)


def test_complex_log_near_the_unit_circle(dev):
    # log |z| cancelled for |z| near 1 (log(1.0001 + 1e-4j) had 4 correct digits): log1p form there
    rng = np.random.default_rng(1)
    r = 1 + rng.choice([1e-6, 1e-4, 1e-2], 400) * rng.standard_normal(400)
    z = (r * np.exp(1j * rng.uniform(-3, 3, 400))).astype(np.complex64)
    z = np.concatenate([z, np.array([1.056640625 + 0.009765625j, 1.0001 + 0.0001j, 0.9999 - 0.001j], np.complex64)])
    got = pm.log(pm.asarray(z)).numpy()
    np.testing.assert_allclose(got, np.log(z.astype(np.complex128)), rtol=3e-7, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, pm.bfloat16])
def test_power_of_two_is_the_square(dev, dtype):
    # x ** 2 runs as x * x (NumPy's fast path; a pow per element was ~20x slower): the same
    # values, with -0, infinities, NaN, overflow and underflow
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.5, -1e20, 1e-30, 65504.0, -7.25], np.float32).astype(dtype)
    want = (v.astype(np.float64) ** 2).astype(np.float32).astype(dtype)
    for got in (pm.asarray(v) ** 2, pm.pow(pm.asarray(v), 2), pm.pow(pm.asarray(v), 2.0), np.power(pm.asarray(v), 2)):
        assert got.dtype == v.dtype
        _same_bits(got.numpy(), want)
    assert (pm.asarray(np.arange(5, dtype=np.int32)) ** 2).dtype == np.int32  # integers keep their pow
    np.testing.assert_array_equal((pm.asarray(np.arange(5, dtype=np.int32)) ** 2).numpy(), np.arange(5) ** 2)
