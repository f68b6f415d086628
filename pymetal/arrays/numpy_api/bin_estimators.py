"""NumPy's automatic histogram bins (``bins="auto"``, "fd", "doane", "scott", "stone", "rice",
"sturges", "sqrt"): each estimator's bin width from a few reductions of the data (its range,
size, standard deviation, quartiles, skewness), then as many equal bins as cover the range,
as NumPy's _get_bin_edges. Used by pm.histogram and pm.histogram_bin_edges.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .. import elementwise as _ew
from .. import manipulation as _m
from .. import reduce as _r
from ... import dtypes as _dt
from ..array import Array

ESTIMATORS = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")


def _ptp(x: Array) -> float:
    return float(_r.max(x)) - float(_r.min(x))


def _sqrt(x: Array) -> float:
    return _ptp(x) / math.sqrt(x.size)


def _sturges(x: Array) -> float:
    return _ptp(x) / (math.log2(x.size) + 1.0)


def _rice(x: Array) -> float:
    return _ptp(x) / (2.0 * x.size ** (1.0 / 3))


def _scott(x: Array) -> float:
    return (24.0 * math.pi ** 0.5 / x.size) ** (1.0 / 3.0) * float(_r.std(x))


def _fd(x: Array) -> float:
    from .stats import percentile
    q = percentile(x, [75, 25])
    return 2.0 * (float(q[0]) - float(q[1])) * x.size ** (-1.0 / 3.0)


def _auto(x: Array) -> float:
    return min(max(_fd(x), _sqrt(x) / 2), _sturges(x))  # NumPy's: FD, at least half sqrt's, at most Sturges'


def _doane(x: Array) -> float:
    if x.size <= 2:
        return 0.0
    sg1 = math.sqrt(6.0 * (x.size - 2) / ((x.size + 1.0) * (x.size + 3)))
    sigma = float(_r.std(x))
    if sigma <= 0:
        return 0.0
    g1 = float(_r.mean(((x - _r.mean(x)) / sigma) ** 3))
    return _ptp(x) / (1.0 + math.log2(x.size) + math.log2(1.0 + abs(g1) / sg1))


def _stone(x: Array, lo: float, hi: float) -> float:
    """The width minimising Stone's cross-validated integrated squared error (one histogram per
    candidate number of bins, as NumPy's)."""
    from .stats import histogram
    n, ptp = x.size, _ptp(x)
    if n <= 1 or ptp == 0:
        return 0.0

    def jhat(nbins: int) -> float:
        p = histogram(x, bins=nbins, range=(lo, hi))[0].numpy() / n
        return (2 - (n + 1) * float(p.dot(p))) / (ptp / nbins)

    upper = max(100, int(math.sqrt(n)))
    nbins = min(range(1, upper + 1), key=jhat)
    if nbins == upper:
        warnings.warn("The number of bins estimated may be suboptimal.", RuntimeWarning, stacklevel=4)
    return ptp / nbins


_WIDTH = {"auto": _auto, "fd": _fd, "doane": _doane, "scott": _scott, "rice": _rice, "sturges": _sturges,
          "sqrt": _sqrt}


def outer_edges(x: Array, range_: Any) -> tuple[float, float]:
    """(first, last) edge: range, else the data's min and max (0, 1 when empty), widened by 0.5
    each way when equal."""
    if range_ is not None:
        lo, hi = float(range_[0]), float(range_[1])
        if lo > hi:
            raise ValueError("histogram: max must be larger than min in range")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("histogram: the range [%r, %r] is not finite" % (lo, hi))
    elif x.size:
        lo, hi = float(_r.min(x)), float(_r.max(x))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("histogram: the autodetected range [%r, %r] is not finite" % (lo, hi))
    else:
        lo, hi = 0.0, 1.0
    return (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)


def bin_count(x: Array, name: str, range_: Any, weights: Any) -> int:
    """The number of equal bins estimator `name` gives for the flattened data x (NumPy's rule)."""
    if name not in ESTIMATORS:
        raise ValueError("%r is not a valid estimator for `bins`; use one of %s" % (name, ", ".join(ESTIMATORS)))
    if weights is not None:
        raise TypeError("Automated estimation of the number of bins is not supported for weighted data")
    lo, hi = outer_edges(x, range_)
    if range_ is not None:
        keep = (x >= lo) & (x <= hi)
        if not bool(_r.all(keep)):
            x = x[keep]
    if x.size == 0:
        return 1
    xf = x if _dt.kind(x.dtype) in "fc" else _ew.astype(x, _dt.default_float)
    width = _stone(xf, lo, hi) if name == "stone" else _WIDTH[name](xf)
    if not width:  # zero for some estimators (FD when the quartiles are equal)
        return 1
    if _dt.kind(x.dtype) in "iub" and width < 1:
        width = 1
    return int(math.ceil((hi - lo) / width))


def histogram_bin_edges(a: Any, bins: Any = 10, range: tuple[float, float] | None = None,
                        weights: Any = None) -> Array:
    """The bin edges pm.histogram uses (bins: a count, edges, or an estimator name such as
    "auto"), as np.histogram_bin_edges (float32 edges: NumPy's float64).

    Examples:
        >>> pm.histogram_bin_edges(pm.asarray([0.0, 1.0, 2.0, 4.0]), bins=2)
        Array([0., 2., 4.], dtype=float32)
        >>> pm.histogram_bin_edges(pm.arange(100.0), bins="sturges").shape
        (9,)
    """
    from .stats import histogram
    x = _m.ravel(_ew.as_array(a))
    return histogram(x, bins=bins, range=range, weights=weights)[1]
