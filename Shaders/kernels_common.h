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
