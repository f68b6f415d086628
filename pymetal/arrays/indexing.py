"""Indexing: basic (views) and advanced (gather / scatter kernels).

Basic indices (ints, slices, ``...``, ``None``) make views that copy nothing.
Integer arrays and boolean masks follow NumPy's rules: the indexed axes are
moved together, the index arrays broadcast and combined into one linear index
(elementwise kernels), and a gather kernel reads the elements; assignment uses
the scatter kernel. Index ranges are checked (IndexError) before any kernel
runs: pymetal index arrays are read for that, and a boolean mask's count of
true elements (a host wait).
"""

from __future__ import annotations

import operator
import struct

import numpy as np

from .kernels import lookup as _jit
from . import optable as _ops
from .. import dtypes as _dt
from .array import Array, check_writeable
from .construct import _new, asarray
from .layout import axis_last, normalize_axis
from .overlap import may_overlap
from . import elementwise as _ew
from .sorting import nonzero

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .array import Array
    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar

_GATHER = struct.Struct("<QQQI4x")


def _expand(x, key):
    """key -> list of per-source-axis entries (ints, slices, arrays), None for new axes."""
    if not isinstance(key, tuple):
        key = (key,)
    key = tuple(_list_index(k) for k in key)
    out = []
    ellipsis = False
    consumed = 0
    for k in key:
        if k is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            continue
        if k is None:
            continue
        if isinstance(k, (Array, np.ndarray)) and k.dtype == np.bool_:
            consumed += max(k.ndim, 1) if k.ndim else 0
        else:
            consumed += 1
    if consumed > x.ndim:
        raise IndexError("too many indices for an array of %d dimensions: %r" % (x.ndim, key))
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (x.ndim - consumed))
        else:
            out.append(k)
    if not ellipsis:
        out.extend([slice(None)] * (x.ndim - consumed))
    return out


def _list_index(k):
    """A list in an index is NumPy's array of it (NumPy's rule: a list of bools is a mask, as
    x[[True, False, True], 2]; [] is an empty integer index)."""
    if not isinstance(k, list):
        return k
    a = np.asarray(k)
    return a.astype(np.int64) if a.dtype == np.float64 and a.size == 0 else a


def _index_array(k, dev):
    """An index entry as an int64 pymetal array plus its host copy when it came from the host."""
    if isinstance(k, np.ndarray):
        if k.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type, not %s" % k.dtype)
        return asarray(k.astype(np.int64), device=dev), k
    if _dt.kind(k.dtype) not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type, not %s" % k.dtype)
    return (k if k._dtype == _dt.int64 else _ew.astype(k, _dt.int64)), None


def _check_range(idx, host, n, axis):
    vals = host if host is not None else idx.numpy()
    if vals.size and (vals.min() < -n or vals.max() >= n):
        bad = vals[(vals < -n) | (vals >= n)].flat[0]
        raise IndexError("index %d is out of bounds for axis %d with size %d" % (bad, axis, n))


def _basic(x, entries):
    """Applies ints, slices and new axes; returns (view, [(view axis, advanced entry)])."""
    offset = x._offset
    shape: list[int] = []
    strides: list[int] = []
    adv: list[tuple[int, object]] = []  # (result axis, integer index array of any kind)
    src = 0
    for k in entries:
        mask0 = k is not None and isinstance(k, (Array, np.ndarray)) and k.ndim == 0 and k.dtype == np.bool_
        if k is None or mask0:
            if mask0:
                # a 0-d mask (the standard: result shape (1,) + shape if True, (0,) + shape if
                # False): a new length-1 axis, indexed by [0] or by nothing
                adv.append((len(shape), np.arange(int(bool(k)), dtype=np.int64)))
            shape.append(1)
            strides.append(0)
            continue
        n, s = x._shape[src], x._strides[src]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            offset += start * s if length else 0
            shape.append(length)
            strides.append(s * step)
        elif isinstance(k, (Array, np.ndarray, list)) and not (isinstance(k, (Array, np.ndarray)) and k.ndim == 0
                                                               and k.dtype != np.bool_):
            if isinstance(k, (Array, np.ndarray)) and k.dtype == np.bool_:
                # a mask over k.ndim axes: its nonzero() gives one integer array per axis
                if tuple(k.shape) != tuple(x._shape[src:src + k.ndim]):
                    raise IndexError("boolean index of shape %r does not match the indexed dimensions %r"
                                     % (tuple(k.shape), x._shape[src:src + k.ndim]))
                for i, ix in enumerate(nonzero(k) if isinstance(k, Array) else np.nonzero(k)):
                    adv.append((len(shape), ix))
                    shape.append(x._shape[src + i])
                    strides.append(x._strides[src + i])
                src += k.ndim
                continue
            adv.append((len(shape), k))
            shape.append(n)
            strides.append(s)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                fields = ("; a struct array's field is x.numpy()[%r] (a NumPy view of the same memory)" % (k,)
                          if isinstance(k, str) and x._dtype.names else "")
                raise IndexError("only integers, slices (:), ellipsis (...), None and integer or boolean "
                                 "arrays are valid indices, not %r%s" % (k, fields)) from None
            if not -n <= i < n:
                raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, src, n))
            offset += (i % n) * s
        src += 1
    if 0 in shape:  # an empty result keeps the array's offset: no element to point at (an integer
        offset = x._offset  # index into an empty array would point past the end of its memory)
    return x._view(offset, tuple(shape), tuple(strides)), adv


def _separated(key):
    """NumPy's (and the Array API's) rule: with an index array in the key, integers
    count as advanced indices too, and when the advanced indices are not all next to
    each other in the key as written (x[0, :, idx], x[:, 0, ..., idx] even where the
    ellipsis stands for no axis, x[0, None, idx]) the indexed part goes first in the result."""
    key = key if isinstance(key, tuple) else (key,)
    pos = [i for i, k in enumerate(key) if k is not None and k is not Ellipsis and not isinstance(k, slice)]
    return pos != list(range(pos[0], pos[0] + len(pos))) if pos else False


def _advanced(view, adv, separated):
    """(view with the indexed axes first, flattened to one, int64 linear index array,
    result shape of the indexed part, where that part goes in the result)."""
    dev = view._buf.device
    axes = [a for a, _ in adv]
    arrays = []
    for a, k in adv:
        idx, host = _index_array(k, dev)
        _check_range(idx, host, view._shape[a], a)
        arrays.append(idx)
    bshape = _ew.broadcast_shapes(*(i._shape for i in arrays))
    # Linear index over the indexed axes (row-major), negative indices wrapped first.
    lin: Any = None
    for a, idx in zip(axes, arrays):
        n = view._shape[a]
        idx = _ew.binary("remainder", idx, n) if n else idx
        lin = idx if lin is None else _ew.binary("add", _ew.binary("multiply", lin, n), idx)
    lin = _ew.ascontiguous(lin.broadcast_to(bshape), force=False) if lin._shape != bshape else lin
    adjacent = not separated and axes == list(range(axes[0], axes[0] + len(axes)))
    rest = [i for i in range(view.ndim) if i not in axes]
    moved = view.permute_dims(axes + rest)
    m = 1
    for a in axes:
        m *= view._shape[a]
    place = axes[0] if adjacent else 0
    return moved, m, lin, bshape, place, [view._shape[i] for i in rest]


def _record_key(key):
    """key with the words axis of _ew.as_words after it (a record's words are never indexed)."""
    return (key if type(key) is tuple else (key,)) + (slice(None),)


def _odd_records(x):
    """A struct dtype of a size the gather kernels do not move (they move 1, 2, 4 or 8 bytes)."""
    return x._dtype.fields is not None and x._dtype.itemsize not in (1, 2, 4, 8)


def getitem(x: Array, key: Any) -> Array:
    if isinstance(key, Array) and key._dtype == _dt.bool_ and key._shape == x._shape and x.ndim \
            and not _odd_records(x):
        from .sorting import _compact  # x[mask] over all of x: one compaction, no index arrays
        return _compact(x.reshape(-1) if x._cc else _ew.ascontiguous(x).reshape(-1), key.reshape(-1))
    entries = _expand(x, key)
    view, adv = _basic(x, entries)
    if not adv:
        return view
    if _odd_records(x):  # gathered as rows of words
        w, = _ew.as_words(x)
        return _ew.records(_ew.ascontiguous(getitem(w, _record_key(key))), x._dtype)
    moved, m, lin, bshape, place, rest = _advanced(view, adv, _separated(key))
    src = _ew.ascontiguous(moved).reshape((m,) + tuple(rest))
    out = take(src, lin.reshape(-1), axis=0).reshape(bshape + tuple(rest))
    if place and len(bshape):
        nb = len(bshape)
        order = list(range(nb, nb + place)) + list(range(nb)) + list(range(nb + place, out.ndim))
        out = out.permute_dims(order)
    return out


def setitem(x: Array, key: Any, value: Any) -> None:
    check_writeable(x)
    if x._dtype.fields is not None:  # records: NumPy reads the value as x's struct dtype (5 sets every field)
        if not (isinstance(value, Array) and value._dtype == x._dtype):
            value = _ew.as_array(np.asarray(value.numpy() if isinstance(value, Array) else value, dtype=x._dtype),
                                 x._buf.device)
        w, v = _ew.as_words(x, value)  # written as rows of words (as getitem gathers odd sizes)
        setitem(w, _record_key(key), v)
        return
    entries = _expand(x, key)
    view, adv = _basic(x, entries)
    if not adv:
        if _ew.is_scalar(value) or isinstance(value, np.generic):
            _ew.fill(view, value)
        else:
            _ew.copy_into(_ew.as_array(value, x._buf.device), view)
        return
    moved, m, lin, bshape, place, rest = _advanced(view, adv, _separated(key))
    vshape = bshape + tuple(rest)
    if place and len(bshape):  # the value is given in the result's axis order
        nb = len(bshape)
        vshape_res = tuple(rest[:place]) + bshape + tuple(rest[place:])
        vals = _values(value, vshape_res, x)
        order = list(range(place, place + nb)) + list(range(place)) + list(range(place + nb, len(vshape_res)))
        vals = _ew.ascontiguous(vals.permute_dims(order))
    else:
        vals = _values(value, vshape, x)
    tmp = _ew.ascontiguous(moved)
    flat = tmp.reshape((m,) + tuple(rest))
    _scatter(flat, lin.reshape(-1), vals.reshape((lin._size,) + tuple(rest)))
    if tmp is not moved:
        _ew.copy_into(tmp, moved)


def _values(value, shape, x):
    if isinstance(value, Array) or isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        v = _ew.as_array(value, x._buf.device)
        if may_overlap(x, v):
            v = _ew.ascontiguous(v, force=True)  # read before the scatter writes x (x[idx] = x[0:3])
        if v._dtype != x._dtype:
            v = _ew.astype(v, x._dtype)
        return _ew.astype(v.broadcast_to(shape), x._dtype) if v._shape != shape or not v._cc else v
    v = _new(shape, x._dtype, x._buf.device)
    return _ew.fill(v, value)


# ---- take / take_along_axis ------------------------------------------------------------------

def _gather_params(n, m, inner, per_row):
    return _GATHER.pack(n, m, inner, per_row)


def take(x: ArrayLike, indices: ArrayLike, /, *, axis: int | None = None) -> Array:
    """Elements of x at `indices` along `axis` (x flattened when axis is None).

    Examples:
        >>> x = pm.asarray([[1, 2, 3], [4, 5, 6]])
        >>> pm.take(x, pm.asarray([2, 0]), axis=1)
        Array([[3, 1],
               [6, 4]], dtype=int64)
        >>> pm.take(x, pm.asarray([5, 0]))
        Array([6, 1], dtype=int64)
    """
    x = _ew.as_array(x)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    axis = normalize_axis(axis, x.ndim)
    idx, host = _index_array(indices, x._buf.device) if not (isinstance(indices, Array) and indices._dtype == _dt.int64) \
        else (indices, None)
    n = x._shape[axis]
    inner = 1
    for d in x._shape[axis + 1:]:
        inner *= d
    if inner != 1:  # (with inner == 1 the take_rows kernel checks the range as it gathers)
        _check_range(idx, host, n, axis)
    idx = _ew.ascontiguous(idx)
    x = _ew.ascontiguous(x)
    outer = 1
    for d in x._shape[:axis]:
        outer *= d
    out = _new(x._shape[:axis] + idx._shape + x._shape[axis + 1:], x._dtype, x._buf.device)
    if out._size and inner == 1:
        from .kernels.gather import take_rows
        if not take_rows(x, idx, out, n, outer):
            _check_range(idx, host, n, axis)  # raises IndexError naming the first bad index
        return out
    if inner == 1:
        _check_range(idx, host, n, axis)  # an empty result: nothing gathered, the indices still checked
    if out._size:
        fn = _jit.kernel(_ops.index_name("gather", x._dtype), "copy", x._dtype, x._buf.device)
        grid = (inner, idx._size, outer)
        fn(x, idx, out, _gather_params(n, idx._size, inner, 0), grid=grid, threadgroup=(min(inner, 256), 1, 1))
    return out


def _scatter(flat, idx, vals):
    """flat[idx[j], ...] = vals[j, ...] along axis 0 of contiguous `flat`."""
    m = idx._size
    if m == 0 or flat._size == 0:
        return
    inner = flat._size // flat._shape[0]
    fn = _jit.kernel(_ops.index_name("scatter", flat._dtype), "copy", flat._dtype, flat._buf.device)
    fn(flat, _ew.ascontiguous(idx), vals, _gather_params(flat._shape[0], m, inner, 0),
       grid=(inner, m, 1), threadgroup=(min(inner, 256), 1, 1))


def take_along_axis(x: ArrayLike, indices: ArrayLike, /, *, axis: int = -1) -> Array:
    """out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis`.

    Examples:
        >>> x = pm.asarray([[30, 10, 20]])
        >>> pm.take_along_axis(x, pm.argsort(x, axis=1), axis=1)
        Array([[10, 20, 30]], dtype=int64)
    """
    x = _ew.as_array(x)
    axis = normalize_axis(axis, x.ndim)
    idx, host = _index_array(indices, x._buf.device)
    if idx.ndim != x.ndim:
        raise ValueError("take_along_axis: indices must have as many dimensions as x (%d), not %d"
                         % (x.ndim, idx.ndim))
    n = x._shape[axis]
    _check_range(idx, host, n, axis)
    shape = list(_ew.broadcast_shapes(tuple(1 if i == axis else d for i, d in enumerate(x._shape)),
                                      tuple(1 if i == axis else d for i, d in enumerate(idx._shape))))
    xs = list(shape)
    xs[axis] = n
    ishape = list(shape)
    ishape[axis] = idx._shape[axis]
    order, inv = axis_last(x.ndim, axis)
    xm = _ew.ascontiguous(x.broadcast_to(tuple(xs)).permute_dims(order))
    im = _ew.ascontiguous(idx.broadcast_to(tuple(ishape)).permute_dims(order))
    m = ishape[axis]
    outer = xm._size // n if n else 0
    out = _new(tuple(im._shape), x._dtype, x._buf.device)
    if out._size:
        fn = _jit.kernel(_ops.index_name("gather", x._dtype), "copy", x._dtype, x._buf.device)
        fn(xm, im, out, _gather_params(n, m, 1, 1), grid=(1, m, outer), threadgroup=(1, min(m, 256), 1))
    return out.permute_dims(inv)
