"""The host path for small arrays (pymetal/arrays/small.py): its results are the
kernels' bit for bit, and its rule sends everything else to the kernels."""

import sys
import warnings

import types

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import small as _small

F32, I32, I64 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)
SIZES = [1, 7, 16, 257, 1000, 4097]
BINARY = ["add", "subtract", "multiply", "divide", "equal", "not_equal", "less", "less_equal", "greater",
          "greater_equal"]


def _special(dt, n, rng):
    """n values of dt with the awkward ones in: NaN, infinities, signed zeros, extremes, overflow."""
    if dt == F32:
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 3e38, -3e38, 1e-45, 1e-38, 0.1],
                        np.float32)
        x = (rng.standard_normal(n) * 100).astype(np.float32)
    else:
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, -1, 1, info.min + 1, info.max - 1], dt)
        x = rng.integers(-1000, 1000, n).astype(dt)
    pick = rng.random(n) < 0.3
    x[pick] = rng.choice(pool, int(pick.sum()))
    return x


def _run(fn, limit, monkeypatch):
    """fn() with the host path up to `limit` elements; (result as NumPy, whether the host computed it).
    Neither path warns (1 / 0 is inf, quietly, as on a GPU)."""
    monkeypatch.setattr(_small, "LIMIT", limit)
    decided = []
    entries = {name: getattr(_small, name) for name in _ENTRIES}
    for name, entry in entries.items():  # what each entry point decided (binary inlines the rule)
        monkeypatch.setattr(_small, name, lambda *a, entry=entry: decided.append(entry(*a)) or decided[-1])
    pm.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = fn()
    for name, entry in entries.items():
        monkeypatch.setattr(_small, name, entry)
    return np.asarray(r).copy(), [d is not False and d is not None for d in decided] == [True]


_ENTRIES = ("binary", "binary_scalar", "binary_any", "unary", "copy", "sum_rows")  # small.py's, as elementwise calls them


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name,dt", [(name, dt) for name in BINARY for dt in (F32, I32, I64)
                                     if name != "divide" or dt == F32])  # integer division: kernels only
def test_binary_bit_identical_to_kernels(dev, name, dt, monkeypatch):
    rng = np.random.default_rng(len(name))
    fn = getattr(pm, name)
    for n in SIZES:
        a, b = pm.asarray(_special(dt, n, rng)), pm.asarray(_special(dt, n, rng))
        with np.errstate(all="ignore"):
            ref = getattr(np, name)(np.asarray(a), np.asarray(b))
        kern, k_host = _run(lambda: fn(a, b), 0, monkeypatch)
        host, h_host = _run(lambda: fn(a, b), 1 << 30, monkeypatch)
        assert not k_host and h_host
        _same_bits(host, kern)
        _same_bits(host, ref)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "less"])
def test_float32_with_python_scalar(dev, name, monkeypatch):
    rng = np.random.default_rng(1)
    a = pm.asarray(_special(F32, 1000, rng))
    for value in (0.1, -0.0, 3.4e38, float("nan"), float("inf"), 3.0):
        fn = lambda: getattr(pm, name)(a, value)  # noqa: E731
        kern, _ = _run(fn, 0, monkeypatch)
        host, on_host = _run(fn, 1 << 30, monkeypatch)
        assert on_host
        _same_bits(host, kern)


@pytest.mark.parametrize("name", ["negative", "abs"])
@pytest.mark.parametrize("dt", [F32, I32, I64], ids=str)
def test_unary_bit_identical_to_kernels(dev, name, dt, monkeypatch):
    rng = np.random.default_rng(2)
    for n in SIZES:
        a = pm.asarray(_special(dt, n, rng))
        fn = lambda: getattr(pm, name)(a)  # noqa: E731
        kern, _ = _run(fn, 0, monkeypatch)
        host, on_host = _run(fn, 1 << 30, monkeypatch)
        assert on_host
        _same_bits(host, kern)


@pytest.mark.parametrize("dt", [I32, I64], ids=str)
@pytest.mark.parametrize("shape,axis", [((1,), None), ((1000,), None), ((3, 257), 1), ((4097,), 0)])
def test_integer_sums_on_the_host(dev, dt, shape, axis, monkeypatch):
    rng = np.random.default_rng(3)
    x = _special(dt, int(np.prod(shape)), rng).reshape(shape)
    if dt == I64:
        x[..., 0] = np.iinfo(dt).max  # the int64 sum wraps around: the same bits in any order
    a = pm.asarray(x)
    fn = lambda: pm.sum(a, axis=axis)  # noqa: E731
    kern, _ = _run(fn, 0, monkeypatch)
    host, on_host = _run(fn, 1 << 30, monkeypatch)
    assert on_host
    _same_bits(host, kern)
    _same_bits(host, np.sum(x, axis=axis, dtype=np.int64))


def test_float_sums_and_other_ops_run_their_kernels(dev, monkeypatch):
    a = pm.asarray(np.linspace(-1, 1, 1000, dtype=np.float32))
    i = pm.asarray(np.arange(1, 1001, dtype=np.int32))
    for fn in (lambda: pm.sum(a), lambda: pm.exp(a), lambda: i // i, lambda: i % 7, lambda: pm.astype(a, pm.float16),
               lambda: pm.maximum(a, a)):
        assert not _run(fn, 1 << 30, monkeypatch)[1]


def test_general_path_scalars_broadcasting_out_and_in_place(dev, monkeypatch):
    """Python scalars on either side, broadcasting, strided views, out= and in-place
    operators: the host's results are the kernels', bit for bit."""
    rng = np.random.default_rng(4)
    x = pm.asarray(_special(F32, 60, rng).reshape(6, 10))
    row = pm.asarray(_special(F32, 10, rng))
    i = pm.asarray(_special(I32, 60, rng).reshape(6, 10))
    cases = [lambda: 1.5 - x, lambda: x * 2, lambda: x / row, lambda: x[::2, ::-3] + row[::-3], lambda: -x.T,
             lambda: 3 * i, lambda: i - i[:1], lambda: i < 5, lambda: pm.abs(x[:, 1:])]
    for fn in cases:
        kern, _ = _run(fn, 0, monkeypatch)
        host, on_host = _run(fn, 1 << 30, monkeypatch)
        assert on_host
        _same_bits(host, kern)

    def in_place(limit):
        monkeypatch.setattr(_small, "LIMIT", limit)
        y = pm.asarray(_special(F32, 60, np.random.default_rng(5)).reshape(6, 10))
        y += row
        y *= 0.5
        out = pm.empty((6, 10), dtype=pm.float32)
        pm.subtract(y, x, out=out)
        pm.negative(out[:, ::2], out=out[:, ::2])
        return np.asarray(out).copy()
    _same_bits(in_place(1 << 30), in_place(0))


def test_limit_is_the_largest_host_size(dev, monkeypatch):
    a = pm.asarray(np.ones(100, np.float32))
    assert _run(lambda: a + a, 100, monkeypatch)[1]
    assert not _run(lambda: a + a, 99, monkeypatch)[1]
    assert not _run(lambda: a + a, 0, monkeypatch)[1]


def test_pending_work_keeps_its_order(dev, monkeypatch):
    """An input a queued kernel writes: the op queues behind it, and sees its result."""
    monkeypatch.setattr(_small, "LIMIT", 1 << 30)
    a = pm.asarray(np.ones(1000, np.float32))
    pm.synchronize()
    b = a * 3.0  # on the host
    assert b._buf.epoch <= dev.synced
    x = pm.arange(1000, dtype=pm.float32)  # a kernel, pending
    assert x._buf.epoch > dev.synced
    y = x + b
    assert y._buf.epoch > dev.synced  # behind x's kernel, on the stream
    np.testing.assert_array_equal(np.asarray(y), np.arange(1000, dtype=np.float32) + 3)
    # A kernel writes b in place after the host computed it: a later read sees the write.
    c = b + b
    b += pm.arange(1000, dtype=pm.float32)
    np.testing.assert_array_equal(np.asarray(c), np.full(1000, 6, np.float32))
    np.testing.assert_array_equal(np.asarray(b + 0.0), np.arange(1000, dtype=np.float32) + 3)


def test_result_memory_with_pending_work_runs_the_kernel(dev, monkeypatch):
    """The allocator may hand out memory a queued kernel still uses: the rule checks the result too."""
    monkeypatch.setattr(_small, "LIMIT", 1 << 30)
    a = pm.asarray(np.full(1000, 2, np.float32))
    pm.synchronize()
    res = pm.empty(1000, dtype=pm.float32)
    assert _small.host_ready(res, a)
    res._buf.epoch = dev.next_epoch()  # as if queued work used res's memory
    assert not _small.host_ready(res, a)
    assert not _small.binary(np.add, a, a, res)


def test_poisoned_device_runs_the_kernels(dev, monkeypatch):
    """With failed work's results about, errors propagate through the kernels: no host path."""
    monkeypatch.setattr(_small, "LIMIT", 1 << 30)
    a = pm.asarray(np.ones(10, np.float32))
    pm.synchronize()
    monkeypatch.setattr(dev, "poisoned", types.SimpleNamespace(value=1))
    res = pm.empty(10, dtype=pm.float32)
    assert not _small.host_ready(res, a)


def test_views_and_foreign_memory(dev, monkeypatch):
    monkeypatch.setattr(_small, "LIMIT", 1 << 30)
    x = pm.asarray(np.arange(10, dtype=np.float32))
    v = x.numpy()  # a live host view of x
    y = x + x
    assert np.asarray(y).tolist() == [2.0 * k for k in range(10)]
    v[:] = 1  # written through the view: the next op reads it
    assert np.asarray(x * 2.0).tolist() == [2.0] * 10
    e = pm.asarray(np.zeros(0, np.float32))
    assert (e + e).shape == (0,)
    s = pm.asarray(np.float32(3.0))
    assert float(s + s) == 6.0


def test_setting(monkeypatch):
    monkeypatch.delenv("PYMETAL_HOST_SMALL", raising=False)
    assert _small._limit() == _small.DEFAULT == (65536 if sys.platform == "darwin" else 1 << 20)
    monkeypatch.setenv("PYMETAL_HOST_SMALL", "0")
    assert _small._limit() == 0
    monkeypatch.setenv("PYMETAL_HOST_SMALL", " 4096 ")
    assert _small._limit() == 4096
    for bad in ("-1", "lots", "1e3"):
        monkeypatch.setenv("PYMETAL_HOST_SMALL", bad)
        with pytest.raises(ValueError, match="PYMETAL_HOST_SMALL"):
            _small._limit()
