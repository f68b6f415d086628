"""Shape manipulation: views where possible, copy kernels otherwise."""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes as _dt
from .array import Array
from .construct import _new
from .layout import normalize_axis
from . import elementwise as _ew
from . import indexing as _ix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, ShapeLike


def reshape(x: ArrayLike, /, shape: ShapeLike, *, copy: bool | None = None) -> Array:
    """x in a new shape: a view when the layout allows it (copy=False insists), else a copy.

    Examples:
        >>> pm.reshape(pm.arange(6), (2, 3))
        Array([[0, 1, 2],
               [3, 4, 5]], dtype=int64)
    """
    return _ew.as_array(x).reshape(shape, copy=copy)


def ascontiguousarray(x: ArrayLike, /) -> Array:
    """x itself if C-contiguous, else a C-contiguous copy (what a kernel argument needs).

    Examples:
        >>> t = pm.zeros((2, 3)).T
        >>> t.is_contiguous, pm.ascontiguousarray(t).is_contiguous
        (False, True)
    """
    return _ew.ascontiguous(_ew.as_array(x))


def ravel(x: ArrayLike, /) -> Array:
    """x in one dimension (a view when possible).

    Examples:
        >>> pm.ravel(pm.asarray([[1, 2], [3, 4]]))
        Array([1, 2, 3, 4], dtype=int64)
    """
    return _ew.as_array(x).reshape(-1)


def astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True, device: Device | None = None) -> Array:
    """x converted to dtype (a copy unless copy=False and x already has that dtype).

    Examples:
        >>> pm.astype(pm.asarray([1, 2]), pm.float16)
        Array([1., 2.], dtype=float16)
    """
    return _ew.as_array(x).astype(dtype, copy=copy)


def permute_dims(x: ArrayLike, /, axes: tuple[int, ...]) -> Array:
    """A view of x with its dimensions in the order `axes`.

    Examples:
        >>> pm.permute_dims(pm.zeros((2, 3, 4)), (1, 2, 0)).shape
        (3, 4, 2)
    """
    return _ew.as_array(x).permute_dims(axes)


def transpose(x: ArrayLike, /, axes: tuple[int, ...] | None = None) -> Array:
    """A view of x with its dimensions reversed, or in the order `axes`.

    Examples:
        >>> pm.transpose(pm.asarray([[1, 2, 3]]))
        Array([[1],
               [2],
               [3]], dtype=int64)
    """
    x = _ew.as_array(x)
    return x.T if axes is None else x.permute_dims(axes)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """A view of x with its last two dimensions swapped.

    Examples:
        >>> pm.matrix_transpose(pm.zeros((5, 2, 3))).shape
        (5, 3, 2)
    """
    return _ew.as_array(x).mT


def expand_dims(x: ArrayLike, /, axis: int | tuple[int, ...] = 0) -> Array:
    """A view of x with a new dimension of size 1 at axis.

    Examples:
        >>> pm.expand_dims(pm.zeros(3), axis=0).shape
        (1, 3)
    """
    return _ew.as_array(x).expand_dims(axis)


def squeeze(x: ArrayLike, /, axis: int | tuple[int, ...] | None = None) -> Array:
    """A view of x without its dimensions of size 1 (all, or those in axis).

    Examples:
        >>> pm.squeeze(pm.zeros((1, 3, 1)), axis=2).shape
        (1, 3)
    """
    return _ew.as_array(x).squeeze(axis)


def broadcast_to(x: ArrayLike, /, shape: ShapeLike) -> Array:
    """A view of x broadcast to shape (no copy).

    Examples:
        >>> pm.broadcast_to(pm.asarray([[1], [2]]), (2, 3))
        Array([[1, 1, 1],
               [2, 2, 2]], dtype=int64)
    """
    return _ew.as_array(x).broadcast_to(shape)


def broadcast_arrays(*arrays: ArrayLike) -> list[Array]:
    """Views of the arrays broadcast against each other.

    Examples:
        >>> a, b = pm.broadcast_arrays(pm.zeros((2, 1)), pm.zeros(3))
        >>> a.shape, b.shape
        ((2, 3), (2, 3))
    """
    arrs = [_ew.as_array(a) for a in arrays]
    shape = _ew.broadcast_shapes(*(a._shape for a in arrs))
    return [a.broadcast_to(shape) for a in arrs]


def moveaxis(x: ArrayLike, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """x with axes moved from source to destination (a view).

    Examples:
        >>> pm.moveaxis(pm.zeros((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    x = _ew.as_array(x)
    src = [normalize_axis(a, x.ndim) for a in ((source,) if isinstance(source, int) else source)]
    dst = [normalize_axis(a, x.ndim) for a in ((destination,) if isinstance(destination, int) else destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination need the same number of axes")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute_dims(order)


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Array:
    """Arrays joined along an existing axis (axis=None: flattened first).

    Examples:
        >>> pm.concat([pm.asarray([1, 2]), pm.asarray([3])])
        Array([1, 2, 3], dtype=int64)
        >>> pm.concat([pm.zeros((2, 1)), pm.ones((2, 2))], axis=1)
        Array([[0., 1., 1.],
               [0., 1., 1.]], dtype=float32)
    """
    arrs = [_ew.as_array(a) for a in arrays]
    if not arrs:
        raise ValueError("concat needs at least one array")
    if axis is None:
        arrs = [a.reshape(-1) for a in arrs]
        axis = 0
    nd = arrs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, nd)
    for a in arrs:
        if a.ndim != nd or any(a._shape[i] != arrs[0]._shape[i] for i in range(nd) if i != axis):
            raise ValueError("concat: all arrays must have the same shape except along axis %d; got %s"
                             % (axis, ", ".join(str(a._shape) for a in arrs)))
    dt = _dt.result_type(*arrs)
    shape = list(arrs[0]._shape)
    shape[axis] = sum(a._shape[axis] for a in arrs)
    out = _new(tuple(shape), dt, arrs[0]._buf.device)
    start = 0
    for a in arrs:
        n = a._shape[axis]
        key = (slice(None),) * axis + (slice(start, start + n),)
        _ew.copy_into(a, out[key])
        start += n
    return out


concatenate = concat


def stack(arrays: Sequence[ArrayLike], /, *, axis: int = 0) -> Array:
    """Arrays of one shape joined along a new axis.

    Examples:
        >>> pm.stack([pm.asarray([1, 2]), pm.asarray([3, 4])], axis=1)
        Array([[1, 3],
               [2, 4]], dtype=int64)
    """
    arrs = [_ew.as_array(a) for a in arrays]
    if not arrs:
        raise ValueError("stack needs at least one array")
    shape = arrs[0]._shape
    if any(a._shape != shape for a in arrs):
        raise ValueError("stack: all arrays must have the same shape")
    axis = normalize_axis(axis, len(shape) + 1)
    return concat([a.expand_dims(axis) for a in arrs], axis=axis)


def split(x: ArrayLike, indices_or_sections: int | Sequence[int], /, axis: int = 0) -> list[Array]:
    """Views of x split along axis: into N equal parts, or at the given indices.

    Examples:
        >>> pm.split(pm.arange(6), 3)
        [Array([0, 1], dtype=int64), Array([2, 3], dtype=int64), Array([4, 5], dtype=int64)]
        >>> [p.shape for p in pm.split(pm.arange(6), [1, 4])]
        [(1,), (3,), (2,)]
    """
    x = _ew.as_array(x)
    axis = normalize_axis(axis, x.ndim)
    n = x._shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = operator.index(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError("split: array of size %d along axis %d does not divide into %d equal parts" % (n, axis, k))
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    pre = (slice(None),) * axis
    return [x[pre + (slice(lo, max(lo, hi)),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Views of x's slices along axis, as a tuple.

    Examples:
        >>> pm.unstack(pm.asarray([[1, 2], [3, 4]]))
        (Array([1, 2], dtype=int64), Array([3, 4], dtype=int64))
    """
    x = _ew.as_array(x)
    axis = normalize_axis(axis, x.ndim)
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x._shape[axis]))


def flip(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x reversed along axis (all axes by default): a view with negative strides.

    Examples:
        >>> pm.flip(pm.asarray([[1, 2], [3, 4]]), axis=1)
        Array([[2, 1],
               [4, 3]], dtype=int64)
    """
    x = _ew.as_array(x)
    axes = range(x.ndim) if axis is None else [normalize_axis(a, x.ndim)
                                                for a in ((axis,) if isinstance(axis, int) else axis)]
    key = [slice(None)] * x.ndim
    for a in axes:
        key[a] = slice(None, None, -1)
    return _ix.getitem(x, tuple(key))  # a view at any rank (x[()] of a 0-d x is a copy, as NumPy's)


def roll(x: ArrayLike, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x with elements shifted along axis (wrapping around); axis=None rolls the flattened array.

    Examples:
        >>> pm.roll(pm.arange(5), 2)
        Array([3, 4, 0, 1, 2], dtype=int64)
    """
    x = _ew.as_array(x)
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x._shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    out = x
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim)
        n = out._shape[a]
        if n == 0:
            continue
        s %= n
        res = _new(out._shape, out._dtype, out._buf.device)
        pre = (slice(None),) * a
        _ew.copy_into(out[pre + (slice(n - s, n),)], res[pre + (slice(0, s),)])
        _ew.copy_into(out[pre + (slice(0, n - s),)], res[pre + (slice(s, n),)])
        out = res
    return out if out is not x else _ew.ascontiguous(x, force=True)


def tile(x: ArrayLike, /, repetitions: int | tuple[int, ...]) -> Array:
    """x repeated `repetitions` times along each axis.

    Examples:
        >>> pm.tile(pm.asarray([1, 2]), (2, 2))
        Array([[1, 2, 1, 2],
               [1, 2, 1, 2]], dtype=int64)
    """
    x = _ew.as_array(x)
    reps = (repetitions,) if isinstance(repetitions, int) else tuple(repetitions)
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    x = x.reshape((1,) * (nd - x.ndim) + x._shape)
    inter = []
    for r, n in zip(reps, x._shape):
        inter += [r, n]
    v = x.reshape(tuple(d for n in x._shape for d in (1, n))).broadcast_to(tuple(inter))
    return _ew.ascontiguous(v, force=True).reshape(tuple(r * n for r, n in zip(reps, x._shape)))


def repeat(x: ArrayLike, repeats: int | ArrayLike, /, *, axis: int | None = None) -> Array:
    """Each element repeated `repeats` times (an int, or one count per element) along axis.

    Without axis, x is flattened first.

    Examples:
        >>> pm.repeat(pm.asarray([1, 2]), 2)
        Array([1, 1, 2, 2], dtype=int64)
        >>> pm.repeat(pm.asarray([1, 2]), pm.asarray([1, 3]))
        Array([1, 2, 2, 2], dtype=int64)
    """
    x = _ew.as_array(x)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    axis = normalize_axis(axis, x.ndim)
    n = x._shape[axis]
    if isinstance(repeats, (int, np.integer)):
        r = int(repeats)
        if r < 0:
            raise ValueError("repeat: repeats must be >= 0")
        shape = x._shape[:axis + 1] + (r,) + x._shape[axis + 1:]
        v = x.expand_dims(axis + 1).broadcast_to(shape)
        return _ew.ascontiguous(v, force=True).reshape(x._shape[:axis] + (n * r,) + x._shape[axis + 1:])
    counts = np.asarray(repeats.numpy() if isinstance(repeats, Array) else repeats)
    if counts.shape == (1,):  # the standard: repeats broadcasts to (n,), so (1,) is allowed
        counts = np.broadcast_to(counts, (n,))
    if counts.shape != (n,) or (counts < 0).any():
        raise ValueError("repeat: repeats must be an int or %d non-negative counts" % n)
    # int64 counts: np.repeat refuses uint64 (no safe cast to its intp)
    return _ix.take(x, np.repeat(np.arange(n), counts.astype(np.int64)), axis=axis)
