"""Every elementwise op of the table x every supported dtype x shapes, against NumPy."""

import math

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import optable as _ops
from arraytest import ALL, BF16, FLOATS, INTS, SHAPES, assert_same, dtype_id, random

# Both paths: small arrays on the host (pymetal/arrays/small.py) and every op on its kernel.
pytestmark = pytest.mark.usefixtures("small_paths")

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])

# Reference implementations (float64 where NumPy has no float32 function).
REF = {
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
    "erf": lambda x: _erf(x.astype(np.float64)),
    "relu": lambda x: np.maximum(x, np.zeros_like(x)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x.astype(np.float64))),
    "softplus": lambda x: np.logaddexp(0, x.astype(np.float64)),
    "silu": lambda x: x / (1 + np.exp(-x.astype(np.float64))),
    "gelu": lambda x: 0.5 * x * _erfc(-x.astype(np.float64) / np.sqrt(2)),
    "gelu_tanh": lambda x: x / (1 + np.exp(-1.5957691216057308 * (x + 0.044715 * x.astype(np.float64) ** 3))),
    "leaky_relu": lambda x, s: np.where(x > 0, x, x.astype(np.float64) * s),
}

DOMAIN = {
    "sqrt": (0.01, 10), "rsqrt": (0.01, 10), "log": (0.01, 10), "log2": (0.01, 10), "log10": (0.01, 10),
    "log1p": (-0.9, 10), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atanh": (-0.99, 0.99),
    "acosh": (1, 10), "exp": (-5, 5), "exp2": (-5, 5), "expm1": (-5, 5), "sinh": (-5, 5), "cosh": (-5, 5),
    "tan": (-1.4, 1.4), "reciprocal": (0.5, 10),
}
TRANSCENDENTAL_RTOL = {np.dtype(np.float32): 1e-5}


def _reference(name, op, *args):
    if name in REF:
        return REF[name](*args)
    return getattr(np, op.numpy or name)(*args)


def _unary_cases():
    for op in _ops.UNARY.values():
        for dt in ALL:
            ok = dt in _ops.dtypes_of(op.kinds) or op.float_only or op.name in _ops.NO_KERNEL_ON_INTEGERS
            if ok:
                yield pytest.param(op.name, dt, id="%s-%s" % (op.name, dtype_id(dt)))


@pytest.mark.parametrize("name,dt", list(_unary_cases()))
def test_unary(dev, rng, name, dt):
    op = _ops.UNARY[name]
    fn = getattr(pm.nn, name, None) if name in ("relu", "sigmoid", "softplus", "silu") else None
    fn = fn or (lambda x: pm.arrays.elementwise.unary(name, x))
    lo, hi = DOMAIN.get(name, (-10, 10))
    if dt.kind == "u":
        lo = max(lo, 0)
    for shape in SHAPES:
        x = random(rng, shape, dt, lo, hi)
        got = fn(pm.asarray(x))
        computed = np.dtype(np.float32) if (dt not in _ops.dtypes_of(op.kinds) and op.float_only) else dt
        xin = x.astype(np.float32) if (computed.kind == "f" or computed == BF16) and dt != np.float32 else x
        if op.result == "bool" and dt not in FLOATS:
            want = _reference(name, op, x)
        else:
            want = _reference(name, op, xin)
        if op.result == "bool":
            want = np.asarray(want, dtype=bool)
            assert_same(got, want, dtype=np.bool_)
        else:
            want = np.asarray(want).astype(computed)
            rtol = TRANSCENDENTAL_RTOL.get(computed) if op.float_only else None
            assert_same(got, want, dtype=computed, rtol=rtol)


def _binary_cases():
    for op in _ops.BINARY.values():
        if op.name == "leaky_relu":
            continue
        for dt in ALL:
            if dt in _ops.dtypes_of(op.kinds) or op.float_only:
                yield pytest.param(op.name, dt, id="%s-%s" % (op.name, dtype_id(dt)))


def _operands(rng, name, shape_a, shape_b, dt):
    a = random(rng, shape_a, dt)
    b = random(rng, shape_b, dt)
    if name == "pow":
        a = random(rng, shape_a, dt, 0 if dt.kind in "fu" or dt == BF16 else -3, 4)
        b = random(rng, shape_b, dt, 0, 4)
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        b = random(rng, shape_b, dt, 0, dt.itemsize * 8)
    return a, b


PAIRS = [((), ()), ((0,), (0,)), ((1,), (1,)), ((257,), (257,)), ((3, 5), (5,)), ((3, 1), (1, 4)),
         ((2, 3, 4), (3, 1)), ((4, 1, 3), (4, 0, 3)), ((5, 4), ())]


@pytest.mark.parametrize("name,dt", list(_binary_cases()))
def test_binary(dev, rng, name, dt):
    op = _ops.BINARY[name]
    computed = dt if dt in _ops.dtypes_of(op.kinds) else np.dtype(np.float32)
    for sa, sb in PAIRS:
        a, b = _operands(rng, name, sa, sb, dt)
        got = pm.arrays.elementwise.binary(name, pm.asarray(a), pm.asarray(b))
        ia, ib = (a.astype(np.float32), b.astype(np.float32)) if (computed == BF16 or computed.kind == "f") and dt != np.float32 else (a, b)
        with np.errstate(all="ignore"):
            want = _reference(name, op, ia, ib)
        rdt = np.bool_ if op.result == "bool" else computed
        assert_same(got, np.asarray(want).astype(rdt), dtype=rdt,
                    rtol=TRANSCENDENTAL_RTOL.get(computed) if op.float_only else None)


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)], ids=dtype_id)
def test_scalar_layouts_and_operators(dev, rng, dt):
    a = random(rng, (3, 7), dt, 1, 9)
    x = pm.asarray(a)
    two = dt.type(2)
    for got, want in [(x + 2, a + two), (2 + x, two + a), (x * 3, a * dt.type(3)), (x - 1, a - dt.type(1)),
                      (x // 2, a // two), (x % 3, a % dt.type(3)), (x ** 2, a ** two), (-x if dt.kind != "u" else x, -a if dt.kind != "u" else a),
                      (x == a, a == a), (x < 5, a < dt.type(5)), (x >= a[0], a >= a[0]),
                      (x + x[0], a + a[0]), (x[:, :1] * x, a[:, :1] * a)]:
        assert_same(got, want)
    if dt.kind in "iu":
        for got, want in [(x & 6, a & dt.type(6)), (x | 1, a | dt.type(1)), (x ^ a, a ^ a), (x << 2, a << dt.type(2)),
                          (x >> 1, a >> dt.type(1)), (~x, ~a)]:
            assert_same(got, want)
    else:
        assert_same(x / 2, a / two)
        assert_same(abs(-x), np.abs(-a))


def test_promotion(dev):
    i8, u8, i16, u32, i64, f16, f32 = (np.dtype(t) for t in ("i1", "u1", "i2", "u4", "i8", "f2", "f4"))
    cases = [(i8, u8, i16), (u32, i8, i64), (i8, f16, f16), (i64, f32, f32), (f16, f32, f32), (BF16, f16, f32),
             (BF16, i8, BF16), (np.dtype(bool), i8, i8)]
    for a, b, want in cases:
        x = pm.ones((2,), a) + pm.ones((2,), b)
        assert x.dtype == want, (a, b, x.dtype)
        assert pm.result_type(a, b) == want
    with pytest.raises(TypeError, match="cast one explicitly"):
        pm.ones(2, np.uint64) + pm.ones(2, np.int8)


def test_python_scalars_are_weak(dev):
    h = pm.ones((3,), np.float16)
    assert (h * 2.0).dtype == np.float16
    assert (pm.ones(3, np.int8) + 1).dtype == np.int8
    assert (pm.ones(3, np.int32) * 1.5).dtype == np.float32
    assert (pm.ones(3, bool) + 1).dtype == pm.dtypes.default_int
    with pytest.raises(OverflowError):
        pm.ones(3, np.int8) + 300
    assert (pm.ones(3, np.float32) * np.float16(2)).dtype == np.float32


def test_integer_division_by_zero_and_wrap(dev):
    a = np.array([7, -7, 7, -7, -128, 5], np.int8)
    b = np.array([2, 2, -2, -2, -1, 0], np.int8)
    x, y = pm.asarray(a), pm.asarray(b)
    with np.errstate(all="ignore"):
        assert_same(x // y, a // b)
        assert_same(x % y, a % b)
    big = pm.asarray(np.array([2**31 - 1], np.int32))
    assert_same(big + 1, np.array([-2**31], np.int32))


def test_float_floor_divide_and_remainder_signs(dev):
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, np.inf], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0], np.float32)
    with np.errstate(all="ignore"):
        want = a // b
        want[-1] = np.inf  # inf // 2: the Array API's inf, not NumPy's NaN (README, Numerics)
        assert_same(pm.asarray(a) // pm.asarray(b), want)
        assert_same(pm.asarray(a) % pm.asarray(b), a % b)


def test_special_values(dev):
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e30, 88.0, -104.0], np.float32)
    x = pm.asarray(v)
    with np.errstate(all="ignore"):
        for name in ("exp", "log", "sqrt", "tanh", "sin", "floor", "isnan", "isinf", "isfinite", "sign", "abs",
                     "signbit", "expm1", "log1p"):
            want = getattr(np, name)(v)
            assert_same(pm.arrays.elementwise.unary(name, x), want, rtol=1e-5)
        assert_same(pm.maximum(x, 0.0), np.maximum(v, np.float32(0)))
        assert_same(pm.minimum(x, x[::-1]), np.minimum(v, v[::-1]))


def test_where_and_clip(dev, rng):
    for dt in (np.float32, np.int16, np.dtype(np.float16), BF16):
        a = random(rng, (4, 6), dt)
        b = random(rng, (6,), dt)
        c = rng.random((4, 1)) < 0.5
        assert_same(pm.where(pm.asarray(c), pm.asarray(a), pm.asarray(b)), np.where(c, a, b))
        assert_same(pm.where(pm.asarray(c), pm.asarray(a), 0), np.where(c, a, np.zeros((), dt)))
        assert_same(pm.clip(pm.asarray(a), -3, 4), np.clip(a.astype(np.float32), -3, 4).astype(dt))
    assert_same(pm.where(pm.asarray(np.zeros((0, 3), bool)), 1.0, 2.0), np.zeros((0, 3), np.float32))


def test_non_contiguous_and_negative_strides(dev, rng):
    a = random(rng, (6, 8), np.float32)
    x = pm.asarray(a)
    assert_same(pm.exp(x[::2, ::-3]), np.exp(a[::2, ::-3]), rtol=1e-6)
    assert_same(x[1:, 2:] + x[:-1, :-2], a[1:, 2:] + a[:-1, :-2])
    assert_same(x.T + 1, a.T + np.float32(1))
    assert_same(x[:, 3] * x[2, :6], a[:, 3] * a[2, :6])
    assert_same(x[::-1, ::2].T - x[:4, ::-1][:, :6], a[::-1, ::2].T - a[:4, ::-1][:, :6])


def test_in_place_operators(dev, rng):
    a = random(rng, (5, 4), np.float32)
    x = pm.asarray(a.copy())
    x += 1
    x *= x[0]
    x[1:] -= 2
    w = a + 1
    w *= w[0].copy()
    w[1:] -= 2
    assert_same(x, w)
    y = pm.asarray(np.arange(6, dtype=np.int32))
    y += y[::-1]
    assert_same(y, np.full(6, 5, np.int32))
    h = pm.ones(4, np.float16)
    h += pm.ones(4, np.float32)
    assert h.dtype == np.float16 and h.numpy().tolist() == [2.0] * 4


def test_large(dev, rng):
    a = random(rng, (1 << 20) + 3, np.float32)
    b = random(rng, (1 << 20) + 3, np.float32)
    assert_same(pm.asarray(a) * pm.asarray(b) + 1, a * b + np.float32(1))
    assert_same(pm.tanh(pm.asarray(a)), np.tanh(a), rtol=1e-5)


def test_errors(dev, float64_error):
    with pytest.raises(ValueError, match="broadcast"):
        pm.ones((3,)) + pm.ones((4,))
    with pytest.raises(TypeError, match="does not support"):
        pm.bitwise_and(pm.ones(3), pm.ones(3))
    with pytest.raises(TypeError, match="float64"):
        pm.asarray(np.ones(3))
    with pytest.raises(TypeError, match="bool"):
        -pm.ones(3, bool)
