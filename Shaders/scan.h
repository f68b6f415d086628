// Cumulative sum / product along the rows of a contiguous (rows, n) array:
// parameters, accumulator types and the two operations. Kernels in scan.metal;
// glue in pymetal/_kernels/scan.py (its numpy dtype mirrors ScanParams).
#pragma once
#include "kernels_common.h"

struct ScanParams {
    uint n;         // row length
    uint rows;
    uint chunk;     // elements per thread
    uint chunks;    // chunks per row = ceil(n / chunk)
    uint exclusive; // 1: out[i] combines x[0 .. i-1] (out[0] = the identity)
    uint prefix;    // scan_apply: 1 to start each chunk from the chunk prefixes
    uint product;   // 1: cumulative product, 0: cumulative sum
};

// What a scan accumulates in, by output type: float for float types (float16
// and bfloat16 round once per element, at the store), and for integers the
// unsigned type of at least 32 bits, which wraps around like NumPy without
// C++'s signed overflow (the low bits of sums and products do not depend on
// the wider type).
template <typename T> struct ScanAcc { typedef float type; };
#define PM_SCAN_ACC(T, ACC) template <> struct ScanAcc<T> { typedef ACC type; };
PM_SCAN_ACC(char, uint) PM_SCAN_ACC(uchar, uint)
PM_SCAN_ACC(short, uint) PM_SCAN_ACC(ushort, uint)
PM_SCAN_ACC(int, uint) PM_SCAN_ACC(uint, uint)
PM_SCAN_ACC(long, ulong) PM_SCAN_ACC(ulong, ulong)
#undef PM_SCAN_ACC

// The operation is a run-time parameter rather than a template one: it halves
// the kernels to compile, and the compiler unswitches the loops on it.
template <typename A> inline A pm_scan_identity(bool product) { return product ? A(1) : A(0); }
template <typename A> inline A pm_scan_op(A a, A b, bool product) { return product ? a * b : a + b; }
// A zero running product times the next chunk's product `v`: zero (with the sign of the
// product) unless the chunk holds an infinity or NaN (scan_totals).
template <typename A> inline A pm_zero_times(A acc, A v, bool) { return acc * v; }
inline float pm_zero_times(float acc, float v, bool has_inf) {
    return has_inf ? NAN : copysign(0.0f, acc) * copysign(1.0f, v);
}
