"""The radix and MSD sorts' write prefetch (Shaders/radix_sort.metal,
msd_sort.metal: each scatter prefetches the line after the element it writes,
past a bucket's, a row's and the buffer's end too): rows whose lengths are
around a cache line of elements and of indices, every key width, several
rows, values and/or indices, ascending and descending, against NumPy's stable
order (bit for bit: -0.0/+0.0 and NaN payloads where they were)."""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import sort as S
from kernels_util import device_copy, empty, host
from test_kernels_sort import bits, data, reference_order

# Around 64-byte lines of 1-, 2-, 4- and 8-byte elements (64, 32, 16, 8) and of
# the uint32 / int64 index scratch (16, 8).
LENGTHS = [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1025, 4103]


@pytest.fixture(params=["radix8", "radix11", "msd"])
def algorithm(request, monkeypatch):
    monkeypatch.setattr(S, "ALGORITHM", request.param[:5])
    if request.param.startswith("radix"):
        monkeypatch.setattr(S._radix, "BITS", int(request.param[5:]))
    return request.param


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int32, np.int64, np.uint64], ids=str)
@pytest.mark.parametrize("rows", [1, 3])
def test_lengths_around_a_line(dev, rng, algorithm, dtype, rows):
    for n in LENGTHS:
        x_np = data(rng, (rows, n), dtype)
        x, _ = device_copy(x_np)
        for descending in (False, True):
            values, indices = empty(x_np.shape, x_np.dtype), pm.empty(x_np.shape, np.int64)
            S.sort(x, values, indices, descending=descending)
            want = np.array([reference_order(r, descending) for r in x_np], np.int64).reshape(x_np.shape)
            np.testing.assert_array_equal(host(indices), want)
            np.testing.assert_array_equal(bits(host(values)), bits(np.take_along_axis(x_np, want, axis=-1)))
            only = S.sort(x, descending=descending)[0]  # values alone: the other scatter loop
            np.testing.assert_array_equal(bits(host(only)), bits(np.take_along_axis(x_np, want, axis=-1)))


def test_public_sort_and_argsort_nan_zeros(dev, rng, algorithm):
    """pm.sort / pm.argsort (stable) with NaN, -0.0 and +0.0 through the forced algorithm."""
    for n in (17, 65, 5000):
        x_np = rng.standard_normal(n).astype(np.float32)
        x_np[::7] = -0.0
        x_np[3::7] = 0.0
        x_np[5::11] = np.nan
        x = pm.asarray(x_np)
        np.testing.assert_array_equal(host(pm.argsort(x)), np.argsort(x_np, kind="stable"))
        np.testing.assert_array_equal(bits(host(pm.sort(x))), bits(x_np[np.argsort(x_np, kind="stable")]))
