"""pymetal arrays as Dask chunks (coverage after dask's own CuPy tests: core, creation, random,
reductions, routines, slicing, linalg), the "pymetal" array backend, and xarray over both."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import pymetal as pm  # noqa: E402
import pymetal.dask  # noqa: E402,F401  (registers the chunk type, sizeof, tokenize, backend)

SHAPES = [(6, 8), (7, 5), (1, 1), (0, 4)]


def _pair(shape, dtype=np.float32, chunks=(3, 4)):
    rng = np.random.default_rng(sum(shape) + 1)
    n = (rng.standard_normal(shape) * 10).astype(dtype)
    return da.from_array(pm.asarray(n), chunks=chunks), da.from_array(n, chunks=chunks)


def _check(got, want, rtol=1e-5, atol=1e-5, meta=True):
    """got: a dask array of pymetal chunks, computed to a pm.Array equal to NumPy's result.
    meta=False: Dask itself infers a NumPy _meta (boolean indexing), the chunks are pymetal."""
    assert not meta or isinstance(got._meta, pm.Array), type(got._meta)
    r = got.compute()
    w = want.compute()
    assert type(r) is pm.Array, type(r)
    assert r.shape == w.shape, (r.shape, w.shape)
    np.testing.assert_allclose(r.numpy(), w, rtol=rtol, atol=atol)


def test_from_array_meta_and_compute():
    x = pm.arange(10, dtype=pm.float32)
    d = da.from_array(x, chunks=3)
    assert isinstance(d._meta, pm.Array) and d._meta.dtype == np.float32
    assert "chunktype=pymetal.Array" in repr(d)
    r = d.compute()
    assert type(r) is pm.Array
    np.testing.assert_array_equal(r.numpy(), np.arange(10, dtype=np.float32))


def test_sizeof_and_tokenize():
    from dask.base import tokenize
    from dask.sizeof import sizeof
    x = pm.zeros((1000, 10), pm.float32)
    assert sizeof(x) == 40000
    assert sizeof(x[:, :2]) == 8000
    a, b = pm.arange(100), pm.arange(100)
    assert tokenize(a) == tokenize(b)  # deterministic: equal arrays, equal tokens
    assert tokenize(a) != tokenize(a + 1) != tokenize(a.astype(pm.int32))
    assert tokenize(a) != tokenize(a.numpy())  # a pymetal array is not its NumPy view


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name, f", [
    ("add scalar", lambda a: a + 1),
    ("add numpy", lambda a: a * np.arange(a.shape[1], dtype=np.float32)),
    ("ufunc", lambda a: np.exp(a / 10)),
    ("compare", lambda a: a > 0),
    ("where", lambda a: da.where(a > 0, a, -a)),
    ("transpose", lambda a: a.T),
    ("rechunk", lambda a: a.rechunk((2, 3))),
    ("concatenate", lambda a: da.concatenate([a, a], axis=1)),
    ("stack", lambda a: da.stack([a, a], axis=0)),
    ("slice", lambda a: a[1:, ::2]),
    ("fancy", lambda a: a[[0, 0]] if a.shape[0] else a[[]]),
    ("boolean", lambda a: a[a > 1]),
    ("map_blocks", lambda a: a.map_blocks(lambda b: b * 2)),
    ("blockwise", lambda a: da.blockwise(lambda b: b - 1, "ij", a, "ij")),
    ("map_overlap", lambda a: a.map_overlap(lambda b: b + 1, depth=1, boundary="reflect")),
    ("ones_like", lambda a: da.ones_like(a)),
    ("zeros_like", lambda a: da.zeros_like(a, dtype=np.int32)),
    ("full_like", lambda a: da.full_like(a, 3)),
])
def test_elementwise_and_routines(shape, name, f):
    if name == "map_overlap" and 0 in shape:
        pytest.skip("dask's map_overlap itself needs non-empty blocks (NumPy chunks fail alike)")
    if name == "rechunk" and 0 in shape:
        pytest.xfail("dask rechunks a size-0 array into a new NumPy array (dask.array.rechunk), "
                     "whatever its chunk type")
    d, n = _pair(shape)
    _check(f(d), f(n), meta=name != "boolean")


def test_mix_numpy_and_pymetal_dask_arrays_both_ways():
    d, n = _pair((6, 8))
    _check(d + n, n + n)
    _check(n * d, n * n)


@pytest.mark.parametrize("shape", [(6, 8), (7, 5), (1, 1)])
@pytest.mark.parametrize("name, f", [
    ("sum", lambda a: a.sum()),
    ("sum axis", lambda a: a.sum(axis=0)),
    ("sum tuple keepdims", lambda a: a.sum(axis=(0, 1), keepdims=True)),
    ("sum dtype", lambda a: a.sum(axis=1, dtype=np.float32)),
    ("prod", lambda a: (a / 10).prod(axis=1)),
    ("max", lambda a: a.max(axis=1)),
    ("min keepdims", lambda a: a.min(axis=0, keepdims=True)),
    ("mean", lambda a: a.mean(axis=0)),
    ("std", lambda a: a.std(axis=0)),
    ("var ddof", lambda a: a.var(axis=1, ddof=1) if a.shape[1] > 1 else a.var(axis=1)),
    ("any", lambda a: (a > 5).any(axis=1)),
    ("all", lambda a: (a > -50).all()),
    ("nanmean", lambda a: da.nanmean(a, axis=0)),
    ("nansum", lambda a: da.nansum(a, axis=1)),
    ("cumsum", lambda a: a.cumsum(axis=1)),
    ("cumprod", lambda a: (a / 10).cumprod(axis=0)),
])
def test_reductions(shape, name, f):
    d, n = _pair(shape)
    _check(f(d), f(n), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("f", [lambda a: a.mean(axis=0), lambda a: a.std(axis=0), lambda a: a.var(),
                               lambda a: a.mean(), lambda a: da.nanmean(a, axis=0)])
def test_reductions_over_many_chunks(f):
    # 8+ chunks: Dask combines partial results in a tree, dividing with dtype="f8" (its default
    # accumulator), which pymetal computes as float32 (float64 used to raise TypeError).
    d, n = _pair((4000, 50), chunks=(250, 50))
    _check(f(d), f(n), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name, f", [
    ("argmax", lambda a: a.argmax(axis=0)),
    ("argmin", lambda a: a.argmin(axis=1)),
    ("argmax_all", lambda a: a.argmax()),
    ("nanargmin", lambda a: da.nanargmin(a, axis=0)),
])
def test_arg_reductions(name, f):
    # np.empty_like(chunk, dtype=structured) raises TypeError (as for CuPy), so Dask combines
    # the partials in a dict of pymetal arrays and the result stays pymetal
    d, n = _pair((23, 11), chunks=(5, 4))
    _check(f(d), f(n), rtol=0, atol=0)


def test_unique():
    xn = np.random.default_rng(3).integers(0, 9, (30, 7)).astype(np.int32)
    d = da.from_array(pm.asarray(xn), chunks=(8, 3))
    _check(da.unique(d), da.from_array(np.unique(xn)), rtol=0, atol=0)
    with pytest.raises(ValueError, match="structured"):  # Dask's own limit for such chunk types
        da.unique(d, return_counts=True)


def test_topk():
    d, n = _pair((6, 8))
    _check(da.topk(d.ravel(), 3), da.topk(n.ravel(), 3))
    _check(da.topk(d, -2, axis=0), da.topk(n, -2, axis=0))


@pytest.mark.parametrize("name, f", [
    ("matmul", lambda a: a @ a.T),
    ("tensordot", lambda a: da.tensordot(a, a, axes=((1,), (1,)))),
    ("einsum", lambda a: da.einsum("ij,ij->i", a, a)),
    ("dot", lambda a: da.dot(a.T, a)),
])
def test_linalg(name, f):
    d, n = _pair((6, 8))
    _check(f(d), f(n), rtol=1e-4, atol=1e-3)


def test_reshape():
    d, n = _pair((6, 8), chunks=(3, 8))
    _check(d.reshape(6, 2, 4), n.reshape(6, 2, 4))
    _check(d.ravel(), n.ravel())


def test_zero_d():
    x = da.from_array(pm.asarray(np.float32(3.0)), chunks=())
    r = (x * 2).compute()
    assert type(r) is pm.Array and r.shape == () and float(r) == 6.0


# ---- the "pymetal" array backend

@pytest.mark.parametrize("make", [
    lambda: da.ones((5, 4), chunks=2),
    lambda: da.zeros(7, chunks=3, dtype=np.int32),
    lambda: da.empty((3, 3), chunks=2),
    lambda: da.full((4,), 2.5, chunks=3, dtype=np.float32),
    lambda: da.arange(0, 11, 2, chunks=2),
])
def test_backend_creation(make):
    with dask.config.set({"array.backend": "pymetal"}):
        d = make()
    with dask.config.set({"array.backend": "numpy"}):
        n = make()
    assert isinstance(d._meta, pm.Array)
    r = d.compute()
    # floats default to float32, as pymetal's own creation functions
    assert type(r) is pm.Array and r.dtype == (np.float32 if n.dtype == np.float64 else n.dtype)
    if "empty" not in make.__code__.co_names:
        np.testing.assert_array_equal(r.numpy(), n.compute())


def test_backend_random_reproducible():
    with dask.config.set({"array.backend": "pymetal"}):
        rng = da.random.default_rng(42)
        x = rng.random((100, 10), chunks=(30, 5), dtype=np.float32)
        y = da.random.default_rng(42).random((100, 10), chunks=(30, 5), dtype=np.float32)
        z = da.random.default_rng(43).random((100, 10), chunks=(30, 5), dtype=np.float32)
        nrm = da.random.default_rng(0).normal(5.0, 2.0, size=(20000,), chunks=5000)
    assert isinstance(x._meta, pm.Array)
    a, b, c = x.compute(), y.compute(), z.compute()
    assert type(a) is pm.Array and a.shape == (100, 10)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    v = a.numpy()
    assert 0 <= v.min() and v.max() < 1 and len(np.unique(v)) > 900  # chunks are independent streams
    s = nrm.compute().numpy()
    assert abs(s.mean() - 5) < 0.1 and abs(s.std() - 2) < 0.1


def test_backend_random_legacy_state():
    # Dask's legacy RandomState over pm.random.RandomState: pymetal chunks, each chunk
    # seeded by Dask, so the same seed gives the same array
    with dask.config.set({"array.backend": "pymetal"}):
        rs = da.random.RandomState(0)
        x = rs.normal(2.0, 3.0, size=(100000,), chunks=25000)
        u = rs.random_sample((10, 4), chunks=5)
        k = rs.randint(0, 10, size=(20,), chunks=7)
        again = da.random.RandomState(0).normal(2.0, 3.0, size=(100000,), chunks=25000)
        a, b = x.compute(), again.compute()
    assert isinstance(x._meta, pm.Array) and type(a) is pm.Array and a.dtype == np.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    v = a.numpy()
    assert abs(v.mean() - 2) < 0.05 and abs(v.std() - 3) < 0.05
    assert len(np.unique(v)) > 99000  # chunks are different streams
    w = u.compute().numpy()
    assert w.shape == (10, 4) and 0 <= w.min() and w.max() < 1
    n = k.compute().numpy()
    assert n.dtype == np.int64 and 0 <= n.min() and n.max() < 10


def test_to_backend_both_ways():
    n = da.arange(10, chunks=4)
    p = n.to_backend("pymetal")
    assert isinstance(p._meta, pm.Array) and type(p.compute()) is pm.Array
    back = p.to_backend("numpy")
    r = back.compute()
    assert type(r) is np.ndarray
    np.testing.assert_array_equal(r, np.arange(10))


# ---- xarray

def test_xarray_keeps_pymetal_data():
    xr = pytest.importorskip("xarray")
    n = np.arange(24, dtype=np.float32).reshape(4, 6)
    for data in (pm.asarray(n), da.from_array(pm.asarray(n), chunks=(2, 3))):
        a = xr.DataArray(data, dims=("t", "x"), coords={"t": [10, 20, 30, 40]})
        results = {
            "arith": (a * 2 + 1, n * 2 + 1),
            "mean": (a.mean("t"), n.mean(0)),
            "sum": (a.sum("x"), n.sum(1)),
            "sel": (a.sel(t=20), n[1]),
            "isel": (a.isel(x=slice(1, 4)), n[:, 1:4]),
            "where": (a.where(a > 5, 0), np.where(n > 5, n, 0)),
        }
        for name, (got, want) in results.items():
            v = got.data
            if isinstance(data, pm.Array):
                assert type(v) is pm.Array, (name, type(v))
            else:
                assert isinstance(v._meta, pm.Array), (name, type(v._meta))
                v = v.compute()
                assert type(v) is pm.Array, (name, type(v))
            np.testing.assert_allclose(np.asarray(v), want, err_msg=name)


def test_entry_points_register_without_importing_pymetal_dask(tmp_path):
    """pyproject's entry points (installed here as a minimal dist-info): Dask finds the backend
    and registers the chunk type on first use, with no `import pymetal.dask`."""
    import os
    import subprocess
    import sys
    import tomllib
    root = os.path.dirname(os.path.dirname(pm.__file__))
    eps = tomllib.load(open(os.path.join(root, "pyproject.toml"), "rb"))["project"]["entry-points"]
    info = tmp_path / "pymetal_ep-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pymetal-ep\nVersion: 0\n")
    (info / "entry_points.txt").write_text("".join(
        "[%s]\n%s\n" % (group, "".join("%s = %s\n" % kv for kv in names.items()))
        for group, names in eps.items() if group.startswith("dask")))
    first_use = ("d = da.from_array(pm.arange(10, dtype=pm.float32), chunks=3)\n"
                 "print(type((d + 1).compute()).__name__)\n")
    backend = ("with dask.config.set({'array.backend': 'pymetal'}):\n"
               "    print(type(da.ones(3, chunks=2).compute()).__name__)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, str(tmp_path)]))
    for body in (first_use, backend):
        code = ("import sys, dask, dask.array as da, pymetal as pm\n"
                "assert 'pymetal.dask' not in sys.modules\n" + body)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.strip() == "Array" and "Failed to register" not in r.stderr


def test_numpy_fallbacks_return_pymetal_arrays():
    """NumPy functions Dask calls on chunks that pymetal has no kernel for run in NumPy on the
    shared memory; the results come back as pymetal arrays (they used to be NumPy arrays, which
    turned a pymetal-chunked dask array NumPy-chunked after cumsum, topk, *_like(shape=))."""
    x = pm.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    n = x.numpy().copy()
    for got, want in [(np.cumsum(x, axis=1), np.cumsum(n, axis=1)),
                      (np.partition(x, 1, axis=0), np.partition(n, 1, axis=0)),
                      (np.add(x, 1, dtype=np.float32), n + 1),
                      (np.zeros_like(x, shape=(2, 5)), np.zeros((2, 5), np.float32)),
                      (np.full_like(x, 7, shape=3, dtype=np.int32), np.full(3, 7, np.int32)),
                      (np.ones_like(x, order="C"), np.ones_like(n))]:
        assert type(got) is pm.Array, type(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    hist, edges = np.histogram(x.astype(pm.int32), bins=3)  # pymetal's histogram: float32 edges
    assert type(hist) is pm.Array and type(edges) is pm.Array and edges.dtype == np.float32
    np.testing.assert_array_equal(hist.numpy(), [4, 4, 4])
    wide = np.cumsum(x, axis=1, dtype=np.float64)  # in NumPy, a float64 pymetal array (the "host" policy)
    assert type(wide) is pm.Array and wide.dtype == np.float64
    np.testing.assert_array_equal(wide.numpy(), np.cumsum(n, axis=1, dtype=np.float64))
    assert np.array_equal(x, x) is True  # non-array results as NumPy gives them


@pytest.mark.parametrize("name, f", [
    ("qr R", lambda a: abs(da.linalg.qr(a)[1])),  # tsqr: np.linalg.qr per chunk (a named tuple)
    ("norm", lambda a: da.linalg.norm(a, axis=1)),
    ("diff", lambda a: da.diff(a, axis=0)),
    ("histogram", lambda a: da.histogram(a, bins=4, range=(-30, 30))[0]),
    ("round", lambda a: da.round(a, 2)),
    ("clip", lambda a: da.clip(a, -1, 1)),
    ("tril", lambda a: da.tril(a)),
    ("flip", lambda a: da.flip(a, 0)),
    ("roll", lambda a: da.roll(a, 3, axis=0)),
    ("take", lambda a: da.take(a, [1, 5, 30], axis=0)),
    ("pad", lambda a: da.pad(a, 2)),
    ("outer", lambda a: da.outer(a[:, 0], a[0])),
    ("coarsen", lambda a: da.coarsen(np.sum, a, {0: 2})),
    ("count_nonzero", lambda a: da.count_nonzero(a > 0, axis=0)),
    ("apply_along_axis", lambda a: da.apply_along_axis(lambda r: r * 2, 1, a)),
    ("moment", lambda a: a.moment(3, axis=0)),
    ("swapaxes", lambda a: da.swapaxes(a, 0, 1)),
    ("vindex", lambda a: a.vindex[[0, 5, 7], [1, 2, 3]]),
    ("setitem", lambda a: _masked_zero(a)),
])
def test_more_routines(name, f):
    d, n = _pair((40, 6), chunks=(10, 6))
    # Dask builds these collections with a NumPy _meta whatever the chunks (the chunks are pymetal)
    _check(f(d), f(n), rtol=1e-4, atol=1e-3, meta=name not in ("histogram", "coarsen", "apply_along_axis"))


def _masked_zero(a):
    a = a.copy()
    a[a > 1] = 0
    return a


def test_integer_routines():
    v = np.random.default_rng(1).integers(0, 9, 30)
    d, n = da.from_array(pm.asarray(v), chunks=7), da.from_array(v, chunks=7)
    _check(da.bincount(d, minlength=9), da.bincount(n, minlength=9))
    _check(da.isin(d, [1, 2]), da.isin(n, [1, 2]))
    edges = np.arange(0, 10, 2)
    _check(da.searchsorted(da.from_array(pm.asarray(edges), chunks=5), d),
           da.searchsorted(da.from_array(edges, chunks=5), n))


@pytest.mark.parametrize("name, f", [
    ("svd", lambda a: da.linalg.svd(a)[1]),  # tsqr: float64 pieces in Dask's combination
    ("cov", lambda a: da.cov(a.T)),
    ("corrcoef", lambda a: da.corrcoef(a.T)),
    ("percentile", lambda a: da.percentile(a[:, 0], [10, 50, 90])),
])
def test_float64_routines_over_pymetal_chunks(name, f):
    # Dask computes these in float64 (refused before issue 23): the "host" float64 policy runs them
    d, n = _pair((400, 6), chunks=(100, 6))
    _check(f(d), f(n), rtol=1e-4, atol=1e-4)

