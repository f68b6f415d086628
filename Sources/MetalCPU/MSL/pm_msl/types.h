// MSL scalar and vector types as clang extended vectors.
#pragma once
#include <stdint.h>
#include <stddef.h>
#include "pm_kernel_abi.h"

namespace metal {
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
typedef __bf16 bfloat;

#define PM_VECTORS(T)                                                   \
    typedef T T##2 __attribute__((ext_vector_type(2)));                 \
    typedef T T##3 __attribute__((ext_vector_type(3)));                 \
    typedef T T##4 __attribute__((ext_vector_type(4)));
PM_VECTORS(char) PM_VECTORS(uchar) PM_VECTORS(short) PM_VECTORS(ushort)
PM_VECTORS(int) PM_VECTORS(uint) PM_VECTORS(long) PM_VECTORS(ulong)
PM_VECTORS(half) PM_VECTORS(float) PM_VECTORS(bfloat)
#undef PM_VECTORS
} // namespace metal
using namespace metal;
