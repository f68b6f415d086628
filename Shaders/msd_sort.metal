// CPU-shaped stable sort of ONE long contiguous row (the CPU backend's sort /
// argsort of 1-d arrays; glue in pymetal/arrays/kernels/msd_sort.py): most
// significant digit first, so that both cores work and most passes run in cache.
//
//   msd_range    per chunk: the least and greatest sort key (sort.h's keys).
//   msd_count    per chunk: a histogram of the top digit: the top_bits (8-11)
//                bits below the bits that all keys share (so that data of one
//                binade or small integers still spread over the buckets).
//   msd_scan     one thread: each chunk's first position in each bucket
//                (buckets in order, chunks in order within a bucket: stable).
//   msd_scatter  per chunk: the elements (and their positions) into the buckets.
//   msd_finish   buckets, each sorted on its own over the key bits that vary in
//                it (one vectorised read finds them). A bucket is ~4K elements
//                of evenly spread keys (the glue picks top_bits), so these
//                passes run in cache; a
//                bucket too big for the cache whose keys vary in more than 11
//                bits first splits once more by its highest varying bits. Then
//                an LSD radix sort (one read counts every digit, a stable
//                scatter per digit), or an insertion sort for a few elements.
//
// The chunked passes (range, count, scatter) are one chunk per threadgroup,
// chunks of equal size: the CPU backend runs a dispatch as runs of contiguous
// threadgroups that its threads take in turn, and judges from its own runs
// whether splitting paid. msd_finish's workers (thread 0 of each threadgroup)
// take buckets one at a time from a shared counter, as buckets differ in size;
// where a bucket's result goes does not depend on which worker took it. Only
// thread 0 of each threadgroup works: the glue pads the groups with idle
// threads so that the CPU backend wakes its workers for the dispatch.
//
// Buffers: values ping-pong between A and B (top-level scatter into A); the
// last pass of each bucket writes `out` (the caller's values, or scratch when
// only indices are wanted) and, with indices wanted, `iout` (int64). The
// elements themselves move, so -0.0 and NaN payloads come out bit for bit.
#include "sort.h"

struct MsdParams {
    uint n;          // row length (< 2^30)
    uint chunks;     // chunks of the parallel passes
    uint chunk;      // elements per chunk (the last may be shorter)
    uint descending; // 1: keys of descending order
    uint flags;      // bit 1: positions wanted
    uint top_bits;   // bits of the top digit (at most 11)
};

#define PM_MSD_BITS 11
#define PM_MSD_RADIX (1u << PM_MSD_BITS)
#define PM_MSD_SMALL 32      // buckets up to this size: insertion sort
#define PM_MSD_SPLIT (256u << 10) // buckets of more bytes (values and positions) split once more first

template <typename K> inline uint pm_high_bit(K diff) {
    return uint(8 * sizeof(K) - 1) - uint(clz(diff));
}

// The shift of a digit of `bits` bits that ends at the highest bit where the
// least and greatest keys differ.
template <typename K> inline uint pm_msd_shift(K lo, K hi, uint bits) {
    K diff = lo ^ hi;
    uint h = diff == K(0) ? 0u : pm_high_bit(diff);
    return h >= bits - 1 ? h - (bits - 1) : 0u;
}

template <typename K> inline uint pm_msd_top_shift(device const K* range, constant MsdParams& p) {
    K lo = range[0], hi = range[1];
    for (uint c = 1; c < p.chunks; c++) {
        lo = min(lo, range[2 * c]);
        hi = max(hi, range[2 * c + 1]);
    }
    return pm_msd_shift(lo, hi, p.top_bits);
}

template <typename T>
[[kernel]] void msd_range(device const T* x [[buffer(0)]],
                          device typename SortKey<T>::type* range [[buffer(1)]],
                          constant MsdParams& p [[buffer(2)]],
                          uint c [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]]) {
    typedef typename SortKey<T>::type K;
    if (tid != 0 || c >= p.chunks) return;
    uint s = c * p.chunk, e = min(p.n, s + p.chunk);
    bool desc = p.descending != 0;
    K lo = pm_sort_key(x[s], desc), hi = lo;
    for (uint i = s + 1; i < e; i++) {
        K k = pm_sort_key(x[i], desc);
        lo = min(lo, k);
        hi = max(hi, k);
    }
    range[2 * c] = lo;
    range[2 * c + 1] = hi;
}

// counts: [bucket][chunk] for the 2^top_bits buckets, then the 2049 bucket
// starts and msd_finish's counter of taken buckets (msd_scan).
template <typename T>
[[kernel]] void msd_count(device const T* x [[buffer(0)]],
                          device const typename SortKey<T>::type* range [[buffer(1)]],
                          device uint* counts [[buffer(2)]],
                          constant MsdParams& p [[buffer(3)]],
                          uint c [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]]) {
    if (tid != 0 || c >= p.chunks) return;
    uint shift = pm_msd_top_shift(range, p);
    uint s = c * p.chunk, e = min(p.n, s + p.chunk), i = s;
    bool desc = p.descending != 0;
    const uint mask = (1u << p.top_bits) - 1;
    // Four histograms, for consecutive elements in turn: skewed data (floats
    // of [0, 1) put half of them in a few buckets) would otherwise make each
    // increment wait for the one before on the same counter.
    uint hist[4][PM_MSD_RADIX];
    for (uint h = 0; h < 4; h++)
        for (uint d = 0; d <= mask; d++) hist[h][d] = 0;
    for (; i + 4 <= e; i += 4)
        for (uint h = 0; h < 4; h++) hist[h][uint(pm_sort_key(x[i + h], desc) >> shift) & mask]++;
    for (; i < e; i++) hist[0][uint(pm_sort_key(x[i], desc) >> shift) & mask]++;
    for (uint d = 0; d <= mask; d++) counts[d * p.chunks + c] = hist[0][d] + hist[1][d] + hist[2][d] + hist[3][d];
}

[[kernel]] void msd_scan(device uint* counts [[buffer(0)]],
                         constant MsdParams& p [[buffer(1)]],
                         uint gid [[thread_position_in_grid]]) {
    if (gid != 0) return;
    device uint* starts = counts + PM_MSD_RADIX * p.chunks;
    uint sum = 0;
    for (uint d = 0; d < PM_MSD_RADIX; d++) {
        starts[d] = sum;
        if (d >> p.top_bits) continue; // no such bucket: empty
        for (uint c = 0; c < p.chunks; c++) {
            uint k = counts[d * p.chunks + c];
            counts[d * p.chunks + c] = sum;
            sum += k;
        }
    }
    starts[PM_MSD_RADIX] = sum;
    starts[PM_MSD_RADIX + 1] = 0; // msd_finish's next bucket
}

template <typename T>
[[kernel]] void msd_scatter(device const T* x [[buffer(0)]],
                            device const typename SortKey<T>::type* range [[buffer(1)]],
                            device const uint* counts [[buffer(2)]],
                            device T* va [[buffer(3)]],
                            device uint* ia [[buffer(4)]],
                            constant MsdParams& p [[buffer(5)]],
                            uint c [[threadgroup_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]]) {
    if (tid != 0 || c >= p.chunks) return;
    uint shift = pm_msd_top_shift(range, p);
    uint s = c * p.chunk, e = min(p.n, s + p.chunk);
    bool desc = p.descending != 0;
    const uint mask = (1u << p.top_bits) - 1;
    uint next[PM_MSD_RADIX];
    for (uint d = 0; d <= mask; d++) next[d] = counts[d * p.chunks + c];
    if ((p.flags & 2) != 0) {
        for (uint i = s; i < e; i++) {
            T v = x[i];
            uint o = next[uint(pm_sort_key(v, desc) >> shift) & mask]++;
            pm_prefetch_write(va + o + 64 / sizeof(T));
            pm_prefetch_write(ia + o + 16);
            va[o] = v;
            ia[o] = i;
        }
    } else {
        for (uint i = s; i < e; i++) {
            T v = x[i];
            uint o = next[uint(pm_sort_key(v, desc) >> shift) & mask]++;
            pm_prefetch_write(va + o + 64 / sizeof(T));
            va[o] = v;
        }
    }
}

// One bucket's buffers: v[0], v[1] (and i[0], i[1]) ping-pong; out / iout final.
template <typename T> struct MsdBufs {
    device T* v[2];
    device uint* i[2];
    device T* out;
    device long* iout;
    bool index;
    bool desc;
};

template <typename T> inline void pm_msd_copy_out(thread const MsdBufs<T>& b, uint s, uint m, uint w) {
    for (uint j = s; j < s + m; j++) b.out[j] = b.v[w][j];
    if (b.index)
        for (uint j = s; j < s + m; j++) b.iout[j] = long(b.i[w][j]);
}

// Stable insertion sort of [s, s + m) of buffer w into out / iout.
template <typename T> inline void pm_msd_insertion(thread const MsdBufs<T>& b, uint s, uint m, uint w) {
    typedef typename SortKey<T>::type K;
    for (uint j = s; j < s + m; j++) {
        T v = b.v[w][j];
        K k = pm_sort_key(v, b.desc);
        long ix = b.index ? long(b.i[w][j]) : 0;
        uint t = j;
        while (t > s && pm_sort_key(b.out[t - 1], b.desc) > k) {
            b.out[t] = b.out[t - 1];
            if (b.index) b.iout[t] = b.iout[t - 1];
            t--;
        }
        b.out[t] = v;
        if (b.index) b.iout[t] = ix;
    }
}

// The key bits that vary in [s, s + m) of buffer w (one vectorised read).
template <typename T> inline typename SortKey<T>::type pm_msd_vary(thread const MsdBufs<T>& b, uint s, uint m,
                                                                   uint w) {
    typedef typename SortKey<T>::type K;
    device const T* src = b.v[w] + s;
    const K k0 = pm_sort_key(src[0], b.desc);
    K vary = K(0);
    for (uint j = 1; j < m; j++) vary |= pm_sort_key(src[j], b.desc) ^ k0;
    return vary;
}

// LSD radix sort of [s, s + m) of buffer w, whose keys vary in the bits of
// `vary` only, into out / iout. Digits cover only the bits that vary, so bits
// equal in the whole bucket cost no pass and no counting (counting a digit that
// every element shares is a chain of increments of one counter, each waiting
// for the last). hist: scratch of at least 12,288 counters.
template <typename T> inline void pm_msd_lsd(thread const MsdBufs<T>& b, uint s, uint m, uint w,
                                             typename SortKey<T>::type vary, thread uint* hist) {
    typedef typename SortKey<T>::type K;
    if (vary == K(0)) {
        pm_msd_copy_out(b, s, m, w);
        return;
    }
    if (m <= PM_MSD_SMALL) {
        pm_msd_insertion(b, s, m, w);
        return;
    }
    device const T* src = b.v[w] + s;
    const K k0 = pm_sort_key(src[0], b.desc);
    const uint lo = uint(ctz(vary)), span = pm_high_bit(vary) + 1 - lo;
    // Digits of at most 8 bits for small buckets (fewer counters to clear and
    // scan), 11 above; as many passes as that takes, the bits spread evenly over
    // them (19 bits: 10 + 9, fewer places to scatter to than 11 + 8).
    const uint widest = m < 2048 ? 8u : 11u, passes = (span + widest - 1) / widest;
    const uint db = (span + passes - 1) / passes, radix = 1u << db, mask = radix - 1;
    for (uint j = 0; j < passes * radix; j++) hist[j] = 0;
    for (uint j = 0; j < m; j++) {
        K k = pm_sort_key(src[j], b.desc) >> lo;
        for (uint q = 0; q < passes; q++) hist[q * radix + (uint(k >> (q * db)) & mask)]++;
    }
    uint active[8], nact = 0; // a digit can still be equal throughout (bits vary on both sides of it)
    for (uint q = 0; q < passes; q++)
        if (hist[q * radix + (uint((k0 >> lo) >> (q * db)) & mask)] != m) active[nact++] = q;
    uint cur = w;
    for (uint a = 0; a < nact; a++) {
        uint q = active[a], shift = lo + q * db;
        thread uint* next = hist + q * radix;
        uint sum = 0;
        for (uint d = 0; d < radix; d++) {
            uint k = next[d];
            next[d] = sum;
            sum += k;
        }
        bool last = a == nact - 1;
        device const T* vs = b.v[cur] + s;
        device T* vd = (last ? b.out : b.v[cur ^ 1]) + s;
        if (!b.index) {
            for (uint j = 0; j < m; j++) {
                T v = vs[j];
                uint o = next[uint(pm_sort_key(v, b.desc) >> shift) & mask]++;
                pm_prefetch_write(vd + o + 64 / sizeof(T));
                vd[o] = v;
            }
        } else {
            device const uint* is = b.i[cur] + s;
            if (last) {
                device long* id = b.iout + s;
                for (uint j = 0; j < m; j++) {
                    T v = vs[j];
                    uint o = next[uint(pm_sort_key(v, b.desc) >> shift) & mask]++;
                    pm_prefetch_write(vd + o + 64 / sizeof(T));
                    pm_prefetch_write(id + o + 8);
                    vd[o] = v;
                    id[o] = long(is[j]);
                }
            } else {
                device uint* id = b.i[cur ^ 1] + s;
                for (uint j = 0; j < m; j++) {
                    T v = vs[j];
                    uint o = next[uint(pm_sort_key(v, b.desc) >> shift) & mask]++;
                    pm_prefetch_write(vd + o + 64 / sizeof(T));
                    pm_prefetch_write(id + o + 16);
                    vd[o] = v;
                    id[o] = is[j];
                }
            }
        }
        cur ^= 1;
    }
}

// A bucket [s, s + m) of buffer w.
template <typename T> inline void pm_msd_bucket(thread const MsdBufs<T>& b, uint s, uint m, uint w,
                                                thread uint* hist, thread uint* sub) {
    typedef typename SortKey<T>::type K;
    K vary = m <= PM_MSD_SMALL ? ~K(0) : pm_msd_vary(b, s, m, w);
    if (ulong(m) * (sizeof(T) + (b.index ? 4 : 0)) <= PM_MSD_SPLIT || vary == K(0) ||
        pm_high_bit(vary) - uint(ctz(vary)) < PM_MSD_BITS) { // in cache, or one pass does
        pm_msd_lsd(b, s, m, w, vary, hist);
        return;
    }
    // Too big for the cache: split once more by the highest bits that vary,
    // into pieces of ~256 elements (m > 2^14 here: 6 bits or more).
    const uint bits = min(uint(PM_MSD_BITS), pm_high_bit(m) - 8), radix = 1u << bits, mask = radix - 1;
    const uint hb = pm_high_bit(vary), shift = hb >= bits - 1 ? hb - (bits - 1) : 0u;
    device const T* src = b.v[w] + s;
    for (uint d = 0; d <= radix; d++) sub[d] = 0;
    for (uint j = 0; j < m; j++) sub[(uint(pm_sort_key(src[j], b.desc) >> shift) & mask) + 1]++;
    for (uint d = 0; d < radix; d++) sub[d + 1] += sub[d];
    for (uint d = 0; d < radix; d++) hist[d] = sub[d];
    device T* vd = b.v[w ^ 1] + s;
    device const uint* is = b.i[w] + s;
    device uint* id = b.i[w ^ 1] + s;
    for (uint j = 0; j < m; j++) {
        T v = src[j];
        uint o = hist[uint(pm_sort_key(v, b.desc) >> shift) & mask]++;
        pm_prefetch_write(vd + o + 64 / sizeof(T));
        vd[o] = v;
        if (b.index) {
            pm_prefetch_write(id + o + 16);
            id[o] = is[j];
        }
    }
    for (uint d = 0; d < radix; d++) {
        uint ss = s + sub[d], mm = sub[d + 1] - sub[d];
        if (mm != 0) pm_msd_lsd(b, ss, mm, w ^ 1, mm <= PM_MSD_SMALL ? ~K(0) : pm_msd_vary(b, ss, mm, w ^ 1), hist);
    }
}

template <typename T>
[[kernel]] void msd_finish(device uint* counts [[buffer(0)]],
                           device T* va [[buffer(1)]],
                           device T* vb [[buffer(2)]],
                           device uint* ia [[buffer(3)]],
                           device uint* ib [[buffer(4)]],
                           device T* out [[buffer(5)]],
                           device long* iout [[buffer(6)]],
                           constant MsdParams& p [[buffer(7)]],
                           uint tid [[thread_index_in_threadgroup]]) {
    if (tid != 0) return;
    device const uint* starts = counts + PM_MSD_RADIX * p.chunks;
    MsdBufs<T> b;
    b.v[0] = va;
    b.v[1] = vb;
    b.i[0] = ia;
    b.i[1] = ib;
    b.out = out;
    b.iout = iout;
    b.index = (p.flags & 2) != 0;
    b.desc = p.descending != 0;
    uint hist[6 * PM_MSD_RADIX]; // the LSD passes' counters: 64-bit keys, 53 bits in 5 digits
    uint sub[PM_MSD_RADIX + 1];
    // Buckets differ in size (floats of [0, 1) fill the last ones): taken one at a time.
    device atomic_uint* next_bucket = reinterpret_cast<device atomic_uint*>(counts + PM_MSD_RADIX * p.chunks + PM_MSD_RADIX + 1);
    for (;;) {
        uint d = atomic_fetch_add_explicit(next_bucket, 1u, memory_order_relaxed);
        if (d >= PM_MSD_RADIX) break;
        uint s = starts[d], m = starts[d + 1] - s;
        if (m != 0) pm_msd_bucket(b, s, m, 0, hist, sub);
    }
}

#define PM_MSD_SORT(name, T) \
    template [[host_name("msd_range_" #name)]] [[kernel]] decltype(msd_range<T>) msd_range<T>; \
    template [[host_name("msd_count_" #name)]] [[kernel]] decltype(msd_count<T>) msd_count<T>; \
    template [[host_name("msd_scatter_" #name)]] [[kernel]] decltype(msd_scatter<T>) msd_scatter<T>; \
    template [[host_name("msd_finish_" #name)]] [[kernel]] decltype(msd_finish<T>) msd_finish<T>;

PM_DTYPES_ALL(PM_MSD_SORT)
#undef PM_MSD_SORT
