// Reductions over one axis of a contiguous (outer, n, inner) layout:
// out[o, c, j] = op over r in chunk c of x[o, r, j].
//
// The host reduces any set of axes through this form (moving axes first when
// they are not adjacent) and runs passes until one chunk is left: each pass
// writes per-chunk partials in the accumulator type A (float for half and
// bfloat, 64-bit for integer sums), so sums are accumulated blockwise, not in
// one long serial chain.
//
// Two shapes of work per thread, both barrier-free:
//   reduce_row  (inner == 1): a thread reduces a contiguous chunk of a row with
//               independent accumulators (RowLanes; vectorised on a CPU);
//   reduce_col  (inner > 1): a thread reduces a chunk of rows for COLS adjacent
//               columns, reading each row's columns contiguously.
// On the CPU backend a thread's work is one contiguous stream; GPU-shaped
// variants (SIMD-group reductions over coalesced reads) are a follow-up.
#pragma once
#include "kernels_common.h"
#include "layout.h"
#include "ops.h"

struct ReduceParams {
    ulong n;       // reduced length
    ulong inner;   // distance between consecutive reduced elements (1: rows)
    ulong chunk;   // reduced elements per thread
    uint nchunks;  // chunks per reduction (partials written per row / column)
};

template <typename T> struct Lowest { static T value() { return T(0); } };
template <> struct Lowest<float> { static float value() { return -INFINITY; } };
template <> struct Lowest<half> { static half value() { return half(-INFINITY); } };
template <> struct Lowest<bfloat> { static bfloat value() { return bfloat(-INFINITY); } };
template <> struct Lowest<char> { static char value() { return char(-128); } };
template <> struct Lowest<short> { static short value() { return short(-32768); } };
template <> struct Lowest<int> { static int value() { return int(0x80000000); } };
template <> struct Lowest<long> { static long value() { return long(0x8000000000000000UL); } };
template <typename T> struct Highest { static T value() { return T(~T(0)); } };
template <> struct Highest<bool> { static bool value() { return true; } };
template <> struct Highest<float> { static float value() { return INFINITY; } };
template <> struct Highest<half> { static half value() { return half(INFINITY); } };
template <> struct Highest<bfloat> { static bfloat value() { return bfloat(INFINITY); } };
template <> struct Highest<char> { static char value() { return char(127); } };
template <> struct Highest<short> { static short value() { return short(32767); } };
template <> struct Highest<int> { static int value() { return int(0x7fffffff); } };
template <> struct Highest<long> { static long value() { return long(0x7fffffffffffffffUL); } };

// Reduction functors over the accumulator type A.
struct RSum  { template <typename A> static A init() { return A(0); } template <typename A> static A f(A a, A b) { return A(a + b); } };
struct RProd { template <typename A> static A init() { return A(1); } template <typename A> static A f(A a, A b) { return A(a * b); } };
struct RMax  { template <typename A> static A init() { return Lowest<A>::value(); } template <typename A> static A f(A a, A b) { return Max()(a, b); } };
struct RMin  { template <typename A> static A init() { return Highest<A>::value(); } template <typename A> static A f(A a, A b) { return Min()(a, b); } };
struct RAll  { template <typename A> static A init() { return A(true); } template <typename A> static A f(A a, A b) { return a && b; } };
struct RAny  { template <typename A> static A init() { return A(false); } template <typename A> static A f(A a, A b) { return a || b; } };

// How partial results combine, for all but float products: as the elements do.
// step is reduce_row's update of one lane by one element.
template <typename Op> struct ROps {
    template <typename A> static A step(A a, A v) { return Op::f(a, v); }
    template <typename A> static A combine(A a, A b) { return Op::f(a, b); }
    template <typename A> static bool poisons(A) { return false; }
    template <typename A> static A finish(A a, bool) { return a; }
};
// max / min: reduce_row's lanes skip NaN (a plain compare and select: Max()'s
// NaN test on the accumulator lengthens each lane's dependency chain by a
// third) and note NaN elements apart, which make the result NaN at the end.
template <typename A> METAL_FUNC A pm_nan_like(A a) { return a; }  // integers: never NaN
METAL_FUNC float pm_nan_like(float) { return NAN; }
METAL_FUNC half pm_nan_like(half) { return half(NAN); }
METAL_FUNC bfloat pm_nan_like(bfloat) { return bfloat(NAN); }
template <typename Op, bool IsMax> struct RExtremeOps {
    template <typename A> static A step(A a, A v) { return (IsMax ? v > a : v < a) ? v : a; }
    template <typename A> static A combine(A a, A b) { return Op::f(a, b); }
    template <typename A> static bool poisons(A v) { return is_nan(v); }
    template <typename A> static A finish(A a, bool has_nan) { return has_nan ? pm_nan_like(a) : a; }
};
template <> struct ROps<RMax> : RExtremeOps<RMax, true> {};
template <> struct ROps<RMin> : RExtremeOps<RMin, false> {};
// Products: parts combine as in kernels_common.h (pm_mul_parts), so that a zero and an
// overflow in two lanes do not make NaN. The host reduces float products in one chunk per
// result: partials written between passes could not tell an infinite element from an overflow.
template <> struct ROps<RProd> {
    template <typename A> static A step(A a, A v) { return RProd::f(a, v); }
    template <typename A> static A combine(A a, A b) { return pm_mul_parts(a, b); }
    template <typename A> static bool poisons(A v) { return pm_is_inf(v); }
    template <typename A> static A finish(A a, bool has_inf) { return pm_prod_finish(a, has_inf); }
};

// x[0] converted to the accumulator type through a thread-space copy: on Metal a
// conversion operator (cfloat -> bool for all/any) cannot be called on an object
// in device memory.
template <typename A, typename T> METAL_FUNC A load_as(device const T* x) { T v = *x; return static_cast<A>(v); }

#define PM_RED_LANES 16
#define PM_RED_COLS 16

// Independent accumulators per thread of the row kernels. Sums and products keep
// PM_RED_LANES: their blockwise order is part of their float results. Float max
// and min keep 64, four AVX-512 registers of float, so
// that the float compare's latency does not bound the read rate (one register's
// chain made max 30% slower than NumPy's; half, converted to float, 2.5x).
// Integer compares are fast enough with 16 (more measured no faster).
template <typename A> struct ExtremeLanes { enum { value = PM_RED_LANES }; };
template <> struct ExtremeLanes<float> { enum { value = 64 }; };
template <> struct ExtremeLanes<half> { enum { value = 64 }; };
template <> struct ExtremeLanes<bfloat> { enum { value = 64 }; };
template <typename Op, typename A> struct RowLanes { enum { value = PM_RED_LANES }; };
template <typename A> struct RowLanes<RMax, A> : ExtremeLanes<A> {};
template <typename A> struct RowLanes<RMin, A> : ExtremeLanes<A> {};
// On the loop over blocks of lanes: its body (every lane, unrolled) vectorises as
// whole registers; clang would otherwise vectorise across blocks with gathers
// (64 int32 lanes ran at half the speed of 16).
#define PM_LANES_LOOP _Pragma("clang loop vectorize(disable)")
// How far ahead the row loops prefetch on a CPU (pm_prefetch), in bytes: the
// hardware's own stream prefetch left one core reading 16M int32 for max at
// 1.97 ms (NumPy 1.68); 8 KiB ahead 1.59 ms (float32 1.87 -> 1.68 ms; 512 B
// and 32 KiB gained less).
#define PM_RED_PREFETCH 8192
template <typename T> METAL_FUNC void pm_prefetch_ahead(device const T* p, int count) {
    for (int b = 0; b < int(count * sizeof(T)); b += 64)  // each 64-byte line of p[0, count)
        pm_prefetch((device const char*)p + PM_RED_PREFETCH + b);
}

template <typename T, typename A, typename Op>
[[kernel]] void reduce_row(device const T* x [[buffer(0)]], device A* out [[buffer(1)]],
                           constant ReduceParams& p [[buffer(2)]], uint2 pos [[thread_position_in_grid]]) {
    ulong start = ulong(pos.x) * p.chunk;
    ulong end = min(start + p.chunk, p.n);
    device const T* row = x + ulong(pos.y) * p.n;
    constexpr int L = RowLanes<Op, A>::value;
    A acc[L];
    for (int k = 0; k < L; k++) acc[k] = Op::template init<A>();
    bool poisoned = false;
    ulong i = start;
    PM_LANES_LOOP
    for (; i + L <= end; i += L) {
        pm_prefetch_ahead(row + i, L);
        for (int k = 0; k < L; k++) {
            A v = load_as<A>(row + i + k);
            poisoned |= ROps<Op>::poisons(v);
            acc[k] = ROps<Op>::step(acc[k], v);
        }
    }
    for (int k = 0; i < end; i++, k++) {
        A v = load_as<A>(row + i);
        poisoned |= ROps<Op>::poisons(v);
        acc[k] = ROps<Op>::step(acc[k], v);
    }
    for (int w = L / 2; w > 0; w /= 2)
        for (int k = 0; k < w; k++) acc[k] = ROps<Op>::combine(acc[k], acc[k + w]);
    out[ulong(pos.y) * p.nchunks + pos.x] = ROps<Op>::finish(acc[0], poisoned);
}

// COLS columns per thread: 64 on the CPU (a thread reads 256 contiguous bytes
// of each row), 1 on a GPU (threads side by side read a row coalesced).
template <typename T, typename A, typename Op, int COLS>
[[kernel]] void reduce_col(device const T* x [[buffer(0)]], device A* out [[buffer(1)]],
                           constant ReduceParams& p [[buffer(2)]], uint3 pos [[thread_position_in_grid]]) {
    ulong j0 = ulong(pos.x) * COLS;
    if (j0 >= p.inner) return;
    ulong start = ulong(pos.y) * p.chunk;
    ulong end = min(start + p.chunk, p.n);
    device const T* base = x + ulong(pos.z) * p.n * p.inner;
    device A* dst = out + (ulong(pos.z) * p.nchunks + pos.y) * p.inner;
    if (j0 + COLS <= p.inner) {
        A acc[COLS];
        for (int k = 0; k < COLS; k++) acc[k] = Op::template init<A>();
        for (ulong r = start; r < end; r++) {
            device const T* src = base + r * p.inner + j0;
            for (int k = 0; k < COLS; k++) acc[k] = Op::f(acc[k], load_as<A>(src + k));
        }
        for (int k = 0; k < COLS; k++) dst[j0 + k] = acc[k];
    } else {  // the last, partial block of columns
        for (ulong j = j0; j < p.inner; j++) {
            A acc = Op::template init<A>();
            for (ulong r = start; r < end; r++) acc = Op::f(acc, load_as<A>(base + r * p.inner + j));
            dst[j] = acc;
        }
    }
}

// argmax / argmin: values and int64 indices of the first extreme element
// (NaN counts as the extreme, as in NumPy). Later passes take the previous
// pass's values and indices (HasIdx).
struct ArgMax {
    template <typename T> static T init() { return Lowest<T>::value(); }
    template <typename T> static T pick(T m, T v) { return v > m ? v : m; }  // NaN never picked
    template <typename T> static bool better(T a, T b) { return (is_nan(a) && !is_nan(b)) || a > b; }
};
struct ArgMin {
    template <typename T> static T init() { return Highest<T>::value(); }
    template <typename T> static T pick(T m, T v) { return v < m ? v : m; }
    template <typename T> static bool better(T a, T b) { return (is_nan(a) && !is_nan(b)) || a < b; }
};

template <typename T, typename Cmp, bool HasIdx>
[[kernel]] void argreduce_row(device const T* x [[buffer(0)]], device const long* xi [[buffer(1)]],
                              device T* vals [[buffer(2)]], device long* idx [[buffer(3)]],
                              constant ReduceParams& p [[buffer(4)]], uint2 pos [[thread_position_in_grid]]) {
    ulong start = ulong(pos.x) * p.chunk;
    ulong end = min(start + p.chunk, p.n);
    device const T* row = x + ulong(pos.y) * p.n;
    // Blocks of 256 elements: the extreme of each in independent lanes (vectorised
    // on a CPU; 32 for integers, whose 16 ran 1.2-2x slower here), and whether a NaN occurs; the
    // first block whose extreme beats the earlier ones' is the one scanned again
    // for the position (256 elements from the cache: rescanning the chunk from its
    // start cost argmax a third more than max).
    constexpr int L = ExtremeLanes<T>::value > 32 ? ExtremeLanes<T>::value : 32;
    constexpr int B = 256;
    T best = Cmp::template init<T>();
    ulong from = start;
    bool nan_seen = false;
    ulong i = start;
    for (; i + B <= end; i += B) {
        T m[L];
        for (int k = 0; k < L; k++) m[k] = Cmp::template init<T>();
        pm_prefetch_ahead(row + i, B);
        PM_LANES_LOOP
        for (int j = 0; j < B; j += L)
            for (int k = 0; k < L; k++) {
                T v = row[i + j + k];
                nan_seen |= is_nan(v);
                m[k] = Cmp::pick(m[k], v);
            }
        for (int w = L / 2; w > 0; w /= 2)  // a tree, which vectorises
            for (int k = 0; k < w; k++) m[k] = Cmp::pick(m[k], m[k + w]);
        if (Cmp::better(m[0], best)) { best = m[0]; from = i; }  // (m[0] is not NaN)
    }
    for (ulong j = i; j < end; j++) {
        T v = row[j];
        nan_seen |= is_nan(v);
        if (!is_nan(v) && Cmp::better(v, best)) { best = v; from = j; }
    }
    // The first element equal to best from `from` on (all elements equal to the
    // initial value: the chunk's start); the first NaN if there is one.
    ulong at = nan_seen ? start : from;
    if (nan_seen) {
        while (at + 1 < end && !is_nan(row[at])) at++;
        best = row[at];
    } else {
        while (at + 1 < end && row[at] != best) at++;
    }
    ulong o = ulong(pos.y) * p.nchunks + pos.x;
    vals[o] = best;
    idx[o] = HasIdx ? xi[ulong(pos.y) * p.n + at] : long(at);
}

template <typename T, typename Cmp, bool HasIdx>
[[kernel]] void argreduce_col(device const T* x [[buffer(0)]], device const long* xi [[buffer(1)]],
                              device T* vals [[buffer(2)]], device long* idx [[buffer(3)]],
                              constant ReduceParams& p [[buffer(4)]], uint3 pos [[thread_position_in_grid]]) {
    ulong j0 = ulong(pos.x) * PM_RED_COLS;
    if (j0 >= p.inner) return;
    ulong jend = min(j0 + PM_RED_COLS, p.inner);
    ulong start = ulong(pos.y) * p.chunk;
    ulong end = min(start + p.chunk, p.n);
    ulong base = ulong(pos.z) * p.n * p.inner;
    ulong dst = (ulong(pos.z) * p.nchunks + pos.y) * p.inner;
    for (ulong j = j0; j < jend; j++) {
        T best = x[base + start * p.inner + j];
        ulong at = start;
        for (ulong r = start + 1; r < end; r++) {
            T v = x[base + r * p.inner + j];
            if (Cmp::better(v, best)) { best = v; at = r; }
        }
        vals[dst + j] = best;
        idx[dst + j] = HasIdx ? xi[base + at * p.inner + j] : long(at);
    }
}

// ---- GPU-shaped variant (Apple GPUs) --------------------------------------------
// A threadgroup reduces one chunk of a row: its threads read the chunk with
// coalesced strides, combine across the SIMD-group with shuffles and across
// SIMD-groups through threadgroup memory. Chosen by the host on the Metal
// backend; the CPU backend runs it too (as fibers), which the tests use.
template <typename A> METAL_FUNC A simd_down(A v, ushort d) { return simd_shuffle_down(v, d); }
METAL_FUNC long simd_down(long v, ushort d) { return as_type<long>(simd_shuffle_down(as_type<uint2>(v), d)); }
METAL_FUNC ulong simd_down(ulong v, ushort d) { return as_type<ulong>(simd_shuffle_down(as_type<uint2>(v), d)); }
METAL_FUNC bool simd_down(bool v, ushort d) { return bool(simd_shuffle_down(ushort(v), d)); }
METAL_FUNC cfloat simd_down(cfloat v, ushort d) { return cfloat(simd_shuffle_down(v.re, d), simd_shuffle_down(v.im, d)); }

template <typename A, typename Op> METAL_FUNC A simd_reduce(A v, uint lane_count) {
    for (ushort d = 16; d > 0; d /= 2) {
        A o = simd_down(v, d);
        v = ROps<Op>::combine(v, o);
    }
    return v;
}

template <typename T, typename A, typename Op>
[[kernel]] void reduce_row_simd(device const T* x [[buffer(0)]], device A* out [[buffer(1)]],
                                constant ReduceParams& p [[buffer(2)]],
                                uint2 group [[threadgroup_position_in_grid]],
                                uint tid [[thread_index_in_threadgroup]], uint tgsize [[threads_per_threadgroup]],
                                uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                                uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup A partial[32];
    threadgroup bool partial_poisoned[32];
    ulong start = ulong(group.x) * p.chunk;
    ulong end = min(start + p.chunk, p.n);
    device const T* row = x + ulong(group.y) * p.n;
    A acc = Op::template init<A>();
    bool poisoned = false;
    for (ulong i = start + tid; i < end; i += tgsize) {
        A v = load_as<A>(row + i);
        poisoned |= ROps<Op>::poisons(v);
        acc = Op::f(acc, v);
    }
    // Lanes past the end of a partial SIMD-group hold the identity, so a full shuffle tree is safe.
    acc = simd_reduce<A, Op>(acc, 32);
    poisoned = simd_reduce<bool, RAny>(poisoned, 32);
    if (lane == 0) { partial[sg] = acc; partial_poisoned[sg] = poisoned; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        A v = lane < nsg ? partial[lane] : Op::template init<A>();
        v = simd_reduce<A, Op>(v, 32);
        bool pv = simd_reduce<bool, RAny>(lane < nsg && partial_poisoned[lane], 32);
        if (lane == 0) out[ulong(group.y) * p.nchunks + group.x] = ROps<Op>::finish(v, pv);
    }
}
