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
// of their own (math.h: exp, exp2, log, log2, sin, cos, tan, tanh, pow). Each
// namespace declares its names itself (no using-directive), so that a project
// adding an overload to one of them (MLX: metal::fast::abs(bfloat)) adds to
// the set instead of hiding it.
#define PM_SHARED_NAMES(_PmX) _PmX(acos) _PmX(acosh) _PmX(asin) _PmX(asinh) _PmX(atan) _PmX(atan2) \
    _PmX(atanh) _PmX(cbrt) _PmX(ceil) _PmX(copysign) _PmX(cosh) _PmX(cospi) _PmX(divide) _PmX(exp10) \
    _PmX(fabs) _PmX(abs) _PmX(fdim) _PmX(floor) _PmX(fma) _PmX(fmax) _PmX(fmin) _PmX(fmod) \
    _PmX(fract) _PmX(frexp) _PmX(ilogb) _PmX(ldexp) _PmX(log10) _PmX(modf) _PmX(nextafter) \
    _PmX(powr) _PmX(rint) _PmX(round) _PmX(rsqrt) _PmX(sincos) _PmX(sinh) _PmX(sinpi) _PmX(sqrt) \
    _PmX(tanpi) _PmX(trunc) _PmX(clamp) _PmX(mix) _PmX(saturate) _PmX(sign) _PmX(smoothstep) \
    _PmX(step) _PmX(max) _PmX(min) _PmX(max3) _PmX(min3) _PmX(median3) _PmX(dot) _PmX(cross) \
    _PmX(distance) _PmX(distance_squared) _PmX(length) _PmX(length_squared) _PmX(normalize) \
    _PmX(faceforward) _PmX(reflect) _PmX(refract) _PmX(fmax3) _PmX(fmin3) _PmX(fmedian3)
#define PM_USING(name) using metal::name;
namespace precise {
PM_SHARED_NAMES(PM_USING)
} // namespace precise
namespace fast {
PM_SHARED_NAMES(PM_USING)
} // namespace fast
#undef PM_USING
#undef PM_SHARED_NAMES
} // namespace metal
