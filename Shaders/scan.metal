// Inclusive / exclusive cumulative sum and product along the rows of a
// contiguous (rows, n) array, in chunks of `chunk` elements per thread
// (reduce, then scan): barrier-free, so the CPU backend runs each pass as a
// plain loop, and each thread reads contiguous memory.
//
// 1. scan_reduce_<in>_<out>: totals[row][c] = the sum / product of chunk c.
// 2. scan_totals_<acc>: one thread per row turns its chunk totals into
//    exclusive prefixes (in place).
// 3. scan_apply_<in>_<out>: each thread scans its chunk again, starting
//    from the chunk's prefix, and writes the outputs.
// A row that is one chunk needs only step 3 (ScanParams.prefix = 0).
// Host names: <in> is the input dtype, <out> the output dtype; small integer
// types also scan into int64 / uint64 (the Array API's default for them).
#include "scan.h"

template <typename T, typename Out>
[[kernel]] void scan_reduce(device const T* x [[buffer(0)]],
                            device typename ScanAcc<Out>::type* totals [[buffer(1)]],
                            constant ScanParams& p [[buffer(2)]],
                            uint2 gid [[thread_position_in_grid]]) {
    typedef typename ScanAcc<Out>::type A;
    const bool product = p.product != 0;
    if (gid.x >= p.chunks) return;
    uint start = gid.x * p.chunk, end = min(start + p.chunk, p.n);
    device const T* row = x + ulong(gid.y) * p.n;
    // Eight independent partial results: no loop-carried dependency chain
    // through one register (and vector code on the CPU).
    A part[8];
    for (int j = 0; j < 8; j++) part[j] = pm_scan_identity<A>(product);
    bool has_inf = false;  // products: an infinite (or NaN) element, see kernels_common.h
    uint i = start;
    for (; i + 8 <= end; i += 8)
        for (int j = 0; j < 8; j++) {
            A v = A(row[i + j]);
            has_inf |= pm_is_inf(v) || v != v;
            part[j] = pm_scan_op(part[j], v, product);
        }
    for (; i < end; i++) {
        A v = A(row[i]);
        has_inf |= pm_is_inf(v) || v != v;
        part[0] = pm_scan_op(part[0], v, product);
    }
    A acc = part[0];
    for (int j = 1; j < 8; j++) acc = product ? pm_mul_parts(acc, part[j]) : acc + part[j];
    ulong at = ulong(gid.y) * p.chunks + gid.x;
    totals[at] = product ? pm_prod_finish(acc, has_inf) : acc;
    totals[ulong(p.rows) * p.chunks + at] = A(has_inf);  // the second half: flags for scan_totals
}

template <typename A>
[[kernel]] void scan_totals(device A* totals [[buffer(0)]],
                            constant ScanParams& p [[buffer(1)]],
                            uint row [[thread_position_in_grid]]) {
    if (row >= p.rows) return;
    const bool product = p.product != 0;
    const uint chunks = p.chunks; // a local: the stores below could alias p
    device A* t = totals + ulong(row) * chunks;
    device const A* has_inf = totals + (ulong(p.rows) + row) * chunks;
    A acc = pm_scan_identity<A>(product);
    for (uint c = 0; c < chunks; c++) {
        A v = t[c];
        t[c] = acc;
        // A product that is zero so far stays zero, as element after element would, unless
        // the chunk holds an infinity or NaN: its total may be an overflow (inf), and
        // 0 * inf = NaN is not what the elements give (NumPy's cumprod keeps the 0).
        acc = product && acc == A(0) ? pm_zero_times(acc, v, has_inf[c] != A(0)) : pm_scan_op(acc, v, product);
    }
}

template <typename T, typename Out>
[[kernel]] void scan_apply(device const T* x [[buffer(0)]],
                           device const typename ScanAcc<Out>::type* prefix [[buffer(1)]],
                           device Out* out [[buffer(2)]],
                           constant ScanParams& p [[buffer(3)]],
                           uint2 gid [[thread_position_in_grid]]) {
    typedef typename ScanAcc<Out>::type A;
    const bool product = p.product != 0;
    if (gid.x >= p.chunks) return;
    uint start = gid.x * p.chunk, end = min(start + p.chunk, p.n);
    ulong base = ulong(gid.y) * p.n;
    A acc = p.prefix ? prefix[ulong(gid.y) * p.chunks + gid.x] : pm_scan_identity<A>(product);
    if (p.exclusive) {
        for (uint i = start; i < end; i++) {
            out[base + i] = Out(acc);
            acc = pm_scan_op(acc, A(x[base + i]), product);
        }
    } else {
        for (uint i = start; i < end; i++) {
            acc = pm_scan_op(acc, A(x[base + i]), product);
            out[base + i] = Out(acc);
        }
    }
}

#define PM_SCAN_PAIR(in, T, out, Out)                                                             \
    template [[host_name("scan_reduce_" #in "_" #out)]] [[kernel]]                                  \
    decltype(scan_reduce<T, Out>) scan_reduce<T, Out>;                                              \
    template [[host_name("scan_apply_" #in "_" #out)]] [[kernel]] decltype(scan_apply<T, Out>) scan_apply<T, Out>;
#define PM_SCAN_SAME(name, T) PM_SCAN_PAIR(name, T, name, T)

// Every numeric dtype into itself, and the small integers (and bool) into
// int64 / uint64.
PM_DTYPES_FLOAT(PM_SCAN_SAME)
PM_DTYPES_INT(PM_SCAN_SAME)
PM_SCAN_PAIR(bool, bool, int64, long)
PM_SCAN_PAIR(int8, char, int64, long)
PM_SCAN_PAIR(int16, short, int64, long)
PM_SCAN_PAIR(int32, int, int64, long)
PM_SCAN_PAIR(uint8, uchar, uint64, ulong)
PM_SCAN_PAIR(uint16, ushort, uint64, ulong)
PM_SCAN_PAIR(uint32, uint, uint64, ulong)
template [[host_name("scan_totals_float32")]] [[kernel]] decltype(scan_totals<float>) scan_totals<float>;
template [[host_name("scan_totals_uint32")]] [[kernel]] decltype(scan_totals<uint>) scan_totals<uint>;
template [[host_name("scan_totals_uint64")]] [[kernel]] decltype(scan_totals<ulong>) scan_totals<ulong>;
#undef PM_SCAN_PAIR
#undef PM_SCAN_SAME
