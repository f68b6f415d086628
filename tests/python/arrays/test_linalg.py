"""pymetal.linalg (the Array API extension) against numpy.linalg on random float32 data."""

import math

import numpy as np
import pytest

import pymetal as pm
from arraytest import BF16, assert_same, random

L = pm.linalg
F32 = np.dtype(np.float32)

# Stacks of matrices: batched, a single one, 1x1, empty batch, 0x0, odd sizes.
SQUARE = [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1), (0, 3, 3), (0, 0), (2, 0, 0), (17, 17)]
RECT = [(5, 3), (3, 5), (2, 4, 6), (2, 6, 4), (1, 1), (0, 4, 3), (1, 7)]


def spd(rng, shape):
    """Well-conditioned symmetric positive-definite matrices."""
    a = random(rng, shape, F32, -1, 1)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=F32)).astype(F32)


def well_conditioned(rng, shape):
    n = shape[-1]
    return (random(rng, shape, F32, -1, 1) + 2 * n * np.eye(n, dtype=F32)).astype(F32)


def close(got, want, tol=2e-4):
    assert isinstance(got, pm.Array)
    assert got.dtype == F32 or got.dtype == np.asarray(want).dtype, got.dtype
    assert_same(got, np.asarray(want), rtol=tol, atol=tol)


def test_namespace():
    assert set(L.__all__) >= {
        "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
        "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
        "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"}
    assert all(callable(getattr(L, n)) for n in L.__all__ if n != "LinAlgError")


# ---- host decompositions ---------------------------------------------------------------

@pytest.mark.parametrize("shape", SQUARE, ids=str)
def test_det_slogdet_inv(dev, rng, shape):
    a = well_conditioned(rng, shape)
    x = pm.asarray(a)
    close(L.det(x), np.linalg.det(a), 1e-3)
    sign, logabs = L.slogdet(x)
    ws, wl = np.linalg.slogdet(a)
    close(sign, ws)
    close(logabs, wl)
    assert L.slogdet(x).logabsdet is not None and L.slogdet(x)._fields == ("sign", "logabsdet")
    close(L.inv(x), np.linalg.inv(a))


@pytest.mark.parametrize("shape", SQUARE, ids=str)
def test_cholesky_eigh(dev, rng, shape):
    a = spd(rng, shape)
    x = pm.asarray(a)
    low = L.cholesky(x)
    close(low, np.linalg.cholesky(a), 1e-3)
    close(L.cholesky(x, upper=True), np.swapaxes(np.linalg.cholesky(a), -1, -2), 1e-3)
    w, v = L.eigh(x)
    ww, _ = np.linalg.eigh(a)
    close(w, ww, 1e-3)
    # Eigenvectors are defined up to sign: check the decomposition itself.
    vn = v.numpy()
    close(pm.asarray(vn @ (w.numpy()[..., None] * np.swapaxes(vn, -1, -2))), a, 1e-3 * max(shape[-1], 1))
    close(L.eigvalsh(x), ww, 1e-3)


@pytest.mark.parametrize("shape", RECT + SQUARE[:3], ids=str)
def test_svd_qr_pinv_rank(dev, rng, shape):
    a = random(rng, shape, F32, -1, 1)
    x = pm.asarray(a)
    for full in (True, False):
        u, s, vh = L.svd(x, full_matrices=full)
        wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
        assert u.shape == wu.shape and vh.shape == wvh.shape
        close(s, ws, 1e-4)
        k = s.shape[-1]
        rec = (u.numpy()[..., :k] * s.numpy()[..., None, :]) @ vh.numpy()[..., :k, :]
        close(pm.asarray(rec), a, 1e-4)
    close(L.svdvals(x), np.linalg.svd(a, compute_uv=False), 1e-4)
    for mode in ("reduced", "complete"):
        q, r = L.qr(x, mode=mode)
        wq, wr = np.linalg.qr(a, mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape
        close(pm.asarray(q.numpy() @ r.numpy()), a, 1e-4)
        assert np.allclose(np.triu(r.numpy()), r.numpy())
    close(L.pinv(x), np.linalg.pinv(a, rcond=max(shape[-2:]) * np.finfo(F32).eps), 1e-3)
    assert_same(L.matrix_rank(x), np.linalg.matrix_rank(a).astype(np.int64) if a.size
                else np.zeros(shape[:-2], np.int64), dtype=np.int64)


def test_rank_pinv_ill_conditioned(dev, rng):
    # Rank 3 matrices of size 6x5 (a product of thin factors): a default rtol sees 3.
    a = (random(rng, (4, 6, 3), F32, -1, 1) @ random(rng, (4, 3, 5), F32, -1, 1)).astype(F32)
    x = pm.asarray(a)
    assert_same(L.matrix_rank(x), np.full(4, 3, np.int64))
    assert_same(L.matrix_rank(x, rtol=0.99), np.ones(4, np.int64))
    rtol = np.array([0.0, 0.99, 1e-3, 2.0], F32)  # one per matrix
    sv = np.linalg.svd(a, compute_uv=False)
    want = np.count_nonzero(sv > rtol[:, None] * sv[:, :1], axis=-1)
    assert list(want[1:]) == [1, 3, 0]
    assert_same(L.matrix_rank(x, rtol=pm.asarray(rtol)), want.astype(np.int64))
    p = L.pinv(x).numpy()
    np.testing.assert_allclose(a @ p @ a, a, atol=1e-4)
    # Nearly singular: solve still gives the answer NumPy's float32 LAPACK gives.
    h = (1.0 / (np.arange(5)[:, None] + np.arange(5)[None, :] + 1)).astype(F32)  # Hilbert, cond ~ 5e5
    b = random(rng, (5,), F32)
    close(L.solve(pm.asarray(h), pm.asarray(b)), np.linalg.solve(h, b), 1e-6 * 5e5)


def test_solve_shapes(dev, rng):
    a = well_conditioned(rng, (3, 4, 4))
    x = pm.asarray(a)
    for bshape in [(4,), (4, 2), (3, 4, 2), (2, 1, 4, 3), (4, 0)]:
        b = random(rng, bshape, F32)
        if len(bshape) == 1:
            want = np.linalg.solve(a, b[:, None])[..., 0]
        else:
            want = np.linalg.solve(a, b) if len(bshape) >= 3 else np.linalg.solve(a, np.broadcast_to(b, (3,) + bshape))
        close(L.solve(x, pm.asarray(b)), want, 1e-4)
    with pytest.raises(ValueError, match="does not match"):
        L.solve(x, pm.asarray(random(rng, (5,), F32)))


def test_dtypes(dev, rng):
    a = well_conditioned(rng, (3, 3))
    for dt, want in [(np.float16, np.float16), (BF16, BF16), (np.int32, F32), (np.int64, F32), (np.bool_, F32)]:
        src = a.astype(dt) if dt != np.bool_ else np.eye(3, dtype=bool)
        x = pm.asarray(src)
        for f in (L.inv, L.det, L.svdvals, L.pinv):
            r = f(x)
            assert r.dtype == np.dtype(want), (f.__name__, dt, r.dtype)
            assert_same(r, f(pm.asarray(src.astype(F32))).numpy().astype(want), rtol=1e-2, atol=1e-2)
        assert L.vector_norm(x).dtype == np.dtype(want)
        assert L.matrix_norm(x).dtype == np.dtype(want)
    # Nothing float64 leaks out of any function on float32 input.
    x = pm.asarray(a)
    outs = [L.det(x), L.inv(x), *L.slogdet(x), *L.eigh(x + x.T), *L.svd(x), *L.qr(x), L.pinv(x), L.svdvals(x),
            L.matrix_norm(x, ord=2), L.vector_norm(x), L.trace(x), L.solve(x, x), L.matrix_power(x, -2)]
    assert all(o.dtype == F32 for o in outs)


@pytest.mark.parametrize("f", ["det", "slogdet", "inv", "cholesky", "eigh", "eigvalsh"])
def test_errors_square(dev, rng, f):
    with pytest.raises(ValueError, match="square"):
        getattr(L, f)(pm.asarray(random(rng, (3, 4), F32)))
    with pytest.raises(ValueError, match="2 dimensions"):
        getattr(L, f)(pm.asarray(random(rng, (4,), F32)))


def test_errors(dev, rng):
    sing = pm.asarray(np.ones((3, 3), F32))
    with pytest.raises(L.LinAlgError):
        L.inv(sing)
    with pytest.raises(L.LinAlgError):
        L.solve(sing, pm.ones(3))
    with pytest.raises(L.LinAlgError):
        L.cholesky(pm.asarray(-np.eye(3, dtype=F32)))
    with pytest.raises(ValueError, match="mode"):
        L.qr(sing, mode="raw")
    with pytest.raises(ValueError, match="ord"):
        L.matrix_norm(sing, ord=3)
    with pytest.raises(ValueError, match="ord"):
        L.vector_norm(sing, ord="fro")
    with pytest.raises(ValueError, match="square"):
        L.matrix_power(pm.ones((2, 3)), 2)
    with pytest.raises(TypeError, match="integer"):
        L.matrix_power(sing, 1.5)
    with pytest.raises(ValueError, match="size 3"):
        L.cross(pm.ones((4, 2)), pm.ones((4, 2)))
    with pytest.raises(ValueError, match="differ in length"):
        L.vecdot(pm.ones((4, 3)), pm.ones((4, 1)))
    with pytest.raises(ValueError, match="1-D"):
        L.outer(pm.ones((2, 2)), pm.ones(2))
    assert float(L.det(sing)) == pytest.approx(0.0, abs=1e-6)


# ---- kernels and views -----------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 6), (2, 6, 4), (1, 1), (0, 3, 3), (3, 0), (2, 33, 65)], ids=str)
def test_diagonal_trace(dev, rng, shape):
    a = random(rng, shape, F32)
    x = pm.asarray(a)
    for k in (0, 1, -1, 2, -3, 70, -70):
        d = L.diagonal(x, offset=k)
        assert_same(d, np.diagonal(a, k, -2, -1))
        assert d._buf is x._buf  # a view
        close(L.trace(x, offset=k), np.trace(a, k, -2, -1), 1e-4)
    ai = random(rng, shape, np.int32)
    assert_same(L.trace(pm.asarray(ai)), np.trace(ai, 0, -2, -1).astype(np.int64), dtype=np.int64)
    assert_same(L.trace(pm.asarray(ai), dtype=np.int32), np.trace(ai, 0, -2, -1), dtype=np.int32)
    assert_same(L.diagonal(x.mT), np.diagonal(np.swapaxes(a, -1, -2), 0, -2, -1))


def test_cross(dev, rng):
    for sa, sb, axis in [((3,), (3,), -1), ((5, 3), (3,), -1), ((4, 1, 3), (2, 3), -1), ((3, 4), (3, 4), 0),
                         ((2, 3, 5), (1, 3, 5), -2), ((0, 3), (3,), -1)]:
        a, b = random(rng, sa, F32), random(rng, sb, F32)
        close(L.cross(pm.asarray(a), pm.asarray(b), axis=axis), np.cross(a, b, axis=axis), 1e-4)
    ai, bi = random(rng, (6, 3), np.int32), random(rng, (6, 3), np.int8)
    assert_same(L.cross(pm.asarray(ai), pm.asarray(bi)), np.cross(ai, bi), dtype=np.int32)
    with pytest.raises(ValueError, match="size 3"):  # axis -2 exists only in the broadcast shape
        L.cross(pm.ones(3), pm.ones((3, 3)), axis=-2)


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5), (0,), (2, 0), (1,), (1000,)], ids=str)
def test_vector_norm(dev, rng, shape):
    a = random(rng, shape, F32)
    a[a < -5] = 0  # zeros for ord=0
    x = pm.asarray(a)
    nd = len(shape)
    axes = [None, -1, 0] + ([(0, 1), (-1, 0)] if nd >= 2 else [])
    for ord in (2, 1, 0, 3, 0.5, -1.5, math.inf, -math.inf):
        for axis in axes:
            for keepdims in (False, True):
                empty = a.size == 0 or (axis is not None and 0 in np.asarray(shape)[list(np.atleast_1d(axis))])
                if empty and (ord == -math.inf or ord == math.inf or ord < 0):
                    continue  # no identity: NumPy raises too
                with np.errstate(divide="ignore"):  # NumPy's 0 ** negative on the way to 0
                    want = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
                close(L.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord), np.asarray(want, F32), 3e-5)


def test_norms_large(dev, rng):
    a = random(rng, (3, 513, 1031), F32, -1, 1)
    x = pm.asarray(a)
    close(L.vector_norm(x), np.linalg.vector_norm(a), 1e-5)
    close(L.vector_norm(x, axis=(0, 2), ord=1), np.linalg.vector_norm(a, axis=(0, 2), ord=1), 1e-5)
    for ord in ("fro", 1, -math.inf, math.inf):  # (2 and "nuc" are LAPACK SVDs: tested on small sizes)
        close(L.matrix_norm(x, ord=ord), np.linalg.matrix_norm(a, ord=ord), 1e-5)
    close(L.trace(x, offset=-3), np.trace(a, -3, -2, -1), 1e-4)
    close(L.vecdot(x, x, axis=-2), np.sum(a * a, axis=-2), 1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 6, 3), (1, 1), (2, 3, 33, 17)], ids=str)
def test_matrix_norm(dev, rng, shape):
    a = random(rng, shape, F32)
    x = pm.asarray(a)
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        for keepdims in (False, True):
            want = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
            close(L.matrix_norm(x, ord=ord, keepdims=keepdims), np.asarray(want, F32), 3e-5)
    assert_same(L.matrix_norm(pm.zeros((2, 0, 3))), np.zeros(2, F32))


def test_matrix_power(dev, rng):
    a = well_conditioned(rng, (2, 4, 4)) / 8
    x = pm.asarray(a.astype(F32))
    for n in (0, 1, 2, 3, 5, 8, -1, -3):
        close(L.matrix_power(x, n), np.linalg.matrix_power(a, n), 1e-4)
    r = L.matrix_power(x, 1)
    assert r._buf is not x._buf  # a new array, not the input
    ai = random(rng, (3, 3), np.int32, -2, 3)
    assert_same(L.matrix_power(pm.asarray(ai), 3), np.linalg.matrix_power(ai, 3), dtype=np.int32)
    close(L.matrix_power(pm.zeros((0, 2, 2)), 3), np.zeros((0, 2, 2), F32))


def test_products(dev, rng):
    a, b = random(rng, (2, 3, 4), F32), random(rng, (4, 5), F32)
    x, y = pm.asarray(a), pm.asarray(b)
    close(L.matmul(x, y), a @ b, 1e-4)
    close(L.tensordot(x, y, axes=1), np.tensordot(a, b, axes=1), 1e-4)
    close(L.tensordot(x, pm.asarray(a), axes=([1, 2], [1, 2])), np.tensordot(a, a, axes=([1, 2], [1, 2])), 1e-4)
    close(L.outer(x[0, 0], y[0]), np.outer(a[0, 0], b[0]))
    v, w = random(rng, (5, 1, 4), F32), random(rng, (3, 4), F32)
    close(L.vecdot(pm.asarray(v), pm.asarray(w)), np.sum(v * w, axis=-1), 1e-5)
    close(L.vecdot(pm.asarray(a), pm.asarray(a), axis=1), np.sum(a * a, axis=1), 1e-5)
    close(L.vecdot(pm.asarray(a), pm.asarray(a[0]), axis=-2), np.sum(a * a[0], axis=-2), 1e-5)
    assert_same(L.matrix_transpose(x), np.swapaxes(a, -1, -2))
    # Integer vecdot keeps the operands' type; tensordot with empty and contracted-away dimensions.
    vi = random(rng, (4, 5), np.int32)
    assert_same(L.vecdot(pm.asarray(vi), pm.asarray(vi)), np.sum(vi * vi, axis=-1), dtype=np.int32)
    assert_same(L.vecdot(pm.asarray(vi.astype(np.float16)), pm.asarray(vi.astype(np.float16))).astype(pm.float32),
                np.sum(vi * vi, axis=-1).astype(F32), rtol=2e-3)
    for sa, sb, axes in [((0, 3), (3, 2), 1), ((2, 0), (0, 4), 1), ((2, 3), (4,), 0), ((2, 0, 3), (3, 0), ([2, 1], [0, 1])),
                         ((2, 3, 4), (4, 3), ([-1, 1], [0, -1])), ((3,), (3,), 1)]:
        p, q = random(rng, sa, F32), random(rng, sb, F32)
        close(L.tensordot(pm.asarray(p), pm.asarray(q), axes=axes), np.tensordot(p, q, axes=axes), 1e-5)
    for axes in (3, ([0, 0], [0, 1]), ([0], [0, 1]), ([5], [0])):
        with pytest.raises((ValueError, IndexError)):
            L.tensordot(x, y, axes=axes)
