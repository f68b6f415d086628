// MSL math and common functions (metal_math, metal_common), constants.
//
// Every function has overloads for float, half and bfloat scalars and 2/3/4
// vectors. half and bfloat compute in float and round the result.
// exp, exp2, log, log2, sin, cos, tan, tanh and pow are vmath.h's vectorisable
// code, in a precise and a fast variant: metal::precise:: and metal::fast::
// name them, and the default namespace names the compile mode's (precise in
// pymetal's default safe mode, fast with fast_math=True). The other functions
// are libm's (precise), and metal::precise:: and metal::fast:: name them too.
// Mixed scalar arguments (`pow(x, 2.0)`, `fmax(h, 1.0f)`) resolve to the widest
// MSL floating type among them; double arguments count as float.
#pragma once
#include "types.h"
#include "vmath.h"

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------
#ifndef MAXFLOAT
#define MAXFLOAT 0x1.fffffep+127f
#endif
#ifndef MAXHALF
#define MAXHALF ((_Float16)0x1.ffcp15f) // 65504, the largest finite half
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __builtin_huge_valf()
#endif
#ifndef HUGE_VALH
#define HUGE_VALH ((half)__builtin_huge_valf())
#endif
#ifndef INFINITY
#define INFINITY __builtin_inff()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif
#ifndef FLT_MAX
#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_10_EXP 38
#define FLT_MAX_EXP 128
#define FLT_MIN_10_EXP (-37)
#define FLT_MIN_EXP (-125)
#define FLT_RADIX 2
#define FLT_MAX 0x1.fffffep+127f
#define FLT_MIN 0x1p-126f
#define FLT_EPSILON 0x1p-23f
#endif
#ifndef HALF_MAX
#define HALF_DIG 3
#define HALF_MANT_DIG 11
#define HALF_MAX_10_EXP 4
#define HALF_MAX_EXP 16
#define HALF_MIN_10_EXP (-4)
#define HALF_MIN_EXP (-13)
#define HALF_RADIX 2
#define HALF_MAX ((half)65504.0f)
#define HALF_MIN ((half)0x1p-14f)
#define HALF_EPSILON ((half)0x1p-10f)
#endif
#ifndef BFLOAT_MAX
#define BFLOAT_DIG 2
#define BFLOAT_MANT_DIG 8
#define BFLOAT_MAX ((bfloat)0x1.fep+127f)
#define BFLOAT_MIN ((bfloat)0x1p-126f)
#define BFLOAT_EPSILON ((bfloat)0x1p-7f)
#endif

#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f
#define M_E_H ((half)M_E_F)
#define M_LOG2E_H ((half)M_LOG2E_F)
#define M_LOG10E_H ((half)M_LOG10E_F)
#define M_LN2_H ((half)M_LN2_F)
#define M_LN10_H ((half)M_LN10_F)
#define M_PI_H ((half)M_PI_F)
#define M_PI_2_H ((half)M_PI_2_F)
#define M_PI_4_H ((half)M_PI_4_F)
#define M_1_PI_H ((half)M_1_PI_F)
#define M_2_PI_H ((half)M_2_PI_F)
#define M_2_SQRTPI_H ((half)M_2_SQRTPI_F)
#define M_SQRT2_H ((half)M_SQRT2_F)
#define M_SQRT1_2_H ((half)M_SQRT1_2_F)
#define M_E_BF ((bfloat)M_E_F)
#define M_LOG2E_BF ((bfloat)M_LOG2E_F)
#define M_LOG10E_BF ((bfloat)M_LOG10E_F)
#define M_LN2_BF ((bfloat)M_LN2_F)
#define M_LN10_BF ((bfloat)M_LN10_F)
#define M_PI_BF ((bfloat)M_PI_F)
#define M_PI_2_BF ((bfloat)M_PI_2_F)
#define M_PI_4_BF ((bfloat)M_PI_4_F)
#define M_1_PI_BF ((bfloat)M_1_PI_F)
#define M_2_PI_BF ((bfloat)M_2_PI_F)
#define M_2_SQRTPI_BF ((bfloat)M_2_SQRTPI_F)
#define M_SQRT2_BF ((bfloat)M_SQRT2_F)
#define M_SQRT1_2_BF ((bfloat)M_SQRT1_2_F)

namespace metal {

// ---------------------------------------------------------------------------
// Helpers: compute in float (or floatN), convert back.
// ---------------------------------------------------------------------------
template <class _PmT> using pm_f32_t = pm_rebind_t<float, _PmT>;
template <class _PmT> using pm_i32_t = pm_rebind_t<int, _PmT>;

template <class _PmT> constexpr pm_f32_t<_PmT> pm_tof(_PmT x) {
    if constexpr (!pm_is_vec<_PmT>) return (float)x;
    else if constexpr (pm_same<pm_elem_t<_PmT>, float>) return x;
    else return __builtin_convertvector(x, pm_f32_t<_PmT>);
}
template <class _PmT> constexpr _PmT pm_fromf(pm_f32_t<_PmT> x) {
    if constexpr (!pm_is_vec<_PmT>) return (_PmT)x;
    else if constexpr (pm_same<pm_elem_t<_PmT>, float>) return x;
    else return __builtin_convertvector(x, _PmT);
}
// Applies a float -> float function to every element.
template <class _PmT, class _PmF> inline _PmT pm_map1(_PmT x, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmT)f((float)x);
    } else {
        pm_f32_t<_PmT> a = pm_tof(x), r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = f(a[i]);
        return pm_fromf<_PmT>(r);
    }
}
template <class _PmT, class _PmF> inline _PmT pm_map2(_PmT x, _PmT y, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmT)f((float)x, (float)y);
    } else {
        pm_f32_t<_PmT> a = pm_tof(x), b = pm_tof(y), r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = f(a[i], b[i]);
        return pm_fromf<_PmT>(r);
    }
}
// Result type of mixed scalar arguments: the widest MSL floating type among
// them (double counts as float, half with bfloat gives float), else float.
template <class _PmA> inline constexpr int pm_frank = pm_same<_PmA, bfloat> ? 1 : pm_same<_PmA, half> ? 2 : pm_is_float<_PmA> || pm_is_double<_PmA> ? 4 : 0;
template <class _PmA, class _PmB> struct pm_fcommon2 {
    static constexpr int r = (pm_frank<_PmA> | pm_frank<_PmB>);
    typedef pm_cond_t<r == 1, bfloat, pm_cond_t<r == 2, half, float>> type;
};
template <class... _PmA> struct pm_fcommon;
template <class _PmA> struct pm_fcommon<_PmA> { typedef typename pm_fcommon2<_PmA, _PmA>::type type; };
template <class _PmA, class _PmB> struct pm_fcommon<_PmA, _PmB> : pm_fcommon2<_PmA, _PmB> {};
template <class _PmA, class _PmB, class _PmC> struct pm_fcommon<_PmA, _PmB, _PmC> {
    typedef typename pm_fcommon2<typename pm_fcommon2<_PmA, _PmB>::type, _PmC>::type type;
};
template <class... _PmA> using pm_fcommon_t = typename pm_fcommon<_PmA...>::type;
// Are these scalars a mix that no exact float/half/bfloat overload matches?
template <class... _PmA> inline constexpr bool pm_fmixed =
    (pm_is_arith<_PmA> && ...) && !((pm_same<_PmA, float> && ...) || (pm_same<_PmA, half> && ...) || (pm_same<_PmA, bfloat> && ...));

#define PM_FTYPES(_PmM, ...)                                                                   \
    _PmM(float, __VA_ARGS__) _PmM(float2, __VA_ARGS__) _PmM(float3, __VA_ARGS__) _PmM(float4, __VA_ARGS__) \
    _PmM(half, __VA_ARGS__) _PmM(half2, __VA_ARGS__) _PmM(half3, __VA_ARGS__) _PmM(half4, __VA_ARGS__)     \
    _PmM(bfloat, __VA_ARGS__) _PmM(bfloat2, __VA_ARGS__) _PmM(bfloat3, __VA_ARGS__) _PmM(bfloat4, __VA_ARGS__)

#define PM_OV1(_PmT, name) \
    template <class _PmP = void> inline _PmT name(_PmT x) { return pm_##name((pm_dep_t<_PmP, _PmT>)x); }
#define PM_OV2(_PmT, name) \
    template <class _PmP = void> inline _PmT name(_PmT x, _PmT y) { return pm_##name((pm_dep_t<_PmP, _PmT>)x, y); }
#define PM_OV3(_PmT, name) \
    template <class _PmP = void> inline _PmT name(_PmT x, _PmT y, _PmT z) { return pm_##name((pm_dep_t<_PmP, _PmT>)x, y, z); }
// name(T) for every floating T, plus name(double / integer) -> float.
#define PM_MATH1(name)                                                     \
    PM_FTYPES(PM_OV1, name)                                                \
    template <class _PmA>                                                     \
        requires(pm_is_double<_PmA> || pm_is_int<_PmA>)                          \
    inline float name(_PmA x) { return pm_##name((float)x); }
#define PM_MATH2(name)                                                     \
    PM_FTYPES(PM_OV2, name)                                                \
    template <class _PmA, class _PmB>                                            \
        requires(pm_fmixed<_PmA, _PmB>)                                          \
    inline pm_fcommon_t<_PmA, _PmB> name(_PmA x, _PmB y) {                             \
        typedef pm_fcommon_t<_PmA, _PmB> _PmC;                                      \
        return pm_##name((_PmC)x, (_PmC)y);                                      \
    }
#define PM_MATH3(name)                                                     \
    PM_FTYPES(PM_OV3, name)                                                \
    template <class _PmA, class _PmB, class _PmC>                                   \
        requires(pm_fmixed<_PmA, _PmB, _PmC>)                                       \
    inline pm_fcommon_t<_PmA, _PmB, _PmC> name(_PmA x, _PmB y, _PmC z) {                     \
        typedef pm_fcommon_t<_PmA, _PmB, _PmC> _PmR;                                   \
        return pm_##name((_PmR)x, (_PmR)y, (_PmR)z);                                \
    }

// Precise single-element functions through libm (float).
#define PM_LIBM1(name, fn)                                                      \
    template <class _PmT> inline _PmT pm_##name(_PmT x) {                                \
        return pm_map1(x, [](float v) { return fn(v); });                       \
    }                                                                           \
    PM_MATH1(name)
#define PM_LIBM2(name, fn)                                                      \
    template <class _PmT> inline _PmT pm_##name(_PmT x, _PmT y) {                           \
        return pm_map2(x, y, [](float a, float b) { return fn(a, b); });        \
    }                                                                           \
    PM_MATH2(name)
// Whole-vector clang builtins (vectorise; exact in float for half / bfloat).
#define PM_ELEM1(name, builtin)                                                 \
    template <class _PmT> inline _PmT pm_##name(_PmT x) {                                \
        return pm_fromf<_PmT>(builtin(pm_tof(x)));                                 \
    }                                                                           \
    PM_MATH1(name)

PM_LIBM1(acos, __builtin_acosf)
PM_LIBM1(acosh, __builtin_acoshf)
PM_LIBM1(asin, __builtin_asinf)
PM_LIBM1(asinh, __builtin_asinhf)
PM_LIBM1(atan, __builtin_atanf)
PM_LIBM1(atanh, __builtin_atanhf)
PM_LIBM1(cbrt, __builtin_cbrtf)
PM_LIBM1(cosh, __builtin_coshf)
PM_LIBM1(exp10, __builtin_exp10f)
PM_LIBM1(log10, __builtin_log10f)
PM_LIBM1(sinh, __builtin_sinhf)
PM_LIBM2(atan2, __builtin_atan2f)
PM_LIBM2(fmod, __builtin_fmodf)

// The precise / fast pairs: each namespace has its own overload set; the
// default namespace takes the compile mode's set by using-declarations, so
// `using namespace metal::precise` beside `using namespace metal` stays
// unambiguous in safe mode (fast likewise in fast mode).
#ifdef __FAST_MATH__
#define PM_MODE fast
#else
#define PM_MODE precise
#endif
#define PM_VARIANTS(libm, name)                                                 \
    namespace precise { libm(name, pm_##name##_precise) }                     \
    namespace fast { libm(name, pm_##name##_fast) }                           \
    using PM_MODE::name;                                                        \
    using PM_MODE::pm_##name;
PM_VARIANTS(PM_LIBM1, exp)
PM_VARIANTS(PM_LIBM1, exp2)
PM_VARIANTS(PM_LIBM1, log)
PM_VARIANTS(PM_LIBM1, log2)
PM_VARIANTS(PM_LIBM1, sin)
PM_VARIANTS(PM_LIBM1, cos)
PM_VARIANTS(PM_LIBM1, tan)
PM_VARIANTS(PM_LIBM1, tanh)
PM_VARIANTS(PM_LIBM2, pow)
#undef PM_VARIANTS
#undef PM_MODE

PM_ELEM1(ceil, __builtin_elementwise_ceil)
PM_ELEM1(floor, __builtin_elementwise_floor)
PM_ELEM1(fabs, __builtin_elementwise_abs)
PM_ELEM1(rint, __builtin_elementwise_rint)
PM_ELEM1(round, __builtin_elementwise_round) // halfway cases away from zero
PM_ELEM1(trunc, __builtin_elementwise_trunc)
PM_ELEM1(sqrt, __builtin_elementwise_sqrt)

// abs(float) = fabs; the integer overloads are in integer.h.
template <class _PmT> inline _PmT pm_abs(_PmT x) { return pm_fabs(x); }
PM_FTYPES(PM_OV1, abs)
template <class _PmA>
    requires(pm_is_double<_PmA>)
inline float abs(_PmA x) { return pm_fabs((float)x); }

template <class _PmT> inline _PmT pm_rsqrt(_PmT x) {
    pm_f32_t<_PmT> a = pm_tof(x);
    return pm_fromf<_PmT>(1.0f / __builtin_elementwise_sqrt(a));
}
PM_MATH1(rsqrt)

// sinpi / cospi / tanpi: exact argument reduction, then double precision.
inline float pm_sinpi_f(float x) {
    if (!__builtin_isfinite(x)) return x - x;
    float r = __builtin_fmodf(x, 2.0f); // exact
    if (r == __builtin_truncf(r)) return __builtin_copysignf(0.0f, x);
    return (float)__builtin_sin(3.14159265358979323846 * (double)r);
}
inline float pm_cospi_f(float x) {
    if (!__builtin_isfinite(x)) return x - x;
    float r = __builtin_fmodf(__builtin_fabsf(x), 2.0f); // exact
    if (r == 0.5f || r == 1.5f) return 0.0f;
    return (float)__builtin_cos(3.14159265358979323846 * (double)r);
}
inline float pm_tanpi_f(float x) {
    if (!__builtin_isfinite(x)) return x - x;
    float r = __builtin_fmodf(x, 1.0f); // exact, tan has period 1
    if (r == 0.0f) return __builtin_copysignf(0.0f, x);
    if (__builtin_fabsf(r) == 0.5f) return __builtin_copysignf(__builtin_inff(), r);
    return (float)__builtin_tan(3.14159265358979323846 * (double)r);
}
PM_LIBM1(sinpi, pm_sinpi_f)
PM_LIBM1(cospi, pm_cospi_f)
PM_LIBM1(tanpi, pm_tanpi_f)

// fract(x) = fmin(x - floor(x), largest value below 1), NaN -> NaN, inf -> 0.
template <class _PmE> inline constexpr float pm_below_one = 0x1.fffffep-1f;
template <> inline constexpr float pm_below_one<half> = 0x1.ffcp-1f;
template <> inline constexpr float pm_below_one<bfloat> = 0x1.fep-1f;
template <class _PmT> inline _PmT pm_fract(_PmT x) {
    return pm_map1(x, [](float v) {
        if (__builtin_isinf(v)) return __builtin_copysignf(0.0f, v);
        float f = v - __builtin_floorf(v);
        return f < pm_below_one<pm_elem_t<_PmT>> ? f : (f != f ? f : pm_below_one<pm_elem_t<_PmT>>);
    });
}
PM_MATH1(fract)

template <class _PmT> inline _PmT pm_fmax(_PmT x, _PmT y) {
    return pm_fromf<_PmT>(__builtin_elementwise_max(pm_tof(x), pm_tof(y)));
}
template <class _PmT> inline _PmT pm_fmin(_PmT x, _PmT y) {
    return pm_fromf<_PmT>(__builtin_elementwise_min(pm_tof(x), pm_tof(y)));
}
template <class _PmT> inline _PmT pm_copysign(_PmT x, _PmT y) {
    return pm_fromf<_PmT>(__builtin_elementwise_copysign(pm_tof(x), pm_tof(y)));
}
template <class _PmT> inline _PmT pm_fdim(_PmT x, _PmT y) {
    return pm_map2(x, y, [](float a, float b) { return (a != a || b != b) ? a + b : a > b ? a - b : 0.0f; });
}
template <class _PmT> inline _PmT pm_divide(_PmT x, _PmT y) { return pm_fromf<_PmT>(pm_tof(x) / pm_tof(y)); }
template <class _PmT> inline _PmT pm_powr(_PmT x, _PmT y) {
    return pm_map2(x, y, [](float a, float b) { return a < 0.0f ? __builtin_nanf("") : __builtin_powf(a, b); });
}
PM_MATH2(fmax)
PM_MATH2(fmin)
PM_MATH2(copysign)
PM_MATH2(fdim)
PM_MATH2(divide)
PM_MATH2(powr)

// nextafter in the element's own format (bit stepping).
template <class _PmE, class _PmU> inline _PmE pm_nextafter_bits(_PmE x, _PmE y) {
    if (x != x || y != y) return (_PmE)((float)x + (float)y);
    if (x == y) return y;
    _PmU b = __builtin_bit_cast(_PmU, x);
    constexpr _PmU sign = (_PmU)((_PmU)1 << (sizeof(_PmU) * 8 - 1));
    if ((b & (_PmU)~sign) == 0) return __builtin_bit_cast(_PmE, (_PmU)((__builtin_bit_cast(_PmU, y) & sign) | 1));
    if ((x < y) == ((b & sign) == 0)) b++;
    else b--;
    return __builtin_bit_cast(_PmE, b);
}
template <class _PmT> inline _PmT pm_nextafter(_PmT x, _PmT y) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_cond_t<sizeof(_PmE) == 2, ushort, uint> _PmU;
    if constexpr (!pm_is_vec<_PmT>) {
        return pm_nextafter_bits<_PmE, _PmU>(x, y);
    } else {
        _PmT r = x;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = pm_nextafter_bits<_PmE, _PmU>(x[i], y[i]);
        return r;
    }
}
PM_MATH2(nextafter)

template <class _PmT> inline _PmT pm_fma(_PmT x, _PmT y, _PmT z) {
    return pm_fromf<_PmT>(__builtin_elementwise_fma(pm_tof(x), pm_tof(y), pm_tof(z)));
}
PM_MATH3(fma)

// ldexp(x, k), frexp(x, exp), ilogb(x), modf(x, ip), sincos(x, c)
template <class _PmT> inline _PmT pm_ldexp(_PmT x, pm_i32_t<_PmT> k) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmT)__builtin_ldexpf((float)x, k);
    } else {
        pm_f32_t<_PmT> a = pm_tof(x), r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = __builtin_ldexpf(a[i], k[i]);
        return pm_fromf<_PmT>(r);
    }
}
template <class _PmT> inline _PmT pm_frexp(_PmT x, pm_i32_t<_PmT> &e) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmT)__builtin_frexpf((float)x, &e);
    } else {
        pm_f32_t<_PmT> a = pm_tof(x), r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) {
            int ei = 0;
            r[i] = __builtin_frexpf(a[i], &ei);
            e[i] = ei;
        }
        return pm_fromf<_PmT>(r);
    }
}
template <class _PmT> inline pm_i32_t<_PmT> pm_ilogb(_PmT x) {
    if constexpr (!pm_is_vec<_PmT>) {
        return __builtin_ilogbf((float)x);
    } else {
        pm_f32_t<_PmT> a = pm_tof(x);
        pm_i32_t<_PmT> r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = __builtin_ilogbf(a[i]);
        return r;
    }
}
template <class _PmT> inline _PmT pm_modf(_PmT x, _PmT &ip) {
    _PmT t = pm_trunc(x);
    ip = t;
    return pm_map2(x, t, [](float a, float b) {
        return __builtin_isinf(a) ? __builtin_copysignf(0.0f, a) : __builtin_copysignf(a - b, a);
    });
}
#define PM_LDEXP(_PmT, _)                                                                         \
    template <class _PmP = void> inline _PmT ldexp(_PmT x, pm_i32_t<_PmT> k) { return pm_ldexp<pm_dep_t<_PmP, _PmT>>(x, k); } \
    template <class _PmP = void> inline _PmT frexp(_PmT x, pm_i32_t<_PmT> &e) { return pm_frexp<pm_dep_t<_PmP, _PmT>>(x, e); } \
    template <class _PmP = void> inline pm_i32_t<_PmT> ilogb(_PmT x) { return pm_ilogb<pm_dep_t<_PmP, _PmT>>(x); }        \
    template <class _PmP = void> inline _PmT modf(_PmT x, _PmT &ip) { return pm_modf<pm_dep_t<_PmP, _PmT>>(x, ip); }          \
    template <class _PmP = void> inline _PmT sincos(_PmT x, _PmT &c) {                                                 \
        c = pm_cos((pm_dep_t<_PmP, _PmT>)x);                                                                     \
        return pm_sin((pm_dep_t<_PmP, _PmT>)x);                                                                  \
    }
PM_FTYPES(PM_LDEXP, _)
#undef PM_LDEXP

// ---------------------------------------------------------------------------
// Common functions (metal_common) and float max / min
// ---------------------------------------------------------------------------
template <class _PmT> inline _PmT pm_max(_PmT x, _PmT y) { return pm_fmax(x, y); }
template <class _PmT> inline _PmT pm_min(_PmT x, _PmT y) { return pm_fmin(x, y); }
PM_FTYPES(PM_OV2, max)
PM_FTYPES(PM_OV2, min)

template <class _PmT> inline _PmT pm_clamp(_PmT x, _PmT lo, _PmT hi) {
    return pm_fromf<_PmT>(__builtin_elementwise_min(__builtin_elementwise_max(pm_tof(x), pm_tof(lo)), pm_tof(hi)));
}
PM_FTYPES(PM_OV3, clamp)

template <class _PmT> inline _PmT pm_mix(_PmT x, _PmT y, _PmT a) {
    pm_f32_t<_PmT> fx = pm_tof(x);
    return pm_fromf<_PmT>(fx + (pm_tof(y) - fx) * pm_tof(a));
}
PM_MATH3(mix)

template <class _PmT> inline _PmT pm_saturate(_PmT x) {
    return pm_fromf<_PmT>(__builtin_elementwise_min(__builtin_elementwise_max(pm_tof(x), (pm_f32_t<_PmT>)0.0f), (pm_f32_t<_PmT>)1.0f));
}
PM_MATH1(saturate)

template <class _PmT> inline _PmT pm_sign(_PmT x) {
    return pm_map1(x, [](float v) { return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v == v ? v : 0.0f; });
}
PM_MATH1(sign)

template <class _PmT> inline _PmT pm_step(_PmT edge, _PmT x) {
    return pm_map2(edge, x, [](float e, float v) { return v < e ? 0.0f : 1.0f; });
}
PM_MATH2(step)

template <class _PmT> inline _PmT pm_smoothstep(_PmT e0, _PmT e1, _PmT x) {
    pm_f32_t<_PmT> a = pm_tof(e0);
    pm_f32_t<_PmT> t = (pm_tof(x) - a) / (pm_tof(e1) - a);
    t = __builtin_elementwise_min(__builtin_elementwise_max(t, (pm_f32_t<_PmT>)0.0f), (pm_f32_t<_PmT>)1.0f);
    return pm_fromf<_PmT>(t * t * (3.0f - 2.0f * t));
}
PM_MATH3(smoothstep)

} // namespace metal
