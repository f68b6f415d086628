"""``pm.lib.stride_tricks``: NumPy's strided views of pymetal arrays (no copies).

``sliding_window_view`` and ``as_strided`` return Arrays over the same memory
with the given strides; as NumPy's, the sliding windows are read-only unless
``writeable=True``. Unlike NumPy, ``as_strided`` checks that the view stays
inside the array's memory (a view reaching outside raises ValueError instead
of reading or corrupting other memory).
"""

from __future__ import annotations

import operator

from ..arrays import elementwise as _ew
from ..arrays.array import _READONLY_BASE
from ..arrays.layout import _extent, normalize_axis, normalize_shape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..arrays.array import Array
    from .._typing import ArrayLike

__all__ = ["as_strided", "sliding_window_view"]


def sliding_window_view(x: ArrayLike, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Array:
    """Every window of window_shape over the axes (all of them by default), as a view: the
    result's shape is the trimmed array's shape followed by window_shape.

    Examples:
        >>> from pymetal.lib.stride_tricks import sliding_window_view
        >>> sliding_window_view(pm.arange(5), 3)
        Array([[0, 1, 2],
               [1, 2, 3],
               [2, 3, 4]], dtype=int64)
    """
    x = _ew.as_array(x)
    window = tuple(operator.index(w) for w in window_shape) if hasattr(window_shape, "__iter__") \
        else (operator.index(window_shape),)
    if any(w < 0 for w in window):
        raise ValueError("sliding_window_view: window_shape cannot contain negative values")
    if axis is None:
        if len(window) != x.ndim:
            raise ValueError("sliding_window_view: window_shape %r needs one entry per dimension of x (%d) "
                             "when axis is None" % (window, x.ndim))
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(normalize_axis(a, x.ndim) for a in (axis if hasattr(axis, "__iter__") else (axis,)))
        if len(axes) != len(window):
            raise ValueError("sliding_window_view: window_shape and axis must have the same length")
    shape = list(x._shape)
    for ax, w in zip(axes, window):
        if shape[ax] < w:
            raise ValueError("sliding_window_view: window_shape cannot be larger than the input array's shape")
        shape[ax] -= w - 1
    view = x._view(x._offset, tuple(shape) + window, x._strides + tuple(x._strides[a] for a in axes))
    if not writeable or x._ro:
        view._ro = _READONLY_BASE
    return view


def as_strided(x: ArrayLike, shape: Any = None, strides: Any = None, subok: bool = False,
               writeable: bool = True) -> Array:
    """A view of x's memory with the given shape and byte strides (x's by default); ValueError
    if it would reach outside the memory x views.

    Examples:
        >>> from pymetal.lib.stride_tricks import as_strided
        >>> x = pm.arange(6, dtype=pm.int32)
        >>> as_strided(x, shape=(3, 2), strides=(8, 4))
        Array([[0, 1],
               [2, 3],
               [4, 5]], dtype=int32)
    """
    x = _ew.as_array(x)
    shape = x._shape if shape is None else normalize_shape(shape)
    strides = x._strides if strides is None else tuple(operator.index(s) for s in strides)
    if len(strides) != len(shape):
        raise ValueError("as_strided: %d strides for %d dimensions" % (len(strides), len(shape)))
    lo, hi = _extent(shape, strides, x._dtype.itemsize)
    if hi > lo and (x._offset + lo < 0 or x._offset + hi > x._buf.length):
        raise ValueError("as_strided: shape %r with strides %r reaches outside the array's memory "
                         "(bytes %d..%d of a buffer of %d)" % (shape, strides, x._offset + lo, x._offset + hi,
                                                               x._buf.length))
    view = x._view(x._offset, shape, strides)
    if not writeable or x._ro:
        view._ro = _READONLY_BASE
    return view
