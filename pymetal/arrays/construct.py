"""Making arrays: empty/zeros/ones and their _like forms, asarray/array from
Python and NumPy data (NumPy memory is shared where possible), and the
allocator's hot path _new (every op's result). No kernel calls: zeros, ones and
full (a fill kernel) are in creation.py."""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from .. import dtypes as _dt
from ..dtypes import check_dtype
from ..runtime.buffer import Buffer, _pool
from ..runtime.device import device as _default_device, Device
from .array import _READONLY_BASE, Array, data_ptr, owner_of
from .layout import c_strides, normalize_shape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, ShapeLike

__all__ = ["empty", "asarray", "array", "empty_like"]

_memmove = ctypes.memmove

_LAYOUTS: dict = {}  # (shape, dtype, page size) -> (size, nbytes, C strides, allocator size class)
_make_array = _make_buffer = object.__new__


def _new(shape, dt, dev):
    """A new C-contiguous array from the caching allocator (the hot path of every op)."""
    key = (shape, dt, dev.page_size)
    layout = _LAYOUTS.get(key)
    if layout is None:
        size = 1
        for d in shape:
            size *= d
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        nbytes = size * dt.itemsize
        layout = _LAYOUTS[key] = (size, nbytes, c_strides(shape, dt.itemsize),
                                  Buffer.size_class(nbytes, dev.page_size, dev.max_buffer_length))
    size = layout[3]
    try:  # Buffer.new's hit, inlined (this runs once per op): memory of the size class from the free list
        handle, ptr, epoch = _pool.free[size].pop()
    except (KeyError, IndexError):  # none free: the allocator's slow path (a new buffer)
        b = Buffer.new(dev, layout[1], size)
    else:
        _pool.cached -= size
        _pool.hits += 1
        b = _make_buffer(Buffer)
        b.handle, b.ptr, b.epoch, b.device, b.length, b.pooled, b.views = handle, ptr, epoch, dev, layout[1], size, 0
        if dev.poisoned.value:
            b.clear_error()  # new contents: an error of the memory's last use is not this array's
    a = _make_array(Array)
    a._buf = b
    a._offset = 0
    a._shape = shape
    a._dtype = dt
    a._size = layout[0]
    a._strides = layout[2]
    a._cc = True
    a._np = None
    a._ro = 0
    a._base = None
    return a


def _device(device):
    if device is None or device == "cpu":
        return _default_device()
    if not isinstance(device, Device):
        raise TypeError("device= must be a pymetal Device (pm.device()), not %r" % (device,))
    return device


def empty(shape: ShapeLike, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new uninitialised array (float32 unless dtype is given).

    Examples:
        >>> x = pm.empty((2, 3), pm.int32)
        >>> x.shape, x.dtype
        ((2, 3), dtype('int32'))
    """
    return _new(normalize_shape(shape), check_dtype(dtype or _dt.default_float), _device(device))


def _scalar_dtype(value):
    if isinstance(value, (np.generic, np.ndarray, Array)):
        return check_dtype(value.dtype)
    if isinstance(value, bool):
        return _dt.bool_
    if isinstance(value, int):
        return _dt.default_int
    if isinstance(value, float):
        return _dt.default_float
    if isinstance(value, complex):
        return _dt.complex64
    raise TypeError("fill value must be a number, not %s" % type(value).__name__)


def _like(a, dtype):
    if dtype is not None:
        return check_dtype(dtype)
    return check_dtype(a.dtype if hasattr(a, "dtype") else asarray(a).dtype)  # NumPy's *_like take lists too


def empty_like(x: ArrayLike, /, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new uninitialised array of x's shape and dtype (or `dtype`).

    Examples:
        >>> pm.empty_like(pm.zeros((2, 3), pm.int16)).dtype
        dtype('int16')
    """
    return empty(np.shape(x), _like(x, dtype), device=device)


def _unpickle(data, dtype, shape):
    """The Array of a pickle (Array.__reduce_ex__), writeable as NumPy's. Out-of-band memory that
    is page-aligned and writeable is used without a copy (as pm.asarray does); anything else is
    copied into pymetal memory."""
    if "dask" in sys.modules and "pymetal.dask" not in sys.modules:
        # A Dask worker receiving its first pymetal chunk: Dask must know pymetal's chunk
        # functions (divide, numel, concatenate, ...) before it runs a task on it.
        import pymetal.dask  # noqa: F401
    return _from_numpy(np.frombuffer(data, dtype=np.uint8).view(dtype).reshape(shape), _default_device())


def _default_numpy(a):
    """Python data with no explicit dtype: float64 -> float32, complex128 -> complex64
    (no double precision on Apple GPUs)."""
    if a.dtype.kind == "f" and a.dtype.itemsize == 8:
        return a.astype(np.float32)
    if a.dtype.kind == "c" and a.dtype.itemsize == 16:
        return a.astype(np.complex64)
    return a


def _from_numpy(a, dev, copy=None):
    check_dtype(a.dtype, host=True)  # float64 under the "host" policy (pymetal/arrays/float64.py)
    n = a.nbytes
    if copy is not True and n:
        ptr = data_ptr(a)
        owned = owner_of(a, ptr)
        if owned is not None:  # a NumPy view of pymetal memory: share it
            x = Array(owned[0], owned[1], a.shape, a.dtype, a.strides)
            if not a.flags.writeable:
                x._ro = _READONLY_BASE
            return x
        if a.flags.c_contiguous and a.flags.writeable and ptr % dev.page_size == 0:  # wrap, no copy
            return Array(Buffer.wrap(dev, ptr, n, a), 0, a.shape, a.dtype)
    if copy is False:
        raise ValueError("asarray(copy=False): this NumPy array cannot be shared without a copy "
                         "(it is not page-aligned, contiguous and writeable)")
    x = _new(a.shape, a.dtype, dev)
    if n:
        x._buf.host_ready()
        if a.flags.c_contiguous:
            _memmove(x._buf.ptr, data_ptr(a), n)
        else:
            x._host()[...] = a
    return x


def asarray(obj: Any, /, dtype: DTypeLike = None, *, device: Device | str | None = None,
            copy: bool | None = None) -> Array:
    """A pymetal array for obj, sharing memory where possible.

    - a pymetal Array of the same dtype is returned as is (copy=True copies);
    - a C-contiguous, writeable NumPy array whose data is page-aligned, or a NumPy
      view of pymetal memory, is used without copying (the result shares memory);
    - anything else is copied (copy=False then raises ValueError). Python data
      (lists, floats) with no dtype given: floats become float32, ints int64.

    Examples:
        >>> pm.asarray([1.0, 2.0])
        Array([1., 2.], dtype=float32)
        >>> pm.asarray([1, 2], dtype=pm.uint8)
        Array([1, 2], dtype=uint8)
        >>> a = np.zeros(1024, np.float32)
        >>> x = pm.asarray(a)   # shares a's memory when it is page-aligned, else copies
        >>> x.shape
        (1024,)
    """
    dev = _device(device)
    if isinstance(obj, Array):
        if dtype is None or check_dtype(dtype) == obj._dtype:
            return obj.copy() if copy else obj
        if copy is False:
            raise ValueError("asarray(copy=False): converting %s to %s needs a copy" % (obj._dtype, np.dtype(dtype)))
        return obj.astype(dtype)
    if isinstance(obj, np.ndarray):
        if dtype is not None:
            dt = check_dtype(dtype)
            if obj.dtype != dt:
                if copy is False:
                    raise ValueError("asarray(copy=False): converting %s to %s needs a copy" % (obj.dtype, dt))
                obj = obj.astype(dt)
                copy = None
        return _from_numpy(obj, dev, copy)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic):
        return _from_numpy(np.from_dlpack(obj), dev, copy)
    if dtype is not None:
        a = np.asarray(_host_values(obj), dtype=check_dtype(dtype))
    elif isinstance(obj, np.generic) or hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        a = np.asarray(obj)
    else:
        a = _default_numpy(np.asarray(_host_values(obj)))
    if copy is False:
        raise ValueError("asarray(copy=False): %s has no memory to share" % type(obj).__name__)
    return _from_numpy(a, dev, True)


def _host_values(obj):
    """Nested Python data with any pymetal arrays in it read to the host."""
    if isinstance(obj, Array):
        return obj.numpy()
    if isinstance(obj, list):
        return [_host_values(x) for x in obj]
    if isinstance(obj, tuple):  # (a tuple stays one: NumPy reads a struct dtype's records from tuples)
        return tuple(_host_values(x) for x in obj)
    return obj


def array(obj: Any, dtype: DTypeLike = None, *, device: Device | str | None = None, copy: bool | None = True) -> Array:
    """A new pymetal array with a copy of obj's data, like np.array.

    Examples:
        >>> a = np.arange(3, dtype=np.int32)
        >>> x = pm.array(a)
        >>> a[0] = 9
        >>> x
        Array([0, 1, 2], dtype=int32)
    """
    return asarray(obj, dtype=dtype, device=device, copy=copy)
