"""One body, run with NumPy and with pymetal, results compared (for the NumPy-API tests).

check(f, *arrays) calls f(np, *arrays) and f(pm, *pymetal copies) and compares the
results: tuples and lists element by element, Python scalars by value, arrays by
shape, dtype (NumPy's float64 / complex128 are float32 / complex64 on pymetal)
and values within the dtype's tolerance.
"""

import numpy as np

import pymetal as pm
from arraytest import RTOL

DEVICE_DTYPE = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}


def device_dtype(dt):
    return DEVICE_DTYPE.get(np.dtype(dt), np.dtype(dt))


def compare(got, want, rtol=None, atol=None, check_dtype=True):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), "expected a sequence, got %s" % type(got).__name__
        assert len(got) == len(want), (len(got), len(want))
        for g, w in zip(got, want):
            compare(g, w, rtol, atol, check_dtype)
        return
    if isinstance(want, (bool, np.bool_)) and not isinstance(got, pm.Array):
        assert type(got) is bool and got == bool(want), (got, want)
        return
    if not isinstance(want, np.ndarray) and not isinstance(got, pm.Array):
        assert got == want or (want != want and got != got), (got, want)
        return
    assert isinstance(got, pm.Array), "expected a pymetal Array, got %s" % type(got).__name__
    g = got.numpy()
    w = np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if check_dtype:
        assert g.dtype == device_dtype(w.dtype), (g.dtype, w.dtype)
    if g.dtype.kind in "biu" and w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
        return
    r = RTOL.get(g.dtype, 2e-6) * 4 if rtol is None else rtol
    a = r if atol is None else atol
    np.testing.assert_allclose(g.astype(np.complex64 if g.dtype.kind == "c" else np.float32),
                               w.astype(np.complex64 if g.dtype.kind == "c" else np.float32),
                               rtol=r, atol=a, equal_nan=True)


def check(f, *arrays, rtol=None, atol=None, check_dtype=True):
    """f(np, *arrays) against f(pm, *arrays as pymetal arrays)."""
    want = f(np, *arrays)
    got = f(pm, *[pm.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
    compare(got, want, rtol, atol, check_dtype)
    return got


def data(shape, dtype, seed=0, lo=-10, hi=10):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(lo, info.min), min(hi, info.max), size=shape, endpoint=True).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dt)
    return rng.uniform(lo, hi, shape).astype(dt)
