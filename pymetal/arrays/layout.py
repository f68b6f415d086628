"""Shapes, strides and axes: pure functions of an array's metadata (no memory, no kernels)."""

from __future__ import annotations

import operator

import numpy as np

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .._typing import ShapeLike

_C_STRIDES: dict = {}  # (shape, itemsize) -> C strides


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
