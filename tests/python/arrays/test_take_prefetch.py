"""The take kernel's prefetch (Shaders/gather.metal, TAKE_PREFETCH = 128
indices ahead on a CPU): index counts around the look-ahead and the chunk,
out-of-range, huge and negative indices inside the look-ahead window (they are
prefetched before they are checked), and rows of a 2-d take, against NumPy.
"""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import gather as G
from kernels_util import DTYPES, IDS, device_copy, host, random

AHEAD = 128  # TAKE_PREFETCH


def bits(a):
    return a.view("u%d" % a.dtype.itemsize) if a.dtype != np.bool_ else a


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_take_around_the_lookahead(dev, rng, dtype):
    for n in (1, 3, AHEAD - 1, AHEAD, AHEAD + 1, 1000):
        x_np = random(rng, n, dtype)
        x, _ = device_copy(x_np)
        for m in (1, AHEAD - 1, AHEAD, AHEAD + 1, 2 * AHEAD + 1, 64 * 3 + 1):
            idx = rng.integers(-n, n, m)
            np.testing.assert_array_equal(bits(host(pm.take(x, pm.asarray(idx)))), bits(np.take(x_np, idx)))


@pytest.mark.parametrize("chunk", [1, 64, 256])
@pytest.mark.parametrize("m", [AHEAD - 1, AHEAD, AHEAD + 1, 1000])
def test_take_bad_index_inside_the_lookahead(dev, monkeypatch, chunk, m):
    """A bad index AHEAD positions after the first: prefetched (clamped) by
    the first index's iteration, then reported as out of range."""
    monkeypatch.setitem(G.CHUNK, dev.backend, chunk)
    x = pm.asarray(np.arange(10, dtype=np.float32))
    for at in {0, min(AHEAD, m - 1), m - 1}:
        for bad in (10, -11, 1 << 62, -(1 << 62)):
            idx = np.full(m, -1, np.int64)
            idx[at] = bad
            with pytest.raises(IndexError, match="index %d is out of bounds" % bad):
                pm.take(x, pm.asarray(idx))


def test_take_rows_prefetch(dev, rng):
    """2-d takes along the last axis: each row's look-ahead stays in its row."""
    for rows, n, m in ((3, 1, AHEAD + 1), (7, 130, 2 * AHEAD), (2, 5000, 3 * AHEAD + 7)):
        x_np = rng.standard_normal((rows, n)).astype(np.float32)
        idx = rng.integers(-n, n, m)
        got = host(pm.take(pm.asarray(x_np), pm.asarray(idx), axis=1))
        np.testing.assert_array_equal(got, np.take(x_np, idx, axis=1))


def test_take_large_random(dev, rng):
    """Past the cache (4M float32 = 16 MiB, the prefetch's case), every index
    negative or positive."""
    n = 1 << 22
    x_np = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(-n, n, n + 5)
    np.testing.assert_array_equal(host(pm.take(pm.asarray(x_np), pm.asarray(idx))), np.take(x_np, idx))
