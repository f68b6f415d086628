"""CPU-shaped stream compaction (Shaders/compact.metal): per-chunk counts, one
thread's offsets, one host read of the total (the result's size depends on
the data), a write pass. Used on the CPU backend by nonzero, boolean-mask
indexing and unique_values (pymetal/arrays/sorting.py); a GPU keeps the scan-based
path there."""

import struct

import numpy as np

from ..construct import empty
from . import kernel, scratch
from ...dtypes import NAMES

_PARAMS = struct.Struct("<QII")
CHUNK = 4096  # elements per thread: 16M elements make 4,096 threads


def _counts(x, flat_keep_name):
    """(offsets scratch array, total, params, threads) after counting x's non-zero elements."""
    dev = x._buf.device
    n = x._size
    threads = -(-n // CHUNK)
    params = _PARAMS.pack(n, CHUNK, threads)
    counts = scratch(dev, "compact_counts", 8 * (threads + 1))
    kernel("compact", "count", flat_keep_name, dev)(x, counts, params, grid=threads, threadgroup=min(threads, 256))
    kernel("compact", None, "offsets", dev)(counts, params, grid=1)
    total = int(counts[8 * threads:8 * threads + 8].numpy().view(np.uint64)[0])  # waits
    return counts, total, params, threads


# PM_DTYPES_ALL in Shaders/kernels_common.h (complex arrays take the scan-based path)
_KINDS = {"float32", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "bool"}


def supported(x):
    """Whether x's non-zero elements are counted here (the CPU backend, a real dtype)."""
    return NAMES.get(x._dtype) in _KINDS and x._buf.device.backend == "cpu"


def nonzero_flat(x):
    """int64 positions of the non-zero elements of the C-contiguous 1-d x."""
    name = NAMES[x._dtype]
    counts, total, params, threads = _counts(x, name)
    out = empty((total,), np.int64, device=x._buf.device)
    if total:
        kernel("compact", "index", name, x._buf.device)(x, counts, out, params, grid=threads,
                                                        threadgroup=min(threads, 256))
    return out


def compact(values, keep):
    """values[keep] for C-contiguous 1-d values and bool keep of the same length."""
    counts, total, params, threads = _counts(keep, "bool")
    out = empty((total,), values._dtype, device=values._buf.device)
    if total:
        kernel("compact", "values", str(8 * values._dtype.itemsize), values._buf.device)(
            keep, values, counts, out, params, grid=threads, threadgroup=min(threads, 256))
    return out
