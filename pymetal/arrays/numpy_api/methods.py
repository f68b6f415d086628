"""ndarray's methods on pymetal arrays, with NumPy's signatures (issue 23): ``x.sum(1)``,
``x.mean(0)``, ``x.std(ddof=1)``, ``x.sort()`` (in place), ``x.cumsum()``, ``x.clip``,
``x.round``, ``x.dot``, ``x.astype(float)`` (Python's float is float32, the default
float type), ``x.real`` / ``x.imag`` (views, as NumPy's), ``x.reshape(..., order=)``.

The reductions and sorts are the module's NumPy-style functions (numpy_api/reduce.py);
_METHODS names what arrays/methods.py binds on Array.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import namespace_extras as _api
from .. import elementwise as _ew
from .. import indexing as _ix
from .. import manipulation as _m
from . import functions as _npa
from . import reduce as _nr
from .. import sorting as _s
from ... import dtypes as _dt
from ...dtypes import check_dtype
from ..array import Array, check_writeable
from ..construct import asarray as _asarray
from ..layout import normalize_shape
from .ufuncs import round as _round, divmod_ as _divmod_
from . import host_names as _hn
from . import host_methods as _hm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from ..._typing import ArrayLike, DTypeLike, Scalar

def _astype(self: Array, dtype: DTypeLike, copy: bool = True) -> Array:
    """The Array API's astype: C casting; copy=False returns the array itself when it already
    has that dtype; complex to real is refused."""
    dt = check_dtype(dtype)
    if dt == self._dtype and not copy:
        return self
    if _dt.kind(self._dtype) == "c" and _dt.kind(dt) not in "cb":
        # The Array API leaves complex -> real casts undefined; NumPy drops the imaginary part.
        raise TypeError("astype: converting complex64 to %s would drop the imaginary part; "
                        "use pm.real(x) or pm.abs(x)" % _dt.NAMES[dt])
    return _ew.astype(self, dt)


def astype(self: Array, dtype: DTypeLike, order: str = "K", casting: str = "unsafe", subok: bool = True,
           copy: bool = True) -> Array:
    """The values converted to `dtype` (C casting, as NumPy's astype); Python's float, int,
    complex and bool are pymetal's defaults (float32, int64, complex64, bool).

    Examples:
        >>> pm.asarray([1, 2]).astype(float)
        Array([1., 2.], dtype=float32)
    """
    return _astype(self, dtype, copy=copy)


def _order(order, name):
    if order not in ("C", "F", "A", "K", None):
        raise ValueError("%s: order must be 'C', 'F', 'A' or 'K', not %r" % (name, order))
    return order == "F"


def _reshape_order(self: Array, shape: Any, order: str, copy: bool | None) -> Array:
    """x.reshape(shape, order=...) for an order other than "C" (NumPy's orders)."""
    if not _order(order, "reshape"):
        return self.reshape(shape, copy=copy)
    # Fortran order: reverse the dimensions before and after a C-order reshape
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return self.T.reshape(shape[::-1], copy=copy).T


def ravel(self: Array, order: str = "C") -> Array:
    """The elements in one dimension (a view when possible); order="F" column by column.

    Examples:
        >>> pm.asarray([[1, 2], [3, 4]]).ravel("F")
        Array([1, 3, 2, 4], dtype=int64)
    """
    return (self.T if _order(order, "ravel") else self).reshape(-1)


def flatten(self: Array, order: str = "C") -> Array:
    """A copy of the elements in one dimension (order="F": column by column).

    Examples:
        >>> pm.asarray([[1, 2], [3, 4]]).flatten()
        Array([1, 2, 3, 4], dtype=int64)
    """
    return (self.T if _order(order, "flatten") else self).reshape(-1, copy=True)


def clip(self: Array, min: Any = None, max: Any = None, out: Array | None = None, **kwargs: Any) -> Array:
    """Values limited to [min, max] (either may be None).

    Examples:
        >>> pm.asarray([-5, 0, 5, 10]).clip(0, 6)
        Array([0, 0, 5, 6], dtype=int64)
    """
    if kwargs:
        raise TypeError("clip: unsupported keyword(s) %s" % sorted(kwargs))
    return _nr.into(_ew.clip(self, min, max), out)


def round(self: Array, decimals: int = 0, out: Array | None = None) -> Array:
    """Rounded to `decimals` places, halves to even (as pm.round).

    Examples:
        >>> pm.asarray([1.234, 5.678]).round(1)
        Array([1.2, 5.7], dtype=float32)
    """
    return _round(self, decimals, out)


def take(self: Array, indices: ArrayLike, axis: int | None = None, out: Array | None = None,
         mode: str = "raise") -> Array:
    """Elements at `indices` along axis (of the flattened array when axis is None).

    Examples:
        >>> pm.asarray([[1, 2], [3, 4]]).take([0, 3])
        Array([1, 4], dtype=int64)
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError("take: mode must be 'raise', 'wrap' or 'clip', not %r" % (mode,))
    x, ax = _nr._flat_axis(self, axis)
    idx = _ew.as_array(indices)
    n = x._shape[ax] if x.ndim else 0
    if mode == "wrap" and n:
        idx = _ew.binary("remainder", idx, n)
    elif mode == "clip":
        idx = _ew.clip(idx, 0, n - 1)
    return _nr.into(_ix.take(x, idx, axis=ax), out)


def repeat(self: Array, repeats: Any, axis: int | None = None) -> Array:
    """Each element repeated (flattened first when axis is None).

    Examples:
        >>> pm.asarray([1, 2]).repeat(2)
        Array([1, 1, 2, 2], dtype=int64)
    """
    return _m.repeat(self, repeats, axis=axis)


def searchsorted(self: Array, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None) -> Array:
    """Indices where v's values would be inserted into this sorted 1-D array.

    Examples:
        >>> pm.asarray([1, 3, 5]).searchsorted(4)
        Array(2, dtype=int64)
    """
    return _s.searchsorted(self, v, side=side, sorter=sorter)


def nonzero(self: Array) -> tuple[Array, ...]:
    """Index arrays of the non-zero elements, one per dimension.

    Examples:
        >>> pm.asarray([0, 3, 0, 4]).nonzero()
        (Array([1, 3], dtype=int64),)
    """
    return _s.nonzero(self)


def conj(self: Array) -> Array:
    """The complex conjugate (a copy for real arrays); also ``x.conjugate()``.

    Examples:
        >>> pm.asarray([1 + 2j]).conj()
        Array([1.-2.j], dtype=complex64)
    """
    return _api.conj(self) if self._dtype != _dt.bool_ else self.copy()  # NumPy's conj of bool: a copy


def put(self: Array, indices: ArrayLike, values: ArrayLike, mode: str = "raise") -> None:
    """Sets the elements at flat `indices` to values (in place).

    Examples:
        >>> x = pm.zeros(4, pm.int64)
        >>> x.put([0, 2], [5, 6])
        >>> x
        Array([5, 0, 6, 0], dtype=int64)
    """
    if mode != "raise":
        raise ValueError("put: only mode='raise' is supported")
    check_writeable(self)
    if not self._cc:
        raise ValueError("put: the array must be C-contiguous (its flat elements are set in place)")
    self.reshape(-1)[_ew.as_array(indices)] = values


def tobytes(self: Array, order: Literal["C", "F", "A", "K"] = "C") -> bytes:
    """The elements' bytes in C (or Fortran) order.

    Examples:
        >>> pm.asarray([1, 2], dtype=pm.uint8).tobytes()
        b'\\x01\\x02'
    """
    return self.numpy().tobytes(order)


def partition(self: Array, kth: Any, axis: int = -1, kind: str = "introselect", order: Any = None) -> None:
    """Partitions the array in place around the kth element(s) (here: sorts it, a valid partition).

    Examples:
        >>> x = pm.asarray([3, 4, 2, 1])
        >>> x.partition(2)
        >>> int(x[2])
        3
    """
    _nr._check_kth(self, kth, axis)
    _nr.sort_inplace(self, axis, order=order)


def _real(self: Array) -> Array:
    """The real part: a view of complex arrays (writes go to the array), the array itself otherwise.

    Examples:
        >>> pm.asarray([1 + 2j, 3 - 1j]).real
        Array([1., 3.], dtype=float32)
    """
    if _dt.kind(self._dtype) != "c":
        return self
    return self._view(self._offset, self._shape, self._strides, _dt.float32)


def _imag(self: Array) -> Array:
    """The imaginary part: a view of complex arrays; zeros (a new array) for real ones.

    Examples:
        >>> pm.asarray([1 + 2j, 3 - 1j]).imag
        Array([ 2., -1.], dtype=float32)
    """
    if _dt.kind(self._dtype) != "c":
        return _api.imag(self)
    return self._view(self._offset + 4, self._shape, self._strides, _dt.float32)


def _real_set(self: Array, value: Any) -> None:
    _ew.copy_into(_ew.as_array(value), _real(self)) if _dt.kind(self._dtype) == "c" else self.__setitem__(..., value)


def _imag_set(self: Array, value: Any) -> None:
    if _dt.kind(self._dtype) != "c":
        raise TypeError("array does not have imaginary part to set")
    _ew.copy_into(_ew.as_array(value), _imag(self))


def _divmod(self: Array, other: Any) -> tuple[Array, Array]:
    """divmod(x, y): (x // y, x % y), as NumPy's."""
    return _divmod_(self, other)


def _rdivmod(self: Array, other: Any) -> tuple[Array, Array]:
    return _divmod_(other, self)


def compress(self: Array, condition: ArrayLike, axis: int | None = None, out: Array | None = None) -> Array:
    """The slices along axis where the 1-D condition is True (pm.compress).

    Examples:
        >>> pm.asarray([1, 2, 3]).compress([True, False, True])
        Array([1, 3], dtype=int64)
    """
    from .more import compress as _compress
    return _compress(condition, self, axis, out)


def choose(self: Array, choices: Any, out: Array | None = None, mode: str = "raise") -> Array:
    """choices[x] elementwise (pm.choose).

    Examples:
        >>> pm.asarray([0, 1]).choose([[10, 11], [20, 21]])
        Array([10, 21], dtype=int64)
    """
    from .more import choose as _choose
    return _choose(self, choices, out, mode)


def _round_builtin(self: Array, ndigits: int | None = None) -> Any:
    """round(x) / round(x, n) of a 0-d array, as of NumPy's scalars (x.mean() is one in NumPy):
    an int without ndigits, else the rounded 0-d array."""
    if self.ndim:
        raise TypeError("round() of a %d-d pymetal array: use pm.round(x, decimals) or x.round(decimals) "
                        "(NumPy's arrays refuse round() too)" % self.ndim)
    if ndigits is None:
        return builtins.round(self.item())
    return _round(self, ndigits)


def resize(self: Array, *new_shape: Any, refcheck: bool = True) -> None:
    """NumPy's in-place resize: the array takes new_shape, its elements in C order, new ones
    zero. Only an array that owns its memory resizes (a view raises ValueError, as NumPy's).
    Views made before keep the old memory (NumPy's refcheck=False would leave them dangling),
    so refcheck is not needed and not checked.

    Examples:
        >>> x = pm.asarray([1, 2, 3])
        >>> x.resize(2, 2)
        >>> x
        Array([[1, 2],
               [3, 0]], dtype=int64)
    """
    if len(new_shape) == 1 and not isinstance(new_shape[0], (int, np.integer)):
        new_shape = tuple(new_shape[0])
    shape = normalize_shape(new_shape)
    if self._base is not None or not self._cc:
        raise ValueError("resize: cannot resize this array: it does not own its data (it is a view); "
                         "use pm.resize(x, shape) for a new array, or x = x.copy() first")
    check_writeable(self)
    if math.prod(shape) == self._size:
        self.shape = shape
        return
    new = _asarray(np.zeros(shape, self._dtype), device=self.device)  # (any dtype, float64 too)
    k = builtins.min(new._size, self._size)
    if k:
        new.reshape(-1)[:k] = self.reshape(-1)[:k]
    self._buf, self._offset, self._size = new._buf, new._offset, new._size
    self._shape, self._strides, self._cc, self._np = new._shape, new._strides, True, None


_METHODS = {
    "sum": _nr.sum, "prod": _nr.prod, "max": _nr.max, "min": _nr.min, "ptp": _nr.ptp, "all": _nr.all,
    "any": _nr.any, "argmax": _nr.argmax, "argmin": _nr.argmin, "mean": _nr.mean, "var": _nr.var,
    "std": _nr.std, "cumsum": _nr.cumsum, "cumprod": _nr.cumprod, "argsort": _nr.argsort,
    "sort": _nr.sort_inplace, "argpartition": _nr.argpartition, "dot": _npa.dot, "trace": _npa.trace,
    "diagonal": _npa.diagonal, "swapaxes": _npa.swapaxes, "astype": astype,
    "ravel": ravel, "flatten": flatten, "clip": clip, "round": round, "take": take, "repeat": repeat,
    "searchsorted": searchsorted, "nonzero": nonzero, "conj": conj, "conjugate": conj, "put": put,
    "tobytes": tobytes, "partition": partition,
    "__contains__": _hn.contains, "flat": _hn.FLAT, "__divmod__": _divmod, "__rdivmod__": _rdivmod,
    "__round__": _round_builtin, "compress": compress, "choose": choose, "resize": resize,
    "tofile": _hm.tofile, "dump": _hm.dump, "dumps": _hm.dumps, "byteswap": _hm.byteswap, "setflags": _hm.setflags,
}
# ndarray's real and imag, writable (declared as properties in Array's body for type checkers)
REAL = property(_real, _real_set)
IMAG = property(_imag, _imag_set)
