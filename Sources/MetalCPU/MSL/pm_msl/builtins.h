// Apple's compiler builtins (`__metal_fabs(x, __METAL_MAYBE_FAST_MATH__)`,
// `__metal_simd_shuffle_down(x, d)`, `__metal_get_simdgroup_size(ushort())`):
// Apple's <metal_stdlib> is written on them and some projects call them
// directly (MLX's bf16_math.h defines its bfloat overloads with them). Each
// forwards to the metal:: function of the same name. The math mode argument
// is a tag type: __METAL_FAST_MATH__ picks metal::fast::, __METAL_PRECISE_MATH__
// metal::precise::, __METAL_MAYBE_FAST_MATH__ the compile mode's.
#pragma once
#include "math.h"
#include "integer.h"
#include "simd.h"

namespace metal {
struct pm_fast_math_t {};
struct pm_precise_math_t {};
} // namespace metal
#define __METAL_FAST_MATH__ ::metal::pm_fast_math_t()
#define __METAL_PRECISE_MATH__ ::metal::pm_precise_math_t()
#ifdef __FAST_MATH__
#define __METAL_MAYBE_FAST_MATH__ __METAL_FAST_MATH__
#else
#define __METAL_MAYBE_FAST_MATH__ __METAL_PRECISE_MATH__
#endif

#pragma GCC visibility push(hidden)
// __metal_NAME(args..., mode) -> metal::fast::NAME / metal::precise::NAME(args...)
#define PM_BUILTIN_MATH(name, ...)                                                                          \
    template <class _PmT> inline auto __metal_##name(PM_PARAMS_##__VA_ARGS__, ::metal::pm_fast_math_t) {   \
        return ::metal::fast::name(PM_ARGS_##__VA_ARGS__);                                                  \
    }                                                                                                       \
    template <class _PmT> inline auto __metal_##name(PM_PARAMS_##__VA_ARGS__, ::metal::pm_precise_math_t) { \
        return ::metal::precise::name(PM_ARGS_##__VA_ARGS__);                                               \
    }
#define PM_PARAMS_1 _PmT x
#define PM_ARGS_1 x
#define PM_PARAMS_2 _PmT x, _PmT y
#define PM_ARGS_2 x, y
#define PM_PARAMS_3 _PmT x, _PmT y, _PmT z
#define PM_ARGS_3 x, y, z
#define PM_PARAMS_LDEXP _PmT x, ::metal::pm_i32_t<_PmT> k
#define PM_ARGS_LDEXP x, k
PM_BUILTIN_MATH(acos, 1) PM_BUILTIN_MATH(acosh, 1) PM_BUILTIN_MATH(asin, 1) PM_BUILTIN_MATH(asinh, 1)
PM_BUILTIN_MATH(atan, 1) PM_BUILTIN_MATH(atanh, 1) PM_BUILTIN_MATH(cbrt, 1) PM_BUILTIN_MATH(ceil, 1)
PM_BUILTIN_MATH(cos, 1) PM_BUILTIN_MATH(cosh, 1) PM_BUILTIN_MATH(cospi, 1) PM_BUILTIN_MATH(exp, 1)
PM_BUILTIN_MATH(exp10, 1) PM_BUILTIN_MATH(exp2, 1) PM_BUILTIN_MATH(fabs, 1) PM_BUILTIN_MATH(floor, 1)
PM_BUILTIN_MATH(fract, 1) PM_BUILTIN_MATH(log, 1) PM_BUILTIN_MATH(log10, 1) PM_BUILTIN_MATH(log2, 1)
PM_BUILTIN_MATH(rint, 1) PM_BUILTIN_MATH(round, 1) PM_BUILTIN_MATH(rsqrt, 1) PM_BUILTIN_MATH(sin, 1)
PM_BUILTIN_MATH(sinh, 1) PM_BUILTIN_MATH(sinpi, 1) PM_BUILTIN_MATH(sqrt, 1) PM_BUILTIN_MATH(tan, 1)
PM_BUILTIN_MATH(tanh, 1) PM_BUILTIN_MATH(tanpi, 1) PM_BUILTIN_MATH(trunc, 1) PM_BUILTIN_MATH(saturate, 1)
PM_BUILTIN_MATH(atan2, 2) PM_BUILTIN_MATH(copysign, 2) PM_BUILTIN_MATH(divide, 2) PM_BUILTIN_MATH(fdim, 2)
PM_BUILTIN_MATH(fmax, 2) PM_BUILTIN_MATH(fmin, 2) PM_BUILTIN_MATH(fmod, 2) PM_BUILTIN_MATH(pow, 2)
PM_BUILTIN_MATH(powr, 2) PM_BUILTIN_MATH(fmax3, 3) PM_BUILTIN_MATH(fmin3, 3) PM_BUILTIN_MATH(fmedian3, 3)
PM_BUILTIN_MATH(clamp, 3) PM_BUILTIN_MATH(ldexp, LDEXP)
#undef PM_BUILTIN_MATH
#undef PM_PARAMS_1
#undef PM_ARGS_1
#undef PM_PARAMS_2
#undef PM_ARGS_2
#undef PM_PARAMS_3
#undef PM_ARGS_3
#undef PM_PARAMS_LDEXP
#undef PM_ARGS_LDEXP

// Builtins without a math mode.
template <class _PmT> inline auto __metal_fma(_PmT x, _PmT y, _PmT z) { return ::metal::fma(x, y, z); }
template <class _PmT> inline auto __metal_nextafter(_PmT x, _PmT y) { return ::metal::nextafter(x, y); }
template <class _PmT, class _PmE> inline auto __metal_frexp(_PmT x, _PmE *e) { return ::metal::frexp(x, *e); }
template <class _PmT> inline auto __metal_ilogb(_PmT x) { return ::metal::ilogb(x); }
// The execution width of a simdgroup, in the type of the (unused) argument.
template <class _PmT> constexpr _PmT __metal_get_simdgroup_size(_PmT) { return (_PmT)PM_SIMD_WIDTH; }

// SIMD-group and quad-group builtins; the call site is passed on for the runtime's diagnostics.
#define PM_SITE ::pm::rt::site pm_site = ::pm::rt::site()
#define PM_BUILTIN_GROUP(name)                                                                                      \
    template <class _PmT> inline _PmT __metal_simd_##name(_PmT x, PM_SITE) { return ::metal::simd_##name(x, pm_site); } \
    template <class _PmT> inline _PmT __metal_quad_##name(_PmT x, PM_SITE) { return ::metal::quad_##name(x, pm_site); }
#define PM_BUILTIN_LANE(name)                                                         \
    template <class _PmT> inline _PmT __metal_simd_##name(_PmT x, ushort n, PM_SITE) { \
        return ::metal::simd_##name(x, n, pm_site);                                   \
    }                                                                                 \
    template <class _PmT> inline _PmT __metal_quad_##name(_PmT x, ushort n, PM_SITE) { \
        return ::metal::quad_##name(x, n, pm_site);                                   \
    }
#define PM_BUILTIN_FILL(name)                                                                        \
    template <class _PmT> inline _PmT __metal_simd_##name(_PmT x, _PmT fill, ushort d, PM_SITE) {     \
        return ::metal::simd_##name(x, fill, d, pm_site);                                            \
    }                                                                                                \
    template <class _PmT> inline _PmT __metal_simd_##name(_PmT x, _PmT fill, ushort d, ushort m, PM_SITE) { \
        return ::metal::simd_##name(x, fill, d, m, pm_site);                                         \
    }                                                                                                \
    template <class _PmT> inline _PmT __metal_quad_##name(_PmT x, _PmT fill, ushort d, PM_SITE) {     \
        return ::metal::quad_##name(x, fill, d, pm_site);                                            \
    }                                                                                                \
    template <class _PmT> inline _PmT __metal_quad_##name(_PmT x, _PmT fill, ushort d, ushort m, PM_SITE) { \
        return ::metal::quad_##name(x, fill, d, m, pm_site);                                         \
    }
PM_BUILTIN_GROUP(sum) PM_BUILTIN_GROUP(product) PM_BUILTIN_GROUP(min) PM_BUILTIN_GROUP(max)
PM_BUILTIN_GROUP(and) PM_BUILTIN_GROUP(or) PM_BUILTIN_GROUP(xor) PM_BUILTIN_GROUP(broadcast_first)
PM_BUILTIN_GROUP(prefix_exclusive_sum) PM_BUILTIN_GROUP(prefix_inclusive_sum)
PM_BUILTIN_GROUP(prefix_exclusive_product) PM_BUILTIN_GROUP(prefix_inclusive_product)
PM_BUILTIN_LANE(broadcast) PM_BUILTIN_LANE(shuffle) PM_BUILTIN_LANE(shuffle_up) PM_BUILTIN_LANE(shuffle_down)
PM_BUILTIN_LANE(shuffle_xor) PM_BUILTIN_LANE(shuffle_rotate_up) PM_BUILTIN_LANE(shuffle_rotate_down)
PM_BUILTIN_FILL(shuffle_and_fill_up) PM_BUILTIN_FILL(shuffle_and_fill_down)
inline bool __metal_simd_all(bool x, PM_SITE) { return ::metal::simd_all(x, pm_site); }
inline bool __metal_simd_any(bool x, PM_SITE) { return ::metal::simd_any(x, pm_site); }
inline ::metal::simd_vote __metal_simd_ballot(bool x, PM_SITE) { return ::metal::simd_ballot(x, pm_site); }
inline bool __metal_simd_is_first(PM_SITE) { return ::metal::simd_is_first(pm_site); }
#undef PM_BUILTIN_GROUP
#undef PM_BUILTIN_LANE
#undef PM_BUILTIN_FILL
#undef PM_SITE
#pragma GCC visibility pop
