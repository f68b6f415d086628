"""The lean paths of a small op and its read (issue 25, item 1): np.asarray(x) /
x.numpy() through a cached template and a counted UserBase (runtime/buffer.py),
the operators' float64 check without *args packing (arrays/float64.py), and
_new's inline take from the allocator (arrays/construct.py). Each gives what
the general paths give and keeps the rules: live views counted, pending work
waited for, float64 operands dispatched by the policy."""

import gc

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import float64 as _f64
from pymetal.arrays import small as _small
from pymetal.runtime.user_array import UserBase


def _read_count(x):
    gc.collect()
    return x._buf.views


def test_read_base_counts_while_any_derived_array_lives(dev):
    base = dev.host_shared
    x = pm.asarray(np.arange(24, dtype=np.float32)) + 0.0
    r = np.asarray(x)
    assert type(r) is np.ndarray and type(r.base) is UserBase and r.base.buffer is x._buf
    assert _read_count(x) == 1 and dev.host_shared == base + 1
    derived = [r[3:], r.reshape(4, 6).T, r[::2].view(np.int32), r.reshape(2, 12)[1]]
    del r
    assert _read_count(x) == 1  # each derived array keeps the counted base
    for k, d in enumerate(derived):
        assert any(type(b) is UserBase for b in _bases(d)), k
    del d
    derived.pop()
    derived.pop(0)
    assert _read_count(x) == 1
    del derived
    assert _read_count(x) == 0 and dev.host_shared == base


def _bases(a):
    while a is not None:
        yield a
        a = getattr(a, "base", None)


def test_arrays_numpy_makes_of_the_base_count_nothing(dev):
    x = pm.asarray(np.arange(8, dtype=np.float32)) + 0.0
    r = x.numpy()
    made = [r.base + 1, r.base[2:], np.sin(r.base), r.base.copy()]  # UserBase instances without a buffer
    assert all(isinstance(m, UserBase) for m in made)
    assert _read_count(x) == 1
    del made
    assert _read_count(x) == 1
    del r
    assert _read_count(x) == 0


def test_kernel_calls_complete_while_a_read_lives(dev, monkeypatch):
    monkeypatch.setattr(_small, "LIMIT", 0)  # kernels: queued unless a view is live
    x = pm.asarray(np.ones(1000, np.float32)) + 0.0
    pm.synchronize()
    r = np.asarray(x)[10:]  # only a derived array lives
    y = x + 1.0
    assert x._buf.epoch <= dev.synced and y._buf.epoch <= dev.synced  # completed on return
    assert np.array_equal(np.asarray(y), np.full(1000, 2, np.float32))
    del r


def test_reads_share_memory_back_into_pymetal(dev):
    x = pm.asarray(np.arange(40, dtype=np.float32)) + 0.0
    r = np.asarray(x)
    for view, off in [(r, 0), (r[5:], 20), (r.reshape(4, 10)[1:, ::2], 40)]:
        y = pm.asarray(view)
        assert y._buf is x._buf and y._offset == off  # recognised as pymetal memory, not copied
        assert np.array_equal(np.asarray(y), view)


def test_reads_of_recycled_memory_show_the_new_contents(dev):
    # The templates are cached by address: the next result at the same address, of
    # another dtype or shape, must read as itself
    for k in range(6):
        x = pm.asarray(np.full(256, k, np.float32)) + 0.0
        addr = x._buf.ptr
        assert np.array_equal(np.asarray(x), np.full(256, k, np.float32))
        assert np.array_equal(np.asarray(x.view(pm.int32)), np.full(256, k, np.float32).view(np.int32))
        assert np.array_equal(np.asarray(x.reshape(16, 16)), np.full((16, 16), k, np.float32))
        del x
        y = pm.asarray(np.arange(256, dtype=np.int32) * (k + 1)) + 0
        assert np.array_equal(np.asarray(y), np.arange(256, dtype=np.int32) * (k + 1)), (addr, y._buf.ptr)
        del y


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.uint16, np.int64, np.bool_, np.complex64])
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 5), (2, 0, 3)], ids=str)
def test_reads_of_every_dtype_and_shape(dev, dt, shape):
    rng = np.random.default_rng(len(shape))
    data = (rng.standard_normal(shape) * 50).astype(dt) if np.dtype(dt).kind != "b" else rng.random(shape) < 0.5
    x = pm.asarray(data) + pm.zeros(shape, dt) if np.dtype(dt).kind != "b" else pm.asarray(data) | False
    for r in (np.asarray(x), x.numpy(), np.array(x, copy=False)):
        assert type(r) is np.ndarray and r.dtype == np.dtype(dt) and r.shape == shape
        assert r.tobytes() == data.tobytes()
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    assert np.array(x, copy=True).base is None


def test_bfloat16_and_read_only_reads(dev):
    x = pm.asarray(np.arange(5, dtype=np.float32)).astype(pm.bfloat16)
    assert np.asarray(x).view(np.uint16).tolist() == [0, 0x3F80, 0x4000, 0x4040, 0x4080]
    y = pm.asarray(np.arange(5, dtype=np.float32)) + 0.0
    y.flags.writeable = False
    r = np.asarray(y)
    assert not r.flags.writeable
    with pytest.raises(ValueError):
        r[0] = 1


def test_read_waits_for_pending_work_and_raises_its_error(dev, monkeypatch):
    monkeypatch.setattr(_small, "LIMIT", 0)
    x = pm.asarray(np.ones(50_000, np.float32)) + 0.0
    y = x
    for _ in range(20):
        y = y + x  # queued
    assert np.array_equal(np.asarray(y), np.full(50_000, 21, np.float32))


# ---- operators: the float64 check without *args packing ----------------------------------------------

def test_operators_with_float64_operands_follow_the_policy(dev, monkeypatch):
    a32 = np.linspace(-2, 2, 9, dtype=np.float32)
    a64 = np.linspace(-3, 3, 9)
    x, w = pm.asarray(a32), pm.asarray(a64)
    assert w.dtype == np.float64
    cases = [(lambda p, q: p + q, x, w), (lambda p, q: p * q, w, x), (lambda p, q: p - q, x, np.float64(0.1)),
             (lambda p, q: p / q, x, a64), (lambda p, q: p < q, w, x), (lambda p, q: p ** q, w, 2),
             (lambda p, q: p + q, w, 1.5)]
    for fn, p, q in cases:
        got = fn(p, q)
        ref = fn(np.asarray(p) if isinstance(p, pm.Array) else p, np.asarray(q) if isinstance(q, pm.Array) else q)
        assert isinstance(got, pm.Array) and got.dtype == ref.dtype
        assert np.asarray(got).tobytes() == ref.tobytes()
    z = pm.asarray(a32.copy())
    z += w  # in place: float64 computed on the host, stored as float32 (NumPy's same_kind)
    assert z.dtype == np.float32 and np.array_equal(np.asarray(z), (a32 + a64).astype(np.float32))
    assert (x + 0.5).dtype == np.float32  # a Python float stays weak: float32, on the device
    monkeypatch.setattr(_f64, "_policy", "error")
    with pytest.raises(TypeError):
        x + w
    assert np.array_equal(np.asarray(x + x), a32 + a32)
    monkeypatch.setattr(_f64, "_policy", "downcast")
    with pytest.warns(UserWarning):
        monkeypatch.setattr(_f64, "_warned", False)
        r = x * np.float64(2)
    assert r.dtype == np.float32 and np.array_equal(np.asarray(r), a32 * 2)


def test_operators_keep_notimplemented_and_errors(dev):
    x = pm.asarray(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(ValueError, match="broadcast"):
        x + pm.ones(4, pm.float32)
    with pytest.raises(TypeError):
        -(x < 1)

    class Other:
        def __radd__(self, other):
            return "radd"
    assert x + Other() == "radd"


# ---- the allocator's inline take --------------------------------------------------------------------

def test_new_takes_pooled_memory_and_counts_it(dev):
    pm.clear_cache()
    a = pm.asarray(np.ones(1000, np.float32))
    before = pm.cache_info()
    x = a + 1.0
    ptr = x._buf.ptr
    del x
    y = a + 2.0  # the same size class: the freed memory again
    info = pm.cache_info()
    assert y._buf.ptr == ptr and y._buf.views == 0 and y._buf.pooled
    assert info["hits"] > before["hits"]
    assert np.array_equal(np.asarray(y), np.full(1000, 3, np.float32))


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.float16, np.complex64, np.bool_, np.uint8])
def test_small_ops_equal_their_kernels_over_dtypes_and_layouts(dev, dt, monkeypatch):
    """Every dtype, through both paths (host where small.py allows, kernels with LIMIT 0): the same bits."""
    rng = np.random.default_rng(3)

    def data(shape):
        if np.dtype(dt).kind == "b":
            return rng.random(shape) < 0.5
        v = rng.standard_normal(shape) * 20
        return (v + 1j * (v * 0.5 + 1) if np.dtype(dt).kind == "c" else v).astype(dt)
    shapes = [((), ()), ((0,), (0,)), ((1,), (1,)), ((257,), (257,)), ((4, 33), (33,)), ((5, 1), (1, 6))]
    for sa, sb in shapes:
        an, bn = data(sa), data(sb)
        outs = []
        for limit in (0, 1 << 20):
            monkeypatch.setattr(_small, "LIMIT", limit)
            a, b = pm.asarray(an), pm.asarray(bn)
            r = [a == b, a != b]
            if np.dtype(dt).kind != "b":
                r += [a + b, a - b, a * b, -a, a + 2]
                c = a + 0
                c += b if sa == np.broadcast_shapes(sa, sb) else 0
                r.append(c)
            outs.append([np.asarray(v).copy() for v in r])
        for k, (p, q) in enumerate(zip(*outs)):
            assert p.dtype == q.dtype and p.shape == q.shape and p.tobytes() == q.tobytes(), (sa, sb, k)
