// Batched matrix multiply C[b] = A[b] @ B[b]: parameters and accumulator types.
// The kernels are in matmul.metal; pymetal/_kernels/matmul.py packs the
// parameters (its numpy dtype mirrors MatmulParams field by field).
#pragma once
#include "kernels_common.h"

#define PM_MATMUL_MAX_BATCH 4

struct MatmulParams {
    int M, N, K;
    int batch_ndim;                       // batch dimensions in use (<= PM_MATMUL_MAX_BATCH)
    int batch_shape[PM_MATMUL_MAX_BATCH]; // row-major; C's batch index runs over it
    long a_off, b_off, c_off;             // element offsets added to the bound buffers
    long a_row, a_col, b_row, b_col;      // element strides inside A (M, K) and B (K, N)
    long a_batch[PM_MATMUL_MAX_BATCH];    // element strides of the batch dims, 0 = broadcast
    long b_batch[PM_MATMUL_MAX_BATCH];
    long pa_batch[PM_MATMUL_MAX_BATCH];   // the same for packed A and B (CPU variant)
    long pb_batch[PM_MATMUL_MAX_BATCH];
};

// What a dot product accumulates in: float for float types (float16 and
// bfloat16 round once, at the end), and for integers the unsigned type of at
// least 32 bits, which wraps around like NumPy's integer matmul (the low bits
// of a sum of products do not depend on the wider type) without C++'s signed
// overflow. bool: the count of true products, stored as count != 0.
template <typename T> struct MatmulAcc { typedef float type; };
#define PM_MATMUL_ACC(T, ACC) template <> struct MatmulAcc<T> { typedef ACC type; };
PM_MATMUL_ACC(bool, uint)
PM_MATMUL_ACC(char, uint) PM_MATMUL_ACC(uchar, uint)
PM_MATMUL_ACC(short, uint) PM_MATMUL_ACC(ushort, uint)
PM_MATMUL_ACC(int, uint) PM_MATMUL_ACC(uint, uint)
PM_MATMUL_ACC(long, ulong) PM_MATMUL_ACC(ulong, ulong)
#undef PM_MATMUL_ACC
