"""Shaders/sort.metal through pymetal.arrays.kernels.sort, against NumPy."""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels.sort import searchsorted, sort
from kernels_util import DTYPES, IDS, bfloat16, device_copy, empty, host, huge, random

# Row lengths around the per-thread chunk (32) and merge widths; rows of 0 and 1.
SHAPES = [(0,), (1,), (5,), (3, 0), (0, 5), (7, 33), (4, 100), (3, 64), (2, 1000), (5000,)]


def data(rng, shape, dtype):
    """Random data with many ties; floats also get NaN, +-0.0 and +-inf."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        x = random(rng, shape, dtype)
        small = random(rng, shape, dtype, 0, 5)
        return np.where(rng.integers(0, 2, size=shape).astype(bool), x, small)
    if dtype == np.bool_:
        return random(rng, shape, dtype)
    x = rng.integers(-4, 5, size=shape).astype(np.float32) / 2
    special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan], np.float32)
    pick = rng.integers(0, 4 * len(special), size=shape)
    x = np.where(pick < len(special), special[np.minimum(pick, len(special) - 1)], x)
    return x.astype(dtype)


def reference_order(row, descending):
    """Stable (arg)sort order of a 1-d array in NumPy's order, or its reverse."""
    f = row.astype(np.float32) if row.dtype == bfloat16 else row
    perm = np.argsort(f, kind="stable")
    s = f[perm]
    if s.dtype.kind == "f":
        same = (s[1:] == s[:-1]) | (np.isnan(s[1:]) & np.isnan(s[:-1]))
    else:
        same = s[1:] == s[:-1]
    rank = np.empty(len(row), np.int64)
    rank[perm] = np.cumsum(np.concatenate([[True], ~same]))
    return np.argsort(-rank if descending else rank, kind="stable")


def bits(a):
    return a.view("u%d" % a.dtype.itemsize) if a.dtype != np.bool_ else a


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_sort(dev, rng, dtype, shape):
    x_np = data(rng, shape, dtype)
    x, _ = device_copy(x_np)
    rows = x_np.reshape(int(np.prod(shape[:-1])), shape[-1])
    for descending in (False, True):
        values, indices = empty(shape, dtype), pm.empty(shape, np.int64)
        assert sort(x, values, indices, descending=descending) == (values, indices)
        want_idx = np.array([reference_order(r, descending) for r in rows], np.int64).reshape(shape)
        np.testing.assert_array_equal(host(indices), want_idx)
        # Values bit for bit: -0.0 stays -0.0, NaN payloads survive.
        want = np.take_along_axis(x_np, want_idx, axis=-1)
        np.testing.assert_array_equal(bits(host(values)), bits(want))


def test_sort_one_output(dev, rng):
    x_np = data(rng, (3, 77), np.float32)
    x, _ = device_copy(x_np)
    values, none = sort(x)
    assert none is None
    np.testing.assert_array_equal(host(values), np.sort(x_np, axis=-1, kind="stable"))
    indices = pm.empty((3, 77), np.int64)
    assert sort(x, out_indices=indices) == (None, indices)
    np.testing.assert_array_equal(host(indices), np.argsort(x_np, axis=-1, kind="stable"))


def test_sort_large(dev, rng):
    x_np = rng.standard_normal(1 << 20).astype(np.float32)
    x_np[rng.integers(0, x_np.size, 1000)] = 0.5  # ties
    x, _ = device_copy(x_np)
    values, indices = sort(x, empty(x_np.shape, np.float32), pm.empty(x_np.shape, np.int64))
    np.testing.assert_array_equal(host(values), np.sort(x_np, kind="stable"))
    np.testing.assert_array_equal(host(indices), np.argsort(x_np, kind="stable"))
    # Many short rows.
    x_np = rng.integers(0, 50, size=(20000, 37)).astype(np.int16)
    x, _ = device_copy(x_np)
    values, indices = sort(x, empty(x_np.shape, np.int16), pm.empty(x_np.shape, np.int64), descending=True)
    want = np.argsort(-x_np.astype(np.int32), axis=-1, kind="stable")
    np.testing.assert_array_equal(host(indices), want)
    np.testing.assert_array_equal(host(values), np.take_along_axis(x_np, want, axis=-1))


def test_sort_errors(dev):
    x, _ = device_copy(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="out_values"):
        sort(x, pm.empty((3, 2), np.float32))
    with pytest.raises(ValueError, match="out_indices"):
        sort(x, out_indices=pm.empty((2, 3), np.int32))
    with pytest.raises(ValueError, match="dimension"):
        sort(pm.asarray(np.float32(1)))
    with pytest.raises(ValueError, match="too long"):
        sort(huge((1 << 30,), np.float32), huge((1 << 30,), np.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_searchsorted(dev, rng, dtype):
    for n, m in ((0, 5), (1, 3), (100, 0), (257, 1000)):
        raw = data(rng, (n,), dtype)
        s_np = raw[reference_order(raw, False)]
        v_np = data(rng, (m,), dtype)
        s, _ = device_copy(s_np)
        v, _ = device_copy(v_np)
        sf = s_np.astype(np.float32) if dtype == bfloat16 else s_np
        vf = v_np.astype(np.float32) if dtype == bfloat16 else v_np
        for side in ("left", "right"):
            got = host(searchsorted(s, v, side=side))
            np.testing.assert_array_equal(got, np.searchsorted(sf, vf, side=side))
    v2, _ = device_copy(data(rng, (4, 5), dtype))
    got = host(searchsorted(s, v2, pm.empty((4, 5), np.int64), side="right"))
    np.testing.assert_array_equal(got, np.searchsorted(sf, host(v2).astype(sf.dtype), side="right"))


def test_searchsorted_errors(dev):
    s, _ = device_copy(np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError, match="side"):
        searchsorted(s, s, side="middle")
    with pytest.raises(TypeError, match="dtype"):
        searchsorted(s, pm.asarray(np.arange(3, dtype=np.int32)))
    with pytest.raises(ValueError, match="1-d"):
        searchsorted(pm.asarray(np.zeros((2, 2), np.float32)), s)


def test_sort_back_to_back(dev, rng):
    # Asynchronous calls reuse the glue's temporary buffers: each must see its own data.
    inputs = [data(rng, shape, np.float32) for shape in ((3000,), (2, 100), (50,), (4, 700))]
    outs = []
    for x_np in inputs:
        x, _ = device_copy(x_np)
        outs.append(sort(x, out_indices=pm.empty(x_np.shape, np.int64))[1])
    for out, x_np in zip(outs, inputs):
        np.testing.assert_array_equal(host(out), np.argsort(x_np, axis=-1, kind="stable"))
