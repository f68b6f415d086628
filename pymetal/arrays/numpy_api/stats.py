"""NumPy's statistics and data functions on pymetal arrays (issue 23): unique with
counts, bincount, histogram, digitize, percentile / quantile / median, the nan-
functions, average, cov, corrcoef, lexsort.

All compose pymetal's kernels (sorts, scans, gathers, reductions, matmul): no
loop over elements on the host. float64 is not a device type: where NumPy
returns float64 (percentile, median and mean of integers, histogram edges,
cov), these return float32.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from .. import reduce as _r
from .. import sorting as _s
from ... import dtypes as _dt
from ..array import Array
from ..construct import _new
from ..layout import normalize_axis
from .reduce import _bin, _flat_axis, _float, _with_dtype, into, _correction, cumsum, cumprod
from ..namespace_extras import _unique
from .bin_estimators import bin_count
from ..indexing import take, take_along_axis
from ..creation import linspace
from ..linear_algebra import matmul

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..._typing import ArrayLike, DTypeLike

_A = _ew.as_array


# ---- unique, counts, histograms -------------------------------------------------------------

def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:
    """The sorted distinct values of the flattened array, as np.unique, with the first
    indices, inverse indices (in ar's shape) and counts when asked for (a tuple then).
    With axis: the distinct sub-arrays along it (rows for axis=0), in lexicographic order
    (sub-arrays holding NaNs are each distinct, as NumPy's).

    NaNs count as one value (equal_nan=True, NumPy's default; the Array API's
    unique_values keeps each NaN). One sort kernel, scans and compactions.

    Examples:
        >>> pm.unique(pm.asarray([3, 1, 3, 2]))
        Array([1, 2, 3], dtype=int64)
        >>> values, counts = pm.unique(pm.asarray([5, 5, 7]), return_counts=True)
        >>> counts
        Array([2, 1], dtype=int64)
    """
    x = _A(ar)
    if axis is not None:
        axis = normalize_axis(axis, x.ndim)
    if axis is not None and x.ndim != 1:  # along the one axis of a 1-D array: the values, as NumPy's
        r = _unique_axis(x, axis)
        out = [v for v, want in zip(r[1:], (return_index, return_inverse, return_counts)) if want]
        return (r[0], *out) if out else r[0]
    values, index, inverse, counts = _unique(x)
    if equal_nan and _dt.kind(x._dtype) == "f" and values._size:
        # the sort puts NaNs last, one run each: keep the first, which has the smallest index
        nans = int(_r.sum(_ew.unary("isnan", values)))
        if nans > 1:
            m = values._size - nans + 1
            values, index = values[:m], index[:m]
            inverse = _ew.clip(inverse, None, m - 1)
            counts = _m.concat([counts[:m - 1], _ew.fill(_new((1,), _dt.int64, x._buf.device), nans)])
    extra = [r for r, want in ((index, return_index), (inverse, return_inverse), (counts, return_counts)) if want]
    return (values, *extra) if extra else values


def _unique_axis(x, axis):
    """(distinct sub-arrays along axis in lexicographic order, first indices, inverse, counts):
    the sub-arrays as rows, sorted by a lexsort over their columns (stable, so the first of each
    run of equal rows is its first occurrence), with a new run wherever a row differs from the
    one before."""
    moved = _m.moveaxis(x, axis, 0)
    n = moved._shape[0]
    k = int(np.prod(moved._shape[1:], dtype=np.int64))
    rows = _m.reshape(moved, (n, k))
    if k and n:  # the last key sorts first: column 0 is the primary key
        order = lexsort([rows[:, j] for j in range(k - 1, -1, -1)])
    else:  # no rows, or rows with no elements (all equal)
        order = _A(np.arange(n, dtype=np.int64))
    srt = take(rows, order, axis=0)
    differs = _r.any(_bin("not_equal", srt[1:], srt[:-1]), axis=1) if k else _A(np.zeros(builtins.max(n - 1, 0), bool))
    starts_mask = _m.concat([_A(np.ones(builtins.min(n, 1), bool)), differs])
    starts = _s.nonzero(starts_mask)[0]
    values = take(moved, take(order, starts), axis=0)
    index = take(order, starts)
    group = _bin("subtract", cumsum(starts_mask.astype(_dt.int64)), 1)
    inverse = _new((n,), _dt.int64, x._buf.device)
    if n:
        inverse[order] = group
    counts = _ew.astype(_m.concat([starts[1:], _A(np.asarray([n], np.int64))]) - starts, _dt.int64) if n else starts
    return _m.moveaxis(values, 0, axis), index, inverse, counts


def _nonneg_ints(x, name):
    x = _A(x)
    if x.ndim != 1 or _dt.kind(x._dtype) not in "biu":
        raise ValueError("%s: needs a 1-D array of non-negative integers, got %s of shape %r"
                         % (name, x._dtype, x._shape))
    if x._size and _dt.kind(x._dtype) == "i" and int(_r.min(x)) < 0:
        raise ValueError("%s: the input must not contain negative values" % name)
    return x


def segment_sums(keys, values):
    """(distinct keys, sums of the rows of `values` per key), for 1-D integer keys and values of
    shape (len(keys), ...) in their accumulation type. The keys are sorted; each sorted row then
    adds the row d before it when that row has the same key, for d = 1, 2, 4, ... (a segmented
    scan in log2(n) passes of elementwise kernels): the sum of each run is at its end, summed
    as a tree (float error about log2(run length) roundings, not the running total's)."""
    m = keys._size
    order = _s.argsort(keys)
    k = take(keys, order)
    v = take(values, order, axis=0)
    d = 1
    while d < m:
        same = _bin("equal", k[d:], k[:-d]).reshape((m - d,) + (1,) * (v.ndim - 1))
        v = _m.concat([v[:d], _bin("add", v[d:], _ew.where(same, v[:-d], 0))], axis=0)
        d *= 2
    ends = _s.nonzero(_m.concat([_bin("not_equal", k[1:], k[:-1]), _A(np.ones(1, bool))]))[0]
    return take(k, ends), take(v, ends, axis=0)


def _segment_sums(keys, weights, n, keep=None):
    """out[k] = sum of weights (None: count each key once) where keys == k and keep, for k < n.
    Counts and float32 sums run Shaders/histogram.metal (one read of the keys); other weight
    types, and more bins than private histograms allow, sort the keys (segment_sums)."""
    from ..kernels import histogram as _hist
    acc = _dt.int64 if weights is None or _dt.kind(weights._dtype) in "biu" else _float(weights)._dtype
    if keys._size and _hist.fits(n) and acc in (_dt.int64, _dt.float32):
        if keep is not None:
            keys = _ew.where(keep, keys, -1)  # skipped by the kernels
        keys = _ew.ascontiguous(keys) if keys._dtype == _dt.int64 else _ew.astype(keys, _dt.int64)
        if weights is None:
            return _hist.counts(keys, n)
        if acc == _dt.float32:
            return _hist.sums(keys, _ew.ascontiguous(weights) if weights._dtype == acc else _ew.astype(weights, acc), n)
    out = _ew.fill(_new((n,), acc, keys._buf.device), 0)
    if keys._size:
        if weights is None:
            weights = _ew.fill(_new(keys._shape, acc, keys._buf.device), 1)
        if keep is not None:
            keys, weights = _ew.where(keep, keys, 0), _ew.where(keep, weights, 0)
        where, sums = segment_sums(keys, weights if weights._dtype == acc else _ew.astype(weights, acc))
        out[where] = sums
    return out


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0) -> Array:
    """Occurrences of each value 0..max(x) in a 1-D array of non-negative ints (int64), or the
    sums of `weights` per value (float32: NumPy's float64). A sort and a segmented sum.

    Examples:
        >>> pm.bincount(pm.asarray([0, 1, 1, 3]))
        Array([1, 2, 0, 1], dtype=int64)
        >>> pm.bincount(pm.asarray([0, 1, 1]), weights=pm.asarray([0.5, 1.0, 2.0]))
        Array([0.5, 3. ], dtype=float32)
    """
    x = _nonneg_ints(x, "bincount")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("bincount: minlength must be non-negative")
    n = builtins.max(int(_r.max(x)) + 1 if x._size else 0, minlength)
    x = x if x._dtype == _dt.int64 else _ew.astype(x, _dt.int64)  # (bool keys would index as a mask)
    if weights is None or x._size == 0:  # NumPy's: int64 counts for empty input, with weights too
        w = None
    else:
        w = _A(weights)
        if w._shape != x._shape:
            raise ValueError("bincount: weights must have x's shape %r, not %r" % (x._shape, w._shape))
        w = _float(w) if _dt.kind(w._dtype) != "c" else w
    return _segment_sums(x, w, n)


def histogram(a: ArrayLike, bins: Any = 10, range: tuple[float, float] | None = None, density: bool | None = None,
              weights: ArrayLike | None = None) -> tuple[Array, Array]:
    """(counts, bin edges) of the flattened a: `bins` equal bins over range (default: min to
    max), the given edges, or an estimator's number of bins (bins="auto", "fd", "sturges", ...,
    as NumPy's); the last bin includes its right edge. Edges are float32 (NumPy's
    float64); counts int64 (float32 with weights or density).

    Examples:
        >>> counts, edges = pm.histogram(pm.asarray([1, 2, 2, 3, 4]), bins=3)
        >>> counts
        Array([1, 2, 2], dtype=int64)
        >>> edges
        Array([1., 2., 3., 4.], dtype=float32)
    """
    if isinstance(bins, str):  # an estimator's name ("auto", "fd", ...): NumPy's number of equal bins
        bins = bin_count(_m.ravel(_A(a)), bins, range, weights)
    x = _float(_m.ravel(_A(a)))
    if isinstance(bins, (int, np.integer)):
        nb = operator.index(bins)
        if nb < 1:
            raise ValueError("histogram: bins must be a positive integer, not %d" % nb)
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x._size:
            lo, hi = float(_r.min(x)), float(_r.max(x))
        else:
            lo, hi = 0.0, 1.0
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError("histogram: the range [%r, %r] is not finite" % (lo, hi))
        if lo > hi:
            raise ValueError("histogram: max must be larger than min in range")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, nb + 1)
    else:
        given = _A(bins)
        edges = _float(given)
        if edges.ndim != 1 or edges._size < 2:
            raise ValueError("histogram: bins must be an int or a 1-D array of at least 2 edges")
        if bool(_r.any(_bin("less", edges[1:], edges[:-1]))):
            raise ValueError("histogram: bins must increase monotonically")
        nb = edges._size - 1
    keep = _bin("logical_and", _bin("greater_equal", x, edges[0]), _bin("less_equal", x, edges[nb]))
    if isinstance(bins, (int, np.integer)) and nb <= _ARITHMETIC_BINS:
        idx = _equal_bin_index(x, edges, lo, hi, nb, keep)
    else:
        idx = _bin("subtract", _s.searchsorted(edges, x, side="right"), 1)
        idx = _ew.clip(idx, 0, nb - 1)  # x == the last edge: the last bin
    w = None if weights is None else _float(_m.ravel(_A(weights)))
    if w is not None and w._size != x._size:
        raise ValueError("histogram: weights must have a's shape (%d elements, not %d)" % (x._size, w._size))
    counts = _segment_sums(idx, w, nb, keep)
    if density:
        widths = _bin("subtract", edges[1:], edges[:-1])
        counts = _bin("divide", _bin("divide", _ew.astype(counts, _dt.float32), widths),
                      _ew.astype(_r.sum(counts), _dt.float32))
    if not isinstance(bins, (int, np.integer)) and _dt.kind(given._dtype) in "iu":
        edges = given  # integer edges are returned as given, as NumPy's
    return counts, edges


_ARITHMETIC_BINS = 1 << 16  # an estimate in float32 is then within one bin of the right one


def _equal_bin_index(x, edges, lo, hi, nb, keep):
    """searchsorted(edges, x, "right") - 1 for nb equal bins, as NumPy's histogram finds it: the
    estimate (x - lo) * nb / (hi - lo), then one step down or up where rounding put it across an
    edge (so the edges decide, exactly as a search would). A few elementwise passes and two
    gathers from the edges instead of a binary search per element."""
    f = _ew.where(keep, _bin("multiply", _bin("subtract", x, lo), nb / (hi - lo)), 0.0)  # (NaN: 0)
    idx = _ew.clip(_ew.astype(f, _dt.int64), 0, nb - 1)  # x == the last edge: the last bin
    idx = _bin("subtract", idx, _ew.astype(_bin("less", x, take(edges, idx)), _dt.int64))
    up = _bin("logical_and", _bin("greater_equal", x, take(edges, _bin("add", idx, 1))), _bin("less", idx, nb - 1))
    return _bin("add", idx, _ew.astype(up, _dt.int64))


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Array:
    """Index of the bin each x falls in (bins increasing or decreasing), int64.

    Examples:
        >>> pm.digitize(pm.asarray([0.5, 1.0, 2.5]), pm.asarray([1.0, 2.0, 3.0]))
        Array([0, 1, 2], dtype=int64)
    """
    b = _A(bins)
    if b.ndim != 1:
        raise ValueError("digitize: bins must be 1-D")
    side = "left" if right else "right"
    if b._size > 1 and bool(_r.any(_bin("less", b[1:], b[:-1]))):
        if bool(_r.any(_bin("greater", b[1:], b[:-1]))):
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
        # decreasing: the bins above x (right=True: at or above), counted in the increasing reversal
        rev = _ew.ascontiguous(_m.flip(b))
        return _bin("subtract", b._size, _s.searchsorted(rev, x, side="left" if right else "right"))
    return _s.searchsorted(b, x, side=side)


# ---- quantiles -------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
            "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
            "normal_unbiased")


# Hyndman & Fan's continuous methods: (alpha, beta) of the virtual index n q + alpha + q (1 - alpha - beta) - 1
_HF = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
       "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8)}


def _hyndman_fan(method, n, qh, last):
    """The (fractional) order-statistic position of each q for NumPy's methods past the first five:
    n q plus an offset of q's (computed on the host, in float64), clamped to [0, n - 1] as NumPy's;
    inverted_cdf and closest_observation pick a whole position (NumPy's rounding rules)."""
    if method in _HF:
        alpha, beta = _HF[method]
        off = alpha + qh * (1 - alpha - beta) - 1
    else:
        off = np.full(qh.shape, -1.5 if method == "closest_observation" else -1.0)
    pos = _bin("add", _bin("multiply", n, _A(qh.astype(np.float32))), _A(off.astype(np.float32)))
    if method in ("inverted_cdf", "closest_observation"):
        prev = _ew.unary("floor", pos)
        keep = _bin("equal", pos, prev)  # a whole index: that one, else the next
        if method == "closest_observation":  # (ties to the even 1-based order statistic)
            keep = _bin("logical_and", keep, _bin("equal", _bin("remainder", prev, 2.0), 1.0))
        pos = _ew.where(keep, prev, _bin("add", prev, 1.0))
    return _bin("minimum", _bin("maximum", pos, 0.0), _bin("maximum", last, 0.0))


def _quantile(a, q, axis, method, keepdims, skip_nan, name):
    """Quantiles q (in [0, 1]) along axis: a sort kernel, then for each row the two
    neighbouring order statistics gathered and interpolated (skip_nan: among the row's
    non-NaN values, which the sort puts first)."""
    if method not in _METHODS:
        raise ValueError("%s: method must be one of %s, not %r" % (name, ", ".join(_METHODS), method))
    x = _A(a)
    # an element: NumPy keeps the input's dtype
    discrete = method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
    if not discrete or _dt.kind(x._dtype) == "b":
        x = _float(x)
    qh = np.asarray(q.numpy() if isinstance(q, Array) else q, dtype=np.float64)
    if qh.size and (np.isnan(qh).any() or qh.min() < 0 or qh.max() > 1):
        raise ValueError("%s: quantiles must be in the range [0, %s]" % (name, "100" if "percentile" in name else "1"))
    x, ax = _flat_axis(x, axis) if axis is None else (x, axis)
    axes = (normalize_axis(int(ax), x.ndim),) if isinstance(ax, (int, np.integer)) else tuple(normalize_axis(i, x.ndim) for i in ax)
    kept = [i for i in range(x.ndim) if i not in axes]
    xs = _ew.ascontiguous(x.permute_dims(kept + list(axes)))
    n = int(np.prod([x._shape[i] for i in axes], dtype=np.int64))
    rows = xs.reshape(tuple(x._shape[i] for i in kept) + (n,))  # an empty axis gives NaN, as NumPy's
    s = _s.sort(rows, axis=-1) if rows._size else rows
    isnan = _ew.unary("isnan", rows)  # (all false for integers)
    if skip_nan:
        count = _r.sum(_ew.unary("logical_not", isnan), axis=-1, keepdims=True, dtype=_dt.int64)
    else:
        count = _ew.fill(_new(rows._shape[:-1] + (1,), _dt.int64, rows._buf.device), n)
    last = _ew.astype(_bin("subtract", count, 1), _dt.float32)
    qd = _A(qh.reshape(-1).astype(np.float32))
    if method in _METHODS[:5]:
        pos = _bin("multiply", last, qd)  # (..., len(q))
    else:
        pos = _hyndman_fan(method, _ew.astype(count, _dt.float32), qh.reshape(-1), last)
    lo = _ew.unary("floor", pos)
    if method == "lower":
        pos = lo
    elif method == "higher":
        pos = _ew.unary("ceil", pos)
    elif method == "nearest":
        pos = _ew.unary("round", pos)  # half to even, as NumPy's
    elif method == "midpoint":
        pos = _ew.where(_bin("equal", pos, lo), lo, _bin("add", lo, 0.5))
    lo = _ew.unary("floor", pos)
    t = _bin("subtract", pos, lo)
    if method == "averaged_inverted_cdf":  # NumPy's gamma: the mean of the two at a whole index, else the upper
        t = _ew.where(_bin("equal", t, 0.0), 0.5, 1.0)
        t = _ew.where(_bin("equal", pos, 0.0), 0.0, t)  # (an index below the first: the first value)
    top = _ew.clip(_bin("subtract", count, 1), 0, None)
    ilo = _ew.clip(_ew.astype(lo, _dt.int64), 0, builtins.max(n - 1, 0))
    ihi = _bin("minimum", _bin("add", ilo, 1), top)
    if s._size and discrete:
        r = take_along_axis(s, ilo, axis=-1)
    elif s._size:
        vlo, vhi = take_along_axis(s, ilo, axis=-1), take_along_axis(s, ihi, axis=-1)
        # NumPy's lerp: exact at both ends
        r = _ew.where(_bin("greater_equal", t, 0.5), _bin("subtract", vhi, _bin("multiply", _bin("subtract", vhi, vlo),
                      _bin("subtract", 1.0, t))), _bin("add", vlo, _bin("multiply", _bin("subtract", vhi, vlo), t)))
        r = _ew.where(_bin("equal", t, 0.0), vlo, r)
    else:
        r = _ew.fill(_new(pos._shape, x._dtype, x._buf.device), float("nan") if _dt.kind(x._dtype) in "fc" else 0)
    if _dt.kind(x._dtype) in "fc":
        nan_row = _r.any(isnan, axis=-1, keepdims=True) if not skip_nan else _bin("equal", count, 0)
        r = _ew.where(nan_row, float("nan"), r)
    if r._dtype != x._dtype:
        r = _ew.astype(r, x._dtype)
    # NumPy's layout: q's dimensions first, then the kept (or size-1) dimensions
    if keepdims:
        full = tuple(1 if i in axes else x._shape[i] for i in range(x.ndim)) if axis is not None else (1,) * _A(a).ndim
        r = _m.moveaxis(r, -1, 0).reshape(qh.shape + full)
    else:
        r = _m.moveaxis(r, -1, 0).reshape(qh.shape + tuple(x._shape[i] for i in kept))
    return r


def quantile(a: ArrayLike, q: Any, axis: Any = None, out: Array | None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: str | None = None) -> Array:
    """q-th quantiles (q in [0, 1]) along axis; NumPy's 13 methods (linear, lower, higher,
    nearest, midpoint, inverted_cdf, hazen, weibull, median_unbiased, ...).

    float32 (NumPy's float64); a NaN in a row gives NaN. One sort kernel and gathers.

    Examples:
        >>> pm.quantile(pm.asarray([1.0, 2.0, 3.0, 4.0]), 0.5)
        Array(2.5, dtype=float32)
        >>> pm.quantile(pm.asarray([[1, 2], [3, 5]]), [0.0, 1.0], axis=1)
        Array([[1., 3.],
               [2., 5.]], dtype=float32)
    """
    if weights is not None:
        raise NotImplementedError("quantile(weights=) is not supported")
    return into(_quantile(a, q, axis, interpolation or method, keepdims, False, "quantile"), out)


def percentile(a: ArrayLike, q: Any, axis: Any = None, out: Array | None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None,
               interpolation: str | None = None) -> Array:
    """q-th percentiles (q in [0, 100]) along axis (see quantile).

    Examples:
        >>> pm.percentile(pm.asarray([1, 2, 3, 4, 5]), [25, 50])
        Array([2., 3.], dtype=float32)
    """
    return quantile(a, np.asarray(q.numpy() if isinstance(q, Array) else q, np.float64) / 100, axis, out,
                    overwrite_input, method, keepdims, weights=weights, interpolation=interpolation)


def median(a: ArrayLike, axis: Any = None, out: Array | None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """Median along axis (float32; NaN where a row has a NaN).

    Examples:
        >>> pm.median(pm.asarray([[1, 3, 2], [4, 6, 5]]), 1)
        Array([2., 5.], dtype=float32)
    """
    return quantile(a, 0.5, axis, out, keepdims=keepdims)


def nanquantile(a: ArrayLike, q: Any, axis: Any = None, out: Array | None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False) -> Array:
    """quantile ignoring NaNs (NaN for an all-NaN row).

    Examples:
        >>> pm.nanquantile(pm.asarray([1.0, float("nan"), 3.0]), 0.5)
        Array(2., dtype=float32)
    """
    return into(_quantile(a, q, axis, method, keepdims, True, "nanquantile"), out)


def nanpercentile(a: ArrayLike, q: Any, axis: Any = None, out: Array | None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False) -> Array:
    """percentile ignoring NaNs.

    Examples:
        >>> pm.nanpercentile(pm.asarray([1.0, float("nan"), 3.0]), 100)
        Array(3., dtype=float32)
    """
    qq = np.asarray(q.numpy() if isinstance(q, Array) else q, np.float64) / 100
    return into(_quantile(a, qq, axis, method, keepdims, True, "nanpercentile"), out)


def nanmedian(a: ArrayLike, axis: Any = None, out: Array | None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """median ignoring NaNs.

    Examples:
        >>> pm.nanmedian(pm.asarray([1.0, float("nan"), 3.0, 4.0]))
        Array(3., dtype=float32)
    """
    return into(_quantile(a, 0.5, axis, "linear", keepdims, True, "nanmedian"), out)


# ---- the nan-functions -----------------------------------------------------------------------

def _nan_fill(a, value):
    """(a with NaNs replaced by value, mask of non-NaN elements or None for non-float a)."""
    a = _A(a)
    if _dt.kind(a._dtype) not in "fc":
        return a, None
    nan = _ew.unary("isnan", a)
    return _ew.where(nan, value, a), _ew.unary("logical_not", nan)


def nansum(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None,
           keepdims: bool = False) -> Array:
    """Sum treating NaNs as zero.

    Examples:
        >>> pm.nansum(pm.asarray([1.0, float("nan"), 2.0]))
        Array(3., dtype=float32)
    """
    x, _ = _nan_fill(a, 0)
    return into(_r.sum(x, axis=axis, dtype=dtype, keepdims=keepdims), out)


def nanprod(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None,
            keepdims: bool = False) -> Array:
    """Product treating NaNs as one.

    Examples:
        >>> pm.nanprod(pm.asarray([2.0, float("nan"), 3.0]))
        Array(6., dtype=float32)
    """
    x, _ = _nan_fill(a, 1)
    return into(_r.prod(x, axis=axis, dtype=dtype, keepdims=keepdims), out)


def _nan_extreme(a, axis, keepdims, name):
    a = _A(a)
    if _dt.kind(a._dtype) != "f":
        return getattr(_r, name)(a, axis=axis, keepdims=keepdims)
    x, ok = _nan_fill(a, float("-inf") if name == "max" else float("inf"))
    r = getattr(_r, name)(x, axis=axis, keepdims=keepdims)
    return _ew.where(_r.any(ok, axis=axis, keepdims=keepdims), r, float("nan"))  # all-NaN: NaN, as NumPy's


def nanmax(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False) -> Array:
    """Largest element ignoring NaNs (NaN where all are NaN).

    Examples:
        >>> pm.nanmax(pm.asarray([1.0, float("nan"), 2.0]))
        Array(2., dtype=float32)
    """
    return into(_nan_extreme(a, axis, keepdims, "max"), out)


def nanmin(a: ArrayLike, axis: Any = None, out: Array | None = None, keepdims: bool = False) -> Array:
    """Smallest element ignoring NaNs (NaN where all are NaN).

    Examples:
        >>> pm.nanmin(pm.asarray([1.0, float("nan"), 2.0]))
        Array(1., dtype=float32)
    """
    return into(_nan_extreme(a, axis, keepdims, "min"), out)


def _nan_arg(a, axis, keepdims, name):
    a = _A(a)
    if _dt.kind(a._dtype) != "f":
        return getattr(_r, name)(a, axis=axis, keepdims=keepdims)
    x, ok = _nan_fill(a, float("-inf") if name == "argmax" else float("inf"))
    if a._size and not bool(_r.all(_r.any(ok, axis=axis))):
        raise ValueError("All-NaN slice encountered (nan%s)" % name)
    return getattr(_r, name)(x, axis=axis, keepdims=keepdims)


def nanargmax(a: ArrayLike, axis: int | None = None, out: Array | None = None, *, keepdims: bool = False) -> Array:
    """Index of the largest element ignoring NaNs (ValueError for an all-NaN slice).

    Examples:
        >>> pm.nanargmax(pm.asarray([1.0, float("nan"), 2.0]))
        Array(2, dtype=int64)
    """
    return into(_nan_arg(a, axis, keepdims, "argmax"), out)


def nanargmin(a: ArrayLike, axis: int | None = None, out: Array | None = None, *, keepdims: bool = False) -> Array:
    """Index of the smallest element ignoring NaNs (ValueError for an all-NaN slice).

    Examples:
        >>> pm.nanargmin(pm.asarray([float("nan"), 3.0, 2.0]))
        Array(2, dtype=int64)
    """
    return into(_nan_arg(a, axis, keepdims, "argmin"), out)


def nanmean(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None,
            keepdims: bool = False) -> Array:
    """Mean of the non-NaN elements (NaN where there are none).

    Examples:
        >>> pm.nanmean(pm.asarray([1.0, float("nan"), 3.0]))
        Array(2., dtype=float32)
    """
    a = _A(a)
    x, ok = _nan_fill(a, 0)
    if ok is None:
        return into(_r.mean(a, axis=axis, keepdims=keepdims), out)
    s = _r.sum(x, axis=axis, keepdims=keepdims, dtype=_dt.float32 if _dt.kind(a._dtype) == "f" else None)
    n = _r.sum(ok, axis=axis, keepdims=keepdims, dtype=_dt.float32)
    r = _bin("divide", s, n)
    return into(_with_dtype(r if r._dtype == a._dtype else _ew.astype(r, a._dtype), dtype), out)


def nanvar(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None, ddof: float = 0,
           keepdims: bool = False, *, correction: float | None = None) -> Array:
    """Variance of the non-NaN elements, ddof degrees of freedom removed.

    Examples:
        >>> pm.nanvar(pm.asarray([1.0, float("nan"), 3.0]))
        Array(1., dtype=float32)
    """
    a = _A(a)
    ddof = _correction(ddof, correction)
    x, ok = _nan_fill(a, 0)
    if ok is None:
        return into(_r.var(a, axis=axis, correction=ddof, keepdims=keepdims), out)
    xf = _float(x)
    n = _r.sum(ok, axis=axis, keepdims=True, dtype=_dt.float32)
    m = _bin("divide", _r.sum(xf, axis=axis, keepdims=True), n)
    d = _ew.where(ok, _bin("subtract", xf, m), 0.0)
    ss = _r.sum(_bin("multiply", d, d), axis=axis, keepdims=keepdims)
    nn = _bin("subtract", n if keepdims else _r.sum(ok, axis=axis, dtype=_dt.float32), float(ddof))
    r = _ew.where(_bin("greater", nn, 0), _bin("divide", ss, nn), float("nan"))
    return into(_with_dtype(r if r._dtype == a._dtype else _ew.astype(r, a._dtype), dtype), out)


def nanstd(a: ArrayLike, axis: Any = None, dtype: DTypeLike = None, out: Array | None = None, ddof: float = 0,
           keepdims: bool = False, *, correction: float | None = None) -> Array:
    """Standard deviation of the non-NaN elements.

    Examples:
        >>> pm.nanstd(pm.asarray([1.0, float("nan"), 3.0]))
        Array(1., dtype=float32)
    """
    return into(_ew.unary("sqrt", nanvar(a, axis, dtype, None, ddof, keepdims, correction=correction)), out)


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: DTypeLike = None, out: Array | None = None) -> Array:
    """Running sums treating NaNs as zero.

    Examples:
        >>> pm.nancumsum(pm.asarray([1.0, float("nan"), 2.0]))
        Array([1., 1., 3.], dtype=float32)
    """
    return cumsum(_nan_fill(a, 0)[0], axis, dtype, out)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: DTypeLike = None, out: Array | None = None) -> Array:
    """Running products treating NaNs as one.

    Examples:
        >>> pm.nancumprod(pm.asarray([2.0, float("nan"), 3.0]))
        Array([2., 2., 6.], dtype=float32)
    """
    return cumprod(_nan_fill(a, 1)[0], axis, dtype, out)


# ---- statistics ------------------------------------------------------------------------------

def average(a: ArrayLike, axis: Any = None, weights: ArrayLike | None = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted mean along axis (weights 1-D along one axis, or of a's shape); returned=True
    also gives the sum of the weights.

    Examples:
        >>> pm.average(pm.asarray([1.0, 2.0, 4.0]), weights=pm.asarray([1.0, 1.0, 2.0]))
        Array(2.75, dtype=float32)
    """
    a = _float(_A(a))
    if weights is None:
        r = _r.mean(a, axis=axis, keepdims=keepdims)
        n = a._size // builtins.max(r._size, 1) if a._size else 0
        scl = _ew.fill(_new(r._shape, r._dtype, a._buf.device), float(n))
    else:
        w = _float(_A(weights))
        if w._shape != a._shape:
            if axis is None or w.ndim != 1:
                raise ValueError("average: weights of shape %r differ from a's %r: give 1-D weights and an axis"
                                 % (w._shape, a._shape))
            ax = normalize_axis(axis, a.ndim)
            if w._size != a._shape[ax]:
                raise ValueError("average: weights of length %d for an axis of length %d" % (w._size, a._shape[ax]))
            w = w.reshape(tuple(-1 if i == ax else 1 for i in range(a.ndim)))
        scl = _r.sum(w.broadcast_to(a._shape), axis=axis, keepdims=keepdims)
        if bool(_r.any(_bin("equal", scl, 0))):
            raise ZeroDivisionError("average: weights sum to zero, can't be normalized")
        r = _bin("divide", _r.sum(_bin("multiply", a, w), axis=axis, keepdims=keepdims), scl)
    return (r, scl) if returned else r


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, *, dtype: DTypeLike = None) -> Array:
    """Covariance matrix of the variables in m's rows (columns when rowvar=False): the
    centred data times its transpose, one matmul kernel; fweights (repeat counts) and aweights
    (observation weights) as NumPy's. float32 (NumPy's float64).

    Examples:
        >>> pm.cov(pm.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        Array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
    """
    x = _float(_A(m))
    if x.ndim > 2:
        raise ValueError("cov: m has more than 2 dimensions")
    x = x.reshape(1, -1) if x.ndim < 2 else x
    if not rowvar and x._shape[0] != 1:
        x = x.T
    if y is not None:
        yy = _float(_A(y))
        yy = yy.reshape(1, -1) if yy.ndim < 2 else yy
        if not rowvar and yy._shape[0] != 1:
            yy = yy.T
        x = _m.concat([x, yy], axis=0)
    n = x._shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    w, fact = _cov_weights(fweights, aweights, n, ddof)
    if w is None:
        xc = _bin("subtract", x, _r.mean(x, axis=1, keepdims=True))
        xw = xc
    else:  # NumPy's weighted form: the weighted mean, and (x - mean) w (x - mean)^T / fact
        wd = _A(w.astype(np.float32))
        xc = _bin("subtract", x, _bin("divide", _r.sum(_bin("multiply", x, wd), axis=1, keepdims=True), float(w.sum())))
        xw = _bin("multiply", xc, wd)
    xt = xc.T if _dt.kind(xc._dtype) != "c" else _ew.unary("conj", xc).T
    c = _bin("divide", matmul(xw, _ew.ascontiguous(xt)), fact if fact > 0 else 0.0)
    c = _with_dtype(c, dtype)
    return c.reshape(()) if c._shape == (1, 1) else c


def _cov_weights(fweights, aweights, n, ddof):
    """cov's observation weights (NumPy's checks, on the host: they are one per observation) and
    the divisor: (None, n - ddof) without weights."""
    w = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        v = np.asarray(v.numpy() if isinstance(v, Array) else v, dtype=np.float64)
        if v.ndim > 1:
            raise RuntimeError("cov: cannot handle multidimensional %s" % name)
        if v.shape[0] != n:
            raise RuntimeError("cov: incompatible numbers of samples (%d) and %s (%d)" % (n, name, v.shape[0]))
        if np.any(v < 0):
            raise ValueError("cov: %s cannot be negative" % name)
        if name == "fweights" and not np.all(v == np.around(v)):
            raise TypeError("cov: fweights must be integer (repeat counts); use aweights for real weights")
        w = v if w is None else w * v
    if w is None:
        return None, float(n - ddof)
    w_sum = float(w.sum())
    if ddof == 0:
        return w, w_sum
    if aweights is None:
        return w, w_sum - ddof
    a = np.asarray(aweights.numpy() if isinstance(aweights, Array) else aweights, dtype=np.float64)
    return w, w_sum - ddof * float((w * a).sum()) / w_sum


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, *, dtype: DTypeLike = None) -> Array:
    """Pearson correlation coefficients of the variables in x's rows, clipped to [-1, 1].

    Examples:
        >>> pm.corrcoef(pm.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        Array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
    """
    from ...linalg import diagonal  # at call time: pm.linalg: an extension over arrays/, loaded with the namespace
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return _bin("divide", c, c)
    d = _ew.unary("sqrt", diagonal(c))
    r = _bin("divide", _bin("divide", c, d.reshape(-1, 1)), d.reshape(1, -1))
    r = _ew.clip(r, -1.0, 1.0) if _dt.kind(r._dtype) == "f" else r
    return _with_dtype(r, dtype)


def lexsort(keys: Any, axis: int = -1) -> Array:
    """Indices that sort by the last key, then the one before, ...: a stable sort per key.

    Examples:
        >>> pm.lexsort([pm.asarray([1, 2, 1]), pm.asarray([0, 0, -1])])
        Array([2, 0, 1], dtype=int64)
    """
    ks = [_A(k) for k in (keys if not isinstance(keys, Array) else [keys[i] for i in range(keys._shape[0])])]
    if not ks:
        raise TypeError("lexsort: need at least one key")
    order = _s.argsort(ks[0], axis=axis)
    for k in ks[1:]:
        order = take_along_axis(order, _s.argsort(take_along_axis(k, order, axis=axis), axis=axis), axis=axis)
    return order
