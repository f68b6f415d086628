// MSL geometric functions (metal_geometric) for float, half and bfloat vectors
// (and scalars). half / bfloat compute in float and round the result.
#pragma once
#include "types.h"
#include "math.h"
#include "integer.h"

namespace metal {

template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline pm_elem_t<_PmT> dot(_PmT x, _PmT y) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmT)((float)x * (float)y);
    } else {
        pm_f32_t<_PmT> p = pm_tof(x) * pm_tof(y);
        float s = 0.0f;
        for (int i = 0; i < pm_width<_PmT>; i++) s += p[i];
        return (pm_elem_t<_PmT>)s;
    }
}
template <class _PmT> inline float pm_dotf(_PmT x, _PmT y) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (float)x * (float)y;
    } else {
        pm_f32_t<_PmT> p = pm_tof(x) * pm_tof(y);
        float s = 0.0f;
        for (int i = 0; i < pm_width<_PmT>; i++) s += p[i];
        return s;
    }
}

inline float3 cross(float3 x, float3 y) { return x.yzx * y.zxy - x.zxy * y.yzx; }
inline half3 cross(half3 x, half3 y) {
    float3 a = pm_tof(x), b = pm_tof(y);
    return pm_fromf<half3>(a.yzx * b.zxy - a.zxy * b.yzx);
}
inline bfloat3 cross(bfloat3 x, bfloat3 y) {
    float3 a = pm_tof(x), b = pm_tof(y);
    return pm_fromf<bfloat3>(a.yzx * b.zxy - a.zxy * b.yzx);
}

template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline pm_elem_t<_PmT> length_squared(_PmT x) { return (pm_elem_t<_PmT>)pm_dotf(x, x); }
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline pm_elem_t<_PmT> length(_PmT x) { return (pm_elem_t<_PmT>)__builtin_sqrtf(pm_dotf(x, x)); }
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline pm_elem_t<_PmT> distance_squared(_PmT x, pm_identity_t<_PmT> y) {
    pm_f32_t<_PmT> d = pm_tof(x) - pm_tof(y);
    return (pm_elem_t<_PmT>)pm_dotf(d, d);
}
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline pm_elem_t<_PmT> distance(_PmT x, pm_identity_t<_PmT> y) {
    pm_f32_t<_PmT> d = pm_tof(x) - pm_tof(y);
    return (pm_elem_t<_PmT>)__builtin_sqrtf(pm_dotf(d, d));
}
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline _PmT normalize(_PmT x) {
    pm_f32_t<_PmT> a = pm_tof(x);
    return pm_fromf<_PmT>(a / __builtin_sqrtf(pm_dotf(a, a)));
}
// faceforward(N, I, Nref): N if dot(Nref, I) < 0, else -N.
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline _PmT faceforward(_PmT n, pm_identity_t<_PmT> i, pm_identity_t<_PmT> nref) {
    return pm_dotf(nref, i) < 0.0f ? n : pm_fromf<_PmT>(-pm_tof(n));
}
// reflect(I, N) = I - 2 * dot(N, I) * N (N normalized).
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline _PmT reflect(_PmT i, pm_identity_t<_PmT> n) {
    pm_f32_t<_PmT> fi = pm_tof(i), fn = pm_tof(n);
    return pm_fromf<_PmT>(fi - 2.0f * pm_dotf(fn, fi) * fn);
}
// refract(I, N, eta): I and N normalized.
template <class _PmT>
    requires(pm_is_fgen<_PmT>)
inline _PmT refract(_PmT i, pm_identity_t<_PmT> n, pm_elem_t<_PmT> eta) {
    pm_f32_t<_PmT> fi = pm_tof(i), fn = pm_tof(n);
    float e = (float)eta, d = pm_dotf(fn, fi);
    float k = 1.0f - e * e * (1.0f - d * d);
    if (k < 0.0f) return pm_fromf<_PmT>((pm_f32_t<_PmT>)0.0f);
    return pm_fromf<_PmT>(e * fi - (e * d + __builtin_sqrtf(k)) * fn);
}


// metal::precise:: and metal::fast:: name the same functions (the precise
// results are also acceptable fast results), except those with a fast variant
// of their own (math.h: exp, exp2, log, log2, sin, cos, tan, tanh, pow).
namespace precise {
using metal::acos;
using metal::acosh;
using metal::asin;
using metal::asinh;
using metal::atan;
using metal::atan2;
using metal::atanh;
using metal::cbrt;
using metal::ceil;
using metal::copysign;
using metal::cosh;
using metal::cospi;
using metal::divide;
using metal::exp10;
using metal::fabs;
using metal::abs;
using metal::fdim;
using metal::floor;
using metal::fma;
using metal::fmax;
using metal::fmin;
using metal::fmod;
using metal::fract;
using metal::frexp;
using metal::ilogb;
using metal::ldexp;
using metal::log10;
using metal::modf;
using metal::nextafter;
using metal::powr;
using metal::rint;
using metal::round;
using metal::rsqrt;
using metal::sincos;
using metal::sinh;
using metal::sinpi;
using metal::sqrt;
using metal::tanpi;
using metal::trunc;
using metal::clamp;
using metal::mix;
using metal::saturate;
using metal::sign;
using metal::smoothstep;
using metal::step;
using metal::max;
using metal::min;
using metal::max3;
using metal::min3;
using metal::median3;
using metal::dot;
using metal::cross;
using metal::distance;
using metal::distance_squared;
using metal::length;
using metal::length_squared;
using metal::normalize;
using metal::faceforward;
using metal::reflect;
using metal::refract;
} // namespace precise
namespace fast {
using namespace ::metal::precise; // qualified lookup (fast::sin) follows using-directives
} // namespace fast
} // namespace metal
