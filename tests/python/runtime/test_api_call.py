"""Calling kernels: argument binding, grids, threadgroups, sync and async."""

import numpy as np
import pytest

import pymetal as pm
from conftest import TYPED_NAMES

SIZES = [1, 7, 255, 256, 257, 1000, 4099]
LARGE = [1 << 20, (4 << 20) + 3]


def _random(rng, n, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=n).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if dtype.itemsize >= 4:  # no signed overflow in the kernel
            lo, hi = max(info.min, -(1 << 30)), min(info.max, 1 << 30)
        else:
            lo, hi = info.min, info.max
        return rng.integers(lo, hi, size=n, dtype=dtype, endpoint=True)
    return rng.standard_normal(size=n).astype(dtype)


def _expected_add(a, b):
    if a.dtype == np.bool_:
        return a | b
    if a.dtype.kind in "iu":
        return (a + b).astype(a.dtype)  # wraps like the kernel
    return a + b


def _check(out, expected):
    if out.dtype == np.float16:
        np.testing.assert_allclose(out.astype(np.float32), expected.astype(np.float32), rtol=2e-3, atol=2e-3)
    elif out.dtype == np.float32:
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(out, expected)


# ---- results against NumPy ----------------------------------------------------------

@pytest.mark.parametrize("n", SIZES + LARGE)
def test_add_numpy_arrays(basic_lib, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.empty(n, np.float32)
    basic_lib.add(a, b, out, grid=n)
    np.testing.assert_array_equal(out, a + b)


@pytest.mark.parametrize("n", SIZES + LARGE)
def test_add_pymetal_arrays(basic_lib, rng, n):
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    x, y, z = pm.asarray(a), pm.asarray(b), pm.empty(n, np.float32)
    basic_lib.add(x, y, z, grid=n)
    np.testing.assert_array_equal(z.numpy(), a + b)


@pytest.mark.parametrize("name", TYPED_NAMES)
@pytest.mark.parametrize("n", [1, 33, 1000])
def test_add_dtypes(typed_lib, rng, name, n):
    dtype = np.dtype(name)
    a, b = _random(rng, n, dtype), _random(rng, n, dtype)
    out = np.zeros(n, dtype)
    typed_lib.function("add_" + name)(a, b, out, grid=n)
    _check(out, _expected_add(a, b))
    # the same through pymetal arrays (asynchronous)
    x, y, z = pm.asarray(a), pm.asarray(b), pm.zeros(n, dtype)
    typed_lib.function("add_" + name)(x, y, z, grid=n)
    _check(z.numpy(), _expected_add(a, b))


def test_grid_larger_than_data_guarded(basic_lib, rng):
    n = 1000
    a = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    basic_lib.add_n(a, a, out, np.uint32(n), grid=1024)
    np.testing.assert_array_equal(out, 2 * a)
    basic_lib.add_n(a, a, out, n, grid=(1024,), threadgroup=(64,))  # Python int -> uint
    np.testing.assert_array_equal(out, 2 * a)


def test_in_place_with_float_scalar(basic_lib, rng):
    a = rng.standard_normal(513).astype(np.float32)
    x = a.copy()
    basic_lib.scale(x, 2.5, grid=x.size)
    np.testing.assert_allclose(x, a * np.float32(2.5), rtol=1e-6)
    basic_lib.scale(x, np.float32(0.5), grid=x.size)
    np.testing.assert_allclose(x, a * np.float32(2.5) * np.float32(0.5), rtol=1e-6)


def test_saxpy_mixed_pymetal_and_numpy(basic_lib, rng):
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    ym = pm.asarray(y.copy())
    basic_lib.saxpy(x, ym, np.float32(3.0), grid=n)  # NumPy x: synchronous
    np.testing.assert_allclose(ym.numpy(), 3 * x + y, rtol=1e-5, atol=1e-6)


def test_iota_large_uint(basic_lib):
    n = 4 << 20
    out = pm.empty(n, np.uint32)
    basic_lib.iota(out, grid=n)
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype=np.uint32))


# ---- scalars -------------------------------------------------------------------------

def _echo(basic_lib, *scalars):
    outs = [np.zeros(1, t) for t in (np.int32, np.uint32, np.float32, np.uint8,
                                     np.int64, np.uint64, np.float16, np.int16)]
    basic_lib.echo_scalars(*outs, *scalars, grid=1)
    return [o[0] for o in outs]


def test_scalar_arguments_numpy(basic_lib):
    vals = _echo(basic_lib, np.int32(-5), np.uint32(4000000000), np.float32(1.25), np.bool_(True),
                 np.int64(-(1 << 40)), np.uint64((1 << 63) + 5), np.float16(0.5), np.int16(-300))
    assert vals == [-5, 4000000000, 1.25, 1, -(1 << 40), (1 << 63) + 5, 0.5, -300]


def test_scalar_arguments_python(basic_lib):
    vals = _echo(basic_lib, -7, 3000000000, 0.75, True,
                 np.int64(1 << 35), np.uint64(3), np.float16(-2.0), np.int16(12))
    assert vals == [-7, 3000000000, 0.75, 1, 1 << 35, 3, -2.0, 12]
    vals = _echo(basic_lib, 0, 0, -1.5, False, np.int64(0), np.uint64(0), np.float16(0), np.int16(0))
    assert vals[:4] == [0, 0, -1.5, 0]


def test_bytes_argument(basic_lib):
    vals = _echo(basic_lib, (-9).to_bytes(4, "little", signed=True), (7).to_bytes(4, "little"),
                 np.float32(2.0).tobytes(), b"\x01", np.int64(1).tobytes(),
                 np.uint64(2).tobytes(), np.float16(1.0).tobytes(), np.int16(3).tobytes())
    assert vals == [-9, 7, 2.0, 1, 1, 2, 1.0, 3]


def test_structured_scalar(basic_lib, rng):
    params = np.dtype([("scale", np.float32), ("offset", np.int32), ("n", np.uint32)])
    n = 500
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(512, np.float32)
    p = np.array((2.0, -3, n), dtype=params)[()]
    assert isinstance(p, np.void)
    basic_lib.affine(x, out, p, grid=512)
    np.testing.assert_allclose(out[:n], x * 2 - 3, rtol=1e-6, atol=1e-6)
    assert not out[n:].any()


def test_int_out_of_range(basic_lib):
    a = np.zeros(4, np.float32)
    with pytest.raises(OverflowError, match=r"n: constant uint&: out of range for uint"):
        basic_lib.add_n(a, a, a, 1 << 32, grid=4)
    with pytest.raises(OverflowError, match="out of range"):
        basic_lib.add_n(a, a, a, -1, grid=4)


@pytest.mark.parametrize("bad", ["text", None, [1, 2], object(), 1 + 2j, {"a": 1}])
def test_bad_argument_types(basic_lib, bad):
    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError) as e:
        basic_lib.add(a, a, bad, grid=4)
    assert "argument 2" in str(e.value)
    assert type(bad).__name__ in str(e.value)


def test_float64_scalar_converted_float64_array_refused(basic_lib):
    a = np.ones(4, np.float32)
    basic_lib.scale(a, np.float64(2.0), grid=4)  # a scalar is converted to the declared float
    np.testing.assert_array_equal(a, 2)
    with pytest.raises(TypeError, match="float64"):
        basic_lib.add(a, a, np.zeros(4), grid=4)


def test_bytes_must_match_the_parameter(basic_lib):
    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"4097 bytes for s: constant float&, which takes 4 bytes"):
        basic_lib.scale(a, b"\0" * 4097, grid=4)


def test_argument_count_checked(basic_lib):
    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"nop\(\) takes 1 argument \(x\), 32 given"):
        basic_lib.nop(*([a] * 32), grid=1)


# ---- NumPy argument handling ------------------------------------------------------------

def test_non_contiguous_numpy_refused(basic_lib):
    a = np.zeros(20, np.float32)
    with pytest.raises(ValueError, match=r"np\.ascontiguousarray"):
        basic_lib.add(a[::2], a[::2], a[:10], grid=10)
    f = np.zeros((4, 4), np.float32, order="F")
    with pytest.raises(ValueError, match="contiguous"):
        basic_lib.scale(f, 1.0, grid=16)


def test_unaligned_numpy_is_copied_back(basic_lib, rng, unaligned_copy):
    a = unaligned_copy(rng.standard_normal(3000).astype(np.float32))
    b = unaligned_copy(rng.standard_normal(3000).astype(np.float32))
    out = unaligned_copy(np.zeros(3000, np.float32))
    basic_lib.add(a, b, out, grid=3000)
    np.testing.assert_array_equal(out, a + b)


def test_aligned_numpy_is_used_in_place(basic_lib, rng, aligned_empty):
    a = aligned_empty(10000, np.float32)
    a[...] = rng.standard_normal(10000)
    expect = a * np.float32(3.0)
    basic_lib.scale(a, 3.0, grid=a.size)
    np.testing.assert_allclose(a, expect, rtol=1e-6)


def test_read_only_input_not_written_back(basic_lib, rng):
    a = rng.standard_normal(100).astype(np.float32)
    a.flags.writeable = False
    out = np.zeros(100, np.float32)
    basic_lib.add(a, a, out, grid=100)
    np.testing.assert_array_equal(out, a + a)


def test_numpy_view_of_pymetal_memory(basic_lib):
    x = pm.asarray(np.arange(100, dtype=np.float32))
    basic_lib.scale(x.numpy()[50:], 2.0, grid=50)  # bound as buffer + offset
    expect = np.arange(100, dtype=np.float32)
    expect[50:] *= 2
    np.testing.assert_array_equal(x.numpy(), expect)
    basic_lib.scale(x[10:20], -1.0, grid=10)  # indexing gives such views too
    expect[10:20] *= -1
    np.testing.assert_array_equal(x.numpy(), expect)


def test_empty_arrays_allowed(basic_lib):
    e = np.zeros(0, np.float32)
    basic_lib.nop(e, grid=1)
    basic_lib.nop(pm.empty(0), grid=1)
    basic_lib.nop(np.zeros((0, 5), np.float32), grid=(1, 1))
    with pytest.raises(ValueError):
        basic_lib.nop(e, grid=0)


def test_same_array_twice(basic_lib, rng):
    a = rng.standard_normal(77).astype(np.float32)
    out = a.copy()
    basic_lib.add(out, out, out, grid=77)
    np.testing.assert_array_equal(out, a + a)


def test_same_array_as_input_after_output(basic_lib, rng, unaligned_copy, aligned_empty):
    # saxpy writes [[buffer(1)]] and reads [[buffer(0)]]: y = 2y + y when both are y.
    for make in (lambda a: a.copy(), unaligned_copy, None):
        a = rng.standard_normal(300).astype(np.float32)
        if make is None:
            y = aligned_empty(300, np.float32)
            y[...] = a
        else:
            y = make(a)
        basic_lib.saxpy(y, y, np.float32(2.0), grid=300)
        np.testing.assert_allclose(y, 3 * a, rtol=1e-6)


def test_matrix_subclass_and_2d_numpy(basic_lib, rng):
    a = rng.standard_normal((30, 40)).astype(np.float32)
    out = np.zeros_like(a)
    basic_lib.add(a, a, out, grid=a.size)
    np.testing.assert_array_equal(out, 2 * a)


# ---- grids, groups and threadgroups ------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (64, 64), (100, 37), (1, 300), (513, 2)])
def test_2d_grid(basic_lib, shape):
    w, h = shape
    out = pm.zeros(w * h, np.uint32)
    basic_lib.index2d(out, np.uint32(w), grid=(w, h))
    ys, xs = np.divmod(np.arange(w * h), w)
    np.testing.assert_array_equal(out.numpy(), ys * 10000 + xs)


@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 4, 3), (16, 8, 9), (33, 2, 5)])
def test_3d_grid(basic_lib, shape):
    w, h, d = shape
    out = np.zeros(w * h * d, np.uint32)
    basic_lib.index3d(out, w, h, grid=shape)
    idx = np.arange(w * h * d)
    z, rem = np.divmod(idx, w * h)
    y, x = np.divmod(rem, w)
    np.testing.assert_array_equal(out, z * 1000000 + y * 1000 + x)


@pytest.mark.parametrize("tg", [1, 32, 64, 100, 256])
def test_explicit_threadgroup(basic_lib, tg):
    n = 1000
    out = np.zeros(n, np.uint32)
    basic_lib.group_ids(out, grid=n, threadgroup=tg)
    i = np.arange(n)
    np.testing.assert_array_equal(out, (i // tg) * 100000 + i % tg)


@pytest.mark.parametrize("groups,tg", [(1, 1), (4, 64), ((10,), (32,)), (3, 256)])
def test_groups(basic_lib, groups, tg):
    g = groups[0] if isinstance(groups, tuple) else groups
    t = tg[0] if isinstance(tg, tuple) else tg
    out = np.zeros(g * t, np.uint32)
    basic_lib.group_ids(out, groups=groups, threadgroup=tg)
    i = np.arange(g * t)
    np.testing.assert_array_equal(out, (i // t) * 100000 + i % t)


def test_default_threadgroup_1d(basic_lib):
    f = basic_lib.tg_size
    out = np.zeros(3, np.uint32)
    f(out, grid=100000)
    expect = f.default_threadgroup(100000)
    assert expect == (min(256, f.max_threads_per_threadgroup), 1, 1)
    np.testing.assert_array_equal(out, expect)
    f(out, grid=10)
    assert f.default_threadgroup(10)[0] <= 10
    np.testing.assert_array_equal(out, f.default_threadgroup(10))


def test_default_threadgroup_2d(basic_lib):
    f = basic_lib.tg_size2d
    out = np.zeros(3, np.uint32)
    f(out, grid=(512, 512))
    tg = f.default_threadgroup((512, 512))
    assert tg[0] * tg[1] <= f.max_threads_per_threadgroup
    if f.max_threads_per_threadgroup >= 256 and f.execution_width == 32:
        assert tg == (32, 8, 1)
    np.testing.assert_array_equal(out, tg)


def test_default_threadgroup_shapes(basic_lib):
    f = basic_lib.add
    m = f.max_threads_per_threadgroup
    for grid in [1, 5, 300, (7, 3), (1000, 3), (2, 2, 2), (64, 64, 64), (1, 1, 1000)]:
        tg = f.default_threadgroup(grid)
        g = (grid,) if isinstance(grid, int) else grid
        g = g + (1,) * (3 - len(g))
        assert all(1 <= t <= gg for t, gg in zip(tg, g)), (grid, tg)
        assert tg[0] * tg[1] * tg[2] <= min(256, m)


def test_grid_and_groups_errors(basic_lib):
    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="grid="):
        basic_lib.scale(a, 1.0)
    with pytest.raises(TypeError, match="not both"):
        basic_lib.scale(a, 1.0, grid=4, groups=1)
    for bad in [0, -1, (), (0,), (4, 0), (1, 2, 3, 4)]:
        with pytest.raises(ValueError):
            basic_lib.scale(a, 1.0, grid=bad)
    for bad in [4.0, "4", (2.5,), None.__class__]:
        with pytest.raises(TypeError):
            basic_lib.scale(a, 1.0, grid=bad)
    with pytest.raises(ValueError):
        basic_lib.scale(a, 1.0, groups=0, threadgroup=4)


def test_bad_threadgroup(basic_lib):
    a = np.zeros(4, np.float32)
    f = basic_lib.scale
    m = f.max_threads_per_threadgroup
    with pytest.raises(ValueError) as e:
        f(a, 1.0, grid=4, threadgroup=(m + 1,))
    assert str(m + 1) in str(e.value) and str(m) in str(e.value)
    with pytest.raises(ValueError):
        f(a, 1.0, grid=4, threadgroup=(m, 2))
    with pytest.raises(ValueError):
        f(a, 1.0, grid=4, threadgroup=0)
    with pytest.raises(TypeError):
        f(a, 1.0, grid=4, threadgroup="big")


def test_list_grid_accepted(basic_lib):
    out = pm.zeros(12, np.uint32)
    basic_lib.index2d(out, 4, grid=[4, 3])
    assert out.numpy()[-1] == 2 * 10000 + 3


# ---- asynchronous calls ----------------------------------------------------------------

def test_async_chain_then_read(basic_lib, rng):
    n = 100000
    a = rng.standard_normal(n).astype(np.float32)
    x = pm.asarray(a)  # (shares a's memory when NumPy's allocation is 16 KiB-aligned: a changes too)
    a = a.copy()
    y = pm.empty(n, np.float32)
    z = pm.empty(n, np.float32)
    for _ in range(5):
        basic_lib.add(x, x, y, grid=n)   # y = 2x
        basic_lib.add(y, x, z, grid=n)   # z = 3x
        basic_lib.scale(z, 2.0, grid=n)  # z = 6x
        basic_lib.add(z, x, x, grid=n)   # x = 7x
    np.testing.assert_allclose(x.numpy(), a * 7 ** 5, rtol=1e-5)
    np.testing.assert_allclose(z.numpy(), a * 6 * 7 ** 4, rtol=1e-5)


@pytest.mark.parametrize("read", ["numpy", "asarray", "str", "synchronize", "index"])
def test_every_host_read_synchronizes(basic_lib, read):
    n = 1 << 20
    x = pm.zeros(n, np.float32)
    one = pm.full(n, 1.0)
    for _ in range(8):
        basic_lib.add(x, one, x, grid=n)
    if read == "numpy":
        v = x.numpy()
    elif read == "asarray":
        v = np.asarray(x)
    elif read == "str":
        assert "8." in str(x)
        v = x.numpy()
    elif read == "synchronize":
        pm.synchronize()
        v = x.numpy()
    else:
        assert x[n - 1] == 8.0
        v = x.numpy()
    assert (v == 8.0).all()


def test_view_of_output_sees_async_results(basic_lib):
    n = 4096
    x = pm.zeros(n, np.float32)
    y = pm.asarray(x.numpy()[1024:])  # shares x's buffer
    basic_lib.scale(y, 0.0, grid=1)
    basic_lib.iota(pm.asarray(x.numpy().view(np.uint32)), grid=n)
    assert x.numpy().view(np.uint32)[-1] == n - 1


def test_threadgroup_memory_argument_accepted(basic_lib):
    a = np.zeros(4, np.float32)
    # the kernel declares no [[threadgroup(0)]]: lengths must still be accepted
    basic_lib.scale(a, 1.0, grid=4, threadgroup_memory=64)
    with pytest.raises(ValueError):
        basic_lib.scale(a, 1.0, grid=4, threadgroup_memory=-1)
    with pytest.raises(TypeError):
        basic_lib.scale(a, 1.0, grid=4, threadgroup_memory="x")


# ---- threadgroup memory and barriers ---------------------------------------------------

REDUCE_SRC = """
#include <metal_stdlib>
using namespace metal;

kernel void block_sum(device const float* x [[buffer(0)]],
                      device float* partial [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      threadgroup float* shared [[threadgroup(0)]],
                      uint lid [[thread_position_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]],
                      uint tpg [[threads_per_threadgroup]],
                      uint i [[thread_position_in_grid]]) {
    shared[lid] = i < n ? x[i] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = tpg / 2; s > 0; s >>= 1) {
        if (lid < s) shared[lid] += shared[lid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) partial[group] = shared[0];
}
"""


@pytest.fixture(scope="module")
def reduce_lib(dev):
    return pm.compile(REDUCE_SRC)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 100000])
@pytest.mark.parametrize("tg", [32, 256])
def test_threadgroup_memory_reduction(reduce_lib, rng, n, tg):
    x = rng.standard_normal(n).astype(np.float32)
    groups = (n + tg - 1) // tg
    partial = np.zeros(groups, np.float32)
    reduce_lib.block_sum(x, partial, np.uint32(n), groups=groups, threadgroup=tg,
                         threadgroup_memory=tg * 4)
    padded = np.zeros(groups * tg, np.float32)
    padded[:n] = x
    np.testing.assert_allclose(partial, padded.reshape(groups, tg).sum(axis=1, dtype=np.float64),
                               rtol=1e-4, atol=1e-4)


def test_threadgroup_memory_by_index(reduce_lib, rng):
    x = rng.standard_normal(512).astype(np.float32)
    partial = np.zeros(2, np.float32)
    reduce_lib.block_sum(x, partial, np.uint32(512), groups=2, threadgroup=256,
                         threadgroup_memory=[1024])
    np.testing.assert_allclose(partial, x.reshape(2, 256).sum(axis=1), rtol=1e-4, atol=1e-4)
    reduce_lib.block_sum(x, partial, np.uint32(512), groups=2, threadgroup=256,
                         threadgroup_memory={0: 1024})
    np.testing.assert_allclose(partial, x.reshape(2, 256).sum(axis=1), rtol=1e-4, atol=1e-4)


# ---- execution errors --------------------------------------------------------------------

def test_missing_argument_fails_the_call_itself(basic_lib, dev):
    # Through Python: the argument count is checked against the signature.
    with pytest.raises(TypeError, match=r"add\(\) takes 3 arguments \(a, b, out\), 1 given"):
        basic_lib.add(np.zeros(4, np.float32), grid=4)
    # Through the C ABI: the engine refuses the dispatch when it is encoded, not
    # at a later synchronisation (add reads [[buffer(1)]] and [[buffer(2)]]).
    import ctypes
    from pymetal.runtime import native as _native
    x = pm.zeros(4)
    lib = _native.lib()
    arg = _native.PmArg(kind=_native.PM_ARG_BUFFER, index=0, buffer=x._buf.handle)
    size = (ctypes.c_uint32 * 3)(4, 1, 1)
    st = lib.pm_dispatch(dev.stream, basic_lib.add._handle, ctypes.addressof(arg), 1, ctypes.addressof(size), None, 0)
    assert st == 1
    assert "[[buffer(1)]] (b: device const float*), which this dispatch does not bind" in _native.last_error()
    dev.synchronize()  # nothing failed later
    out = np.zeros(4, np.float32)
    basic_lib.add(np.ones(4, np.float32), np.ones(4, np.float32), out, grid=4)
    np.testing.assert_array_equal(out, 2)


def test_absurd_dispatch_sizes_are_errors_not_crashes(basic_lib):
    out = pm.zeros(4, np.float32)
    a = pm.zeros(4, np.float32)
    for kwargs in ({"grid": (2**32 - 1,) * 3}, {"groups": (2**32 - 1,) * 3, "threadgroup": 1}):
        with pytest.raises(ValueError, match="too large"):
            basic_lib.add(a, a, out, **kwargs)
    basic_lib.add(a, a, out, grid=4)  # the stream still works
    np.testing.assert_array_equal(out.numpy(), 0)
