"""Reductions and statistics against NumPy over dtypes, axes and shapes."""

import numpy as np
import pytest

import pymetal as pm
from arraytest import ALL, BF16, FLOATS, INTS, assert_same, dtype_id, random

# Both paths: small arrays on the host (pymetal/arrays/small.py) and every op on its kernel.
pytestmark = pytest.mark.usefixtures("small_paths")

AXES_CASES = [((), None), ((0,), None), ((1,), 0), ((257,), None), ((3, 5), 0), ((3, 5), 1), ((3, 5), None),
              ((2, 3, 4), (0, 2)), ((2, 3, 4), 1), ((2, 3, 4), (1, 2)), ((4, 0, 3), 1), ((4, 0, 3), 2),
              ((40000,), None), ((100, 300), 0), ((3, 50000), 1)]


def _ref_sum(a, axis, keepdims):
    k = a.dtype.kind
    if a.dtype == BF16 or k == "f":
        return np.sum(a.astype(np.float32), axis=axis, keepdims=keepdims).astype(a.dtype)
    return np.sum(a, axis=axis, keepdims=keepdims, dtype=np.uint64 if k == "u" else np.int64)


@pytest.mark.parametrize("dt", ALL, ids=dtype_id)
def test_sum_prod(dev, rng, dt):
    for shape, axis in AXES_CASES:
        a = random(rng, shape, dt, -3, 4)
        x = pm.asarray(a)
        for keepdims in (False, True):
            want = _ref_sum(a, axis, keepdims)
            rtol = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 1e-2, BF16: 3e-2}.get(np.dtype(dt))
            assert_same(pm.sum(x, axis=axis, keepdims=keepdims), want, rtol=rtol, atol=1e-3 if rtol else None)
        if a.size < 50:
            p = np.prod(a.astype(np.float32) if dt in FLOATS else a, axis=axis,
                        dtype=None if dt in FLOATS else (np.uint64 if dt.kind == "u" else np.int64))
            assert_same(pm.prod(x, axis=axis), np.asarray(p).astype(dt) if dt in FLOATS else p, rtol=1e-2 if dt in FLOATS else None)


@pytest.mark.parametrize("dt", ALL, ids=dtype_id)
def test_max_min_all_any(dev, rng, dt):
    for shape, axis in AXES_CASES:
        a = random(rng, shape, dt)
        x = pm.asarray(a)
        red = [i for i in range(a.ndim)] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
        empty = any(a.shape[i] == 0 for i in red) if a.ndim else False
        if not empty:
            assert_same(pm.max(x, axis=axis), np.max(a, axis=axis))
            assert_same(pm.min(x, axis=axis, keepdims=True), np.min(a, axis=axis, keepdims=True))
        else:
            with pytest.raises(ValueError, match="zero-size"):
                pm.max(x, axis=axis)
        assert_same(pm.all(x, axis=axis), np.all(a, axis=axis))
        assert_same(pm.any(x, axis=axis), np.any(a, axis=axis))
        assert_same(pm.count_nonzero(x, axis=axis), np.asarray(np.count_nonzero(a, axis=axis)).astype(np.int64))


@pytest.mark.parametrize("dt", ALL, ids=dtype_id)
def test_argmax_argmin(dev, rng, dt):
    for shape, axis in [((1,), None), ((257,), None), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 1), ((40000,), None),
                        ((100, 300), 0), ((3, 50000), 1), ((7, 5), -1)]:
        a = random(rng, shape, dt, -3, 4)  # many ties: the first index must win
        x = pm.asarray(a)
        assert_same(pm.argmax(x, axis=axis), np.argmax(a, axis=axis).astype(np.int64), dtype=np.int64)
        assert_same(pm.argmin(x, axis=axis, keepdims=True),
                    np.argmin(a, axis=axis, keepdims=True).astype(np.int64))
    with pytest.raises(ValueError, match="empty"):
        pm.argmax(pm.zeros((0,)))


def test_nan_handling(dev):
    a = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 1.0, 5.0, 0.0]], np.float32)
    x = pm.asarray(a)
    for f in ("max", "min", "sum", "argmax", "argmin"):
        for axis in (None, 0, 1):
            want = getattr(np, f)(a, axis=axis)
            got = getattr(pm, f)(x, axis=axis)
            assert_same(got, np.asarray(want).astype(got.dtype))


def test_sum_is_accurate(dev, rng):
    # 16M float32 ones plus noise: a serial float32 sum would drift by far more.
    a = np.ones(1 << 24, np.float32)
    assert float(pm.sum(pm.asarray(a))) == float(1 << 24)
    b = rng.random(1 << 22).astype(np.float32)
    assert abs(float(pm.sum(pm.asarray(b))) - b.astype(np.float64).sum()) < 1e-5 * b.size ** 0.5 * 10
    h = np.full(100000, 0.1, np.float16)
    assert abs(float(pm.sum(pm.asarray(h))) - 100000 * float(np.float16(0.1))) < 100  # float32 accumulation


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.int32)], ids=dtype_id)
def test_mean_var_std(dev, rng, dt):
    for shape, axis in [((257,), None), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), (0, 2)), ((100, 300), 0)]:
        a = random(rng, shape, dt)
        x = pm.asarray(a)
        f = a.astype(np.float64)
        out = np.float32 if dt.kind in "iu" else dt
        tol = {np.dtype(np.float16): 5e-3, BF16: 3e-2}.get(np.dtype(dt), 1e-5)
        assert_same(pm.mean(x, axis=axis), np.mean(f, axis=axis).astype(out), rtol=tol, atol=tol)
        for corr in (0, 1):
            assert_same(pm.var(x, axis=axis, correction=corr), np.var(f, axis=axis, ddof=corr).astype(out),
                        rtol=tol * 4, atol=tol)
            assert_same(pm.std(x, axis=axis, correction=corr), np.std(f, axis=axis, ddof=corr).astype(out),
                        rtol=tol * 4, atol=tol)


def test_logsumexp(dev, rng):
    a = random(rng, (5, 7), np.float32, -50, 50) * 10
    x = pm.asarray(a)
    f = a.astype(np.float64)
    m = f.max(axis=1, keepdims=True)
    want = (np.log(np.exp(f - m).sum(axis=1, keepdims=True)) + m)
    assert_same(pm.logsumexp(x, axis=1, keepdims=True), want.astype(np.float32), rtol=1e-5)
    assert_same(pm.logsumexp(pm.asarray(np.array([-np.inf, -np.inf], np.float32))), np.float32(-np.inf))


def test_reductions_of_views(dev, rng):
    a = random(rng, (6, 8, 5), np.float32)
    x = pm.asarray(a)
    assert_same(pm.sum(x[::2, ::-1], axis=(0, 2)), np.sum(a[::2, ::-1], axis=(0, 2)), rtol=1e-5)
    assert_same(pm.max(x.T, axis=1), np.max(a.T, axis=1))
    assert_same(pm.argmax(x[:, 3], axis=0), np.argmax(a[:, 3], axis=0))
    assert_same(x.sum(axis=1), a.sum(axis=1), rtol=1e-5)


def test_errors(dev):
    with pytest.raises(np.exceptions.AxisError):
        pm.sum(pm.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="repeated"):
        pm.sum(pm.ones((2, 3)), axis=(0, 0))


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint64), np.dtype(np.bool_),
                                np.dtype(np.float16)], ids=dtype_id)
def test_gpu_shaped_reductions(dev, rng, dt, monkeypatch):
    """The SIMD-group row kernel Apple GPUs use, run here on the CPU backend."""
    monkeypatch.setattr(pm.arrays.reduce, "GPU_SHAPES", True)
    for shape, axis in [((1,), None), ((1000,), None), ((70000,), None), ((5, 300), 1), ((3, 4), 0)]:
        a = random(rng, shape, dt, -3, 4)
        x = pm.asarray(a)
        assert_same(pm.sum(x, axis=axis), _ref_sum(a, axis, False), rtol=2e-2 if dt == np.float16 else 1e-5)
        assert_same(pm.max(x, axis=axis), np.max(a, axis=axis))
        assert_same(pm.any(x, axis=axis), np.any(a, axis=axis))
