"""Shaders/scan.metal through pymetal.arrays.kernels.scan, against NumPy."""

import numpy as np
import pytest

import pymetal as pm
import pymetal.arrays.kernels.scan as scan_glue
from pymetal.arrays.kernels.scan import cumulative
from kernels_util import bfloat16, device_copy, empty, host, huge, random

PAIRS = [(t, t) for t in ("float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
                          "uint8", "uint16", "uint32", "uint64")] + [
    ("bool", "int64"), ("int8", "int64"), ("int16", "int64"), ("int32", "int64"),
    ("uint8", "uint64"), ("uint16", "uint64"), ("uint32", "uint64")]
SHAPES = [(0,), (1,), (7,), (3, 0), (0, 4), (2, 1000), (3, 20001)]


def dt(name):
    return bfloat16 if name == "bfloat16" else np.dtype(name)


def reference(x, out_dt, op, exclusive):
    """NumPy's cumsum / cumprod; floats exactly (float64 on data whose partial
    results it holds exactly), rounded once to the output type."""
    f = np.cumsum if op == "sum" else np.cumprod
    if out_dt.kind == "f" or out_dt == bfloat16:
        ref = f(x.astype(np.float64), axis=-1)
    else:
        ref = f(x, axis=-1, dtype=out_dt)
    if exclusive:
        ident = np.zeros_like(ref[..., :1]) + (0 if op == "sum" else 1)
        ref = np.concatenate([ident, ref[..., :-1]], axis=-1)
    with np.errstate(over="ignore"):  # float16 products past 65504 are inf, as in the kernels
        return ref.astype(out_dt)


def data(rng, shape, name, op):
    """Random data. Floats: small integers (sums) or mostly 1 with some 2, 0.5
    and -1 (products), so that float32 holds every partial result exactly and
    the kernels' results must equal the exact ones rounded to the output type,
    whatever order they combine in. Integers: the whole range (sums) or small
    factors (products), which overflow and wrap around."""
    d = dt(name)
    if d.kind == "f" or d == bfloat16:
        if op == "sum":
            return rng.integers(-4, 5, size=shape).astype(d)
        return rng.choice(np.array([1.0] * 30 + [2.0, 0.5, -1.0], np.float32), size=shape).astype(d)
    if op == "prod" and name != "bool":
        return random(rng, shape, d, 0 if d.kind == "u" else -3, 3)
    return random(rng, shape, d)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "%s-%s" % p)
@pytest.mark.parametrize("chunk", [None, 16])
def test_cumulative(dev, rng, monkeypatch, pair, chunk):
    if chunk:  # many chunks per row even for short rows
        monkeypatch.setitem(scan_glue.CHUNK, dev.backend, chunk)
    in_name, out_name = pair
    for shape in SHAPES:
        for op in ("sum", "prod"):
            x_np = data(rng, shape, in_name, op)
            x, _ = device_copy(x_np)
            for exclusive in (False, True):
                out = empty(shape, dt(out_name))
                assert cumulative(x, out, op, exclusive=exclusive) is out
                np.testing.assert_array_equal(host(out), reference(x_np, out._dtype, op, exclusive))


def test_cumulative_large(dev, rng):
    # Normal data: float32 rounding in the kernels' order, within a few ulps of
    # the running sum of magnitudes.
    x_np = rng.standard_normal(1 << 22).astype(np.float32)
    x, _ = device_copy(x_np)
    got = host(cumulative(x, pm.empty(x_np.shape, np.float32)))
    want = np.cumsum(x_np.astype(np.float64))
    tol = np.cumsum(np.abs(x_np.astype(np.float64))) * 2.0 ** -23 * 64
    assert np.all(np.abs(got - want) <= tol)


def test_cumulative_errors(dev):
    x, _ = device_copy(np.zeros((2, 3), np.int8))
    with pytest.raises(ValueError, match="op"):
        cumulative(x, pm.empty((2, 3), np.int8), "max")
    with pytest.raises(TypeError, match="int8 cannot accumulate into uint64"):
        cumulative(x, pm.empty((2, 3), np.uint64))
    with pytest.raises(TypeError, match="bool cannot accumulate into bool"):
        cumulative(pm.asarray(np.zeros(3, bool)), pm.empty(3, np.bool_))
    with pytest.raises(ValueError, match="shape"):
        cumulative(x, pm.empty((3, 2), np.int8))
    with pytest.raises(ValueError, match="dimension"):
        cumulative(pm.asarray(np.float32(1)), pm.empty((), np.float32))
    with pytest.raises(ValueError, match="too many"):
        cumulative(huge((1 << 31,), np.float32), huge((1 << 31,), np.float32))


def test_cumulative_back_to_back(dev, rng, monkeypatch):
    # Asynchronous calls reuse the glue's chunk totals: each must see its own data.
    monkeypatch.setitem(scan_glue.CHUNK, dev.backend, 16)
    inputs = [random(rng, shape, np.int32) for shape in ((3000,), (2, 100), (50,), (4, 700))]
    outs = []
    for x_np in inputs:
        x, _ = device_copy(x_np)
        outs.append(cumulative(x, pm.empty(x_np.shape, np.int64)))
    for out, x_np in zip(outs, inputs):
        np.testing.assert_array_equal(host(out), np.cumsum(x_np, axis=-1, dtype=np.int64))
