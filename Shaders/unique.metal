// The distinct values of a sorted 1-d array (unique_values on the CPU backend,
// glue in pymetal/arrays/kernels/unique.py): an element is kept when it is the
// first or differs from the one before it (x[i] != x[i-1]: NaN != NaN, so each
// NaN is kept, as the Array API says; -0.0 == +0.0, so one zero). Read from the
// sorted array itself, so no mask array is written: a count per chunk, the
// offsets of compact.metal (compact_offsets), then a branch-free write pass.
#include "kernels_common.h"

struct UniqueParams { // CompactParams of compact.metal
    ulong n;      // elements
    uint chunk;   // elements per thread
    uint threads; // chunks
};

template <typename T> inline bool pm_unique_new(device const T* x, ulong i) {
    return i == 0 || x[i] != x[i - 1];
}

template <typename T>
[[kernel]] void unique_count(device const T* x [[buffer(0)]], device ulong* counts [[buffer(1)]],
                             constant UniqueParams& p [[buffer(2)]], uint t [[thread_position_in_grid]]) {
    if (t >= p.threads) return;
    ulong start = ulong(t) * p.chunk, end = min(start + p.chunk, p.n);
    uint c = 0;
    for (ulong i = start; i < end; i++) c += pm_unique_new(x, i) ? 1 : 0;
    counts[t] = c;
}

template <typename T>
[[kernel]] void unique_values(device const T* x [[buffer(0)]], device const ulong* offsets [[buffer(1)]],
                              device T* out [[buffer(2)]], constant UniqueParams& p [[buffer(3)]],
                              uint t [[thread_position_in_grid]]) {
    if (t >= p.threads) return;
    ulong start = ulong(t) * p.chunk, end = min(start + p.chunk, p.n);
    // Branch-free as compact_values: every element is written at o, which
    // advances past kept ones only, bounded by the next chunk's first slot.
    ulong o = offsets[t], lim = offsets[t + 1];
    for (ulong i = start; i < end; i++) {
        if (o < lim) out[o] = x[i];
        o += pm_unique_new(x, i) ? 1 : 0;
    }
}

#define PM_UNIQUE(name, T) \
    template [[host_name("unique_count_" #name)]] [[kernel]] decltype(unique_count<T>) unique_count<T>; \
    template [[host_name("unique_values_" #name)]] [[kernel]] decltype(unique_values<T>) unique_values<T>;

PM_DTYPES_ALL(PM_UNIQUE)
#undef PM_UNIQUE
