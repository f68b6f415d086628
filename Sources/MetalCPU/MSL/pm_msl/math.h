// MSL math and common functions (metal_math, metal_common), constants.
//
// Every function has overloads for float, half and bfloat scalars and 2/3/4
// vectors. half and bfloat compute in float and round the result. The default
// namespace gives precise (libm) results, as pymetal compiles in safe math
// mode; metal::precise:: and metal::fast:: name the same functions.
// Mixed scalar arguments (`pow(x, 2.0)`, `fmax(h, 1.0f)`) resolve to the widest
// MSL floating type among them; double arguments count as float.
#pragma once
#include "types.h"

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------
#ifndef MAXFLOAT
#define MAXFLOAT 0x1.fffffep+127f
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
template <class T> using pm_f32_t = pm_rebind_t<float, T>;
template <class T> using pm_i32_t = pm_rebind_t<int, T>;

template <class T> constexpr pm_f32_t<T> pm_tof(T x) {
    if constexpr (!pm_is_vec<T>) return (float)x;
    else if constexpr (pm_same<pm_elem_t<T>, float>) return x;
    else return __builtin_convertvector(x, pm_f32_t<T>);
}
template <class T> constexpr T pm_fromf(pm_f32_t<T> x) {
    if constexpr (!pm_is_vec<T>) return (T)x;
    else if constexpr (pm_same<pm_elem_t<T>, float>) return x;
    else return __builtin_convertvector(x, T);
}
// Applies a float -> float function to every element.
template <class T, class F> inline T pm_map1(T x, F f) {
    if constexpr (!pm_is_vec<T>) {
        return (T)f((float)x);
    } else {
        pm_f32_t<T> a = pm_tof(x), r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = f(a[i]);
        return pm_fromf<T>(r);
    }
}
template <class T, class F> inline T pm_map2(T x, T y, F f) {
    if constexpr (!pm_is_vec<T>) {
        return (T)f((float)x, (float)y);
    } else {
        pm_f32_t<T> a = pm_tof(x), b = pm_tof(y), r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = f(a[i], b[i]);
        return pm_fromf<T>(r);
    }
}
// Result type of mixed scalar arguments: the widest MSL floating type among
// them (double counts as float, half with bfloat gives float), else float.
template <class A> inline constexpr int pm_frank = pm_same<A, bfloat> ? 1 : pm_same<A, half> ? 2 : pm_is_float<A> || pm_is_double<A> ? 4 : 0;
template <class A, class B> struct pm_fcommon2 {
    static constexpr int r = (pm_frank<A> | pm_frank<B>);
    typedef pm_cond_t<r == 1, bfloat, pm_cond_t<r == 2, half, float>> type;
};
template <class... A> struct pm_fcommon;
template <class A> struct pm_fcommon<A> { typedef typename pm_fcommon2<A, A>::type type; };
template <class A, class B> struct pm_fcommon<A, B> : pm_fcommon2<A, B> {};
template <class A, class B, class C> struct pm_fcommon<A, B, C> {
    typedef typename pm_fcommon2<typename pm_fcommon2<A, B>::type, C>::type type;
};
template <class... A> using pm_fcommon_t = typename pm_fcommon<A...>::type;
// Are these scalars a mix that no exact float/half/bfloat overload matches?
template <class... A> inline constexpr bool pm_fmixed =
    (pm_is_arith<A> && ...) && !((pm_same<A, float> && ...) || (pm_same<A, half> && ...) || (pm_same<A, bfloat> && ...));

#define PM_FTYPES(M, ...)                                                                   \
    M(float, __VA_ARGS__) M(float2, __VA_ARGS__) M(float3, __VA_ARGS__) M(float4, __VA_ARGS__) \
    M(half, __VA_ARGS__) M(half2, __VA_ARGS__) M(half3, __VA_ARGS__) M(half4, __VA_ARGS__)     \
    M(bfloat, __VA_ARGS__) M(bfloat2, __VA_ARGS__) M(bfloat3, __VA_ARGS__) M(bfloat4, __VA_ARGS__)

#define PM_OV1(T, name) \
    template <class P = void> inline T name(T x) { return pm_##name((pm_dep_t<P, T>)x); }
#define PM_OV2(T, name) \
    template <class P = void> inline T name(T x, T y) { return pm_##name((pm_dep_t<P, T>)x, y); }
#define PM_OV3(T, name) \
    template <class P = void> inline T name(T x, T y, T z) { return pm_##name((pm_dep_t<P, T>)x, y, z); }
// name(T) for every floating T, plus name(double / integer) -> float.
#define PM_MATH1(name)                                                     \
    PM_FTYPES(PM_OV1, name)                                                \
    template <class A>                                                     \
        requires(pm_is_double<A> || pm_is_int<A>)                          \
    inline float name(A x) { return pm_##name((float)x); }
#define PM_MATH2(name)                                                     \
    PM_FTYPES(PM_OV2, name)                                                \
    template <class A, class B>                                            \
        requires(pm_fmixed<A, B>)                                          \
    inline pm_fcommon_t<A, B> name(A x, B y) {                             \
        typedef pm_fcommon_t<A, B> C;                                      \
        return pm_##name((C)x, (C)y);                                      \
    }
#define PM_MATH3(name)                                                     \
    PM_FTYPES(PM_OV3, name)                                                \
    template <class A, class B, class C>                                   \
        requires(pm_fmixed<A, B, C>)                                       \
    inline pm_fcommon_t<A, B, C> name(A x, B y, C z) {                     \
        typedef pm_fcommon_t<A, B, C> R;                                   \
        return pm_##name((R)x, (R)y, (R)z);                                \
    }

// Precise single-element functions through libm (float).
#define PM_LIBM1(name, fn)                                                      \
    template <class T> inline T pm_##name(T x) {                                \
        return pm_map1(x, [](float v) { return fn(v); });                       \
    }                                                                           \
    PM_MATH1(name)
#define PM_LIBM2(name, fn)                                                      \
    template <class T> inline T pm_##name(T x, T y) {                           \
        return pm_map2(x, y, [](float a, float b) { return fn(a, b); });        \
    }                                                                           \
    PM_MATH2(name)
// Whole-vector clang builtins (vectorise; exact in float for half / bfloat).
#define PM_ELEM1(name, builtin)                                                 \
    template <class T> inline T pm_##name(T x) {                                \
        return pm_fromf<T>(builtin(pm_tof(x)));                                 \
    }                                                                           \
    PM_MATH1(name)

PM_LIBM1(acos, __builtin_acosf)
PM_LIBM1(acosh, __builtin_acoshf)
PM_LIBM1(asin, __builtin_asinf)
PM_LIBM1(asinh, __builtin_asinhf)
PM_LIBM1(atan, __builtin_atanf)
PM_LIBM1(atanh, __builtin_atanhf)
PM_LIBM1(cbrt, __builtin_cbrtf)
PM_LIBM1(cos, __builtin_cosf)
PM_LIBM1(cosh, __builtin_coshf)
PM_LIBM1(exp, __builtin_expf)
PM_LIBM1(exp2, __builtin_exp2f)
PM_LIBM1(exp10, __builtin_exp10f)
PM_LIBM1(log, __builtin_logf)
PM_LIBM1(log2, __builtin_log2f)
PM_LIBM1(log10, __builtin_log10f)
PM_LIBM1(sin, __builtin_sinf)
PM_LIBM1(sinh, __builtin_sinhf)
PM_LIBM1(tan, __builtin_tanf)
PM_LIBM1(tanh, __builtin_tanhf)
PM_LIBM2(atan2, __builtin_atan2f)
PM_LIBM2(fmod, __builtin_fmodf)
PM_LIBM2(pow, __builtin_powf)

PM_ELEM1(ceil, __builtin_elementwise_ceil)
PM_ELEM1(floor, __builtin_elementwise_floor)
PM_ELEM1(fabs, __builtin_elementwise_abs)
PM_ELEM1(rint, __builtin_elementwise_rint)
PM_ELEM1(round, __builtin_elementwise_round) // halfway cases away from zero
PM_ELEM1(trunc, __builtin_elementwise_trunc)
PM_ELEM1(sqrt, __builtin_elementwise_sqrt)

// abs(float) = fabs; the integer overloads are in integer.h.
template <class T> inline T pm_abs(T x) { return pm_fabs(x); }
PM_FTYPES(PM_OV1, abs)
template <class A>
    requires(pm_is_double<A>)
inline float abs(A x) { return pm_fabs((float)x); }

template <class T> inline T pm_rsqrt(T x) {
    pm_f32_t<T> a = pm_tof(x);
    return pm_fromf<T>(1.0f / __builtin_elementwise_sqrt(a));
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
template <class E> inline constexpr float pm_below_one = 0x1.fffffep-1f;
template <> inline constexpr float pm_below_one<half> = 0x1.ffcp-1f;
template <> inline constexpr float pm_below_one<bfloat> = 0x1.fep-1f;
template <class T> inline T pm_fract(T x) {
    return pm_map1(x, [](float v) {
        if (__builtin_isinf(v)) return __builtin_copysignf(0.0f, v);
        float f = v - __builtin_floorf(v);
        return f < pm_below_one<pm_elem_t<T>> ? f : (f != f ? f : pm_below_one<pm_elem_t<T>>);
    });
}
PM_MATH1(fract)

template <class T> inline T pm_fmax(T x, T y) {
    return pm_fromf<T>(__builtin_elementwise_max(pm_tof(x), pm_tof(y)));
}
template <class T> inline T pm_fmin(T x, T y) {
    return pm_fromf<T>(__builtin_elementwise_min(pm_tof(x), pm_tof(y)));
}
template <class T> inline T pm_copysign(T x, T y) {
    return pm_fromf<T>(__builtin_elementwise_copysign(pm_tof(x), pm_tof(y)));
}
template <class T> inline T pm_fdim(T x, T y) {
    return pm_map2(x, y, [](float a, float b) { return (a != a || b != b) ? a + b : a > b ? a - b : 0.0f; });
}
template <class T> inline T pm_divide(T x, T y) { return pm_fromf<T>(pm_tof(x) / pm_tof(y)); }
template <class T> inline T pm_powr(T x, T y) {
    return pm_map2(x, y, [](float a, float b) { return a < 0.0f ? __builtin_nanf("") : __builtin_powf(a, b); });
}
PM_MATH2(fmax)
PM_MATH2(fmin)
PM_MATH2(copysign)
PM_MATH2(fdim)
PM_MATH2(divide)
PM_MATH2(powr)

// nextafter in the element's own format (bit stepping).
template <class E, class U> inline E pm_nextafter_bits(E x, E y) {
    if (x != x || y != y) return (E)((float)x + (float)y);
    if (x == y) return y;
    U b = __builtin_bit_cast(U, x);
    constexpr U sign = (U)((U)1 << (sizeof(U) * 8 - 1));
    if ((b & (U)~sign) == 0) return __builtin_bit_cast(E, (U)((__builtin_bit_cast(U, y) & sign) | 1));
    if ((x < y) == ((b & sign) == 0)) b++;
    else b--;
    return __builtin_bit_cast(E, b);
}
template <class T> inline T pm_nextafter(T x, T y) {
    typedef pm_elem_t<T> E;
    typedef pm_cond_t<sizeof(E) == 2, ushort, uint> U;
    if constexpr (!pm_is_vec<T>) {
        return pm_nextafter_bits<E, U>(x, y);
    } else {
        T r = x;
        for (int i = 0; i < pm_width<T>; i++) r[i] = pm_nextafter_bits<E, U>(x[i], y[i]);
        return r;
    }
}
PM_MATH2(nextafter)

template <class T> inline T pm_fma(T x, T y, T z) {
    return pm_fromf<T>(__builtin_elementwise_fma(pm_tof(x), pm_tof(y), pm_tof(z)));
}
PM_MATH3(fma)

// ldexp(x, k), frexp(x, exp), ilogb(x), modf(x, ip), sincos(x, c)
template <class T> inline T pm_ldexp(T x, pm_i32_t<T> k) {
    if constexpr (!pm_is_vec<T>) {
        return (T)__builtin_ldexpf((float)x, k);
    } else {
        pm_f32_t<T> a = pm_tof(x), r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = __builtin_ldexpf(a[i], k[i]);
        return pm_fromf<T>(r);
    }
}
template <class T> inline T pm_frexp(T x, pm_i32_t<T> &e) {
    if constexpr (!pm_is_vec<T>) {
        return (T)__builtin_frexpf((float)x, &e);
    } else {
        pm_f32_t<T> a = pm_tof(x), r = 0;
        for (int i = 0; i < pm_width<T>; i++) {
            int ei = 0;
            r[i] = __builtin_frexpf(a[i], &ei);
            e[i] = ei;
        }
        return pm_fromf<T>(r);
    }
}
template <class T> inline pm_i32_t<T> pm_ilogb(T x) {
    if constexpr (!pm_is_vec<T>) {
        return __builtin_ilogbf((float)x);
    } else {
        pm_f32_t<T> a = pm_tof(x);
        pm_i32_t<T> r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = __builtin_ilogbf(a[i]);
        return r;
    }
}
template <class T> inline T pm_modf(T x, T &ip) {
    T t = pm_trunc(x);
    ip = t;
    return pm_map2(x, t, [](float a, float b) {
        return __builtin_isinf(a) ? __builtin_copysignf(0.0f, a) : __builtin_copysignf(a - b, a);
    });
}
#define PM_LDEXP(T, _)                                                                         \
    template <class P = void> inline T ldexp(T x, pm_i32_t<T> k) { return pm_ldexp<pm_dep_t<P, T>>(x, k); } \
    template <class P = void> inline T frexp(T x, pm_i32_t<T> &e) { return pm_frexp<pm_dep_t<P, T>>(x, e); } \
    template <class P = void> inline pm_i32_t<T> ilogb(T x) { return pm_ilogb<pm_dep_t<P, T>>(x); }        \
    template <class P = void> inline T modf(T x, T &ip) { return pm_modf<pm_dep_t<P, T>>(x, ip); }          \
    template <class P = void> inline T sincos(T x, T &c) {                                                 \
        c = pm_cos((pm_dep_t<P, T>)x);                                                                     \
        return pm_sin((pm_dep_t<P, T>)x);                                                                  \
    }
PM_FTYPES(PM_LDEXP, _)
#undef PM_LDEXP

// ---------------------------------------------------------------------------
// Common functions (metal_common) and float max / min
// ---------------------------------------------------------------------------
template <class T> inline T pm_max(T x, T y) { return pm_fmax(x, y); }
template <class T> inline T pm_min(T x, T y) { return pm_fmin(x, y); }
PM_FTYPES(PM_OV2, max)
PM_FTYPES(PM_OV2, min)

template <class T> inline T pm_clamp(T x, T lo, T hi) {
    return pm_fromf<T>(__builtin_elementwise_min(__builtin_elementwise_max(pm_tof(x), pm_tof(lo)), pm_tof(hi)));
}
PM_FTYPES(PM_OV3, clamp)

template <class T> inline T pm_mix(T x, T y, T a) {
    pm_f32_t<T> fx = pm_tof(x);
    return pm_fromf<T>(fx + (pm_tof(y) - fx) * pm_tof(a));
}
PM_MATH3(mix)

template <class T> inline T pm_saturate(T x) {
    return pm_fromf<T>(__builtin_elementwise_min(__builtin_elementwise_max(pm_tof(x), (pm_f32_t<T>)0.0f), (pm_f32_t<T>)1.0f));
}
PM_MATH1(saturate)

template <class T> inline T pm_sign(T x) {
    return pm_map1(x, [](float v) { return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v == v ? v : 0.0f; });
}
PM_MATH1(sign)

template <class T> inline T pm_step(T edge, T x) {
    return pm_map2(edge, x, [](float e, float v) { return v < e ? 0.0f : 1.0f; });
}
PM_MATH2(step)

template <class T> inline T pm_smoothstep(T e0, T e1, T x) {
    pm_f32_t<T> a = pm_tof(e0);
    pm_f32_t<T> t = (pm_tof(x) - a) / (pm_tof(e1) - a);
    t = __builtin_elementwise_min(__builtin_elementwise_max(t, (pm_f32_t<T>)0.0f), (pm_f32_t<T>)1.0f);
    return pm_fromf<T>(t * t * (3.0f - 2.0f * t));
}
PM_MATH3(smoothstep)

} // namespace metal
