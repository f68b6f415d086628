"""Linear algebra on pymetal arrays: matmul (batched, broadcast), tensordot, vecdot, outer.

matmul runs the kernels of Shaders/matmul.h (a register-blocked kernel on the
CPU backend, simdgroup_matrix tiles on Apple GPUs); float16 and bfloat16
accumulate in float32.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .array import Array
from .construct import _new
from .layout import normalize_axis
from . import elementwise as _ew
from . import reduce as _red
from .kernels import matmul as _mm
from .namespace_extras import complex_from_parts, imag, real

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .array import Array
    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar


def _kernel_ready(x):
    """x, or a contiguous copy when neither of its last two strides is one element."""
    if x.ndim >= 2:
        isz = x._dtype.itemsize
        if x._strides[-1] == isz or x._strides[-2] == isz or x._shape[-1] == 1 or x._shape[-2] == 1:
            return x
    return _ew.ascontiguous(x)


def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix product with NumPy's rules: 1-D operands are vectors, leading dimensions broadcast.

    Also ``x1 @ x2``.

    Examples:
        >>> a = pm.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> pm.matmul(a, pm.asarray([1.0, 1.0]))
        Array([3., 7.], dtype=float32)
        >>> a @ a
        Array([[ 7., 10.],
               [15., 22.]], dtype=float32)
    """

    a, b = _ew.as_array(x1), _ew.as_array(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension (use * for scalars)")
    dt = _dt.promote_types(a._dtype, b._dtype)
    if _dt.kind(dt) == "c":  # complex64 @ bool or @ int: promoted first, as NumPy's
        return _complex_matmul(*(v if v._dtype == dt else _ew.astype(v, dt) for v in (a, b)))
    if a._dtype != dt:
        a = _ew.astype(a, dt)
    if b._dtype != dt:
        b = _ew.astype(b, dt)
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = a.reshape(1, -1)
    if vb:
        b = b.reshape(-1, 1)
    if a._shape[-1] != b._shape[-2]:
        raise ValueError("matmul: shapes %r and %r do not align (%d != %d)"
                         % (np.shape(x1), np.shape(x2), a._shape[-1], b._shape[-2]))
    batch = _ew.broadcast_shapes(a._shape[:-2], b._shape[:-2])
    m, k, n = a._shape[-2], a._shape[-1], b._shape[-1]
    a = _kernel_ready(a.broadcast_to(batch + (m, k)))
    b = _kernel_ready(b.broadcast_to(batch + (k, n)))
    out = _new(batch + (m, n), dt, a._buf.device)
    if out._size:
        if k == 0:
            _ew.fill(out, 0)
        else:
            _mm.matmul(a, b, out)
    if va and vb:
        return out.reshape(batch)
    if va:
        return out.reshape(batch + (n,))
    if vb:
        return out.reshape(batch + (m,))
    return out


def _complex_matmul(a, b):
    """complex64 matmul as four float32 matmuls of the parts (the real kernels, no complex one):
    (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br)."""

    ar, ai, br, bi = real(a), imag(a), real(b), imag(b)
    re = _ew.binary("subtract", matmul(ar, br), matmul(ai, bi))
    im = _ew.binary("add", matmul(ar, bi), matmul(ai, br))
    return complex_from_parts(re, im)


_MATMUL_OPERANDS = (Array, np.ndarray, list, tuple)  # scalars: NotImplemented, as NumPy's @


def _matmul(self, other):
    return matmul(self, other) if isinstance(other, _MATMUL_OPERANDS) else NotImplemented


def _rmatmul(self, other):
    return matmul(other, self) if isinstance(other, _MATMUL_OPERANDS) else NotImplemented


def _imatmul(self, other):
    res = matmul(self, other)
    if res._shape != self._shape:
        raise ValueError("in-place matmul would change the shape from %r to %r" % (self._shape, res._shape))
    _ew.copy_into(res, self)
    return self


def _prod(sizes):
    p = 1
    for n in sizes:
        p *= n
    return p


def tensordot(x1: ArrayLike, x2: ArrayLike, /, *,
              axes: int | tuple[tuple[int, ...] | list[int], tuple[int, ...] | list[int]] = 2) -> Array:
    """Sum of products over the last `axes` axes of x1 and the first of x2 (or explicit axis lists).

    Examples:
        >>> a = pm.ones((2, 3, 4))
        >>> pm.tensordot(a, pm.ones((3, 4, 5)), axes=2).shape
        (2, 5)
        >>> pm.tensordot(a, pm.ones((4, 3)), axes=([1, 2], [1, 0]))
        Array([12., 12.], dtype=float32)
    """
    a, b = _ew.as_array(x1), _ew.as_array(x2)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: axes must be >= 0")
        if axes > min(a.ndim, b.ndim):
            raise ValueError("tensordot: axes=%d is more than the operands' dimensions %r and %r"
                             % (axes, a._shape, b._shape))
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    ax_a = [normalize_axis(x, a.ndim) for x in ax_a]
    ax_b = [normalize_axis(x, b.ndim) for x in ax_b]
    if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b) or len(ax_a) != len(ax_b):
        raise ValueError("tensordot: axes %r must name distinct axes, as many in each operand" % (axes,))
    if [a._shape[i] for i in ax_a] != [b._shape[i] for i in ax_b]:
        raise ValueError("tensordot: contracted dimensions differ: %r vs %r"
                         % ([a._shape[i] for i in ax_a], [b._shape[i] for i in ax_b]))
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    kk = _prod(a._shape[i] for i in ax_a)
    # Explicit sizes (not -1): any of them may be 0.
    am = a.permute_dims(free_a + ax_a).reshape(_prod(a._shape[i] for i in free_a), kk)
    bm = b.permute_dims(ax_b + free_b).reshape(kk, _prod(b._shape[i] for i in free_b))
    return matmul(am, bm).reshape(tuple(a._shape[i] for i in free_a) + tuple(b._shape[i] for i in free_b))


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along axis (broadcast); complex: sum(conj(x1) * x2), as the standard.

    Examples:
        >>> pm.vecdot(pm.asarray([[1.0, 2.0], [3.0, 4.0]]), pm.asarray([1.0, 10.0]))
        Array([21., 43.], dtype=float32)
    """
    a, b = _ew.as_array(x1), _ew.as_array(x2)
    nd = min(a.ndim, b.ndim)
    if nd == 0 or not -nd <= axis < nd:
        raise ValueError("vecdot: axis %r is out of range for shapes %r and %r" % (axis, a._shape, b._shape))
    # The standard counts the axis from the end, so it names the same dimension in both operands,
    # and the contracted dimension does not broadcast.
    ax = axis - nd if axis >= 0 else axis
    if a._shape[ax] != b._shape[ax]:
        raise ValueError("vecdot: the vectors along axis %d differ in length: shapes %r and %r"
                         % (axis, a._shape, b._shape))
    if _dt.kind(a._dtype) == "c":
        a = _ew.unary("conj", a)
    prod = _ew.binary("multiply", a, b)
    return _red.sum(prod, axis=ax, dtype=prod._dtype)  # the operands' type (sum would widen integers)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Outer product of two 1-D arrays.

    Examples:
        >>> pm.outer(pm.asarray([1, 2]), pm.asarray([1, 10, 100]))
        Array([[  1,  10, 100],
               [  2,  20, 200]], dtype=int64)
    """
    a, b = _ew.as_array(x1), _ew.as_array(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("outer: both operands must be 1-D")
    return _ew.binary("multiply", a.reshape(-1, 1), b.reshape(1, -1))
