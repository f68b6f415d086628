"""Ordinary NumPy arrays as kernel arguments: used in place (the pages around
them wrapped) or copied, with the same results either way, nothing outside an
array's bytes touched, read-only arrays never written, and results copied back
once and only for buffers the kernel may write."""

import gc
import mmap
import sys
import threading

import numpy as np
import pytest

import pymetal as pm
from pymetal.runtime import native as _native
from pymetal.runtime import host_args as H, scratch as F
from conftest import PAGE, TYPED_NAMES, rss_bytes

SRC = r"""
#include <metal_stdlib>
using namespace metal;

kernel void inc(device float* out [[buffer(0)]], device const float* a [[buffer(1)]],
                uint i [[thread_position_in_grid]]) {
    out[i] = a[i] + 1.0f;
}

kernel void inc_n(device float* out [[buffer(0)]], device const float* a [[buffer(1)]],
                  constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = a[i] + 1.0f;
}

kernel void bump(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a[i] += 1.0f;
}

kernel void bump2(device float* a [[buffer(0)]], device float* b [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    a[i] += 1.0f;
    b[i] += 2.0f;
}

// Thread i writes a[i], then (after a device-memory barrier) reads b[i]: when
// b views a's memory one element on, it sees what thread i + 1 wrote.
kernel void write_then_read(device float* a [[buffer(0)]], device float* b [[buffer(1)]],
                            device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    a[i] = float(i) + 1000.0f;
    threadgroup_barrier(mem_flags::mem_device);
    out[i] = b[i];
}

kernel void access(device const float* a [[buffer(0)]], device float* b [[buffer(1)]],
                   constant float& c [[buffer(2)]], constant float* d [[buffer(4)]],
                   device const float* const e [[buffer(5)]], device float* const f [[buffer(6)]],
                   uint i [[thread_position_in_grid]]) {
    f[i] = b[i] = a[i] + c + d[i] + e[i];
}

kernel void touch_first(device float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    a[0] = b[0] + 1.0f;
}
"""

SMALL = 1000          # 4000 bytes: copied (under _HostArgs.WRAP_MIN)
BIG = 1 << 18         # 1 MiB: used in place


@pytest.fixture(scope="module")
def lib(dev):
    return pm.compile(SRC)


def _placed(n, dtype=np.float32, offset=0, fill=0xAB):
    """An array of n elements `offset` bytes past a page boundary inside a bigger
    buffer filled with `fill` bytes; returns (array, the whole buffer, start)."""
    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    raw = np.empty(nbytes + offset + 3 * PAGE, np.uint8)
    first = (-raw.ctypes.data) % PAGE + PAGE  # leave a page of other data before
    raw[...] = fill
    start = first + offset
    return raw[start:start + nbytes].view(dtype), raw, start


def _outside(raw, start, nbytes):
    return np.concatenate([raw[:start], raw[start + nbytes:]])


# ---- alignment: page-aligned or not, small (copied) and big (in place) ---------------------

OFFSETS = [0, 4, 16, 64, 4096 + 16, 8192 + 16, PAGE - 4]


@pytest.mark.parametrize("n", [SMALL, BIG])
@pytest.mark.parametrize("offset", OFFSETS)
def test_alignments_and_sentinels(lib, rng, n, offset):
    a = rng.standard_normal(n).astype(np.float32)
    out, raw, start = _placed(n, offset=offset)
    inp, raw_in, start_in = _placed(n, offset=(offset + 8) % PAGE)
    inp[...] = a
    lib.inc(out, inp, grid=n)
    np.testing.assert_array_equal(out, a + 1)
    np.testing.assert_array_equal(inp, a)
    # Nothing outside the arrays' bytes changed, though their pages hold other data.
    assert (_outside(raw, start, out.nbytes) == 0xAB).all()
    assert (_outside(raw_in, start_in, inp.nbytes) == 0xAB).all()


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_odd_element_slices(lib, rng, n):
    base = rng.standard_normal(n + 7).astype(np.float32)
    for k in (1, 3, 5):
        buf = base.copy()
        out = np.zeros(n, np.float32)
        lib.inc(out, buf[k:k + n], grid=n)
        np.testing.assert_array_equal(out, base[k:k + n] + 1)
        buf2 = base.copy()
        lib.bump(buf2[k:k + n], grid=n)
        expect = base.copy()
        expect[k:k + n] += 1
        np.testing.assert_array_equal(buf2, expect)


def test_unaligned_data_pointer(lib, rng):
    # NumPy marks float32 data at an odd byte address unaligned: copied, still right.
    raw = np.zeros(BIG * 4 + 8, np.uint8)
    x = raw[1:1 + BIG * 4].view(np.float32)
    assert not x.flags.aligned
    a = rng.standard_normal(BIG).astype(np.float32)
    x[...] = a
    lib.bump(x, grid=BIG)
    np.testing.assert_array_equal(x, a + 1)
    assert raw[0] == 0 and (raw[1 + BIG * 4:] == 0).all()


def test_small_heap_arrays(lib):
    for n in (1, 2, 3, 17, 255):
        a = np.arange(n, dtype=np.float32)
        out = np.empty(n, np.float32)
        lib.inc(out, a, grid=n)
        np.testing.assert_array_equal(out, np.arange(n) + 1)


@pytest.mark.parametrize("name", TYPED_NAMES)
@pytest.mark.parametrize("n", [SMALL, BIG])
def test_dtypes(typed_lib, rng, name, n):
    dtype = np.dtype(name)
    if dtype == np.bool_:
        a, b = rng.integers(0, 2, n).astype(bool), rng.integers(0, 2, n).astype(bool)
        expect = a | b
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        expect = (a.astype(np.int64) + b.astype(np.int64)).astype(dtype) if dtype.itemsize < 8 else a + b
    else:
        a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        expect = a + b
    x, y = a.copy(), b.copy()
    out, raw, start = _placed(n, dtype, offset=16)
    typed_lib.function("add_" + name)(x, y, out, grid=n)
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(x, a)
    assert (_outside(raw, start, out.nbytes) == 0xAB).all()


# ---- in place: several arguments in one memory ---------------------------------------------

@pytest.mark.parametrize("n", [256, BIG])
def test_overlapping_writeable_views_are_one_memory(lib, n):
    buf = np.zeros(n + 1, np.float32)
    buf[256] = 7.0
    out = np.zeros(256, np.float32)
    # One threadgroup of 256 threads: thread i reads buf[i + 1], written by thread i + 1.
    lib.write_then_read(buf[:n], buf[1:], out, grid=256, threadgroup=256)
    expect = np.arange(1, 257, dtype=np.float32) + 1000
    expect[-1] = 7.0  # buf[256]: no thread writes it
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(buf[:256], np.arange(256) + 1000)


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_input_and_output_overlapping_views(lib, rng, n):
    # out = buf[:n + 1] contains the input a = buf[:n]; the kernel writes out[i] = a[i] + 1.
    # The input (device const) must not be copied back over the results.
    for small_first in (False, True):
        init = rng.standard_normal(n + 1).astype(np.float32)
        buf = init.copy()
        if small_first:
            lib.inc(buf, buf[:n], grid=n)
        else:
            lib.inc(buf[:n + 1], buf[:n], grid=n)
        expect = init.copy()
        expect[:n] += 1
        np.testing.assert_array_equal(buf, expect)


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_copied_array_moves_in_place_when_a_later_one_overlaps_it(lib, n):
    # bump2 writes both: a small view copied first, then a big one over the same memory.
    buf = np.zeros(BIG + n, np.float32)
    lib.bump2(buf[:8], buf[:BIG], grid=8)
    expect = np.zeros(BIG + n, np.float32)
    expect[:8] = 3.0
    np.testing.assert_array_equal(buf, expect)


@pytest.mark.parametrize("n", [SMALL, BIG])
@pytest.mark.parametrize("offset", [0, 16])
def test_written_back_exactly_once(lib, n, offset):
    x, raw, start = _placed(n, offset=offset)
    x[...] = 5.0
    lib.bump(x, grid=n)
    np.testing.assert_array_equal(x, 6.0)
    # The same array twice is one buffer: both increments land, once each.
    lib.bump2(x, x, grid=n)
    np.testing.assert_array_equal(x, 9.0)
    # Two views of the same memory (distinct ndarray objects) too.
    lib.bump2(x[:], x.view(np.float32), grid=n)
    np.testing.assert_array_equal(x, 12.0)
    assert (_outside(raw, start, x.nbytes) == 0xAB).all()


@pytest.mark.parametrize("n", [SMALL, BIG])
def test_same_array_as_input_and_output(lib, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    x = a.copy()
    lib.inc(x, x, grid=n)
    np.testing.assert_array_equal(x, a + 1)


# ---- read-only arrays --------------------------------------------------------------------

@pytest.mark.parametrize("n", [SMALL, BIG])
def test_read_only_inputs_never_written(lib, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    ro = a.copy()
    ro.flags.writeable = False
    out = np.zeros(n, np.float32)
    lib.inc(out, ro, grid=n)
    np.testing.assert_array_equal(out, a + 1)
    # A kernel that may write the buffer is refused: its results would be lost.
    with pytest.raises(ValueError, match="read-only"):
        lib.bump(ro, grid=n)
    with pytest.raises(ValueError, match="read-only"):
        lib.bump2(ro, ro, grid=n)
    np.testing.assert_array_equal(ro, a)
    # A read-only view of writeable memory, next to an output in the same pages.
    buf = np.zeros(2 * n, np.float32)
    buf[:n] = a
    view = buf[:n]
    view.flags.writeable = False
    lib.inc(buf[n:], view, grid=n)
    with pytest.raises(ValueError, match="read-only"):
        lib.bump(view, grid=n)
    np.testing.assert_array_equal(buf[:n], a)
    np.testing.assert_array_equal(buf[n:], a + 1)


def test_read_only_memmap(lib, tmp_path):
    n = BIG
    path = tmp_path / "data.f32"
    np.arange(n, dtype=np.float32).tofile(path)
    m = np.memmap(path, np.float32, mode="r", offset=4, shape=(n - 1,))
    out = np.zeros(n - 1, np.float32)
    lib.inc(out, m, grid=n - 1)
    np.testing.assert_array_equal(out, np.arange(1, n) + 1)
    with pytest.raises(ValueError, match="read-only"):
        lib.bump(m, grid=n - 1)
    del m
    np.testing.assert_array_equal(np.fromfile(path, np.float32), np.arange(n))


# ---- huge and mmap'd arrays ----------------------------------------------------------------

def test_huge_mmap_arrays(lib, tmp_path):
    n = 16 << 20
    m = np.memmap(tmp_path / "big.f32", np.float32, mode="w+", offset=16, shape=(n,))
    m[:] = 1.0
    out = np.zeros(n, np.float32)
    lib.inc(out, m, grid=n)
    lib.bump(m, grid=n)
    assert out[0] == 2.0 and out[-1] == 2.0 and (out == 2.0).all()
    assert (m == 2.0).all()
    del m

    anon = mmap.mmap(-1, n * 4 + PAGE)
    x = np.frombuffer(anon, np.float32, count=n, offset=12)
    x[:] = 3.0
    lib.bump(x, grid=n)
    assert (x == 4.0).all()
    assert bytes(anon[:12]) == bytes(12)
    del x
    anon.close()


# ---- other cases -------------------------------------------------------------------------

def test_empty_and_non_contiguous(lib):
    big = np.zeros(BIG, np.float32)
    ones = np.ones(BIG + 8, np.float32)
    # Size-0 arrays (and size-0 views into big ones) bind a placeholder buffer.
    lib.inc_n(big[3:3], ones[5:5], np.uint32(0), grid=1)
    lib.inc_n(big, ones[5:5], np.uint32(0), grid=BIG)
    assert (big == 0).all()
    lib.inc_n(big, ones[5:BIG + 5], np.uint32(BIG), grid=BIG)
    assert (big == 2).all()
    with pytest.raises(ValueError, match=r"np\.ascontiguousarray"):
        lib.bump(big[::2], grid=BIG // 2)
    with pytest.raises(ValueError, match="not C-contiguous"):
        lib.inc(np.zeros(BIG, np.float32), big.reshape(512, 512).T, grid=BIG)
    assert (big == 2).all()


def test_buffer_access_query(lib):
    query = _native.lib().pm_kernel_buffer_access
    fn = lib.access
    got = [_native.out_i32(query, fn._handle, i) for i in range(8)]
    r, w, none = _native.PM_ACCESS_READ_ONLY, _native.PM_ACCESS_READ_WRITE, _native.PM_ACCESS_UNUSED
    assert got == [r, w, r, none, r, r, w, none]
    with pytest.raises(pm.Error):
        _native.out_i32(query, fn._handle, 31)


# ---- staging memory: reused, bounded; big writeable arrays are not copied ---------------------

def _in_new_thread(body):
    result = {}

    def run():
        try:
            result["value"] = body()
        except BaseException as e:  # re-raised in the test's thread
            result["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_big_writeable_arrays_are_not_copied(lib, rng):
    assert SMALL * 4 < H._HostArgs.WRAP_MIN <= BIG * 4
    a = rng.standard_normal(BIG + 1).astype(np.float32)[1:]  # 4 bytes past NumPy's start
    out = np.zeros(BIG, np.float32)

    def call():
        lib.inc(out, a, grid=BIG)
        s = F._tls.scratch
        return s.staging_bytes, [b for b in s.staging if b is not None]

    assert _in_new_thread(call) == (0, [])
    np.testing.assert_array_equal(out, a + 1)


def test_staging_reused_and_bounded(lib, rng, monkeypatch):
    n = 4 << 20  # 16 MiB: a copy of it is not reallocated per call
    a = rng.standard_normal(n).astype(np.float32)
    a.flags.writeable = False
    out = np.zeros(n, np.float32)

    def calls():
        lib.inc(out, a, grid=n)
        first = F._tls.scratch.staging[1]
        lib.inc(out, a, grid=n)
        return first, F._tls.scratch.staging[1]

    first, second = _in_new_thread(calls)
    assert first is not None and first is second
    np.testing.assert_array_equal(out, a + 1)

    monkeypatch.setattr(F._Scratch, "STAGING_KEEP", 1 << 20)

    def over_the_bound():
        lib.inc(out, a, grid=n)
        s = F._tls.scratch
        return s.staging_bytes, s.staging[1], s.temporary

    kept, slot, temporary = _in_new_thread(over_the_bound)
    assert kept == 0 and slot is None and temporary == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_many_calls_with_16m_arrays_do_not_grow_rss(lib):
    n = 16 << 20
    plain = np.ones(n, np.float32)          # NumPy's own allocation: not page-aligned
    shifted = np.ones(n + 1, np.float32)[1:]
    ro = np.ones(n, np.float32)
    ro.flags.writeable = False

    def call(i):
        # touch_first: the cost is binding the arguments, not the kernel.
        if i % 10 == 0:
            lib.touch_first(plain, ro, grid=1)  # ro is copied (64 MiB) into reused staging
        else:
            lib.touch_first(shifted if i % 2 else plain, plain, grid=1)

    for i in range(20):
        call(i)
    gc.collect()
    before = rss_bytes()
    for i in range(1000):
        call(i)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 8 << 20, "RSS grew by %.1f MB over 1,000 calls" % (grown / 2**20)
    lib.touch_first(plain, ro, grid=1)
    assert plain[0] == 2.0 and shifted[0] > 1.0
