"""pymetal arrays: construction, dtypes, host access and zero-copy views."""

import ctypes

import numpy as np
import pytest

import pymetal as pm

SUPPORTED = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
             np.int64, np.uint64, np.float16, np.float32]
SHAPES = [(0,), (1,), (7,), (1000,), (3, 5), (2, 0, 4), (2, 3, 4), ()]


def _random(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", SUPPORTED)
@pytest.mark.parametrize("shape", SHAPES)
def test_empty_metadata(dev, shape, dtype):
    x = pm.empty(shape, dtype)
    n = int(np.prod(shape, dtype=np.int64))
    assert x.shape == shape
    assert x.dtype == np.dtype(dtype)
    assert x.size == n
    assert x.ndim == len(shape)
    assert x.nbytes == n * np.dtype(dtype).itemsize
    assert x.numpy().shape == shape
    assert x.numpy().dtype == np.dtype(dtype)
    if shape:
        assert len(x) == shape[0]
    else:
        with pytest.raises(TypeError):
            len(x)


def test_empty_default_dtype_and_int_shape(dev):
    x = pm.empty(10)
    assert x.shape == (10,) and x.dtype == np.float32
    assert pm.empty(np.int64(3)).shape == (3,)
    with pytest.raises(ValueError):
        pm.empty((-1,))
    with pytest.raises(TypeError):
        pm.empty((2.5,))


@pytest.mark.parametrize("dtype", SUPPORTED)
def test_zeros_full(dev, dtype):
    z = pm.zeros((5, 3), dtype)
    np.testing.assert_array_equal(z.numpy(), np.zeros((5, 3), dtype))
    f = pm.full((4,), 1, dtype)
    np.testing.assert_array_equal(f.numpy(), np.full((4,), 1, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_ones_and_likes(dev, dtype):
    o = pm.ones((3, 4), dtype)
    np.testing.assert_array_equal(o.numpy(), np.ones((3, 4), dtype))
    assert pm.ones(5).dtype == np.float32
    assert pm.ones_like(o).shape == (3, 4) and pm.ones_like(o).dtype == np.dtype(dtype)
    assert pm.zeros_like(o, np.float16).dtype == np.float16
    e = pm.empty_like(np.zeros((2, 7), np.int16))
    assert e.shape == (2, 7) and e.dtype == np.int16


def test_full_infers_types(dev):
    assert pm.full(3, 1.5).dtype == np.float32
    assert pm.full(3, 7).dtype == np.int64
    assert pm.full(3, True).dtype == np.bool_
    assert pm.full(3, np.uint16(4)).dtype == np.uint16
    np.testing.assert_array_equal(pm.full((2, 2), 2.5).numpy(), np.full((2, 2), 2.5, np.float32))


def test_zeros_large(dev):
    z = pm.zeros(4 << 20, np.float32)
    a = z.numpy()
    assert a.shape == (4 << 20,)
    assert not a.any()


@pytest.mark.parametrize("dtype", SUPPORTED)
@pytest.mark.parametrize("shape", SHAPES)
def test_asarray_roundtrip(dev, rng, shape, dtype):
    a = _random(rng, shape, dtype)
    x = pm.asarray(a)
    assert isinstance(x, pm.Array)
    assert x.shape == a.shape and x.dtype == a.dtype
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(np.asarray(x), a)


def test_asarray_python_data_defaults(dev):
    x = pm.asarray([1.0, 2.5, -3.0])
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x.numpy(), np.array([1.0, 2.5, -3.0], np.float32))
    assert pm.asarray([1, 2, 3]).dtype == np.int64  # the default integer type, as NumPy
    assert pm.asarray([[True, False]]).dtype == np.bool_
    assert pm.asarray(3.0).shape == ()
    assert pm.asarray([1, 2], dtype=np.uint8).dtype == np.uint8


def test_asarray_of_array(dev):
    x = pm.zeros(4)
    assert pm.asarray(x) is x
    y = pm.asarray(x, dtype=np.int32)
    assert y.dtype == np.int32 and y is not x
    np.testing.assert_array_equal(y.numpy(), np.zeros(4, np.int32))


def test_asarray_converts_dtype(dev, rng):
    a = rng.standard_normal(10).astype(np.float32)
    x = pm.asarray(a, dtype=np.float16)
    assert x.dtype == np.float16
    np.testing.assert_array_equal(x.numpy(), a.astype(np.float16))


def test_asarray_non_contiguous_copies(dev, rng):
    a = rng.standard_normal((6, 8)).astype(np.float32)
    view = a[::2, 1::3]
    x = pm.asarray(view)
    np.testing.assert_array_equal(x.numpy(), view)
    assert not np.shares_memory(x.numpy(), a)


# ---- float64 and other unsupported dtypes --------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: pm.empty(3, np.float64),
    lambda: pm.zeros(3, np.float64),
    lambda: pm.full(3, 1.0, np.float64),
    lambda: pm.asarray(np.zeros(3)),
    lambda: pm.asarray([1.0], dtype=np.float64),
    lambda: pm.asarray(np.float64(1.0)),
])
def test_float64_refused(dev, make, float64_error):
    with pytest.raises(TypeError) as e:
        make()
    msg = str(e.value)
    assert "float64" in msg
    assert "no float64" in msg
    assert ".astype(np.float32)" in msg
    assert "set_float64_policy('host')" in msg  # the error names the setting


@pytest.mark.parametrize("dtype", [np.complex128, np.float64, object, "U3", "M8[s]"])
def test_other_dtypes_refused(dev, dtype, float64_error):
    with pytest.raises(TypeError):
        pm.empty(3, dtype)


def test_non_native_byte_order_refused(dev):
    with pytest.raises(TypeError, match="byte order"):
        pm.asarray(np.zeros(3, ">f4"))


def test_structured_dtype(dev):
    dt = np.dtype([("x", np.float32), ("id", np.uint32)])
    a = np.zeros(5, dt)
    a["x"] = np.arange(5)
    a["id"] = np.arange(5) * 10
    x = pm.asarray(a)
    assert x.dtype == dt
    np.testing.assert_array_equal(x.numpy(), a)
    with pytest.raises(TypeError, match="float64"):
        pm.asarray(np.zeros(2, [("a", np.float64)]))


# ---- host access ---------------------------------------------------------------------

def test_numpy_is_a_zero_copy_view(dev):
    x = pm.zeros(1000, np.float32)
    a = x.numpy()
    b = x.numpy()
    assert np.shares_memory(a, b)
    assert a.ctypes.data == b.ctypes.data == x._buf.ptr
    a[3] = 42.0
    assert x.numpy()[3] == 42.0
    assert np.asarray(x)[3] == 42.0
    assert np.shares_memory(np.asarray(x), a)


def test_numpy_view_keeps_memory_alive(dev):
    import gc

    x = pm.full(1000, 7.0)
    a = x.numpy()
    del x
    gc.collect()
    for _ in range(10):
        pm.full(1000, 1.0)  # would reuse freed memory
    np.testing.assert_array_equal(a, np.full(1000, 7.0, np.float32))


def test_array_protocol_dtype_and_copy(dev):
    x = pm.full(4, 3, np.int32)
    f = np.asarray(x, dtype=np.float32)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, [3, 3, 3, 3])
    c = np.array(x, copy=True)
    assert not np.shares_memory(c, x.numpy())


def test_repr_str_len_iter(dev):
    x = pm.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    r = repr(x)
    assert r.startswith("Array(") and "float32" in r
    assert str(x) == str(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert len(x) == 2
    assert [row.tolist() for row in x] == [[0, 1, 2], [3, 4, 5]]
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    e = pm.empty((0, 3))
    assert "shape=(0, 3)" in repr(e)
    assert repr(pm.full((), 2.0)).startswith("Array(")


def test_indexing_gives_views(dev):
    x = pm.zeros(10, np.int32)
    x[2:5] = 7
    np.testing.assert_array_equal(x.numpy()[2:5], [7, 7, 7])
    v = x[4:]
    assert isinstance(v, pm.Array) and v._buf is x._buf
    assert np.shares_memory(v.numpy(), x.numpy())
    x.fill(1)
    assert x.numpy().sum() == 10


def test_copy_and_astype(dev, rng):
    a = rng.standard_normal(100).astype(np.float32)
    x = pm.asarray(a)
    y = x.copy()
    assert not np.shares_memory(x.numpy(), y.numpy())
    np.testing.assert_array_equal(y.numpy(), a)
    z = x.astype(np.float16)
    np.testing.assert_array_equal(z.numpy(), a.astype(np.float16))
    w = x.astype(np.float64)  # the "host" float64 policy (test_float64.py)
    assert w.dtype == np.float64
    np.testing.assert_array_equal(w.numpy(), a.astype(np.float64))


# ---- zero-copy wrapping of NumPy memory ------------------------------------------------

def test_asarray_wraps_aligned_memory(dev, aligned_empty, rng):
    a = aligned_empty(5000, np.float32)
    a[...] = rng.standard_normal(5000)
    x = pm.asarray(a)
    assert np.shares_memory(x.numpy(), a)
    assert x.numpy().ctypes.data == a.ctypes.data
    a[10] = 123.0
    assert x.numpy()[10] == 123.0


def test_asarray_copies_unaligned_memory(dev, unaligned_copy, rng):
    a = unaligned_copy(rng.standard_normal(5000).astype(np.float32))
    x = pm.asarray(a)
    assert not np.shares_memory(x.numpy(), a)
    np.testing.assert_array_equal(x.numpy(), a)


def test_asarray_copies_read_only_memory(dev, aligned_empty):
    a = aligned_empty(4096, np.float32)
    a[...] = 1.0
    a.flags.writeable = False
    x = pm.asarray(a)
    assert not np.shares_memory(x.numpy(), a)
    np.testing.assert_array_equal(x.numpy(), a)


def test_asarray_of_view_of_pymetal_memory_shares(dev):
    x = pm.asarray(np.arange(100, dtype=np.float32))
    v = x.numpy()[10:20]
    y = pm.asarray(v)
    assert y._buf is x._buf
    assert y._offset == 40
    assert np.shares_memory(y.numpy(), x.numpy())
    np.testing.assert_array_equal(y.numpy(), np.arange(10, 20, dtype=np.float32))
    v2 = x.numpy().reshape(10, 10)[3]
    z = pm.asarray(v2)
    assert z._buf is x._buf and z._offset == 120


def test_wrapped_memory_outlives_numpy_reference(dev, aligned_empty):
    import gc

    a = aligned_empty(4096, np.int32)
    a[...] = np.arange(4096)
    x = pm.asarray(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(x.numpy(), np.arange(4096))
