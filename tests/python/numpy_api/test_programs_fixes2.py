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
