"""The CPU-shaped radix sort (Shaders/radix_sort.metal) as launches of a sort
Plan (pymetal/arrays/kernels/sort.py): one kernel, one thread per row, rows padded
with idle threads so that the CPU backend spreads them over its cores (it runs
a dispatch of fewer than SPLIT threads on one core).
"""

import numpy as np

from . import kernel

PARAMS = np.dtype([(f, "<u4") for f in ("n", "rows", "descending", "flags")])
SPLIT = 16384       # threads from which the CPU backend splits a dispatch over its cores
MAX_GROUP = 1024    # threads per threadgroup (the CPU backend's limit)
# Bits per digit: radix_sort_<dtype> 8, radix_sort11_<dtype> 11. 11 for 4-byte
# keys (3 passes instead of 4: 1M float32 0.40x -> 0.47x NumPy, 16M 0.25x -> 0.33x,
# 1M floats of 1000 values 0.18x -> 0.32x, on a loaded machine); 8 for the
# others (64-bit keys measured either way; 1- and 2-byte keys take as many
# passes). None picks; tests force 8 or 11 for every dtype.
BITS = None


def bits(itemsize):
    return BITS or (11 if itemsize == 4 else 8)


def launches(result, name, itemsize, n, rows, descending, dev, want_values, want_indices):
    """Adds the radix sort of the rows of role "x" to `result`, writing roles
    "values" (x's dtype) and/or "indices" (int64) as wanted."""
    result.temp("radix_values", 2 * rows * n * itemsize)  # the passes' ping-pong rows
    if want_indices:
        result.temp("radix_index", 2 * rows * n * 4)
    unused = "radix_values"  # bound where an output is not wanted (never written)
    p = np.array((n, rows, descending, (1 if want_values else 0) | (2 if want_indices else 0)), PARAMS)
    tg = max(1, min(MAX_GROUP, -(-SPLIT // rows)))
    result.launch(kernel("radix", "sort" if bits(itemsize) == 8 else "sort11", name, dev),
                  ("x", "values" if want_values else unused, "indices" if want_indices else unused,
                   "radix_values", "radix_index" if want_indices else unused),
                  p.tobytes(), groups=rows, threadgroup=tg)
