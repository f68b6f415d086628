"""The CPU backend's sort of one long row (Shaders/msd_sort.metal: a top-digit
pass over chunks, then each bucket radix-sorted in cache) against NumPy's stable
order: sizes around the chunk and bucket sizes, skewed data (one bucket holding
everything, buckets large enough to split again, few distinct values, sorted and
reversed input), NaN last, -0.0/+0.0 bit for bit, stability, descending order;
and unique_values (Shaders/unique.metal) over the sorted result."""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import msd_sort as M, sort as S
from kernels_util import DTYPES, IDS, host
from test_kernels_radix_sort import check
from test_kernels_sort import data


@pytest.fixture(autouse=True)
def msd(monkeypatch):
    monkeypatch.setattr(S, "ALGORITHM", "msd")


@pytest.fixture(params=[11, 8, None], ids=["top11", "top8", "top_auto"])
def top_bits(request, monkeypatch):
    monkeypatch.setattr(M, "TOP_BITS", request.param)


SIZES = [0, 1, 2, 17, M.WORKERS - 1, M.WORKERS + 1, 1023, 1025, 2049, 3 * M.WORKERS * 64 + 5, 100_003]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("n", SIZES)
def test_sizes_dtypes(dev, rng, top_bits, dtype, n):
    x_np = data(rng, (n,), dtype)
    check(x_np, False)
    check(x_np, True)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint64, np.float16], ids=str)
def test_random_full_range(dev, rng, top_bits, dtype):
    # Keys differing in every bit: all digits of every bucket pass.
    n = 200_001
    x_np = (rng.integers(0, 2**63 - 1, n, dtype=np.uint64) >> rng.integers(0, 60, n).astype(np.uint64))
    x_np = x_np.view(np.int64).astype(dtype) if np.dtype(dtype).kind in "iu" else rng.standard_normal(n).astype(dtype)
    check(x_np, False, want_indices=False)
    check(x_np, True, want_values=False)


@pytest.mark.parametrize("case", ["uniform01", "one_bucket", "few_values", "sorted", "reversed", "all_equal",
                                  "two_values", "huge_bucket"])
def test_skewed(dev, rng, top_bits, case):
    n = 300_007
    x_np = {
        "uniform01": lambda: rng.random(n).astype(np.float32),  # the last buckets hold most elements
        "one_bucket": lambda: (1.0 + rng.random(n) * 1e-4).astype(np.float32),  # keys share their top bits
        "few_values": lambda: rng.integers(0, 7, n).astype(np.float32) * 1000,
        "sorted": lambda: np.sort(rng.standard_normal(n).astype(np.float32)),
        "reversed": lambda: np.sort(rng.integers(-2**31, 2**31 - 1, n).astype(np.int32))[::-1].copy(),
        "all_equal": lambda: np.full(n, -3.5, np.float32),
        "two_values": lambda: np.where(rng.random(n) < 0.999, 5, -5).astype(np.int64),
        # one bucket far above the split size, its keys varying in low bits only
        "huge_bucket": lambda: np.concatenate([np.full(10, -2**40), rng.integers(0, 2**20, n) + 2**40]).astype(np.int64),
    }[case]()
    check(x_np, False)
    check(x_np, True)


def test_nan_signed_zero_stability(dev, rng):
    n = 400_000
    x_np = rng.integers(-3, 4, n).astype(np.float32)
    x_np[::5] = -0.0
    x_np[1::5] = 0.0
    x_np[2::97] = np.nan
    x_np[3::89] = -np.nan
    check(x_np, False)
    check(x_np, True)
    got = host(pm.sort(pm.asarray(x_np)))
    nans = int(np.isnan(x_np).sum())
    assert np.isnan(got[-nans:]).all() and not np.isnan(got[:-nans]).any()


def test_large(dev, rng):
    # 1M and a size that is not a multiple of the chunk, through pm.sort / pm.argsort.
    for n in (1 << 20, (1 << 21) + 12345):
        x_np = rng.random(n).astype(np.float32)
        x = pm.asarray(x_np)
        np.testing.assert_array_equal(host(pm.sort(x)), np.sort(x_np, kind="stable"))
        np.testing.assert_array_equal(host(pm.argsort(x)), np.argsort(x_np, kind="stable"))
        y = rng.integers(-2**62, 2**62, n)
        np.testing.assert_array_equal(host(pm.argsort(pm.asarray(y), descending=True)), np.argsort(-y, kind="stable"))


def test_axis_sorts_fall_back(dev, rng):
    # Several rows take the row radix sort; a 1-d sort along axis 0 of a 3-d array is one row per column.
    x_np = rng.integers(-50, 50, (3, 40, 70)).astype(np.int32)
    x = pm.asarray(x_np)
    for axis in (0, 1, 2):
        np.testing.assert_array_equal(host(pm.sort(x, axis=axis)), np.sort(x_np, axis=axis))
        np.testing.assert_array_equal(host(pm.argsort(x, axis=axis)), np.argsort(x_np, axis=axis, kind="stable"))


def test_default_choice(dev, monkeypatch):
    monkeypatch.setattr(S, "ALGORITHM", None)
    assert S._use_msd(S.MSD_MIN, 1) and not S._use_msd(S.MSD_MIN - 1, 1) and not S._use_msd(S.MSD_MIN, 2)
    assert S._use_msd(S.MSD_MIN_8, 1, 8) and not S._use_msd(S.MSD_MIN_8 - 1, 1, 8)
    assert not S._use_msd(S.MSD_MIN_8 - 1, 1, 4) and not S._use_msd(S.MSD_MIN_8, 2, 8)


def test_top_bits_rule():
    # Buckets of ~M.BUCKET elements: 8 bits up to 2M elements, 11 from 8M; a forced TOP_BITS wins.
    assert [M.top_bits(n) for n in (0, 1, 1 << 20, (1 << 21) - 1, 1 << 21, 1 << 22, (1 << 23) - 1, 1 << 23,
                                     1 << 29)] == [8, 8, 8, 8, 9, 10, 10, 11, 11]


def _check_sort(x_np, indices=True):
    x = pm.asarray(x_np)
    bits = "u%d" % x_np.dtype.itemsize
    np.testing.assert_array_equal(host(pm.sort(x)).view(bits), np.sort(x_np, kind="stable").view(bits))
    if indices:
        np.testing.assert_array_equal(host(pm.argsort(x)), np.argsort(x_np, kind="stable"))


@pytest.mark.parametrize("n", [S.MSD_MIN_8 - 1, S.MSD_MIN_8])
def test_msd_switch_8_byte(dev, rng, monkeypatch, n):
    # Either side of the default MSD / row radix switch of 8-byte keys.
    monkeypatch.setattr(S, "ALGORITHM", None)
    _check_sort(rng.integers(-2**63, 2**63 - 1, n))
    _check_sort(rng.integers(0, 1000, n).astype(np.uint64), indices=False)


@pytest.mark.parametrize("n", [S.MSD_MIN - 1, S.MSD_MIN])
def test_msd_switch_4_byte(dev, rng, monkeypatch, n):
    # Either side of the default switch of 4-byte keys (values only: NumPy's stable argsort of 8M is slow).
    monkeypatch.setattr(S, "ALGORITHM", None)
    _check_sort(rng.random(n).astype(np.float32), indices=False)


@pytest.mark.parametrize("n", [(1 << 21) - 1, 1 << 21, (1 << 22) - 1, 1 << 22])
def test_top_bits_switches(dev, rng, n):
    # Either side of a change of the top digit's width (8 -> 9 -> 10 bits), the MSD sort forced.
    _check_sort(rng.random(n).astype(np.float32))
    _check_sort(rng.integers(-2**31, 2**31 - 1, n).astype(np.int32), indices=False)


def _all_patterns(dtype, rng):
    """Every bit pattern of a 2-byte float type; for float32 the edges of each class
    (zeros, subnormals, normals, infinities, signalling and quiet NaNs with payloads,
    each sign) and random patterns; shuffled, each several times."""
    if dtype.itemsize == 2:
        bits = np.arange(1 << 16, dtype=np.uint16)
    else:
        edges = np.array([0, 1, 2, 0x7fffff, 0x800000, 0x800001, 0x3f800000, 0x7f7fffff, 0x7f800000, 0x7f800001,
                          0x7fbfffff, 0x7fc00000, 0x7fc00001, 0x7fffffff], np.uint32)
        bits = np.concatenate([edges, edges | 0x80000000, rng.integers(0, 1 << 32, 20000, dtype=np.uint32)])
    bits = np.repeat(bits, 3)
    return bits[rng.permutation(len(bits))].view(dtype)


@pytest.mark.parametrize("algorithm", ["msd", "radix", "merge"])
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.float32], ids=str)
def test_float_key_every_class(dev, rng, monkeypatch, algorithm, dtype):
    # The sort key of sort.h (integer operations only): NumPy's order over every
    # kind of value, NaNs (either sign, any payload) equal and last, -0.0 == +0.0,
    # patterns kept bit for bit, stable; ascending and descending.
    from kernels_util import bfloat16
    monkeypatch.setattr(S, "ALGORITHM", algorithm)
    x_np = _all_patterns(np.dtype(bfloat16 if dtype == "bfloat16" else dtype), rng)
    check(x_np, False)
    check(x_np, True)


def _unique_reference(x):
    # In float32 for float16: NumPy 2.4.6's default sort of float16 left 3M normal values unsorted
    # (np.sort 992 elements out of place, np.unique duplicates), its stable sort did not.
    u = np.unique(x.astype(np.float32)).astype(x.dtype) if x.dtype == np.float16 else np.unique(x)
    # NumPy gives one NaN; each NaN is distinct in the Array API
    if x.dtype.kind == "f":
        u = np.concatenate([u[~np.isnan(u)], np.full(int(np.isnan(x).sum()), np.nan, x.dtype)])
    return u


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("n", [1, 2, 17, 4095, 4097, 300_001])
def test_unique_values(dev, rng, dtype, n):
    x_np = data(rng, (n,), dtype)
    got = host(pm.unique_values(pm.asarray(x_np)))
    want = _unique_reference(x_np.astype(np.float32) if x_np.dtype.name == "bfloat16" else x_np)
    np.testing.assert_array_equal(got.astype(want.dtype), want)  # assert_array_equal: NaN equals NaN


def test_unique_values_many_and_few(dev, rng):
    for x_np in (rng.random(1 << 20).astype(np.float32), rng.integers(0, 1000, 1 << 20).astype(np.float32),
                 np.zeros(5000, np.float32), np.array([-0.0, 0.0] * 3000, np.float32)):
        got = host(pm.unique_values(pm.asarray(x_np)))
        np.testing.assert_array_equal(got, _unique_reference(x_np))
