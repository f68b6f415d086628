"""max / min / argmax / argmin against NumPy where the CPU row kernels' lanes
and chunks matter (Shaders/reduce.h: 64 lanes for float max/min, 16 for the
rest; chunks per thread from pymetal/arrays/reduce.py): lengths around the
lane and chunk sizes, NaN in every position class (the lanes skip NaN and note
it apart), signed zeros, infinities, and every dtype."""

import numpy as np
import pytest

import pymetal as pm
from arraytest import ALL, BF16, FLOATS, assert_same, dtype_id, random

REAL = [dt for dt in ALL]
# Around 16 / 64 lanes, a thread's chunk, one pass (_SPLIT_MIN = 2^18) and several.
LENGTHS = [1, 2, 15, 16, 17, 63, 64, 65, 127, 1000, 4097, 65539, (1 << 18) + 1, 300001]


def _np_extreme(op, a, axis=None, keepdims=False):
    # NumPy's float16/bfloat16 max is the same value whatever the accumulation.
    return getattr(np, op)(a, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("dt", REAL, ids=dtype_id)
def test_lengths_all_dtypes(dev, rng, dt):
    for n in LENGTHS:
        a = random(rng, (n,), dt, -100, 100)
        x = pm.asarray(a)
        assert_same(pm.max(x), _np_extreme("max", a))
        assert_same(pm.min(x), _np_extreme("min", a))
        assert_same(pm.argmax(x), np.argmax(a).astype(np.int64), dtype=np.int64)
        assert_same(pm.argmin(x), np.argmin(a).astype(np.int64), dtype=np.int64)


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.float16),
                                BF16, np.dtype(np.int64)], ids=dtype_id)
def test_axes_and_keepdims(dev, rng, dt):
    for shape, axes in [((33, 1025), (None, 0, 1, -1)), ((1, 7), (0, 1)), ((5, 6, 7), (None, 0, 1, 2, (0, 2), (1, 2))),
                        ((3, 70001), (1, None)), ((70001, 3), (0,)), ((4, 1, 65), ((0, 1), 2))]:
        a = random(rng, shape, dt, -50, 50)
        x = pm.asarray(a)
        for axis in axes:
            for keepdims in (False, True):
                assert_same(pm.max(x, axis=axis, keepdims=keepdims), _np_extreme("max", a, axis, keepdims))
                assert_same(pm.min(x, axis=axis, keepdims=keepdims), _np_extreme("min", a, axis, keepdims))
                if axis is None or isinstance(axis, int):
                    assert_same(pm.argmax(x, axis=axis, keepdims=keepdims),
                                np.argmax(a, axis=axis, keepdims=keepdims).astype(np.int64), dtype=np.int64)
                    assert_same(pm.argmin(x, axis=axis, keepdims=keepdims),
                                np.argmin(a, axis=axis, keepdims=keepdims).astype(np.int64), dtype=np.int64)


@pytest.mark.parametrize("dt", FLOATS, ids=dtype_id)
def test_nan_positions(dev, rng, dt):
    """max/min propagate NaN, argmax/argmin give the first NaN's index, wherever it is:
    first, last, in a lane's tail, in a later chunk, several of them."""
    for n in (1, 17, 64, 65, 1000, 65539, 300001):
        base = random(rng, (n,), dt, -100, 100)
        for where in sorted({0, n - 1, n // 2, min(n - 1, 63), min(n - 1, 64), n - 1 - (n % 64)}):
            for extra in ((), (n - 1,), (n // 3,)):
                a = base.copy()
                a[where] = np.nan
                for e in extra:
                    a[e] = np.nan
                x = pm.asarray(a)
                assert np.isnan(float(pm.max(x))) and np.isnan(float(pm.min(x)))
                first = int(np.argmax(np.isnan(a)))
                assert int(pm.argmax(x)) == first == int(np.argmax(a))
                assert int(pm.argmin(x)) == first == int(np.argmin(a))
    # per row: NaN rows propagate, the others do not
    a = random(rng, (6, 300), dt, -100, 100)
    a[1, 0] = a[3, 299] = a[4, 150] = np.nan
    x = pm.asarray(a)
    for axis in (0, 1):
        assert_same(pm.max(x, axis=axis), np.max(a, axis=axis))
        assert_same(pm.min(x, axis=axis), np.min(a, axis=axis))
        assert_same(pm.argmax(x, axis=axis), np.argmax(a, axis=axis).astype(np.int64))
        assert_same(pm.argmin(x, axis=axis), np.argmin(a, axis=axis).astype(np.int64))


@pytest.mark.parametrize("dt", FLOATS, ids=dtype_id)
def test_infinities_and_signed_zeros(dev, dt):
    for vals in ([-np.inf] * 70, [np.inf] * 70, [-np.inf, np.inf] * 40, [0.0, -0.0] * 40, [-0.0] * 3 + [0.0] * 80):
        a = np.array(vals, np.float32).astype(dt)
        x = pm.asarray(a)
        assert float(pm.max(x)) == float(np.max(a)) and float(pm.min(x)) == float(np.min(a))
        assert int(pm.argmax(x)) == int(np.argmax(a)) and int(pm.argmin(x)) == int(np.argmin(a))


@pytest.mark.parametrize("dt", [np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint32), np.dtype(np.int8)],
                         ids=dtype_id)
def test_integer_extremes(dev, dt):
    info = np.iinfo(dt)
    for vals in ([info.min] * 100, [info.max] * 100, [info.min, info.max] * 50 + [0]):
        a = np.array(vals, dt)
        x = pm.asarray(a)
        assert int(pm.max(x)) == int(a.max()) and int(pm.min(x)) == int(a.min())
        assert int(pm.argmax(x)) == int(a.argmax()) and int(pm.argmin(x)) == int(a.argmin())


def test_empty_and_complex(dev):
    with pytest.raises(ValueError, match="zero-size"):
        pm.max(pm.zeros((0,), dtype=np.float32))
    with pytest.raises(ValueError, match="empty"):
        pm.argmin(pm.zeros((0,), dtype=np.int32))
    assert pm.max(pm.zeros((0, 5), dtype=np.float32), axis=1).shape == (0,)
    assert pm.argmax(pm.zeros((0, 5), dtype=np.float32), axis=1).shape == (0,)
    with pytest.raises(TypeError, match="complex"):
        pm.max(pm.asarray(np.ones(3, np.complex64)))
    with pytest.raises(TypeError, match="complex"):
        pm.argmax(pm.asarray(np.ones(3, np.complex64)))


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int32)], ids=dtype_id)
def test_4096_squared(dev, rng, dt):
    a = (rng.standard_normal((4096, 4096)) * 1000).astype(dt)
    x = pm.asarray(a)
    for axis in (None, 0, 1):
        assert_same(pm.max(x, axis=axis), np.max(a, axis=axis))
        assert_same(pm.min(x, axis=axis), np.min(a, axis=axis))
        assert_same(pm.argmax(x, axis=axis), np.argmax(a, axis=axis).astype(np.int64))
        assert_same(pm.argmin(x, axis=axis), np.argmin(a, axis=axis).astype(np.int64))


@pytest.mark.parametrize("dt", FLOATS + [np.dtype(np.int16)], ids=dtype_id)
def test_gpu_shaped_max_nan(dev, rng, dt, monkeypatch):
    """The SIMD-group row kernel (Apple GPUs) keeps the same NaN rule."""
    monkeypatch.setattr(pm.arrays.reduce, "GPU_SHAPES", True)
    for n in (1, 1000, 70000):
        a = random(rng, (n,), dt, -100, 100)
        if dt.kind == "f" or dt == BF16:
            a[n // 2] = np.nan
        x = pm.asarray(a)
        assert_same(pm.max(x), np.max(a))
        assert_same(pm.min(x), np.min(a))
