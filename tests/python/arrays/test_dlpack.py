"""DLPack: pymetal arrays to NumPy (and PyTorch when installed) and back, zero-copy, and lifetimes."""

import gc

import numpy as np
import pytest

import pymetal as pm
from arraytest import assert_same, random

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float16, np.float32]


class Producer:
    """A DLPack producer that is not a NumPy array or a pymetal Array (pm.from_dlpack reads its capsule)."""

    def __init__(self, arr, legacy=False):
        self.arr, self.legacy = arr, legacy

    def __dlpack__(self, stream=None, max_version=None, **kw):
        if self.legacy:
            return self.arr.__dlpack__(stream=stream)
        return self.arr.__dlpack__(stream=stream, max_version=max_version, **kw)

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


def _churn(dev, nbytes, value):
    """Allocates and fills memory of nbytes many times, so freed memory gets reused."""
    keep = []
    for _ in range(8):
        keep.append(pm.full(max(nbytes // 4, 1), value, dtype=pm.int32))
        keep.append(np.full(max(nbytes // 4, 1), value, dtype=np.int32))
    pm.synchronize()
    return keep


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (257,), (3, 5), (2, 0, 3)], ids=str)
def test_to_numpy_zero_copy(dev, rng, dt, shape):
    a = random(rng, shape, dt)
    x = pm.asarray(a) + pm.zeros((), dtype=dt) if np.dtype(dt) != np.bool_ else pm.asarray(a)  # pending work
    got = np.from_dlpack(x)
    assert got.dtype == np.dtype(dt) and got.shape == a.shape
    np.testing.assert_array_equal(got, a)
    if got.size:
        assert got.__array_interface__["data"][0] == x.numpy().__array_interface__["data"][0]
    assert x.__dlpack_device__() == (1, 0)


def test_views_and_copy(dev, rng):
    a = random(rng, (6, 8), np.float32)
    x = pm.asarray(a)
    for v, ref in [(x[::2, 1::3], a[::2, 1::3]), (x.T, a.T), (x[:, ::-1], a[:, ::-1]), (x[3], a[3])]:
        np.testing.assert_array_equal(np.from_dlpack(v), ref)
    shared = np.from_dlpack(x)
    shared[0, 0] = 123.0
    assert float(x[0, 0]) == 123.0
    copied = np.from_dlpack(x, copy=True)
    copied[0, 1] = -5.0
    assert float(x[0, 1]) == a[0, 1]


def test_capsules_and_errors(dev, float64_error):
    x = pm.arange(4, dtype=pm.float32)
    assert "dltensor_versioned" in repr(x.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(x.__dlpack__())  # an old consumer gets the unversioned capsule

    class Legacy:  # a producer that only makes unversioned capsules, as DLPack 0.x consumers expect
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, stream=None, **kw):
            return self.arr.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    np.testing.assert_array_equal(np.from_dlpack(Legacy(x)), [0, 1, 2, 3])
    with pytest.raises(BufferError, match="CPU"):
        x.__dlpack__(dl_device=(8, 0))
    with pytest.raises(ValueError, match="stream"):
        x.__dlpack__(stream=1)
    with pytest.raises(RuntimeError):  # NumPy cannot hold bfloat16 from DLPack (pymetal can: below)
        np.from_dlpack(pm.ones(3, dtype=pm.bfloat16))
    with pytest.raises(TypeError, match="__dlpack__"):
        pm.from_dlpack([1, 2, 3])
    with pytest.raises(TypeError, match="float64"):
        pm.from_dlpack(np.ones(3))


def test_from_numpy_shares_or_copies(dev, rng, aligned_empty, unaligned_copy):
    a = aligned_empty((64, 64), np.float32)
    a[...] = random(rng, a.shape, np.float32)
    x = pm.from_dlpack(a, copy=False)  # page-aligned: wrapped
    assert x.numpy().__array_interface__["data"][0] == a.ctypes.data
    a[0, 0] = 7.0
    assert float(x[0, 0]) == 7.0
    assert_same(x * 2, a * 2)
    c = pm.from_dlpack(a, copy=True)
    a[0, 0] = 8.0
    assert float(c[0, 0]) == 7.0

    u = unaligned_copy(random(rng, (100,), np.float32))
    y = pm.from_dlpack(u)  # not aligned: copied
    assert y.numpy().__array_interface__["data"][0] != u.ctypes.data
    assert_same(y, u)
    with pytest.raises(BufferError, match="copy=False"):
        pm.from_dlpack(u, copy=False)
    ro = np.ones(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(BufferError):
        pm.from_dlpack(ro, copy=False)
    assert_same(pm.from_dlpack(ro), np.ones(4, np.float32))
    assert_same(pm.from_dlpack(np.zeros((0, 3), np.int32), copy=False), np.zeros((0, 3), np.int32))
    z = pm.ones(3)
    assert pm.from_dlpack(z) is z and pm.from_dlpack(z, copy=True) is not z
    # A NumPy view of pymetal memory comes back as pymetal memory, not a copy.
    assert pm.from_dlpack(z.numpy(), copy=False)._buf is z._buf


@pytest.mark.parametrize("legacy", [False, True], ids=["versioned", "unversioned"])
def test_import_capsules(dev, rng, aligned_empty, legacy):
    """pm.from_dlpack reads DLPack capsules itself: every dtype, strides, sharing, read-only memory."""
    for dt in DTYPES:
        a = random(rng, (5, 7), dt)
        got = pm.from_dlpack(Producer(a, legacy))
        assert_same(got, a, dtype=dt)
        assert_same(pm.from_dlpack(Producer(a[::2, ::-3], legacy)), a[::2, ::-3], dtype=dt)
        assert_same(pm.from_dlpack(Producer(a[1:, None, 2], legacy)), a[1:, None, 2], dtype=dt)
    assert_same(pm.from_dlpack(Producer(np.zeros((3, 0), np.int16), legacy)), np.zeros((3, 0), np.int16))
    assert_same(pm.from_dlpack(Producer(np.array(2.5, np.float32), legacy)), np.float32(2.5))  # 0-d
    al = aligned_empty((128, 64), np.float32)
    al[...] = 1.5
    shared = pm.from_dlpack(Producer(al, legacy), copy=False)
    assert shared.numpy().ctypes.data == al.ctypes.data
    ro = np.ones(4, np.float32)
    ro.flags.writeable = False
    if not legacy:  # read-only is a DLPack 1.x flag (NumPy refuses to export read-only arrays without it)
        with pytest.raises(BufferError):
            pm.from_dlpack(Producer(ro), copy=False)
        assert_same(pm.from_dlpack(Producer(ro)), ro)


def test_bfloat16(dev, rng):
    """bfloat16 crosses DLPack as kDLBfloat (pymetal to pymetal; NumPy's DLPack has no bfloat16)."""
    a = random(rng, (300, 50), pm.bfloat16)
    x = pm.asarray(a) * 1
    y = pm.from_dlpack(Producer(x))
    assert y.dtype == pm.bfloat16
    assert_same(y, a)
    assert y.numpy().ctypes.data == x.numpy().ctypes.data  # page-aligned pymetal memory: shared
    back = pm.from_dlpack(Producer(x[::-1]))  # negative strides: exported as a copy
    assert_same(back, a[::-1])
    with pytest.raises(BufferError, match="negative"):
        x[::-1].__dlpack__(copy=False)


def test_lifetime_import_deleter(dev, rng, aligned_empty):
    """The producer's deleter runs when pymetal is done with the memory, and not before."""
    import weakref
    for share in (True, False):
        a = aligned_empty((1 << 14,), np.float32) if share else random(rng, (1000,), np.float32)
        a[...] = 3.0
        alive = weakref.ref(a.base if a.base is not None else a)
        x = pm.from_dlpack(Producer(a))
        del a
        gc.collect()
        assert alive() is not None or not share  # a copy needs the producer no longer
        _churn(dev, 1 << 16, -1)
        assert float(pm.sum(x)) == 3.0 * x.size
        del x
        gc.collect()
        assert alive() is None  # deleter called: nothing leaked


def test_lifetime_export(dev, rng):
    """NumPy's array from a pymetal array keeps the pymetal memory alive after the Array is gone."""
    n = 1 << 16
    want = random(rng, (n,), np.float32)
    x = pm.asarray(want) * 1.0  # memory from pymetal's caching allocator
    got = np.from_dlpack(x)
    capsule_only = x.__dlpack__(max_version=(1, 0))  # a capsule nobody consumes is freed cleanly
    del x, capsule_only
    gc.collect()
    keep = _churn(dev, n * 4, -1)
    np.testing.assert_array_equal(got, want)
    del got, keep
    gc.collect()


def test_lifetime_import(dev, rng, aligned_empty):
    """A pymetal array made from a NumPy array keeps the NumPy memory alive."""
    a = aligned_empty((1 << 15,), np.float32)
    want = random(rng, a.shape, np.float32)
    a[...] = want
    x = pm.from_dlpack(a, copy=False)
    del a
    gc.collect()
    keep = _churn(dev, want.nbytes, -1)
    assert_same(x + 0, want)
    del keep


def test_torch(dev, rng):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (it is not a test dependency)")
    a = random(rng, (5, 7), np.float32)
    x = pm.asarray(a)
    t = torch.from_dlpack(x)
    assert tuple(t.shape) == (5, 7) and t.data_ptr() == x.numpy().ctypes.data
    t[0, 0] = 99.0
    assert float(x[0, 0]) == 99.0
    del x
    gc.collect()
    _churn(dev, a.nbytes, -1)
    assert float(t[0, 0]) == 99.0 and np.array_equal(t.numpy()[1:], a[1:])
    src = torch.arange(1 << 14, dtype=torch.float32)
    y = pm.from_dlpack(src)  # copied or shared depending on torch's allocation; the values either way
    assert_same(y, src.numpy())
    if src.data_ptr() % dev.page_size == 0:
        assert pm.from_dlpack(src, copy=False).numpy().ctypes.data == src.data_ptr()
    else:
        with pytest.raises(BufferError):
            pm.from_dlpack(src, copy=False)
