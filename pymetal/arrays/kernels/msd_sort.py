"""The CPU backend's sort of one long row (Shaders/msd_sort.metal) as launches
of a sort Plan (pymetal/arrays/kernels/sort.py): a top-digit pass over chunks
on both cores into 2,048 buckets, then each bucket sorted in cache by a worker.
The chunked passes have one chunk per threadgroup (WORKERS equal chunks); the
bucket pass's WORKERS workers take buckets from a shared counter.
"""

import numpy as np

from . import kernel

PARAMS = np.dtype([(f, "<u4") for f in ("n", "chunks", "chunk", "descending", "flags", "top_bits")])
RADIX = 2048        # PM_MSD_RADIX
# Threads from which the CPU backend wakes its sleeping workers for a kernel it
# has not timed yet (Sources/MetalCPU/Dispatch.swift wakePicos over a loop
# thread's cost); with fewer, the first sort's passes would run on one core.
WAKE = 262144
WORKERS = 256       # threadgroups of the parallel passes (only thread 0 of each works): chunks
GROUP = -(-WAKE // WORKERS)  # threads per group: idle padding up to WAKE
TOP_BITS = None     # bits of the top digit (<= 11); None: top_bits(n)
BUCKET = 4096       # elements per bucket that top_bits aims at


def top_bits(n):
    """Bits of the top digit: buckets of ~BUCKET elements, at least 256 and at
    most 2,048 of them. Fewer buckets scatter faster (2,048 write streams miss
    the L1 cache and TLB: 1M int32 3.2 -> 1.8 ms for 256); 4,096 elements of
    4 bytes still sort in L1."""
    return TOP_BITS or max(8, min(11, n.bit_length() - 1 - BUCKET.bit_length() + 1))


def launches(result, name, itemsize, n, descending, dev, want_values, want_indices):
    """Adds the sort of the 1-row role "x" (n elements) to `result`, writing
    roles "values" (x's dtype) and/or "indices" (int64) as wanted."""
    chunk = max(1, -(-n // WORKERS))
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
    p = np.array((n, chunks, chunk, descending, 2 if want_indices else 0, top_bits(n)), PARAMS).tobytes()
    par = dict(groups=WORKERS, threadgroup=GROUP)
    result.launch(kernel("msd", "range", name, dev), ("x", "msd_range"), p, **par)
    result.launch(kernel("msd", "count", name, dev), ("x", "msd_range", "msd_counts"), p, **par)
    result.launch(kernel("msd", "scan", None, dev), ("msd_counts",), p, grid=1)
    result.launch(kernel("msd", "scatter", name, dev), ("x", "msd_range", "msd_counts", "msd_a", ia), p, **par)
    result.launch(kernel("msd", "finish", name, dev),
                  ("msd_counts", "msd_a", "msd_b", ia, ib, out, iout), p, **par)
