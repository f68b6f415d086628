// take along an axis with unit inner stride: out[o, j] = x[o, idx[j]] for a
// contiguous (outer, n) x and int64 indices (negative ones count from the
// end), elements copied by width (uchar .. ulong: every dtype, bit for bit).
// Each thread handles `chunk` consecutive indices: long runs on the CPU
// backend (a loop the compiler vectorises with gather loads), 1 on a GPU
// (neighbouring threads, coalesced index reads). The range check is part of
// the pass: a thread that meets an index outside [-n, n) writes 0 in its
// place and sets bad[thread] (one byte per thread, so no atomics and no
// zeroing), which the host reads to raise IndexError. Glue:
// pymetal/arrays/kernels/gather.py.
//
// On a CPU each x[i] of a large x is a cache (and often DRAM) miss that the
// core's own look-ahead overlaps only a few deep: prefetching the element
// TAKE_PREFETCH indices ahead keeps many misses in flight (take 16M from 16M
// float32: 163 -> 42 ms, NumPy 125 ms; 1M from 1M with cold caches 2.9 -> 1.6
// ms, NumPy 2.1 ms; one core, loaded machine; pm_prefetch is nothing on a GPU).
#include "kernels_common.h"

#define TAKE_PREFETCH 128  // indices ahead: 64 ran at 67 ms at 16M, 128 and 256 at 41-42 ms

struct TakeParams {
    ulong n;      // length of the indexed axis
    ulong m;      // number of indices
    uint chunk;   // indices per thread
    uint threads; // threads per row of the grid (bad[] has threads * outer bytes)
};

template <typename T>
[[kernel]] void take_chunk(device const T* x [[buffer(0)]], device const long* idx [[buffer(1)]],
                           device T* out [[buffer(2)]], device uchar* bad [[buffer(3)]],
                           constant TakeParams& p [[buffer(4)]], uint2 pos [[thread_position_in_grid]]) {
    if (pos.x >= p.threads) return;
    ulong start = ulong(pos.x) * p.chunk, end = min(start + p.chunk, p.m);
    device const T* row = x + ulong(pos.y) * p.n;
    device T* o = out + ulong(pos.y) * p.m;
    long n = long(p.n);
    bool b = false;
    for (ulong j = start; j < end; j++) {
        // Past the chunk's end too: the next thread on this core takes those.
        long q = idx[min(j + TAKE_PREFETCH, p.m - 1)];
        q += q < 0 ? n : 0;
        pm_prefetch(row + (ulong(q) < ulong(n) ? q : 0));
        long i = idx[j];
        i += i < 0 ? n : 0;
        bool ok = ulong(i) < ulong(n);
        b |= !ok;
        o[j] = ok ? row[i] : T(0);
    }
    bad[ulong(pos.y) * p.threads + pos.x] = b ? 1 : 0;
}

template [[host_name("take_chunk_8")]] [[kernel]] decltype(take_chunk<uchar>) take_chunk<uchar>;
template [[host_name("take_chunk_16")]] [[kernel]] decltype(take_chunk<ushort>) take_chunk<ushort>;
template [[host_name("take_chunk_32")]] [[kernel]] decltype(take_chunk<uint>) take_chunk<uint>;
template [[host_name("take_chunk_64")]] [[kernel]] decltype(take_chunk<ulong>) take_chunk<ulong>;
