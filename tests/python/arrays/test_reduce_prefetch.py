"""The row reductions' prefetch (Shaders/reduce.h: PM_RED_PREFETCH = 8 KiB
ahead of the lanes / 256-element blocks on a CPU, past a chunk's and the
array's end too): lengths around the prefetch distance and a thread's chunk,
the extreme or a NaN as the very last element, signed zeros, every real dtype,
against NumPy."""

import numpy as np
import pytest

import pymetal as pm
from arraytest import ALL, FLOATS, assert_same, dtype_id, random

AHEAD = 8192  # bytes


def lengths(dt):
    e = AHEAD // dt.itemsize  # elements in the prefetch distance
    return [1, 255, 256, 257, e - 1, e, e + 1, 16383, 16384, 16385, 3 * 16384 + e + 1]


@pytest.mark.parametrize("dt", ALL, ids=dtype_id)
def test_extremes_around_the_prefetch_distance(dev, rng, dt):
    for n in lengths(dt):
        a = random(rng, (n,), dt, -100, 100)
        if dt.kind in "iu":
            a[-1] = np.iinfo(dt).max  # the extreme last: read after the prefetch ran past the end
        elif dt.kind == "f" or dt in FLOATS:
            a[-1] = 1000
        x = pm.asarray(a)
        assert_same(pm.max(x), np.max(a))
        assert_same(pm.min(x), np.min(a))
        assert_same(pm.argmax(x), np.argmax(a).astype(np.int64), dtype=np.int64)
        assert_same(pm.argmin(x), np.argmin(a).astype(np.int64), dtype=np.int64)
        if dt.kind in "iu":
            assert_same(pm.sum(x), np.sum(a))


@pytest.mark.parametrize("dt", FLOATS, ids=dtype_id)
def test_nan_last_and_signed_zeros(dev, rng, dt):
    for n in lengths(dt):
        a = random(rng, (n,), dt, -1, 1)
        a[a < 0.5] = 0
        a[::3] = -a[::3]  # -0.0 among the zeros
        x = pm.asarray(a)
        assert_same(pm.max(x), np.max(a))
        assert_same(pm.argmin(x), np.argmin(a).astype(np.int64), dtype=np.int64)
        a[-1] = np.nan
        x = pm.asarray(a)
        assert_same(pm.max(x), np.max(a))
        assert_same(pm.min(x), np.min(a))
        assert_same(pm.argmax(x), np.argmax(a).astype(np.int64), dtype=np.int64)
        assert_same(pm.argmin(x), np.argmin(a).astype(np.int64), dtype=np.int64)


def test_rows_around_the_prefetch_distance(dev, rng):
    """axis=-1 of several rows: each row's prefetch runs into the next row (or past the end)."""
    for dt in (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)):
        for n in (2047, 2048, 2049, 8193):
            a = random(rng, (5, n), dt, -100, 100)
            x = pm.asarray(a)
            for op in ("max", "min", "argmax", "argmin"):
                want = getattr(np, op)(a, axis=1)
                assert_same(getattr(pm, op)(x, axis=1), want.astype(np.int64) if op.startswith("arg") else want,
                            dtype=np.int64 if op.startswith("arg") else None)
