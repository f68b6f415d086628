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


def accumulate(i, r, x):
    """Adds element value x to the thread's accumulator of reduction i (node r)."""
    a = _MSL[r.dtype]
    return "{ const %s e = static_cast<%s>(%s); p%d |= ROps<%s>::poisons(e); a%d = %s::f(a%d, e); }" % (
        a, a, x, i, r.aux, i, r.aux, i)


def level(group, names, inner, decls):
    """MSL of one reduction level: every thread of the row's threadgroup ends with the row's
    values in `names` (declared by the caller). `inner` reads element jj and accumulates;
    `decls` gets the threadgroup arrays (declared at kernel scope, as MSL requires)."""
    body = ["{"]
    for i, r in enumerate(group):
        a = _MSL[r.dtype]
        body.append("%s a%d = %s::template init<%s>(); bool p%d = false;" % (a, i, r.aux, a, i))
    body.append(LOOP)
    body.extend("    " + s for s in inner)
    body.append("}")
    tags = []
    for i, r in enumerate(group):
        a, tag = _MSL[r.dtype], "g%d" % len(decls)
        tags.append(tag)
        decls.append("threadgroup %s %s_part[%d]; threadgroup bool %s_pois[%d]; threadgroup %s %s_row;"
                     % (a, tag, _SIMD, tag, _SIMD, a, tag))
        # Lanes past the row hold the identity, so a full shuffle tree is safe.
        body.append("a%d = simd_reduce<%s, %s>(a%d, %d); p%d = simd_reduce<bool, RAny>(p%d, %d);"
                    % (i, a, r.aux, i, _SIMD, i, i, _SIMD))
        body.append("if (lane == 0) { %s_part[sg] = a%d; %s_pois[sg] = p%d; }" % (tag, i, tag, i))
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
