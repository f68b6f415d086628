"""np.pad's modes that fill from the array's values rather than index it: "maximum", "minimum",
"mean", "median" (a statistic of the first / last stat_length values along each axis), and
"linear_ramp" (from end_values to the edge value), "empty". As NumPy, axis by axis, each axis's
padding computed from the array padded so far; integer arrays get the statistic rounded (half
to even) and the ramps rounded down, as NumPy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from .. import reduce as _r
from ... import dtypes as _dt
from ..array import Array
from ..construct import _new

MODES = ("maximum", "minimum", "mean", "median", "linear_ramp", "empty")
_KEYWORDS = {"maximum": "stat_length", "minimum": "stat_length", "mean": "stat_length", "median": "stat_length",
             "linear_ramp": "end_values", "empty": None}


def keywords(mode: str) -> set[str]:
    k = _KEYWORDS[mode]
    return {k} if k else set()


def _along(a: Array, ax: int, start: int, stop: int) -> Array:
    return a[(slice(None),) * ax + (slice(start, stop),)]


def _to_dtype(v: Array, dt: Any, down: bool) -> Array:
    """v (float) as dt: integers rounded (half to even for statistics, down for ramps), as NumPy's."""
    if _dt.kind(dt) in "iu":
        v = _ew.unary("floor" if down else "round", v)
    return v if v._dtype == dt else _ew.astype(v, dt)


def _stat(mode: str, part: Array, ax: int) -> Array:
    if mode == "maximum":
        return _r.max(part, axis=ax, keepdims=True)
    if mode == "minimum":
        return _r.min(part, axis=ax, keepdims=True)
    f = part if _dt.kind(part._dtype) in "fc" else _ew.astype(part, _dt.float32)
    if mode == "mean":
        r = _r.mean(f, axis=ax, keepdims=True)
    else:
        from .stats import median
        r = median(f, axis=ax, keepdims=True)
    return _to_dtype(r, part._dtype, down=False)


def _repeat(v: Array, ax: int, count: int) -> Array:
    shape = list(v._shape)
    shape[ax] = count
    return _m.broadcast_to(v, tuple(shape))


def pad(a: Array, pw: np.ndarray, mode: str, kwargs: dict) -> Array:
    """a padded by pw ((ndim, 2) widths) in one of MODES."""
    if mode == "empty":
        shape = tuple(int(n + b + e) for n, (b, e) in zip(a._shape, pw))
        out = _ew.fill(_new(shape, a._dtype, a._buf.device), 0)  # NumPy leaves it undefined: zeros here
        out[tuple(slice(b, b + n) for n, (b, _) in zip(a._shape, pw))] = a
        return out
    if mode == "linear_ramp":
        ends = np.broadcast_to(np.asarray(kwargs.get("end_values", 0), np.float64), (a.ndim, 2))
    else:
        sl = kwargs.get("stat_length")
        lengths = None if sl is None else np.broadcast_to(np.asarray(sl, np.int64), (a.ndim, 2))
        if lengths is not None and (lengths < 0).any():
            raise ValueError("pad: stat_length must be >= 0, got %r" % (sl,))
    for ax in range(a.ndim):
        b, e = (int(v) for v in pw[ax])
        if not (b or e):
            continue
        n = a._shape[ax]
        if n == 0:
            raise ValueError("pad: can't extend an empty axis %d with mode %r" % (ax, mode))
        parts: list[Array | None] = []
        for side, width in ((0, b), (1, e)):
            if not width:
                parts.append(None)
                continue
            if mode == "linear_ramp":
                edge = _along(a, ax, 0, 1) if side == 0 else _along(a, ax, n - 1, n)
                end = float(ends[ax, side])
                k = np.arange(width, dtype=np.float64) / width  # NumPy's linspace(end, edge, width, endpoint=False)
                t = _ew.as_array((k if side == 0 else k[::-1]).astype(np.float32).reshape(
                    tuple(width if i == ax else 1 for i in range(a.ndim))))
                ef = edge if _dt.kind(edge._dtype) in "fc" else _ew.astype(edge, _dt.float32)
                parts.append(_to_dtype(end + (ef - end) * t, a._dtype, down=True))
            else:
                m = n if lengths is None else min(int(lengths[ax, side]), n)
                if m == 0:
                    raise ValueError("pad: stat_length of 0 yields no value for padding")
                src = _along(a, ax, 0, m) if side == 0 else _along(a, ax, n - m, n)
                parts.append(_repeat(_stat(mode, src, ax), ax, width))
        a = _m.concat([p for p in (parts[0], a, parts[1]) if p is not None], axis=ax)
    return a
