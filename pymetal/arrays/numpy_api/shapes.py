"""NumPy's shape functions on pymetal arrays (issue 23): the stacks, splits,
insert/delete, pad, rot90, ... (the creation functions: creation.py)

Views where NumPy gives views; data moves in kernels (copies, gathers). float64
is not a device type: creation functions give float32 where NumPy gives float64.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from ... import dtypes as _dt
from ..array import Array
from ..construct import _new
from ..layout import normalize_axis, normalize_shape
from .functions import swapaxes
from .reduce import _with_dtype, into
from . import pad_modes as _pm
from ..sorting import nonzero, searchsorted as _ss
from ..creation import tril as _tril, triu as _triu, arange
from .methods import take as _take, ravel as _ravel
from ..linear_algebra import tensordot as _td

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..._typing import ArrayLike, DTypeLike

_A = _ew.as_array


# ---- shapes -------------------------------------------------------------------------------------

def atleast_1d(*arys: ArrayLike) -> Any:
    """Each input as an array of at least 1 dimension (a list for several).

    Examples:
        >>> pm.atleast_1d(3.0)
        Array([3.], dtype=float32)
    """
    res = [_A(a) if _A(a).ndim >= 1 else _A(a).reshape(1) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys: ArrayLike) -> Any:
    """Each input as an array of at least 2 dimensions (1-D arrays become rows).

    Examples:
        >>> pm.atleast_2d(pm.asarray([1, 2])).shape
        (1, 2)
    """
    res = []
    for a in arys:
        a = _A(a)
        res.append(a.reshape((1,) * (2 - a.ndim) + a._shape) if a.ndim < 2 else a)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys: ArrayLike) -> Any:
    """Each input as an array of at least 3 dimensions ((N,) -> (1, N, 1), (M, N) -> (M, N, 1)).

    Examples:
        >>> pm.atleast_3d(pm.asarray([1, 2])).shape
        (1, 2, 1)
    """
    res = []
    for a in arys:
        a = _A(a)
        shape = {0: (1, 1, 1), 1: (1,) + a._shape + (1,), 2: a._shape + (1,)}.get(a.ndim, a._shape)
        res.append(a.reshape(shape))
    return res[0] if len(res) == 1 else tuple(res)


def _seq(tup, name):
    if isinstance(tup, Array) or not hasattr(tup, "__iter__"):
        raise TypeError("%s takes a sequence of arrays (a list or tuple), as NumPy's" % name)
    arrs = [_A(a) for a in tup]
    if not arrs:
        raise ValueError("%s needs at least one array" % name)
    return arrs


def _concat(arrs, axis, dtype):
    res = _m.concat(arrs, axis=axis)
    return _with_dtype(res, dtype)


def hstack(tup: Any, *, dtype: DTypeLike = None, casting: str = "same_kind") -> Array:
    """Arrays joined along the second axis (the first for 1-D arrays).

    Examples:
        >>> pm.hstack([pm.asarray([1, 2]), pm.asarray([3])])
        Array([1, 2, 3], dtype=int64)
    """
    arrs = atleast_1d(*_seq(tup, "hstack"))
    arrs = [arrs] if isinstance(arrs, Array) else list(arrs)
    return _concat(arrs, 0 if arrs[0].ndim == 1 else 1, dtype)


def vstack(tup: Any, *, dtype: DTypeLike = None, casting: str = "same_kind") -> Array:
    """Arrays joined along the first axis (1-D arrays as rows).

    Examples:
        >>> pm.vstack([pm.asarray([1, 2]), pm.asarray([3, 4])])
        Array([[1, 2],
               [3, 4]], dtype=int64)
    """
    arrs = atleast_2d(*_seq(tup, "vstack"))
    return _concat([arrs] if isinstance(arrs, Array) else list(arrs), 0, dtype)


row_stack = vstack


def dstack(tup: Any) -> Array:
    """Arrays joined along the third axis.

    Examples:
        >>> pm.dstack([pm.asarray([1, 2]), pm.asarray([3, 4])]).shape
        (1, 2, 2)
    """
    arrs = atleast_3d(*_seq(tup, "dstack"))
    return _m.concat([arrs] if isinstance(arrs, Array) else list(arrs), axis=2)


def column_stack(tup: Any) -> Array:
    """1-D arrays as the columns of a 2-D array (2-D arrays joined along the second axis).

    Examples:
        >>> pm.column_stack([pm.asarray([1, 2]), pm.asarray([3, 4])])
        Array([[1, 3],
               [2, 4]], dtype=int64)
    """
    arrs = [a.reshape(-1, 1) if a.ndim < 2 else a for a in _seq(tup, "column_stack")]
    return _m.concat(arrs, axis=1)


def stack(arrays: Any, axis: int = 0, out: Array | None = None, *, dtype: DTypeLike = None) -> Array:
    """Arrays joined along a new axis (NumPy's signature).

    Examples:
        >>> pm.stack([pm.asarray([1, 2]), pm.asarray([3, 4])], 1)
        Array([[1, 3],
               [2, 4]], dtype=int64)
    """
    res = _m.stack(_seq(arrays, "stack"), axis=axis)
    return into(_with_dtype(res, dtype), out)


def concatenate(arrays: Any, axis: int | None = 0, out: Array | None = None, *, dtype: DTypeLike = None,
                casting: str = "same_kind") -> Array:
    """Arrays joined along an existing axis (flattened first when axis is None), NumPy's signature.

    Examples:
        >>> pm.concatenate([pm.asarray([[1, 2]]), pm.asarray([[3, 4]])], 1)
        Array([[1, 2, 3, 4]], dtype=int64)
    """
    return into(_concat(_seq(arrays, "concatenate"), axis, dtype), out)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Views of ary split along axis into N nearly equal parts (the first n % N one longer),
    or at the given indices.

    Examples:
        >>> [p.shape[0] for p in pm.array_split(pm.arange(7), 3)]
        [3, 2, 2]
    """
    x = _A(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        k = operator.index(indices_or_sections)
        if k <= 0:
            raise ValueError("array_split: number of sections must be larger than 0, not %d" % k)
        n = x._shape[normalize_axis(axis, x.ndim)]
        q, r = divmod(n, k)
        indices_or_sections = np.cumsum([q + 1] * r + [q] * (k - r))[:-1].tolist()
    return _m.split(x, indices_or_sections, axis=axis)


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """A view rotated by 90 degrees k times, from the first axis towards the second.

    Examples:
        >>> pm.rot90(pm.asarray([[1, 2], [3, 4]]))
        Array([[2, 4],
               [1, 3]], dtype=int64)
    """
    m = _A(m)
    if len(axes) != 2 or m.ndim < 2:
        raise ValueError("rot90: axes must be two axes of an array of at least 2 dimensions")
    a0, a1 = (normalize_axis(x, m.ndim) for x in axes)
    if a0 == a1:
        raise ValueError("rot90: the axes must differ")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return _m.flip(m, axis=(a0, a1))
    if k == 1:
        return swapaxes(_m.flip(m, axis=a1), a0, a1)
    return _m.flip(swapaxes(m, a0, a1), axis=a1)


def fliplr(m: ArrayLike) -> Array:
    """m flipped along its second axis (a view).

    Examples:
        >>> pm.fliplr(pm.asarray([[1, 2]]))
        Array([[2, 1]], dtype=int64)
    """
    return _m.flip(m, axis=1)


def flipud(m: ArrayLike) -> Array:
    """m flipped along its first axis (a view).

    Examples:
        >>> pm.flipud(pm.asarray([1, 2]))
        Array([2, 1], dtype=int64)
    """
    return _m.flip(m, axis=0)


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """values appended to arr along axis (both flattened when axis is None).

    Examples:
        >>> pm.append(pm.asarray([1, 2]), [[3, 4]])
        Array([1, 2, 3, 4], dtype=int64)
    """
    a, v = _A(arr), _A(values)
    if axis is None:
        return _m.concat([_m.ravel(a), _m.ravel(v)])
    return _m.concat([a, v], axis=axis)


def _flat_or_axis(arr, axis):
    a = _A(arr)
    if axis is None:
        return _m.ravel(a), 0
    return a, normalize_axis(axis, a.ndim)


def delete(arr: ArrayLike, obj: Any, axis: int | None = None) -> Array:
    """arr without the entries obj (an int, a slice, indices or a boolean mask) along axis
    (of the flattened array when axis is None): a kept-mask on the device and a gather.

    Examples:
        >>> pm.delete(pm.asarray([10, 20, 30, 40]), [0, 2])
        Array([20, 40], dtype=int64)
    """
    from ..indexing import take  # at call time: local: this module's own take is NumPy's
    a, ax = _flat_or_axis(arr, axis)
    n = a._shape[ax]
    keep = _ew.fill(_new((n,), _dt.bool_, a._buf.device), True)
    o = obj if isinstance(obj, slice) else _A(obj)
    if isinstance(o, Array) and o._dtype == _dt.bool_:
        if o._shape != (n,):
            raise ValueError("delete: a boolean mask must have shape (%d,), not %r" % (n, o._shape))
        keep = _ew.unary("logical_not", o)
    elif isinstance(o, Array) and _dt.kind(o._dtype) not in "iu":
        raise IndexError("delete: obj must be integers, a slice or a boolean mask, not %s" % o._dtype)
    else:
        keep[o] = False
    return take(a, nonzero(keep)[0], axis=ax)


def insert(arr: ArrayLike, obj: Any, values: ArrayLike, axis: int | None = None) -> Array:
    """values inserted before the index or indices obj along axis (flattened when axis is None).

    Where each output element comes from is worked out by NumPy on a host array of
    positions (one per output index along axis, not per element); the data is
    gathered on the device.

    Examples:
        >>> pm.insert(pm.asarray([1, 2, 3]), 1, 9)
        Array([1, 9, 2, 3], dtype=int64)
        >>> pm.insert(pm.asarray([1, 2, 3]), [0, 3], [7, 8])
        Array([7, 1, 2, 3, 8], dtype=int64)
    """
    from ..indexing import take  # at call time: local: this module's own take is NumPy's
    a, ax = _flat_or_axis(arr, axis)
    n = a._shape[ax]
    v = _A(values)
    if v._dtype != a._dtype:
        v = _ew.astype(v, a._dtype)
    scalar = isinstance(obj, (int, np.integer))
    pos = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj)
    if pos.dtype.kind not in "iu":
        raise IndexError("insert: obj must be an int, a slice or integers, not %r" % (obj,))
    pos = np.where(pos < 0, pos + n, pos).reshape(-1)
    if pos.size and (pos.min() < 0 or pos.max() > n):
        raise IndexError("insert: index %r is out of bounds for an axis of size %d" % (obj, n))
    if scalar:  # one index: values as a block, their first axis moved onto axis (NumPy's rule)
        v = _m.moveaxis(v.reshape((1,) * (a.ndim - v.ndim) + v._shape), 0, ax) if a.ndim else v
        pos = np.full(v._shape[ax] if a.ndim else 1, pos[0])
    k = pos.size
    block = list(a._shape)
    block[ax] = k
    v = v.broadcast_to(tuple(block))
    order = np.argsort(pos, kind="stable")
    src = np.arange(n + k)
    # output slot of each inserted value: its position plus the insertions before it
    slots = pos[order] + np.arange(k)
    is_new = np.zeros(n + k, bool)
    is_new[slots] = True
    src[~is_new] = np.arange(n)
    src[slots] = n + order
    both = _m.concat([a, _ew.ascontiguous(v)], axis=ax)
    return take(both, _A(src.astype(np.int64)), axis=ax)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_index(n, before, after, mode):
    """Source index along one axis for each output position (host, one per position)."""
    i = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":
        if n == 1:
            return np.zeros_like(i)
        p = 2 * (n - 1)
        i = i % p
        return np.where(i >= n, p - i, i)
    p = 2 * n  # symmetric
    i = i % p
    return np.where(i >= n, p - 1 - i, i)


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """array padded on each side of each axis: mode "constant" (constant_values=), "edge",
    "reflect", "symmetric", "wrap", or NumPy's "maximum" / "minimum" / "mean" / "median"
    (stat_length=), "linear_ramp" (end_values=), "empty" (numpy_api/pad_modes.py). Constant: a filled array and one copy; the others: one
    gather per axis (the source index of each position along an axis is built on the host).

    Examples:
        >>> pm.pad(pm.asarray([1, 2, 3]), 2)
        Array([0, 0, 1, 2, 3, 0, 0], dtype=int64)
        >>> pm.pad(pm.asarray([1, 2, 3]), (1, 2), "reflect")
        Array([2, 1, 2, 3, 2, 1], dtype=int64)
    """
    from ..indexing import take  # at call time: local: this module's own take is NumPy's
    a = _A(array)
    if callable(mode):
        raise NotImplementedError("pad: a function as mode is not supported; pad with one of %s, or call numpy.pad "
                                  "on x.numpy() and pm.asarray the result" % ", ".join(_PAD_MODES + _pm.MODES))
    if mode not in _PAD_MODES + _pm.MODES:
        raise ValueError("pad: mode must be one of %s, not %r" % (", ".join(_PAD_MODES + _pm.MODES), mode))
    allowed = {"constant_values"} if mode == "constant" else {"reflect_type"} if mode in ("reflect", "symmetric") \
        else _pm.keywords(mode) if mode in _pm.MODES else set()
    if set(kwargs) - allowed:
        raise TypeError("pad: unsupported keyword(s) %s for mode %r" % (sorted(set(kwargs) - allowed), mode))
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("pad: only reflect_type='even' is supported")
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2)) if a.ndim else np.zeros((0, 2), np.int64)
    if (pw < 0).any():
        raise ValueError("pad: pad widths must be >= 0, got %r" % (pad_width,))
    if mode in _pm.MODES:
        return _pm.pad(a, pw, mode, kwargs)
    if mode == "constant":
        cv = np.broadcast_to(np.asarray(kwargs.get("constant_values", 0)), (a.ndim, 2)) if a.ndim else None
        shape = tuple(int(n + b + e) for n, (b, e) in zip(a._shape, pw))
        out = _ew.fill(_new(shape, a._dtype, a._buf.device), cv[0, 0].item() if cv is not None else 0)
        if cv is not None and (cv != cv[0, 0]).any():  # per-side values: each axis's sides in turn
            for ax in range(a.ndim):
                pre = (slice(None),) * ax
                b, e = pw[ax]
                out[pre + (slice(0, b),)] = cv[ax, 0].item()
                out[pre + (slice(shape[ax] - e, shape[ax]),)] = cv[ax, 1].item()
        out[tuple(slice(b, b + n) for n, (b, _) in zip(a._shape, pw))] = a
        return out
    for ax in range(a.ndim):
        b, e = (int(v) for v in pw[ax])
        if b or e:
            if a._shape[ax] == 0:
                raise ValueError("pad: can't extend an empty axis %d with mode %r" % (ax, mode))
            a = take(a, _A(_pad_index(a._shape[ax], b, e, mode)), axis=ax)
    return _ew.ascontiguous(a, force=True) if a is array else a


def resize(a: ArrayLike, new_shape: Any) -> Array:
    """A new array of new_shape filled with a's elements repeated in order.

    Examples:
        >>> pm.resize(pm.asarray([1, 2, 3]), (2, 2))
        Array([[1, 2],
               [3, 1]], dtype=int64)
    """
    a = _m.ravel(_A(a))
    shape = normalize_shape(new_shape)
    total = int(np.prod(shape, dtype=np.int64))
    if total and not a._size:
        return _ew.fill(_new(shape, a._dtype, a._buf.device), 0)
    reps = -(-total // a._size) if a._size else 0
    return _ew.ascontiguous(_m.tile(a, reps)[:total], force=True).reshape(shape)


# ---- NumPy's positional parameters for the standard's keyword-only ones ---------------------------

def tril(m: ArrayLike, k: int = 0) -> Array:
    """The lower triangle (elements above the k-th diagonal zeroed), NumPy's signature.

    Examples:
        >>> pm.tril(pm.ones((2, 2), pm.int32), -1)
        Array([[0, 0],
               [1, 0]], dtype=int32)
    """
    return _tril(m, k=k)


def triu(m: ArrayLike, k: int = 0) -> Array:
    """The upper triangle (elements below the k-th diagonal zeroed), NumPy's signature.

    Examples:
        >>> pm.triu(pm.ones((2, 2), pm.int32), 1)
        Array([[0, 1],
               [0, 0]], dtype=int32)
    """
    return _triu(m, k=k)


def roll(a: ArrayLike, shift: Any, axis: Any = None) -> Array:
    """Elements shifted cyclically along axis (flattened when axis is None), NumPy's signature.

    Examples:
        >>> pm.roll(pm.asarray([[1, 2, 3]]), 1, 1)
        Array([[3, 1, 2]], dtype=int64)
    """
    return _m.roll(a, shift, axis=axis)


def flip(m: ArrayLike, axis: Any = None) -> Array:
    """A view with the order of elements reversed along axis (all axes when None).

    Examples:
        >>> pm.flip(pm.asarray([[1, 2], [3, 4]]), 1)
        Array([[2, 1],
               [4, 3]], dtype=int64)
    """
    return _m.flip(m, axis=axis)


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, out: Array | None = None,
         mode: str = "raise") -> Array:
    """Elements at `indices` along axis (of the flattened array when axis is None), NumPy's signature.

    Examples:
        >>> pm.take(pm.asarray([[1, 2], [3, 4]]), [1], 1)
        Array([[2],
               [4]], dtype=int64)
    """
    return _take(_A(a), indices, axis, out, mode)


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None) -> Array:
    """Each element repeated (flattened first when axis is None), NumPy's signature.

    Examples:
        >>> pm.repeat(pm.asarray([[1, 2]]), 2, 0)
        Array([[1, 2],
               [1, 2]], dtype=int64)
    """
    return _m.repeat(a, repeats, axis=axis)


def tensordot(a: ArrayLike, b: ArrayLike, axes: Any = 2) -> Array:
    """Sum of products over the last `axes` axes of a and the first of b, NumPy's signature.

    Examples:
        >>> pm.tensordot(pm.ones((2, 3)), pm.ones((3, 4)), 1).shape
        (2, 4)
    """
    return _td(a, b, axes=axes)


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None) -> Array:
    """Indices where v's values would be inserted into the sorted 1-D a, NumPy's signature.

    Examples:
        >>> pm.searchsorted(pm.asarray([1, 3, 5]), [3, 4], "right")
        Array([2, 2], dtype=int64)
    """
    return _ss(a, v, side=side, sorter=sorter)


def shape(a: ArrayLike) -> tuple[int, ...]:
    """The shape of an array (or of array-like data).

    Examples:
        >>> pm.shape(pm.zeros((2, 3)))
        (2, 3)
    """
    return a.shape if isinstance(a, Array) else np.shape(a)


def ndim(a: ArrayLike) -> int:
    """The number of dimensions of an array.

    Examples:
        >>> pm.ndim(pm.zeros((2, 3)))
        2
    """
    return a.ndim if isinstance(a, Array) else np.ndim(a)


def size(a: ArrayLike, axis: int | None = None) -> int:
    """The number of elements of an array (along axis when given).

    Examples:
        >>> pm.size(pm.zeros((2, 3))), pm.size(pm.zeros((2, 3)), 1)
        (6, 3)
    """
    s = shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[normalize_axis(axis, len(s))]


def reshape(a: ArrayLike, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: bool | None = None) -> Array:
    """a in a new shape (a view where NumPy gives one), NumPy's signature (order="F" too).

    Examples:
        >>> pm.reshape(pm.arange(6), (2, 3), "F")
        Array([[0, 2, 4],
               [1, 3, 5]], dtype=int64)
    """
    if shape is None:
        if newshape is None:
            raise TypeError("reshape() needs the new shape")
        shape = newshape
    return _A(a).reshape(shape, order=order, copy=copy)


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """The elements in one dimension (a view when possible); order="F" column by column.

    Examples:
        >>> pm.ravel(pm.asarray([[1, 2], [3, 4]]), "F")
        Array([1, 3, 2, 4], dtype=int64)
    """
    return _ravel(_A(a), order)


def copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Array:
    """A new array with a copy of a's data.

    Examples:
        >>> pm.copy(pm.asarray([1, 2]))
        Array([1, 2], dtype=int64)
    """
    return _ew.ascontiguous(_A(a), force=True)


def clip(x: ArrayLike, /, min: Any = None, max: Any = None, out: Array | None = None, *, a_min: Any = None,
         a_max: Any = None) -> Array:
    """x limited to [min, max]: the standard's signature, with NumPy's out= and its
    a_min=/a_max= keywords (pm.clip(x, 0, 1) is the same call in both).

    Examples:
        >>> x = pm.asarray([-1.0, 0.5, 2.0])
        >>> pm.clip(x, 0, 1, out=x)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    return into(_ew.clip(x, lo, hi), out)


def put_along_axis(arr: Array, indices: ArrayLike, values: ArrayLike, axis: int | None) -> None:
    """arr[..., indices[..., j, ...], ...] = values along axis, in place (one scatter kernel):
    the inverse of take_along_axis.

    Examples:
        >>> x = pm.zeros((2, 3), pm.int64)
        >>> pm.put_along_axis(x, pm.asarray([[2], [0]]), 9, axis=1)
        >>> x
        Array([[0, 0, 9],
               [9, 0, 0]], dtype=int64)
    """
    if not isinstance(arr, Array):
        raise TypeError("put_along_axis: arr must be a pymetal Array (it is changed in place)")
    idx = _A(indices)
    if axis is None:
        arr.reshape(-1)[idx.reshape(-1)] = values
        return
    ax = normalize_axis(axis, arr.ndim)
    if idx.ndim != arr.ndim:
        raise ValueError("put_along_axis: indices must have as many dimensions as arr (%d), not %d"
                         % (arr.ndim, idx.ndim))
    # an index array per dimension, broadcast against indices: the other axes' positions
    key = tuple(idx if d == ax else arange(n).reshape(tuple(-1 if e == d else 1 for e in range(arr.ndim)))
                for d, n in enumerate(arr._shape))
    arr[key] = values
