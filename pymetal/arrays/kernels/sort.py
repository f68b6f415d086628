"""Stable sort / argsort along the last axis, and searchsorted, with
Shaders/sort.metal (a barrier-free merge sort: per-thread chunks, then merge
passes over device memory).

Order: NumPy's. Floats: -inf < ... < -0.0 == +0.0 < ... < inf < NaN; equal
elements (all NaNs are equal) keep their original order. descending=True sorts
by the reverse of that order and is stable too (equal elements keep their
original order, as the Array API asks), so NaNs come first, as in the Array API
helpers built on np.flip (numpy.array_api, array-api-strict) and torch.sort.
Indices are int64.
"""

import math

import numpy as np

from ..construct import empty
from . import Plan, dtype_name, kernel, plan, signature
from . import msd_sort as _msd
from . import radix_sort as _radix

__all__ = ["sort", "searchsorted"]

CHUNK = 32  # PM_SORT_CHUNK in Shaders/sort.metal
MAX_N = 1 << 30  # SortParams.n: merge positions are 32-bit
# Outputs per thread of a merge pass: long runs amortise the binary search on
# the CPU backend; a GPU wants many threads.
PER_THREAD = {"cpu": 1024, "metal": 64}

PARAMS = np.dtype([(f, "<u4") for f in ("n", "rows", "width", "per_thread", "descending", "flags")])

_KEY = {1: "uint32", 2: "uint32", 4: "uint32", 8: "uint64"}  # SortKey<T> by item size
_BITS = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def _params(**fields):
    p = np.zeros((), PARAMS)
    for k, v in fields.items():
        p[k] = v
    return p.tobytes()


def _check_contiguous(x, what):
    if not x._cc:
        raise ValueError("%s: %s must be C-contiguous" % (what, "the input" if what == "sort" else what))


_plans: dict = {}

# Which algorithm sorts: None picks by backend (the radix sort of
# Shaders/radix_sort.metal on the CPU backend for rows of RADIX_MIN elements or
# more, and Shaders/msd_sort.metal for a single row of MSD_MIN or more; the
# merge sort on a GPU); "merge" / "radix" / "msd" force one (tests run all;
# "msd" sorts a single row of any length, several rows as "radix").
ALGORITHM = None
RADIX_MIN = 1024  # shorter rows: 256-bucket histograms per row outweigh the work
# Shorter single rows keep the row LSD sort on one core, which measured faster
# (4-byte keys at 1M-4M: floats of [0, 1) crowd a few top digits, so the MSD
# sort's buckets overflow the cache and split again). 8-byte keys (int64 /
# uint64) switch at the same length: they took the MSD sort from 1M until the
# scatters prefetched their writes (Shaders/radix_sort.metal), after which the
# LSD sort measured faster at 1M / 2M / 4M int64 (one core: 9.1 / 17.5 / 36 ms
# against 11.4 / 21.6 / 42 ms; wall time, machine loaded: 29 / 55 / 112 ms
# against 36 / 67 / 129 ms). At 16M the MSD sort's two cores win in wall time.
MSD_MIN = 1 << 23
MSD_MIN_8 = MSD_MIN


def _use_radix(dev, n):
    if ALGORITHM is not None:
        return ALGORITHM in ("radix", "msd")
    return dev.backend == "cpu" and n >= RADIX_MIN


def _use_msd(n, rows, itemsize=4):
    """A single row sorts by Shaders/msd_sort.metal (both cores, passes in cache)."""
    if ALGORITHM is not None:
        return rows == 1 and ALGORITHM == "msd"
    return rows == 1 and n >= (MSD_MIN_8 if itemsize == 8 else MSD_MIN)


def sort(x, out_values=None, out_indices=None, *, descending=False):
    """Sorts each row (last axis) of the C-contiguous pymetal array x.

    Writes the sorted values to out_values (x's shape and dtype) and/or the
    int64 indices that sort x to out_indices (x's shape); with neither given,
    allocates out_values. Returns (out_values, out_indices). Asynchronous.
    """
    dev = x._buf.device
    if out_values is None and out_indices is None:
        if not x._shape:
            raise ValueError("sort: x must have at least one dimension")
        out_values = empty(x._shape, x._dtype, device=dev)
    outs = [o for o in (out_values, out_indices) if o is not None]
    radix = _use_radix(dev, x._shape[-1] if x._shape else 0)
    key = (signature(x, *outs), out_values is None, out_indices is None, bool(descending),
           PER_THREAD.get(dev.backend), radix, ALGORITHM, _radix.bits(x._dtype.itemsize), _msd.TOP_BITS, dev)
    plan(_plans, key, lambda: _plan(x, out_values, out_indices, bool(descending), dev, radix)).run(
        x=x, values=out_values, indices=out_indices)
    return out_values, out_indices


def _plan(x, out_values, out_indices, descending, dev, radix=False):
    shape = tuple(x._shape)
    if not shape:
        raise ValueError("sort: x must have at least one dimension")
    name = dtype_name(x._dtype, "sort")
    _check_contiguous(x, "sort")
    for out, dt, what in ((out_values, x._dtype, "out_values"), (out_indices, np.dtype(np.int64), "out_indices")):
        if out is None:
            continue
        if tuple(out._shape) != shape or out._dtype != dt:
            raise ValueError("sort: %s must have shape %r and dtype %s, not %r and %s"
                             % (what, shape, dt, tuple(out._shape), out._dtype))
        if not out._cc:
            raise ValueError("sort: %s must be C-contiguous" % what)
    n = shape[-1]
    rows = math.prod(shape[:-1])
    if n >= MAX_N:
        raise ValueError("sort: rows of %d elements are too long (at most %d)" % (n, MAX_N - 1))
    result = Plan(dev)
    if n == 0 or rows == 0:
        return result
    if rows >= 1 << 32:
        raise ValueError("sort: too many rows (%d)" % rows)

    size = x._dtype.itemsize
    if radix and _use_msd(n, rows, size):
        _msd.launches(result, name, size, n, descending, dev, out_values is not None, out_indices is not None)
        return result
    if radix:
        _radix.launches(result, name, size, n, rows, descending, dev, out_values is not None, out_indices is not None)
        return result
    key = _KEY[size]
    for i in (0, 1):  # (key, index) pairs, ping-ponged by the merge passes
        result.temp("sort_keys%d" % i, rows * n * (8 if key == "uint64" else 4))
        result.temp("sort_index%d" % i, rows * n * 4)
    cur = _merge_launches(result, name, key, n, rows, descending, dev)
    flags = (1 if out_values is not None else 0) | (2 if out_indices is not None else 0)
    unused = "sort_keys%d" % cur  # bound where an output is not wanted (never written)
    result.launch(kernel("sort", "finish", _BITS[size], dev),
                  ("x", "sort_index%d" % cur, "values" if out_values is not None else unused,
                   "indices" if out_indices is not None else unused),
                  _params(n=n, rows=rows, flags=flags), grid=(n, rows))
    return result


def _merge_launches(result, name, key, n, rows, descending, dev):
    """The merge sort's launches; returns which (key, index) buffer holds the result."""
    result.launch(kernel("sort", "init", name, dev), ("x", "sort_keys0", "sort_index0"),
                  _params(n=n, rows=rows, descending=descending), grid=(-(-n // CHUNK), rows))
    width, cur = CHUNK, 0
    per_thread_max = PER_THREAD.get(dev.backend, 64)
    merge = kernel("sort", "merge", key, dev)
    while width < n:
        per_thread = min(per_thread_max, 2 * width)
        result.launch(merge, ("sort_keys%d" % cur, "sort_index%d" % cur, "sort_keys%d" % (1 - cur),
                              "sort_index%d" % (1 - cur)),
                      _params(n=n, rows=rows, width=width, per_thread=per_thread), grid=(-(-n // per_thread), rows))
        cur, width = 1 - cur, 2 * width
    return cur


def searchsorted(sorted_1d, values, out=None, *, side="left"):
    """out[i] = the index where values[i] would be inserted into the ascending
    1-d pymetal array sorted_1d to keep it sorted (side "left": before equal
    elements, "right": after them), as int64, in the sort order above (NaN
    last). values: any C-contiguous shape, same dtype. Returns out."""
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', not %r" % (side,))
    if len(sorted_1d._shape) != 1:
        raise ValueError("searchsorted: the sorted array must be 1-d, has shape %r" % (tuple(sorted_1d._shape),))
    if values._dtype != sorted_1d._dtype:
        raise TypeError("searchsorted: values have dtype %s, the sorted array %s" % (values._dtype, sorted_1d._dtype))
    name = dtype_name(values._dtype, "searchsorted")
    _check_contiguous(sorted_1d, "searchsorted")
    _check_contiguous(values, "searchsorted")
    dev = values._buf.device
    if out is None:
        out = empty(values._shape, np.int64, device=dev)
    elif tuple(out._shape) != tuple(values._shape) or out._dtype != np.int64:
        raise ValueError("searchsorted: out must have shape %r and dtype int64" % (tuple(values._shape),))
    m = math.prod(values._shape)
    n = sorted_1d._shape[0]
    if n >= 1 << 32 or m >= 1 << 32:
        raise ValueError("searchsorted: arrays of 2**32 elements or more are not supported")
    if m:
        kernel("searchsorted", None, name, dev)(sorted_1d, values, out, _params(n=n, rows=m, flags=side == "right"), grid=m)
    return out
