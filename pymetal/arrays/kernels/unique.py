"""The distinct values of a sorted 1-d array on the CPU backend
(Shaders/unique.metal): a count per chunk of the elements that differ from the
one before, compact.metal's offsets, one host read of the total, a write pass.
No mask array: unique_values (pymetal/arrays/sorting.py) is a sort and this."""

import numpy as np

from ..construct import empty
from . import compact as _cc, kernel, scratch
from ...dtypes import NAMES


def supported(x):
    """Whether the distinct values of x are found here (the CPU backend, a real dtype)."""
    return _cc.supported(x)


def unique_sorted(v):
    """The distinct values of the sorted C-contiguous 1-d pymetal array v (n >= 1)."""
    dev = v._buf.device
    name = NAMES[v._dtype]
    n = v._size
    threads = -(-n // _cc.CHUNK)
    params = _cc._PARAMS.pack(n, _cc.CHUNK, threads)
    counts = scratch(dev, "compact_counts", 8 * (threads + 1))
    tg = min(threads, 256)
    kernel("unique", "count", name, dev)(v, counts, params, grid=threads, threadgroup=tg)
    kernel("compact", None, "offsets", dev)(counts, params, grid=1)
    total = int(counts[8 * threads:8 * threads + 8].numpy().view(np.uint64)[0])  # waits
    out = empty((total,), v._dtype, device=dev)
    kernel("unique", "values", name, dev)(v, counts, out, params, grid=threads, threadgroup=tg)
    return out
