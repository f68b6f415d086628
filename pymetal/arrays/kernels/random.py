"""Launches Shaders/random.metal's kernels for pymetal/random.py.

Each call fills a new C-contiguous array: `key` is the generator's (two
uint32), `call` the number of the generator's call; parameters are scalars
or float32/int64 pymetal arrays of the output's size (read with stride 1)
or of size 1 (stride 0).
"""

import numpy as np

from ..construct import empty
from . import dtype_name, kernel

__all__ = ["fill"]

PARAMS = np.dtype([("n", "<u8"), ("range", "<u8"), ("low", "<i8"), ("key0", "<u4"), ("key1", "<u4"),
                   ("call", "<u4"), ("stride_a", "<u4"), ("stride_b", "<u4"), ("a", "<f4"), ("b", "<f4")],
                  align=True)  # as the MSL struct: 56 bytes

# Samplers that write four values per thread (one Philox block each); integers
# do for ranges up to 2**32.
_BLOCKWISE = frozenset(("uniform", "normal", "exponential"))


def fill(sampler, shape, dtype, device, key, call, a=0.0, b=1.0, low=0, range_=0, buffers=()):
    """A new array of `shape` and `dtype` filled by kernel random_<sampler>_<dtype>."""
    out = empty(shape, dtype, device=device)
    n = out.size
    if n == 0:
        return out
    if n >= 1 << 32:  # 32-bit thread positions
        raise ValueError("pm.random: %d values are too many for one call (at most 2**32 - 1)" % n)
    p = np.zeros((), PARAMS)
    p["n"], p["range"], p["low"] = n, range_, low
    p["key0"], p["key1"], p["call"] = key[0], key[1], call
    p["a"], p["b"] = a, b
    for i, buf in enumerate(buffers):
        p["stride_" + "ab"[i]] = 1 if buf.size == n else 0
    fn = kernel("random", sampler, dtype_name(dtype, "pm.random"), device)
    blockwise = sampler in _BLOCKWISE or (sampler == "integers" and 0 < range_ <= 1 << 32)
    threads = -(-n // 4) if blockwise else n
    fn(out, p.tobytes(), *buffers, grid=threads)
    return out
