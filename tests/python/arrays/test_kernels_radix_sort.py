"""The CPU backend's radix sort (Shaders/radix_sort.metal, 8- and 11-bit digits), the MSD sort of
single rows (Shaders/msd_sort.metal; several rows take the radix sort) and the merge sort,
each forced through pymetal.arrays.kernels.sort.ALGORITHM, against NumPy: every
dtype, rows around the chunk sizes, NaN last, -0.0/+0.0 kept bit for bit,
stability with many equal keys, descending order, rows whose keys share bytes."""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import sort as S
from kernels_util import DTYPES, IDS, device_copy, empty, host
from test_kernels_sort import bits, data, reference_order

SHAPES = [(0,), (1,), (2,), (17,), (1023,), (1024,), (1025,), (3, 1025), (5, 0), (2, 4099), (9, 1100)]


@pytest.fixture(params=["radix8", "radix11", "msd", "merge"])
def algorithm(request, monkeypatch):
    """The radix sort with 8- and 11-bit digits (forced for every dtype), the MSD sort, the merge sort."""
    monkeypatch.setattr(S, "ALGORITHM", request.param[:5])
    if request.param.startswith("radix"):
        monkeypatch.setattr(S._radix, "BITS", int(request.param[5:]))
    return request.param


def check(x_np, descending, want_values=True, want_indices=True):
    x, _ = device_copy(x_np)
    shape = x_np.shape
    values = empty(shape, x_np.dtype) if want_values else None
    indices = pm.empty(shape, np.int64) if want_indices else None
    S.sort(x, values, indices, descending=descending)
    rows = x_np.reshape(-1, shape[-1]) if shape[-1] else x_np.reshape(0, 0)
    want_idx = np.array([reference_order(r, descending) for r in rows], np.int64).reshape(shape)
    if want_indices:
        np.testing.assert_array_equal(host(indices), want_idx)
    if want_values:  # bit for bit: -0.0 stays -0.0 where it was, NaN payloads survive
        np.testing.assert_array_equal(bits(host(values)), bits(np.take_along_axis(x_np, want_idx, axis=-1)))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_sort_both_algorithms(dev, rng, algorithm, dtype, shape):
    x_np = data(rng, shape, dtype)
    for descending in (False, True):
        check(x_np, descending)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint16], ids=str)
def test_one_output(dev, rng, algorithm, dtype):
    x_np = data(rng, (2, 3000), dtype)
    check(x_np, False, want_indices=False)
    check(x_np, True, want_values=False)


def test_stable_many_ties(dev, rng, algorithm):
    x_np = rng.integers(0, 3, 100_003).astype(np.float32)
    x_np[::5] = -0.0
    x_np[1::5] = 0.0
    x_np[2::97] = np.nan
    for descending in (False, True):
        check(x_np, descending)


@pytest.mark.parametrize("fill", [0, 7, -1])
def test_keys_sharing_bytes(dev, algorithm, fill):
    # All equal (no byte varies: the radix sort copies), and one varying byte only.
    check(np.full(5000, fill, np.int32), False)
    check(np.full(5000, fill, np.int32), True)
    x = (np.arange(5000, dtype=np.int32) % 200 + fill * 1000)[::-1].copy()
    check(x, False)
    check(x.astype(np.int64) << 40, True)


def test_nan_last_and_signed_zero(dev, algorithm):
    x_np = np.array([np.nan, 1.0, -0.0, -np.inf, 0.0, np.inf, -np.nan, -1.0, -0.0] * 200, np.float32)
    check(x_np, False)
    check(x_np, True)
    got = host(pm.sort(pm.asarray(x_np)))
    assert np.isnan(got[-400:]).all() and not np.isnan(got[:-400]).any()


def test_large_1m(dev, rng, algorithm):
    x_np = rng.standard_normal(1 << 20).astype(np.float32)
    x_np[rng.integers(0, x_np.size, 1000)] = 0.5
    x, _ = device_copy(x_np)
    np.testing.assert_array_equal(host(pm.sort(x)), np.sort(x_np))
    np.testing.assert_array_equal(host(pm.argsort(x)), np.argsort(x_np, kind="stable"))
    y = rng.integers(-2**31, 2**31 - 1, 1 << 20).astype(np.int32)
    np.testing.assert_array_equal(host(pm.argsort(pm.asarray(y), descending=True)),
                                  np.argsort(-y.astype(np.int64), kind="stable"))


def test_axis_sorts_2d(dev, rng, algorithm):
    x_np = rng.integers(-50, 50, (1500, 1200)).astype(np.int16)
    x = pm.asarray(x_np)
    for axis in (0, 1):
        np.testing.assert_array_equal(host(pm.sort(x, axis=axis)), np.sort(x_np, axis=axis))
        np.testing.assert_array_equal(host(pm.argsort(x, axis=axis)), np.argsort(x_np, axis=axis, kind="stable"))


def test_default_choice(dev):
    # The CPU backend sorts rows of RADIX_MIN elements or more with the radix sort.
    assert S._use_radix(dev, S.RADIX_MIN) == (dev.backend == "cpu")
    assert not S._use_radix(dev, S.RADIX_MIN - 1)


def test_long_row(dev, rng, algorithm):
    # A 4M-element row (one thread of the radix sort; 2^17 runs of the merge sort's first pass).
    x_np = rng.integers(-1000, 1000, (1 << 22) + 3).astype(np.float32) / 8
    x_np[::1001] = np.nan
    x_np[::997] = -0.0
    x, _ = device_copy(x_np)
    want = np.argsort(x_np, kind="stable")
    np.testing.assert_array_equal(host(pm.argsort(x)), want)
    np.testing.assert_array_equal(bits(host(pm.sort(x))), bits(x_np[want]))
