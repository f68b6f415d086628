"""take along an axis with unit inner stride (Shaders/gather.metal): the
kernel wraps negative indices and checks the range in the same pass; one host
read of its per-thread flags tells whether every index was in range."""

import struct

from . import kernel, scratch

_PARAMS = struct.Struct("<QQII")
# Indices per thread: a run on the CPU backend (a vectorised loop of gather
# loads; from 1M indices, 16,384 threads or more: every core works. 64, not
# 256 (one core up to 4M): take 1M from 1M float32 0.37-0.52x -> 0.84-1.04x
# NumPy, float64 0.65-0.81x -> 1.29-1.37x, interleaved on a loaded machine),
# one per thread on a GPU.
CHUNK = {"cpu": 64, "metal": 1}


def take_rows(x, idx, out, n, outer):
    """out[o, j] = x[o, idx[j]] for C-contiguous x (outer * n elements), idx (m
    int64) and out (outer * m elements, x's dtype). Waits for the kernel;
    returns False if an index was outside [-n, n) (out is then not valid)."""
    dev = x._buf.device
    m = idx._size
    chunk = CHUNK.get(dev.backend, 1)
    threads = -(-m // chunk)
    if threads >= 1 << 32 or outer >= 1 << 32:
        raise ValueError("take: too many indices (%d) or rows (%d)" % (m, outer))
    bad = scratch(dev, "take_bad", threads * outer)
    fn = kernel("take", "chunk", str(8 * x._dtype.itemsize), dev)
    fn(x, idx, out, bad, _PARAMS.pack(n, m, chunk, threads), grid=(threads, outer),
       threadgroup=(min(threads, 256), 1))
    return not bad[:threads * outer].numpy().any()
