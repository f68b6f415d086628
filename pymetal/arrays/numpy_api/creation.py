"""NumPy's creation functions on pymetal arrays (issue 23): eye, identity, linspace,
logspace, geomspace, meshgrid, indices, with NumPy's signatures. float64 is not a
device type: they give float32 where NumPy gives float64.
"""

from __future__ import annotations

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from ... import dtypes as _dt
from ..construct import _new
from .. import construct as _cons
from .. import creation as _c
from ..creation import arange, eye as _eye, linspace as _lin, meshgrid as _mesh
from .reduce import _bin, _with_dtype

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..array import Array
    from ..._typing import ArrayLike, DTypeLike

_A = _ew.as_array


def eye(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike = None, order: str = "C", *,
        device: Any = None) -> Array:
    """A 2-D array with ones on the k-th diagonal (NumPy's signature; float32 by default).

    Examples:
        >>> pm.eye(2, 3, 1, int)
        Array([[0, 1, 0],
               [0, 0, 1]], dtype=int64)
    """
    return _eye(N, M, k=k, dtype=dtype, device=device)


def identity(n: int, dtype: DTypeLike = None) -> Array:
    """The n x n identity matrix (float32 by default).

    Examples:
        >>> pm.identity(2)
        Array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    return eye(n, dtype=dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: DTypeLike = None, axis: int = 0, *, device: Any = None) -> Any:
    """num evenly spaced values from start to stop (NumPy's signature: num defaults to 50,
    retstep returns (values, step), array endpoints give one column per element).

    Examples:
        >>> pm.linspace(0, 1, 5)
        Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
        >>> pm.linspace(0, 1, 3, retstep=True)
        (Array([0. , 0.5, 1. ], dtype=float32), 0.5)
    """
    div = (num - 1) if endpoint else num
    if _ew.is_scalar(start) and _ew.is_scalar(stop) or isinstance(start, np.generic) and isinstance(stop, np.generic):
        res = _lin(start, stop, num, dtype=dtype, endpoint=endpoint, device=device)
        step = (stop - start) / div if div > 0 else float("nan")
    else:  # array endpoints: start + t * (stop - start) for t in [0, 1]
        lo, hi = _A(start), _A(stop)
        t = _lin(0.0, 1.0, num, endpoint=endpoint, device=device)
        shape = (num,) + _ew.broadcast_shapes(lo._shape, hi._shape)
        t = t.reshape((num,) + (1,) * (len(shape) - 1))
        step = _bin("divide", _bin("subtract", hi, lo), float(div) if div > 0 else float("nan"))
        res = _bin("add", lo, _bin("multiply", t, _bin("subtract", hi, lo)))
        if endpoint and num > 1:
            res[num - 1] = hi
        res = _with_dtype(res, dtype)
        res = _m.moveaxis(res, 0, axis)
    return (res, step) if retstep else res


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: DTypeLike = None, axis: int = 0) -> Array:
    """base ** linspace(start, stop, num).

    Examples:
        >>> pm.logspace(0, 2, 3)
        Array([  1.,  10., 100.], dtype=float32)
    """
    y = linspace(start, stop, num, endpoint, axis=axis)
    r = _bin("pow", float(base), y)
    return _with_dtype(r, dtype)


def geomspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: DTypeLike = None,
              axis: int = 0) -> Array:
    """num values from start to stop spaced evenly on a log scale (endpoints exact).

    Examples:
        >>> pm.geomspace(1, 1000, 4)
        Array([   1.,   10.,  100., 1000.], dtype=float32)
    """
    if start == 0 or stop == 0:
        raise ValueError("geomspace: start and stop must be non-zero")
    if (start < 0) != (stop < 0):
        raise ValueError("geomspace: start and stop must have the same sign (no complex results)")
    sign = -1.0 if start < 0 else 1.0
    r = _bin("multiply", _bin("pow", 10.0, linspace(np.log10(sign * start), np.log10(sign * stop), num,
                                                      endpoint)), sign)
    if num:
        r[0] = start
        if endpoint and num > 1:
            r[num - 1] = stop
    r = _with_dtype(r, dtype)
    return _m.moveaxis(r, 0, axis) if axis else r


def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Array]:
    """Coordinate arrays from 1-D arrays; sparse=True gives broadcastable views instead.

    Examples:
        >>> xs, ys = pm.meshgrid(pm.arange(3), pm.arange(2), sparse=True)
        >>> xs.shape, ys.shape
        ((1, 3), (2, 1))
    """
    if not sparse:
        return _mesh(*xi, indexing=indexing)
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', not %r" % (indexing,))
    nd = len(xi)
    out = []
    for i, x in enumerate(xi):
        j = (1 - i if i < 2 else i) if indexing == "xy" and nd >= 2 else i
        shape = [1] * nd
        shape[j] = -1
        x = _m.ravel(_A(x)).reshape(shape)
        out.append(_ew.ascontiguous(x, force=True) if copy else x)
    return out


def indices(dimensions: Any, dtype: DTypeLike = int, sparse: bool = False) -> Any:
    """An array of the index grids of shape `dimensions`, stacked first (NumPy's indices).

    Examples:
        >>> pm.indices((2, 3))[1]
        Array([[0, 1, 2],
               [0, 1, 2]], dtype=int64)
    """
    dt = _dt.check_dtype(dtype)
    grids = meshgrid(*[arange(n, dtype=dt) for n in dimensions], sparse=sparse, indexing="ij")
    if sparse:
        return grids
    if not grids:
        return _new((0,), dt, _ew.as_array(0)._buf.device)
    return _m.stack(list(grids))


# ---- NumPy's signatures of the basic constructors: order=, ndmin=, shape=, like= ---------------------
# pymetal's arrays are C-ordered: order= is checked and the values are the same in any order
# (only NumPy's flags and raw memory would differ); like= is NumPy's dispatch hint, ignored.

def _check_order(order: Any, name: str, allowed: str) -> None:
    if order is not None and order not in allowed:
        raise ValueError("%s: order must be one of %s, not %r" % (name, ", ".join(repr(o) for o in allowed), order))


def zeros(shape: Any, dtype: DTypeLike = None, order: str = "C", *, device: Any = None, like: Any = None) -> Array:
    """A new array of zeros, NumPy's signature (float32 unless dtype is given).

    Examples:
        >>> pm.zeros((2, 2), int, order="F")
        Array([[0, 0],
               [0, 0]], dtype=int64)
    """
    _check_order(order, "zeros", "CF")
    return _c.zeros(shape, dtype, device=device)


def ones(shape: Any, dtype: DTypeLike = None, order: str = "C", *, device: Any = None, like: Any = None) -> Array:
    """A new array of ones, NumPy's signature (float32 unless dtype is given).

    Examples:
        >>> pm.ones(2, order="C")
        Array([1., 1.], dtype=float32)
    """
    _check_order(order, "ones", "CF")
    return _c.ones(shape, dtype, device=device)


def empty(shape: Any, dtype: DTypeLike = None, order: str = "C", *, device: Any = None, like: Any = None) -> Array:
    """A new uninitialised array, NumPy's signature (float32 unless dtype is given).

    Examples:
        >>> pm.empty((2, 3), order="F").shape
        (2, 3)
    """
    _check_order(order, "empty", "CF")
    return _cons.empty(shape, dtype, device=device)


def full(shape: Any, fill_value: Any, dtype: DTypeLike = None, order: str = "C", *, device: Any = None,
         like: Any = None) -> Array:
    """A new array filled with fill_value, NumPy's signature.

    Examples:
        >>> pm.full(2, 7, order="C")
        Array([7, 7], dtype=int64)
    """
    _check_order(order, "full", "CF")
    return _c.full(shape, fill_value, dtype, device=device)


def _like_shape(a: Any, shape: Any) -> Any:
    return np.shape(a) if shape is None else shape


def _like_dtype(a: Any, dtype: DTypeLike) -> Any:
    return dtype if dtype is not None else (a.dtype if hasattr(a, "dtype") else _A(a).dtype)


def zeros_like(a: Any, dtype: DTypeLike = None, order: str = "K", subok: bool = True, shape: Any = None, *,
               device: Any = None) -> Array:
    """Zeros of a's shape and dtype (or the given ones), NumPy's signature.

    Examples:
        >>> pm.zeros_like([[1, 2]], shape=3)
        Array([0, 0, 0], dtype=int64)
    """
    _check_order(order, "zeros_like", "CFAK")
    return _c.zeros(_like_shape(a, shape), _like_dtype(a, dtype), device=device)


def ones_like(a: Any, dtype: DTypeLike = None, order: str = "K", subok: bool = True, shape: Any = None, *,
              device: Any = None) -> Array:
    """Ones of a's shape and dtype (or the given ones), NumPy's signature.

    Examples:
        >>> pm.ones_like(pm.zeros((1, 2)), dtype=int)
        Array([[1, 1]], dtype=int64)
    """
    _check_order(order, "ones_like", "CFAK")
    return _c.ones(_like_shape(a, shape), _like_dtype(a, dtype), device=device)


def empty_like(prototype: Any, dtype: DTypeLike = None, order: str = "K", subok: bool = True, shape: Any = None,
               *, device: Any = None) -> Array:
    """An uninitialised array of prototype's shape and dtype (or the given ones), NumPy's signature.

    Examples:
        >>> pm.empty_like(pm.zeros((2, 3)), order="C").shape
        (2, 3)
    """
    _check_order(order, "empty_like", "CFAK")
    return _cons.empty(_like_shape(prototype, shape), _like_dtype(prototype, dtype), device=device)


def full_like(a: Any, fill_value: Any, dtype: DTypeLike = None, order: str = "K", subok: bool = True,
              shape: Any = None, *, device: Any = None) -> Array:
    """fill_value in a's shape and dtype (or the given ones), NumPy's signature.

    Examples:
        >>> pm.full_like(pm.zeros(2, int), 3)
        Array([3, 3], dtype=int64)
    """
    _check_order(order, "full_like", "CFAK")
    return _c.full(_like_shape(a, shape), fill_value, _like_dtype(a, dtype), device=device)


def array(obj: Any, dtype: DTypeLike = None, *, copy: bool | None = True, order: str = "K", subok: bool = False,
          ndmin: int = 0, like: Any = None, device: Any = None) -> Array:
    """A new pymetal array with a copy of obj's data, NumPy's signature (ndmin= prepends ones
    to the shape).

    Examples:
        >>> pm.array([1, 2], ndmin=2)
        Array([[1, 2]], dtype=int64)
    """
    _check_order(order, "array", "CFAK")
    x = _cons.array(obj, dtype, device=device, copy=copy)
    return x if x.ndim >= ndmin else _m.reshape(x, (1,) * (ndmin - x.ndim) + tuple(x.shape))


def asarray(a: Any, dtype: DTypeLike = None, order: str | None = None, *, device: Any = None,
            copy: bool | None = None, like: Any = None) -> Array:
    """A pymetal array for a, sharing memory where possible, NumPy's signature.

    Examples:
        >>> pm.asarray([[1, 2]], order="C")
        Array([[1, 2]], dtype=int64)
    """
    _check_order(order, "asarray", "CFAK")
    return _cons.asarray(a, dtype, device=device, copy=copy)
