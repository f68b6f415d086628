// Stable sort / argsort along the rows of a contiguous (rows, n) array, and
// searchsorted: parameters and sort keys. Kernels in sort.metal; glue in
// pymetal/_kernels/sort.py (its numpy dtype mirrors SortParams).
#pragma once
#include "kernels_common.h"

struct SortParams {
    uint n;          // row length (< 2^30), or the sorted array's length (searchsorted)
    uint rows;       // rows (sort), number of values (searchsorted)
    uint width;      // merge pass: length of the sorted runs merged pairwise
    uint per_thread; // merge pass: outputs per thread (a power of two dividing 2 * width)
    uint descending; // sort_init: 1 for descending order
    uint flags;      // sort_finish: bit 0 writes values, bit 1 indices; searchsorted: 1 = side "right"
};

// Every dtype sorts as an unsigned integer key with the same order: NumPy's
// order for floats (-inf < ... < -0 == +0 < ... < inf < NaN, all NaNs equal,
// so that a stable sort keeps their order), integers as numbers. Types of up to
// 32 bits use uint keys (zero-extended), 64-bit types ulong keys, so that the
// merge passes exist once per key width. Descending order is the complement of
// the key: equal elements stay equal, so stability is the same.
template <typename T> struct SortKey { typedef uint type; };
template <> struct SortKey<long> { typedef ulong type; };
template <> struct SortKey<ulong> { typedef ulong type; };

// Integer operations only (no float compares): the radix sorts compute a key
// per element and pass, and this keeps it a few cheap instructions. Sign-
// magnitude to order: negative values flip every bit, others the sign bit; all
// NaNs take the key of the positive quiet NaN (after +inf), both zeros +0's.
template <typename U> inline U pm_float_key(U bits, U sign, U exp_all_ones, U qnan) {
    U mag = U(bits & U(~sign));
    U key = (bits & sign) ? U(~bits) : U(bits | sign);
    key = mag > exp_all_ones ? U(qnan | sign) : key;
    return mag == U(0) ? sign : key;
}
inline uint pm_sort_key_raw(float x) { return pm_float_key<uint>(as_type<uint>(x), 0x80000000u, 0x7f800000u, 0x7fc00000u); }
inline uint pm_sort_key_raw(half x) { return pm_float_key<ushort>(as_type<ushort>(x), 0x8000, 0x7c00, 0x7e00); }
inline uint pm_sort_key_raw(bfloat x) { return pm_float_key<ushort>(as_type<ushort>(x), 0x8000, 0x7f80, 0x7fc0); }
inline uint pm_sort_key_raw(bool x) { return x ? 1u : 0u; }
inline uint pm_sort_key_raw(uchar x) { return x; }
inline uint pm_sort_key_raw(ushort x) { return x; }
inline uint pm_sort_key_raw(uint x) { return x; }
inline ulong pm_sort_key_raw(ulong x) { return x; }
inline uint pm_sort_key_raw(char x) { return uchar(x) ^ 0x80u; }
inline uint pm_sort_key_raw(short x) { return ushort(x) ^ 0x8000u; }
inline uint pm_sort_key_raw(int x) { return uint(x) ^ 0x80000000u; }
inline ulong pm_sort_key_raw(long x) { return ulong(x) ^ 0x8000000000000000ul; }

template <typename T> inline typename SortKey<T>::type pm_sort_key(T x, bool descending) {
    typename SortKey<T>::type k = pm_sort_key_raw(x);
    return descending ? ~k : k;
}
