"""Cumulative sum / product along the last axis with Shaders/scan.metal
(chunks per thread: reduce, scan the chunk totals, scan again from them).

Output dtypes: every numeric input dtype into itself; bool, int8, int16, int32
also into int64 and uint8, uint16, uint32 into uint64 (the Array API's
defaults). Integers wrap around like NumPy; float16 and bfloat16 accumulate
in float32 and round each output once (NumPy's float16 cumsum rounds every
partial sum, so it differs in the last bits, and is less accurate).
"""

import math

import numpy as np

from . import Plan, dtype_name, kernel, plan, signature

__all__ = ["cumulative"]

# Elements per thread: long contiguous chunks on the CPU backend, more
# threads on a GPU.
CHUNK = {"cpu": 8192, "metal": 256}

PARAMS = np.dtype([(f, "<u4") for f in ("n", "rows", "chunk", "chunks", "exclusive", "prefix", "product")])

WIDEN = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
          "uint8": "uint64", "uint16": "uint64", "uint32": "uint64"}


def _acc(out_name):
    """ScanAcc<Out> in Shaders/scan.h, as (host-name suffix, item size)."""
    if out_name in ("float32", "float16", "bfloat16"):
        return "float32", 4
    if out_name in ("int64", "uint64"):
        return "uint64", 8
    return "uint32", 4


_plans: dict = {}


def cumulative(x, out, op="sum", exclusive=False):
    """out[..., i] = op(x[..., 0], ..., x[..., i]) along the last axis (exclusive:
    of x[..., :i], so out[..., 0] is 0 for sums, 1 for products).

    x and out: C-contiguous pymetal arrays of one shape; out's dtype is x's or
    (for small integers and bool) int64 / uint64. Returns out; asynchronous.
    """
    dev = x._buf.device
    key = (signature(x, out), op, bool(exclusive), CHUNK.get(dev.backend), dev)
    plan(_plans, key, lambda: _plan(x, out, op, bool(exclusive), dev)).run(x=x, out=out)
    return out


def _plan(x, out, op, exclusive, dev):
    if op not in ("sum", "prod"):
        raise ValueError("cumulative: op must be 'sum' or 'prod', not %r" % (op,))
    shape = tuple(x._shape)
    if not shape:
        raise ValueError("cumulative: x must have at least one dimension")
    if tuple(out._shape) != shape:
        raise ValueError("cumulative: out has shape %r, x %r" % (tuple(out._shape), shape))
    in_name, out_name = dtype_name(x._dtype, "cumulative"), dtype_name(out._dtype, "cumulative")
    allowed = ([] if in_name == "bool" else [in_name]) + ([WIDEN[in_name]] if in_name in WIDEN else [])
    if out_name not in allowed:
        raise TypeError("cumulative: %s cannot accumulate into %s (only into %s)"
                        % (in_name, out_name, " or ".join(allowed)))
    for a, what in ((x, "x"), (out, "out")):
        if not a._cc:
            raise ValueError("cumulative: %s must be C-contiguous" % what)
    n = shape[-1]
    rows = math.prod(shape[:-1])
    result = Plan(dev)
    if n == 0 or rows == 0:
        return result
    if n >= 1 << 31 or rows >= 1 << 32:  # 32-bit positions in the kernels
        raise ValueError("cumulative: %d rows of %d elements are too many" % (rows, n))
    chunk = CHUNK.get(dev.backend, 256)
    chunks = -(-n // chunk)
    pair = "%s_%s" % (in_name, out_name)
    acc_name, acc_size = _acc(out_name)
    p = np.zeros((), PARAMS)
    p["n"], p["rows"], p["chunk"], p["chunks"] = n, rows, chunk, chunks
    p["exclusive"], p["prefix"], p["product"] = exclusive, chunks > 1, op == "prod"
    params = p.tobytes()
    # chunk totals, then as many flags (Shaders/scan.metal: scan_reduce, scan_totals)
    result.temp("scan_totals", 2 * rows * chunks * acc_size if chunks > 1 else 1)
    if chunks > 1:
        result.launch(kernel("scan", "reduce", pair, dev), ("x", "scan_totals"), params, grid=(chunks, rows))
        result.launch(kernel("scan", "totals", acc_name, dev), ("scan_totals",), params, grid=rows)
    result.launch(kernel("scan", "apply", pair, dev), ("x", "scan_totals", "out"), params, grid=(chunks, rows))
    return result
