"""Dask with pymetal chunks: bugs found by running Dask's own CuPy tests on pymetal
(scripts/run_upstream_tests.py), each checked here on small cases of our own."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import pymetal as pm  # noqa: E402
import pymetal.dask  # noqa: E402,F401


def test_default_rng_of_a_pymetal_generator():
    # da.random.default_rng(g) takes g.bit_generator (NumPy's Generator API) and spawns one
    # stream per chunk from it: pymetal chunks, the same numbers for the same seed.
    g = pm.random.default_rng(7)
    assert g.bit_generator is g
    draws = []
    for _ in range(2):
        rng = da.random.default_rng(pm.random.default_rng(7))
        x = rng.random(1001, chunks=(250,), dtype=np.float32)  # (Dask's default dtype is float64)
        assert isinstance(x._meta, pm.Array)
        r = x.compute()
        assert type(r) is pm.Array and r.shape == (1001,) and r.dtype == np.float32
        draws.append(r.numpy())
    np.testing.assert_array_equal(draws[0], draws[1])
    assert 0.0 <= draws[0].min() and draws[0].max() < 1.0 and len(np.unique(draws[0])) > 990
    # the backend's own bit generator and a generator given by the user mix (percentile of it)
    x = da.random.default_rng(pm.random.default_rng(3)).random(400, chunks=(100,))
    p = da.percentile(x, [25, 75], method="midpoint").compute()
    assert 0.1 < float(p[0]) < float(p[1]) < 0.9


@pytest.mark.parametrize("n", [0, 1, 2])
def test_diff_prepend_append(n):
    x = np.arange(1, 8, dtype=np.int32)
    d = da.from_array(pm.asarray(x), chunks=3)
    for kw in ({"prepend": 0}, {"append": [9]}, {"prepend": [-1, 0], "append": 5}):
        r = da.diff(d, n, **kw).compute()
        np.testing.assert_array_equal(r.numpy(), np.diff(x, n, **kw))
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = da.from_array(pm.asarray(m), chunks=2)
    r = da.diff(d, n, axis=0, prepend=0).compute()
    np.testing.assert_array_equal(r.numpy(), np.diff(m, n, axis=0, prepend=0))


@pytest.mark.parametrize("key", [([True, False, True, False, False, True], 2), ([False] * 6, slice(1, 4)), (4, [True, False] * 5)])
def test_setitem_list_of_bools(key):
    x = np.arange(60, dtype=np.int32).reshape(6, 10)
    d = da.from_array(pm.asarray(x), chunks=(2, 3))
    d[key] = -1
    x[key] = -1
    r = d.compute()
    assert type(r) is pm.Array
    np.testing.assert_array_equal(r.numpy(), x)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float64])
def test_setitem_on_empty_like_blocks(dtype):
    # da.empty_like of a pymetal array: read-only broadcast chunks (np.empty_like(meta, shape=1)
    # then np.broadcast_to) that setitem copies before writing. float64 ones are host arrays.
    if dtype == np.float64 and pm.get_float64_policy() != "host":
        pytest.skip("float64 arrays exist under the 'host' float64 policy only")
    d = da.empty_like(pm.zeros((0,), pm.float32), shape=(4, 6), dtype=dtype, chunks=(2, 2))
    assert isinstance(d._meta, pm.Array)
    d[0] = 99
    d[1:3] = 88
    r = d.compute()
    assert type(r) is pm.Array and r.dtype == dtype
    np.testing.assert_array_equal(r.numpy()[:3], np.array([[99] * 6, [88] * 6, [88] * 6], dtype))


@pytest.mark.skipif(pm.get_float64_policy() != "host", reason="float64 chunks exist under the 'host' policy")
def test_float64_chunks_keep_float64_means():
    # Dask asks divide(..., dtype="f8") when combining means: float32 chunks give float32 (the
    # device's widest float), float64 chunks (host arrays) keep float64, the dtype Dask declares.
    a = np.random.default_rng(0).random((10, 11))
    d = da.from_array(pm.asarray(a), chunks=(4, 5))
    for r, want in ((d.mean(axis=0), a.mean(axis=0)), (d.mean(), a.mean()), (d.var(axis=1), a.var(axis=1))):
        c = r.compute()
        assert c.dtype == r.dtype == np.float64
        np.testing.assert_allclose(c.numpy(), want, rtol=1e-12)
    p = da.pad(d, ((1, 4), (2, 3)), "mean", stat_length=((3, 4), (2, 1)))
    assert {b.compute().dtype for b in p.to_delayed().ravel()} == {np.dtype(np.float64)}
    np.testing.assert_allclose(p.compute().numpy(), np.pad(a, ((1, 4), (2, 3)), "mean", stat_length=((3, 4), (2, 1))))
    f = da.from_array(pm.asarray(a.astype(np.float32)), chunks=(4, 5)).mean(axis=0)
    assert f.compute().dtype == np.float32


@pytest.mark.skipif(pm.get_float64_policy() != "host", reason="float64 chunks exist under the 'host' policy")
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_topk_argtopk_of_float64_chunks(axis):
    # np.argpartition/np.argsort of float64 pymetal arrays in Dask's chunk functions reach
    # pymetal's NumPy-API functions through __array_function__: they follow the float64
    # policy (NumPy on the host views), as the namespace's do (a Metal copy kernel was asked for).
    n = np.random.default_rng(axis).random((10, 20, 30))
    d = da.from_array(pm.asarray(n), chunks=(4, 8, 8))
    for k in (5, -5):
        sl = [slice(None)] * 3
        sl[axis] = slice(-k, None) if k > 0 else slice(None, -k)
        flip = [slice(None)] * 3
        flip[axis] = slice(None, None, -1) if k > 0 else slice(None)
        want_vals = np.sort(n, axis=axis)[tuple(sl)][tuple(flip)]
        r = da.topk(d, k, axis=axis, split_every=2).compute()
        assert type(r) is pm.Array and r.dtype == np.float64
        np.testing.assert_array_equal(r.numpy(), want_vals)
        i = da.argtopk(d, k, axis=axis, split_every=2).compute()
        np.testing.assert_array_equal(np.take_along_axis(n, i.numpy(), axis=axis), want_vals)


def test_backend_creation_with_a_graph_name():
    # Dask's creation functions take name= (the graph key's prefix); da.tril/triu pass it
    with dask.config.set({"array.backend": "pymetal"}):
        for make in (lambda: da.zeros((5, 4), chunks=2, name="z"), lambda: da.ones((5, 4), chunks=2, name="o"),
                     lambda: da.empty((5, 4), chunks=2, name="e"), lambda: da.full((5, 4), 3, chunks=2, name="f")):
            d = make()
            assert isinstance(d._meta, pm.Array) and d.shape == (5, 4)
        n = np.arange(20, dtype=np.float32).reshape(5, 4)
        x = da.from_array(pm.asarray(n), chunks=2)
        for k in (-1, 0, 2):
            np.testing.assert_array_equal(da.tril(x, k).compute().numpy(), np.tril(n, k))
            np.testing.assert_array_equal(da.triu(x, k).compute().numpy(), np.triu(n, k))
        np.testing.assert_array_equal(da.full((3,), 3, chunks=2, name="f").compute().numpy(), np.full(3, 3))
