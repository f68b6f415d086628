"""pm.fuse's two kernel shapes for row reductions, both against NumPy.

The CPU shape (a thread per row) is what the CPU backend picks; the GPU shape (a
threadgroup per row: coalesced strides, SIMD-group shuffles, threadgroup memory and
barriers; arrays/fusion_gpu.py) is what a Metal GPU picks. reduce.GPU_SHAPES forces the
GPU shape here: the CPU backend runs MSL threadgroups as a GPU does, so it runs and
must give the same values.

Tolerances against NumPy in float64: float32 sums 1e-5 relative to the sum of |x| (the
two shapes add in other orders than NumPy's pairwise sum), float16/bfloat16 results
one rounding of their dtype; max/min, integer and bool reductions are exact.
"""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import fusion as _fusion
from pymetal.arrays import fusion_gpu as _gpu
from arraytest import BF16, random

SHAPES = [(1, 1), (3, 7), (5, 33), (2, 255), (2, 256), (2, 257), (3, 1025), (2, 5000), (2, 3, 40), (33, 5)]


@pytest.fixture(params=[False, True], ids=["cpu_shape", "gpu_shape"])
def shape_kind(request, monkeypatch, dev):
    """Runs the test with the CPU or the GPU kernel shape; records the fused kernels' MSL."""
    monkeypatch.setattr(pm.arrays.reduce, "GPU_SHAPES", request.param)
    sources = []
    real = _fusion._kernel
    monkeypatch.setattr(_fusion, "_kernel", lambda src, device: sources.append(src) or real(src, device))
    return request.param, sources


def _check_shape(kind, sources):
    gpu, srcs = kind
    assert srcs, "no fused kernel was built"
    assert all(("threadgroup_barrier" in s) == gpu for s in srcs)


def _rows(x):
    m = pm.mean(x, axis=-1, keepdims=True)
    return (x - m, pm.sum(x, axis=-1), pm.max(x, axis=-1, keepdims=True), pm.min(x, axis=-1),
            pm.std(x, axis=-1), pm.logsumexp(x, axis=-1))


def _rows_np(a):
    f = a.astype(np.float64)
    m = f.mean(-1, keepdims=True)
    mx = f.max(-1, keepdims=True)
    lse = (np.log(np.exp(f - mx).sum(-1, keepdims=True)) + mx)[..., 0]
    return (f - m, f.sum(-1), mx, f.min(-1), f.std(-1), lse)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), BF16], ids=str)
def test_row_reductions_against_numpy(shape_kind, dt, shape):
    rng = np.random.default_rng(sum(shape))
    a = random(rng, shape, dt, -4, 6)
    got = pm.fuse(_rows)(pm.asarray(a))
    want = _rows_np(a)
    scale = np.abs(a.astype(np.float64)).sum(-1)
    tol = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2.0 ** -10, BF16: 2.0 ** -7}[dt]
    names = ["x - mean", "sum", "max", "min", "std", "logsumexp"]
    for name, g, w in zip(names, got, want):
        assert g.shape == w.shape, name
        g = g.numpy().astype(np.float64)
        if name in ("max", "min"):
            np.testing.assert_array_equal(g, w.astype(dt).astype(np.float64), err_msg=name)
        elif name == "sum":  # float32 accumulation, then one rounding to dt
            np.testing.assert_allclose(g, w, rtol=tol, atol=1e-6 * scale.max() + tol, err_msg=name)
        else:
            np.testing.assert_allclose(g, w, rtol=2 * tol, atol=2 * tol + 1e-6, err_msg=name)
    _check_shape(shape_kind, shape_kind[1])


@pytest.mark.parametrize("shape", [(3, 7), (2, 300), (4, 1025)], ids=str)
def test_integer_bool_and_complex_rows(shape_kind, shape):
    rng = np.random.default_rng(3)
    i = rng.integers(-1000, 1000, shape).astype(np.int32)
    b = rng.random(shape) > 0.3
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    s, mx, pr = pm.fuse(lambda i: (pm.sum(i, axis=-1), pm.max(i, axis=-1), pm.prod(i % 3 + 1, axis=-1)))(pm.asarray(i))
    np.testing.assert_array_equal(s.numpy(), i.astype(np.int64).sum(-1))  # int64 accumulator
    np.testing.assert_array_equal(mx.numpy(), i.max(-1))
    np.testing.assert_array_equal(pr.numpy(), np.prod((i % 3 + 1).astype(np.int64), axis=-1))
    al, an = pm.fuse(lambda b: (pm.all(b, axis=-1), pm.any(~b, axis=-1)))(pm.asarray(b))
    np.testing.assert_array_equal(al.numpy(), b.all(-1))
    np.testing.assert_array_equal(an.numpy(), (~b).any(-1))
    zs = pm.fuse(lambda z: pm.sum(z * z, axis=-1))(pm.asarray(z))
    want = (z.astype(np.complex128) ** 2).sum(-1)
    np.testing.assert_allclose(zs.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(z).sum(-1).max() ** 2)
    _check_shape(shape_kind, shape_kind[1])


def test_nan_inf_and_float_products(shape_kind):
    a = np.array([[1.0, np.nan, 2.0] + [0.5] * 40, [np.inf, 1.0, -2.0] + [0.5] * 40,
                  [0.0, 1e30, 1e30] + [1e30] * 40], np.float32)
    mx, s, p = pm.fuse(lambda x: (pm.max(x, axis=-1), pm.sum(x, axis=-1), pm.prod(x, axis=-1)))(pm.asarray(a))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(mx.numpy(), a.max(-1))
        np.testing.assert_array_equal(np.isnan(s.numpy()), np.isnan(a.sum(-1)))
        # a zero and an overflow in two threads' parts combine to 0, as NumPy's serial product (not NaN)
        np.testing.assert_array_equal(p.numpy()[[0, 2]], np.array([np.nan, 0.0], np.float32))
    _check_shape(shape_kind, shape_kind[1])


def test_several_levels_and_two_trailing_axes(shape_kind):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 6, 50)).astype(np.float32)
    w = rng.standard_normal((6, 50)).astype(np.float32)

    def f(x, w):
        m = pm.mean(x, axis=(-2, -1), keepdims=True)
        v = pm.var(x, axis=(-2, -1), keepdims=True)  # three levels: the mean, max |x - m|, the scaled squares
        return (x - m) / pm.sqrt(v + 1e-5) * w, pm.max(pm.abs(x - m), axis=(-2, -1))
    y, d = pm.fuse(f)(pm.asarray(a), pm.asarray(w))
    g = a.astype(np.float64)
    m = g.mean((1, 2), keepdims=True)
    np.testing.assert_allclose(y.numpy(), (g - m) / np.sqrt(g.var((1, 2), keepdims=True) + 1e-5) * w,
                               rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(d.numpy(), np.abs(g - m).max((1, 2)), rtol=2e-6)
    _check_shape(shape_kind, shape_kind[1])


@pytest.mark.parametrize("shape", [(0, 5), (4, 0), (0,)], ids=str)
def test_empty(shape_kind, shape):
    a = np.zeros(shape, np.float32)
    s, y = pm.fuse(lambda x: (pm.sum(x, axis=-1), x - pm.mean(x, axis=-1, keepdims=True)))(pm.asarray(a))
    assert s.shape == shape[:-1] and y.shape == shape
    np.testing.assert_array_equal(s.numpy(), np.zeros(shape[:-1], np.float32))


@pytest.mark.parametrize("shape", [(3, 7), (5, 300), (2, 4096), (2, 3, 33)], ids=str)
def test_nn_functions_in_both_shapes(shape_kind, shape):
    rng = np.random.default_rng(11)
    a = rng.standard_normal(shape).astype(np.float32) * 3
    w, b = rng.standard_normal(shape[-1]).astype(np.float32), rng.standard_normal(shape[-1]).astype(np.float32)
    x = pm.asarray(a)
    f = a.astype(np.float64)
    d = f - f.mean(-1, keepdims=True)
    np.testing.assert_allclose(pm.nn.layer_norm(x, pm.asarray(w), pm.asarray(b)).numpy(),
                               d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * w + b, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(pm.nn.rms_norm(x, pm.asarray(w)).numpy(),
                               f / np.sqrt((f * f).mean(-1, keepdims=True) + 1e-6) * w, rtol=2e-5, atol=2e-5)
    e = np.exp(f - f.max(-1, keepdims=True))
    np.testing.assert_allclose(pm.nn.softmax(x).numpy(), e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-9)


def test_threads_per_row():
    assert [_gpu.tg_size(n) for n in (0, 1, 7, 32, 33, 100, 256, 257, 10 ** 6)] == \
        [32, 32, 32, 32, 64, 128, 256, 256, 256]
    assert (_gpu.fit(256, 1024), _gpu.fit(256, 192), _gpu.fit(64, 32), _gpu.fit(32, 16)) == (256, 128, 32, 32)


def test_a_lower_threadgroup_limit_gives_the_same_values(shape_kind, monkeypatch):
    # a kernel that the GPU allows fewer threads per threadgroup (its registers) runs with fewer
    monkeypatch.setattr(_gpu, "fit", lambda tg, limit: min(tg, 64))
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 1000)).astype(np.float32)
    s, y = pm.fuse(lambda x: (pm.max(x, axis=-1), x - pm.mean(x, axis=-1, keepdims=True)))(pm.asarray(a))
    np.testing.assert_array_equal(s.numpy(), a.max(-1))
    np.testing.assert_allclose(y.numpy(), a - a.astype(np.float64).mean(-1, keepdims=True), rtol=1e-5, atol=1e-6)
