"""Calls checked against the kernel's signature (issue 9): every case that used
to run without a word and compute garbage or lose work now raises, or works."""

import array
import pydoc
import threading

import numpy as np
import pytest

import pymetal as pm

SRC = r"""
#include <metal_stdlib>
using namespace metal;

struct Params { float scale; int offset; };

kernel void saxpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
kernel void echo(device float* f [[buffer(0)]], device int* n [[buffer(1)]], device half* h [[buffer(2)]],
                 constant float& fv [[buffer(3)]], constant int& iv [[buffer(4)]], constant half& hv [[buffer(5)]],
                 uint i [[thread_position_in_grid]]) {
    f[0] = fv; n[0] = iv; h[0] = hv;
}
kernel void helloABC(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                     device float* C [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    C[i] = A[i] + B[i];
}
kernel void fill(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = float(i) + 0.5f;
}
kernel void bytes_inc(device uchar* b [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    b[i] += 1;
}
kernel void count(device atomic_uint* c [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(c, 1u, memory_order_relaxed);
}
kernel void affine(device const float4* x [[buffer(0)]], device float4* out [[buffer(1)]],
                   constant Params& p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    out[i] = x[i] * p.scale + float(p.offset);
}
kernel void shared_sum(device float* x [[buffer(0)]], threadgroup float* t [[threadgroup(0)]],
                       uint lid [[thread_index_in_threadgroup]]) {
    t[lid] = x[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) { float s = 0; for (uint k = 0; k < 4; k++) s += t[k]; x[0] = s; }
}
// simdgroups waiting at different barriers: an error when it runs (a deadlock on a GPU)
kernel void diverge(device float* x [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
    if (lid >= 32) { threadgroup_barrier(mem_flags::mem_threadgroup); return; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x[lid] = 1.0f;
}
"""


@pytest.fixture(scope="module")
def lib(dev):
    return pm.compile(SRC)


# ---- signatures --------------------------------------------------------------------------

def test_signature_repr_and_help(lib):
    assert [repr(a) for a in lib.saxpy.arguments] == [
        "x: device const float*", "y: device float*", "a: constant float&"]
    assert "saxpy(x: device const float*, y: device float*, a: constant float&)" in repr(lib.saxpy)
    assert "saxpy(x: device const float*, y: device float*, a: constant float&)" in pydoc.render_doc(lib.saxpy)
    x, y, a = lib.saxpy.arguments
    assert (x.index, x.writable, x.dtype, x.form) == (0, False, np.float32, "pointer")
    assert (y.writable, a.form, a.space, a.size) == (True, "reference", "constant", 4)
    assert [repr(a) for a in lib.affine.arguments] == [
        "x: device const float4*", "out: device float4*", "p: constant Params&"]
    assert lib.affine.arguments[0].lanes == 4 and lib.affine.arguments[2].size == 8
    assert repr(lib.count.arguments[0]) == "c: device atomic_uint*"


# ---- scalars are converted to the declared type -------------------------------------------

def _echo(lib, fv, iv, hv):
    f, n, h = np.zeros(1, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float16)
    lib.echo(f, n, h, fv, iv, hv, grid=1)
    return f[0], n[0], h[0]


def test_scalars_converted_to_the_declared_type(lib):
    assert _echo(lib, 3, 7, 2.0) == (3.0, 7, 2.0)       # an int for float& is 3.0f, 2.0 for half& is 2.0h
    assert _echo(lib, np.int16(-4), np.uint8(9), np.float32(0.5)) == (-4.0, 9, 0.5)
    assert _echo(lib, True, False, 1) == (1.0, 0, 1.0)


@pytest.mark.parametrize("args, error, match", [
    ((1.0, 2.0, 1.0), TypeError, r"iv: constant int&: a float for an integer parameter"),
    ((1.0, 2.5, 1.0), TypeError, "integer parameter"),
    ((1.0, np.float32(2.0), 1.0), TypeError, "integer parameter"),
    ((1e300, 1, 1.0), OverflowError, r"fv: constant float&: out of range for float"),
    ((1.0, 1, 1e5), OverflowError, r"hv: constant half&: out of range for half"),
    ((1.0, 1 << 31, 1.0), OverflowError, r"out of range for int \(-2147483648 to 2147483647\)"),
    ((1.0, 1, "2"), TypeError, "cannot pass str"),
    ((1.0, 1, None), TypeError, "NoneType"),
])
def test_bad_scalars_refused(lib, args, error, match):
    with pytest.raises(error, match=match):
        _echo(lib, *args)


def test_bytes_only_for_values_of_their_size(lib, rng):
    x = rng.standard_normal(16).astype(np.float32).reshape(4, 4)
    out = np.zeros((4, 4), np.float32)
    params = np.dtype([("scale", np.float32), ("offset", np.int32)])
    lib.affine(x, out, np.array((2.0, 1), params)[()], grid=4)
    np.testing.assert_allclose(out, x * 2 + 1, rtol=1e-5, atol=1e-6)
    lib.affine(x, out, np.array((3.0, -1), params).tobytes(), grid=4)
    np.testing.assert_allclose(out, x * 3 - 1, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="12 bytes for p: constant Params&, which takes 8 bytes"):
        lib.affine(x, out, b"\0" * 12, grid=4)
    with pytest.raises(TypeError, match="bytes are passed by value"):
        lib.affine(x, b"\0" * 64, b"\0" * 8, grid=4)
    with pytest.raises(TypeError, match=r"pass a value of 8 bytes"):
        lib.affine(x, out, 2.0, grid=4)


# ---- arrays must match the element type --------------------------------------------------

def test_array_dtype_must_match_the_pointee(lib, dev):
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(TypeError, match=r"a int32 array for x: device const float\*"):
        lib.saxpy(x.astype(np.int32), np.ones(8, np.float32), 1.0, grid=8)
    out = np.zeros(8, np.uint8)
    with pytest.raises(TypeError, match=r"a uint8 array for y: device float\*"):
        lib.saxpy(x, out, 1.0, grid=8)
    assert not out.any()
    with pytest.raises(TypeError, match="float16"):
        lib.saxpy(pm.asarray(x.astype(np.float16)), pm.zeros(8), 1.0, grid=8)
    # pymetal's own kernels too
    h = np.ones(8, np.float16)
    with pytest.raises(TypeError, match=r"a float16 array for .*float\*"):
        pm.shaders().add_float32(h, h, np.zeros(8, np.float32), grid=8)
    # The escape hatch: raw=True binds the bytes as they are.
    y = np.zeros(8, np.float32)
    lib.saxpy(np.arange(8, dtype=np.float32).view(np.int32), y, 1.0, grid=8, raw=True)
    np.testing.assert_array_equal(y, np.arange(8, dtype=np.float32))


def test_raw_byte_pointees_take_any_dtype(lib):
    a = np.arange(4, dtype=np.uint32)
    lib.bytes_inc(a, grid=16)  # device uchar*: the bytes of the uint32s
    np.testing.assert_array_equal(a, np.arange(4, dtype=np.uint32) + 0x01010101)


# ---- the number of arguments ------------------------------------------------------------------

def test_extra_arguments_refused(lib):
    # metalcompute's order fn(count, A, B, C) used to overwrite B.
    n = 16
    a, b, c = np.ones(n, np.float32), np.full(n, 2, np.float32), np.zeros(n, np.float32)
    with pytest.raises(TypeError, match=r"helloABC\(\) takes 3 arguments \(A, B, C\), 4 given"):
        lib.helloABC(n, a, b, c, grid=n)
    np.testing.assert_array_equal(b, 2)
    with pytest.raises(TypeError, match="2 given"):
        lib.helloABC(a, b, grid=n)


# ---- buffers: what the kernel writes comes back, or the call is refused -----------------------

def test_scalars_and_bytes_refused_for_pointers(lib):
    for bad in (b"\0" * 16, 3, 2.0, np.float32(1)):
        with pytest.raises(TypeError, match=r"out: device float\*"):
            lib.fill(bad, grid=4)


def test_writable_buffer_objects_get_the_results(lib):
    expect = np.arange(8, dtype=np.float32) + 0.5
    m = memoryview(bytearray(32)).cast("f")
    lib.fill(m, grid=8)
    np.testing.assert_array_equal(np.frombuffer(m, np.float32), expect)
    a = array.array("f", [0.0] * 8)
    lib.fill(a, grid=8)
    np.testing.assert_array_equal(np.array(a, np.float32), expect)
    b = bytearray(32)
    with pytest.raises(TypeError, match="uint8 array"):
        lib.fill(b, grid=8)
    lib.fill(b, grid=8, raw=True)
    np.testing.assert_array_equal(np.frombuffer(b, np.float32), expect)
    c = bytearray(b"\x01\x02\x03")
    lib.bytes_inc(c, grid=3)
    assert c == b"\x02\x03\x04"
    counter = array.array("I", [5])
    lib.count(counter, grid=100)
    assert counter[0] == 105


def test_read_only_array_where_the_kernel_writes(lib):
    y = np.ones(8, np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match=r"read-only, but the kernel may write y: device float\*"):
        lib.saxpy(np.ones(8, np.float32), y, 2.0, grid=8)
    with pytest.raises(ValueError, match="read-only"):
        lib.fill(memoryview(bytes(32)).cast("f"), grid=8)
    np.testing.assert_array_equal(y, 1)


def test_threadgroup_parameters_need_memory(lib):
    x = np.arange(4, dtype=np.float32)
    assert repr(lib.shared_sum.arguments[1]) == "t: threadgroup float*"
    with pytest.raises(pm.Error, match=r"\[\[threadgroup\(0\)\]\] \(t: threadgroup float\*\), which this dispatch gives no memory"):
        lib.shared_sum(x, grid=4, threadgroup=4)
    lib.shared_sum(x, grid=4, threadgroup=4, threadgroup_memory=16)
    assert x[0] == 6


# ---- memory pymetal does not own -----------------------------------------------------------------

def test_foreign_memory_sees_results_when_the_call_returns(lib, aligned_empty):
    host = aligned_empty(4096, np.float32)
    host[:] = 0
    before = host[:10]  # a view taken before
    x = pm.asarray(host)
    assert x._buf.foreign
    lib.fill(x, grid=4096)  # all-pymetal arguments: asynchronous, unless the memory is foreign
    np.testing.assert_array_equal(host, np.arange(4096, dtype=np.float32) + 0.5)
    np.testing.assert_array_equal(before, np.arange(10, dtype=np.float32) + 0.5)
    x += 1  # the array library's own kernels likewise
    np.testing.assert_array_equal(host[:3], [1.5, 2.5, 3.5])


# ---- errors where they were caused ----------------------------------------------------------------

def test_kernel_errors_go_to_the_thread_that_caused_them(lib):
    """One thread issues failing calls while others dispatch: every other
    thread's results are right, and its errors are its own."""
    failures = []
    wrong = []

    def failing():
        x = pm.zeros(64)
        for _ in range(30):
            lib.diverge(x, groups=1, threadgroup=64)  # fails when it runs
            try:
                pm.synchronize()
                wrong.append("a failed call raised nothing")
            except pm.KernelError as e:
                if "diverge" not in str(e):
                    wrong.append(str(e))
                failures.append(e)

    def good(k):
        for j in range(100):
            n = 64 + k * 7 + j
            a = pm.asarray(np.arange(n, dtype=np.float32))
            out = pm.zeros(n)
            try:
                lib.helloABC(a, a, out, grid=n)  # asynchronous
                if j % 3 == 0:
                    host = np.zeros(n, np.float32)
                    lib.helloABC(np.arange(n, dtype=np.float32), np.ones(n, np.float32), host, grid=n)  # synchronous
                    if not (host == np.arange(n) + 1).all():
                        wrong.append("synchronous call of thread %d did not run" % k)
                if not (out.numpy() == 2 * np.arange(n)).all():
                    wrong.append("asynchronous call of thread %d did not run" % k)
            except pm.KernelError as e:
                wrong.append("thread %d got another thread's error: %s" % (k, e))

    threads = [threading.Thread(target=failing)] + [threading.Thread(target=good, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads)
    assert not wrong, wrong[:5]
    assert len(failures) == 30


# ---- sizes -----------------------------------------------------------------------------------------

def test_sizes_range_checked(lib, dev):
    with pytest.raises(ValueError, match="cannot allocate"):
        pm.empty((2 ** 64,), np.uint8)
    with pytest.raises(ValueError, match="cannot allocate"):
        pm.empty((2 ** 40, 2 ** 30), np.float32)
    out = pm.zeros(8)
    lib.fill(out, grid=(8,))  # caches the launch configuration of (8,)
    with pytest.raises(TypeError, match=r"grid= must be an int or a tuple"):
        lib.fill(out, grid=(8.0,))
    with pytest.raises(TypeError, match=r"grid= must be an int or a tuple"):
        lib.fill(out, grid=8.0)
    with pytest.raises(TypeError, match="device= must be a pymetal Device"):
        pm.compile(SRC, device="x")
    with pytest.raises(TypeError, match="device= must be a pymetal Device"):
        pm.shaders(device="x")
    with pytest.raises(ValueError, match="threadgroup memory"):
        lib.fill(out, grid=8, threadgroup_memory=1 << 40)


# ---- compile diagnostics ----------------------------------------------------------------------

def test_duplicate_kernel_names_and_nul_bytes(dev):
    src = "kernel void k(device float* x [[buffer(0)]]) {}\nkernel void k2(device float* x [[buffer(0)]]) {}\n"
    with pytest.raises(pm.CompileError, match="'k' is already defined"):
        pm.compile(src + src.replace("k2", "k3"))
    with pytest.raises(pm.CompileError, match="NUL character at offset 4"):
        pm.compile("kern\0el void k() {}")
