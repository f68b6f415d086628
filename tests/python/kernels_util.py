"""Helpers shared by the test_kernels_* modules: random data for every dtype
and pymetal arrays (also strided views and bfloat16 ones) over the same memory
as a NumPy view, built only from the attributes the kernel glue reads."""

import ml_dtypes
import numpy as np

import pymetal as pm

bfloat16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), bfloat16]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
DTYPES = FLOATS + INTS + [np.dtype(np.bool_)]
IDS = [str(d) for d in DTYPES]


def StridedArray(buf, offset, shape, dtype, strides):
    """A pymetal array view with byte strides over `buf` at `offset`."""
    return pm.Array(buf, offset, tuple(shape), np.dtype(dtype), tuple(strides))


def random(rng, shape, dtype, low=None, high=None):
    """Random data of `dtype`: integers over their whole range (unless low/high)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = info.min if low is None else low
        hi = info.max if high is None else high
        return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)
    return rng.standard_normal(size=shape).astype(np.float32).astype(dtype)


def device_copy(a):
    """A pymetal array holding a copy of NumPy array `a`, and the NumPy view of
    its memory. Returns (base, view): base is C-contiguous."""
    a = np.ascontiguousarray(a)
    if a.dtype == bfloat16:
        base = pm.asarray(a.view(np.uint16).copy())
        view = base.numpy().view(bfloat16)
        base = StridedArray(base._buf, base._offset, a.shape, bfloat16, view.strides)
    else:
        base = pm.asarray(a.copy())
        view = base.numpy()
    return base, view


def view_of(base, base_np, v):
    """A pymetal view of `base` with the layout of NumPy view `v` of `base_np`."""
    offset = v.__array_interface__["data"][0] - base_np.__array_interface__["data"][0]
    return StridedArray(base._buf, base._offset + offset, v.shape, v.dtype, v.strides)


def empty(shape, dtype):
    """An uninitialised C-contiguous pymetal array (any dtype incl. bfloat16)."""
    dtype = np.dtype(dtype)
    if dtype == bfloat16:
        raw = pm.empty(shape, np.uint16)
        return StridedArray(raw._buf, raw._offset, raw._shape, bfloat16, raw.numpy().strides)
    return pm.empty(shape, dtype)


def host(x):
    """NumPy copy of a C-contiguous pymetal array (waits for the device)."""
    return np.array(pm.Array.numpy(x))


def huge(shape, dtype):
    """A C-contiguous array description far larger than its (tiny) memory: for
    checks that must refuse it before any kernel reads it."""
    dtype = np.dtype(dtype)
    small = pm.empty(1, np.uint8)
    strides, step = [], dtype.itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return StridedArray(small._buf, 0, shape, dtype, strides[::-1])
