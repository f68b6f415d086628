"""The CPU-shaped take (Shaders/gather.metal) and compaction
(Shaders/compact.metal) kernels through pm.take, x[mask], pm.nonzero and
pm.unique_values, against NumPy: every dtype, sizes around the chunk sizes,
negative and out-of-range indices, masks of every density."""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import compact as C
from pymetal.arrays.kernels import gather as G
from kernels_util import DTYPES, IDS, device_copy, host, random

SIZES = [0, 1, 2, 17, 255, 256, 257, 1023, 1025, 4095, 4096, 4097, 10_001]


def bits(a):
    return a.view("u%d" % a.dtype.itemsize) if a.dtype != np.bool_ else a


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("n", [1, 2, 17, 257, 4097])
def test_take_dtypes(dev, rng, dtype, n):
    x_np = random(rng, n, dtype)
    x, _ = device_copy(x_np)
    for m in (0, 1, 3, 256, 1000):
        idx = rng.integers(-n, n, m)
        got = host(pm.take(x, pm.asarray(idx)))
        np.testing.assert_array_equal(bits(got), bits(np.take(x_np, idx)))


def test_take_complex_and_2d(dev, rng):
    z = (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(np.complex64)
    idx = rng.integers(-300, 300, 777)
    np.testing.assert_array_equal(host(pm.take(pm.asarray(z), pm.asarray(idx))), np.take(z, idx))
    x = rng.standard_normal((5, 40)).astype(np.float32)
    i = rng.integers(-40, 40, 60)
    np.testing.assert_array_equal(host(pm.take(pm.asarray(x), pm.asarray(i), axis=1)), np.take(x, i, axis=1))
    i0 = rng.integers(-5, 5, 9)  # rows: inner > 1 keeps the row kernel
    np.testing.assert_array_equal(host(pm.take(pm.asarray(x), pm.asarray(i0), axis=0)), np.take(x, i0, axis=0))


@pytest.mark.parametrize("chunk", [1, 7, 64, 256])
def test_take_chunks_and_large(dev, rng, monkeypatch, chunk):
    monkeypatch.setitem(G.CHUNK, dev.backend, chunk)
    # 64 (the CPU default): 1M + 3 indices, 16,385 threads, split over the cores
    x_np = rng.standard_normal((1 << 20) + 3 if chunk == 64 else 5000).astype(np.float32)
    idx = rng.integers(-x_np.size, x_np.size, x_np.size)
    np.testing.assert_array_equal(host(pm.take(pm.asarray(x_np), pm.asarray(idx))), np.take(x_np, idx))
    np.testing.assert_array_equal(host(pm.asarray(x_np)[pm.asarray(idx)]), x_np[idx])


@pytest.mark.parametrize("bad", [10, -11, 1 << 40, -(1 << 62)])
def test_take_out_of_range(dev, bad):
    x = pm.asarray(np.arange(10, dtype=np.float32))
    idx = np.zeros(3000, np.int64)
    idx[2999] = bad
    with pytest.raises(IndexError, match="index %d is out of bounds for axis 0 with size 10" % bad):
        pm.take(x, pm.asarray(idx))
    with pytest.raises(IndexError, match="out of bounds"):
        pm.take(pm.zeros(0), pm.asarray([0]))
    with pytest.raises(IndexError, match="out of bounds"):
        pm.take(pm.zeros((0, 5)), pm.asarray([7]), axis=1)  # empty result, still checked
    assert pm.take(x, pm.asarray(np.zeros(0, np.int64))).shape == (0,)


def nonzero_data(rng, n, dtype, density):
    x = random(rng, n, dtype)
    zero = rng.random(n) >= density
    x[zero] = 0
    if np.dtype(dtype).kind == "f" and x.size > 3:
        x.flat[1] = -0.0  # zero
        x.flat[2] = np.nan  # non-zero
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_nonzero(dev, rng, dtype, n):
    for density in (0.0, 0.3, 1.0):
        x_np = nonzero_data(rng, n, dtype, density)
        x, _ = device_copy(x_np)
        (got,) = pm.nonzero(x)
        np.testing.assert_array_equal(host(got), np.nonzero(x_np)[0])
        assert got.dtype == np.int64


def test_nonzero_nd_and_fallback(dev, rng):
    x_np = nonzero_data(rng, (7, 33, 5), np.float32, 0.4)
    for got, want in zip(pm.nonzero(pm.asarray(x_np)), np.nonzero(x_np)):
        np.testing.assert_array_equal(host(got), want)
    z = np.array([0, 1j, 0, 2, 0], np.complex64)  # complex: the scan-based path
    np.testing.assert_array_equal(host(pm.nonzero(pm.asarray(z))[0]), np.nonzero(z)[0])
    t = pm.asarray(x_np).permute_dims((2, 0, 1))  # a strided view
    for got, want in zip(pm.nonzero(t), np.nonzero(x_np.transpose(2, 0, 1))):
        np.testing.assert_array_equal(host(got), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_mask_getitem(dev, rng, dtype, n):
    x_np = random(rng, n, dtype)
    x, _ = device_copy(x_np)
    for density in (0.0, 0.5, 1.0):
        m = rng.random(n) < density
        got = host(x[pm.asarray(m)])
        np.testing.assert_array_equal(bits(got), bits(x_np[m]))


def test_mask_getitem_nd(dev, rng):
    x_np = rng.standard_normal((6, 7, 8)).astype(np.float32)
    x = pm.asarray(x_np)
    np.testing.assert_array_equal(host(x[x > 0.5]), x_np[x_np > 0.5])
    t = x.permute_dims((2, 1, 0))  # non-contiguous x
    np.testing.assert_array_equal(host(t[t > 0]), x_np.transpose(2, 1, 0)[x_np.transpose(2, 1, 0) > 0])
    np.testing.assert_array_equal(host(x[pm.asarray(x_np[:, :, 0] > 0)]), x_np[x_np[:, :, 0] > 0])  # partial mask
    z = (rng.standard_normal(50) + 1j).astype(np.complex64)
    np.testing.assert_array_equal(host(pm.asarray(z)[pm.asarray(z.real > 0)]), z[z.real > 0])
    with pytest.raises(IndexError, match="does not match"):
        x[pm.asarray(np.ones((6, 8), bool))]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int64, np.float16], ids=str)
@pytest.mark.parametrize("n", [0, 1, 2, 17, 1025, 100_000])
def test_unique_values(dev, rng, dtype, n):
    x_np = rng.integers(0, 50, n).astype(dtype)
    if np.dtype(dtype).kind == "f" and n > 3:
        x_np[:3] = [np.nan, -0.0, 0.0]
    got = host(pm.unique_values(pm.asarray(x_np)))
    want = np.unique(x_np, equal_nan=False)
    np.testing.assert_array_equal(got, want)


def test_compact_large(dev, rng):
    x_np = rng.random(1 << 20).astype(np.float32)
    x = pm.asarray(x_np)
    np.testing.assert_array_equal(host(x[x > 0.5]), x_np[x_np > 0.5])
    np.testing.assert_array_equal(host(pm.nonzero(x > 0.5)[0]), np.nonzero(x_np > 0.5)[0])
    assert C.supported(x) == (dev.backend == "cpu")
