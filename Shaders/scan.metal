// Inclusive / exclusive cumulative sum and product along the rows of a
// contiguous (rows, n) array, in chunks of `chunk` elements per thread
// (reduce, then scan): barrier-free, so the CPU backend runs each pass as a
// plain loop, and each thread reads contiguous memory.
//
// 1. scan_reduce_<op>_<in>_<out>: totals[row][c] = the op over chunk c.
// 2. scan_totals_<op>_<acc>: one thread per row turns its chunk totals into
//    exclusive prefixes (in place).
// 3. scan_apply_<op>_<in>_<out>: each thread scans its chunk again, starting
//    from the chunk's prefix, and writes the outputs.
// A row that is one chunk needs only step 3 (ScanParams.prefix = 0).
// Host names: <in> is the input dtype, <out> the output dtype; small integer
// types also scan into int64 / uint64 (the Array API's default for them).
#include "scan.h"

template <typename T, typename Out, typename Op>
[[kernel]] void scan_reduce(device const T* x [[buffer(0)]],
                            device typename ScanAcc<Out>::type* totals [[buffer(1)]],
                            constant ScanParams& p [[buffer(2)]],
                            uint2 gid [[thread_position_in_grid]]) {
    typedef typename ScanAcc<Out>::type A;
    if (gid.x >= p.chunks) return;
    uint start = gid.x * p.chunk, end = min(start + p.chunk, p.n);
    device const T* row = x + ulong(gid.y) * p.n;
    // Eight independent partial results: no loop-carried dependency chain
    // through one register (and vector code on the CPU).
    A part[8];
    for (int j = 0; j < 8; j++) part[j] = Op::template identity<A>();
    uint i = start;
    for (; i + 8 <= end; i += 8)
        for (int j = 0; j < 8; j++) part[j] = Op()(part[j], A(row[i + j]));
    for (; i < end; i++) part[0] = Op()(part[0], A(row[i]));
    A acc = part[0];
    for (int j = 1; j < 8; j++) acc = Op()(acc, part[j]);
    totals[ulong(gid.y) * p.chunks + gid.x] = acc;
}

template <typename A, typename Op>
[[kernel]] void scan_totals(device A* totals [[buffer(0)]],
                            constant ScanParams& p [[buffer(1)]],
                            uint row [[thread_position_in_grid]]) {
    if (row >= p.rows) return;
    const uint chunks = p.chunks; // a local: the stores below could alias p
    device A* t = totals + ulong(row) * chunks;
    A acc = Op::template identity<A>();
    for (uint c = 0; c < chunks; c++) {
        A v = t[c];
        t[c] = acc;
        acc = Op()(acc, v);
    }
}

template <typename T, typename Out, typename Op>
[[kernel]] void scan_apply(device const T* x [[buffer(0)]],
                           device const typename ScanAcc<Out>::type* prefix [[buffer(1)]],
                           device Out* out [[buffer(2)]],
                           constant ScanParams& p [[buffer(3)]],
                           uint2 gid [[thread_position_in_grid]]) {
    typedef typename ScanAcc<Out>::type A;
    if (gid.x >= p.chunks) return;
    uint start = gid.x * p.chunk, end = min(start + p.chunk, p.n);
    ulong base = ulong(gid.y) * p.n;
    A acc = p.prefix ? prefix[ulong(gid.y) * p.chunks + gid.x] : Op::template identity<A>();
    if (p.exclusive) {
        for (uint i = start; i < end; i++) {
            out[base + i] = Out(acc);
            acc = Op()(acc, A(x[base + i]));
        }
    } else {
        for (uint i = start; i < end; i++) {
            acc = Op()(acc, A(x[base + i]));
            out[base + i] = Out(acc);
        }
    }
}

#define PM_SCAN_PAIR(op, Op, in, T, out, Out)                                                    \
    template [[host_name("scan_reduce_" #op "_" #in "_" #out)]] [[kernel]]                       \
    decltype(scan_reduce<T, Out, Op>) scan_reduce<T, Out, Op>;                                   \
    template [[host_name("scan_apply_" #op "_" #in "_" #out)]] [[kernel]]                        \
    decltype(scan_apply<T, Out, Op>) scan_apply<T, Out, Op>;
// Every numeric dtype into itself, and the small integers (and bool) into
// int64 / uint64.
#define PM_SCAN_SAME(op, Op)                                                                     \
    PM_SCAN_PAIR(op, Op, float32, float, float32, float)                                        \
    PM_SCAN_PAIR(op, Op, float16, half, float16, half)                                          \
    PM_SCAN_PAIR(op, Op, bfloat16, bfloat, bfloat16, bfloat)                                    \
    PM_SCAN_PAIR(op, Op, int8, char, int8, char) PM_SCAN_PAIR(op, Op, int16, short, int16, short) \
    PM_SCAN_PAIR(op, Op, int32, int, int32, int) PM_SCAN_PAIR(op, Op, int64, long, int64, long)   \
    PM_SCAN_PAIR(op, Op, uint8, uchar, uint8, uchar)                                            \
    PM_SCAN_PAIR(op, Op, uint16, ushort, uint16, ushort)                                        \
    PM_SCAN_PAIR(op, Op, uint32, uint, uint32, uint) PM_SCAN_PAIR(op, Op, uint64, ulong, uint64, ulong)
#define PM_SCAN_WIDEN(op, Op)                                                                    \
    PM_SCAN_PAIR(op, Op, bool, bool, int64, long) PM_SCAN_PAIR(op, Op, int8, char, int64, long)   \
    PM_SCAN_PAIR(op, Op, int16, short, int64, long) PM_SCAN_PAIR(op, Op, int32, int, int64, long) \
    PM_SCAN_PAIR(op, Op, uint8, uchar, uint64, ulong)                                           \
    PM_SCAN_PAIR(op, Op, uint16, ushort, uint64, ulong) PM_SCAN_PAIR(op, Op, uint32, uint, uint64, ulong)
#define PM_SCAN_TOTALS(op, Op)                                                                   \
    template [[host_name("scan_totals_" #op "_float32")]] [[kernel]]                             \
    decltype(scan_totals<float, Op>) scan_totals<float, Op>;                                     \
    template [[host_name("scan_totals_" #op "_uint32")]] [[kernel]]                              \
    decltype(scan_totals<uint, Op>) scan_totals<uint, Op>;                                       \
    template [[host_name("scan_totals_" #op "_uint64")]] [[kernel]]                              \
    decltype(scan_totals<ulong, Op>) scan_totals<ulong, Op>;

PM_SCAN_SAME(sum, ScanSum) PM_SCAN_WIDEN(sum, ScanSum) PM_SCAN_TOTALS(sum, ScanSum)
PM_SCAN_SAME(prod, ScanProd) PM_SCAN_WIDEN(prod, ScanProd) PM_SCAN_TOTALS(prod, ScanProd)
#undef PM_SCAN_PAIR
#undef PM_SCAN_SAME
#undef PM_SCAN_WIDEN
#undef PM_SCAN_TOTALS
