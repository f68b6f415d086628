"""What the second set of NumPy programs (scripts/numpy_programs2.py) found, each against NumPy:
Array.base / flags.owndata, digitize with decreasing bins, intersect1d(return_indices=True),
einsum_path, frompyfunc, base_repr, finfo's NumPy attributes, can_cast(casting=)."""

import numpy as np
import pytest

import pymetal as pm

DTYPES = [np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64]


@pytest.mark.parametrize("dt", DTYPES + [np.complex128, np.bool_])
@pytest.mark.parametrize("n", [0, 1, 7])
def test_base_is_the_owner_as_numpy(dt, n):
    x = pm.asarray(np.arange(n).astype(dt))
    ref = np.arange(n).astype(dt)
    views = [lambda a: a[1:], lambda a: a[::-2], lambda a: a.reshape(-1, 1).T, lambda a: a[None][0][:],
             lambda a: a.reshape(n, 1)[:, 0]]
    for f in views:
        v, rv = f(x), f(ref)
        assert (v.base is x) == (rv.base is ref), f
        assert v.flags["OWNDATA"] is False and v.flags.owndata is False
    assert x.base is None and x.flags["OWNDATA"] and x.flags.owndata
    for f in (lambda a: a.copy(), lambda a: a + a, lambda a: a.astype(np.float32, copy=True)):
        assert f(x).base is None and f(ref).base is None
    np.testing.assert_array_equal(x[1:].base.numpy(), ref)


def test_base_of_a_view_of_a_view_and_of_broadcast():
    x = pm.arange(12).reshape(3, 4)
    assert x.base is not None and x.base.shape == (12,)  # reshape of arange: a view, as NumPy's
    y = pm.zeros((3, 4))
    assert y.base is None and y[1:][:, 2].base is y and y.T[0].base is y
    assert pm.broadcast_to(y[0], (2, 4)).base is y
    assert pm.asarray(y).base is None  # the same array


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [[3.0, 2.0, 1.0, 0.0], [3.0, 3.0, 1.0, 1.0, 0.0], [1.0, 0.0], [5.0],
                                  [0.0, 1.0, 1.0, 3.0], []])
@pytest.mark.parametrize("dt", [np.float32, np.int64])
def test_digitize_increasing_and_decreasing(bins, right, dt):
    x = np.array([-1, 0, 0.5, 1, 2, 2.5, 3, 4, 5, 6]).astype(dt)
    b = np.asarray(bins, dtype=dt)
    got = pm.digitize(pm.asarray(x), pm.asarray(b), right=right)
    np.testing.assert_array_equal(got.numpy(), np.digitize(x, b, right=right))
    assert got.dtype == np.int64


@pytest.mark.parametrize("assume_unique", [False, True])
@pytest.mark.parametrize("a,b", [([1, 3, 4, 3], [3, 1, 2, 1]), ([], []), ([5], [5]), ([1, 2], [3]),
                                 ([2.5, 1, 7, 1, 9.5], [7, 7, 2.5, 0]), ([[3, 1], [2, 9]], [9, 3, 3]),
                                 (list(range(9, 0, -1)), list(range(0, 20, 3)))])
def test_intersect1d_return_indices(a, b, assume_unique):
    if assume_unique:
        a, b = np.unique(a), np.unique(b)
    ref = np.intersect1d(a, b, assume_unique=assume_unique, return_indices=True)
    got = pm.intersect1d(pm.asarray(a), pm.asarray(b), assume_unique=assume_unique, return_indices=True)
    assert len(got) == 3
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g.numpy(), r)
    assert got[1].dtype == np.int64 and got[2].dtype == np.int64


@pytest.mark.parametrize("dt", [np.int16, np.uint8, np.float32])
def test_intersect1d_indices_dtypes(dt):
    a = np.array([5, 1, 4, 4, 0, 7], dtype=dt)
    b = np.array([4, 0, 0, 8, 5], dtype=dt)
    ref = np.intersect1d(a, b, return_indices=True)
    got = pm.intersect1d(pm.asarray(a), pm.asarray(b), return_indices=True)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g.numpy(), r)
    assert got[0].dtype == dt


@pytest.mark.parametrize("subs,shapes", [("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("i,i", [(7,), (7,)]),
                                         ("ii->i", [(3, 3)]), ("bij,bjk->bik", [(2, 3, 1), (2, 1, 4)]),
                                         ("...i,i", [(2, 3, 0), (0,)])])
@pytest.mark.parametrize("optimize", ["greedy", "optimal", True])
def test_einsum_path_is_numpys(subs, shapes, optimize):
    ops = [np.ones(s, np.float32) for s in shapes]
    ref = np.einsum_path(subs, *ops, optimize=optimize)
    got = pm.einsum_path(subs, *[pm.asarray(o) for o in ops], optimize=optimize)
    assert got[0] == ref[0] and got[1] == ref[1]
    # and pm.einsum takes it as optimize=
    np.testing.assert_allclose(pm.einsum(subs, *[pm.asarray(o) for o in ops], optimize=got[0]).numpy(),
                               np.einsum(subs, *ops), rtol=1e-6)


def test_einsum_path_bad_input():
    with pytest.raises(TypeError, match="subscripts"):
        pm.einsum_path(pm.ones(3), [0])
    with pytest.raises(ValueError):
        pm.einsum_path("ij,jk", pm.ones((2, 3)), pm.ones((4, 2)))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_frompyfunc_gives_numbers(n):
    f = pm.frompyfunc(lambda a, b: a * b + 1, 2, 1)
    x = np.arange(n)
    got = f(pm.asarray(x), 3)
    np.testing.assert_array_equal(np.asarray(got.numpy(), dtype=np.int64) if n else got.numpy(), x * 3 + 1)
    assert got.shape == (n,)
    g = pm.frompyfunc(divmod, 2, 2)
    q, r = g(pm.asarray(np.arange(-3, 4)), 2)
    rq, rr = np.frompyfunc(divmod, 2, 2)(np.arange(-3, 4), 2)
    np.testing.assert_array_equal(q.numpy(), rq.astype(np.int64))
    np.testing.assert_array_equal(r.numpy(), rr.astype(np.int64))
    h = pm.frompyfunc(lambda v: v / 2, 1, 1)(pm.asarray([[1.0, 3.0]]))
    assert h.shape == (1, 2) and h.dtype == np.float32
    np.testing.assert_array_equal(h.numpy(), [[0.5, 1.5]])


def test_frompyfunc_bad_input():
    with pytest.raises(TypeError, match="numbers"):
        pm.frompyfunc(str, 1, 1)(pm.arange(3))
    with pytest.raises((TypeError, ValueError)):
        pm.frompyfunc(abs, 2, 1)(pm.arange(3))  # one argument for two inputs


def test_base_repr_binary_repr():
    for n, b in [(10, 2), (255, 16), (0, 3), (-7, 5)]:
        assert pm.base_repr(n, b) == np.base_repr(n, b)
    assert pm.binary_repr(-3, width=4) == np.binary_repr(-3, width=4)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_finfo_numpy_attributes(dt):
    f, r = pm.finfo(dt), np.finfo(dt)
    for name in ("tiny", "smallest_normal", "smallest_subnormal", "eps", "epsneg", "resolution", "max", "min"):
        assert getattr(f, name) == float(getattr(r, name)), name
    for name in ("precision", "bits", "nexp", "nmant", "maxexp", "minexp"):
        assert getattr(f, name) == int(getattr(r, name)), name


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("a,b", [(np.int8, np.int16), (np.float64, np.float32), (np.int64, np.uint8),
                                 (np.uint8, np.int8), (np.float32, np.int32), (np.int32, np.int32), (np.bool_, np.float16)])
def test_can_cast_casting(a, b, casting):
    assert pm.can_cast(a, b, casting) == np.can_cast(a, b, casting)
    assert pm.can_cast(a, b, casting=casting) == np.can_cast(a, b, casting=casting)


def test_can_cast_bad_casting_and_default():
    with pytest.raises(ValueError, match="casting"):
        pm.can_cast(pm.int8, pm.int16, "bogus")
    assert pm.can_cast(pm.int8, pm.int16) and not pm.can_cast(pm.float32, pm.int32)


# ---- second round ------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape,new", [((6,), (2, 3)), ((2, 3), (-1,)), ((1,), ()), ((0,), (0, 5)), ((4, 1), 4),
                                       ((7,), (7, 1))])
def test_shape_setter_reshapes_in_place(dt, shape, new):
    ref = np.arange(int(np.prod(shape))).astype(dt).reshape(shape)
    x = pm.asarray(ref.copy())
    view = x[...]
    ref.shape = new
    x.shape = new
    assert x.shape == ref.shape
    np.testing.assert_array_equal(x.numpy(), ref)
    assert view.shape == shape  # other views keep theirs


def test_shape_setter_errors_as_numpy():
    x = pm.arange(6).reshape(2, 3).T  # needs a copy to be flat
    with pytest.raises(AttributeError, match="reshape"):
        x.shape = (6,)
    y = pm.arange(6)
    with pytest.raises(ValueError):
        y.shape = (4,)
    with pytest.raises((TypeError, ValueError)):
        y.shape = "ab"
    assert y.shape == (6,)


@pytest.mark.parametrize("dt", DTYPES + [np.complex64])
@pytest.mark.parametrize("n,new", [(3, (2, 2)), (5, 2), (4, (2, 2)), (0, 3), (1, (0,)), (7, (3, 3, 1))])
def test_resize_in_place_as_numpy(dt, n, new):
    ref = (np.arange(n) + 1).astype(dt)
    x = pm.asarray(ref.copy())
    ref.resize(new, refcheck=False)
    assert x.resize(new) is None
    assert x.shape == ref.shape and x.dtype == ref.dtype
    np.testing.assert_array_equal(x.numpy(), ref)
    assert x.base is None


def test_resize_refuses_views_and_read_only():
    x = pm.arange(6)
    with pytest.raises(ValueError, match="own its data"):
        x[1:].resize(2)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        x.resize(8)
    y = pm.arange(4)
    v = y[:2]
    y.resize(8)
    assert v.numpy().tolist() == [0, 1]  # a view made before keeps its memory (no dangling view)
    y.resize(2, 2)
    assert y.shape == (2, 2)


@pytest.mark.parametrize("dt", DTYPES + [np.bool_])
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 5)])
def test_equality_with_none_and_strings_is_elementwise(dt, shape):
    ref = np.ones(shape, dt)
    x = pm.asarray(ref)
    for other in (None, "a"):
        for got, want in ((x == other, ref == other), (x != other, ref != other), (other == x, other == ref)):
            assert isinstance(got, pm.Array) and got.dtype == pm.bool and got.shape == shape
            np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("synced", [False, True], ids=["kernels", "host"])
@pytest.mark.parametrize("dt", DTYPES)
def test_one_element_is_a_copy_as_numpys_scalar(dt, synced, monkeypatch):
    # host: the element is copied on the host (small.copy_element); kernels: the host path off, by a kernel
    from pymetal.arrays import small
    if not synced:
        monkeypatch.setattr(small, "LIMIT", 0)
    moved = []
    real = small.copy_element
    monkeypatch.setattr(small, "copy_element", lambda src, out: moved.append(real(src, out)) or moved[-1])
    ref = np.arange(12).astype(dt).reshape(3, 4)
    x = pm.asarray(ref.copy())
    if synced:
        pm.synchronize()
    for key in [(1, 2), (-1, -1)]:
        v, rv = x[key], ref[key]
        x[key] = 0
        ref[key] = 0
        assert v.item() == rv.item()
    # the swap idiom
    x[0, 0], x[0, 1] = x[0, 1], x[0, 0]
    ref[0, 0], ref[0, 1] = ref[0, 1], ref[0, 0]
    np.testing.assert_array_equal(x.numpy(), ref)
    y, ry = pm.asarray(np.arange(5).astype(dt)), np.arange(5).astype(dt)
    for i, j in [(0, 4), (1, 3), (2, 2)]:
        y[i], y[j] = y[j], y[i]
        ry[i], ry[j] = ry[j], ry[i]
    np.testing.assert_array_equal(y.numpy(), ry)
    if dt != np.float64:  # (float64 elements are read by the float64 policy's own path)
        if not synced:
            assert moved and not any(moved)
        elif not y._buf.device.poisoned.value:  # (a device an earlier fault poisoned runs every op's kernel)
            assert any(moved)
    # NumPy's 0-d views stay views: x[..., i] and a 0-d array's x[...]
    e = x[1, ..., 1]
    x[1, 1] = 7
    assert e.item() == 7 and e.base is not None
    z = pm.asarray(np.array(3, dt))
    zv = z[...]
    z[()] = 1
    assert zv.item() == 1


def test_one_element_in_place_operators():
    x = pm.arange(5)
    x[2] += 10
    x[-1] *= 3
    np.testing.assert_array_equal(x.numpy(), [0, 1, 12, 3, 12])


@pytest.mark.parametrize("dt", [np.int16, np.uint8, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_tofile_fromfile_dump_byteswap(tmp_path, dt, n):
    import pickle
    ref = (np.arange(n) * 3).astype(dt)
    x = pm.asarray(ref)
    path = tmp_path / "a.bin"
    x.tofile(str(path))
    back = pm.fromfile(str(path), dtype=dt)
    np.testing.assert_array_equal(back.numpy(), np.fromfile(str(path), dtype=dt))
    assert back.dtype == dt
    txt = tmp_path / "a.txt"
    x.tofile(str(txt), sep=" ")
    np.testing.assert_array_equal(pm.fromfile(str(txt), dtype=dt, sep=" ").numpy(), ref)
    np.testing.assert_array_equal(pickle.loads(x.dumps()).numpy(), ref)
    x.dump(str(tmp_path / "p.pkl"))
    with open(tmp_path / "p.pkl", "rb") as f:
        np.testing.assert_array_equal(pickle.load(f).numpy(), ref)
    np.testing.assert_array_equal(x.byteswap().numpy(), ref.byteswap())
    y = pm.asarray(ref.copy())
    assert y.byteswap(inplace=True) is y
    np.testing.assert_array_equal(y.numpy(), ref.byteswap())


def test_setflags():
    x = pm.arange(3)
    x.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1
    x.setflags(write=True)
    x[0] = 5
    assert x[0].item() == 5
    x.setflags(align=True)
    with pytest.raises(ValueError, match="write="):
        x.setflags(align=False)
    with pytest.raises(ValueError):
        pm.broadcast_to(pm.arange(3), (2, 3)).setflags(write=True)


@pytest.mark.parametrize("shapes", [[(3, 1), (4,)], [(2, 1, 3), (5, 1)], [(0,), (1,)], [(1,), ()]])
def test_broadcast_object(shapes):
    arrs = [np.arange(int(np.prod(s))).reshape(s) for s in shapes]
    b, rb = pm.broadcast(*[pm.asarray(a) for a in arrs]), np.broadcast(*arrs)
    assert (b.shape, b.ndim, b.size, b.numiter) == (rb.shape, rb.ndim, rb.size, rb.numiter)
    assert [tuple(map(int, t)) for t in b] == [tuple(map(int, t)) for t in rb]


def test_numpy_metadata_names():
    assert pm.index_exp[1:3] == np.index_exp[1:3]
    assert pm.True_ is np.True_ and pm.False_ is np.False_
    assert pm.typecodes == np.typecodes and pm.mintypecode("fd") == np.mintypecode("fd")
    assert pm.typename("f") == np.typename("f") and pm.little_endian == np.little_endian


@pytest.mark.parametrize("n", [1, 4, 9])
def test_polynomial_and_emath_on_pymetal_arrays(n):
    P = pm.polynomial
    x = np.linspace(-1, 2, n + 3).astype(np.float32)
    y = (2 * x ** 2 - x + 1).astype(np.float32)
    deg = min(2, n)
    got = P.Polynomial.fit(pm.asarray(x), pm.asarray(y), deg).convert().coef
    want = np.polynomial.Polynomial.fit(x, y, deg).convert().coef
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.asarray(P.polynomial.polyval(pm.asarray(x), [1.0, 2.0])),
                               np.polynomial.polynomial.polyval(x, [1.0, 2.0]), rtol=1e-5)
    neg = np.array([-4.0, 0.0, 9.0][:n], np.float32)
    np.testing.assert_allclose(np.asarray(pm.emath.sqrt(pm.asarray(neg))), np.emath.sqrt(neg), rtol=1e-6)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_eigvalsh_uplo(uplo):
    a = np.array([[2.0, 5.0, 0.0], [1.0, 3.0, 4.0], [7.0, 0.5, 1.0]], np.float32)
    w, v = pm.linalg.eigh(pm.asarray(a), UPLO=uplo)
    rw, _ = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w.numpy(), rw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pm.linalg.eigvalsh(pm.asarray(a), UPLO=uplo).numpy(), rw, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        pm.linalg.eigh(pm.asarray(a), UPLO="X")


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (1, 1), (4, 4), (2, 3, 3)])
def test_qr_mode_r(shape):
    a = np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape) ** 1.5
    got, want = pm.linalg.qr(pm.asarray(a), "r"), np.linalg.qr(a, mode="r")
    np.testing.assert_allclose(np.abs(got.numpy()), np.abs(want), rtol=1e-3, atol=1e-3)
    with pytest.raises(ValueError, match="mode"):
        pm.linalg.qr(pm.asarray(a), mode="raw")


@pytest.mark.parametrize("ashape,bshape,axes", [((2, 3, 6), (2, 3), None), ((6, 2, 3), (2, 3), (0,)),
                                               ((4, 4), (4,), None), ((1, 1), (1,), None), ((3, 2, 3, 2), (3, 2), None)])
def test_tensorsolve(ashape, bshape, axes):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(ashape) + 3 * np.eye(ashape[-1]).reshape((1,) * (len(ashape) - 2) + (ashape[-1],) * 2)
         if axes is None and len(ashape) == 2 else rng.standard_normal(ashape)).astype(np.float32)
    b = rng.standard_normal(bshape).astype(np.float32)
    want = np.linalg.tensorsolve(a, b, axes=axes)
    got = pm.linalg.tensorsolve(pm.asarray(a), pm.asarray(b), axes=axes)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("shape,ind", [((4, 2, 2), 1), ((2, 3, 6), 2), ((6, 2, 3), 1), ((3, 3), 1)])
def test_tensorinv(shape, ind):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(np.float32)
    want = np.linalg.tensorinv(a, ind=ind)
    got = pm.linalg.tensorinv(pm.asarray(a), ind=ind)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-2, atol=2e-2)


def test_tensor_solve_inv_errors():
    with pytest.raises(pm.linalg.LinAlgError, match="square"):
        pm.linalg.tensorsolve(pm.ones((2, 3, 4)), pm.ones((2, 3)))
    with pytest.raises(pm.linalg.LinAlgError, match="square"):
        pm.linalg.tensorinv(pm.ones((2, 3)), ind=1)
    with pytest.raises(ValueError, match="ind"):
        pm.linalg.tensorinv(pm.ones((2, 2)), ind=0)


def test_flat_assignment():
    for v in ([1, 2, 3, 4], [1, 2], 7, [1, 2, 3], np.arange(4) * 2):
        for dt in (np.float32, np.int16):
            a, r = pm.zeros((2, 2), dt), np.zeros((2, 2), dt)
            a.flat = v
            r.flat = v
            np.testing.assert_array_equal(a.numpy(), r)
    e = pm.zeros((0,))
    e.flat = [1]
    assert e.shape == (0,)


QUANTILE_METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
                    "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                    "normal_unbiased"]


@pytest.mark.parametrize("method", QUANTILE_METHODS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10, 11])
@pytest.mark.parametrize("dt", [np.float32, np.int64, np.uint8])
def test_quantile_every_numpy_method(method, n, dt):
    qs = np.array([0, 0.01, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 0.99, 1.0])
    a = np.random.default_rng(n).permutation(n * 3).astype(dt)[:n]
    want = np.quantile(a, qs, method=method)
    got = pm.quantile(pm.asarray(a), qs, method=method)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    assert got.dtype.kind == want.dtype.kind  # the discrete methods keep integers
    np.testing.assert_allclose(pm.percentile(pm.asarray(a), qs * 100, method=method).numpy(),
                               np.percentile(a, qs * 100, method=method), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_nanquantile_methods_axis_keepdims(method):
    x = np.array([[1.0, np.nan, 3.0, 7.0, 2.0], [np.nan, np.nan, 5.0, 4.0, 4.0], [np.nan] * 5], np.float32)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.nanquantile(x, [0.2, 0.5, 0.9], axis=1, method=method, keepdims=True)
    got = pm.nanquantile(pm.asarray(x), [0.2, 0.5, 0.9], axis=1, method=method, keepdims=True)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5, equal_nan=True)
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(pm.quantile(pm.asarray(y), 0.37, axis=(0, 2), method=method).numpy(),
                               np.quantile(y, 0.37, axis=(0, 2), method=method), atol=1e-4)


def test_quantile_bad_method():
    with pytest.raises(ValueError, match="hazen"):
        pm.quantile(pm.arange(3), 0.5, method="bogus")


@pytest.mark.parametrize("shape", [(2, 5), (3, 7), (1, 4), (4, 1), (2, 2), (1, 1)])
@pytest.mark.parametrize("kw", [{"fweights": "f"}, {"aweights": "a"}, {"fweights": "f", "aweights": "a"},
                                {"fweights": "f", "ddof": 0}, {"aweights": "a", "bias": True}, {"aweights": "a", "ddof": 2}])
def test_cov_weights(shape, kw):
    import warnings
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    f = rng.integers(0, 4, shape[1])
    f[0] = 1
    a = rng.random(shape[1]) + 0.1
    args = {k: (f if v == "f" else a if v == "a" else v) for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.cov(x, **args)
        got = pm.cov(pm.asarray(x), **{k: (pm.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()})
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5, equal_nan=True)


def test_cov_weights_rowvar_and_errors():
    x = np.random.default_rng(0).standard_normal((6, 2)).astype(np.float32)
    np.testing.assert_allclose(pm.cov(pm.asarray(x), rowvar=False, aweights=np.arange(1, 7)).numpy(),
                               np.cov(x, rowvar=False, aweights=np.arange(1, 7)), rtol=1e-4)
    m = pm.asarray([[1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="integer"):
        pm.cov(m, fweights=[1.5, 1, 1])
    with pytest.raises(RuntimeError, match="incompatible"):
        pm.cov(m, fweights=[1, 1])
    with pytest.raises(ValueError, match="negative"):
        pm.cov(m, aweights=[-1, 1, 1])
    with pytest.raises(RuntimeError, match="multidimensional"):
        pm.cov(m, fweights=[[1, 1, 1]])


@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (3, 4)])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_of_complex_as_numpy(shape, axis, ddof):
    import warnings
    rng = np.random.default_rng(len(shape))
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_v, want_s = np.var(z, axis=axis, ddof=ddof), np.std(z, axis=axis, ddof=ddof)
        got_v, got_s = pm.var(pm.asarray(z), axis=axis, ddof=ddof), pm.asarray(z).std(axis=axis, ddof=ddof)
    assert got_v.dtype == np.float32 and got_s.dtype == np.float32
    np.testing.assert_allclose(got_v.numpy(), want_v, rtol=1e-5, atol=1e-6, equal_nan=True)
    np.testing.assert_allclose(got_s.numpy(), want_s, rtol=1e-5, atol=1e-6, equal_nan=True)


NAN = float("nan")


@pytest.mark.parametrize("values", [[3 + 1j, 1 - 1j, 1 + 2j, -2 + 0j, 1 - 1j, 3 + 0j], [2j], [],
                                    [complex(NAN, 1), complex(1, NAN), 1 + 1j, complex(NAN, NAN), 0j, 1 - 2j]])
def test_sort_complex_lexicographic_as_numpy(values):
    z = np.array(values, np.complex64)
    a = pm.asarray(z)
    np.testing.assert_array_equal(pm.sort(a).numpy(), np.sort(z))
    np.testing.assert_array_equal(pm.argsort(a).numpy(), np.argsort(z, kind="stable"))
    np.testing.assert_array_equal(pm.sort_complex(a).numpy(), np.sort_complex(z))
    b = pm.asarray(z)
    b.sort()
    np.testing.assert_array_equal(b.numpy(), np.sort(z))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_complex_axes_and_descending(axis):
    rng = np.random.default_rng(3)
    m = (rng.integers(0, 3, (3, 4)) + 1j * rng.integers(0, 3, (3, 4))).astype(np.complex64)
    np.testing.assert_array_equal(pm.sort(pm.asarray(m), axis=axis).numpy(), np.sort(m, axis=axis))
    np.testing.assert_array_equal(pm.argsort(pm.asarray(m), axis=axis).numpy(), np.argsort(m, axis=axis, kind="stable"))
    if axis is not None:
        np.testing.assert_array_equal(pm.sort(pm.asarray(m), axis=axis, descending=True).numpy(),
                                      np.flip(np.sort(m, axis=axis), axis=axis))
    np.testing.assert_array_equal(pm.sort_complex(pm.asarray([3, 1, 2])).numpy(), np.sort_complex(np.array([3, 1, 2])))


@pytest.mark.parametrize("name", ["isnat", "is_busday", "busday_offset", "datetime_as_string"])
def test_date_names_say_what_to_do(name):
    with pytest.raises(AttributeError, match="dates have no kernels"):
        getattr(pm, name)


POINT = np.dtype([("x", np.float32), ("y", np.int32), ("v", np.float32, (3,))])
NESTED = np.dtype([("position", [("x", np.float32), ("y", np.float32)]),
                   ("color", [("r", np.float32), ("g", np.float32), ("b", np.float32), ("a", np.float32)])])


@pytest.mark.parametrize("n", [0, 1, 5])
def test_struct_fields_are_views_as_numpy(n):
    z, r = pm.zeros(n, POINT), np.zeros(n, POINT)
    for a in (z, r):
        a["x"] = np.arange(n, dtype=np.float32) * 1.5
        a["y"][1:] = 7
        a["v"] = 2.5
    assert z["x"].base is z and z["v"].shape == (n, 3)
    for f in POINT.names:
        np.testing.assert_array_equal(z[f].numpy(), r[f])
        np.testing.assert_array_equal(z.numpy()[f], r[f])
    np.testing.assert_allclose(float(pm.sum(z["x"] * 2)), float(np.sum(r["x"] * 2)))
    if n:
        np.testing.assert_array_equal(z[z["x"] > 1]["x"].numpy(), r[r["x"] > 1]["x"])
        np.testing.assert_array_equal(z[::-2].copy()["y"].numpy(), r[::-2].copy()["y"])


def test_nested_struct_fields_copy_and_records():
    Z, R = pm.zeros(4, NESTED), np.zeros(4, NESTED)
    for a in (Z, R):
        a["position"]["x"] = np.arange(4, dtype=np.float32)
        a["color"]["a"] = 1
        a[0] = a[3]
    assert Z.numpy().tolist() == R.tolist()
    assert Z["color"].copy().numpy().tolist() == R["color"].copy().tolist()
    assert pm.concatenate([Z, Z]).numpy().tolist() == np.concatenate([R, R]).tolist()
    one = Z[1]
    Z[1] = Z[2]
    assert one.numpy().tolist() == R[1].tolist()  # a record is a copy, as NumPy's


def test_struct_records_from_tuples():
    d = np.dtype([("x", np.float32), ("y", np.int32)])
    got, want = pm.array([(1.0, 2), (3.0, 4)], dtype=d), np.array([(1.0, 2), (3.0, 4)], dtype=d)
    assert got.shape == want.shape == (2,)
    assert got.numpy().tolist() == want.tolist()
    np.testing.assert_array_equal(pm.asarray(((1, 2), (3, 4))).numpy(), [[1, 2], [3, 4]])  # numbers as before


def test_struct_field_errors():
    with pytest.raises(ValueError, match="no field of name nope"):
        pm.zeros(2, POINT)["nope"]
    with pytest.raises(IndexError, match="no fields"):
        pm.arange(3)["x"]
    packed = np.dtype([("a", np.uint8), ("b", np.float32)])
    with pytest.raises(TypeError, match="aligned"):
        pm.zeros(2, packed)["b"]
    np.testing.assert_array_equal(pm.zeros(2, packed)["a"].numpy(), [0, 0])
    aligned = np.dtype([("a", np.uint8), ("b", np.float32)], align=True)
    z = pm.zeros(3, aligned)
    z["b"] = 2.5
    np.testing.assert_array_equal(z.numpy()["b"], [2.5] * 3)


@pytest.mark.parametrize("dt", [POINT, np.dtype([("x", np.float32), ("y", np.int32)]), np.dtype([("a", np.uint8), ("b", np.uint8)]),
                                np.dtype([("a", np.uint8), ("b", np.uint8), ("c", np.uint8)])])
def test_struct_records_gather_scatter_and_fill(dt):
    first = dt.names[0]
    z, r = pm.zeros(5, dt), np.zeros(5, dt)
    for a in (z, r):
        a[first] = np.arange(5)
        a[0] = 5
        a[1:3] = a[0]
        a[[3, 4]] = a[[0, 0]]
        a[a[first] > 4] = a[0]
        a[2] = tuple(range(len(dt.names))) if "v" not in dt.names else (1.0, 2, [1, 2, 3])
    for f in dt.names:
        np.testing.assert_array_equal(z.numpy()[f], r[f])
    for key in ([0, 2], [4, 4, 1], slice(None, None, -2), 3, ()):
        got, want = z[key], r[key]
        assert got.shape == want.shape
        for f in dt.names:
            np.testing.assert_array_equal(got.numpy()[f], want[f])
    mask = z[first].numpy() > 2
    for f in dt.names:
        np.testing.assert_array_equal(z[pm.asarray(mask)].numpy()[f], r[mask][f])
    s = z[1:3]  # basic indexing stays a view
    s[first] = 7
    assert s.base is z and z[first].numpy()[1:3].tolist() == [7, 7]


@pytest.mark.parametrize("pair", [lambda a: (a[::2], a[1::2]), lambda a: (a[::2], a[4:]), lambda a: (a[:5], a[5:]),
                                  lambda a: (a.reshape(3, 4)[:, 0], a.reshape(3, 4)[:, 1]),
                                  lambda a: (a.reshape(3, 4)[:, :2], a.reshape(3, 4)[:, 1:3]), lambda a: (a, a),
                                  lambda a: (a[:0], a), lambda a: (a[::3], a[1::3]), lambda a: (a[::-1], a[5:6])])
def test_shares_memory_is_exact_as_numpy(pair):
    x, n = pm.arange(12), np.arange(12)
    assert pm.shares_memory(*pair(x)) == np.shares_memory(*pair(n))
    assert pm.may_share_memory(*pair(x)) >= pm.shares_memory(*pair(x))
    assert pm.shares_memory(x, x.numpy()) and not pm.shares_memory(x, np.arange(3))


def test_ufunc_attributes_are_numpys():
    names = [n for n in dir(np) if isinstance(getattr(np, n), np.ufunc) and hasattr(pm, n)]
    assert len(names) > 60
    for n in names:
        f, u = getattr(pm, n), getattr(np, n)
        assert (f.nin, f.nout, f.nargs, f.identity, f.signature) == (u.nin, u.nout, u.nargs, u.identity, u.signature), n
    # NumPy code's use: a reduction's start value
    x = pm.asarray([3, 4])
    assert int(pm.multiply.reduce(x, initial=pm.multiply.identity)) == 12


@pytest.mark.parametrize("dt", DTYPES + [np.bool_, np.complex64])
def test_zero_d_arrays_hash_as_numpy_scalars(dt):
    ref = np.array([1, 2, 2, 3, 0]).astype(dt)
    x = pm.asarray(ref)
    assert {v.item() if hasattr(v, "item") else v for v in set(x)} == set(ref.tolist())
    counts = {}
    for v in x:
        counts[v] = counts.get(v, 0) + 1
    want = {}
    for v in ref:
        want[v] = want.get(v, 0) + 1
    assert {k.item(): c for k, c in counts.items()} == {k.item(): c for k, c in want.items()}
    assert hash(x[1]) == hash(ref[1]) and hash(x.sum()) == hash(ref.sum())
    assert x[3] in {ref[3].item(): 0}
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)
    with pytest.raises(TypeError, match="unhashable"):
        {x[None]: 1}


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((3,), (3,)), ((2, 1, 3), (1, 3, 2)), ((0, 2), (2, 5)), ((1, 1), (1, 1))])
@pytest.mark.parametrize("dt", [np.float32, np.int32, np.int64])
def test_matmul_out_and_dtype(sa, sb, dt):
    a = np.arange(int(np.prod(sa))).reshape(sa).astype(dt)
    b = (np.arange(int(np.prod(sb))).reshape(sb) % 5).astype(dt)
    want = np.matmul(a, b)
    out = pm.empty(want.shape, dtype=want.dtype)
    got = pm.matmul(pm.asarray(a), pm.asarray(b), out=out)
    assert got is out
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
    assert pm.matmul(pm.asarray(a), pm.asarray(b), dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="shape"):
        pm.matmul(pm.asarray(a), pm.asarray(b), out=pm.empty(want.shape + (2,)))


@pytest.mark.parametrize("dt", [np.int8, np.float32])
def test_zero_d_views_stay_views(dt):
    # flip of a 0-d array is a view, as NumPy's (the differential fuzzer found it copied once x[i]
    # became a copy): writing it writes the original
    v0 = pm.asarray(np.array(127, dtype=dt))
    v1 = pm.flip(v0, axis=None)
    v1[()] = 0
    assert v0.item() == 0
    x = pm.asarray(np.arange(6, dtype=dt).reshape(2, 3))
    e = x[1, ..., 2]  # x[..., i] keeps NumPy's 0-d view
    x[1, 2] = 7
    assert e.item() == 7
