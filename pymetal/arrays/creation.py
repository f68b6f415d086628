"""Creation functions that run kernels: arange, linspace, eye, tril, triu, meshgrid."""

from __future__ import annotations

import math

import numpy as np

from .kernels import lookup as _jit
from . import optable as _ops
from .. import dtypes as _dt
from ..dtypes import check_dtype
from .construct import _device, _like, _new, _scalar_dtype, asarray
from .layout import normalize_shape
from . import elementwise as _ew
from .namespace_extras import complex_from_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .array import Array
    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar, ShapeLike


def _range(n, start, step, dt, dev):
    out = _new((n,), dt, dev)
    if n:
        acc = np.float32 if _dt.kind(dt) == "f" else dt
        fn = _jit.kernel(_ops.range_name(dt), "copy", dt, dev)
        fn(out, np.array(start).astype(acc)[()], np.array(step).astype(acc)[()], grid=n, threadgroup=min(n, 256))
    return out


def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: DTypeLike = None, device: Device | None = None) -> Array:
    """Evenly spaced values in [start, stop) (int64 for ints, float32 for floats).

    Examples:
        >>> pm.arange(4)
        Array([0, 1, 2, 3], dtype=int64)
        >>> pm.arange(1.0, 2.0, 0.25)
        Array([1.  , 1.25, 1.5 , 1.75], dtype=float32)
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        # (np.float32 is no Python float: a float32 step made an int64 range of truncated values)
        floats = any(isinstance(v, (float, np.floating)) for v in (start, stop, step))
        dtype = _dt.default_float if floats else _dt.default_int
    dt = _dt.check_dtype(dtype)
    n = max(0, math.ceil((stop - start) / step))
    if _dt.kind(dt) == "b":
        raise TypeError("arange does not make bool arrays")
    if _dt.kind(dt) == "c":  # real values (no range kernel for complex): float32, then complex64
        return _ew.astype(_range(n, start, step, _dt.float32, _device(device)), dt)
    return _range(n, start, step, dt, _device(device))


def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *,
             dtype: DTypeLike = None, device: Device | None = None, endpoint: bool = True) -> Array:
    """num evenly spaced values from start to stop (stop included unless endpoint=False).

    Examples:
        >>> pm.linspace(0, 1, 5)
        Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
        >>> pm.linspace(0, 1, 4, endpoint=False)
        Array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    if dtype is None and (isinstance(start, complex) or isinstance(stop, complex)):
        dtype = _dt.complex64
    if dtype is not None and _dt.kind(_dt.check_dtype(dtype)) == "c":
        # complex: the real and imaginary parts are two real linspaces
        start, stop = complex(start), complex(stop)
        re = linspace(start.real, stop.real, num, device=device, endpoint=endpoint)
        im = linspace(start.imag, stop.imag, num, device=device, endpoint=endpoint)
        return complex_from_parts(re, im)
    dt = _dt.check_dtype(dtype or _dt.default_float)
    if num < 0:
        raise ValueError("linspace: num must be >= 0, not %d" % num)
    if _dt.kind(dt) in "iub":
        # NumPy's integer linspace: float64 values rounded down (linspace(0, 10, 5, dtype=int) is
        # [0, 2, 5, 7, 10]); an integer step would drift, float32 would round some differently.
        return asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt), device=_device(device))
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    out = _range(num, float(start), float(step), dt, _device(device))  # type: ignore[arg-type]  # complex: returned above
    if endpoint and num > 1:
        out[num - 1] = stop
    return out


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DTypeLike = None,
        device: Device | None = None) -> Array:
    """A 2-D array with ones on the k-th diagonal (k > 0: above the main one).

    Examples:
        >>> pm.eye(3, dtype=pm.int32)
        Array([[1, 0, 0],
               [0, 1, 0],
               [0, 0, 1]], dtype=int32)
        >>> pm.eye(2, 3, k=1)
        Array([[0., 1., 0.],
               [0., 0., 1.]], dtype=float32)
    """
    n_cols = n_rows if n_cols is None else n_cols
    out = _ew.fill(_new((n_rows, n_cols), _dt.check_dtype(dtype or _dt.default_float), _device(device)), 0)
    lo, hi = max(0, -k), min(n_rows, n_cols - k)
    if hi > lo:
        flat = out.reshape(-1)
        start = lo * n_cols + lo + k
        _ew.fill(flat[start:start + (hi - lo - 1) * (n_cols + 1) + 1:n_cols + 1], 1)
    return out


def _tri_mask(shape, k, lower, dev):
    rows = _range(shape[-2], 0, 1, _dt.int64, dev).reshape(-1, 1)
    cols = _range(shape[-1], 0, 1, _dt.int64, dev).reshape(1, -1)
    diff = _ew.binary("subtract", cols, rows)
    return _ew.binary("less_equal" if lower else "greater_equal", diff, k)


def tril(x: ArrayLike, /, *, k: int = 0) -> Array:
    """x with the elements above the k-th diagonal zeroed (the lower triangle).

    Examples:
        >>> pm.tril(pm.ones((3, 3), pm.int32))
        Array([[1, 0, 0],
               [1, 1, 0],
               [1, 1, 1]], dtype=int32)
    """
    x = _ew.as_array(x)
    return _ew.where(_tri_mask(x._shape, k, True, x._buf.device), x, 0 if _dt.kind(x._dtype) != "b" else False)


def triu(x: ArrayLike, /, *, k: int = 0) -> Array:
    """x with the elements below the k-th diagonal zeroed (the upper triangle).

    Examples:
        >>> pm.triu(pm.ones((3, 3), pm.int32), k=1)
        Array([[0, 1, 1],
               [0, 0, 1],
               [0, 0, 0]], dtype=int32)
    """
    x = _ew.as_array(x)
    return _ew.where(_tri_mask(x._shape, k, False, x._buf.device), x, 0 if _dt.kind(x._dtype) != "b" else False)


def meshgrid(*arrays: ArrayLike, indexing: str = "xy") -> list[Array]:
    """Coordinate arrays from 1-D arrays (views broadcast to the grid, then copied).

    indexing: "xy" (Cartesian, the first two dimensions swapped) or "ij" (matrix).

    Examples:
        >>> xs, ys = pm.meshgrid(pm.arange(3), pm.arange(2))
        >>> xs
        Array([[0, 1, 2],
               [0, 1, 2]], dtype=int64)
        >>> ys
        Array([[0, 0, 0],
               [1, 1, 1]], dtype=int64)
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', not %r" % (indexing,))
    arrs = [_ew.as_array(a) for a in arrays]
    shape = [a._size for a in arrs]
    if indexing == "xy" and len(arrs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrs):
        view = [1] * len(arrs)
        j = i
        if indexing == "xy" and len(arrs) >= 2 and i < 2:
            j = 1 - i
        view[j] = a._size
        out.append(_ew.ascontiguous(a.reshape(-1).reshape(view).broadcast_to(tuple(shape)), force=True))
    return out


def full(shape: ShapeLike, fill_value: Scalar, dtype: DTypeLike = None, *, device: Device | None = None) -> Array:
    """A new array filled with fill_value (dtype inferred: int -> int64, float -> float32).

    Examples:
        >>> pm.full((2,), 7)
        Array([7, 7], dtype=int64)
        >>> pm.full(2, 0.5)
        Array([0.5, 0.5], dtype=float32)
    """
    dt = check_dtype(dtype) if dtype is not None else _scalar_dtype(fill_value)
    if dt.kind == "V":  # a struct (arrays of structs for kernels): no fill kernel; NumPy fills each field
        return asarray(np.full(normalize_shape(shape), fill_value, dt), device=_device(device))
    x = _new(normalize_shape(shape), dt, _device(device))
    _ew.fill(x, fill_value)
    return x


def full_like(x: ArrayLike, /, fill_value: Scalar, dtype: DTypeLike = None, *,
              device: Device | None = None) -> Array:
    """A new array of x's shape and dtype (or `dtype`) filled with fill_value.

    Examples:
        >>> pm.full_like(pm.zeros(2), 3.5)
        Array([3.5, 3.5], dtype=float32)
    """
    return full(np.shape(x), fill_value, _like(x, dtype), device=device)


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
