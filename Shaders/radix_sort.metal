// CPU-shaped stable sort of the rows of a contiguous (rows, n) array: an LSD
// radix sort over the sort keys of sort.h (NumPy's order, NaN last), BITS (8
// or 11: 32-bit keys in 3 passes instead of 4) bits per pass. The glue (pymetal/arrays/kernels/radix_sort.py) picks it on the CPU
// backend; a GPU keeps the merge sort of sort.metal, whose work is many small
// threads. Here ONE thread sorts a whole row, streaming through memory as a CPU
// core likes: one read counts the digits of every pass (a row's histograms do
// not depend on the order), then a stable scatter per digit of the key, skipping
// the digits that are the same in the whole row (small integers, floats of one
// binade). Rows spread over the cores. (A long single row stays on one core:
// per-pass dispatches over pieces of a row measured faster only on an idle
// machine, and much slower when the cores are shared, as the scatter of each
// pass waits for the slowest piece.)
//
// The elements themselves move (their key is recomputed from them each pass),
// so -0.0 and NaN payloads come out as they went in and a values-only sort
// moves no positions. The first pass reads x (positions implicit), the last
// writes the caller's outputs (positions as int64); passes in between
// ping-pong between two scratch rows.
//
// A scatter writes to 2^BITS places at once, each a stream the core's prefetch
// does not follow: each write prefetches (for writing) the line after it, so
// that the bucket's next line is in cache when its turn comes (1M float32 in
// one core: 8.1-8.5 -> 4.8-4.9 ms; 16M (this kernel) 133 -> 88 ms; NumPy 2.9
// and 62 ms; a line further ahead measured the same or slower).
//
// Only thread 0 of each threadgroup works: the CPU backend runs a dispatch on
// one core below 16,384 threads, so the glue pads the groups with idle threads
// to spread the rows over the cores.
#include "sort.h"

struct RadixParams {
    uint n;          // row length
    uint rows;
    uint descending; // 1: keys of descending order
    uint flags;      // bit 0: write values; bit 1: write indices
};


template <typename T, uint BITS>
[[kernel]] void radix_sort(device const T* x [[buffer(0)]],
                           device T* values [[buffer(1)]],
                           device long* indices [[buffer(2)]],
                           device T* tmp_values [[buffer(3)]],   // 2 rows per row
                           device uint* tmp_index [[buffer(4)]], // 2 rows per row (with flags & 2)
                           constant RadixParams& p [[buffer(5)]],
                           uint row [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]]) {
    typedef typename SortKey<T>::type K;
    const uint BYTES = (8 * sizeof(T) + BITS - 1) / BITS; // digits
    const uint PM_RADIX = 1u << BITS;
    if (tid != 0 || row >= p.rows) return;
    const uint n = p.n;
    const bool desc = p.descending != 0, want_values = (p.flags & 1) != 0, want_index = (p.flags & 2) != 0;
    ulong base = ulong(row) * n;
    x += base;
    values += base;
    indices += base;
    device T* tv[2] = {tmp_values + 2 * base, tmp_values + 2 * base + n};
    device uint* ti[2] = {tmp_index + (want_index ? 2 * base : 0), tmp_index + (want_index ? 2 * base + n : 0)};

    const uint AHEAD = 64 / sizeof(T); // elements in a cache line
    uint hist[BYTES][PM_RADIX];
    for (uint b = 0; b < BYTES; b++)
        for (uint d = 0; d < PM_RADIX; d++) hist[b][d] = 0;
    for (uint i = 0; i < n; i++) {
        K k = pm_sort_key(x[i], desc);
        for (uint b = 0; b < BYTES; b++) hist[b][uint(k >> (BITS * b)) & (PM_RADIX - 1)]++;
    }
    // The passes that move anything: a byte equal in every key leaves the order as it is.
    uint active[BYTES], npass = 0;
    for (uint b = 0; b < BYTES; b++) {
        uint first = uint(pm_sort_key(x[0], desc) >> (BITS * b)) & (PM_RADIX - 1);
        if (hist[b][first] != n) active[npass++] = b;
    }
    if (npass == 0) { // all keys equal: the stable order is the original one
        for (uint i = 0; i < n; i++) {
            if (want_values) values[i] = x[i];
            if (want_index) indices[i] = long(i);
        }
        return;
    }
    for (uint j = 0; j < npass; j++) {
        uint b = active[j], shift = BITS * b;
        uint next[PM_RADIX], sum = 0;
        for (uint d = 0; d < PM_RADIX; d++) {
            next[d] = sum;
            sum += hist[b][d];
        }
        bool first = j == 0, last = j == npass - 1;
        device const T* src = first ? x : tv[(j - 1) % 2];
        device const uint* isrc = ti[(j - 1) % 2];
        // The last pass writes the caller's values, or scratch when only indices are wanted.
        device T* dst = last && want_values ? values : tv[j % 2];
        device uint* idst = ti[j % 2];
        if (!want_index) {
            for (uint i = 0; i < n; i++) {
                T v = src[i];
                uint o = next[uint(pm_sort_key(v, desc) >> shift) & (PM_RADIX - 1)]++;
                pm_prefetch_write(dst + o + AHEAD);
                dst[o] = v;
            }
        } else if (last) {
            for (uint i = 0; i < n; i++) {
                T v = src[i];
                uint o = next[uint(pm_sort_key(v, desc) >> shift) & (PM_RADIX - 1)]++;
                pm_prefetch_write(dst + o + AHEAD);
                pm_prefetch_write(indices + o + 8);
                dst[o] = v;
                indices[o] = long(first ? i : isrc[i]);
            }
        } else {
            for (uint i = 0; i < n; i++) {
                T v = src[i];
                uint o = next[uint(pm_sort_key(v, desc) >> shift) & (PM_RADIX - 1)]++;
                pm_prefetch_write(dst + o + AHEAD);
                pm_prefetch_write(idst + o + 16);
                dst[o] = v;
                idst[o] = first ? i : isrc[i];
            }
        }
    }
}

#define PM_RADIX_SORT(name, T) \
    template [[host_name("radix_sort_" #name)]] [[kernel]] decltype(radix_sort<T, 8>) radix_sort<T, 8>; \
    template [[host_name("radix_sort11_" #name)]] [[kernel]] decltype(radix_sort<T, 11>) radix_sort<T, 11>;

PM_DTYPES_ALL(PM_RADIX_SORT)
#undef PM_RADIX_SORT
