"""pymetal arrays: NumPy-style n-d arrays in memory shared by the CPU and the device.

An :class:`Array` is a dtype, shape, byte strides and byte offset over a
pm_buffer. Slicing, reshape (where NumPy would give a view), transposes,
broadcasting and squeezing make views that copy nothing; every operation runs
a Metal kernel, asynchronously, in order on the device's stream. Reading an
array from the host (``.numpy()``, ``np.asarray``, printing, ``bool()``,
``item()``) first waits for the work that produced it. ``.numpy()`` never
copies: it returns a NumPy view whose ``.base`` chain keeps the memory alive.

This module: the Array's metadata, views and host access (no kernel calls).
Its operators and kernel-backed methods are bound in methods.py; constructors
are construct.py; shapes and strides layout.py.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..runtime import bindable
from ..runtime.buffer import View
from ..runtime.user_array import UserBase, user_array
from ..dtypes import check_dtype
from .small import _view as _small_view
from .layout import (
    _extent, _is_c_contiguous, _nocopy_strides, _resolve_shape, c_strides, normalize_axis, normalize_shape,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar, ShapeLike

__all__ = ["Array"]


def data_ptr(a):
    """Address of an ndarray's first element."""
    return a.__array_interface__["data"][0]


def owner_of(a, ptr=None):
    """(Buffer, byte offset) if ndarray `a` views pymetal memory, else None."""
    b = a.base
    while b is not None:
        buf = b.buffer if type(b) is View else getattr(b, "buffer", None) if type(b) is UserBase else None
        if buf is not None:  # (a UserBase NumPy made, by a ufunc of one, has none)
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


class Flags:
    """Contiguity and writeability of an array, like ndarray.flags (``writeable`` can be set)."""

    __slots__ = ("c_contiguous", "f_contiguous", "_a")

    def __init__(self, a):
        self.c_contiguous = a._cc
        self.f_contiguous = _is_c_contiguous(a._shape[::-1], a._strides[::-1], a._dtype.itemsize)
        self._a = a

    @property
    def owndata(self):
        return self._a._base is None

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
             "F": "f_contiguous", "WRITEABLE": "writeable", "W": "writeable",
             "OWNDATA": "owndata", "O": "owndata"}

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

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "_dtype", "_size", "_cc", "_np", "_ro", "_base", "__weakref__")
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
        self._base: Array | None = None  # the array a view is of (its owner, as NumPy's .base); None: an owner

    # ---- metadata -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Tuple of dimensions.

        ``x.shape = (3, 2)`` reshapes x in place where that needs no copy (as NumPy's; AttributeError
        where it would).

        Examples:
            >>> pm.zeros((2, 3)).shape
            (2, 3)
        """
        return self._shape

    @shape.setter
    def shape(self, value: ShapeLike) -> None:
        shape = _resolve_shape((value,) if isinstance(value, (int, np.integer)) else value, self._size)
        try:
            v = self.reshape(shape, copy=False)
        except ValueError:
            raise AttributeError("Incompatible shape for in-place modification: this layout needs a copy; "
                                 "use x = x.reshape(%r)" % (shape,)) from None
        self._shape, self._strides, self._cc, self._np = v._shape, v._strides, v._cc, None

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
    def base(self) -> Array | None:
        """The array whose memory this view uses (NumPy's ``.base``: the owner, never a view), None
        if the array owns its memory.

        Examples:
            >>> x = pm.arange(6)
            >>> x.base is None, x[1:].base is x, x[1:].reshape(5, 1).base is x
            (True, True, True)
        """
        return self._base

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
        v._base = self if self._base is None else self._base
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
            return self._reshape_order(shape, order, copy)
        shape = _resolve_shape(shape, self._size)
        if self._cc:
            strides = None
        else:
            strides = _nocopy_strides(self._shape, self._strides, shape, self._dtype.itemsize)
        if copy or (strides is None and not self._cc):
            if copy is False:
                raise ValueError("reshape(copy=False): this layout cannot be reshaped to %r without a copy" % (shape,))
            src = self.copy()  # a kernel (methods.py): C-contiguous memory for the new shape
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


    def view(self, dtype: DTypeLike = None) -> Array:
        """The same memory seen as another dtype, as NumPy's ``view``: of another
        itemsize, the last axis (contiguous) is re-cut in the new itemsize.

        Examples:
            >>> pm.asarray([1.0, -2.0]).view(pm.uint32)
            Array([1065353216, 3221225472], dtype=uint32)
            >>> pm.asarray([1, 2], dtype=pm.int32).view(pm.uint8).shape
            (8,)
        """
        if dtype is None:
            return self._view(self._offset, self._shape, self._strides)
        dt = check_dtype(dtype)
        old = self._dtype.itemsize
        if dt.itemsize == old:
            return self._view(self._offset, self._shape, self._strides, dt)
        # NumPy's rule: the last axis must be contiguous and its bytes a whole number of new items.
        if not self._shape:
            raise ValueError("view(): a 0-d %s cannot be viewed as %s, which has another itemsize; "
                             "reshape it to 1-d first" % (self._dtype, dt))
        last = self._shape[-1]
        if self._strides[-1] != old and last != 1:
            raise ValueError("view(): to change to %s, which has another itemsize than %s, the last axis must be "
                             "contiguous; make a copy first (pm.ascontiguousarray)" % (dt, self._dtype))
        if last * old % dt.itemsize:
            raise ValueError("view(): the last axis of %d bytes is not a whole number of %s items; "
                             "%s cannot be viewed as %s" % (last * old, dt, self._dtype, dt))
        # pymetal's kernels address whole elements: the offset and every stride in new items
        if self._offset % dt.itemsize or any(st % dt.itemsize for st in self._strides[:-1]):
            raise ValueError("view(): the memory of this %s view is not aligned to %s's %d bytes; "
                             "make a copy first (pm.ascontiguousarray)" % (self._dtype, dt, dt.itemsize))
        shape = self._shape[:-1] + (last * old // dt.itemsize,)
        return self._view(self._offset, shape, self._strides[:-1] + (dt.itemsize,), dt)

    # ---- host access ------------------------------------------------------------
    def _host(self, counted=False):
        """A NumPy view of the memory without waiting for pending work (internal);
        `counted`: a new one for the user, whose life its Buffer's `views` counts."""
        a = self._np
        if counted and self._dtype.kind != "V":  # NumPy rebuilds the dtype from its typestr (not bfloat16's)
            return np.asarray(View(self._buf, self._offset, 0, True, (self._shape, self._dtype.str, self._strides)))
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
        self._settle()
        return self._host()

    def _settle(self):
        """Waits for the work that writes the memory; raises the KernelError of failed work that may have."""
        buf = self._buf
        dev = buf.device
        if buf.epoch > dev.synced:
            dev._wait()
        if dev.poisoned.value:
            buf.check()

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
        buf = self._buf
        dev = buf.device
        if buf.epoch > dev.synced or dev.poisoned.value:
            self._settle()  # not _read(): its uncounted view would cost as much as this one
        if self._dtype.kind == "V":  # NumPy rebuilds the dtype from its typestr (not bfloat16's): the slow way
            a = self._host(counted=True)
        else:
            a = user_array(buf, self._offset, self._shape, self._dtype, self._strides)
        if self._ro:
            a.flags.writeable = False  # a read-only array gives a read-only view (and DLPack export)
        return a

    def __array__(self, dtype: DTypeLike = None, copy: bool | None = None) -> np.ndarray:
        if dtype is None and not copy:  # np.asarray(x): the hot path
            buf = self._buf
            dev = buf.device
            if buf.epoch <= dev.synced and not dev.poisoned.value and not self._ro and self._dtype.kind != "V":
                # numpy() when nothing is pending, no error is possible and no flag is to set, inlined
                return user_array(buf, self._offset, self._shape, self._dtype, self._strides)
            return self.numpy()
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
        self._settle()
        if self._dtype.kind != "V":
            # Through the view the host path keeps per address (small._view: the same
            # memory comes back from the allocator op after op); item() of a size-1 array
            return kind(_small_view(self).item())
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
        # A 0-d array stands for NumPy's scalar (x[i], x.sum()): hashed by its value as one is
        # (set(x), dict keys, v in d); an array of elements is unhashable, as an ndarray.
        if self._shape:
            raise TypeError("unhashable type: 'pymetal.Array' (an array of shape %r; a key of its values: "
                            "tuple(x.tolist()))" % (self._shape,))
        return hash(self.item())

    # ---- copies and conversions ---------------------------------------------------

    def __copy__(self) -> Array:
        return self.copy()  # an independent copy, as copy.copy of an ndarray

    def __deepcopy__(self, memo: Any) -> Array:
        return self.copy()

    def __dask_tokenize__(self) -> Any:
        # Dask calls this first on a pymetal array (da.from_array tokenizes its input): it loads
        # the Dask integration (chunk type, sizeof, backend) on the way.
        from .. import dask as _dask
        return _dask.token(self)


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


    if TYPE_CHECKING:
        # Bound by methods.py (the kernel-backed methods and the operators); declared here
        # for type checkers.
        def copy(self) -> Array: ...
        def astype(self, dtype: DTypeLike, order: str = "K", casting: str = "unsafe", subok: bool = True,
                   copy: bool = True) -> Array: ...
        def fill(self, value: Scalar | Array) -> None: ...
        def ravel(self, order: str = "C") -> Array: ...
        def flatten(self, order: str = "C") -> Array: ...
        def __getitem__(self, key: Any) -> Array: ...
        def __setitem__(self, key: Any, value: ArrayLike) -> None: ...
        def __array_namespace__(self, /, *, api_version: str | None = None) -> Any: ...
        def __reduce_ex__(self, protocol: Any) -> Any: ...
        def _reshape_order(self, shape: Any, order: str, copy: bool | None) -> Array: ...
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
        # ndarray's real and imag, writable (numpy_api/methods.py).
        @property
        def real(self) -> Array: ...
        @real.setter
        def real(self, value: Any) -> None: ...
        @property
        def imag(self) -> Array: ...
        @imag.setter
        def imag(self, value: Any) -> None: ...


# Kernel calls bind Arrays by their buffer (runtime/ knows them only through this seam).
bindable.register(Array, owner_of)
