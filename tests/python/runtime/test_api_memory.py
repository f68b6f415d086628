"""Buffer lifetimes: release on garbage collection, no growth over many cycles."""

import gc
import sys
import weakref
from ctypes import byref, c_uint64

import numpy as np
import pytest

import pymetal as pm
from pymetal.runtime import native as _native

MB = 1 << 20


def _handle_alive(handle):
    return _native.lib().pm_buffer_length(byref(c_uint64()), handle) == 0


def test_buffer_released_when_array_collected(dev):
    x = pm.empty(1000, np.float32)
    h = x._buf.handle
    assert _handle_alive(h)
    w = weakref.ref(x)
    del x
    gc.collect()
    assert w() is None
    pm.clear_cache()  # collected memory returns to the array allocator's cache first
    assert not _handle_alive(h)


def test_numpy_view_keeps_buffer(dev):
    x = pm.full(100, 3.0)
    h = x._buf.handle
    v = x.numpy()[10:]
    del x
    gc.collect()
    assert _handle_alive(h)
    assert v[0] == 3.0
    del v
    gc.collect()
    pm.clear_cache()  # collected memory returns to the array allocator's cache first
    assert not _handle_alive(h)


def test_shared_buffer_released_after_last_user(dev):
    x = pm.zeros(100)
    h = x._buf.handle
    y = pm.asarray(x.numpy()[50:])
    del x
    gc.collect()
    assert _handle_alive(h)
    del y
    gc.collect()
    pm.clear_cache()  # collected memory returns to the array allocator's cache first
    assert not _handle_alive(h)


def test_release_right_after_async_dispatch(basic_lib):
    # The engine keeps memory alive for pending work: dropping arrays at once is safe.
    keep = pm.zeros(1 << 16, np.float32)
    for _ in range(50):
        a = pm.full(1 << 16, 1.0)
        b = pm.full(1 << 16, 2.0)
        out = pm.empty(1 << 16, np.float32)
        basic_lib.add(a, b, out, grid=1 << 16)
        basic_lib.add(out, keep, keep, grid=1 << 16)
        del a, b, out
    assert (keep.numpy() == 150.0).all()


def test_wrapped_numpy_memory_kept_until_release(dev, aligned_empty):
    a = aligned_empty(8192, np.float32)
    a[...] = 5.0
    w = weakref.ref(a.base if a.base is not None else a)
    x = pm.asarray(a)
    del a
    gc.collect()
    assert w() is not None  # the pymetal array keeps the NumPy memory alive
    assert (x.numpy() == 5.0).all()
    del x
    gc.collect()
    assert w() is None


def _rss():
    from conftest import rss_bytes

    return rss_bytes()


def _rss_growth(cycle, warm_up, cycles):
    """How much the resident set grows over `cycles` calls of cycle(i), after `warm_up` calls (caches,
    staging buffers, allocator pools)."""
    for i in range(warm_up):
        cycle(i)
    gc.collect()
    pm.synchronize()
    before = _rss()
    for i in range(cycles):
        cycle(i)
    gc.collect()
    pm.synchronize()
    return _rss() - before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_no_growth_over_many_cycles(basic_lib, aligned_empty):
    scale = basic_lib.scale
    host = np.ones(4096, np.float32)
    aligned = aligned_empty(4096, np.float32)

    def cycle(i):
        x = pm.empty(4096 + (i % 7) * 100, np.float32)
        x.numpy()[...] = 1.0
        scale(x, 2.0, grid=x.size)
        y = pm.asarray(host)
        scale(y, 1.0, grid=host.size)
        scale(host, 1.0, grid=host.size)
        scale(aligned, 1.0, grid=aligned.size)
        if i % 100 == 0:
            assert x.numpy()[0] == 2.0
        del x, y

    grown = _rss_growth(cycle, 2000, 10000)
    assert grown < 4 * MB, "RSS grew by %.1f MB over 10,000 cycles" % (grown / MB)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_no_growth_large_arrays(basic_lib):
    n = 1 << 20  # 4 MB per array

    def cycle(i):
        x = pm.zeros(n, np.float32)
        basic_lib.scale(x, 2.0, grid=n)
        a = np.ones(n, np.float32)
        basic_lib.scale(a, 2.0, grid=n)
        del x, a

    grown = _rss_growth(cycle, 20, 200)
    assert grown < 16 * MB, "RSS grew by %.1f MB over 200 cycles of 4 MB arrays" % (grown / MB)
