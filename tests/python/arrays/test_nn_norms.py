"""pm.nn.layer_norm and pm.nn.rms_norm against NumPy references computed in float64.

Tolerances per dtype: the inputs are the same values (a low-precision input is exact in
float64), so the differences are float32 accumulation plus the one rounding of the
result to its dtype: float32 2e-5 (rows up to 4096), float16 1e-3 (2 ulp of 2**-10),
bfloat16 8e-3 (2 ulp of 2**-7), relative to the result and absolute for values near 0.
"""

import numpy as np
import pytest

import pymetal as pm
from pymetal import nn_norms as _norms
from pymetal.arrays import float64
from pymetal.arrays import fusion as _fusion
from arraytest import BF16, random

TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float16): 1e-3, BF16: 8e-3}
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16]
SHAPES = [(7,), (1025,), (1, 1), (3, 1), (5, 7), (2, 1023), (3, 1025), (2, 4096), (2, 3, 33), (4, 3, 1)]


def ref_layer_norm(a, w=None, b=None, axes=(-1,), eps=1e-5):
    f = np.asarray(a).astype(np.float64)
    m = f.mean(axis=axes, keepdims=True)
    y = (f - m) / np.sqrt(((f - m) ** 2).mean(axis=axes, keepdims=True) + eps)
    return _affine(y, w, b, f.ndim, axes)


def ref_rms_norm(a, w=None, axes=(-1,), eps=1e-6):
    f = np.asarray(a).astype(np.float64)
    return _affine(f / np.sqrt((f * f).mean(axis=axes, keepdims=True) + eps), w, None, f.ndim, axes)


def _affine(y, w, b, nd, axes):
    axes = sorted(a % nd for a in axes)
    shape = [y.shape[i] if i in axes else 1 for i in range(nd)]
    if w is not None:
        y = y * np.asarray(w).astype(np.float64).reshape(shape)
    if b is not None:
        y = y + np.asarray(b).astype(np.float64).reshape(shape)
    return y


def close(got, want, dt, tol=None):
    assert isinstance(got, pm.Array)
    assert got.dtype == dt, (got.dtype, dt)
    assert got.shape == want.shape
    tol = TOL[np.dtype(dt)] if tol is None else tol
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=tol, atol=tol)


def _params(rng, shape, dt, affine):
    d = shape[-1:]
    w = random(rng, d, dt, -2, 2) if affine else None
    b = random(rng, d, dt, -2, 2) if affine == "bias" else None
    return w, b


@pytest.mark.parametrize("affine", [None, "weight", "bias"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_layer_norm_matches_numpy(dev, rng, dt, shape, affine):
    a = random(rng, shape, dt, -3, 5)
    w, b = _params(rng, shape, dt, affine)
    got = pm.nn.layer_norm(pm.asarray(a), None if w is None else pm.asarray(w), None if b is None else pm.asarray(b))
    close(got, ref_layer_norm(a, w, b), dt)


@pytest.mark.parametrize("affine", [None, "weight"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_rms_norm_matches_numpy(dev, rng, dt, shape, affine):
    a = random(rng, shape, dt, -3, 5)
    w, _ = _params(rng, shape, dt, affine)
    got = pm.nn.rms_norm(pm.asarray(a), None if w is None else pm.asarray(w))
    close(got, ref_rms_norm(a, w), dt)


@pytest.mark.parametrize("fn", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("shape", [(0, 8), (4, 0), (2, 0, 3), (0,)], ids=str)
def test_empty_inputs_give_empty_results(dev, fn, shape):
    x = pm.asarray(np.zeros(shape, np.float16))
    w = pm.ones(shape[-1:], dtype=pm.float32)
    got = getattr(pm.nn, fn)(x, w)
    assert got.shape == shape and got.dtype == pm.float32 and got.numpy().size == 0
    with pytest.raises(ValueError, match="shape"):  # the weight is still checked
        getattr(pm.nn, fn)(x, pm.ones((shape[-1] + 1,)))


def test_eps_on_constant_rows(dev):
    a = np.array([[2.5] * 6, [-1.0] * 6, [0.0] * 6, [1.0, 2, 3, 4, 5, 6]], np.float32)
    x = pm.asarray(a)
    b = np.arange(6, dtype=np.float32)
    # variance 0: (x - mean) is exactly 0, so the result is the bias (eps only avoids 0/0)
    got = pm.nn.layer_norm(x, pm.ones(6), pm.asarray(b)).numpy()
    np.testing.assert_array_equal(got[:3], np.broadcast_to(b, (3, 6)))
    for eps in (1e-5, 0.5, 10.0):
        close(pm.nn.layer_norm(x, eps=eps), ref_layer_norm(a, eps=eps), np.float32)
        close(pm.nn.rms_norm(x, eps=eps), ref_rms_norm(a, eps=eps), np.float32)
    # eps = 0: a constant row is 0 / 0 (NaN), as in PyTorch; rms of a zero row too
    assert np.isnan(pm.nn.layer_norm(x, eps=0.0).numpy()[:3]).all()
    r = pm.nn.rms_norm(x, eps=0.0).numpy()
    assert np.isnan(r[2]).all() and np.isfinite(r[[0, 1, 3]]).all()
    # eps is one kernel parameter: a new value does not change the values of another
    np.testing.assert_array_equal(pm.nn.rms_norm(x, eps=1e-6).numpy(), pm.nn.rms_norm(x).numpy())


@pytest.mark.parametrize("axis, wshape", [(0, (4,)), ((0, 2), (4, 6)), ((-2, -1), (5, 6)), ((2, 0), (4, 6)),
                                          (1, (5,)), ((0, 1, 2), (4, 5, 6))])
def test_other_axes(dev, rng, axis, wshape):
    a = random(rng, (4, 5, 6), np.float32, -3, 3)
    w, b = random(rng, wshape, np.float32, -2, 2), random(rng, wshape, np.float32, -2, 2)
    axes = axis if isinstance(axis, tuple) else (axis,)
    x = pm.asarray(a)
    close(pm.nn.layer_norm(x, pm.asarray(w), pm.asarray(b), axis=axis), ref_layer_norm(a, w, b, axes), np.float32)
    close(pm.nn.rms_norm(x, pm.asarray(w), axis=axis), ref_rms_norm(a, w, axes), np.float32)
    close(pm.nn.layer_norm(x, axis=axis), ref_layer_norm(a, axes=axes), np.float32)


def test_non_contiguous_and_numpy_inputs(dev, rng):
    a = random(rng, (40, 33), np.float32, -3, 3)
    x = pm.asarray(a)
    close(pm.nn.layer_norm(x[::3, 1:]), ref_layer_norm(a[::3, 1:]), np.float32)
    close(pm.nn.rms_norm(x.T), ref_rms_norm(a.T), np.float32)
    w = random(rng, (33,), np.float16, -2, 2)
    close(pm.nn.layer_norm(a, w, [0.5] * 33), ref_layer_norm(a, w, [0.5] * 33), np.float32)  # NumPy and lists


@pytest.mark.parametrize("dt", [np.dtype(np.float32), BF16], ids=str)
def test_values_whose_squares_overflow_float32(dev, dt):
    # (x - mean)**2 and x**2 overflow float32 past ~1.8e19: the scaled second sum keeps them
    a = np.array([[1e20, -1e20, 3e19, 0.0], [1.0, 2.0, 4.0, 8.0], [-5e37, 1e37, 2e37, 0.0], [1e-30, -2e-30, 0, 5e-31]])
    a = a.astype(dt)
    x = pm.asarray(a)
    close(pm.nn.layer_norm(x), ref_layer_norm(a), dt)
    close(pm.nn.rms_norm(x), ref_rms_norm(a), dt)


def test_float16_extremes_need_no_scaled_sum(dev, rng):
    # float16 data (|x| <= 65504) cannot overflow float32 squares: the kernel skips the second sum
    a = (rng.choice([-1.0, 1.0], (3, 4096)) * 65504).astype(np.float16)
    a[1] = rng.uniform(-6e4, 6e4, 4096).astype(np.float16)
    x = pm.asarray(a)
    close(pm.nn.layer_norm(x), ref_layer_norm(a), np.float16)
    close(pm.nn.rms_norm(x), ref_rms_norm(a), np.float16)


def test_nan_and_inf_stay_in_their_row(dev):
    a = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0], [np.inf, 1.0, 2.0]], np.float32)
    for fn, ref in ((pm.nn.layer_norm, ref_layer_norm), (pm.nn.rms_norm, ref_rms_norm)):
        got = fn(pm.asarray(a)).numpy()
        assert np.isnan(got[0]).all()
        np.testing.assert_allclose(got[1], ref(a[1:2])[0], rtol=2e-5, atol=2e-5)
        with np.errstate(invalid="ignore"):
            want = ref(a[2:3])[0]
        np.testing.assert_array_equal(np.isnan(got[2]), np.isnan(want))


def test_mixed_dtypes_promote(dev, rng):
    a = random(rng, (3, 16), np.float16, -3, 3)
    w = random(rng, (16,), np.float32, -2, 2)
    close(pm.nn.rms_norm(pm.asarray(a), pm.asarray(w)), ref_rms_norm(a, w), np.float32)
    wb = random(rng, (16,), BF16, -2, 2)  # float16 with bfloat16: float32, as pm.result_type
    close(pm.nn.layer_norm(pm.asarray(a), pm.asarray(wb)), ref_layer_norm(a, wb), np.float32)


def test_float64_follows_the_policy(dev, rng, monkeypatch):
    a = rng.standard_normal((5, 9))
    w, b = rng.standard_normal(9), rng.standard_normal(9)
    got = pm.nn.layer_norm(pm.asarray(a), pm.asarray(w), pm.asarray(b))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), ref_layer_norm(a, w, b), rtol=1e-13, atol=1e-13)
    got = pm.nn.rms_norm(a.astype(np.float32), w)  # a float64 weight: float64
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), ref_rms_norm(a.astype(np.float32), w), rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="shape"):
        pm.nn.layer_norm(a, w[:3])
    old = pm.get_float64_policy()
    try:
        pm.set_float64_policy("downcast")
        monkeypatch.setattr(float64, "_warned", False)  # (it warns once per process: maybe already)
        with pytest.warns(UserWarning, match="downcast|float32"):
            got = pm.nn.rms_norm(pm.asarray(a.astype(np.float32)), w)
        assert got.dtype == np.float32
        close(got, ref_rms_norm(a.astype(np.float32), w.astype(np.float32)), np.float32)
        pm.set_float64_policy("error")
        with pytest.raises(TypeError, match="float64"):
            pm.nn.layer_norm(a)
    finally:
        pm.set_float64_policy(old)


@pytest.mark.parametrize("fn", ["layer_norm", "rms_norm"])
def test_bad_input_is_a_clear_error(dev, fn):
    f = getattr(pm.nn, fn)
    x = pm.ones((3, 4))
    with pytest.raises(TypeError, match="floating-point.*int32.*astype"):
        f(pm.asarray(np.arange(12, dtype=np.int32).reshape(3, 4)))
    with pytest.raises(TypeError, match="floating-point.*bool"):
        f(pm.asarray(np.ones((3, 4), bool)))
    with pytest.raises(TypeError, match="floating-point.*complex64"):
        f(pm.asarray(np.ones((3, 4), np.complex64)))
    with pytest.raises(TypeError, match="weight must be a floating-point"):
        f(x, pm.asarray([1, 2, 3, 4]))
    with pytest.raises(ValueError, match=r"weight has shape \(3,\).*\(4,\)"):
        f(x, pm.ones(3))
    with pytest.raises(ValueError, match=r"weight has shape \(1, 4\)"):  # no broadcasting of the parameters
        f(x, pm.ones((1, 4)))
    with pytest.raises(ValueError, match="0-d"):
        f(pm.asarray(1.5))
    with pytest.raises(ValueError, match="out of range"):
        f(x, axis=2)
    with pytest.raises(ValueError, match="twice"):
        f(x, axis=(1, -1))
    with pytest.raises(ValueError, match="no axis"):
        f(x, axis=())
    with pytest.raises(TypeError, match="axis must be"):
        f(x, axis=1.0)
    with pytest.raises(TypeError, match="eps must be"):
        f(x, eps="small")
    with pytest.raises(TypeError):  # eps is keyword-only, as in MLX
        f(x, None, None, 1)
    if fn == "layer_norm":
        with pytest.raises(ValueError, match=r"bias has shape \(5,\)"):
            f(x, pm.ones(4), pm.ones(5))


# ---- the fused kernel against the same composition unfused -------------------------------------
#
# The composition (_layer_norm_rows, _rms_norm_rows) run op by op is the reference of the
# fused kernel: bit-equal up to 512 elements per row (the library reduces such rows in
# one chunk, in the fused kernel's lane order); beyond, within 4 ulp for float32 (the
# library's chunked sums add in another order; rsqrt may differ by an ulp where clang
# vectorises one kernel and not the other), and 1 ulp of float16 / bfloat16 (a float32
# value that differs in its last bits can round to the neighbouring half value).
ULP = {np.dtype(np.float32): 4 * 2.0 ** -23, np.dtype(np.float16): 2.0 ** -10, BF16: 2.0 ** -7}

@pytest.mark.parametrize("gpu", [False, True], ids=["cpu_shape", "gpu_shape"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (64, 384), (2, 5, 33), (3, 1025), (2, 4096)], ids=str)
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_fused_equals_unfused(dev, rng, monkeypatch, dt, shape, gpu):
    # both kernel shapes (a thread per row as on a CPU, a threadgroup per row as on a GPU; the
    # library's unfused reductions take the same shape)
    monkeypatch.setattr(pm.arrays.reduce, "GPU_SHAPES", gpu)
    a = random(rng, shape, dt, -3, 5)
    w, b = (pm.asarray(random(rng, shape[-1:], dt, -2, 2)) for _ in range(2))
    x = pm.asarray(a)
    out = x.dtype
    fused, real = [], _norms._fused
    monkeypatch.setattr(_norms, "_fused", lambda f: fused.append(f) or real(f))
    for got, want in ((pm.nn.layer_norm(x, w, b), _norms._layer_norm_rows(x, w, b, 1e-5, 1, out)),
                      (pm.nn.layer_norm(x), _norms._layer_norm_rows(x, None, None, 1e-5, 1, out)),
                      (pm.nn.rms_norm(x, w), _norms._rms_norm_rows(x, w, 1e-6, 1, out))):
        assert got.dtype == want.dtype and got.shape == want.shape
        g, u = got.numpy().astype(np.float64), want.numpy().astype(np.float64)
        if shape[-1] <= 512:
            np.testing.assert_array_equal(g, u)
        else:
            np.testing.assert_allclose(g, u, rtol=ULP[dt], atol=1e-6)
    assert fused == [_norms._layer_norm_rows] * 2 + [_norms._rms_norm_rows]  # the calls ran the fused kernel


def test_inside_a_fused_function(dev, rng):
    a = random(rng, (6, 40), np.float32, -3, 3)
    w = pm.asarray(random(rng, (40,), np.float32, -2, 2))

    def block(x, w):
        return pm.nn.rms_norm(x, w) * 2.0 + pm.nn.layer_norm(x)
    got = pm.fuse(block)(pm.asarray(a), w)
    want = block(pm.asarray(a), w)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(_fusion.FuseError, match="trailing"):  # a non-trailing axis would need a transpose inside the kernel
        pm.fuse(lambda x: pm.nn.layer_norm(x, axis=0))(pm.asarray(a))
