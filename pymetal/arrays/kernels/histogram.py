"""Launches Shaders/histogram.metal's kernels for bincount and histogram
(pymetal/_numpy_stats.py): per-run private histograms, then one column sum per bin."""

import numpy as np

from ..construct import empty
from . import kernel

__all__ = ["counts", "sums", "fits"]

PARAMS = np.dtype([("m", "<u8"), ("n", "<u8"), ("chunk", "<u8"), ("runs", "<u8")])

_RUN = 1 << 16          # keys per run at least: a run's histogram must be worth zeroing
_MAX_RUNS = 64          # enough runs for every core
_MAX_PARTIAL = 1 << 24  # bins times runs: 64 MB of partial histograms at most


def fits(n):
    """True when n bins are few enough for private histograms (else sort the keys)."""
    return n <= _MAX_PARTIAL


def _plan(m, n):
    runs = max(1, min(_MAX_RUNS, -(-m // _RUN), _MAX_PARTIAL // max(n, 1)))
    chunk = -(-m // runs)
    p = np.zeros((), PARAMS)
    p["m"], p["n"], p["chunk"], p["runs"] = m, n, chunk, runs
    return runs, p.tobytes()


def counts(keys, n):
    """int64 counts of each k < n among the C-contiguous int64 `keys` (others skipped)."""
    dev = keys._buf.device
    runs, p = _plan(keys._size, n)
    partial = empty((runs, n), np.uint32, device=dev)
    out = empty((n,), np.int64, device=dev)
    kernel("histogram", "count", "int64", dev)(keys, partial, p, grid=runs, threadgroup=1)
    kernel("histogram", "combine", "int64", dev)(partial, out, p, grid=n)
    return out


def sums(keys, weights, n):
    """float32 sums of the C-contiguous float32 `weights` per key k < n (others skipped)."""
    dev = keys._buf.device
    runs, p = _plan(keys._size, n)
    partial = empty((runs, 2, n), np.float32, device=dev)
    out = empty((n,), np.float32, device=dev)
    kernel("histogram", "sum", "float32", dev)(keys, weights, partial, p, grid=runs, threadgroup=1)
    kernel("histogram", "combine", "float32", dev)(partial, out, p, grid=n)
    return out
