"""The Array object: views, indexing, creation, manipulation, interop, memory."""

import gc
import os

import numpy as np
import pytest

import pymetal as pm
from arraytest import ALL, BF16, assert_same, dtype_id, random


def test_views_copy_nothing(dev, rng):
    a = random(rng, (4, 6, 5), np.float32)
    x = pm.asarray(a)
    for view, want in [(x[1:3, ::2, ::-1], a[1:3, ::2, ::-1]), (x.T, a.T), (x.mT, np.swapaxes(a, -1, -2)),
                       (pm.permute_dims(x, (2, 0, 1)), a.transpose(2, 0, 1)), (x.reshape(24, 5), a.reshape(24, 5)),
                       (x[:, 0].reshape(2, 2, 5), a[:, 0].reshape(2, 2, 5)),
                       (pm.broadcast_to(x[:, :1], (3, 4, 6, 5)), np.broadcast_to(a[:, :1], (3, 4, 6, 5))),
                       (pm.expand_dims(x, (0, 2)), np.expand_dims(a, (0, 2))), (x[None, ..., 2], a[None, ..., 2]),
                       (pm.squeeze(x[:1, :, :1]), np.squeeze(a[:1, :, :1])), (pm.flip(x, axis=1), np.flip(a, axis=1)),
                       (pm.moveaxis(x, 0, -1), np.moveaxis(a, 0, -1))]:
        assert view._buf is x._buf
        assert [s for s, n in zip(view.strides, view.shape) if n > 1] == [s for s, n in zip(want.strides, want.shape) if n > 1]
        assert_same(view, want)
        assert np.shares_memory(view.numpy(), x.numpy())


def test_reshape_copies_only_when_numpy_would(dev, rng):
    a = random(rng, (4, 6), np.float32)
    x = pm.asarray(a)
    t = x.T
    r = t.reshape(-1)  # not viewable: a copy
    assert r._buf is not x._buf
    assert_same(r, a.T.reshape(-1))
    with pytest.raises(ValueError, match="copy"):
        t.reshape(24, copy=False)
    assert x[:, :3].reshape(4, 3, 1)._buf is x._buf
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape(5, 5)


def test_metadata(dev):
    x = pm.zeros((3, 4), np.int16)
    assert (x.shape, x.ndim, x.size, x.nbytes, x.itemsize, x.strides) == ((3, 4), 2, 12, 24, 2, (8, 2))
    assert x.flags.c_contiguous and not x.T.flags.c_contiguous and x.T.flags.f_contiguous
    assert x.device is dev
    assert len(x) == 3 and len(list(x)) == 3


def test_scalar_conversions(dev):
    assert bool(pm.asarray([1])) and not bool(pm.zeros(()))
    assert int(pm.asarray(np.int32(7))) == 7 and float(pm.asarray([2.5])) == 2.5
    assert [10, 20][pm.asarray(np.int64(1))] == 20
    with pytest.raises(ValueError, match="ambiguous"):  # NumPy's error for bool(array)
        bool(pm.ones(3))
    with pytest.raises(TypeError, match="size-1"):
        int(pm.ones(3))
    with pytest.raises(TypeError):
        [1][pm.ones((), np.float32)]


def test_repr_like_numpy(dev):
    x = pm.asarray(np.arange(4, dtype=np.float32))
    assert repr(x) == "Array([0., 1., 2., 3.], dtype=float32)"
    assert str(x) == str(np.arange(4, dtype=np.float32))
    assert repr(pm.zeros((0, 2), np.int8)) == "Array([], shape=(0, 2), dtype=int8)"


@pytest.mark.parametrize("dt", ALL, ids=dtype_id)
def test_creation(dev, dt):
    assert_same(pm.zeros((2, 3), dt), np.zeros((2, 3), dt))
    assert_same(pm.ones((5,), dt), np.ones(5, dt))
    assert_same(pm.full((2, 2), 1, dt), np.full((2, 2), 1, dt))
    assert_same(pm.zeros_like(pm.ones((3,), dt)), np.zeros(3, dt))
    assert_same(pm.eye(3, 4, k=1, dtype=dt), np.eye(3, 4, k=1, dtype=dt))
    if dt != np.bool_:
        assert_same(pm.arange(2, 11, 3, dtype=dt), np.arange(2, 11, 3, dtype=dt))
    a = np.arange(12).reshape(3, 4).astype(dt)
    assert_same(pm.tril(pm.asarray(a)), np.tril(a))
    assert_same(pm.triu(pm.asarray(a), k=1), np.triu(a, k=1))


def test_creation_defaults(dev):
    assert pm.arange(5).dtype == np.int64 and pm.arange(0.0, 1.0, 0.25).dtype == np.float32
    assert_same(pm.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32))
    assert_same(pm.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    assert_same(pm.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False, dtype=np.float32))
    assert pm.full((2,), 3).dtype == np.int64 and pm.full((2,), 3.0).dtype == np.float32
    assert pm.asarray([1, 2]).dtype == np.int64 and pm.asarray([1.5]).dtype == np.float32
    xs, ys = pm.meshgrid(pm.arange(3), pm.arange(2))
    wx, wy = np.meshgrid(np.arange(3), np.arange(2))
    assert_same(xs, wx)
    assert_same(ys, wy)
    xi, yi = pm.meshgrid(pm.arange(3), pm.arange(2), indexing="ij")
    wx, wy = np.meshgrid(np.arange(3), np.arange(2), indexing="ij")
    assert_same(xi, wx)
    assert_same(yi, wy)


def test_astype(dev, rng):
    a = random(rng, (5, 3), np.float32, -100, 100)
    x = pm.asarray(a)
    for dt in (np.int8, np.int32, np.uint8, np.float16, BF16, np.bool_, np.int64):
        if np.dtype(dt).kind in "iu" and dt != np.int32:
            src = a.clip(0, 100) if np.dtype(dt).kind == "u" else a.clip(-100, 100)
            xs = pm.asarray(src)
        else:
            src, xs = a, x
        assert_same(xs.astype(dt), src.astype(dt), rtol=1e-2 if dt == BF16 else None)
    assert_same(x.T.astype(np.float16), a.T.astype(np.float16))


def test_getitem(dev, rng):
    a = random(rng, (5, 6, 4), np.float32)
    x = pm.asarray(a)
    keys = [1, -1, (2, 3), (slice(1, 4), 2), (Ellipsis, 1), (None, 2, Ellipsis, None), [0, 2, 4], [-1, 0],
            ([1, 2], [3, 4]), (slice(None), [0, 5, 5]), (slice(None), [0, 1], [2, 3]), (1, [0, 1], 2),
            ([0, 1], slice(None), [2, 3]), (np.array([[0, 1], [2, 3]]),), a[:, 0, 0] > 0, (a[..., 0] > 0),
            (slice(None), a[0, :, 0] > 0), (np.array([], np.int64),)]
    for k in keys:
        got = x[k]
        assert isinstance(got, pm.Array)
        assert_same(got, a[k])
    assert_same(x[pm.asarray(np.array([4, 0]))], a[[4, 0]])
    assert_same(x[x[:, 0, 0] > 0], a[a[:, 0, 0] > 0])


def test_getitem_errors(dev):
    x = pm.zeros((3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        x[3]
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 4]]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, pm.asarray(np.array([-5]))]
    with pytest.raises(IndexError, match="too many"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="integer"):
        x[pm.ones(2)]
    with pytest.raises(IndexError):
        x["a"]


def test_setitem(dev, rng):
    a = random(rng, (5, 6), np.float32)
    cases = [(1, 7.0), ((slice(1, 3), slice(None, None, 2)), 2.0), ((Ellipsis, 0), np.arange(5, dtype=np.float32)),
             ([0, 3], -1.0), ((slice(None), [1, 4]), np.ones((5, 2), np.float32)), (a > 0, 0.0),
             (([1, 2], [3, 4]), np.array([9.0, 8.0], np.float32)), ((1, [0, 2]), 5.0),
             (([0, 1], slice(None)), np.arange(6, dtype=np.float32))]
    for key, value in cases:
        x = pm.asarray(a.copy())
        w = a.copy()
        x[key] = value
        w[key] = value
        assert_same(x, w)
    x = pm.asarray(a.copy())
    x[::2] = pm.asarray(a[:3][::-1].copy())[::1]
    w = a.copy()
    w[::2] = a[:3][::-1]
    assert_same(x, w)
    i = pm.zeros((4,), np.int32)
    i[1:3] = 2.7  # converted to the array's type
    assert i.numpy().tolist() == [0, 2, 2, 0]


def test_take_and_take_along_axis(dev, rng):
    a = random(rng, (4, 5, 3), np.float32)
    x = pm.asarray(a)
    assert_same(pm.take(x, np.array([3, 0, -1]), axis=1), np.take(a, [3, 0, -1], axis=1))
    assert_same(pm.take(x, pm.asarray(np.array([7, 1])),), np.take(a, [7, 1]))
    idx = np.argsort(a, axis=1)
    assert_same(pm.take_along_axis(x, pm.asarray(idx), axis=1), np.take_along_axis(a, idx, axis=1))
    with pytest.raises(IndexError):
        pm.take(x, np.array([5]), axis=1)


def test_manipulation(dev, rng):
    a = random(rng, (3, 4), np.float32)
    b = random(rng, (3, 2), np.float32)
    x, y = pm.asarray(a), pm.asarray(b)
    assert_same(pm.concat([x, y], axis=1), np.concatenate([a, b], axis=1))
    assert_same(pm.concat([x, x[::-1]], axis=0), np.concatenate([a, a[::-1]]))
    assert_same(pm.concat([x, y], axis=None), np.concatenate([a, b], axis=None))
    assert_same(pm.concat([x, pm.asarray(np.ones((3, 1), np.int8))], axis=1),
                np.concatenate([a, np.ones((3, 1), np.float32)], axis=1))
    assert_same(pm.stack([x, x * 2], axis=1), np.stack([a, a * 2], axis=1))
    for got, want in zip(pm.split(x, 2, axis=1), np.split(a, 2, axis=1)):
        assert_same(got, want)
    for got, want in zip(pm.split(x, [1, 3]), np.split(a, [1, 3])):
        assert_same(got, want)
    assert_same(pm.roll(x, 1, axis=1), np.roll(a, 1, axis=1))
    assert_same(pm.roll(x, -5), np.roll(a, -5))
    assert_same(pm.roll(x, (1, 2), axis=(0, 1)), np.roll(a, (1, 2), axis=(0, 1)))
    assert_same(pm.tile(x, (2, 3)), np.tile(a, (2, 3)))
    assert_same(pm.tile(pm.asarray(np.arange(3, dtype=np.int32)), 2), np.tile(np.arange(3, dtype=np.int32), 2))
    assert_same(pm.repeat(x, 2, axis=0), np.repeat(a, 2, axis=0))
    assert_same(pm.repeat(x, [1, 0, 2, 1], axis=1), np.repeat(a, [1, 0, 2, 1], axis=1))
    assert_same(pm.repeat(x, 3), np.repeat(a, 3))
    u, v = pm.broadcast_arrays(x[:, :1], y[:1])
    wu, wv = np.broadcast_arrays(a[:, :1], b[:1])
    assert_same(u, wu)
    assert_same(v, wv)
    with pytest.raises(ValueError, match="same shape"):
        pm.concat([x, y], axis=0)


def test_numpy_interop(dev, rng):
    a = random(rng, (3, 4), np.float32)
    x = pm.asarray(a)
    r = np.exp(x)
    assert isinstance(r, pm.Array)
    assert_same(r, np.exp(a), rtol=1e-6)
    assert isinstance(np.add(x, 1), pm.Array)
    s = np.sum(x, axis=1)
    assert isinstance(s, pm.Array)
    assert_same(s, a.sum(axis=1), rtol=1e-5)
    c = np.concatenate([x, x])
    assert isinstance(c, pm.Array)
    assert_same(c, np.concatenate([a, a]))
    out = pm.empty((3, 4))
    np.multiply(x, x, out=out)
    assert_same(out, a * a)
    # not implemented in pymetal: NumPy on the shared memory, never wrong
    assert np.allclose(np.cumsum(x, axis=1) if False else np.diff(x, axis=1), np.diff(a, axis=1))
    assert np.allclose(np.median(x), np.median(a))
    assert isinstance(a + x, pm.Array)  # NumPy defers to pymetal
    v = np.asarray(x)
    assert v.base is not None and np.shares_memory(v, x.numpy())


def test_array_copies(dev):
    n = np.arange(6, dtype=np.float32)
    y = pm.array(n)
    n[0] = 100
    assert y.numpy()[0] == 0
    x = pm.asarray(pm.ones(3))
    assert pm.asarray(x) is x
    assert pm.asarray(x, copy=True)._buf is not x._buf


def test_allocator_reuses_memory(dev):
    pm.synchronize()
    x = pm.ones((1 << 18,), np.float32)
    for _ in range(200):
        x = x * 1.0001 + 0.5
    pm.synchronize()
    info = pm.cache_info()
    assert info["hits"] > 100
    pm.clear_cache()
    assert pm.cache_info()["bytes"] == 0


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_loops_do_not_grow_memory(dev):
    x = pm.ones((1 << 20,), np.float32)
    for _ in range(50):
        y = pm.exp(x) * 2 - x
    pm.synchronize()
    gc.collect()
    before = _rss()
    for _ in range(500):
        y = pm.exp(x) * 2 - x
        s = pm.sum(y)
    float(s)
    gc.collect()
    assert _rss() - before < 32 << 20
