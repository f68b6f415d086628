"""Dask quantiles and percentiles of pymetal chunks: bugs found by running Dask's own
test_reductions.py / test_cupy_percentile.py on pymetal (scripts/run_upstream_tests.py)."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import pymetal as pm  # noqa: E402
import pymetal.dask  # noqa: E402,F401

host64 = pytest.mark.skipif(pm.get_float64_policy() != "host", reason="float64 arrays exist under the 'host' policy")


@pytest.mark.parametrize("q", [5, 5.0, np.int64(5), np.float64(5), [np.float64(5), np.float64(50)]])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int16])
def test_percentile_keeps_the_dtype_dask_declares(q, dtype):
    # A NumPy float64 q made float64 chunks of a float32 array (the chunk step ran NumPy's
    # percentile, whose result follows q's dtype); Dask declares the chunks' float dtype, and
    # CuPy's percentile keeps it. (Dask's own merge step gives other dtypes over NumPy chunks
    # too: np.interp's float64 for "linear", the input's for "lower" of integers.)
    x = np.array([5, 1, 9, 3, 7, 2, 8, 0, 6, 4, 11], dtype=dtype)
    d = da.from_array(pm.asarray(x), chunks=4)
    for method in ("linear", "midpoint", "lower", "nearest"):
        r = da.percentile(d, q, method=method)
        c = r.compute()
        assert type(r._meta) is pm.Array and type(c) is pm.Array
        if dtype == np.float32 and method != "linear":
            assert c.dtype == r.dtype == np.float32
        # Dask's merge of the chunks' percentiles is approximate: the same as over NumPy chunks
        want = da.percentile(da.from_array(x, chunks=4), q, method=method).compute()
        np.testing.assert_allclose(c.numpy(), want, rtol=1e-6)


def test_percentile_of_one_chunk_and_with_an_empty_chunk():
    x = np.arange(11, dtype=np.float32)
    r = da.percentile(da.from_array(pm.asarray(x), chunks=11), [0, 50, 100]).compute()
    np.testing.assert_allclose(r.numpy(), [0, 5, 10])
    d = da.from_array(pm.asarray(x), chunks=((4, 0, 7),))  # Dask's chunk step skips the empty one
    r = da.percentile(d, [0, 100], method="lower").compute()
    assert type(r) is pm.Array and r.dtype == np.float32
    np.testing.assert_array_equal(r.numpy(), [0, 10])


@host64
@pytest.mark.parametrize("shape, axis", [((0, 0), [0]), ((0, 3), 0), ((2, 0), 0), ((0,), None), ((0, 0, 0), (0, 1)),
                                         ((0, 4), (0, 1))])
@pytest.mark.parametrize("q", [0.75, [0.2, 0.7]])
def test_quantile_of_zero_size_float64(shape, axis, q):
    # NumPy's quantile indexes a zero-size input's last element (IndexError) where pymetal's
    # float32 one gives NaN or an empty result: float64 now gives what float32 does, widened
    # (Dask calls functions on zero-size arrays to learn a result's chunk type).
    a = pm.empty(shape, pm.float64)
    r = np.quantile(a, np.asarray(q), axis=axis)
    r32 = np.quantile(pm.empty(shape, pm.float32), np.asarray(q, np.float32), axis=axis)
    assert type(r) is pm.Array and r.dtype == np.float64 and r.shape == r32.shape
    np.testing.assert_array_equal(r.numpy(), r32.numpy().astype(np.float64))
    p = np.percentile(a, np.asarray(q) * 100, axis=axis)
    assert p.dtype == np.float64 and p.shape == r.shape
    # a call NumPy refuses for other reasons still raises NumPy's error
    with pytest.raises(ValueError):
        np.quantile(a, np.asarray(q), axis=axis, method="no-such-method")


@host64
@pytest.mark.parametrize("q", [0.75, [0.25, 0.75]])
@pytest.mark.parametrize("axis", [0, -1, (0, 2)])
def test_dask_quantile_of_float64_chunks_has_a_pymetal_meta(q, axis):
    a = np.random.default_rng(0).standard_normal((6, 7, 8))
    d = da.from_array(pm.asarray(a), chunks=(3, 4, -1))
    for keepdims in (False, True):
        r = da.quantile(d, q, axis=axis, keepdims=keepdims)
        assert type(r._meta) is pm.Array
        c = r.compute()
        assert type(c) is pm.Array and c.dtype == np.float64
        np.testing.assert_allclose(c.numpy(), np.quantile(a, q, axis=axis, keepdims=keepdims), rtol=1e-12)
