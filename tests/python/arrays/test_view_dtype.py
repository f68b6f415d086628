"""Array.view(dtype) of another itemsize: NumPy's rule (the last axis, contiguous,
re-cut in the new itemsize), sharing memory, and a clear error where NumPy refuses
too or where pymetal's kernels need whole aligned elements."""

import numpy as np
import pytest

import pymetal as pm

DTYPES = [np.uint8, np.int16, np.float16, np.int32, np.float32, np.uint32, np.int64, np.float64, np.complex64]
SHAPES = [(0,), (1,), (16,), (3, 8), (2, 3, 8), (5, 0, 8)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("src", [np.uint8, np.int32, np.float32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", DTYPES, ids=lambda d: np.dtype(d).name)
def test_view_matches_numpy(src, dst, shape):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 255, size=shape).astype(src)
    if a.size and (a.shape[-1] * a.itemsize) % np.dtype(dst).itemsize:
        with pytest.raises(ValueError, match="whole number|divisor"):  # (float64: NumPy's message)
            pm.asarray(a).view(dst)
        return
    expected = a.view(dst)
    got = pm.asarray(a).view(dst)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy().view(np.uint8), expected.view(np.uint8))


def test_view_shares_memory_both_ways():
    x = pm.asarray(np.arange(8, dtype=np.float32))
    v = x.view(np.uint8)
    v[0:4] = pm.asarray(np.array([0, 0, 128, 63], np.uint8))  # 1.0f, little-endian
    assert x.numpy()[0] == 1.0
    x[1] = 2.0
    np.testing.assert_array_equal(v.numpy()[4:8], np.array([2.0], np.float32).view(np.uint8))
    w = x.view(np.float64)
    w[3] = 0.5
    np.testing.assert_array_equal(x.numpy()[6:8], np.array([0.5]).view(np.float32))


def test_view_of_slices():
    a = np.arange(24, dtype=np.int32).reshape(3, 8)
    x = pm.asarray(a)
    np.testing.assert_array_equal(x[1:, 2:6].view(np.int64).numpy(), a[1:, 2:6].view(np.int64))
    np.testing.assert_array_equal(x[::2].view(np.uint8).numpy(), a[::2].view(np.uint8))
    np.testing.assert_array_equal(x[:, :1].view(np.uint16).numpy(), a[:, :1].view(np.uint16))


@pytest.mark.parametrize("make, match", [
    (lambda x: x[:, ::2].view(np.int64), "contiguous"),
    (lambda x: x.T.view(np.int64), "contiguous"),
    (lambda x: x[:, :3].view(np.int64), "whole number"),
    (lambda x: x[0, 0].view(np.int64), "0-d"),
    (lambda x: x[:, 1:3].view(np.int64), "aligned"),  # NumPy allows it; pymetal's kernels read whole int64s
])
def test_view_refused_with_a_clear_message(make, match):
    x = pm.asarray(np.arange(24, dtype=np.int32).reshape(3, 8))
    with pytest.raises(ValueError, match=match):
        make(x)
