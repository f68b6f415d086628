"""matmul and friends, sorting, searching, scans and sets through the array API."""

import numpy as np
import pytest

import pymetal as pm
from arraytest import BF16, INTS, assert_same, dtype_id, random


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.int32),
                                np.dtype(np.int64), np.dtype(np.uint8)], ids=dtype_id)
def test_matmul_shapes(dev, rng, dt):
    tol = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3, BF16: 2e-2}.get(np.dtype(dt))
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5)),
                   ((2, 1, 3, 4), (5, 4, 2)), ((1, 1), (1, 1)), ((0, 3), (3, 2)), ((3, 0), (0, 2)),
                   ((33, 65), (65, 17))]:
        a = random(rng, sa, dt, -3, 4)
        b = random(rng, sb, dt, -3, 4)
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64)) if tol else np.matmul(a, b)
        assert_same(pm.asarray(a) @ pm.asarray(b), np.asarray(ref).astype(dt), rtol=tol, atol=tol)


def test_matmul_views_and_promotion(dev, rng):
    a = random(rng, (40, 30), np.float32)
    b = random(rng, (40, 20), np.float32)
    x, y = pm.asarray(a), pm.asarray(b)
    assert_same(x.T @ y, a.T @ b, rtol=1e-5, atol=1e-4)
    assert_same(x[::2].T @ y[::2], a[::2].T @ b[::2], rtol=1e-5, atol=1e-4)
    assert_same(pm.matmul(x, pm.asarray(np.ones((30, 2), np.int8))), a @ np.ones((30, 2), np.float32), rtol=1e-5)
    assert_same(np.matmul(x, x.T), a @ a.T, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="align"):
        x @ y
    z = pm.asarray(np.eye(30, dtype=np.float32))
    x2 = pm.asarray(a.copy())
    x2 @= z
    assert_same(x2, a)


def test_tensordot_vecdot_outer(dev, rng):
    a = random(rng, (3, 4, 5), np.float32)
    b = random(rng, (4, 5, 2), np.float32)
    assert_same(pm.tensordot(pm.asarray(a), pm.asarray(b)), np.tensordot(a, b), rtol=1e-5, atol=1e-4)
    assert_same(pm.tensordot(pm.asarray(a), pm.asarray(b), axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])),
                rtol=1e-5, atol=1e-4)
    u, v = random(rng, (6, 5), np.float32), random(rng, (5,), np.float32)
    assert_same(pm.vecdot(pm.asarray(u), pm.asarray(v)), (u * v).sum(-1), rtol=1e-5, atol=1e-5)
    assert_same(pm.outer(pm.asarray(v), pm.asarray(v[:3])), np.outer(v, v[:3]))


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int8),
                                np.dtype(np.uint32), np.dtype(np.bool_), BF16], ids=dtype_id)
def test_sort_argsort(dev, rng, dt):
    for shape, axis in [((0,), -1), ((1,), -1), ((257,), -1), ((5, 33), 1), ((5, 33), 0), ((3, 4, 6), 1)]:
        a = random(rng, shape, dt, -5, 5)
        x = pm.asarray(a)
        assert_same(pm.sort(x, axis=axis), np.sort(a, axis=axis, kind="stable"))
        assert_same(pm.argsort(x, axis=axis), np.argsort(a, axis=axis, kind="stable").astype(np.int64))
        want = np.argsort(-a.astype(np.float64) if dt != np.bool_ else ~a, axis=axis, kind="stable")
        assert_same(pm.argsort(x, axis=axis, descending=True), want.astype(np.int64))


def test_sort_nans_last(dev):
    a = np.array([3.0, np.nan, 1.0, -np.inf, np.nan, 2.0], np.float32)
    assert_same(pm.sort(pm.asarray(a)), np.sort(a))
    assert_same(pm.argsort(pm.asarray(a)), np.argsort(a, kind="stable"))


def test_searchsorted(dev, rng):
    s = np.sort(random(rng, (100,), np.float32))
    v = random(rng, (7, 3), np.float32)
    v[0, 0] = s[10]
    for side in ("left", "right"):
        assert_same(pm.searchsorted(pm.asarray(s), pm.asarray(v), side=side),
                    np.searchsorted(s, v, side=side).astype(np.int64))
    i = np.sort(random(rng, (50,), np.int32))
    assert_same(pm.searchsorted(pm.asarray(i), pm.asarray(i[::7])), np.searchsorted(i, i[::7]).astype(np.int64))


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint16), np.dtype(np.bool_),
                                np.dtype(np.float16)], ids=dtype_id)
def test_cumulative(dev, rng, dt):
    for shape, axis in [((0,), 0), ((1,), 0), ((1000,), 0), ((4, 70), 1), ((4, 70), 0)]:
        a = random(rng, shape, dt, -3, 4)
        x = pm.asarray(a)
        k = np.dtype(dt).kind
        acc = np.int64 if k in "bi" else np.uint64 if k == "u" else np.float32
        want = np.cumsum(a.astype(acc), axis=axis)
        tol = 1e-2 if dt == np.float16 else 1e-5
        assert_same(pm.cumulative_sum(x, axis=axis), want.astype(acc if k != "f" else dt), rtol=tol, atol=tol)
        if a.size <= 1000:
            small = (a % 3 if k != "b" else a).astype(acc)
            assert_same(pm.cumulative_prod(pm.asarray(small), axis=axis), np.cumprod(small, axis=axis).astype(acc),
                        rtol=tol)
    c = pm.cumulative_sum(pm.asarray(np.arange(4, dtype=np.int32)), include_initial=True)
    assert c.tolist() == [0, 0, 1, 3, 6]


def test_nonzero_unique(dev, rng):
    a = random(rng, (5, 6), np.int32, -2, 3)
    nz = pm.nonzero(pm.asarray(a))
    for got, want in zip(nz, np.nonzero(a)):
        assert_same(got, want.astype(np.int64))
    assert_same(pm.unique_values(pm.asarray(a)), np.unique(a))
    f = np.array([1.0, np.nan, 1.0, np.nan, 0.5], np.float32)
    u = pm.unique_values(pm.asarray(f)).numpy()
    assert u[:2].tolist() == [0.5, 1.0] and np.isnan(u[2:]).sum() == 2


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.bool_), BF16], ids=dtype_id)
def test_nonzero_unique_on_the_device(dev, rng, dt):
    for shape in [(0,), (1,), (1000,), (7, 9), (2, 3, 4)]:
        a = random(rng, shape, dt, -2, 3)
        x = pm.asarray(a)
        for got, want in zip(pm.nonzero(x), np.nonzero(a)):
            assert_same(got, want.astype(np.int64))
        assert_same(pm.unique_values(x), np.unique(a.astype(np.float32)).astype(dt) if dt == BF16 else np.unique(a))
        if a.ndim:
            assert_same(x[x > 0], a[a > 0])


def test_matmul_misaligned_lists_raise_valueerror():
    # The message names the operands' shapes; lists have none of their own (was AttributeError).
    with pytest.raises(ValueError, match=r"shapes \(1, 2\) and \(1, 2\) do not align"):
        pm.matmul([[1.0, 2.0]], [[1.0, 2.0]])
