"""Shaders/matmul.metal through pymetal.arrays.kernels.matmul, against NumPy."""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels.matmul import matmul
from kernels_util import DTYPES, FLOATS, IDS, bfloat16, device_copy, empty, host, huge, random, view_of

# Shapes (M, K, N): empty, size 1, K = 0, not multiples of the tiles (6 x 16 on
# the CPU variant, 32 x 32 x 16 on the GPU variant), exact multiples.
SHAPES = [(0, 3, 5), (4, 3, 0), (3, 0, 4), (1, 1, 1), (7, 13, 19), (6, 16, 16), (33, 17, 65), (64, 48, 32),
          (1, 37, 150), (130, 29, 1)]  # matrix-vector products (64 columns per thread)


def data(rng, shape, dtype):
    """Floats: small integers, whose float32 sums are exact (see check);
    integers: their whole range (products and sums wrap around)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype == bfloat16:
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return random(rng, shape, dtype)


def check(got, a, b):
    """got == a @ b: exactly for integers (NumPy's wrap-around) and for floats
    whose sums of products float32 holds exactly (the result must then be the
    exact one rounded once to the output type); else within the float32 error
    bound of K roundings plus one rounding of the result."""
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, np.matmul(a, b))
        return
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.matmul(a64, b64)
    bound = np.matmul(np.abs(a64), np.abs(b64))
    if np.all(a64 == np.round(a64)) and np.all(b64 == np.round(b64)) and np.all(bound < 2 ** 24):
        with np.errstate(over="ignore"):  # float16 overflows to inf, in the kernels too
            np.testing.assert_array_equal(got, want.astype(got.dtype))
        return
    out_eps = {np.dtype(np.float32): 2.0 ** -24, np.dtype(np.float16): 2.0 ** -11, bfloat16: 2.0 ** -8}[got.dtype]
    tol = bound * (a.shape[-1] * 2.0 ** -23 + out_eps) + 1e-30
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err <= tol), "max error %g (tolerance %g)" % (err.max(), tol.max())


def run(a_np, b_np, variant=None, a_view=None, b_view=None):
    """matmul of NumPy arrays (or of views of them given as (base, view) makers)."""
    a_base, a_host = device_copy(a_np)
    b_base, b_host = device_copy(b_np)
    a = a_base if a_view is None else view_of(a_base, a_host, a_view(a_host))
    b = b_base if b_view is None else view_of(b_base, b_host, b_view(b_host))
    A = a_host if a_view is None else a_view(a_host)
    B = b_host if b_view is None else b_view(b_host)
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    out = empty(batch + (A.shape[-2], B.shape[-1]), A.dtype)
    assert matmul(a, b, out, variant=variant) is out
    return host(out), A, B


def variants(dtype):
    return ["cpu", "gpu"] if dtype in FLOATS else ["cpu"]


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_shapes(dev, rng, dtype, shape):
    M, K, N = shape
    a, b = data(rng, (M, K), dtype), data(rng, (K, N), dtype)
    for variant in variants(dtype):
        got, A, B = run(a, b, variant)
        assert got.shape == (M, N)
        check(got, A, B)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_matmul_transposed_and_broadcast(dev, rng, dtype):
    # a.T @ b.T with batches: a stored (3, K, M), b stored (N, K) broadcast over the batch.
    M, K, N = 21, 35, 18
    at, bt = data(rng, (3, K, M), dtype), data(rng, (N, K), dtype)
    for variant in variants(dtype):
        got, A, B = run(at, bt, variant, a_view=lambda x: x.transpose(0, 2, 1),
                        b_view=lambda x: np.broadcast_to(x.T, (3, K, N)))
        assert got.shape == (3, M, N)
        check(got, A, B)


@pytest.mark.parametrize("variant", ["cpu", "gpu"])
def test_matmul_batches(dev, rng, variant):
    # Five batch dims (more than the kernel's four: the glue loops over the
    # leading ones), broadcast in a and in b, a sliced (non-contiguous) batch dim.
    a = data(rng, (2, 1, 3, 2, 5, 9, 7), np.float32)
    b = data(rng, (1, 2, 3, 3, 1, 7, 10), np.float32)
    got, A, B = run(a, b, variant,
                    a_view=lambda x: np.broadcast_to(x, (2, 2, 3, 2, 5, 9, 7))[:, :, :, :, ::2],
                    b_view=lambda x: np.broadcast_to(x, (2, 2, 3, 3, 2, 7, 10)).transpose(0, 1, 2, 4, 3, 5, 6))
    assert got.shape == (2, 2, 3, 2, 3, 9, 10)
    check(got, A, B)


def test_matmul_integer_wraparound(dev, rng):
    # Products and sums overflow: the result wraps like NumPy's.
    for dtype in (np.int8, np.uint8, np.int32, np.int64, np.uint64):
        a = random(rng, (5, 300), dtype)
        b = random(rng, (300, 4), dtype)
        got, A, B = run(a, b)
        np.testing.assert_array_equal(got, np.matmul(A, B))


def test_matmul_large(dev, rng):
    a, b = random(rng, (1000, 1000), np.float32), random(rng, (1000, 1000), np.float32)
    got, A, B = run(a, b, "cpu")
    check(got, A, B)
    a, b = random(rng, (150, 200), np.float16), random(rng, (200, 170), np.float16)
    got, A, B = run(a, b, "gpu")
    check(got, A, B)


def test_matmul_default_variant(dev, rng):
    a, b = random(rng, (9, 8), np.float32), random(rng, (8, 11), np.float32)
    got, A, B = run(a, b)
    check(got, A, B)


def test_matmul_errors(dev, rng):
    a_base, a_host = device_copy(random(rng, (4, 6, 5), np.float32))
    b_base, _ = device_copy(random(rng, (5, 3), np.float32))
    a = view_of(a_base, a_host, a_host[0])  # (6, 5)
    out = pm.empty((6, 3), np.float32)
    # No unit stride in the matrix dims (every other column): the caller has to copy.
    strided = view_of(a_base, a_host, a_host[:, 0, ::2].T)  # (3, 4), strides (2, 30) elements
    with pytest.raises(ValueError, match="needs a copy"):
        matmul(strided, view_of(b_base, b_base.numpy(), b_base.numpy()[:4]), pm.empty((3, 3), np.float32))
    with pytest.raises(TypeError, match="one dtype"):
        matmul(a, b_base, pm.empty((6, 3), np.float16))
    with pytest.raises(ValueError, match="do not match"):
        matmul(a, b_base, pm.empty((6, 4), np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        matmul(a_base, b_base, out)
    o_base, o_host = device_copy(np.zeros((3, 6), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        matmul(a, b_base, view_of(o_base, o_host, o_host.T))
    with pytest.raises(ValueError, match="variant"):
        matmul(a, b_base, out, variant="tpu")
    i_base, _ = device_copy(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="gpu"):
        matmul(i_base, i_base, pm.empty((2, 2), np.int32), variant="gpu")
    with pytest.raises(ValueError, match="2\\*\\*31"):
        matmul(huge((1 << 31, 1), np.float32), huge((1, 1), np.float32), huge((1 << 31, 1), np.float32))


def test_matmul_back_to_back(dev, rng):
    # Asynchronous calls reuse the glue's packing buffers: each must see its own data.
    pairs = [(random(rng, (m, k), np.float32), random(rng, (k, n), np.float32))
             for m, k, n in ((40, 30, 20), (7, 90, 33), (64, 64, 64), (5, 3, 2))]
    outs = []
    for a_np, b_np in pairs:
        a, _ = device_copy(a_np)
        b, _ = device_copy(b_np)
        outs.append(matmul(a, b, pm.empty((a_np.shape[0], b_np.shape[1]), np.float32), variant="cpu"))
    for out, (a_np, b_np) in zip(outs, pairs):
        check(host(out), a_np, b_np)


@pytest.mark.parametrize("variant", ["cpu", "gpu"])
def test_matmul_vectors_and_empty_batch(dev, rng, variant):
    # A single row / column may have any stride: it is never stepped over.
    a, b = random(rng, (3, 40), np.float32), random(rng, (20, 5), np.float32)
    got, A, B = run(a, b, variant, a_view=lambda x: x[1:2, ::2], b_view=lambda x: x[:, 3:4])
    assert got.shape == (1, 1)
    check(got, A, B)
    got, A, B = run(b, a, variant, a_view=lambda x: x[::4, 2:4].T, b_view=lambda x: x[0:1, :20:4].T)
    assert got.shape == (2, 1)
    check(got, A, B)
    # No batch elements at all.
    got, A, B = run(random(rng, (0, 3, 4), np.float32), random(rng, (0, 4, 5), np.float32), variant)
    assert got.shape == (0, 3, 5)


@pytest.mark.parametrize("a_t", [False, True], ids=["a", "aT"])
@pytest.mark.parametrize("b_t", [False, True], ids=["b", "bT"])
def test_matmul_vector_layouts(dev, rng, a_t, b_t):
    # Matrix-vector products read the operands in place, along either unit
    # stride; batched, with a broadcast operand.
    for M, K, N in ((1, 70, 200), (200, 70, 1), (1, 5, 64), (64, 9, 1)):
        for dtype in (np.float32, np.int16):
            a = data(rng, (2, K, M) if a_t else (2, M, K), dtype)
            b = data(rng, (N, K) if b_t else (K, N), dtype)
            got, A, B = run(a, b, "cpu", a_view=(lambda x: x.transpose(0, 2, 1)) if a_t else None,
                            b_view=lambda x: np.broadcast_to(x.T if b_t else x, (2, K, N)))
            check(got, A, B)
