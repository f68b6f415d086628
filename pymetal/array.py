"""pymetal arrays: NumPy-shaped views of shared CPU/GPU memory.

An :class:`Array` is a shape and dtype over a pm_buffer (at a byte offset).
Reading it from the host (``.numpy()``, ``np.asarray``, printing, indexing)
first waits for pending kernels that used its memory. ``.numpy()`` never
copies: it returns a NumPy view whose ``.base`` chain keeps the memory alive.
"""

import ctypes
import operator

import numpy as np

from ._buffer import Buffer, View
from .device import device as _default_device
from .dtypes import check_dtype

__all__ = ["Array", "empty", "zeros", "ones", "full", "asarray", "empty_like", "zeros_like", "ones_like"]

_c_char = ctypes.c_char
_addressof = ctypes.addressof
_memmove = ctypes.memmove


def data_ptr(a):
    """Address of a C-contiguous ndarray's first byte."""
    try:
        return _addressof(_c_char.from_buffer(a))
    except (TypeError, ValueError):  # read-only or empty
        return a.__array_interface__["data"][0]


def owner_of(a, ptr=None):
    """(Buffer, byte offset) if ndarray `a` views pymetal memory, else None."""
    b = a.base
    while b is not None:
        if type(b) is View:
            buf = b.buffer
            if ptr is None:
                ptr = data_ptr(a)
            off = ptr - buf.ptr
            if 0 <= off and off + a.nbytes <= buf.length:
                return buf, off
            return None
        if isinstance(b, np.ndarray):
            b = b.base
        else:
            return None
    return None


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError("shape must be an int or a tuple of ints, not %r" % (shape,)) from None
    if any(n < 0 for n in shape):
        raise ValueError("negative dimension in shape %r" % (shape,))
    return shape


class Array:
    """An n-dimensional array in memory shared by the CPU and the device."""

    __slots__ = ("_buf", "_offset", "_shape", "_dtype", "_nbytes", "_np", "__weakref__")

    def __init__(self, buf, offset, shape, dtype):
        # Internal: use pm.empty / zeros / full / asarray.
        self._buf = buf
        self._offset = offset
        self._shape = shape
        self._dtype = dtype
        n = dtype.itemsize
        for d in shape:
            n *= d
        self._nbytes = n
        self._np = None

    # ---- metadata -------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def nbytes(self):
        return self._nbytes

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def size(self):
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def device(self):
        return self._buf.device

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d pymetal array")
        return self._shape[0]

    # ---- host access ------------------------------------------------------------
    def numpy(self):
        """A zero-copy NumPy view of the array (after pending work completed)."""
        buf = self._buf
        dev = buf.device
        if buf.epoch > dev.synced:
            dev.synchronize()
        a = self._np
        if a is None:
            u8 = np.asarray(View(buf, self._offset, self._nbytes))
            a = u8.view(self._dtype).reshape(self._shape)
            self._np = a
        return a.view()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("converting a pymetal array to %s requires a copy" % np.dtype(dtype))
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    def __getitem__(self, key):
        """Indexing returns NumPy views of the array's memory (no copy)."""
        return self.numpy()[key]

    def __setitem__(self, key, value):
        self.numpy()[key] = value

    def __iter__(self):
        return iter(self.numpy())

    def tolist(self):
        return self.numpy().tolist()

    def item(self, *args):
        return self.numpy().item(*args)

    def copy(self):
        """A new pymetal array with a copy of the data."""
        out = empty(self._shape, self._dtype, device=self.device)
        if self._nbytes:
            src = self.numpy()  # synchronises
            _memmove(out._buf.ptr, data_ptr(src), self._nbytes)
        return out

    def astype(self, dtype):
        dt = check_dtype(dtype)
        if dt == self._dtype:
            return self.copy()
        return asarray(self.numpy().astype(dt), device=self.device)

    def fill(self, value):
        self.numpy().fill(value)

    def __repr__(self):
        a = self.numpy()
        if a.size == 0:
            return "Array([], shape=%r, dtype=%s)" % (self._shape, self._dtype)
        body = np.array2string(a, separator=", ", prefix="Array(")
        return "Array(%s, dtype=%s)" % (body, self._dtype)

    def __str__(self):
        return str(self.numpy())

    def __format__(self, spec):
        return format(self.numpy(), spec) if spec else str(self)

    def __bool__(self):
        return bool(self.numpy())


# ---- constructors -----------------------------------------------------------------

def _new(shape, dtype, dev):
    dt = check_dtype(dtype)
    n = dt.itemsize
    for d in shape:
        n *= d
    return Array(Buffer.new(dev, n), 0, shape, dt)


def empty(shape, dtype=np.float32, *, device=None):
    """A new uninitialised array in shared memory."""
    return _new(_shape(shape), dtype, device or _default_device())


def zeros(shape, dtype=np.float32, *, device=None):
    x = _new(_shape(shape), dtype, device or _default_device())
    if x._nbytes:
        ctypes.memset(x._buf.ptr, 0, x._nbytes)
    return x


def ones(shape, dtype=np.float32, *, device=None):
    return full(shape, 1, dtype, device=device)


def _scalar_dtype(value):
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int32)
    if isinstance(value, float):
        return np.dtype(np.float32)
    return _default_numpy(np.asarray(value)).dtype


def full(shape, fill_value, dtype=None, *, device=None):
    """A new array filled with fill_value (dtype inferred: int -> int32, float -> float32)."""
    if dtype is None:
        dtype = _scalar_dtype(fill_value)
    x = _new(_shape(shape), dtype, device or _default_device())
    if x._nbytes:
        x.numpy()[...] = fill_value
    return x


def empty_like(a, dtype=None):
    return empty(np.shape(a), dtype if dtype is not None else a.dtype)


def zeros_like(a, dtype=None):
    return zeros(np.shape(a), dtype if dtype is not None else a.dtype)


def ones_like(a, dtype=None):
    return ones(np.shape(a), dtype if dtype is not None else a.dtype)


def _default_numpy(a):
    """Python data with no explicit dtype: float64 -> float32, int64 -> int32 if it fits."""
    k = a.dtype.kind
    if k == "f" and a.dtype.itemsize == 8:
        return a.astype(np.float32)
    if k == "i" and a.dtype.itemsize == 8:
        if a.size == 0 or (a.min() >= -(2 ** 31) and a.max() < 2 ** 31):
            return a.astype(np.int32)
    return a


def _from_numpy(a, dev):
    check_dtype(a.dtype)
    if not a.flags.c_contiguous:
        x = _new(a.shape, a.dtype, dev)
        x.numpy()[...] = a
        return x
    n = a.nbytes
    if n:
        ptr = data_ptr(a)
        owned = owner_of(a, ptr)
        if owned is not None:  # a NumPy view of pymetal memory: share it
            return Array(owned[0], owned[1], a.shape, a.dtype)
        if a.flags.writeable and ptr % dev.page_size == 0:  # wrap without copying
            return Array(Buffer.wrap(dev, ptr, n, a), 0, a.shape, a.dtype)
    x = _new(a.shape, a.dtype, dev)
    if n:
        _memmove(x._buf.ptr, ptr, n)
    return x


def asarray(obj, dtype=None, *, device=None):
    """A pymetal array for obj, sharing memory where possible.

    - a pymetal Array of the same dtype is returned as is;
    - a C-contiguous, writeable NumPy array whose data is page-aligned, or a NumPy
      view of pymetal memory, is used without copying (the result shares memory);
    - anything else is copied. Python data (lists, floats) with no dtype given
      becomes float32 / int32, as float64 is not supported.
    """
    dev = device or _default_device()
    if isinstance(obj, Array):
        if dtype is None or np.dtype(dtype) == obj._dtype:
            return obj
        return obj.astype(dtype)
    if isinstance(obj, np.ndarray):
        if dtype is not None:
            dt = check_dtype(dtype)
            if obj.dtype != dt:
                obj = obj.astype(dt)
        return _from_numpy(obj, dev)
    if dtype is not None:
        a = np.asarray(obj, dtype=check_dtype(dtype))
    elif isinstance(obj, np.generic) or hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        a = np.asarray(obj)
    else:
        a = _default_numpy(np.asarray(obj))
    return _from_numpy(a, dev)
