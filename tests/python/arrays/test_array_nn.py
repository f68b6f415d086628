"""pymetal.nn against NumPy references, and the op table's generated kernels."""

import math
import os

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import lookup as _jit
from pymetal.arrays import optable as _ops
from arraytest import BF16, assert_same, random


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), BF16], ids=str)
def test_softmax_log_softmax(dev, rng, dt):
    tol = {np.dtype(np.float16): 3e-3, BF16: 3e-2}.get(np.dtype(dt), 1e-5)
    for shape, axis in [((7,), -1), ((4, 33), -1), ((4, 33), 0), ((2, 3, 5), 1)]:
        a = random(rng, shape, dt, -20, 20)
        f = a.astype(np.float64)
        x = pm.asarray(a)
        assert_same(pm.nn.softmax(x, axis=axis), _softmax(f, axis).astype(dt), rtol=tol, atol=tol * 1e-2)
        want = f - np.log(np.exp(f - f.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)) \
            - f.max(axis=axis, keepdims=True)
        assert_same(pm.nn.log_softmax(x, axis=axis), want.astype(dt), rtol=tol, atol=tol)
    big = pm.asarray(np.array([1000.0, 1000.0, -1000.0], np.float32))
    assert_same(pm.nn.softmax(big), np.array([0.5, 0.5, 0.0], np.float32))


def test_activations(dev, rng):
    a = random(rng, (1000,), np.float32, -30, 30)
    x = pm.asarray(a)
    f = a.astype(np.float64)
    assert_same(pm.nn.relu(x), np.maximum(a, 0))
    assert_same(pm.nn.leaky_relu(x, 0.2), np.where(f > 0, f, 0.2 * f).astype(np.float32), rtol=1e-6)
    assert_same(pm.nn.sigmoid(x), (1 / (1 + np.exp(-f))).astype(np.float32), rtol=1e-5)
    assert_same(pm.nn.softplus(x), np.logaddexp(0, f).astype(np.float32), rtol=1e-5)
    assert_same(pm.nn.silu(x), (f / (1 + np.exp(-f))).astype(np.float32), rtol=1e-5)
    assert pm.nn.swish is pm.nn.silu
    erfc = np.vectorize(math.erfc)  # 0.5 x erfc(-x / sqrt 2): the left tail keeps its relative accuracy
    assert_same(pm.nn.gelu(x), (0.5 * f * erfc(-f / math.sqrt(2))).astype(np.float32), rtol=1e-4, atol=1e-30)
    # 0.5 x (1 + tanh(u)) written as x / (1 + exp(-2u)), so the left tail is not rounded to 0;
    # float32 rounding of u (|u| up to ~40) bounds the relative error near 1e-4 there.
    t = f / (1 + np.exp(-2 * 0.7978845608028654 * (f + 0.044715 * f ** 3)))
    assert_same(pm.nn.gelu(x, approximate="tanh"), t.astype(np.float32), rtol=1e-4, atol=1e-30)
    with pytest.raises(ValueError, match="approximate"):
        pm.nn.gelu(x, approximate="fast")


def test_generated_kernel_file_is_current():
    path = os.path.join(_jit.shaders_dir(), "array_kernels.metal")
    with open(path) as f:
        assert f.read() == _ops.precompiled_source(), "run scripts/gen_array_kernels.py"


def test_first_use_compiles_a_family_from_the_templates(dev):
    f16 = np.dtype(pm.float16)  # the internals take dtype objects (pm.float16 is NumPy's scalar type)
    name = _ops.unary_name("v", "exp", f16)
    assert name not in pm.shaders().functions  # not precompiled
    fn = _jit.kernel(name, "unary", f16, dev)
    assert _jit.kernel(name, "unary", f16, dev) is fn  # one Function per (device, name)
    assert fn.name == name
    x = pm.asarray(np.linspace(-2, 2, 100).astype(np.float16))
    assert_same(pm.exp(x), np.exp(x.numpy().astype(np.float32)).astype(np.float16))


def test_float64_follows_the_float64_policy(dev, rng):
    # float64 has no Metal kernel: NumPy computes it on the host (policy "host", the default)
    f = rng.standard_normal((4, 9)) * 8
    x = pm.asarray(f)
    erfc = np.vectorize(math.erfc)
    sig = 1 / (1 + np.exp(-f))
    want = {"relu": np.maximum(f, 0), "leaky_relu": np.where(f > 0, f, 0.01 * f), "sigmoid": sig,
            "softplus": np.log1p(np.exp(-np.abs(f))) + np.maximum(f, 0), "silu": f * sig,
            "gelu": 0.5 * f * erfc(-f / math.sqrt(2)), "softmax": _softmax(f, -1),
            "log_softmax": np.log(_softmax(f, -1))}
    for name, w in want.items():
        got = getattr(pm.nn, name)(x)
        assert isinstance(got, pm.Array) and got.dtype == np.float64, name
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-12, atol=1e-15, err_msg=name)  # (log of softmax near 1)
    u = 0.7978845608028654 * (f + 0.044715 * f ** 3)
    with np.errstate(over="ignore"):  # 0.5 x (1 + tanh(u)) as x / (1 + exp(-2u)): the left tail is not rounded to 0
        tanh_form = f / (1 + np.exp(-2 * u))
    np.testing.assert_allclose(pm.nn.gelu(x, approximate="tanh").numpy(), tanh_form, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(pm.nn.softmax(x, axis=0).numpy(), _softmax(f, 0), rtol=1e-12)
    assert pm.nn.softmax(pm.asarray(np.zeros((0, 3)))).shape == (0, 3)
    with pytest.raises(TypeError, match="real input"):
        pm.nn.softmax(pm.asarray(np.ones(3, np.complex128)))
    with pytest.raises(ValueError, match="approximate"):
        pm.nn.gelu(x, approximate="fast")
    old = pm.get_float64_policy()
    try:
        pm.set_float64_policy("error")
        with pytest.raises(TypeError, match="float64"):
            pm.nn.sigmoid(f)
    finally:
        pm.set_float64_policy(old)
