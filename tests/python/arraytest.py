"""Helpers for testing the array library against NumPy (CuPy's testing style):
one test body computes with NumPy and with pymetal, and the results are compared
with tolerances per dtype."""

import numpy as np

import pymetal as pm

BF16 = np.dtype(pm.bfloat16)  # a dtype object, as the others (pm.bfloat16 is the scalar type)
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16]
SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UNSIGNED = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
INTS = SIGNED + UNSIGNED
BOOL = [np.dtype(np.bool_)]
ALL = BOOL + INTS + FLOATS

# Shapes: 0-d, empty, size 1, not multiples of a threadgroup, n-d.
SHAPES = [(), (0,), (1,), (257,), (3, 5), (2, 3, 4), (4, 0, 3)]

RTOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float16): 2e-3, BF16: 1.6e-2}


def dtype_id(dt):
    return pm.dtypes.NAMES.get(np.dtype(dt), str(dt))


def random(rng, shape, dtype, lo=-10, hi=10):
    """Random values of dtype in [lo, hi) (integers clipped to the type's range)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(np.ceil(lo)), info.min), min(int(np.floor(hi)), info.max)
        return rng.integers(lo, max(hi, lo + 1), size=shape, endpoint=False).astype(dt)
    return (rng.random(shape) * (hi - lo) + lo).astype(np.float32).astype(dt)


def as_np(x):
    if isinstance(x, pm.Array):
        return x.numpy()
    return np.asarray(x)


def assert_same(got, want, dtype=None, rtol=None, atol=None, equal_nan=True):
    """got (pymetal) against want (NumPy): dtype and shape exactly, values within tolerance."""
    assert isinstance(got, pm.Array), "expected a pymetal Array, got %s" % type(got).__name__
    g = got.numpy()
    w = np.asarray(want)
    if dtype is not None:
        assert g.dtype == np.dtype(dtype), (g.dtype, dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype.kind in "biu" and (w.dtype.kind in "biu"):
        np.testing.assert_array_equal(g, w)
        return
    dt = g.dtype
    r = RTOL.get(dt, 2e-6) if rtol is None else rtol
    a = (r * 1e-3 if atol is None else atol)
    if g.dtype.kind == "c" or w.dtype.kind == "c":  # complex64: both parts
        np.testing.assert_allclose(g, w.astype(np.complex64), rtol=r, atol=a, equal_nan=equal_nan)
        return
    np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=r, atol=a, equal_nan=equal_nan)
