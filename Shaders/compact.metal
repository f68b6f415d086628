// CPU-shaped stream compaction (nonzero, boolean-mask indexing,
// unique_values): two passes over long contiguous chunks instead of a running
// count of every element.
//   compact_count_<dtype>:  counts[t] = the non-zero elements of chunk t
//                           (a NaN is non-zero, -0.0 is zero, as in NumPy);
//   compact_offsets:        one thread turns counts into start offsets, and
//                           counts[threads] = the total (the host reads it);
//   compact_index_<dtype>:  chunk t writes the positions of its non-zero
//                           elements (int64) from its offset on (nonzero);
//   compact_values_<bits>:  chunk t writes values[i] where keep[i] (a bool
//                           mask), elements copied by width.
// The glue (pymetal/_kernels/compact.py) uses them on the CPU backend; a GPU
// keeps the per-element scan + compact kernels.
#include "kernels_common.h"

struct CompactParams {
    ulong n;      // elements
    uint chunk;   // elements per thread
    uint threads; // chunks
};

template <typename T> inline bool pm_nonzero(T v) { return v != T(0); }
inline bool pm_nonzero(bool v) { return v; }

template <typename T>
[[kernel]] void compact_count(device const T* x [[buffer(0)]], device ulong* counts [[buffer(1)]],
                              constant CompactParams& p [[buffer(2)]], uint t [[thread_position_in_grid]]) {
    if (t >= p.threads) return;
    ulong start = ulong(t) * p.chunk, end = min(start + p.chunk, p.n);
    uint c = 0;
    for (ulong i = start; i < end; i++) c += pm_nonzero(x[i]) ? 1 : 0;
    counts[t] = c;
}

[[kernel]] void compact_offsets(device ulong* counts [[buffer(0)]], constant CompactParams& p [[buffer(1)]],
                                uint t [[thread_position_in_grid]]) {
    if (t != 0) return;
    ulong sum = 0;
    for (uint j = 0; j < p.threads; j++) {
        ulong c = counts[j];
        counts[j] = sum;
        sum += c;
    }
    counts[p.threads] = sum;
}

template <typename T>
[[kernel]] void compact_index(device const T* x [[buffer(0)]], device const ulong* offsets [[buffer(1)]],
                              device long* out [[buffer(2)]], constant CompactParams& p [[buffer(3)]],
                              uint t [[thread_position_in_grid]]) {
    if (t >= p.threads) return;
    ulong start = ulong(t) * p.chunk, end = min(start + p.chunk, p.n);
    // Branch-free (a mask of random density mispredicts half the time): every
    // element is written at o, which advances past kept ones only; the writes
    // after this chunk's last kept element would land on the next chunk's
    // first slot, hence the (predictable) bound.
    ulong o = offsets[t], lim = offsets[t + 1];
    for (ulong i = start; i < end; i++) {
        if (o < lim) out[o] = long(i);
        o += pm_nonzero(x[i]) ? 1 : 0;
    }
}

template <typename T>
[[kernel]] void compact_values(device const bool* keep [[buffer(0)]], device const T* values [[buffer(1)]],
                               device const ulong* offsets [[buffer(2)]], device T* out [[buffer(3)]],
                               constant CompactParams& p [[buffer(4)]], uint t [[thread_position_in_grid]]) {
    if (t >= p.threads) return;
    ulong start = ulong(t) * p.chunk, end = min(start + p.chunk, p.n);
    ulong o = offsets[t], lim = offsets[t + 1]; // branch-free as in compact_index
    for (ulong i = start; i < end; i++) {
        if (o < lim) out[o] = values[i];
        o += keep[i] ? 1 : 0;
    }
}

#define PM_COMPACT(name, T)                                                                              \
    template [[host_name("compact_count_" #name)]] [[kernel]] decltype(compact_count<T>) compact_count<T>; \
    template [[host_name("compact_index_" #name)]] [[kernel]] decltype(compact_index<T>) compact_index<T>;
PM_DTYPES_ALL(PM_COMPACT)
#undef PM_COMPACT
template [[host_name("compact_values_8")]] [[kernel]] decltype(compact_values<uchar>) compact_values<uchar>;
template [[host_name("compact_values_16")]] [[kernel]] decltype(compact_values<ushort>) compact_values<ushort>;
template [[host_name("compact_values_32")]] [[kernel]] decltype(compact_values<uint>) compact_values<uint>;
template [[host_name("compact_values_64")]] [[kernel]] decltype(compact_values<ulong>) compact_values<ulong>;
