"""NumPy's statistics and data functions on pymetal arrays (issue 23), NumPy as the oracle."""

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, compare, data

DT_IDS = lambda d: np.dtype(d).name  # noqa: E731
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8, np.bool_], ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unique(dtype, shape):
    x = data(shape, dtype, lo=0, hi=4)
    check(lambda xp, a: xp.unique(a), x)
    check(lambda xp, a: xp.unique(a, return_index=True, return_inverse=True, return_counts=True), x)
    check(lambda xp, a: xp.unique(a, False, False, True), x)
    check(lambda xp, a: xp.unique(a, return_inverse=True), x)


def test_unique_nan():
    x = np.array([np.nan, 1.0, np.nan, 0.0, 1.0, np.nan], np.float32)
    check(lambda xp, a: xp.unique(a, True, True, True), x)
    check(lambda xp, a: xp.unique(a, True, True, True, equal_nan=False), x)
    assert pm.unique_values(pm.asarray(x)).shape == (5,)  # the standard's: every NaN distinct
    check(lambda xp, a: xp.unique(a, True, True, True, axis=0), x)  # 1-D: the values, NaNs as one


@pytest.mark.parametrize("n", [0, 1, 17, 1000])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_], ids=DT_IDS)
def test_bincount(n, dtype):
    x = data((n,), dtype, lo=0, hi=9)
    w = data((n,), np.float32, seed=5)
    check(lambda xp, a: xp.bincount(a), x)
    check(lambda xp, a: xp.bincount(a, minlength=12), x)
    check(lambda xp, a, b: xp.bincount(a, b), x, w, rtol=1e-5, atol=1e-4)
    check(lambda xp, a, b: xp.bincount(a, weights=b, minlength=3), x, (w > 0).astype(np.int32), check_dtype=False)


@pytest.mark.parametrize("runs_limit", [None, 1])
def test_bincount_histogram_large(monkeypatch, runs_limit):
    # many runs of private histograms (Shaders/histogram.metal) and, with runs_limit=1 bins
    # past the private histograms' limit, the sorting path; against NumPy
    from pymetal.arrays.kernels import histogram as hk
    if runs_limit:
        monkeypatch.setattr(hk, "_MAX_PARTIAL", 100)
    rng = np.random.default_rng(11)
    x = rng.integers(0, 5001, 300_007).astype(np.int64)
    w = rng.random(300_007).astype(np.float32)
    np.testing.assert_array_equal(pm.bincount(pm.asarray(x)).numpy(), np.bincount(x))
    np.testing.assert_allclose(pm.bincount(pm.asarray(x), pm.asarray(w)).numpy(), np.bincount(x, w), rtol=2e-6)
    v = rng.standard_normal(250_001).astype(np.float32)
    for bins in (7, 1000):
        c, e = pm.histogram(pm.asarray(v), bins, range=(-2, 2))
        en = np.histogram_bin_edges(v, bins, range=(-2, 2))
        np.testing.assert_allclose(e.numpy(), en, rtol=1e-6, atol=1e-6)
        # over pymetal's float32 edges, NumPy counts exactly the same (its own edges are float64)
        np.testing.assert_array_equal(c.numpy(), np.histogram(v, e.numpy().astype(np.float64))[0])
        assert c.numpy().sum() == ((v >= -2) & (v <= 2)).sum()
    # weight sums compensated: 1M x 0.1 into 3 bins lose no more than one rounding's worth
    k = np.arange(1_000_000) % 3
    got = pm.bincount(pm.asarray(k), pm.asarray(np.full(k.size, 0.1, np.float32))).numpy()
    np.testing.assert_allclose(got, np.bincount(k, np.full(k.size, np.float32(0.1), np.float64)), rtol=1e-6)
    with pytest.raises(ValueError, match="weights"):
        pm.histogram(pm.asarray(v), 3, weights=pm.asarray(w[:10]))


def test_bincount_errors():
    with pytest.raises(ValueError, match="negative"):
        pm.bincount(pm.asarray([1, -1]))
    with pytest.raises(ValueError, match="1-D"):
        pm.bincount(pm.asarray([[1]]))
    with pytest.raises(ValueError, match="1-D array of non-negative integers"):
        pm.bincount(pm.asarray([1.0]))
    with pytest.raises(ValueError, match="weights"):
        pm.bincount(pm.asarray([1, 2]), pm.asarray([1.0]))


@pytest.mark.parametrize("n", [1, 10, 257])
def test_histogram_digitize(n):
    x = data((n,), np.float32, seed=n)
    for bins in (1, 3, 10):
        check(lambda xp, a: xp.histogram(a, bins), x, rtol=1e-6, atol=1e-5)
        check(lambda xp, a: xp.histogram(a, bins, range=(-5, 5)), x, rtol=1e-6, atol=1e-5)
        check(lambda xp, a: xp.histogram(a, bins, density=True), x, rtol=1e-4, atol=1e-5)
    edges = np.array([-10, -2, 0, 3, 10], np.float32)
    check(lambda xp, a, e: xp.histogram(a, e), x, edges)
    check(lambda xp, a, e: xp.histogram(a, e, weights=a), x, edges, rtol=1e-5, atol=1e-4)
    ints = data((n,), np.int32)
    check(lambda xp, a: xp.histogram(a, 4), ints, rtol=1e-6, atol=1e-6)
    for right in (False, True):
        check(lambda xp, a, e: xp.digitize(a, e, right), x, edges)
        check(lambda xp, a, e: xp.digitize(a, e[::-1].copy(), right), x, edges)
        check(lambda xp, a, e: xp.digitize(a, e, right=right), np.array([-10, 0, 3, 10.5], np.float32), edges)


def test_histogram_special():
    check(lambda xp, a: xp.histogram(a, 3), np.full(4, 2.0, np.float32))
    check(lambda xp, a: xp.histogram(a, 3), np.zeros(0, np.float32))
    with pytest.raises(ValueError, match="finite"):
        pm.histogram(pm.asarray([1.0, np.inf]))
    with pytest.raises(ValueError, match="monotonically"):
        pm.histogram(pm.asarray([1.0]), pm.asarray([2.0, 1.0]))


@pytest.mark.parametrize("shape", [(1,), (7,), (4, 6), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=DT_IDS)
def test_quantiles(shape, dtype):
    x = data(shape, dtype)
    for axis in [None, 0, -1] + ([(0, 1)] if len(shape) == 3 else []):
        for q in (0.5, 0.0, 1.0, [0.1, 0.25, 0.9], 0.33):
            check(lambda xp, a: xp.quantile(a, q, axis), x, rtol=1e-5, atol=1e-5)
        check(lambda xp, a: xp.percentile(a, [5, 50, 95], axis, keepdims=True), x, rtol=1e-5, atol=1e-5)
        check(lambda xp, a: xp.median(a, axis), x, rtol=1e-5, atol=1e-5)
        check(lambda xp, a: xp.median(a, axis, keepdims=True), x, rtol=1e-5, atol=1e-5)
        for method in ("lower", "higher", "nearest", "midpoint"):
            check(lambda xp, a: xp.quantile(a, [0.3, 0.5, 0.75], axis, method=method), x, rtol=1e-5, atol=1e-5)


def test_quantiles_nan():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 5.0, 6.0, 7.0]], np.float32)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = np.nanmedian(x, 1)
    compare(pm.nanmedian(pm.asarray(x), 1), want)
    check(lambda xp, a: xp.median(a, 1), x)
    check(lambda xp, a: xp.percentile(a, 50, 1), x)
    with pytest.warns(RuntimeWarning):
        want = np.nanpercentile(x, [10, 90], 1)
    compare(pm.nanpercentile(pm.asarray(x), [10, 90], 1), want, rtol=1e-5)
    check(lambda xp, a: xp.nanquantile(a, 0.5), x)
    with pytest.raises(ValueError, match="range"):
        pm.quantile(pm.asarray(x), 1.5)
    with pytest.raises(ValueError, match="method"):
        pm.quantile(pm.asarray(x), 0.5, method="bogus")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's for all-NaN slices
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4)], ids=str)
def test_nan_functions(shape):
    x = data(shape, np.float32)
    x.reshape(-1)[::3] = np.nan
    if len(shape) > 1:
        x[0] = np.nan  # an all-NaN slice along the last axes
    for axis in [None] + list(range(len(shape))):
        for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"):
            check(lambda xp, a: getattr(xp, name)(a, axis), x, rtol=1e-4, atol=1e-4)
        check(lambda xp, a: xp.nanstd(a, axis, ddof=1, keepdims=True), x, rtol=1e-4, atol=1e-4)
        if axis is not None:
            check(lambda xp, a: xp.nancumsum(a, axis), x, rtol=1e-5, atol=1e-4)
            check(lambda xp, a: xp.nancumprod(a, axis), x, rtol=1e-4, atol=1e-4)
    y = data(shape, np.float32)
    y.reshape(-1)[1::2] = np.nan
    check(lambda xp, a: xp.nanargmax(a), y)
    check(lambda xp, a: xp.nanargmin(a, -1), y)
    if len(shape) > 1:
        with pytest.raises(ValueError, match="All-NaN"):
            pm.nanargmax(pm.asarray(x), -1)
    ints = data(shape, np.int32)
    for name in ("nansum", "nanmax", "nanmean", "nanargmin", "nanvar"):
        check(lambda xp, a: getattr(xp, name)(a), ints, rtol=1e-5)


@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 5)], ids=str)
def test_average(shape):
    x = data(shape, np.float32)
    w = data(shape, np.float32, seed=7, lo=1, hi=3)
    for axis in [None] + list(range(len(shape))):
        check(lambda xp, a: xp.average(a, axis), x, rtol=1e-5, atol=1e-5)
        check(lambda xp, a, b: xp.average(a, axis, b), x, w, rtol=1e-5, atol=1e-5)
        check(lambda xp, a, b: xp.average(a, axis, b, returned=True), x, w, rtol=1e-5, atol=1e-5)
        if axis is not None:
            w1 = w.take(np.arange(shape[axis]), axis).reshape(-1)[:shape[axis]]
            check(lambda xp, a, b: xp.average(a, axis, b, keepdims=True), x, w1, rtol=1e-5, atol=1e-5)
    with pytest.raises(ZeroDivisionError):
        pm.average(pm.ones(3), weights=pm.zeros(3))


@pytest.mark.parametrize("shape", [(5,), (2, 6), (4, 3)], ids=str)
def test_cov_corrcoef(shape):
    x = data(shape, np.float32)
    y = data(shape, np.float32, seed=4)
    for rowvar in (True, False):
        check(lambda xp, a: xp.cov(a, rowvar=rowvar), x, rtol=1e-4, atol=1e-4)
        check(lambda xp, a: xp.cov(a, rowvar=rowvar, bias=True), x, rtol=1e-4, atol=1e-4)
        check(lambda xp, a, b: xp.cov(a, b, rowvar), x, y, rtol=1e-4, atol=1e-4)
        check(lambda xp, a: xp.corrcoef(a, rowvar=rowvar), x, rtol=1e-4, atol=1e-4)
        check(lambda xp, a, b: xp.corrcoef(a, b, rowvar), x, y, rtol=1e-4, atol=1e-4)
    check(lambda xp, a: xp.cov(a, ddof=0), x, rtol=1e-4, atol=1e-4)


def test_interp():
    xp_ = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    fp_ = np.array([1.0, -1.0, 3.0, 0.5], np.float32)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.9, 4.0, 7.0, np.nan], np.float32)
    check(lambda xp, a, b, c: xp.interp(a, b, c), x, xp_, fp_, rtol=1e-5, atol=1e-6)
    check(lambda xp, a, b, c: xp.interp(a, b, c, left=-9, right=9), x, xp_, fp_, rtol=1e-5, atol=1e-6)
    check(lambda xp, a, b, c: xp.interp(a, b, c), x, xp_[:1], fp_[:1])
    check(lambda xp, a, b, c: xp.interp(a, b, c), x.reshape(2, 5), xp_, fp_, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="empty"):
        pm.interp(pm.asarray(x), pm.zeros(0), pm.zeros(0))


@pytest.mark.parametrize("na,nv", [(1, 1), (5, 3), (3, 5), (8, 8), (10, 1), (17, 4)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64], ids=DT_IDS)
def test_convolve_correlate(na, nv, dtype):
    a, v = data((na,), dtype, 1, -3, 3), data((nv,), dtype, 2, -3, 3)
    for mode in ("full", "same", "valid"):
        check(lambda xp, x, y: xp.convolve(x, y, mode), a, v, rtol=1e-5, atol=1e-4)
        check(lambda xp, x, y: xp.correlate(x, y, mode), a, v, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="empty"):
        pm.convolve(pm.asarray(a), pm.zeros(0))
    with pytest.raises(ValueError, match="mode"):
        pm.correlate(pm.asarray(a), pm.asarray(v), "bogus")


def test_cross_lexsort_diff_gradient():
    a3, b3 = data((4, 3), np.float32, 1), data((4, 3), np.float32, 2)
    check(lambda xp, x, y: xp.cross(x, y), a3, b3, rtol=1e-5, atol=1e-5)
    check(lambda xp, x, y: xp.cross(x, y), a3[:, :2], b3[:, :2], rtol=1e-5, atol=1e-5)
    check(lambda xp, x, y: xp.cross(x, y), a3, b3[:, :2], rtol=1e-5, atol=1e-5)
    check(lambda xp, x, y: xp.cross(x, y, axis=0), a3.T.copy(), b3.T.copy(), rtol=1e-5, atol=1e-5)
    k1, k2 = data((9,), np.int32, 3, 0, 2), data((9,), np.int32, 4, 0, 2)
    check(lambda xp, x, y: xp.lexsort((x, y)), k1, k2)
    check(lambda xp, x, y: xp.lexsort([x.reshape(3, 3), y.reshape(3, 3)], axis=0), k1, k2)
    x = data((4, 5), np.int32)
    for n in (0, 1, 2):
        check(lambda xp, v: xp.diff(v, n), x)
        check(lambda xp, v: xp.diff(v, n, 0), x)
    check(lambda xp, v: xp.diff(v, 1, 0, prepend=0, append=v[:1]), x)
    f = data((6, 7), np.float32)
    check(lambda xp, v: xp.gradient(v), f, rtol=1e-5, atol=1e-5)
    check(lambda xp, v: xp.gradient(v, 0.5, axis=1), f, rtol=1e-5, atol=1e-5)
    check(lambda xp, v: xp.gradient(v, 2.0, 0.5), f, rtol=1e-5, atol=1e-5)
    check(lambda xp, v: xp.gradient(v, edge_order=2), f, rtol=1e-5, atol=1e-4)
    check(lambda xp, v: xp.gradient(v), np.arange(5, dtype=np.int32) ** 2, rtol=1e-6)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)], ids=str)
def test_linalg_norm(shape):
    x = data(shape, np.float32)
    check(lambda xp, a: xp.linalg.norm(a), x, rtol=1e-5)
    check(lambda xp, a: xp.linalg.norm(a, keepdims=True), x, rtol=1e-5)
    for axis in range(len(shape)):
        for ord in (None, 1, 2, np.inf, -np.inf, 0, 3):
            check(lambda xp, a: xp.linalg.norm(a, ord, axis), x, rtol=1e-5, atol=1e-5)
        check(lambda xp, a: xp.linalg.norm(a, axis=axis, keepdims=True), x, rtol=1e-5)
    if len(shape) >= 2:
        for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            check(lambda xp, a: xp.linalg.norm(a, ord, (0, 1)), x, rtol=1e-4, atol=1e-4)
            check(lambda xp, a: xp.linalg.norm(a, ord, (-1, 0), keepdims=True), x, rtol=1e-4, atol=1e-4)
    if len(shape) <= 2:
        for ord in ((1, 2, np.inf) if len(shape) == 1 else ("fro", 1, np.inf, "nuc")):
            check(lambda xp, a: xp.linalg.norm(a, ord), x, rtol=1e-4, atol=1e-4)
    else:
        with pytest.raises(ValueError):
            pm.linalg.norm(pm.asarray(x), 2)
    with pytest.raises(ValueError):
        pm.linalg.norm(pm.asarray(x), "fro", 0)


def test_weighted_counts_are_accurate():
    # segmented sums of float32 weights: within float32 rounding of NumPy's float64 sums, also
    # for small bins in a long array (differences of one running sum lost ~1e-3 here)
    r = np.random.default_rng(1)
    x = r.integers(0, 1000, 200_000)
    w = r.random(200_000).astype(np.float32)
    compare(pm.bincount(pm.asarray(x), pm.asarray(w)), np.bincount(x, w), rtol=1e-6, atol=0)
    a = pm.zeros(1000)
    pm.add.at(a, pm.asarray(x), pm.asarray(w))
    compare(a, np.bincount(x, w, minlength=1000), rtol=1e-6, atol=0)
    z = pm.zeros(3)
    pm.add.at(z, pm.asarray([0, 0, 2]), 1.5)  # a Python float: float32
    assert z.tolist() == [3.0, 0.0, 1.5]


@pytest.mark.parametrize("bins", [1, 3, 10, 1000, 65536, 65537])
def test_histogram_equal_bins_on_and_near_edges(bins):
    # equal bins are found by arithmetic and corrected against the edges (65537: by search):
    # values on every edge and one float32 step either side, NaN and infinities, land exactly
    # where a search of pymetal's float32 edges puts them
    lo, hi = -3.0, 5.0
    e = np.linspace(lo, hi, bins + 1).astype(np.float32)
    v = np.concatenate([e, np.nextafter(e, np.float32(-np.inf)), np.nextafter(e, np.float32(np.inf)),
                        np.array([np.nan, np.inf, -np.inf, lo - 1, hi + 1], np.float32),
                        np.random.default_rng(bins).uniform(lo, hi, 5000).astype(np.float32)])
    c, edges = pm.histogram(pm.asarray(v), bins, range=(lo, hi))
    want = np.histogram(v[np.isfinite(v)], edges.numpy().astype(np.float64))[0]
    np.testing.assert_array_equal(c.numpy(), want)
    w = np.random.default_rng(1).random(v.size).astype(np.float32)
    cw, _ = pm.histogram(pm.asarray(v), bins, range=(lo, hi), weights=pm.asarray(w))
    fin = np.isfinite(v)
    # (NumPy's weighted histogram differences cumulative sums: in float64 here, where float32
    # weights' would lose 1e-4 over 8,000 values)
    want_w = np.histogram(v[fin], edges.numpy().astype(np.float64), weights=w[fin].astype(np.float64))[0]
    np.testing.assert_allclose(cw.numpy(), want_w, rtol=1e-5, atol=1e-6)
