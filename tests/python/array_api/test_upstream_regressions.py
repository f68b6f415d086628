"""Bugs found by running Dask's and scikit-learn's own test suites on pymetal
(scripts/run_upstream_tests.py), each checked here against NumPy on small cases of our own."""

import numpy as np
import pytest

import pymetal as pm


# ---- a list of bools in an index is a mask (NumPy's rule), alone or next to other entries

@pytest.mark.parametrize("key", [
    [True, False, False, True, True, False],
    ([True, False, False, False, True, False], 2),
    ([False] * 6, slice(None)),
    (slice(1, 3), [True, False, True, True, False, False, True]),
    (3, [True] * 7),
    ([[True, False, True, False, True, False, True]] * 6,),
])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_list_of_bools_is_a_mask(key, dtype):
    n = np.arange(42, dtype=dtype).reshape(6, 7)
    x = pm.asarray(n)
    np.testing.assert_array_equal(x[key].numpy(), n[key])
    x[key] = -1
    n[key] = -1
    np.testing.assert_array_equal(x.numpy(), n)


def test_list_index_edge_cases():
    n = np.arange(5, dtype=np.int16)
    x = pm.asarray(n)
    assert x[[]].shape == n[[]].shape == (0,)  # [] is an empty integer index
    np.testing.assert_array_equal(x[[4, -1, 0]].numpy(), n[[4, -1, 0]])
    with pytest.raises(IndexError, match="boolean index"):
        x[[True, False]]  # a mask of the wrong length
    with pytest.raises(IndexError, match="integer"):
        x[[1.5]]


# ---- diff with n=0 is the input itself (prepend/append not added), as NumPy's

@pytest.mark.parametrize("shape,axis", [((5,), -1), ((1,), 0), ((3, 4), 0), ((3, 4), 1), ((0, 2), 1)])
def test_diff_n0_ignores_prepend_append(shape, axis):
    n = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = pm.asarray(n)
    for kw in ({}, {"prepend": 0}, {"append": 7}, {"prepend": 1, "append": 2}):
        r = pm.diff(x, 0, axis, **kw)
        np.testing.assert_array_equal(r.numpy(), np.diff(n, 0, axis, **kw))
        assert r.dtype == n.dtype
    r = pm.diff(x, 0, axis)
    r[...] = -5  # a copy, not a view of x
    np.testing.assert_array_equal(x.numpy(), n)
    np.testing.assert_array_equal(pm.diff(x, 1, axis, prepend=0).numpy(), np.diff(n, 1, axis, prepend=0))


# ---- NumPy's *_like functions on pymetal arrays

@pytest.mark.parametrize("fn", [np.empty_like, np.zeros_like, np.ones_like])
@pytest.mark.parametrize("kw", [{}, {"shape": 4}, {"shape": (2, 0)}, {"dtype": np.int16}, {"dtype": np.int8, "shape": (3, 1)}])
def test_like_functions_stay_pymetal(fn, kw):
    x = pm.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    r = fn(x, **kw)
    want = fn(x.numpy(), **kw)
    assert type(r) is pm.Array and r.shape == want.shape and r.dtype == want.dtype
    if fn is not np.empty_like:
        np.testing.assert_array_equal(r.numpy(), want)


def test_like_functions_float64_under_host_policy():
    x = pm.asarray(np.arange(3, dtype=np.float32))
    if pm.get_float64_policy() != "host":
        pytest.skip("float64 arrays exist under the 'host' float64 policy only")
    for fn, args in ((np.empty_like, ()), (np.zeros_like, ()), (np.full_like, (2.5,))):
        r = fn(x, *args, dtype=np.float64, shape=(1, 2))
        assert type(r) is pm.Array and r.dtype == np.float64 and r.shape == (1, 2)
    np.testing.assert_array_equal(np.full_like(x, 2.5, dtype=np.float64).numpy(), np.full(3, 2.5))


def test_like_functions_refuse_structured_dtypes():
    x = pm.asarray(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match="cannot hold dtype"):
        np.empty_like(x, dtype=[("vals", "f4"), ("arg", "i8")])


# ---- np.may_share_memory / np.shares_memory of a pymetal and a NumPy array (it recursed forever)

def test_may_share_memory_mixed_with_numpy():
    x = pm.arange(10, dtype=pm.float32)
    view = x.numpy()  # zero-copy: the same memory
    for f in (np.may_share_memory, np.shares_memory):
        assert f(x, view) and f(view[3:5], x) and f(x[2:], view[:4])
        assert not f(x, np.arange(10.0)) and not f(np.zeros(3), x)
        assert not f(x[:5], x[5:])
    assert not np.may_share_memory(x, x.numpy().copy())


def test_sklearn_without_dispatch_converts_pymetal_input():
    # scikit-learn without array_api_dispatch converts pymetal input with np.asarray, then
    # asks np.may_share_memory(numpy_array, pymetal_array) before copying (check_array(copy=True))
    sklearn = pytest.importorskip("sklearn")
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    rng = np.random.default_rng(1)
    n = rng.standard_normal((23, 3)).astype(np.float32)
    x = pm.asarray(n)
    with sklearn.config_context(array_api_dispatch=False):
        for est in (StandardScaler(), MinMaxScaler()):
            got = est.fit(x).transform(x)
            np.testing.assert_allclose(np.asarray(got), est.fit(n).transform(n), rtol=1e-6, atol=1e-6)
            assert np.asarray(x).tolist() == n.tolist()  # the input untouched (copy=True)


# ---- NumPy functions pymetal implements with NumPy's signature, on float64 pymetal arrays:
# the float64 policy ("host": NumPy on the host views), not a Metal kernel (KeyError before)

@pytest.mark.skipif(pm.get_float64_policy() != "host", reason="float64 arrays exist under the 'host' policy")
@pytest.mark.parametrize("shape", [(0,), (1,), (10,), (3, 7)])
def test_numpy_api_functions_of_float64_arrays(shape):
    n = np.linspace(-1.5, 2.5, num=int(np.prod(shape))).reshape(shape)
    x = pm.asarray(n)
    cases = [(np.cumsum, {"axis": 0, "dtype": int}), (np.cumprod, {"axis": 0, "dtype": int}),
             (np.cumsum, {"axis": 0}), (np.argsort, {"axis": -1})]
    if n.shape[-1] > 1:
        cases.append((np.argpartition, {"kth": 1, "axis": -1}))
    for f, kw in cases:
        got, want = f(x, **kw), f(n, **kw)
        assert type(got) is pm.Array and got.dtype == want.dtype, (f.__name__, got.dtype, want.dtype)
        if f is np.argpartition:  # any valid partition: compare the partitioned values
            got, want = np.take_along_axis(n, got.numpy(), -1)[..., 1], np.take_along_axis(n, want, -1)[..., 1]
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_array_equal(got.numpy(), want)
