"""The GPU shape of pm.fuse's row reductions: a threadgroup per row.

On the CPU backend a thread per row streaming through it is right (fusion.py). On a
GPU that reads rows one per thread, uncoalesced, with a few threads per core busy; so
there a threadgroup computes one row: its threads read the row with coalesced strides
(element lid, lid + tgsize, ...), each reduction combines across the SIMD-group with
shuffles and across SIMD-groups through threadgroup memory (simd_reduce of
Shaders/reduce.h, as the library's reduce_row_simd), every thread takes the row's value
after a barrier, and the outputs are written with the same strides.

It is chosen as the library's reductions choose theirs: by backend, or forced by
pymetal.arrays.reduce.GPU_SHAPES (the tests run it on the CPU backend, which executes
MSL threadgroups, SIMD-group shuffles and barriers as a GPU does).
"""

from __future__ import annotations

from .. import dtypes as _dt

_MSL = _dt.MSL_TYPE_NAMES
_SIMD = 32          # SIMD-group width (Apple GPUs; the CPU backend runs the same)
MAX_TG = 256        # threads per row (reduce.py's _GPU_TG): one chunk of the library's row kernel
MAX_ROWS = (1 << 31) // MAX_TG  # a grid of rows * threadgroup threads fits a uint
_BLOCK = 64         # elements per thread per block (reduce.py's _GPU_CHUNK / _GPU_TG)

# The kernel's thread position attributes, replacing the CPU shape's thread_position_in_grid.
PARAMS = ["uint group [[threadgroup_position_in_grid]]", "uint lid [[thread_index_in_threadgroup]]",
          "uint tgsize [[threads_per_threadgroup]]", "uint lane [[thread_index_in_simdgroup]]",
          "uint sg [[simdgroup_index_in_threadgroup]]", "uint nsg [[simdgroups_per_threadgroup]]"]

LOOP = "for (ulong jj = lid; jj < n; jj += tgsize) {"   # a thread's elements of the row (coalesced)
ROW = "const ulong r = group;"                          # a threadgroup per row


def tg_size(n):
    """Threads per row: the row's length rounded up to a whole SIMD-group, at most MAX_TG
    (a short row leaves no SIMD-group without elements)."""
    t = _SIMD
    while t < n and t < MAX_TG:
        t *= 2
    return t


def fit(tg, limit):
    """tg halved until the compiled kernel allows it (a GPU lowers the limit for kernels
    that use many registers); the MSL does not depend on it."""
    while tg > _SIMD and tg > limit:
        tg //= 2
    return tg


def accumulate(i, r, x):
    """Adds element value x to the thread's accumulator of reduction i (node r)."""
    a = _MSL[r.dtype]
    return "{ const %s e = static_cast<%s>(%s); p%d |= ROps<%s>::poisons(e); a%d = %s::f(a%d, e); }" % (
        a, a, x, i, r.aux, i, r.aux, i)


def level(group, names, inner, decls):
    """MSL of one reduction level: every thread of the row's threadgroup ends with the row's
    values in `names` (declared by the caller). `inner` reads element jj and accumulates;
    `decls` gets the threadgroup arrays (declared at kernel scope, as MSL requires)."""
    def init(prefix):
        for i, r in enumerate(group):
            a = _MSL[r.dtype]
            body.append("%s %s%d = %s::template init<%s>();" % (a, prefix, i, r.aux, a))

    def fold(into, prefix):
        body.extend("%s%d = ROps<%s>::combine(%s%d, %s%d);" % (into, i, r.aux, into, i, prefix, i)
                    for i, r in enumerate(group))
    # A thread's elements in blocks of _BLOCK, blocks in groups of _BLOCK, then groups: serial
    # chains of at most _BLOCK values (a long row's sum keeps its accuracy, as the library's
    # passes of chunks). A row of up to MAX_TG * _BLOCK elements is one block: the order of
    # the library's GPU row kernel (reduce_row_simd, 64 elements per thread per chunk).
    body = ["{"]
    init("t")
    body.append(" ".join("bool p%d = false;" % i for i in range(len(group))))
    body.append("for (ulong m0 = 0; m0 < n; m0 += ulong(tgsize) * %d) {" % (_BLOCK * _BLOCK))
    body.append("const ulong mend = min(n, m0 + ulong(tgsize) * %d);" % (_BLOCK * _BLOCK))
    init("c")
    body.append("for (ulong b0 = m0; b0 < mend; b0 += ulong(tgsize) * %d) {" % _BLOCK)
    body.append("const ulong bend = min(mend, b0 + ulong(tgsize) * %d);" % _BLOCK)
    init("a")
    body.append("for (ulong jj = b0 + lid; jj < bend; jj += tgsize) {")
    body.extend("    " + s for s in inner)
    body.append("}")
    fold("c", "a")
    body.append("}")
    fold("t", "c")
    body.append("}")
    tags = []
    for i, r in enumerate(group):
        a, tag = _MSL[r.dtype], "g%d" % len(decls)
        tags.append(tag)
        decls.append("threadgroup %s %s_part[%d]; threadgroup bool %s_pois[%d]; threadgroup %s %s_row;"
                     % (a, tag, _SIMD, tag, _SIMD, a, tag))
        # Lanes past the row hold the identity, so a full shuffle tree is safe.
        body.append("t%d = simd_reduce<%s, %s>(t%d, %d); p%d = simd_reduce<bool, RAny>(p%d, %d);"
                    % (i, a, r.aux, i, _SIMD, i, i, _SIMD))
        body.append("if (lane == 0) { %s_part[sg] = t%d; %s_pois[sg] = p%d; }" % (tag, i, tag, i))
    body.append("threadgroup_barrier(mem_flags::mem_threadgroup);")
    body.append("if (sg == 0) {")
    for i, r in enumerate(group):
        a, tag = _MSL[r.dtype], tags[i]
        body.append("    { %s v = lane < nsg ? %s_part[lane] : %s::template init<%s>();" % (a, tag, r.aux, a))
        body.append("      v = simd_reduce<%s, %s>(v, %d);" % (a, r.aux, _SIMD))
        body.append("      const bool pv = simd_reduce<bool, RAny>(lane < nsg && %s_pois[lane], %d);" % (tag, _SIMD))
        body.append("      if (lane == 0) %s_row = ROps<%s>::finish(v, pv); }" % (tag, r.aux))
    body.append("}")
    body.append("threadgroup_barrier(mem_flags::mem_threadgroup);")
    for i, tag in enumerate(tags):
        body.append("%s = %s_row;" % (names[i], tag))
    body.append("}")
    return body
