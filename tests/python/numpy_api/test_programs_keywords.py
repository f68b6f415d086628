"""NumPy's keyword arguments that real programs pass (found by scripts/numpy_programs.py and
one-line probes): initial= / where= of reductions, where= / dtype= of ufuncs, order= / ndmin= /
shape= of the constructors, integer linspace, svd(compute_uv=False). NumPy is the oracle."""

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, data

SHAPES = [(0,), (1,), (7,), (3, 5)]


@pytest.mark.filterwarnings("ignore:Mean of empty slice")  # NumPy's, for an all-False where of a row
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_reductions_initial_and_where(dtype, shape):
    x = data(shape, dtype, lo=0, hi=9)
    w = data(shape, np.bool_, seed=3)
    axes = [None, 0] + ([1, -1] if len(shape) > 1 else [])
    for axis in axes:
        for name, init in (("sum", 5), ("prod", 2), ("max", 4), ("min", 4)):
            check(lambda xp, a: getattr(xp, name)(a, axis=axis, initial=init), x, check_dtype=False)
            check(lambda xp, a, m: getattr(xp, name)(a, axis=axis, initial=init, where=m), x, w, check_dtype=False)
            check(lambda xp, a: getattr(xp, name)(a, axis=axis, initial=init, keepdims=True), x, check_dtype=False)
        check(lambda xp, a, m: xp.sum(a, axis=axis, where=m), x, w)
        check(lambda xp, a, m: xp.all(a, axis=axis, where=m), x, w)
        check(lambda xp, a, m: xp.any(a, axis=axis, where=m), x, w)
        if x.size:
            with np.errstate(invalid="ignore", divide="ignore"):
                check(lambda xp, a, m: xp.mean(a, axis=axis, where=m), x, w, rtol=1e-5, atol=1e-5)


def test_reduction_keywords_as_methods_and_errors():
    x = pm.asarray([[1, 5], [7, 2]])
    assert x.max(initial=9).item() == 9 and x.sum(where=pm.asarray([True, False])).tolist() == 8
    assert x.sum(0, None, None, False, 5).tolist() == [13, 12]  # initial is the fifth, as NumPy's
    with pytest.raises(ValueError, match="initial"):
        pm.max(x, where=pm.asarray([True, False]))  # no identity: NumPy asks for initial too
    with pytest.raises(ValueError, match="broadcast"):
        pm.sum(x, where=pm.ones((3, 2), pm.bool))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ufunc_where_and_dtype(shape):
    x = data(shape, np.float32, lo=1, hi=9)
    m = data(shape, np.bool_, seed=1)
    check(lambda xp, a, c: xp.sqrt(a, where=c, out=xp.full(a.shape, -1.0, dtype=xp.float32)), x, m)
    check(lambda xp, a, c: xp.add(a, 1, where=c, out=xp.zeros(a.shape, dtype=xp.float32)), x, m)
    check(lambda xp, a: xp.add(a, 2, dtype=xp.int64, casting="unsafe"), x)
    check(lambda xp, a: xp.negative(a, dtype=xp.int32, casting="unsafe"), x)
    check(lambda xp, a: xp.multiply(a, 3, dtype=xp.float32), x.astype(np.int32))
    check(lambda xp, a: xp.multiply(a, 3, dtype=xp.int64), x.astype(np.int32))
    with pytest.raises(TypeError, match="Cannot cast"):
        pm.add(pm.asarray(x), 2, dtype=pm.int64)  # float to int is not same_kind, as NumPy's
    out = pm.zeros(shape, pm.float32)
    assert pm.exp(pm.asarray(x), out=out, casting="same_kind") is out
    assert pm.sqrt(pm.asarray(x), where=True).shape == shape


def test_ufunc_keyword_errors():
    x = pm.arange(3.0)
    with pytest.raises(TypeError, match="bogus"):
        pm.add(x, 1, bogus=3)
    with pytest.raises(ValueError, match="casting"):
        pm.sqrt(x, casting="sometimes")
    with pytest.raises(ValueError, match="order"):
        pm.sqrt(x, order="Z")
    with pytest.raises(TypeError, match="out="):
        pm.sqrt(x, where=x > 0, out=np.zeros(3, np.float32))


@pytest.mark.parametrize("order", ["C", "F"])
def test_constructors_order(order):
    check(lambda xp: xp.zeros((2, 3), order=order))
    check(lambda xp: xp.ones(4, int, order=order))
    check(lambda xp: xp.full((2, 2), 7, order=order))
    assert pm.empty((2, 3), order=order).shape == (2, 3)
    check(lambda xp: xp.array([[1, 2], [3, 4]], order=order))
    check(lambda xp: xp.asarray([[1.5, 2.5]], order=order))
    for like in ("zeros_like", "ones_like"):
        check(lambda xp, a: getattr(xp, like)(a, order=order), data((2, 3), np.int32))
    with pytest.raises(ValueError, match="order"):
        pm.zeros(3, order="K")  # NumPy's constructors take C or F only
    with pytest.raises(ValueError, match="order"):
        pm.asarray([1], order="X")


def test_constructors_ndmin_and_shape():
    for ndmin in (0, 1, 2, 4):
        check(lambda xp: xp.array([1, 2], ndmin=ndmin))
        check(lambda xp: xp.array(5, ndmin=ndmin))
    check(lambda xp, a: xp.zeros_like(a, shape=(2, 2)), data((3,), np.int64))
    check(lambda xp, a: xp.ones_like(a, dtype=xp.int8, shape=4), data((3,), np.float32))
    check(lambda xp, a: xp.full_like(a, 9, shape=(1, 2)), data((3,), np.int64))
    assert pm.empty_like([[1, 2]], shape=(3,)).shape == (3,)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("endpoint", [True, False])
def test_integer_linspace(dtype, endpoint):
    for start, stop, num in ((0, 10, 5), (-10, 10, 7), (0, 1, 3), (3, 200, 9), (0, 1, 0), (5, 5, 1)):
        if np.dtype(dtype).kind == "u" and start < 0:
            continue
        check(lambda xp: xp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


def test_svd_compute_uv():
    a = data((4, 3), np.float32)
    check(lambda xp, m: xp.linalg.svd(m, compute_uv=False), a, rtol=1e-4, atol=1e-4)
    check(lambda xp, m: xp.linalg.svd(m, False)[1], a, rtol=1e-4, atol=1e-4)
    s = pm.linalg.svd(pm.asarray(a @ a.T), hermitian=True)[1]
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a @ a.T)[1], rtol=1e-3, atol=1e-3)
