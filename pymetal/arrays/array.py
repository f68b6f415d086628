"""pymetal arrays: NumPy-style n-d arrays in memory shared by the CPU and the device.

An :class:`Array` is a dtype, shape, byte strides and byte offset over a
pm_buffer. Slicing, reshape (where NumPy would give a view), transposes,
broadcasting and squeezing make views that copy nothing; every operation runs
a Metal kernel, asynchronously, in order on the device's stream. Reading an
array from the host (``.numpy()``, ``np.asarray``, printing, ``bool()``,
``item()``) first waits for the work that produced it. ``.numpy()`` never
copies: it returns a NumPy view whose ``.base`` chain keeps the memory alive.
"""

from __future__ import annotations

import ctypes
import operator
import sys

import numpy as np

from .. import dtypes as _dt
from ..runtime import bindable
from ..runtime.buffer import Buffer, View
from ..runtime.device import device as _default_device
from ..dtypes import check_dtype

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar, ShapeLike

__all__ = ["Array", "empty", "zeros", "ones", "full", "asarray", "array",
           "empty_like", "zeros_like", "ones_like", "full_like"]

_c_char = ctypes.c_char
_addressof = ctypes.addressof
_memmove = ctypes.memmove


def data_ptr(a):
    """Address of an ndarray's first element."""
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
            lo, hi = _extent(a.shape, a.strides, a.itemsize)
            if 0 <= off + lo and off + hi <= buf.length:
                return buf, off
            return None
        if isinstance(b, np.ndarray):
            b = b.base
        else:
            return None
    return None


def _extent(shape, strides, itemsize):
    """(lowest, highest+1) byte offsets an array of this layout touches, from its start."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, 0
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize


_C_STRIDES: dict = {}


def c_strides(shape, itemsize):
    key = (shape, itemsize)
    got = _C_STRIDES.get(key)
    if got is not None:
        return got
    if len(_C_STRIDES) > 4096:
        _C_STRIDES.clear()
    got = _C_STRIDES[key] = _c_strides(shape, itemsize)
    return got


def _c_strides(shape, itemsize):
    strides = []
    s = itemsize
    for n in reversed(shape):
        strides.append(s)
        s *= max(n, 1)
    return tuple(reversed(strides))


def _is_c_contiguous(shape, strides, itemsize):
    s = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1 and st != s:
            return False
        s *= n
    return True


def normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError("shape must be an int or a tuple of ints, not %r" % (shape,)) from None
    if any(n < 0 for n in shape):
        raise ValueError("negative dimension in shape %r" % (shape,))
    return shape


class Flags:
    """Contiguity and writeability of an array, like ndarray.flags (``writeable`` can be set)."""

    __slots__ = ("c_contiguous", "f_contiguous", "_a")

    def __init__(self, a):
        self.c_contiguous = a._cc
        self.f_contiguous = _is_c_contiguous(a._shape[::-1], a._strides[::-1], a._dtype.itemsize)
        self._a = a

    @property
    def writeable(self):
        return not self._a._ro

    @writeable.setter
    def writeable(self, value):
        a = self._a
        if not value:
            a._ro = a._ro or _READONLY
        elif a._ro == _READONLY_BASE:
            # as NumPy: a view of read-only memory (or a broadcast view) stays read-only
            raise ValueError("cannot set WRITEABLE flag to True of this array (it views a read-only "
                             "array or is a broadcast view; make a copy with .copy())")
        else:
            a._ro = 0

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "F": "f_contiguous", "WRITEABLE": "writeable", "W": "writeable"}

    def __getitem__(self, key):
        return getattr(self, self._KEYS.get(key.upper(), key))

    def __setitem__(self, key, value):
        if self._KEYS.get(key.upper()) != "writeable":
            raise ValueError("only the WRITEABLE flag can be set, not %r" % (key,))
        self.writeable = value

    def __repr__(self):
        return "  C_CONTIGUOUS : %s\n  F_CONTIGUOUS : %s\n  WRITEABLE : %s" % (
            self.c_contiguous, self.f_contiguous, self.writeable)


# Array._ro: 0 writeable; _READONLY: made read-only through flags.writeable (can be undone);
# _READONLY_BASE: a view of a read-only array, or a broadcast view (stays read-only, as NumPy's).
_READONLY = 1
_READONLY_BASE = 2


def check_writeable(a):
    """Raises NumPy's ValueError when `a` is read-only (every write path calls this)."""
    if a._ro:
        raise ValueError("assignment destination is read-only (a broadcast_to view, or an array whose "
                         "flags.writeable is False, or a view of one); write into a copy: x = x.copy()")


def memory_span(a):
    """[first, last + 1) host addresses of the bytes array `a` may touch."""
    lo, hi = _extent(a._shape, a._strides, a._dtype.itemsize)
    start = a._buf.ptr + a._offset
    return start + lo, start + hi


def may_overlap(a, b):
    """Whether Arrays a and b may share memory. Judged by host address ranges, so two
    Buffers over the same memory (two pm.asarray wraps of one ndarray) are seen to overlap."""
    if not a._size or not b._size:
        return False
    if a._buf is not b._buf and not (a._buf.foreign or b._buf.foreign):
        return False  # pymetal's own allocations never share memory (cheap: this runs on every copy)
    a0, a1 = memory_span(a)
    b0, b1 = memory_span(b)
    return a0 < b1 and b0 < a1


def overlaps_differently(dst, src):
    """Whether an elementwise write of dst from src could read an element already
    written: they may share memory and src is not dst element for element (then
    the source is copied to a temporary first, as NumPy does)."""
    if not isinstance(src, Array) or not may_overlap(dst, src):
        return False
    return not (dst._buf.ptr + dst._offset == src._buf.ptr + src._offset and dst._shape == src._shape
                and dst._strides == src._strides and dst._dtype.itemsize == src._dtype.itemsize)


class Array:
    """An n-dimensional array in memory shared by the CPU and the device.

    Make one with :func:`asarray`, :func:`zeros`, :func:`arange`, ...; operators
    (``+``, ``*``, ``@``, ``<``, ...), indexing and the ``pm.*`` functions run as
    kernels on the device, asynchronously. ``.numpy()`` is a zero-copy NumPy view.

    Examples:
        >>> x = pm.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> x
        Array([[1., 2.],
               [3., 4.]], dtype=float32)
        >>> (x * 2 + 1)[0]
        Array([3., 5.], dtype=float32)
        >>> x.numpy().sum()
        np.float32(10.0)
    """

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "_dtype", "_size", "_cc", "_np", "_ro", "__weakref__")
    __array_priority__ = 100  # NumPy defers binary operators to pymetal

    def __init__(self, buf: Any, offset: int, shape: tuple[int, ...], dtype: np.dtype,
                 strides: tuple[int, ...] | None = None) -> None:
        # Internal: use pm.empty / zeros / asarray / array.
        self._buf = buf
        self._offset = offset
        self._shape = shape
        self._dtype = dtype
        n = 1
        for d in shape:
            n *= d
        self._size = n
        if strides is None:
            strides = c_strides(shape, dtype.itemsize)
            self._cc = True
        else:
            self._cc = _is_c_contiguous(shape, strides, dtype.itemsize)
        self._strides = strides
        self._np = None
        self._ro = 0

    # ---- metadata -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Tuple of dimensions.

        Examples:
            >>> pm.zeros((2, 3)).shape
            (2, 3)
        """
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The element type (a NumPy dtype).

        Examples:
            >>> pm.asarray([1, 2]).dtype
            dtype('int64')
        """
        return self._dtype

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes between elements along each dimension.

        Examples:
            >>> pm.zeros((2, 3)).strides
            (12, 4)
        """
        return self._strides

    @property
    def size(self) -> int:
        """Number of elements.

        Examples:
            >>> pm.zeros((2, 3)).size
            6
        """
        return self._size

    @property
    def ndim(self) -> int:
        """Number of dimensions.

        Examples:
            >>> pm.zeros((2, 3)).ndim
            2
        """
        return len(self._shape)

    @property
    def itemsize(self) -> int:
        """Bytes per element.

        Examples:
            >>> pm.zeros(3, pm.float16).itemsize
            2
        """
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements.

        Examples:
            >>> pm.zeros((2, 3)).nbytes
            24
        """
        return self._size * self._dtype.itemsize

    @property
    def device(self) -> Device:
        """The pymetal Device the memory belongs to.

        Examples:
            >>> pm.zeros(3).device is pm.device()
            True
        """
        return self._buf.device

    @property
    def flags(self) -> Flags:
        """Contiguity flags (c_contiguous, f_contiguous) and writeable, like ndarray.flags.

        ``x.flags.writeable = False`` makes x (and views of it) read-only: writes raise ValueError.

        Examples:
            >>> pm.zeros((2, 3)).T.flags.f_contiguous
            True
        """
        return Flags(self)

    @property
    def is_contiguous(self) -> bool:
        """True if the elements are dense in C (row-major) order.

        Examples:
            >>> x = pm.zeros((2, 3))
            >>> x.is_contiguous, x.T.is_contiguous
            (True, False)
        """
        return self._cc

    @property
    def T(self) -> Array:
        """The array with its dimensions reversed (a view).

        Examples:
            >>> pm.asarray([[1, 2, 3]]).T
            Array([[1],
                   [2],
                   [3]], dtype=int64)
        """
        return self.permute_dims(tuple(range(self.ndim))[::-1])

    @property
    def mT(self) -> Array:
        """The last two dimensions swapped (a view), as the Array API's matrix transpose.

        Examples:
            >>> pm.zeros((4, 2, 3)).mT.shape
            (4, 3, 2)
        """
        if self.ndim < 2:
            raise ValueError("mT needs at least 2 dimensions, the array has %d" % self.ndim)
        axes = list(range(self.ndim))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        return self.permute_dims(tuple(axes))

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d pymetal array")
        return self._shape[0]

    # ---- views ------------------------------------------------------------------
    def _view(self, offset, shape, strides, dtype=None):
        v = Array(self._buf, offset, shape, dtype or self._dtype, strides)
        if self._ro:
            v._ro = _READONLY_BASE
        return v

    def permute_dims(self, axes: tuple[int, ...] | list[int]) -> Array:
        """A view with the dimensions in the order `axes` (no copy).

        Examples:
            >>> pm.zeros((2, 3, 4)).permute_dims((2, 0, 1)).shape
            (4, 2, 3)
        """
        axes = tuple(normalize_axis(a, self.ndim) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("permute_dims: axes %r are not a permutation of 0..%d" % (axes, self.ndim - 1))
        return self._view(self._offset, tuple(self._shape[a] for a in axes), tuple(self._strides[a] for a in axes))

    def transpose(self, *axes: Any) -> Array:
        """A view with the dimensions permuted (reversed when no axes are given), like ndarray.transpose.

        Examples:
            >>> x = pm.zeros((2, 3, 4))
            >>> x.transpose().shape, x.transpose(1, 0, 2).shape
            ((4, 3, 2), (3, 2, 4))
        """
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return self.permute_dims(axes) if axes else self.T

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> Array:
        """The array in a new shape: a view when NumPy's reshape would give one.

        Args:
            shape: the new shape, as ints or one tuple; one dimension may be -1.
            order: "F" reads and writes the elements in Fortran order (as NumPy's).
            copy: True always copies, False raises ValueError where a copy would be needed.

        Examples:
            >>> pm.arange(6).reshape(2, 3)
            Array([[0, 1, 2],
                   [3, 4, 5]], dtype=int64)
            >>> pm.arange(6).reshape((3, -1)).shape
            (3, 2)
        """
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        if order != "C":
            from .numpy_api.methods import _reshape_order
            return _reshape_order(self, shape, order, copy)
        shape = _resolve_shape(shape, self._size)
        if self._cc:
            strides = None
        else:
            strides = _nocopy_strides(self._shape, self._strides, shape, self._dtype.itemsize)
        if copy or (strides is None and not self._cc):
            if copy is False:
                raise ValueError("reshape(copy=False): this layout cannot be reshaped to %r without a copy" % (shape,))
            src = self if self._cc else _ew.ascontiguous(self)
            if copy and src is self:
                src = _ew.ascontiguous(self, force=True)
            return src._view(src._offset, shape, None)
        return self._view(self._offset, shape, strides)

    def broadcast_to(self, shape: ShapeLike) -> Array:
        """A read-only view broadcast to `shape` (repeated elements share memory), as NumPy's.

        Examples:
            >>> pm.asarray([1, 2, 3]).broadcast_to((2, 3))
            Array([[1, 2, 3],
                   [1, 2, 3]], dtype=int64)
        """
        shape = normalize_shape(shape)
        nd = len(shape)
        if nd < self.ndim:
            raise ValueError("cannot broadcast shape %r to %r (fewer dimensions)" % (self._shape, shape))
        pad = nd - self.ndim
        strides = []
        for i, n in enumerate(shape):
            if i < pad:
                strides.append(0)
                continue
            m, s = self._shape[i - pad], self._strides[i - pad]
            if m == n:
                strides.append(s)
            elif m == 1:
                strides.append(0)
            else:
                raise ValueError("cannot broadcast shape %r to %r" % (self._shape, shape))
        v = self._view(self._offset, shape, tuple(strides))
        v._ro = _READONLY_BASE  # a write would land in several elements at once
        return v

    def expand_dims(self, axis: int | tuple[int, ...] = 0) -> Array:
        """A view with a new dimension of size 1 at `axis` (or at each of several axes).

        Examples:
            >>> pm.zeros((2, 3)).expand_dims(1).shape
            (2, 1, 3)
        """
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        nd = self.ndim + len(axes)
        axes = sorted(normalize_axis(a, nd) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError("expand_dims: repeated axis in %r" % (axis,))
        shape, strides = list(self._shape), list(self._strides)
        for a in axes:
            shape.insert(a, 1)
            strides.insert(a, 0)
        return self._view(self._offset, tuple(shape), tuple(strides))

    def squeeze(self, axis: int | tuple[int, ...] | None = None) -> Array:
        """A view without the dimensions of size 1 (all of them, or those in `axis`).

        Examples:
            >>> pm.zeros((1, 3, 1)).squeeze().shape
            (3,)
            >>> pm.zeros((1, 3, 1)).squeeze(axis=0).shape
            (3, 1)
        """
        if axis is None:
            keep = [i for i, n in enumerate(self._shape) if n != 1]
        else:
            axes = {normalize_axis(a, self.ndim) for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis)}
            for a in axes:
                if self._shape[a] != 1:
                    raise ValueError("squeeze: dimension %d has size %d, not 1" % (a, self._shape[a]))
            keep = [i for i in range(self.ndim) if i not in axes]
        return self._view(self._offset, tuple(self._shape[i] for i in keep), tuple(self._strides[i] for i in keep))

    def ravel(self) -> Array:
        """The elements in one dimension (a view when possible).

        Examples:
            >>> pm.asarray([[1, 2], [3, 4]]).ravel()
            Array([1, 2, 3, 4], dtype=int64)
        """
        return self.reshape(-1)

    def flatten(self) -> Array:
        """A copy of the elements in one dimension.

        Examples:
            >>> pm.asarray([[1, 2], [3, 4]]).T.flatten()
            Array([1, 3, 2, 4], dtype=int64)
        """
        return self.reshape(-1, copy=True)

    def view(self, dtype: DTypeLike = None) -> Array:
        """The same memory seen as another dtype of the same itemsize (or the same dtype).

        Examples:
            >>> pm.asarray([1.0, -2.0]).view(pm.uint32)
            Array([1065353216, 3221225472], dtype=uint32)
        """
        if dtype is None:
            return self._view(self._offset, self._shape, self._strides)
        dt = check_dtype(dtype)
        if dt.itemsize != self._dtype.itemsize:
            raise ValueError("view(): %s and %s differ in size; only same-size views are supported" % (dt, self._dtype))
        return self._view(self._offset, self._shape, self._strides, dt)

    # ---- host access ------------------------------------------------------------
    def _host(self, counted=False):
        """A NumPy view of the memory without waiting for pending work (internal);
        `counted`: a new one for the user, whose life its Buffer's `views` counts."""
        a = self._np
        if a is None or counted:
            buf = self._buf
            base = np.asarray(View(buf, 0, max(buf.length, 1), counted))
            a = np.ndarray(self._shape, self._dtype, buffer=base, offset=self._offset, strides=self._strides)
            if not counted:
                self._np = a
        return a

    def _read(self):
        """The memory as NumPy for a read by the host: after the work that writes
        it, and raising the KernelError of failed work that may have written it."""
        buf = self._buf
        dev = buf.device
        if buf.epoch > dev.synced:
            dev._wait()
        if dev.poisoned.value:
            buf.check()
        return self._host()

    def numpy(self) -> np.ndarray:
        """A zero-copy NumPy view of the array (after pending work completed).

        Writing to the view writes to the pymetal array. While a view lives,
        kernel calls that use the array complete before they return, so that
        the view never shows stale data and queued work never sees a later
        write through it. Raises KernelError if failed work may have written it.

        Examples:
            >>> x = pm.arange(3)
            >>> a = x.numpy()
            >>> a[0] = 7
            >>> x
            Array([7, 1, 2], dtype=int64)
        """
        self._read()
        a = self._host(counted=True)
        if self._ro:
            a.flags.writeable = False  # a read-only array gives a read-only view (and DLPack export)
        return a

    def __array__(self, dtype: DTypeLike = None, copy: bool | None = None) -> np.ndarray:
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("converting a pymetal array to %s requires a copy" % np.dtype(dtype))
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    def tolist(self) -> Any:
        """The elements as nested Python lists of Python scalars.

        Examples:
            >>> pm.asarray([[1, 2], [3, 4]]).tolist()
            [[1, 2], [3, 4]]
        """
        return self._read().tolist()

    def item(self, *args: int) -> Any:
        """One element as a Python scalar (the only one, or the one at the given index).

        Examples:
            >>> pm.asarray([[1.5]]).item()
            1.5
            >>> pm.asarray([10, 20, 30]).item(2)
            30
        """
        return self._read().item(*args)

    def _scalar(self, kind):
        if self._size != 1:
            if kind is bool:  # NumPy's error (a ValueError) for bool(x == y) of arrays
                raise ValueError("the truth value of an array with %d elements is ambiguous (shape %r); "
                                 "use pm.any(x) or pm.all(x)" % (self._size, self._shape))
            raise TypeError("only size-1 arrays can be converted to Python scalars (this one has shape %r)"
                            % (self._shape,))
        a = self._read().reshape(())
        return kind(a.item() if kind is not bool else a[()])

    def __bool__(self) -> bool:
        return self._scalar(bool)

    def __int__(self) -> int:
        return self._scalar(int)

    def __float__(self) -> float:
        return self._scalar(float)

    def __index__(self) -> int:
        if _dt.kind(self._dtype) not in "iu":
            raise TypeError("only integer arrays can be used as an index, not %s" % self._dtype)
        return self._scalar(int)

    def __complex__(self) -> complex:
        return complex(self._scalar(complex))

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The Python Array API namespace of pymetal arrays: the pymetal module.

        Examples:
            >>> pm.zeros(2).__array_namespace__() is pm
            True
        """
        import pymetal
        if api_version is not None and api_version not in _api.SUPPORTED_VERSIONS:
            raise ValueError("api_version=%r: pymetal implements the Array API %s (and accepts %s)"
                             % (api_version, _api.API_VERSION, ", ".join(_api.SUPPORTED_VERSIONS)))
        return pymetal

    def __iter__(self) -> Iterator[Array]:
        if not self._shape:
            raise TypeError("iteration over a 0-d pymetal array")
        for i in range(self._shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        a = self._read()
        name = _dt.NAMES.get(self._dtype, str(self._dtype))
        if a.size == 0:
            return "Array([], shape=%r, dtype=%s)" % (self._shape, name)
        body = np.array2string(a, separator=", ", prefix="Array(")
        return "Array(%s, dtype=%s)" % (body, name)

    def __str__(self) -> str:
        return str(self._read())

    def __format__(self, spec: str) -> str:
        return format(self.numpy(), spec) if spec else str(self)

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'pymetal.Array'")

    # ---- copies and conversions ---------------------------------------------------
    def copy(self) -> Array:
        """A new C-contiguous array with a copy of the data (a kernel).

        Examples:
            >>> x = pm.asarray([1, 2])
            >>> y = x.copy()
            >>> y[0] = 5
            >>> x, y
            (Array([1, 2], dtype=int64), Array([5, 2], dtype=int64))
        """
        return _ew.ascontiguous(self, force=True)

    def __copy__(self) -> Array:
        return self.copy()  # an independent copy, as copy.copy of an ndarray

    def __deepcopy__(self, memo: Any) -> Array:
        return self.copy()

    def __dask_tokenize__(self) -> Any:
        # Dask calls this first on a pymetal array (da.from_array tokenizes its input): it loads
        # the Dask integration (chunk type, sizeof, backend) on the way.
        from .. import dask as _dask
        return _dask.token(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # The elements in C order, the dtype and the shape. With protocol 5 the bytes go as a
        # PickleBuffer over the array's own memory, which pickle can send out of band
        # (dask.distributed does): no copy on the sending side for a C-contiguous array.
        # Views pickle as their elements only (as NumPy's): the receiver gets a new C-contiguous array.
        x = self if self._cc else self.copy()
        host = x.numpy()
        if protocol >= 5:
            import pickle
            data: Any = pickle.PickleBuffer(host.reshape(-1).view(np.uint8) if x._size else b"")  # type: ignore[arg-type]
        else:
            data = host.tobytes()
        return _unpickle, (data, self._dtype, self._shape)

    def astype(self, dtype: DTypeLike, copy: bool = True) -> Array:
        """The values converted to `dtype` (C casting, as NumPy's astype).

        With copy=False the array itself is returned when it already has that dtype.

        Examples:
            >>> pm.asarray([1.7, -2.5]).astype(pm.int32)
            Array([ 1, -2], dtype=int32)
        """
        dt = check_dtype(dtype)
        if dt == self._dtype and not copy:
            return self
        if _dt.kind(self._dtype) == "c" and _dt.kind(dt) not in "cb":
            # The Array API leaves complex -> real casts undefined; NumPy drops the imaginary part.
            raise TypeError("astype: converting complex64 to %s would drop the imaginary part; "
                            "use pm.real(x) or pm.abs(x)" % _dt.NAMES[dt])
        return _ew.astype(self, dt)

    def fill(self, value: Scalar | Array) -> None:
        """Sets every element to `value` (a kernel).

        Examples:
            >>> x = pm.empty(3, pm.int32)
            >>> x.fill(7)
            >>> x
            Array([7, 7, 7], dtype=int32)
        """
        _ew.fill(self, value)

    def to_device(self, device: Device | str | None, /, stream: Any = None) -> Array:
        """The array on `device`: itself (a pymetal device's memory is shared with the CPU).

        Examples:
            >>> x = pm.zeros(2)
            >>> x.to_device(pm.device()) is x
            True
        """
        if device is not None and device is not self._buf.device and device != "cpu":
            raise ValueError("to_device: pymetal arrays live on %r" % (self._buf.device,))
        return self

    # ---- indexing -------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Array:
        """Indexing as NumPy's: basic indexing (ints, slices, ``...``, None) gives a view;
        integer arrays and boolean masks gather (a kernel).

        Examples:
            >>> x = pm.arange(12).reshape(3, 4)
            >>> x[1]
            Array([4, 5, 6, 7], dtype=int64)
            >>> x[:, ::2]
            Array([[ 0,  2],
                   [ 4,  6],
                   [ 8, 10]], dtype=int64)
            >>> x[x > 8]
            Array([ 9, 10, 11], dtype=int64)
            >>> x[pm.asarray([2, 0]), 1]
            Array([9, 1], dtype=int64)
        """
        return _ix.getitem(self, key)

    def __setitem__(self, key: Any, value: ArrayLike) -> None:
        """Assignment through an index, as NumPy's (the value is broadcast and converted).

        Examples:
            >>> x = pm.zeros(5, pm.int32)
            >>> x[1:3] = 7
            >>> x[pm.asarray([0, 4])] = pm.asarray([1, 2], dtype=pm.int32)
            >>> x
            Array([1, 7, 7, 0, 2], dtype=int32)
        """
        _ix.setitem(self, key, value)

    if TYPE_CHECKING:
        # Set on the class by _elementwise.py, _linalg.py, _dlpack.py and _interop.py;
        # declared here for type checkers.
        def __add__(self, other: ArrayLike, /) -> Array: ...
        def __radd__(self, other: ArrayLike, /) -> Array: ...
        def __iadd__(self, other: ArrayLike, /) -> Array: ...
        def __sub__(self, other: ArrayLike, /) -> Array: ...
        def __rsub__(self, other: ArrayLike, /) -> Array: ...
        def __isub__(self, other: ArrayLike, /) -> Array: ...
        def __mul__(self, other: ArrayLike, /) -> Array: ...
        def __rmul__(self, other: ArrayLike, /) -> Array: ...
        def __imul__(self, other: ArrayLike, /) -> Array: ...
        def __truediv__(self, other: ArrayLike, /) -> Array: ...
        def __rtruediv__(self, other: ArrayLike, /) -> Array: ...
        def __itruediv__(self, other: ArrayLike, /) -> Array: ...
        def __floordiv__(self, other: ArrayLike, /) -> Array: ...
        def __rfloordiv__(self, other: ArrayLike, /) -> Array: ...
        def __ifloordiv__(self, other: ArrayLike, /) -> Array: ...
        def __mod__(self, other: ArrayLike, /) -> Array: ...
        def __rmod__(self, other: ArrayLike, /) -> Array: ...
        def __imod__(self, other: ArrayLike, /) -> Array: ...
        def __pow__(self, other: ArrayLike, /) -> Array: ...
        def __rpow__(self, other: ArrayLike, /) -> Array: ...
        def __ipow__(self, other: ArrayLike, /) -> Array: ...
        def __and__(self, other: ArrayLike, /) -> Array: ...
        def __rand__(self, other: ArrayLike, /) -> Array: ...
        def __iand__(self, other: ArrayLike, /) -> Array: ...
        def __or__(self, other: ArrayLike, /) -> Array: ...
        def __ror__(self, other: ArrayLike, /) -> Array: ...
        def __ior__(self, other: ArrayLike, /) -> Array: ...
        def __xor__(self, other: ArrayLike, /) -> Array: ...
        def __rxor__(self, other: ArrayLike, /) -> Array: ...
        def __ixor__(self, other: ArrayLike, /) -> Array: ...
        def __lshift__(self, other: ArrayLike, /) -> Array: ...
        def __rlshift__(self, other: ArrayLike, /) -> Array: ...
        def __ilshift__(self, other: ArrayLike, /) -> Array: ...
        def __rshift__(self, other: ArrayLike, /) -> Array: ...
        def __rrshift__(self, other: ArrayLike, /) -> Array: ...
        def __irshift__(self, other: ArrayLike, /) -> Array: ...
        def __matmul__(self, other: ArrayLike, /) -> Array: ...
        def __rmatmul__(self, other: ArrayLike, /) -> Array: ...
        def __imatmul__(self, other: ArrayLike, /) -> Array: ...
        def __eq__(self, other: object, /) -> Array: ...  # type: ignore[override]  # elementwise, as NumPy
        def __ne__(self, other: object, /) -> Array: ...  # type: ignore[override]  # elementwise, as NumPy
        def __lt__(self, other: ArrayLike, /) -> Array: ...
        def __le__(self, other: ArrayLike, /) -> Array: ...
        def __gt__(self, other: ArrayLike, /) -> Array: ...
        def __ge__(self, other: ArrayLike, /) -> Array: ...
        def __neg__(self) -> Array: ...
        def __pos__(self) -> Array: ...
        def __abs__(self) -> Array: ...
        def __invert__(self) -> Array: ...
        def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                       dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any: ...
        def __dlpack_device__(self) -> tuple[int, int]: ...
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any: ...
        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any: ...
        # Set on the class by _numpy_methods.py (ndarray's real and imag, writable).
        @property
        def real(self) -> Array: ...
        @real.setter
        def real(self, value: Any) -> None: ...
        @property
        def imag(self) -> Array: ...
        @imag.setter
        def imag(self, value: Any) -> None: ...


# ---- helpers for views -----------------------------------------------------------

def normalize_axis(axis: int, ndim: int) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError("axis must be an int, not %r" % (axis,)) from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError("axis %d is out of bounds for an array of %d dimensions" % (a, ndim))
    return a % ndim if ndim else 0


def axis_last(ndim, axis):
    """(permutation moving `axis` last, its inverse): kernels that work along the last axis."""
    order = [i for i in range(ndim) if i != axis] + [axis]
    inverse = [0] * ndim
    for i, a in enumerate(order):
        inverse[a] = i
    return order, inverse


def _resolve_shape(shape, size):
    shape = tuple(operator.index(n) for n in shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ValueError("reshape: invalid shape %r (at most one -1, no other negative sizes)" % (shape,))
    known = 1
    for n in shape:
        if n != -1:
            known *= n
    if unknown:
        if known == 0 or size % known:
            raise ValueError("cannot reshape an array of size %d into shape %r" % (size, shape))
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    elif known != size:
        raise ValueError("cannot reshape an array of size %d into shape %r" % (size, shape))
    return shape


def _nocopy_strides(old_shape, old_strides, new_shape, itemsize):
    """Strides that view (old_shape, old_strides) as new_shape, or None (NumPy's rule)."""
    if 0 in old_shape:
        return c_strides(new_shape, itemsize)
    dims = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    od = [n for n, _ in dims]
    os_ = [s for _, s in dims]
    nd = list(new_shape)
    ns = [0] * len(nd)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(nd) and oi < len(od):
        np_, op = nd[ni], od[oi]
        while np_ != op:
            if np_ < op:
                np_ *= nd[nj]
                nj += 1
            else:
                op *= od[oj]
                oj += 1
        for k in range(oi, oj - 1):
            if os_[k] != od[k + 1] * os_[k + 1]:
                return None
        ns[nj - 1] = os_[oj - 1]
        for k in range(nj - 1, ni, -1):
            ns[k - 1] = ns[k] * nd[k]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = ns[ni - 1] if ni >= 1 else itemsize
    for k in range(ni, len(nd)):
        ns[k] = last
    return tuple(ns)


# ---- constructors -------------------------------------------------------------------

_LAYOUTS: dict = {}  # (shape, dtype, page size) -> (size, nbytes, C strides, allocator size class)
_make_array = object.__new__


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
    a = _make_array(Array)
    a._buf = Buffer.new(dev, layout[1], layout[3])
    a._offset = 0
    a._shape = shape
    a._dtype = dt
    a._size = layout[0]
    a._strides = layout[2]
    a._cc = True
    a._np = None
    a._ro = 0
    return a


def _device(device):
    if device is None or device == "cpu":
        return _default_device()
    from ..runtime.device import Device
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


def zeros(shape: ShapeLike, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new array of zeros (float32 unless dtype is given).

    Examples:
        >>> pm.zeros((2, 2))
        Array([[0., 0.],
               [0., 0.]], dtype=float32)
    """
    return full(shape, 0, dtype or _dt.default_float, device=device)


def ones(shape: ShapeLike, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new array of ones (float32 unless dtype is given).

    Examples:
        >>> pm.ones(3, pm.int8)
        Array([1, 1, 1], dtype=int8)
    """
    return full(shape, 1, dtype or _dt.default_float, device=device)


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


def full(shape: ShapeLike, fill_value: Scalar, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new array filled with fill_value (dtype inferred: int -> int64, float -> float32).

    Examples:
        >>> pm.full((2,), 7)
        Array([7, 7], dtype=int64)
        >>> pm.full(2, 0.5)
        Array([0.5, 0.5], dtype=float32)
    """
    dt = check_dtype(dtype) if dtype is not None else _scalar_dtype(fill_value)
    x = _new(normalize_shape(shape), dt, _device(device))
    _ew.fill(x, fill_value)
    return x


def _like(a, dtype):
    return check_dtype(dtype) if dtype is not None else check_dtype(a.dtype)


def empty_like(x: ArrayLike, /, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new uninitialised array of x's shape and dtype (or `dtype`).

    Examples:
        >>> pm.empty_like(pm.zeros((2, 3), pm.int16)).dtype
        dtype('int16')
    """
    return empty(np.shape(x), _like(x, dtype), device=device)


def zeros_like(x: ArrayLike, /, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new array of zeros of x's shape and dtype (or `dtype`).

    Examples:
        >>> pm.zeros_like(pm.asarray([1, 2, 3]))
        Array([0, 0, 0], dtype=int64)
    """
    return zeros(np.shape(x), _like(x, dtype), device=device)


def ones_like(x: ArrayLike, /, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new array of ones of x's shape and dtype (or `dtype`).

    Examples:
        >>> pm.ones_like(pm.asarray([1, 2]), dtype=pm.float32)
        Array([1., 1.], dtype=float32)
    """
    return ones(np.shape(x), _like(x, dtype), device=device)


def full_like(x: ArrayLike, /, fill_value: Scalar, dtype: DTypeLike = None, *,
              device: Device | None = None) -> Array:
    """A new array of x's shape and dtype (or `dtype`) filled with fill_value.

    Examples:
        >>> pm.full_like(pm.zeros(2), 3.5)
        Array([3.5, 3.5], dtype=float32)
    """
    return full(np.shape(x), fill_value, _like(x, dtype), device=device)


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
    check_dtype(a.dtype)
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
    if isinstance(obj, (list, tuple)):
        return [_host_values(x) for x in obj]
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


# Kernel calls bind Arrays by their buffer (runtime/ knows them only through this seam).
bindable.register(Array, owner_of)

# The operator and indexing implementations (imported last: they import Array).
from . import namespace_extras as _api  # noqa: E402
from . import elementwise as _ew  # noqa: E402
from . import indexing as _ix  # noqa: E402
