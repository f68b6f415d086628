// <metal_pack>: normalised integer packing (MSL spec, "Pack and Unpack
// Functions" and the conversion rules for normalised integers): component x
// in the lowest bits; packing clamps to [0, 1] (unorm) or [-1, 1] (snorm) and
// rounds x * (2^n - 1) (unorm) or x * (2^(n-1) - 1) (snorm) to nearest even;
// unpacking divides, snorm clamping at -1. The sRGB variants convert the colour
// components (not alpha) with the sRGB transfer function.
#pragma once
#include "types.h"

namespace metal {
inline uint pm_unorm(float x, float scale) {
    float c = __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f); // NaN -> 0
    return (uint)__builtin_rintf(c * scale);
}
inline uint pm_snorm(float x, float scale, uint mask) {
    float c = __builtin_fminf(__builtin_fmaxf(x, -1.0f), 1.0f);
    return (uint)(int)__builtin_rintf(c * scale) & mask;
}
inline float pm_linear_to_srgb(float x) {
    float c = __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f);
    return c <= 0.0031308f ? 12.92f * c : 1.055f * __builtin_powf(c, 1.0f / 2.4f) - 0.055f;
}
inline float pm_srgb_to_linear(float c) {
    return c <= 0.04045f ? c / 12.92f : __builtin_powf((c + 0.055f) / 1.055f, 2.4f);
}
template <int _PmBits> inline float pm_from_snorm(uint bits) {
    int v = (int)(bits << (32 - _PmBits)) >> (32 - _PmBits); // sign-extend
    return __builtin_fmaxf((float)v / (float)((1 << (_PmBits - 1)) - 1), -1.0f);
}

inline uint pack_float_to_unorm4x8(float4 v) {
    return pm_unorm(v.x, 255.0f) | pm_unorm(v.y, 255.0f) << 8 | pm_unorm(v.z, 255.0f) << 16 | pm_unorm(v.w, 255.0f) << 24;
}
inline uint pack_float_to_snorm4x8(float4 v) {
    return pm_snorm(v.x, 127.0f, 0xff) | pm_snorm(v.y, 127.0f, 0xff) << 8 | pm_snorm(v.z, 127.0f, 0xff) << 16 |
           pm_snorm(v.w, 127.0f, 0xff) << 24;
}
inline uint pack_float_to_unorm2x16(float2 v) { return pm_unorm(v.x, 65535.0f) | pm_unorm(v.y, 65535.0f) << 16; }
inline uint pack_float_to_snorm2x16(float2 v) {
    return pm_snorm(v.x, 32767.0f, 0xffff) | pm_snorm(v.y, 32767.0f, 0xffff) << 16;
}
inline uint pack_float_to_srgb_unorm4x8(float4 v) {
    return pack_float_to_unorm4x8(float4{pm_linear_to_srgb(v.x), pm_linear_to_srgb(v.y), pm_linear_to_srgb(v.z), v.w});
}
inline uint pack_float_to_unorm1010102(float4 v) {
    return pm_unorm(v.x, 1023.0f) | pm_unorm(v.y, 1023.0f) << 10 | pm_unorm(v.z, 1023.0f) << 20 | pm_unorm(v.w, 3.0f) << 30;
}
inline uint pack_half_to_unorm4x8(half4 v) { return pack_float_to_unorm4x8(__builtin_convertvector(v, float4)); }
inline uint pack_half_to_snorm4x8(half4 v) { return pack_float_to_snorm4x8(__builtin_convertvector(v, float4)); }
inline uint pack_half_to_unorm2x16(half2 v) { return pack_float_to_unorm2x16(__builtin_convertvector(v, float2)); }
inline uint pack_half_to_snorm2x16(half2 v) { return pack_float_to_snorm2x16(__builtin_convertvector(v, float2)); }
inline uint pack_half_to_srgb_unorm4x8(half4 v) { return pack_float_to_srgb_unorm4x8(__builtin_convertvector(v, float4)); }
inline uint pack_half_to_unorm1010102(half4 v) { return pack_float_to_unorm1010102(__builtin_convertvector(v, float4)); }

inline float4 unpack_unorm4x8_to_float(uint p) {
    return float4{(float)(p & 0xff), (float)(p >> 8 & 0xff), (float)(p >> 16 & 0xff), (float)(p >> 24)} / 255.0f;
}
inline float4 unpack_snorm4x8_to_float(uint p) {
    return float4{pm_from_snorm<8>(p), pm_from_snorm<8>(p >> 8), pm_from_snorm<8>(p >> 16), pm_from_snorm<8>(p >> 24)};
}
inline float2 unpack_unorm2x16_to_float(uint p) { return float2{(float)(p & 0xffff), (float)(p >> 16)} / 65535.0f; }
inline float2 unpack_snorm2x16_to_float(uint p) { return float2{pm_from_snorm<16>(p), pm_from_snorm<16>(p >> 16)}; }
inline float4 unpack_unorm4x8_srgb_to_float(uint p) {
    float4 c = unpack_unorm4x8_to_float(p);
    return float4{pm_srgb_to_linear(c.x), pm_srgb_to_linear(c.y), pm_srgb_to_linear(c.z), c.w};
}
inline float4 unpack_unorm10a2_to_float(uint p) {
    return float4{(float)(p & 0x3ff) / 1023.0f, (float)(p >> 10 & 0x3ff) / 1023.0f, (float)(p >> 20 & 0x3ff) / 1023.0f,
                  (float)(p >> 30) / 3.0f};
}
inline half4 unpack_unorm4x8_to_half(uint p) { return __builtin_convertvector(unpack_unorm4x8_to_float(p), half4); }
inline half4 unpack_snorm4x8_to_half(uint p) { return __builtin_convertvector(unpack_snorm4x8_to_float(p), half4); }
inline half2 unpack_unorm2x16_to_half(uint p) { return __builtin_convertvector(unpack_unorm2x16_to_float(p), half2); }
inline half2 unpack_snorm2x16_to_half(uint p) { return __builtin_convertvector(unpack_snorm2x16_to_float(p), half2); }
inline half4 unpack_unorm4x8_srgb_to_half(uint p) {
    return __builtin_convertvector(unpack_unorm4x8_srgb_to_float(p), half4);
}
inline half4 unpack_unorm10a2_to_half(uint p) { return __builtin_convertvector(unpack_unorm10a2_to_float(p), half4); }
} // namespace metal
