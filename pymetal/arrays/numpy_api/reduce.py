"""NumPy's signatures for the reductions, running sums and sorts (issue 23).

``pm.sum(x, 1)``, ``x.sum(1)``, ``x.std(ddof=1)``, ``x.max(0, keepdims=True)``,
``pm.cumsum(x)``, ``x.sort()`` (in place): NumPy's positional parameters,
``out=`` and NumPy's keywords, over the Array API functions (which these
replace in the namespace: every call the standard allows means the same).
These functions are also the Array methods (``numpy_api/methods.py``, bound by ``arrays/methods.py``).

float64 is not a device type: where NumPy returns float64 (the mean of
integers, ``median``), these return float32.
"""

from __future__ import annotations

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from .. import reduce as _r
from .. import sorting as _s
from ... import dtypes as _dt
from ..array import Array, check_writeable
from ..indexing import take_along_axis

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..._typing import ArrayLike, DTypeLike


def into(res: Array, out: Array | None) -> Array:
    """`res`, or written into `out` (NumPy's out=: an Array of the result's shape) and out returned."""
    if out is None:
        return res
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, Array):
        raise TypeError("out= must be a pymetal Array, not %s" % type(out).__name__)
    if out._shape != res._shape:
        raise ValueError("out= has shape %r; the result has shape %r" % (out._shape, res._shape))
    check_writeable(out)
    _ew.copy_into(res, out)
    return out


def _bin(name, a, b):
    """The table's binary function `name` of a and b (one kernel)."""
    return _ew.binary(name, a, b)


def _float(x):
    """x as a float array: float32 for integers and bool, where NumPy computes in float64."""
    x = _ew.as_array(x)
    return x if _dt.kind(x._dtype) in "fc" else _ew.astype(x, _dt.float32)


def _with_dtype(res, dtype):
    if dtype is None:
        return res
    dt = _dt.check_dtype(dtype)
    return res if res._dtype == dt else _ew.astype(res, dt)


def _masked(a: Any, where: Any, identity: Any) -> Array:
    """a with the elements where `where` is False replaced by the reduction's identity (NumPy's
    where= of reductions: those elements take no part)."""
    x = _ew.as_array(a)
    if where is True:
        return x
    w = _ew.as_array(where)
    if _ew.broadcast_shapes(w._shape, x._shape) != x._shape:
        raise ValueError("where= of shape %r does not broadcast to the array's shape %r" % (w._shape, x._shape))
    if identity is None:
        raise ValueError("reduction operation has no identity, so to use a where mask one has to specify 'initial'")
    return _ew.where(w, x, identity)


def _with_initial(name: str, x: Array, axis: Any, keepdims: bool, initial: Any) -> Array:
    """NumPy's initial= of sum / prod / max / min: the reduction with `initial` as one more
    element of every slice (so an empty slice gives initial)."""
    if x._size == 0:  # every slice empty: initial, in the result's shape (NumPy's, from the shapes alone)
        shape = np.sum(np.empty(x._shape, np.int8), axis=axis, keepdims=keepdims).shape
        from ..creation import full
        return full(shape, initial, dtype=x._dtype if name in ("max", "min") else None)
    r = getattr(_r, name)(x, axis=axis, keepdims=keepdims)
    op = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}[name]
    return _bin(op, r, initial)


def sum(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None,
        keepdims: bool = False, initial: Any = None, where: Any = True) -> Array:
    """Sum over axis, NumPy's signature (``pm.sum(x, 1)``, ``x.sum(0, keepdims=True)``).

    Integers accumulate in 64 bits; out= takes an Array to write into.

    Examples:
        >>> x = pm.asarray([[1, 2, 3], [4, 5, 6]])
        >>> pm.sum(x, 0), x.sum(1)
        (Array([5, 7, 9], dtype=int64), Array([ 6, 15], dtype=int64))
        >>> pm.sum(pm.asarray([1, 2, 3]), where=pm.asarray([True, False, True]), initial=10)
        Array(14, dtype=int64)
    """
    x = _masked(a, where, 0)
    if initial is not None:
        return into(_with_dtype(_with_initial("sum", x, axis, keepdims, initial), dtype), out)
    return into(_r.sum(x, axis=axis, dtype=dtype, keepdims=keepdims), out)


def prod(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None,
         keepdims: bool = False, initial: Any = None, where: Any = True) -> Array:
    """Product over axis, NumPy's signature.

    Examples:
        >>> pm.asarray([[1, 2], [3, 4]]).prod(1)
        Array([ 2, 12], dtype=int64)
    """
    x = _masked(a, where, 1)
    if initial is not None:
        return into(_with_dtype(_with_initial("prod", x, axis, keepdims, initial), dtype), out)
    return into(_r.prod(x, axis=axis, dtype=dtype, keepdims=keepdims), out)


def max(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False, initial: Any = None,
        where: Any = True) -> Array:
    """Largest element over axis, NumPy's signature (also ``pm.amax``).

    Examples:
        >>> pm.asarray([[1, 7], [5, 3]]).max(0)
        Array([5, 7], dtype=int64)
        >>> pm.max(pm.asarray([1, 5, 3]), initial=10)
        Array(10, dtype=int64)
    """
    x = _masked(a, where, initial)
    if initial is not None:
        return into(_with_initial("max", x, axis, keepdims, initial), out)
    return into(_r.max(x, axis=axis, keepdims=keepdims), out)


def min(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False, initial: Any = None,
        where: Any = True) -> Array:
    """Smallest element over axis, NumPy's signature (also ``pm.amin``).

    Examples:
        >>> pm.asarray([[1, 7], [5, 3]]).min(1, keepdims=True)
        Array([[1],
               [3]], dtype=int64)
    """
    x = _masked(a, where, initial)
    if initial is not None:
        return into(_with_initial("min", x, axis, keepdims, initial), out)
    return into(_r.min(x, axis=axis, keepdims=keepdims), out)


def ptp(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False) -> Array:
    """Range (max - min) over axis.

    Examples:
        >>> pm.ptp(pm.asarray([[1, 7], [5, 3]]), 1)
        Array([6, 2], dtype=int64)
    """
    return into(_ew.binary("subtract", _r.max(a, axis=axis, keepdims=keepdims),
                           _r.min(a, axis=axis, keepdims=keepdims)), out)


def all(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False, *,
        where: Any = True) -> Array:
    """Whether every element over axis is true, NumPy's signature.

    Examples:
        >>> pm.asarray([[1, 0], [1, 1]]).all(1)
        Array([False,  True], dtype=bool)
    """
    return into(_r.all(_masked(a, where, True), axis=axis, keepdims=keepdims), out)


def any(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False, *,
        where: Any = True) -> Array:
    """Whether any element over axis is true, NumPy's signature.

    Examples:
        >>> pm.asarray([[1, 0], [0, 0]]).any(1)
        Array([ True, False], dtype=bool)
    """
    return into(_r.any(_masked(a, where, False), axis=axis, keepdims=keepdims), out)


def argmax(a: ArrayLike, axis: int | None = None, out: Array | None = None, *, keepdims: bool = False) -> Array:
    """Index of the first largest element (NaN counts as largest), NumPy's signature.

    Examples:
        >>> pm.asarray([[1, 5], [7, 2]]).argmax(1)
        Array([1, 0], dtype=int64)
    """
    return into(_r.argmax(a, axis=axis, keepdims=keepdims), out)


def argmin(a: ArrayLike, axis: int | None = None, out: Array | None = None, *, keepdims: bool = False) -> Array:
    """Index of the first smallest element (NaN counts as smallest), NumPy's signature.

    Examples:
        >>> pm.argmin(pm.asarray([[1, 5], [7, 2]]), 0)
        Array([0, 1], dtype=int64)
    """
    return into(_r.argmin(a, axis=axis, keepdims=keepdims), out)


def mean(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None,
         keepdims: bool = False, *, where: Any = True) -> Array:
    """Arithmetic mean over axis, NumPy's signature (float32 for integers, where NumPy gives float64).

    Examples:
        >>> pm.asarray([[1, 2], [3, 5]]).mean(0)
        Array([2. , 3.5], dtype=float32)
    """
    if where is not True:  # the mean of the elements where is True: their sum over their count
        x = _ew.as_array(a)
        w = _ew.astype(_m.broadcast_to(_ew.as_array(where), x._shape), _dt.float32)
        s = _r.sum(_float(_masked(x, where, 0)), axis=axis, keepdims=keepdims)
        return into(_with_dtype(_bin("divide", s, _r.sum(w, axis=axis, keepdims=keepdims)), dtype), out)
    return into(_with_dtype(_r.mean(a, axis=axis, keepdims=keepdims), dtype), out)


def _correction(ddof, correction):
    if correction is not None and ddof != 0:
        raise ValueError("ddof and correction are the same parameter; give one of them")
    return ddof if correction is None else correction


def var(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None, ddof: float = 0,
        keepdims: bool = False, *, correction: float | None = None) -> Array:
    """Variance over axis with ddof (or correction) degrees of freedom removed, NumPy's signature.

    Examples:
        >>> x = pm.asarray([1.0, 2.0, 3.0, 4.0])
        >>> x.var(), x.var(ddof=1)
        (Array(1.25, dtype=float32), Array(1.6666666, dtype=float32))
    """
    r = _var(_ew.as_array(a), axis, _correction(ddof, correction), keepdims)  # lists too
    return into(_with_dtype(r, dtype), out)


def _var(x, axis, correction, keepdims):
    """The variance; of complex values NumPy's mean |x - mean|^2, the real parts' variance plus
    the imaginary parts' (a real array)."""
    if _dt.kind(x._dtype) != "c":
        return _r.var(x, axis=axis, correction=correction, keepdims=keepdims)
    re, im = (_r.var(_ew.unary(f, x), axis=axis, correction=correction, keepdims=keepdims) for f in ("real", "imag"))
    return _ew.binary("add", re, im)


def std(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None, ddof: float = 0,
        keepdims: bool = False, *, correction: float | None = None) -> Array:
    """Standard deviation over axis, NumPy's signature (``x.std(ddof=1)``).

    Examples:
        >>> pm.asarray([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).std(0)
        Array(2., dtype=float32)
    """
    x = _ew.as_array(a)  # lists too
    if _dt.kind(x._dtype) == "c":
        r = _ew.unary("sqrt", _var(x, axis, _correction(ddof, correction), keepdims))
    else:
        r = _r.std(x, axis=axis, correction=_correction(ddof, correction), keepdims=keepdims)
    return into(_with_dtype(r, dtype), out)


def count_nonzero(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Array:
    """Number of non-zero elements over axis, int64 (NumPy's signature).

    Examples:
        >>> pm.count_nonzero(pm.asarray([[0, 1, 2], [3, 0, 0]]), 1)
        Array([2, 1], dtype=int64)
    """
    return _r.count_nonzero(a, axis=axis, keepdims=keepdims)


def _flat_axis(a, axis):
    """(array, axis): NumPy's axis=None of cumsum, sort, ... works on the flattened array."""
    a = _ew.as_array(a)
    if axis is None:
        return _ew.ascontiguous(a).reshape(-1), 0
    return a, axis


def cumsum(a: ArrayLike, axis: int | None = None, dtype: DTypeLike = None, out: Array | None = None) -> Array:
    """Running sums along axis (of the flattened array when axis is None), as np.cumsum.

    Examples:
        >>> pm.cumsum(pm.asarray([[1, 2], [3, 4]]))
        Array([ 1,  3,  6, 10], dtype=int64)
        >>> pm.asarray([[1, 2], [3, 4]]).cumsum(1)
        Array([[1, 3],
               [3, 7]], dtype=int64)
    """
    a, axis = _flat_axis(a, axis)
    return into(_s.cumulative_sum(a, axis=axis, dtype=dtype), out)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: DTypeLike = None, out: Array | None = None) -> Array:
    """Running products along axis (of the flattened array when axis is None), as np.cumprod.

    Examples:
        >>> pm.cumprod(pm.asarray([1, 2, 3, 4]))
        Array([ 1,  2,  6, 24], dtype=int64)
    """
    a, axis = _flat_axis(a, axis)
    return into(_s.cumulative_prod(a, axis=axis, dtype=dtype), out)


_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, order):
    if kind not in _KINDS:
        raise ValueError("sort kind must be one of %s, not %r" % (", ".join(map(repr, _KINDS[1:])), kind))
    if order is not None:
        raise ValueError("order= sorts structured arrays by field; pymetal arrays have no fields")


def sort(a: ArrayLike, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
         descending: bool = False, stable: bool | None = True) -> Array:
    """A sorted copy along axis (flattened when axis is None); NaNs last; complex numbers by real
    part, then imaginary part, as NumPy's.

    NumPy's signature with the Array API's keywords: every kind sorts stably.

    Examples:
        >>> pm.sort(pm.asarray([[3, 1], [0, 2]]), None)
        Array([0, 1, 2, 3], dtype=int64)
        >>> pm.sort(pm.asarray([3, 1, 2]), kind="stable", descending=True)
        Array([3, 2, 1], dtype=int64)
    """
    _check_kind(kind, order)
    a, axis = _flat_axis(a, axis)
    if _dt.kind(a._dtype) == "c":
        return take_along_axis(a, _complex_argsort(a, axis, descending), axis=axis)
    return _s.sort(a, axis=axis, descending=descending)


def _complex_argsort(a, axis, descending=False):
    """NumPy's order of complex numbers, by real part then imaginary part (NaNs last): two stable
    sorts, of the imaginary parts and then of the real parts in that order."""
    by_imag = _s.argsort(_ew.unary("imag", a), axis=axis, descending=descending)
    real = take_along_axis(_ew.unary("real", a), by_imag, axis=axis)
    return take_along_axis(by_imag, _s.argsort(real, axis=axis, descending=descending), axis=axis)


def argsort(a: ArrayLike, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
            descending: bool = False, stable: bool | None = True) -> Array:
    """Indices that sort a along axis (flattened when axis is None), stable, int64.

    Examples:
        >>> pm.asarray([30, 10, 20]).argsort()
        Array([1, 2, 0], dtype=int64)
    """
    _check_kind(kind, order)
    a, axis = _flat_axis(a, axis)
    if _dt.kind(a._dtype) == "c":
        return _complex_argsort(a, axis, descending)
    return _s.argsort(a, axis=axis, descending=descending)


def sort_inplace(self: Array, axis: int = -1, kind: str | None = None, order: Any = None, *,
                 stable: bool | None = None) -> None:
    """Sorts the array in place along axis, as ndarray.sort (returns None).

    Examples:
        >>> x = pm.asarray([3, 1, 2])
        >>> x.sort()
        >>> x
        Array([1, 2, 3], dtype=int64)
    """
    _check_kind(kind, order)
    check_writeable(self)
    _ew.copy_into(sort(self, axis=axis), self)


def partition(a: ArrayLike, kth: Any, axis: int | None = -1, kind: str = "introselect", order: Any = None) -> Array:
    """A copy partitioned around the kth element(s) along axis: here fully sorted (a sort
    is a valid partition; the order within each side is unspecified by NumPy).

    Examples:
        >>> pm.partition(pm.asarray([3, 4, 2, 1]), 2)
        Array([1, 2, 3, 4], dtype=int64)
    """
    return sort(_check_kth(a, kth, axis), axis, order=order)


def argpartition(a: ArrayLike, kth: Any, axis: int | None = -1, kind: str = "introselect",
                 order: Any = None) -> Array:
    """Indices that partition a around the kth element(s): here the indices that sort it
    (a valid partition), int64.

    Examples:
        >>> pm.argpartition(pm.asarray([3, 4, 2, 1]), 1)
        Array([3, 2, 0, 1], dtype=int64)
    """
    return argsort(_check_kth(a, kth, axis), axis, order=order)


def _check_kth(a, kth, axis):
    import numpy as np
    a = _ew.as_array(a)
    n = a._size if axis is None else a._shape[axis] if a.ndim else 0
    k = np.asarray(kth)
    if k.dtype.kind not in "iu":
        raise TypeError("kth must be an int or a sequence of ints, not %r" % (kth,))
    if k.size and (k.min() < -n or k.max() >= n):
        raise ValueError("kth %r out of bounds for an axis of %d elements" % (kth, n))
    return a
