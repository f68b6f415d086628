// <simd/simd.h> as Metal's compiler provides it: the names that headers shared between the host
// (Swift / Objective-C, where simd.h is the C library) and the shaders use for Metal's vector and
// matrix types, so that one struct has one layout on both sides (Apple's samples' AAPL*Types.h).
// In MSL each is the Metal type itself: simd_float4 / vector_float4 / simd::float4 is float4,
// simd_float4x4 / matrix_float4x4 / simd::float4x4 is float4x4, simd_packed_float4 is packed_float4.
// Metal's <metal_stdlib> holds it too (`using namespace simd;` needs no include): the end of metal_stdlib here.
#pragma once
#include "../metal_stdlib"

#define PM_SIMD_VECTORS(_PmT)                                                                            \
    typedef ::metal::_PmT##2 simd_##_PmT##2; typedef ::metal::_PmT##3 simd_##_PmT##3;                     \
    typedef ::metal::_PmT##4 simd_##_PmT##4;                        \
    typedef ::metal::_PmT##2 vector_##_PmT##2; typedef ::metal::_PmT##3 vector_##_PmT##3;                 \
    typedef ::metal::_PmT##4 vector_##_PmT##4;                                                            \
    typedef ::metal::packed_##_PmT##2 simd_packed_##_PmT##2; typedef ::metal::packed_##_PmT##4 simd_packed_##_PmT##4; \
    namespace simd { using ::metal::_PmT##2; using ::metal::_PmT##3; using ::metal::_PmT##4;              \
                     using ::metal::packed_##_PmT##2; using ::metal::packed_##_PmT##3; using ::metal::packed_##_PmT##4; }
PM_SIMD_VECTORS(char) PM_SIMD_VECTORS(uchar) PM_SIMD_VECTORS(short) PM_SIMD_VECTORS(ushort)
PM_SIMD_VECTORS(int) PM_SIMD_VECTORS(uint) PM_SIMD_VECTORS(long) PM_SIMD_VECTORS(ulong)
PM_SIMD_VECTORS(half) PM_SIMD_VECTORS(float)
#undef PM_SIMD_VECTORS
typedef char simd_char1; typedef unsigned char simd_uchar1; typedef short simd_short1; typedef unsigned short simd_ushort1;
typedef int simd_int1; typedef unsigned int simd_uint1; typedef long simd_long1; typedef unsigned long simd_ulong1;
typedef _Float16 simd_half1; typedef float simd_float1;

#define PM_SIMD_MATRICES(_PmT)                                                                            \
    typedef ::metal::_PmT##2x2 simd_##_PmT##2x2; typedef ::metal::_PmT##2x3 simd_##_PmT##2x3;             \
    typedef ::metal::_PmT##2x4 simd_##_PmT##2x4; typedef ::metal::_PmT##3x2 simd_##_PmT##3x2;             \
    typedef ::metal::_PmT##3x3 simd_##_PmT##3x3; typedef ::metal::_PmT##3x4 simd_##_PmT##3x4;             \
    typedef ::metal::_PmT##4x2 simd_##_PmT##4x2; typedef ::metal::_PmT##4x3 simd_##_PmT##4x3;             \
    typedef ::metal::_PmT##4x4 simd_##_PmT##4x4;                                                          \
    typedef ::metal::_PmT##2x2 matrix_##_PmT##2x2; typedef ::metal::_PmT##2x3 matrix_##_PmT##2x3;         \
    typedef ::metal::_PmT##2x4 matrix_##_PmT##2x4; typedef ::metal::_PmT##3x2 matrix_##_PmT##3x2;         \
    typedef ::metal::_PmT##3x3 matrix_##_PmT##3x3; typedef ::metal::_PmT##3x4 matrix_##_PmT##3x4;         \
    typedef ::metal::_PmT##4x2 matrix_##_PmT##4x2; typedef ::metal::_PmT##4x3 matrix_##_PmT##4x3;         \
    typedef ::metal::_PmT##4x4 matrix_##_PmT##4x4;                                                        \
    namespace simd { using ::metal::_PmT##2x2; using ::metal::_PmT##2x3; using ::metal::_PmT##2x4;        \
                     using ::metal::_PmT##3x2; using ::metal::_PmT##3x3; using ::metal::_PmT##3x4;        \
                     using ::metal::_PmT##4x2; using ::metal::_PmT##4x3; using ::metal::_PmT##4x4; }
PM_SIMD_MATRICES(half) PM_SIMD_MATRICES(float)
#undef PM_SIMD_MATRICES

// `simd::float4(x, y, z, w)`: float4(...) is pm_make<float4>(...) (pm_msl/types.h), found here too;
// and the simd library's functions that Metal has (`simd::length(v)`, `simd::normalize(v)`)
namespace simd {
using ::metal::pm_make;
#define PM_USING(name) using ::metal::name;
PM_USING(dot) PM_USING(cross) PM_USING(length) PM_USING(length_squared) PM_USING(distance)
PM_USING(distance_squared) PM_USING(normalize) PM_USING(reflect) PM_USING(refract) PM_USING(clamp) PM_USING(mix)
PM_USING(min) PM_USING(max) PM_USING(abs) PM_USING(sign) PM_USING(step) PM_USING(smoothstep) PM_USING(fract)
PM_USING(floor) PM_USING(ceil) PM_USING(trunc) PM_USING(round) PM_USING(sqrt) PM_USING(rsqrt) PM_USING(fma)
PM_USING(transpose) PM_USING(determinant)
#undef PM_USING
} // namespace simd
