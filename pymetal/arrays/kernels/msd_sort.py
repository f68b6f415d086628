"""The CPU backend's sort of one long row (Shaders/msd_sort.metal) as launches
of a sort Plan (pymetal/arrays/kernels/sort.py): a top-digit pass over chunks
on both cores into 2,048 buckets, then each bucket sorted in cache by a worker.
"""

import numpy as np

from . import kernel

PARAMS = np.dtype([(f, "<u4") for f in ("n", "chunks", "chunk", "descending", "flags", "top_bits")])
RADIX = 2048        # PM_MSD_RADIX
SPLIT = 16384       # threads from which the CPU backend splits a dispatch over its cores
CHUNK = 16384       # elements per chunk of the parallel passes (each chunk keeps 2,048 counters)
MAX_CHUNKS = 256    # more chunks: the one-thread scan over bucket x chunk counters grows
TOP_BITS = 11       # bits of the top digit (<= 11)


def _spread(groups):
    """Threads per group so that `groups` single-thread groups reach SPLIT threads."""
    return max(1, min(1024, -(-SPLIT // groups)))


def launches(result, name, itemsize, n, descending, dev, want_values, want_indices):
    """Adds the sort of the 1-row role "x" (n elements) to `result`, writing
    roles "values" (x's dtype) and/or "indices" (int64) as wanted."""
    chunk = max(CHUNK, -(-n // MAX_CHUNKS))
    chunks = -(-n // chunk)
    key = 8 if itemsize == 8 else 4
    result.temp("msd_range", 2 * chunks * key)
    result.temp("msd_counts", (RADIX * chunks + RADIX + 2) * 4)  # + bucket starts, a counter
    result.temp("msd_a", n * itemsize)
    result.temp("msd_b", n * itemsize)
    if want_indices:
        result.temp("msd_ia", n * 4)
        result.temp("msd_ib", n * 4)
    if not want_values:
        result.temp("msd_out", n * itemsize)  # the last pass's values, unread
    out = "values" if want_values else "msd_out"
    ia, ib, iout = ("msd_ia", "msd_ib", "indices") if want_indices else ("msd_a", "msd_a", "msd_a")  # unused
    p = np.array((n, chunks, chunk, descending, 2 if want_indices else 0, TOP_BITS), PARAMS).tobytes()
    tg = _spread(chunks)
    result.launch(kernel("msd", "range", name, dev), ("x", "msd_range"), p, groups=chunks, threadgroup=tg)
    result.launch(kernel("msd", "count", name, dev), ("x", "msd_range", "msd_counts"), p, groups=chunks, threadgroup=tg)
    result.launch(kernel("msd", "scan", None, dev), ("msd_counts",), p, grid=1)
    result.launch(kernel("msd", "scatter", name, dev), ("x", "msd_range", "msd_counts", "msd_a", ia), p,
                  groups=chunks, threadgroup=tg)
    result.launch(kernel("msd", "finish", name, dev),
                  ("msd_counts", "msd_a", "msd_b", ia, ib, out, iout), p, groups=chunks, threadgroup=tg)
