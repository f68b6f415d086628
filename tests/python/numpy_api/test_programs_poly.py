"""NumPy's polynomial functions on pymetal arrays (pymetal/arrays/numpy_api/poly.py), NumPy as the oracle."""

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, compare, data


@pytest.mark.parametrize("deg", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("n", [6, 7, 50])
def test_polyfit(deg, n):
    x = np.linspace(-2, 3, n).astype(np.float32)
    y = (1.5 * x ** 3 - x + 0.25 + 0.1 * np.sin(7 * x)).astype(np.float32)
    check(lambda xp, a, b: xp.polyfit(a, b, deg), x, y, rtol=2e-3, atol=2e-3)
    check(lambda xp, a, b: xp.polyval(xp.polyfit(a, b, deg), a), x, y, rtol=2e-3, atol=2e-3)
    w = np.linspace(0.5, 2, n).astype(np.float32)
    check(lambda xp, a, b, c: xp.polyfit(a, b, deg, w=c), x, y, w, rtol=2e-3, atol=2e-3)
    check(lambda xp, a, b: xp.polyfit(a, b, deg), x, np.stack([y, 2 * y], axis=1), rtol=2e-3, atol=2e-3)


def test_polyfit_full_and_integers():
    x, y = np.arange(8), np.arange(8) ** 2 + 1
    c, resid, rank, s, rcond = pm.polyfit(pm.asarray(x), pm.asarray(y), 2, full=True)
    cn, residn, rankn, sn, _ = np.polyfit(x, y, 2, full=True)
    compare(c, cn, rtol=1e-3, atol=1e-3)
    assert rank == rankn == 3 and s.shape == sn.shape and float(resid[0]) < 1e-3
    compare(pm.polyfit([0, 1, 2], [1, 3, 5], 1), np.polyfit([0, 1, 2], [1, 3, 5], 1), rtol=1e-4, atol=1e-4)


def test_polyfit_errors():
    with pytest.raises(ValueError, match="deg"):
        pm.polyfit(pm.arange(3.0), pm.arange(3.0), -1)
    with pytest.raises(TypeError, match="x must be"):
        pm.polyfit(pm.ones((2, 2)), pm.ones(2), 1)
    with pytest.raises(TypeError, match="y must be"):
        pm.polyfit(pm.arange(3.0), pm.arange(4.0), 1)
    with pytest.raises(NotImplementedError, match="cov"):
        pm.polyfit(pm.arange(3.0), pm.arange(3.0), 1, cov=True)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4)], ids=str)
def test_polyval(dtype, shape):
    x = data(shape, dtype, lo=-3, hi=3)
    for p in ([2, -1, 3], [5], [0.5, 0, -2, 1]):
        check(lambda xp, a: xp.polyval(p, a), x, check_dtype=np.asarray(p).dtype.kind == "i" and dtype != np.int32)
    compare(pm.polyval(pm.asarray([1.0, 2.0]), 3.0), np.polyval([1.0, 2.0], 3.0))


@pytest.mark.parametrize("p", [[1, -3, 2], [1, 0, 1], [2, -4], [1, -6, 11, -6], [0, 0, 1, -1], [1, 0, 0],
                               [3], [0, 0], [1, 2, 3, 4, 5]])
def test_roots(p):
    want = np.roots(p)
    got = pm.roots(p).numpy()
    assert got.shape == want.shape
    key = lambda r: (round(float(np.real(r)), 3), round(float(np.imag(r)), 3))  # noqa: E731
    np.testing.assert_allclose(sorted(got, key=key), sorted(want, key=key), atol=1e-3)
    assert (got.dtype.kind == "c") == (want.dtype.kind == "c")


def test_poly_and_the_calculus():
    compare(pm.poly([1.0, 2.0, 3.0]), np.poly([1.0, 2.0, 3.0]), rtol=1e-5, atol=1e-5)
    compare(pm.poly(pm.asarray([[2.0, 0.0], [0.0, 3.0]])), np.poly(np.array([[2.0, 0.0], [0.0, 3.0]])), rtol=1e-5, atol=1e-5)
    compare(pm.poly([1j, -1j]), np.poly([1j, -1j]), rtol=1e-5, atol=1e-5)  # conjugate roots: real coefficients
    compare(pm.poly([]), np.poly([]))
    for m in (0, 1, 2, 4):
        compare(pm.polyder([1, 2, 3, 4], m), np.polyder([1, 2, 3, 4], m))
        compare(pm.polyint([3.0, 2.0, 1.0], m), np.polyint([3.0, 2.0, 1.0], m), rtol=1e-6, atol=1e-6)
    compare(pm.polyint([1.0, 1.0], 2, k=[1.0, 2.0]), np.polyint([1.0, 1.0], 2, k=[1.0, 2.0]), rtol=1e-6, atol=1e-6)
    compare(pm.polyadd([1, 2], [1, 0, 0]), np.polyadd([1, 2], [1, 0, 0]))
    compare(pm.polysub([1, 2, 3], [1, 2]), np.polysub([1, 2, 3], [1, 2]))
    compare(pm.polymul([1, 1], [1, -1, 2]), np.polymul([1, 1], [1, -1, 2]))
    for u, v in (([1.0, -3.0, 2.0], [1.0, -1.0]), ([3.0, 5.0, 2.0, 1.0], [2.0, 1.0]), ([1.0, 2.0], [1.0, 0.0, 1.0]),
                 ([4.0], [2.0])):
        q, r = pm.polydiv(u, v)
        qn, rn = np.polydiv(u, v)
        compare(q, qn, rtol=1e-5, atol=1e-5)
        compare(r, rn, rtol=1e-5, atol=1e-5)
    with pytest.raises(ZeroDivisionError):
        pm.polydiv([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="derivative"):
        pm.polyder([1, 2], -1)
    with pytest.raises(ValueError, match="one-dimensional"):
        pm.polyval(pm.ones((2, 2)), 1.0)


def test_poly1d():
    p, pn = pm.poly1d([1, -3, 2]), np.poly1d([1, -3, 2])
    q, qn = pm.poly1d([2.0, 1.0]), np.poly1d([2.0, 1.0])
    x = np.arange(-2.0, 3.0, dtype=np.float32)
    compare(p(pm.asarray(x)), pn(x))
    r = p(pm.asarray(x.astype(np.float64)))  # float64: the float64 policy's host path, as every operator
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r.numpy(), pn(x.astype(np.float64)))
    with np.errstate(invalid="ignore"):
        compare(p(pm.asarray([np.inf])), pn(np.array([np.inf], np.float32)))  # NaN, as NumPy's 0 * inf start
    assert p.order == pn.order == len(p) and p.variable == "x"
    compare(p.coeffs, pn.coeffs)
    compare(pm.poly1d([0, 0, 1, 2]).coeffs, np.poly1d([0, 0, 1, 2]).coeffs)
    assert sorted(p.roots.tolist()) == [1.0, 2.0]
    for got, want in ((p + q, pn + qn), (p - q, pn - qn), (q - 1, qn - 1), (1 - q, 1 - qn), (p * q, pn * qn),
                      (p * 2, pn * 2), (-p, -pn), (p ** 3, pn ** 3), (p.deriv(), pn.deriv()),
                      (q.integ(), qn.integ()), (q.integ(2, 1.0), qn.integ(2, 1.0)), (p / 2, pn / 2)):
        compare(got.coeffs, want.coeffs, rtol=1e-5, atol=1e-5, check_dtype=False)
    qq, rr = p / q
    qqn, rrn = pn / qn
    compare(qq.coeffs, qqn.coeffs, rtol=1e-5, atol=1e-5)
    compare(p(q).coeffs, pn(qn).coeffs, check_dtype=False)  # composition
    assert p[2] == 1 and p[0] == 2 and p[5] == 0
    assert str(p) == str(pn) and repr(p) == "poly1d([ 1, -3,  2])"
    assert p == pm.poly1d([1, -3, 2]) and p != q
    compare(pm.poly1d([1.0, 2.0], True).coeffs, np.poly1d([1.0, 2.0], True).coeffs)
    np.testing.assert_array_equal(np.asarray(p), np.asarray(pn))
    with pytest.raises(ValueError, match="power"):
        p ** -1
    with pytest.raises(TypeError):
        hash(p)
