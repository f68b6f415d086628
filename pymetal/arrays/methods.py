"""Array's operators and kernel-backed methods, bound in one place.

array.py defines the Array's metadata, views and host access (and declares
what is bound here, for type checkers); the operations live in their modules
(elementwise, indexing, linear_algebra, dlpack, interop, numpy_api/methods),
and this module puts them on the class. Later entries of _BINDINGS win: an
ndarray-style method (numpy_api/methods.py) replaces a plainer one of the
same name. Imported by pymetal/arrays/__init__.py, so any use of the array
library sees the complete Array.
"""

from __future__ import annotations

import pickle

import numpy as np

from . import dlpack as _dlpack
from . import elementwise as _ew
from . import indexing as _ix
from . import interop as _interop
from . import linear_algebra as _la
from . import small as _small
from . import namespace_extras as _api
from .array import Array
from .construct import _new, _unpickle
from .creation import full as _full
from .layout import c_strides
from ..dtypes import check_dtype
from .numpy_api import methods as _npm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .._typing import ArrayLike, Scalar


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


def fill(self, value: Scalar | Array) -> None:
    """Sets every element to `value` (a kernel).

    Examples:
        >>> x = pm.empty(3, pm.int32)
        >>> x.fill(7)
        >>> x
        Array([7, 7, 7], dtype=int32)
    """
    _ew.fill(self, value)


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
    if isinstance(key, str):
        return _field(self, key)
    r = _ix.getitem(self, key)
    if not r._shape and r._base is not None and not _has_ellipsis(key):
        # One element (x[i, j], a 0-d x[()]): NumPy's is a scalar, a copy, so a, b = b, a and saving
        # x[i] before writing x keep the value; only x[..., i] of NumPy's gives a 0-d view. (The
        # library's own views take indexing.getitem, which makes views of any rank.)
        res = _new((), r._dtype, r._buf.device)
        return res if _small.copy_element(r, res) else _ew.copy_into(r, res)
    return r


def _field(x, name):
    """A struct array's field as a strided view of the same memory (x["pos"]), as NumPy's."""
    fields = x._dtype.fields
    if not fields:
        raise IndexError("a string index names a field of a struct array; this array's dtype is %s, with no "
                         "fields" % x._dtype)
    if name not in fields:
        raise ValueError("no field of name %s (the fields are %s)" % (name, ", ".join(x._dtype.names)))
    dt, off = fields[name][:2]
    base, sub = (dt.subdtype if dt.subdtype else (dt, ()))
    check_dtype(base)
    need = 1 if base.fields is not None else base.itemsize  # (a struct field: its own fields are checked)
    if (x._offset + off) % need or any(s % need for s in x._strides):
        raise TypeError("field %r (%s at byte %d of %d) is not aligned to its size in memory, which kernels need; "
                        "use x.numpy()[%r] (a NumPy view) or an aligned struct dtype (np.dtype(..., align=True))"
                        % (name, base, off, x._dtype.itemsize, name))
    return x._view(x._offset + off, x._shape + tuple(sub), x._strides + c_strides(tuple(sub), base.itemsize), base)


def _has_ellipsis(key):
    return key is Ellipsis or (type(key) is tuple and any(k is Ellipsis for k in key))


def __setitem__(self, key: Any, value: ArrayLike) -> None:
    """Assignment through an index, as NumPy's (the value is broadcast and converted).

    Examples:
        >>> x = pm.zeros(5, pm.int32)
        >>> x[1:3] = 7
        >>> x[pm.asarray([0, 4])] = pm.asarray([1, 2], dtype=pm.int32)
        >>> x
        Array([1, 7, 7, 0, 2], dtype=int32)
    """
    if isinstance(key, str):
        key, self = ..., _field(self, key)  # x["pos"] = v: into the field's view
    _ix.setitem(self, key, value)


def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
    """The Python Array API namespace of pymetal arrays: the pymetal module.

    Examples:
        >>> pm.zeros(2).__array_namespace__() is pm
        True
    """
    import pymetal  # the package's face (loaded by now: this is a method of one of its arrays)
    if api_version is not None and api_version not in _api.SUPPORTED_VERSIONS:
        raise ValueError("api_version=%r: pymetal implements the Array API %s (and accepts %s)"
                         % (api_version, _api.API_VERSION, ", ".join(_api.SUPPORTED_VERSIONS)))
    return pymetal


def __reduce_ex__(self, protocol: Any) -> Any:
    # The elements in C order, the dtype and the shape. With protocol 5 the bytes go as a
    # PickleBuffer over the array's own memory, which pickle can send out of band
    # (dask.distributed does): no copy on the sending side for a C-contiguous array.
    # Views pickle as their elements only (as NumPy's): the receiver gets a new C-contiguous array.
    x = self if self._cc else self.copy()
    host = x.numpy()
    if protocol >= 5:
        data: Any = pickle.PickleBuffer(host.reshape(-1).view(np.uint8) if x._size else b"")
    else:
        data = host.tobytes()
    return _unpickle, (data, self._dtype, self._shape)


def _equality(op, differ):
    """== / != that, as NumPy's, compare each element with None or a string (no number equals
    them: all False for ==, all True for !=) rather than the array as one object."""
    def cmp(self, other):
        if other is None or isinstance(other, str):
            return _full(self._shape, differ, dtype=np.dtype(bool), device=self.device)
        return op(self, other)
    cmp.__name__ = cmp.__qualname__ = op.__name__
    return cmp


def _operators():
    """The arithmetic, bitwise and comparison operators, from the op table's names."""
    ops = {}
    for py, name in _ew._OPERATORS.items():
        ops["__%s__" % py], ops["__r%s__" % py], ops["__i%s__" % py] = _ew._binop(name)
    for cmp, name in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                      ("gt", "greater"), ("ge", "greater_equal")):
        ops["__%s__" % cmp] = _ew._binop(name)[0]
    ops["__eq__"], ops["__ne__"] = _equality(ops["__eq__"], False), _equality(ops["__ne__"], True)
    ops.update(__neg__=_ew._neg, __pos__=_ew._pos, __abs__=_ew._abs, __invert__=_ew._invert)
    return ops


_BINDINGS: dict = {
    **_operators(),
    "__matmul__": _la._matmul, "__rmatmul__": _la._rmatmul, "__imatmul__": _la._imatmul,
    "copy": copy, "fill": fill, "__getitem__": __getitem__, "__setitem__": __setitem__,
    "__array_namespace__": __array_namespace__, "__reduce_ex__": __reduce_ex__,
    "__dlpack__": _dlpack._dlpack, "__dlpack_device__": _dlpack._dlpack_device,
    "__array_ufunc__": _interop._array_ufunc, "__array_function__": _interop._array_function,
    "_reshape_order": _npm._reshape_order,
    **_npm._METHODS,  # ndarray's signatures (sum(axis, dtype, out, ...), astype(float), ...)
    "real": _npm.REAL, "imag": _npm.IMAG,
}
for _name, _value in _BINDINGS.items():
    setattr(Array, _name, _value)
