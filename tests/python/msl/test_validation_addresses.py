"""Validation builds: `&p[i]` on a checked pointer is an address, not an access.

C++ allows the address one past the end (`device float *end = &a[n];`, a loop's bound). Through
the checked pointer's operator[] it was an out-of-bounds access, and its scratch memory became the
loop's end, so a validation build ran past the buffer and crashed where the plain build was right.
Now `&p[i]` checks i as an address (0 <= i <= n) and gives the real one; accesses through it are
checked as before. Atomic buffers are checked pointers too (they were left unchecked): `&counts[b]`
as an atomic's argument catches a bin out of range, and the buffer itself or a pointer into it as
the argument (ggml's `atomic_fetch_add_explicit(dst, ...)`) is checked where it points.
"""

import numpy as np
import pytest

import pymetal as pm

VALIDATION = {"PM_VALIDATION": 1}
MODES = [False, True]
IDS = ["plain", "validation"]

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

kernel void range_sum(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                      constant uint &n [[buffer(2)]], constant uint &at [[buffer(3)]],
                      uint tid [[thread_position_in_grid]]) {
    device const float *end = &a[n];          // one past the end: allowed
    float s = 0;
    for (device const float *p = &a[at]; p != end; ++p) s += *p;
    out[tid] = s + float(end - &a[0]);
}

kernel void at_address(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                       constant uint &at [[buffer(2)]], uint tid [[thread_position_in_grid]]) {
    device const float *p = &a[at];
    out[tid] = at < 8 ? p[0] : 0.0f;
}

kernel void histogram(device const uint *x [[buffer(0)]], device atomic_uint *counts [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(&counts[x[i]], 1u, memory_order_relaxed);
}

// ggml's idiom: the atomic buffer itself (or a pointer into it) is the atomic function's argument
kernel void total(device const int *x [[buffer(0)]], device atomic_int *dst [[buffer(1)]],
                  constant uint &slot [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(dst, x[i], memory_order_relaxed);
    atomic_fetch_max_explicit(dst + slot, x[i], memory_order_relaxed);
}

struct P { float x, y, z, w; };

kernel void masks(device const uint *a [[buffer(0)]], device uint *out [[buffer(1)]], device const P *v [[buffer(2)]],
                  uint i [[thread_position_in_grid]]) {
    uint m = 0xF0F0u;
    device const float *lane = &v[i].y;       // a member's address: an access of v[i], as before
    out[i] = (m & a[i]) + uint(*lane);         // a binary &: left alone
}
"""


@pytest.fixture(scope="module", params=MODES, ids=IDS)
def lib(request):
    return pm.compile(SOURCE, defines=VALIDATION if request.param else None)


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_end_pointer_one_past_the_end(lib, n):
    a = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = np.zeros(3, np.float32)
    for at in (0, n // 2, n):  # at == n: the empty range, also one past the end
        lib.range_sum(a, out, np.uint32(n), np.uint32(at), grid=3)
        pm.synchronize()
        np.testing.assert_allclose(out, a[at:].sum(dtype=np.float32) + n, rtol=1e-5)


def test_address_past_one_beyond_the_end_is_reported():
    lib = pm.compile(SOURCE, defines=VALIDATION)
    a = np.ones(8, np.float32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 9 of `a`"):
        lib.at_address(a, np.zeros(1, np.float32), np.uint32(9), grid=1)
        pm.synchronize()
    out = np.zeros(1, np.float32)
    lib.at_address(a, out, np.uint32(8), grid=1)  # one past the end: an address, not reported
    pm.synchronize()
    assert out[0] == 0


@pytest.mark.parametrize("n", [1, 100, 4099])
def test_atomics_through_addresses(lib, n):
    x = np.random.default_rng(n).integers(0, 16, n).astype(np.uint32)
    counts = np.zeros(16, np.uint32)
    lib.histogram(x, counts, grid=n)
    pm.synchronize()
    np.testing.assert_array_equal(counts, np.bincount(x, minlength=16))


def test_atomic_bin_out_of_range_is_still_caught():
    lib = pm.compile(SOURCE, defines=VALIDATION)
    x = np.array([0, 3, 16, 1], np.uint32)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 16 of `counts`"):
        lib.histogram(x, np.zeros(16, np.uint32), grid=4)
        pm.synchronize()


@pytest.mark.parametrize("n", [1, 100, 4099])
def test_atomic_buffer_as_the_argument(lib, n):
    x = np.random.default_rng(n).integers(-50, 50, n).astype(np.int32)
    dst = np.array([0, -1000], np.int32)
    lib.total(x, dst, np.uint32(1), grid=n)
    pm.synchronize()
    np.testing.assert_array_equal(dst, [x.sum(), max(x.max(), -1000)])


def test_atomic_pointer_past_the_end_is_caught():
    lib = pm.compile(SOURCE, defines=VALIDATION)
    with pytest.raises(pm.KernelError, match=r"out of bounds: element 2 of `dst`"):
        lib.total(np.ones(4, np.int32), np.zeros(2, np.int32), np.uint32(2), grid=4)
        pm.synchronize()


@pytest.mark.parametrize("n", [1, 33])
def test_member_addresses_and_binary_and(lib, n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 1 << 20, n).astype(np.uint32)
    v = rng.integers(0, 100, (n, 4)).astype(np.float32)
    out = np.zeros(n, np.uint32)
    lib.masks(a, out, v, grid=n)
    pm.synchronize()
    np.testing.assert_array_equal(out, (a & 0xF0F0) + v[:, 1].astype(np.uint32))
