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
    name = _ops.unary_name("v", "exp", pm.float16)
    assert name not in pm.shaders().functions  # not precompiled
    fn = _jit.kernel(name, "unary", pm.float16, dev)
    assert _jit.kernel(name, "unary", pm.float16, dev) is fn  # one Function per (device, name)
    assert fn.name == name
    x = pm.asarray(np.linspace(-2, 2, 100).astype(np.float16))
    assert_same(pm.exp(x), np.exp(x.numpy().astype(np.float32)).astype(np.float16))
