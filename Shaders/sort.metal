// Stable merge sort of the rows of a contiguous (rows, n) array, barrier-free
// so that the CPU backend runs every kernel as a plain loop and a GPU runs many
// small independent threads. The glue (pymetal/_kernels/sort.py) runs:
//
// 1. sort_init_<dtype>: each thread sorts a chunk of PM_SORT_CHUNK elements of a
//    row (stably) into (key, index) pairs (keys: sort.h).
// 2. sort_merge_<uint32|uint64>, once per pass with width = CHUNK, 2 CHUNK, ...
//    while width < n: merges pairs of sorted runs of `width` into runs of
//    2 width, ping-ponging between two buffers. Each thread produces
//    `per_thread` consecutive outputs: it finds where they start in the two
//    runs with a binary search (merge path), then merges sequentially. Ties take
//    the left run first, so the sort is stable.
// 3. sort_finish_<bits>: values[i] = x[index[i]] and/or indices[i] = index[i]
//    (int64), copying elements by width so that -0.0 and NaN payloads survive.
//
// searchsorted_<dtype>: a binary search per value over a sorted 1-d array, in
// the order of the sort keys (NaN last), side "left" or "right".
#include "sort.h"

#define PM_SORT_CHUNK 32

// Sorts keys k[0 .. count) of one chunk stably and sets pos[] to where each
// came from. 32-bit keys: the values key << 32 | position are distinct and
// order as (key, position), so a bitonic network (branch-free, unlike an
// insertion sort on random data) sorts them stably.
inline void pm_sort_chunk(thread uint* k, thread uint* pos, uint count) {
    const uint C = PM_SORT_CHUNK;
    ulong v[C];
    for (uint i = 0; i < C; i++) v[i] = i < count ? ulong(k[i]) << 32 | i : ~0ul; // padding sorts last
    _Pragma("clang loop unroll(full)")
    for (uint size = 2; size <= C; size *= 2) {
        _Pragma("clang loop unroll(full)")
        for (uint stride = size / 2; stride > 0; stride /= 2) {
            _Pragma("clang loop unroll(full)")
            for (uint c = 0; c < C / 2; c++) { // comparator c: elements lo < hi
                uint lo = 2 * stride * (c / stride) + c % stride, hi = lo + stride;
                ulong a = v[lo], b = v[hi];
                bool up = (lo & size) == 0;
                v[lo] = up ? min(a, b) : max(a, b);
                v[hi] = up ? max(a, b) : min(a, b);
            }
        }
    }
    for (uint i = 0; i < count; i++) {
        k[i] = uint(v[i] >> 32);
        pos[i] = uint(v[i]);
    }
}

// 64-bit keys: a stable insertion sort.
inline void pm_sort_chunk(thread ulong* k, thread uint* pos, uint count) {
    for (uint i = 0; i < count; i++) {
        ulong key = k[i];
        uint j = i;
        for (; j > 0 && k[j - 1] > key; j--) {
            k[j] = k[j - 1];
            pos[j] = pos[j - 1];
        }
        k[j] = key;
        pos[j] = i;
    }
}

template <typename T>
[[kernel]] void sort_init(device const T* x [[buffer(0)]],
                          device typename SortKey<T>::type* keys [[buffer(1)]],
                          device uint* index [[buffer(2)]],
                          constant SortParams& p [[buffer(3)]],
                          uint2 gid [[thread_position_in_grid]]) {
    typedef typename SortKey<T>::type K;
    uint start = gid.x * PM_SORT_CHUNK;
    if (start >= p.n) return;
    uint count = min(uint(PM_SORT_CHUNK), p.n - start);
    ulong base = ulong(gid.y) * p.n + start;
    bool descending = p.descending != 0;
    K k[PM_SORT_CHUNK];
    uint pos[PM_SORT_CHUNK];
    for (uint i = 0; i < count; i++) k[i] = pm_sort_key(x[base + i], descending);
    pm_sort_chunk(k, pos, count);
    for (uint i = 0; i < count; i++) {
        keys[base + i] = k[i];
        index[base + i] = start + pos[i];
    }
}

template <typename K>
[[kernel]] void sort_merge(device const K* keys [[buffer(0)]],
                           device const uint* index [[buffer(1)]],
                           device K* keys_out [[buffer(2)]],
                           device uint* index_out [[buffer(3)]],
                           constant SortParams& p [[buffer(4)]],
                           uint2 gid [[thread_position_in_grid]]) {
    const uint n = p.n, w = p.width;
    uint start = gid.x * p.per_thread;
    if (start >= n) return;
    ulong base = ulong(gid.y) * n;
    keys += base;
    index += base;
    keys_out += base;
    index_out += base;
    // The pair of runs [lo, mid) and [mid, hi) this thread's outputs come from.
    uint lo = start - start % (2 * w), mid = min(lo + w, n), hi = min(lo + w + w, n);
    uint d = start - lo; // outputs of the pair before this thread's
    // i = how many of them come from the left run: the first i with
    // left[i] > right[d - i - 1] (a tie goes to the left run first).
    uint ilo = d > hi - mid ? d - (hi - mid) : 0, ihi = min(d, mid - lo);
    while (ilo < ihi) {
        uint i = (ilo + ihi) / 2;
        if (keys[lo + i] <= keys[mid + d - i - 1]) ilo = i + 1;
        else ihi = i;
    }
    uint a = lo + ilo, b = mid + d - ilo;
    uint end = min(start + p.per_thread, hi);
    for (uint o = start; o < end; o++) {
        bool left = b >= hi || (a < mid && keys[a] <= keys[b]);
        uint src = left ? a : b;
        keys_out[o] = keys[src];
        index_out[o] = index[src];
        a += left ? 1 : 0;
        b += left ? 0 : 1;
    }
}

// The element type only matters by width here: T is uchar, ushort, uint or ulong.
template <typename T>
[[kernel]] void sort_finish(device const T* x [[buffer(0)]],
                            device const uint* index [[buffer(1)]],
                            device T* values [[buffer(2)]],
                            device long* indices [[buffer(3)]],
                            constant SortParams& p [[buffer(4)]],
                            uint2 gid [[thread_position_in_grid]]) {
    if (gid.x >= p.n) return;
    ulong base = ulong(gid.y) * p.n, i = base + gid.x;
    uint j = index[i];
    if (p.flags & 1) values[i] = x[base + j];
    if (p.flags & 2) indices[i] = long(j);
}

template <typename T>
[[kernel]] void searchsorted(device const T* sorted [[buffer(0)]],
                             device const T* values [[buffer(1)]],
                             device long* out [[buffer(2)]],
                             constant SortParams& p [[buffer(3)]],
                             uint i [[thread_position_in_grid]]) {
    typedef typename SortKey<T>::type K;
    if (i >= p.rows) return;
    K v = pm_sort_key(values[i], false);
    bool right = p.flags != 0;
    uint lo = 0, hi = p.n;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        K s = pm_sort_key(sorted[mid], false);
        if (s < v || (right && s == v)) lo = mid + 1;
        else hi = mid;
    }
    out[i] = long(lo);
}

#define PM_SORT(name, T)                                                                          \
    template [[host_name("sort_init_" #name)]] [[kernel]] decltype(sort_init<T>) sort_init<T>;   \
    template [[host_name("searchsorted_" #name)]] [[kernel]] decltype(searchsorted<T>) searchsorted<T>;
#define PM_SORT_BITS(name, T)                                                                     \
    template [[host_name("sort_merge_" #name)]] [[kernel]] decltype(sort_merge<T>) sort_merge<T>; \
    template [[host_name("sort_finish_" #name)]] [[kernel]] decltype(sort_finish<T>) sort_finish<T>;

PM_DTYPES_ALL(PM_SORT)
PM_SORT_BITS(uint32, uint)
PM_SORT_BITS(uint64, ulong)
template [[host_name("sort_finish_uint8")]] [[kernel]] decltype(sort_finish<uchar>) sort_finish<uchar>;
template [[host_name("sort_finish_uint16")]] [[kernel]] decltype(sort_finish<ushort>) sort_finish<ushort>;
#undef PM_SORT
#undef PM_SORT_BITS
