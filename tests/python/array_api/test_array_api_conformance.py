"""Regressions found by running the data-apis array-api-tests suite against pymetal
(scripts/array_api_tests.sh; CI here cannot fetch the suite). Each test checks the
standard's (2024.12) rule against NumPy on random data."""

import numpy as np
import pytest

import pymetal as pm
from arraytest import ALL, INTS, assert_same, dtype_id, random

SHAPES = [(), (1,), (5,), (3, 4), (2, 0, 3)]


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("rdtype", INTS, ids=dtype_id)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_repeat_array_counts(shape, rdtype, axis):
    # repeats of shape (1,) broadcast to the axis length (the standard); any integer
    # dtype, uint64 included
    rng = np.random.default_rng(0)
    x = random(rng, shape, np.float32)
    n = x.size if axis is None else shape[axis]
    for counts in (np.array([3], dtype=rdtype), random(rng, (n,), rdtype, 0, 4)):
        got = pm.repeat(pm.asarray(x), pm.asarray(counts), axis=axis)
        assert_same(got, np.repeat(x, np.broadcast_to(counts, (n,)).astype(np.int64), axis=axis))


def test_repeat_bad_counts():
    x = pm.asarray(np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError):
        pm.repeat(x, pm.asarray(np.array([1, 2], dtype=np.int32)))  # neither (1,) nor (4,)
    with pytest.raises(ValueError):
        pm.repeat(x, pm.asarray(np.array([1, -1, 1, 1], dtype=np.int32)))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=dtype_id)
@pytest.mark.parametrize("mask", [True, False])
def test_zero_dim_boolean_mask(shape, dtype, mask):
    # x[0-d mask] has shape (1,) + x.shape if the mask is True, (0,) + x.shape if False
    rng = np.random.default_rng(1)
    x = np.asarray(random(rng, shape, dtype))
    got = pm.asarray(x)[pm.asarray(mask)]
    assert_same(got, x[np.asarray(mask)])
    y = pm.asarray(x)
    y[pm.asarray(mask)] = 1
    want = x.copy()
    want[np.asarray(mask)] = 1
    assert_same(y, want)


# complex64 inverse functions far from the origin: asinh/acosh/acos/asin squared |z| and
# log1p summed |1+z|^2, which overflow float past ~1e19 (NumPy's results are finite)
BIG_COMPLEX = np.array([1 + 1.3043818701608976e19j, -3e19 + 2e19j, 2e38 + 1e38j, -1e20 - 1e-3j,
                        1e10 - 1e10j, 0.5 + 0.25j, -1e-8 + 1e-8j, 3.0 - 0.0j], dtype=np.complex64)


@pytest.mark.parametrize("name, npname", [("acos", "arccos"), ("asin", "arcsin"), ("asinh", "arcsinh"),
                                          ("acosh", "arccosh"), ("log1p", "log1p")])
def test_complex_inverse_functions_large_values(name, npname):
    got = getattr(pm, name)(pm.asarray(BIG_COMPLEX))
    assert_same(got, getattr(np, npname)(BIG_COMPLEX), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("args", [(5,), (0, 1, 1), (-3, 7, 2), (2, 2), (4.0, -1.5, -0.5)], ids=str)
def test_arange_complex64(args):
    # real values in a complex64 array, as NumPy (there was no complex range kernel)
    assert_same(pm.arange(*args, dtype=pm.complex64), np.arange(*args, dtype=np.complex64), dtype=np.complex64)


def _complex_matrices(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)], ids=str)
def test_linalg_complex64(shape):
    # the host decompositions took complex64 as float32 (dropping the imaginary parts) and
    # norms summed x*x: now complex64 in, complex64 (or the standard's real float32) out
    rng = np.random.default_rng(2)
    a = _complex_matrices(rng, shape)
    n = shape[-1]
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=np.complex64)  # Hermitian positive definite
    x, hx, tol = pm.asarray(a), pm.asarray(h), dict(rtol=1e-3, atol=1e-3)
    la = pm.linalg
    assert_same(la.cholesky(hx), np.linalg.cholesky(h), dtype=np.complex64, **tol)
    assert_same(la.inv(hx), np.linalg.inv(h), dtype=np.complex64, **tol)
    assert_same(la.det(hx), np.linalg.det(h), dtype=np.complex64, **tol)
    assert_same(la.solve(hx, x), np.linalg.solve(h, a), dtype=np.complex64, **tol)
    assert_same(la.matrix_power(hx, -2), np.linalg.matrix_power(h, -2), dtype=np.complex64, **tol)
    assert_same(la.svdvals(x), np.linalg.svd(a, compute_uv=False), dtype=np.float32, **tol)
    assert_same(la.eigvalsh(hx), np.linalg.eigvalsh(h), dtype=np.float32, **tol)
    sign, logabs = la.slogdet(hx)
    wsign, wlog = np.linalg.slogdet(h)
    assert_same(sign, wsign, dtype=np.complex64, **tol)
    assert_same(logabs, wlog, dtype=np.float32, **tol)
    u, s, vh = la.svd(x, full_matrices=False)
    assert (u.dtype, s.dtype, vh.dtype) == (np.complex64, np.float32, np.complex64)
    np.testing.assert_allclose((u.numpy() * s.numpy()[..., None, :]) @ vh.numpy(), a, **tol)
    q, r = la.qr(x)
    assert (q.dtype, r.dtype) == (np.complex64, np.complex64)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, **tol)
    if a.size:
        for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            assert_same(la.matrix_norm(x, ord=ord), np.linalg.norm(a, ord=ord, axis=(-2, -1)), dtype=np.float32, **tol)
        for ord in (2, 1, np.inf, 3):
            assert_same(la.vector_norm(x, ord=ord), np.linalg.norm(a.ravel(), ord=ord), dtype=np.float32, **tol)


@pytest.mark.parametrize("shape, key", [((2, 0, 0), 1), ((2, 0, 0), (-1, slice(None))), ((3, 0), (2, Ellipsis)),
                                        ((0, 4), (slice(None), 3)), ((2, 3, 0), (1, 2))], ids=str)
def test_index_into_empty_array(shape, key):
    # an integer index into an empty array moved the view's offset past the end of its
    # memory, and numpy() (so every host linalg function) refused the view
    x = np.zeros(shape, dtype=np.float32)
    got = pm.asarray(x)[key]
    assert_same(got, x[key])
    assert_same(pm.linalg.inv(pm.zeros((2, 0, 0), dtype=pm.float32)[1]), np.zeros((0, 0), np.float32))
