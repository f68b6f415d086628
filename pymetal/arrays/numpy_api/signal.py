"""NumPy's signal and calculus functions on pymetal arrays (issue 23): interp, convolve,
correlate, cross, diff, gradient, trapezoid.

All compose pymetal's kernels (binary searches, gathers, matmul over strided
window views, elementwise arithmetic); float32 where NumPy gives float64.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from .. import reduce as _r
from .. import sorting as _s
from ... import dtypes as _dt
from ..array import Array
from ..construct import _new
from ..layout import normalize_axis
from .reduce import _bin, _float
from ..indexing import take
from ..linear_algebra import matmul
from ..namespace_extras import diff as _diff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..._typing import ArrayLike

_A = _ew.as_array


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: float | None = None, right: float | None = None,
           period: float | None = None) -> Array:
    """Piecewise-linear interpolation of the points (xp, fp) at x (xp increasing): a binary
    search kernel, gathers of the neighbouring points and the line between them.

    Examples:
        >>> pm.interp(pm.asarray([0.0, 1.5, 5.0]), pm.asarray([1.0, 2.0, 3.0]), pm.asarray([10.0, 20.0, 30.0]))
        Array([10., 15., 30.], dtype=float32)
    """
    if period is not None:
        raise NotImplementedError("interp(period=) is not supported")
    xv, xpa, fpa = _float(_A(x)), _float(_A(xp)), _float(_A(fp))
    if xpa.ndim != 1 or fpa.ndim != 1 or xpa._size != fpa._size:
        raise ValueError("interp: xp and fp must be 1-D sequences of the same length")
    if xpa._size == 0:
        raise ValueError("interp: array of sample points is empty")
    n = xpa._size
    if n == 1:  # NumPy's: fp[0] everywhere but left of / right of the point
        r = _ew.where(_bin("less", xv, xpa[0]), fpa[0] if left is None else float(left), fpa[0])
        return _ew.where(_bin("greater", xv, xpa[0]), fpa[0] if right is None else float(right), r)
    j = _ew.clip(_s.searchsorted(xpa, xv, side="right"), 1, builtins.max(n - 1, 1))
    i0 = _bin("subtract", j, 1)
    j = _ew.clip(j, 0, n - 1)
    x0, x1, f0, f1 = take(xpa, i0), take(xpa, j), take(fpa, i0), take(fpa, j)
    dx = _bin("subtract", x1, x0)
    slope = _bin("divide", _bin("subtract", f1, f0), _ew.where(_bin("equal", dx, 0), 1.0, dx))
    r = _bin("add", f0, _bin("multiply", slope, _bin("subtract", xv, x0)))
    r = _ew.where(_bin("equal", xv, x1), f1, r)  # exact at the sample points
    r = _ew.where(_bin("less", xv, xpa[0]), fpa[0] if left is None else float(left), r)
    r = _ew.where(_bin("greater", xv, xpa[n - 1]), fpa[n - 1] if right is None else float(right), r)
    return r


def _windows(a, m):
    """The (len(a) - m + 1, m) sliding windows of 1-D contiguous a (a strided view)."""
    n = a._size - m + 1
    s = a._strides[0]
    return a._view(a._offset, (n, m), (s, s))


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Array:
    """Cross-correlation of two 1-D sequences (NumPy's: v conjugated): the sliding windows of
    the zero-padded a (a strided view) times v, one matmul kernel.

    Examples:
        >>> pm.correlate(pm.asarray([1.0, 2.0, 3.0]), pm.asarray([0.0, 1.0, 0.5]))
        Array([3.5], dtype=float32)
    """
    a, v = _A(a), _A(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("correlate: a and v must be 1-D, got shapes %r and %r" % (a._shape, v._shape))
    if a._size == 0 or v._size == 0:
        raise ValueError("correlate: a and v must not be empty")
    if mode not in ("valid", "same", "full"):
        raise ValueError("correlate: mode must be 'valid', 'same' or 'full', not %r" % (mode,))
    swapped = v._size > a._size
    if swapped:  # NumPy: the longer one slides; the result is then reversed (and conjugated)
        a, v = v, a
    n, m = a._size, v._size
    dt = _dt.promote_types(a._dtype, v._dtype)
    if _dt.kind(dt) == "b":
        dt = _dt.int64
    a = a if a._dtype == dt else _ew.astype(a, dt)
    v = v if v._dtype == dt else _ew.astype(v, dt)
    if _dt.kind(dt) == "c":
        v = _ew.unary("conj", v)
    left = {"valid": 0, "same": m // 2, "full": m - 1}[mode]
    right = {"valid": 0, "same": m - 1 - m // 2, "full": m - 1}[mode]
    padded = _ew.fill(_new((n + left + right,), dt, a._buf.device), 0)
    padded[left:left + n] = a
    r = matmul(_windows(padded, m), _ew.ascontiguous(v).reshape(m, 1)).reshape(-1)
    if swapped:
        r = _ew.ascontiguous(_m.flip(r), force=True)
        if _dt.kind(dt) == "c":
            r = _ew.unary("conj", r)
    return r


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Array:
    """Discrete linear convolution of two 1-D sequences (correlate with v reversed).

    Examples:
        >>> pm.convolve(pm.asarray([1, 2, 3]), pm.asarray([0, 1, 0.5]))
        Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    a, v = _A(a), _A(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("convolve: a and v must be 1-D, got shapes %r and %r" % (a._shape, v._shape))
    if v._size > a._size:
        a, v = v, a
    if v._size and _dt.kind(v._dtype) == "c":
        v = _ew.unary("conj", v)  # correlate conjugates v again
    return correlate(a, _m.flip(v), mode)


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Array:
    """Cross products of 3-vectors (or 2-vectors, giving the z component) along the axes.

    Examples:
        >>> pm.cross(pm.asarray([1, 0, 0]), pm.asarray([0, 1, 0]))
        Array([0, 0, 1], dtype=int64)
        >>> pm.cross(pm.asarray([1.0, 2.0]), pm.asarray([3.0, 4.0]))
        Array(-2., dtype=float32)
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _m.moveaxis(_A(a), axisa, -1), _m.moveaxis(_A(b), axisb, -1)
    if a._shape[-1] not in (2, 3) or b._shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")
    mul, sub = (lambda p, q: _bin("multiply", p, q)), (lambda p, q: _bin("subtract", p, q))
    if a._shape[-1] == 2 and b._shape[-1] == 2:
        return sub(mul(a[..., 0], b[..., 1]), mul(a[..., 1], b[..., 0]))
    zero = lambda x: x[..., 0:1] * 0  # noqa: E731  (a 2-vector's z component)
    a3 = a if a._shape[-1] == 3 else _m.concat([a, zero(a)], axis=-1)
    b3 = b if b._shape[-1] == 3 else _m.concat([b, zero(b)], axis=-1)
    comp = [sub(mul(a3[..., i], b3[..., j]), mul(a3[..., j], b3[..., i])) for i, j in ((1, 2), (2, 0), (0, 1))]
    return _m.moveaxis(_m.stack(comp, axis=-1), -1, axisc)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Array:
    """n-th discrete difference along axis, NumPy's signature (``pm.diff(x, 1, 0)``).

    Examples:
        >>> pm.diff(pm.asarray([[1, 4], [9, 16]]), 1, 0)
        Array([[ 8, 12]], dtype=int64)
    """
    a = _A(a)
    if a.ndim and (prepend is not None or append is not None):
        ax = normalize_axis(axis, a.ndim)
        shape = list(a._shape)
        shape[ax] = 1
        fix = lambda v: None if v is None else (_A(v).broadcast_to(tuple(shape)) if _A(v).ndim == 0 else v)  # noqa: E731
        prepend, append = fix(prepend), fix(append)
    return _diff(a, axis=axis, n=n, prepend=prepend, append=append)


def gradient(f: ArrayLike, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Gradient by central differences inside, one-sided differences at the edges; the spacing
    per axis is a scalar or the axis's coordinates (a 1-D array: NumPy's second-order
    differences for uneven spacing); a tuple for several axes.

    Examples:
        >>> pm.gradient(pm.asarray([1.0, 2.0, 4.0, 7.0]))
        Array([1. , 1.5, 2.5, 3. ], dtype=float32)
        >>> pm.gradient(pm.asarray([0.0, 1.0, 9.0]), pm.asarray([0.0, 1.0, 3.0]))
        Array([1., 2., 4.], dtype=float32)
    """
    f = _float(_A(f))
    axes = list(range(f.ndim)) if axis is None else [normalize_axis(a, f.ndim) for a in
                                                       (axis if isinstance(axis, (tuple, list)) else [axis])]
    if len(varargs) > 1 and len(varargs) != len(axes):
        raise TypeError("gradient: give one spacing, or one per axis")
    if len(varargs) == 1 and len(axes) > 1 and np.ndim(_host_value(varargs[0])) != 0:
        raise TypeError("gradient: one coordinate array for %d axes; give one per axis" % len(axes))
    sp = varargs if len(varargs) > 1 else varargs * len(axes) if varargs else (1.0,) * len(axes)
    if edge_order not in (1, 2):
        raise ValueError("gradient: edge_order must be 1 or 2")
    out = []
    for ax, h in zip(axes, sp):
        n = f._shape[ax]
        if n < edge_order + 1:
            raise ValueError("gradient: the axis %d needs at least edge_order + 1 = %d elements" % (ax, edge_order + 1))
        if np.ndim(_host_value(h)) == 0:
            out.append(_gradient_even(f, ax, float(h), edge_order))
        else:
            out.append(_gradient_coords(f, ax, _A(h), edge_order))
    return out[0] if len(out) == 1 else tuple(out)


def _host_value(v: Any) -> Any:
    return v.numpy() if isinstance(v, Array) else v


def _gradient_even(f: Array, ax: int, h: float, edge_order: int) -> Array:
    n = f._shape[ax]
    sl = lambda a, b: f[(slice(None),) * ax + (slice(a, b),)]  # noqa: E731
    inner = _bin("divide", _bin("subtract", sl(2, None), sl(None, -2)), 2 * h)
    if edge_order == 1:
        first = _bin("divide", _bin("subtract", sl(1, 2), sl(0, 1)), h)
        last = _bin("divide", _bin("subtract", sl(n - 1, n), sl(n - 2, n - 1)), h)
    else:
        first = _bin("divide", _bin("add", _bin("add", _bin("multiply", sl(0, 1), -1.5), _bin("multiply", sl(1, 2), 2.0)),
                                    _bin("multiply", sl(2, 3), -0.5)), h)
        last = _bin("divide", _bin("add", _bin("add", _bin("multiply", sl(n - 3, n - 2), 0.5),
                                               _bin("multiply", sl(n - 2, n - 1), -2.0)), _bin("multiply", sl(n - 1, n), 1.5)), h)
    return _m.concat([first, inner, last], axis=ax)


def _gradient_coords(f: Array, ax: int, x: Array, edge_order: int) -> Array:
    """The gradient along ax at coordinates x: each value a weighted sum of three neighbours, the
    weights those of the parabola through them (NumPy's formulas for uneven spacing)."""
    n = f._shape[ax]
    if x.ndim != 1 or x._shape[0] != n:
        raise ValueError("gradient: a coordinate array must be 1-D with one value per element along axis %d "
                         "(%d), got shape %r" % (ax, n, x._shape))
    x = _ew.astype(x, f._dtype) if _dt.kind(x._dtype) not in "fc" else x
    sl = lambda a, b: f[(slice(None),) * ax + (slice(a, b),)]  # noqa: E731
    col = lambda w: w.reshape(tuple(-1 if i == ax else 1 for i in range(f.ndim)))  # noqa: E731
    dx = x[1:] - x[:-1]

    def three(wa: Array, wb: Array, wc: Array, at: int) -> Array:  # weights of f[at + i], f[at + i + 1], f[at + i + 2]
        m = wa._shape[0]
        return col(wa) * sl(at, at + m) + col(wb) * sl(at + 1, at + 1 + m) + col(wc) * sl(at + 2, at + 2 + m)

    d1, d2 = dx[:-1], dx[1:]
    inner = three(-d2 / (d1 * (d1 + d2)), (d2 - d1) / (d1 * d2), d1 / (d2 * (d1 + d2)), 0)
    if edge_order == 1:
        first = (sl(1, 2) - sl(0, 1)) / col(dx[:1])
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / col(dx[-1:])
    else:
        a1, a2 = dx[:1], dx[1:2]
        first = three(-(2 * a1 + a2) / (a1 * (a1 + a2)), (a1 + a2) / (a1 * a2), -a1 / (a2 * (a1 + a2)), 0)
        b1, b2 = dx[-2:-1], dx[-1:]
        last = three(b2 / (b1 * (b1 + b2)), -(b2 + b1) / (b1 * b2), (2 * b2 + b1) / (b2 * (b1 + b2)), n - 3)
    return _m.concat([first, inner, last], axis=ax)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Array:
    """Integral of y along axis by the trapezoidal rule (samples at x, or spaced dx); also ``pm.trapz``.

    Examples:
        >>> pm.trapezoid(pm.asarray([1.0, 2.0, 3.0]))
        Array(4., dtype=float32)
    """
    y = _A(y)
    y = y if _dt.kind(y._dtype) in "fc" else _ew.astype(y, _dt.float32)
    ax = normalize_axis(axis, y.ndim)
    sl = lambda v, a, b: v[(slice(None),) * (ax if v.ndim == y.ndim else 0) + (slice(a, b),)]  # noqa: E731
    mid = _bin("multiply", _bin("add", sl(y, 1, None), sl(y, None, -1)), 0.5)
    if x is None:
        w = float(dx)
    else:
        xa = _A(x)
        w = _bin("subtract", sl(xa, 1, None), sl(xa, None, -1))
        if xa.ndim == 1 and y.ndim > 1:
            w = w.reshape(tuple(-1 if i == ax else 1 for i in range(y.ndim)))
    return _r.sum(_bin("multiply", mid, w), axis=ax)
