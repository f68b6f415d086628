"""Sorting, searching, set and scan functions.

sort / argsort (stable), searchsorted and the cumulative sums and products run
the kernels of Shaders/sort.h and scan.h along the last axis of a contiguous
copy. nonzero and unique_values have data-dependent sizes: a running count
(scan kernel) and a compaction kernel produce them, and the host reads one
number, the count, to size the result.
"""

from __future__ import annotations

from .. import dtypes as _dt
from . import optable as _ops
from .kernels import lookup as _jit, sort as _sort, scan as _scan, compact as _cc, unique as _uq
from .array import Array
from .construct import _new, asarray
from .layout import axis_last, normalize_axis
from . import elementwise as _ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .array import Array
    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar


def _real_only(name, x):
    if _dt.kind(x._dtype) == "c":
        raise TypeError("%s() of complex arrays is not supported: the Array API leaves the order of "
                        "complex numbers unspecified; sort pm.real(x) or pm.abs(x)" % name)


def _last_axis(x, axis):
    """(contiguous copy with axis last, rows, n, permutation to undo)."""
    x = _ew.as_array(x)
    if x.ndim == 0:
        raise ValueError("cannot sort a 0-d array")
    axis = normalize_axis(axis, x.ndim)
    order, inv = axis_last(x.ndim, axis)
    src = _ew.ascontiguous(x.permute_dims(order))
    n = x._shape[axis]
    return src, (src._size // n if n else 0), n, inv


def _axis_back(out, inv):
    """A result computed with the axis last, in x's axis order and C-contiguous, as
    NumPy's: a permuted view would make a later reshape copy where NumPy's is a view."""
    return _ew.ascontiguous(out.permute_dims(inv))


def _sorted(x, axis, descending, stable, want):

    _real_only("sort", _ew.as_array(x))
    src, rows, n, inv = _last_axis(x, axis)
    out = _new(src._shape, src._dtype if want == "values" else _dt.int64, src._buf.device)
    if src._size:  # only the wanted output: the CPU backend's radix sort then moves no indices for sort()
        o = out.reshape(rows, n)
        _sort.sort(src.reshape(rows, n), o if want == "values" else None, o if want != "values" else None,
                   descending=descending)
    return _axis_back(out, inv)


def sort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """x sorted along axis (stable; NaNs last).

    Examples:
        >>> pm.sort(pm.asarray([3, 1, 2]))
        Array([1, 2, 3], dtype=int64)
        >>> pm.sort(pm.asarray([[3.0, 1.0], [0.5, 2.0]]), axis=0, descending=True)
        Array([[3. , 2. ],
               [0.5, 1. ]], dtype=float32)
    """
    return _sorted(x, axis, descending, stable, "values")


def argsort(x: ArrayLike, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort x along axis (stable: equal elements keep their order), int64.

    Examples:
        >>> pm.argsort(pm.asarray([30, 10, 20, 10]))
        Array([1, 3, 2, 0], dtype=int64)
    """
    return _sorted(x, axis, descending, stable, "indices")


def searchsorted(x1: ArrayLike, x2: ArrayLike, /, *, side: str = "left",
                 sorter: ArrayLike | None = None) -> Array:
    """Indices where x2's values would be inserted into the sorted 1-D x1, int64.

    side: "left" (the first suitable index) or "right" (the last).

    Examples:
        >>> a = pm.asarray([1.0, 2.0, 2.0, 5.0])
        >>> pm.searchsorted(a, pm.asarray([2.0, 4.0]))
        Array([1, 3], dtype=int64)
        >>> pm.searchsorted(a, pm.asarray([2.0]), side="right")
        Array([3], dtype=int64)
    """

    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', not %r" % (side,))
    a = _ew.as_array(x1)
    _real_only("searchsorted", a)
    if a.ndim != 1:
        raise ValueError("searchsorted: x1 must be 1-D")
    if sorter is not None:
        from .indexing import take  # at call time: indexing imports this module
        a = take(a, sorter)
    if _ew.is_scalar(x2):  # weak, as in arithmetic: 1.5 with an int array compares as a float (not 1)
        if type(x2) is int and _dt.kind(a._dtype) in "iu" and not _dt.int_in_range(x2, a._dtype):
            # beyond the type's range: before every element or after all of them (NumPy's answer)
            return asarray(0 if x2 < 0 else a._shape[0], dtype=_dt.default_index)
        dt = _dt.scalar_result(a._dtype, x2)
        v = asarray(x2, dtype=dt)
    else:
        v = _ew.as_array(x2)
        dt = _dt.promote_types(a._dtype, v._dtype)
    _real_only("searchsorted", v)  # complex values have no order
    a = a if a._dtype == dt else _ew.astype(a, dt)
    v = _ew.ascontiguous(v if v._dtype == dt else _ew.astype(v, dt))
    return _sort.searchsorted(a, v, side=side)


def _cumulative(op, x, axis, dtype, include_initial):

    x = _ew.as_array(x)
    if dtype is not None and _dt.kind(_dt.check_dtype(dtype)) == "c" and _dt.kind(x._dtype) != "c":
        x = _ew.astype(x, _dt.check_dtype(dtype))  # real elements into complex ones, then the sums below
    if _dt.kind(x._dtype) == "c":
        from .namespace_extras import complex_from_parts, imag, real  # at call time: namespace_extras imports this module
        if op == "sum":  # running sums of the parts
            re, im = (_cumulative("sum", p, axis, _dt.float32, include_initial) for p in (real(x), imag(x)))
        else:  # running products in polar form: moduli multiply, angles add
            r = _cumulative("prod", _ew.unary("abs", x), axis, _dt.float32, include_initial)
            phi = _cumulative("sum", _ew.binary("atan2", imag(x), real(x)), axis, _dt.float32, include_initial)
            re, im = _ew.binary("multiply", r, _ew.unary("cos", phi)), _ew.binary("multiply", r, _ew.unary("sin", phi))
        if dtype is not None and _dt.kind(_dt.check_dtype(dtype)) != "c":
            raise TypeError("cumulative_%s: a complex array cannot accumulate into %s (the imaginary parts would "
                            "be lost); take pm.real(x) first" % (op, _dt.check_dtype(dtype)))
        res = complex_from_parts(re, im)
        return res if dtype is None else _ew.astype(res, _dt.check_dtype(dtype))
    if axis is None:
        if x.ndim > 1:
            raise ValueError("cumulative_%s: axis is required for arrays of more than one dimension" % op)
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    if dtype is None:
        k = _dt.kind(x._dtype)
        dtype = _dt.int64 if k in "bi" else _dt.uint64 if k == "u" else x._dtype
    dt = _dt.check_dtype(dtype)
    if dt != x._dtype and _scan.WIDEN.get(_dt.NAMES[x._dtype]) != _dt.NAMES.get(dt):
        x = _ew.astype(x, dt)  # NumPy's rule: the elements are converted, then accumulated in dtype
    src, rows, n, inv = _last_axis(x, axis)
    out = _new(src._shape, dt, src._buf.device)
    if out._size:
        _scan.cumulative(src.reshape(rows, n), out.reshape(rows, n), op=op)
    res = _axis_back(out, inv)
    if include_initial:
        from .manipulation import concat  # at call time: manipulation imports this module (through indexing)
        first = list(res._shape)
        first[normalize_axis(axis, x.ndim)] = 1
        init = _ew.fill(_new(tuple(first), dt, x._buf.device), 0 if op == "sum" else 1)
        res = concat([init, res], axis=axis)
    return res


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike = None,
                   include_initial: bool = False) -> Array:
    """Running sums along axis (integers in 64 bits); include_initial starts with a zero.

    Examples:
        >>> pm.cumulative_sum(pm.asarray([1, 2, 3]))
        Array([1, 3, 6], dtype=int64)
        >>> pm.cumulative_sum(pm.asarray([1, 2, 3]), include_initial=True)
        Array([0, 1, 3, 6], dtype=int64)
    """
    return _cumulative("sum", x, axis, dtype, include_initial)


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike = None,
                    include_initial: bool = False) -> Array:
    """Running products along axis (integers in 64 bits).

    Examples:
        >>> pm.cumulative_prod(pm.asarray([[1, 2, 3], [4, 5, 6]]), axis=1)
        Array([[  1,   2,   6],
               [  4,  20, 120]], dtype=int64)
    """
    return _cumulative("prod", x, axis, dtype, include_initial)


def _compact(values, keep):
    """values[keep] for 1-D contiguous arrays: a running count (scan kernel), one
    host read of the total (the result's size depends on the data), a compaction kernel."""
    n = values._size
    if n == 0:
        return _new((0,), values._dtype, values._buf.device)
    if _cc.supported(keep):  # the CPU backend: per-chunk counts, then one write pass
        return _cc.compact(_ew.ascontiguous(values), _ew.ascontiguous(keep))
    pos = cumulative_sum(keep, axis=0, dtype=_dt.int64)
    total = int(pos[n - 1])
    out = _new((total,), values._dtype, values._buf.device)
    if total:
        fn = _jit.kernel(_ops.index_name("compact", values._dtype), "copy", values._dtype, values._buf.device)
        fn(values, keep, pos, out, grid=n, threadgroup=min(n, 256))
    return out


def nonzero(x: ArrayLike, /) -> tuple[Array, ...]:
    """Tuple of int64 index arrays of the non-zero elements (kernels; one host read of the count).

    Examples:
        >>> pm.nonzero(pm.asarray([[0, 3], [4, 0]]))
        (Array([0, 1], dtype=int64), Array([1, 0], dtype=int64))
    """
    from .creation import arange  # at call time: creation imports this module (through namespace_extras)

    x = _ew.as_array(x)
    if x.ndim == 0:
        raise ValueError("nonzero is not defined for 0-d arrays; use x[None]")
    if _cc.supported(x) and x._size:  # the CPU backend: the positions straight from x, no mask or arange
        flat = _cc.nonzero_flat(_ew.ascontiguous(x).reshape(-1))
        if x.ndim == 1:
            return (flat,)
        return _unravel(flat, x._shape)
    keep = _ew.ascontiguous(_ew.binary("not_equal", x, False if x._dtype == _dt.bool_ else 0)).reshape(-1)
    flat = _compact(arange(x._size, dtype=_dt.int64, device=x._buf.device), keep)
    return _unravel(flat, x._shape)


def _unravel(flat, shape):
    """One index array per axis from C-order flat positions."""
    out = []
    for d in reversed(shape):
        out.append(_ew.binary("remainder", flat, d) if d else flat)
        flat = _ew.binary("floor_divide", flat, d) if d else flat
    return tuple(reversed(out))


def unique_values(x: ArrayLike, /) -> Array:
    """The sorted distinct values of x (each NaN is distinct, as the Array API says).

    Examples:
        >>> pm.unique_values(pm.asarray([3, 1, 3, 2, 1]))
        Array([1, 2, 3], dtype=int64)
    """
    from .manipulation import concat  # at call time: manipulation imports this module (through indexing)

    x = _ew.as_array(x)
    if _dt.kind(x._dtype) == "c":
        from .namespace_extras import _unique  # at call time: namespace_extras imports this module
        return _unique(x)[0]
    v = sort(x.reshape(-1))
    n = v._size
    if n <= 1:
        return _ew.ascontiguous(v, force=True)
    if _uq.supported(v):  # the CPU backend: kept elements straight from v, no mask
        return _uq.unique_sorted(v)
    first = _ew.fill(_new((1,), _dt.bool_, x._buf.device), True)
    keep = concat([first, _ew.binary("not_equal", v[1:], v[:-1])])
    return _compact(v, keep)
