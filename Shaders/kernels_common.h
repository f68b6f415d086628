// What the matmul, sort and scan kernels share: the dtype lists their
// instantiation macros walk, and batch / row offsets from shapes and strides.
#pragma once
#include <metal_stdlib>
using namespace metal;

// M(host name suffix, MSL type) for each dtype of a family.
#define PM_DTYPES_FLOAT(M) M(float32, float) M(float16, half) M(bfloat16, bfloat)
#define PM_DTYPES_INT(M)                                                          \
    M(int8, char) M(int16, short) M(int32, int) M(int64, long)                    \
    M(uint8, uchar) M(uint16, ushort) M(uint32, uint) M(uint64, ulong)
#define PM_DTYPES_ALL(M) PM_DTYPES_FLOAT(M) PM_DTYPES_INT(M) M(bool, bool)

// A hint to bring p's cache line in ahead of its use, on the CPU backend (a
// core's own look-ahead keeps only a few misses in flight: gathers and long
// streams read faster with it, see gather.metal and reduce.h); nothing on a
// GPU, which hides memory latency with other threads.
// pm_prefetch_write: for a line about to be written (a scatter's destinations).
#if defined(__x86_64__) || defined(__aarch64__)
template <typename T> METAL_FUNC void pm_prefetch(device const T* p) { __builtin_prefetch(p); }
template <typename T> METAL_FUNC void pm_prefetch_write(device T* p) { __builtin_prefetch(p, 1); }
#else
template <typename T> METAL_FUNC void pm_prefetch(device const T*) {}
template <typename T> METAL_FUNC void pm_prefetch_write(device T*) {}
#endif

// Element offset of batch element `index` of a row-major batch shape
// (shape[0] outermost) with per-dimension element strides (0 = broadcast).
inline long pm_batch_offset(uint index, constant int* shape, constant long* strides, int ndim) {
    long offset = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        uint n = uint(shape[d]);
        offset += long(index % n) * strides[d];
        index /= n;
    }
    return offset;
}

// Products in parallel parts (Shaders/reduce.h, scan.metal). A zero part times an
// infinite one is 0 * inf = NaN, though a product of the elements one after the other
// (NumPy's) meets no such pair when the infinity is an overflow: prod([0, 1e30, 1e30]) is 0.
// So parts combine with a zero winning over an infinity, and a product whose elements
// include an infinity (pm_is_inf, noted while reading them) and comes out zero is NaN
// (pm_prod_finish): NaN where a NaN, or a zero and an infinity, are among the elements.
// Integer and complex products combine plainly.
template <typename A> inline A pm_mul_parts(A a, A b) { return a * b; }
inline float pm_mul_parts(float a, float b) {
    if ((a == 0.0f && isinf(b)) || (isinf(a) && b == 0.0f)) return copysign(0.0f, a) * copysign(1.0f, b);
    return a * b;
}
template <typename A> inline bool pm_is_inf(A) { return false; }
inline bool pm_is_inf(float v) { return isinf(v); }
template <typename A> inline A pm_prod_finish(A a, bool) { return a; }
inline float pm_prod_finish(float a, bool has_inf) { return has_inf && a == 0.0f ? NAN : a; }
