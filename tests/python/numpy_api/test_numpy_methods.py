"""ndarray's methods with NumPy's signatures on pymetal arrays (issue 23), NumPy as the oracle."""

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, compare, data

SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]
DTYPES = [np.float32, np.int32, np.int64, np.uint8, np.bool_]


def _axes(shape):
    return [None] + list(range(len(shape))) + ([-1] if shape else [])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("method", ["sum", "prod", "any", "all", "mean", "cumsum", "cumprod"])
def test_reductions_positional_axis(method, dtype, shape):
    x = data(shape, dtype, lo=-3, hi=3)
    for axis in _axes(shape):
        if method == "mean" and 0 in shape:
            continue  # NumPy warns and gives NaN: tested below
        check(lambda xp, a: getattr(a, method)(axis), x)
        if method not in ("cumsum", "cumprod"):
            check(lambda xp, a: getattr(a, method)(axis, keepdims=True), x)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("method", ["max", "min", "ptp", "argmax", "argmin"])
def test_extremes(method, dtype, shape):
    x = data(shape, dtype)
    for axis in _axes(shape):
        if method == "ptp":
            check(lambda xp, a: xp.ptp(a, axis), x)
        else:
            check(lambda xp, a: getattr(a, method)(axis), x)
            check(lambda xp, a: getattr(a, method)(axis=axis, keepdims=True), x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's, where ddof leaves nothing: NaN
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4)], ids=str)
def test_var_std_ddof(shape):
    x = data(shape, np.float32)
    for axis in _axes(shape):
        for ddof in (0, 1):
            check(lambda xp, a: a.var(axis, ddof=ddof), x, rtol=1e-5, atol=1e-5)
            check(lambda xp, a: a.std(axis, None, None, ddof), x, rtol=1e-5, atol=1e-5)
    check(lambda xp, a: a.std(ddof=1, keepdims=True), x, rtol=1e-5, atol=1e-5)


def test_mean_of_ints_is_float32_and_empty_is_nan():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = pm.asarray(x).mean(0)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), x.mean(0))
    assert np.isnan(float(pm.zeros(0).mean()))
    assert pm.asarray(x).mean(dtype=pm.float16).dtype == np.float16


def test_out_and_errors():
    x = pm.asarray([[1.0, 2.0], [3.0, 4.0]])
    out = pm.empty(2)
    assert x.sum(0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    with pytest.raises(ValueError, match="shape"):
        x.sum(0, out=pm.empty(3))
    with pytest.raises(TypeError, match="out= must be a pymetal Array"):
        x.sum(0, out=np.empty(2, np.float32))
    with pytest.raises(ValueError, match="ddof and correction"):
        x.std(ddof=1, correction=1)
    with pytest.raises(ValueError, match="sort kind"):
        x.argsort(kind="bogus")
    assert x.sum(0, None, None, False, 5).tolist() == [9.0, 11.0]  # the fifth is initial=, as NumPy's
    with pytest.raises(TypeError):
        x.sum(0, None, None, False, 0, True, 1)  # one positional argument too many, as NumPy's


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (4, 6)], ids=str)
def test_sort_in_place_and_argsort(dtype, shape):
    x = data(shape, dtype)
    for axis in ([-1, 0] if len(shape) > 1 else [-1]):
        a = pm.asarray(x.copy())
        assert a.sort(axis) is None
        want = x.copy()
        want.sort(axis)
        np.testing.assert_array_equal(a.numpy(), want)
        check(lambda xp, v: v.argsort(axis, kind="stable"), x)
    check(lambda xp, v: xp.sort(v, None), x)
    check(lambda xp, v: xp.argsort(v, axis=None, kind="stable"), x)


def test_sort_nan_last_in_place_view():
    x = np.array([[3.0, np.nan, 1.0], [2.0, 0.5, -1.0]], np.float32)
    a = pm.asarray(x.copy())
    a[:, 1:].sort()  # a view, sorted in place
    want = x.copy()
    want[:, 1:].sort()
    np.testing.assert_array_equal(a.numpy(), want)
    ro = pm.broadcast_to(pm.asarray([2, 1]), (2, 2))
    with pytest.raises(ValueError, match="read-only"):
        ro.sort()


def test_shape_methods():
    x = data((2, 3, 4), np.float32)
    check(lambda xp, a: a.reshape(4, 6), x)
    check(lambda xp, a: a.reshape((4, 6), order="F"), x)
    check(lambda xp, a: a.reshape(-1, order="F"), x)
    check(lambda xp, a: a.ravel(), x)
    check(lambda xp, a: a.ravel("F"), x)
    check(lambda xp, a: a.flatten("F"), x)
    check(lambda xp, a: a.transpose(1, 0, 2), x)
    check(lambda xp, a: a.transpose((2, 0, 1)), x)
    check(lambda xp, a: a.swapaxes(0, 2), x)
    check(lambda xp, a: a.T, x)
    check(lambda xp, a: a[:, :1].squeeze(1), x)
    check(lambda xp, a: a.repeat(2, 1), x)
    check(lambda xp, a: a.repeat(3), x[0, 0])
    check(lambda xp, a: a.take([0, 5, -1]), x)
    check(lambda xp, a: a.take([[0, 2]], 2), x)
    check(lambda xp, a: a.take([0, 7, -9], mode="wrap"), x[0, 0])
    check(lambda xp, a: a.take([0, 7, -9], mode="clip"), x[0, 0])
    check(lambda xp, a: a.diagonal(), x)
    check(lambda xp, a: a.diagonal(1, 1, 2), x)
    check(lambda xp, a: a.trace(), x[0], rtol=1e-5)
    check(lambda xp, a: a.trace(-1, dtype=xp.int32), x[0].astype(np.int16))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex64], ids=lambda d: np.dtype(d).name)
def test_value_methods(dtype):
    x = data((3, 4), dtype)
    check(lambda xp, a: a.astype(float), x.real if x.dtype.kind == "c" else x)
    check(lambda xp, a: a.astype(int), x.real if x.dtype.kind == "c" else x)
    check(lambda xp, a: a.copy(), x)
    check(lambda xp, a: a.conj(), x)
    check(lambda xp, a: a.conjugate(), x)
    check(lambda xp, a: a.nonzero(), x)
    if x.dtype.kind != "b":
        check(lambda xp, a: a.real, x)
        check(lambda xp, a: a.imag, x)
    if x.dtype.kind in "fi":
        check(lambda xp, a: a.clip(-2, 3), x)
        check(lambda xp, a: a.clip(None, 3), x)
        check(lambda xp, a: a.round(), x)
        check(lambda xp, a: a.dot(a.T), x)
    assert pm.asarray(x).tolist() == x.tolist()
    assert pm.asarray(x).item(5) == x.item(5)
    assert pm.asarray(x).nbytes == x.nbytes and pm.asarray(x).itemsize == x.itemsize


def test_round_decimals():
    x = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, -2.675, 123.456], np.float32)
    for d in (0, 1, 2, -1, -2):
        check(lambda xp, a: a.round(d), x, rtol=1e-6, atol=1e-5)
    i = np.array([1234, -5650, 5750, 15, 25], np.int64)
    for d in (0, 2, -1, -2):
        check(lambda xp, a: a.round(d), i)
        check(lambda xp, a: xp.round(a, d), i)


def test_real_imag_are_views_of_complex():
    z = pm.asarray(np.array([1 + 2j, 3 - 4j], np.complex64))
    z.real[0] = 10.0
    z.imag = pm.asarray([7.0, 8.0])
    np.testing.assert_array_equal(z.numpy(), np.array([10 + 7j, 3 + 8j], np.complex64))
    r = pm.asarray([1.0, 2.0])
    assert r.real is r
    with pytest.raises(TypeError, match="imaginary"):
        r.imag = 1.0


def test_view_fill_item_searchsorted_put():
    x = pm.asarray([1.0, 2.0])
    np.testing.assert_array_equal(x.view(pm.int32).numpy(), np.array([1.0, 2.0], np.float32).view(np.int32))
    x.fill(3)
    assert x.tolist() == [3.0, 3.0]
    s = pm.asarray([1, 3, 5, 7])
    compare(s.searchsorted([3, 6]), np.array([1, 3]))
    compare(s.searchsorted([3, 6], "right"), np.array([2, 3]))
    y = pm.zeros(5, pm.int64)
    y.put([0, -1], [4, 9])
    assert y.tolist() == [4, 0, 0, 0, 9]
    with pytest.raises(ValueError, match="C-contiguous"):
        pm.zeros((4, 4))[:, 0].put([0], [1])


def test_argpartition_is_a_partition():
    x = data((5, 9), np.float32, seed=3)
    for kth in (0, 4, 8, [2, 6]):
        got = pm.asarray(x).argpartition(kth, 1).numpy()
        part = np.take_along_axis(x, got, 1)
        for k in np.atleast_1d(kth):
            assert (part[:, :k] <= part[:, k:k + 1]).all() and (part[:, k + 1:] >= part[:, k:k + 1]).all()
            np.testing.assert_array_equal(part[:, k], np.partition(x, kth, 1)[:, k])
    with pytest.raises(ValueError, match="out of bounds"):
        pm.argpartition(pm.asarray(x), 9)


def test_partition_tobytes_module_reshape_ravel_copy_clip():
    x = data((4, 7), np.int32)
    a = pm.asarray(x.copy())
    assert a.partition(3) is None
    np.testing.assert_array_equal(a.numpy()[:, 3], np.partition(x, 3)[:, 3])
    assert pm.asarray(x).tobytes() == x.tobytes() and pm.asarray(x).T.tobytes() == x.T.tobytes()
    check(lambda xp, v: xp.reshape(v, (7, 4), "F"), x)
    check(lambda xp, v: xp.reshape(v, (2, -1)), x)
    check(lambda xp, v: xp.ravel(v, "F"), x)
    check(lambda xp, v: xp.copy(v.T), x)
    check(lambda xp, v: xp.clip(v, -2, 3), x)
    check(lambda xp, v: xp.clip(v, None, 3), x)
    f = pm.asarray(data((5,), np.float32))
    assert pm.clip(f, 0, 1, out=f) is f and float(pm.max(f)) <= 1.0
    with pytest.raises(ValueError, match="order"):
        pm.reshape(pm.asarray(x), -1, "X")


def test_python_float_and_complex_types_are_the_default_types(float64_error):
    # NumPy code's dtype=float: Python's float is the default float type (float32) everywhere;
    # an explicit np.float64 is refused under the "error" float64 policy (no double precision on the device)
    assert pm.zeros(3, dtype=float).dtype == np.float32
    assert pm.array([1, 2], dtype=float).dtype == np.float32
    assert pm.asarray([1, 2], dtype=complex).dtype == np.complex64
    assert pm.arange(3).astype(complex).dtype == np.complex64
    assert pm.arange(3).sum(dtype=float).dtype == np.float32
    assert pm.eye(2, dtype=float).dtype == np.float32
    with pytest.raises(TypeError, match="float64"):
        pm.zeros(3, dtype=np.float64)
