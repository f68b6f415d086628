// MSL integer functions (metal_integer) for char, uchar, short, ushort, int,
// uint, long, ulong and their 2/3/4 vectors, plus max/min/clamp/max3/min3/
// median3 for mixed scalar arguments (integer and floating).
#pragma once
#include "types.h"
#include "math.h"

namespace metal {

// Unsigned type of the same size.
template <class E> struct pm_unsigned_of;
template <> struct pm_unsigned_of<char> { typedef uchar type; };
template <> struct pm_unsigned_of<signed char> { typedef uchar type; };
template <> struct pm_unsigned_of<uchar> { typedef uchar type; };
template <> struct pm_unsigned_of<short> { typedef ushort type; };
template <> struct pm_unsigned_of<ushort> { typedef ushort type; };
template <> struct pm_unsigned_of<int> { typedef uint type; };
template <> struct pm_unsigned_of<uint> { typedef uint type; };
template <> struct pm_unsigned_of<long> { typedef ulong type; };
template <> struct pm_unsigned_of<ulong> { typedef ulong type; };
template <class E> using pm_unsigned_t = typename pm_unsigned_of<E>::type;
template <class T> using pm_uvec_t = pm_rebind_t<pm_unsigned_t<pm_elem_t<T>>, T>;

// Per-element application of scalar functions.
template <class R, class T, class F> inline R pm_imap1(T x, F f) {
    if constexpr (!pm_is_vec<T>) {
        return (R)f(x);
    } else {
        R r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = f(x[i]);
        return r;
    }
}
template <class R, class T, class F> inline R pm_imap2(T x, T y, F f) {
    if constexpr (!pm_is_vec<T>) {
        return (R)f(x, y);
    } else {
        R r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = f(x[i], y[i]);
        return r;
    }
}
template <class R, class T, class F> inline R pm_imap3(T x, T y, T z, F f) {
    if constexpr (!pm_is_vec<T>) {
        return (R)f(x, y, z);
    } else {
        R r = 0;
        for (int i = 0; i < pm_width<T>; i++) r[i] = f(x[i], y[i], z[i]);
        return r;
    }
}

#define PM_ITYPES(M, ...)                                                                    \
    M(char, __VA_ARGS__) M(char2, __VA_ARGS__) M(char3, __VA_ARGS__) M(char4, __VA_ARGS__)     \
    M(uchar, __VA_ARGS__) M(uchar2, __VA_ARGS__) M(uchar3, __VA_ARGS__) M(uchar4, __VA_ARGS__) \
    M(short, __VA_ARGS__) M(short2, __VA_ARGS__) M(short3, __VA_ARGS__) M(short4, __VA_ARGS__) \
    M(ushort, __VA_ARGS__) M(ushort2, __VA_ARGS__) M(ushort3, __VA_ARGS__) M(ushort4, __VA_ARGS__) \
    M(int, __VA_ARGS__) M(int2, __VA_ARGS__) M(int3, __VA_ARGS__) M(int4, __VA_ARGS__)         \
    M(uint, __VA_ARGS__) M(uint2, __VA_ARGS__) M(uint3, __VA_ARGS__) M(uint4, __VA_ARGS__)     \
    M(long, __VA_ARGS__) M(long2, __VA_ARGS__) M(long3, __VA_ARGS__) M(long4, __VA_ARGS__)     \
    M(ulong, __VA_ARGS__) M(ulong2, __VA_ARGS__) M(ulong3, __VA_ARGS__) M(ulong4, __VA_ARGS__)

// Scalar MSL integer types with exact overloads.
template <class T> inline constexpr bool pm_is_msl_int =
    pm_same<T, char> || pm_same<T, uchar> || pm_same<T, short> || pm_same<T, ushort> ||
    pm_same<T, int> || pm_same<T, uint> || pm_same<T, long> || pm_same<T, ulong>;
// Scalars of different (or overload-less) types: resolved by a common type.
template <class... A> inline constexpr bool pm_all_same = true;
template <class A, class... B> inline constexpr bool pm_all_same<A, B...> = (pm_same<A, B> && ...);
template <class... A> inline constexpr bool pm_imixed =
    (pm_is_int<A> && ...) && !(pm_all_same<A...> && (pm_is_msl_int<A> && ...));
template <class... A> inline constexpr bool pm_anymixed =
    (pm_is_arith<A> && ...) && !(pm_all_same<A...> && ((pm_is_msl_int<A> || pm_is_float<A>) && ...));
template <bool F, class... A> struct pm_anycommon { typedef pm_fcommon_t<A...> type; };
template <class... A> struct pm_anycommon<false, A...> { typedef decltype((pm_declval<A>() + ...)) type; };
template <class... A> using pm_anycommon_t =
    typename pm_anycommon<((pm_is_float<A> || pm_is_double<A>) || ...), A...>::type;

#define PM_IOV1(T, name) \
    template <class P = void> inline T name(T x) { return pm_##name((pm_dep_t<P, T>)x); }
#define PM_IOV2(T, name) \
    template <class P = void> inline T name(T x, T y) { return pm_##name((pm_dep_t<P, T>)x, y); }
#define PM_IOV3(T, name) \
    template <class P = void> inline T name(T x, T y, T z) { return pm_##name((pm_dep_t<P, T>)x, y, z); }
#define PM_IMATH1(name) PM_ITYPES(PM_IOV1, name)
#define PM_IMATH2(name)                                                    \
    PM_ITYPES(PM_IOV2, name)                                               \
    template <class A, class B>                                            \
        requires(pm_imixed<A, B>)                                          \
    inline pm_anycommon_t<A, B> name(A x, B y) {                           \
        typedef pm_anycommon_t<A, B> C;                                    \
        return name((C)x, (C)y);                                           \
    }
#define PM_IMATH3(name)                                                    \
    PM_ITYPES(PM_IOV3, name)                                               \
    template <class A, class B, class C>                                   \
        requires(pm_imixed<A, B, C>)                                       \
    inline pm_anycommon_t<A, B, C> name(A x, B y, C z) {                   \
        typedef pm_anycommon_t<A, B, C> R;                                 \
        return name((R)x, (R)y, (R)z);                                     \
    }

// abs, absdiff
template <class T> inline T pm_abs_i(T x) {
    if constexpr (pm_is_signed<pm_elem_t<T>>) return __builtin_elementwise_abs(x);
    else return x;
}
#define PM_IABS(T, _) \
    template <class P = void> inline T abs(T x) { return pm_abs_i((pm_dep_t<P, T>)x); }
PM_ITYPES(PM_IABS, _)
#undef PM_IABS
template <class T> inline pm_uvec_t<T> pm_absdiff(T x, T y) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap2<pm_uvec_t<T>>(x, y, [](E a, E b) { return a > b ? (U)((U)a - (U)b) : (U)((U)b - (U)a); });
}
#define PM_IABSDIFF(T, _) \
    template <class P = void> inline pm_uvec_t<T> absdiff(T x, T y) { return pm_absdiff((pm_dep_t<P, T>)x, y); }
PM_ITYPES(PM_IABSDIFF, _)
#undef PM_IABSDIFF
template <class A, class B>
    requires(pm_imixed<A, B>)
inline auto absdiff(A x, B y) {
    typedef pm_anycommon_t<A, B> C;
    return absdiff((C)x, (C)y);
}

// addsat, subsat, hadd, rhadd
template <class T> inline T pm_addsat(T x, T y) { return __builtin_elementwise_add_sat(x, y); }
template <class T> inline T pm_subsat(T x, T y) { return __builtin_elementwise_sub_sat(x, y); }
template <class T> inline T pm_hadd(T x, T y) {
    typedef pm_elem_t<T> E;
    return pm_imap2<T>(x, y, [](E a, E b) { return (E)((a >> 1) + (b >> 1) + (a & b & 1)); });
}
template <class T> inline T pm_rhadd(T x, T y) {
    typedef pm_elem_t<T> E;
    return pm_imap2<T>(x, y, [](E a, E b) { return (E)((a >> 1) + (b >> 1) + ((a | b) & 1)); });
}
PM_IMATH2(addsat)
PM_IMATH2(subsat)
PM_IMATH2(hadd)
PM_IMATH2(rhadd)

// clz, ctz, popcount, reverse_bits
template <class T> inline T pm_clz(T x) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap1<T>(x, [](E a) { return (E)__builtin_clzg((U)a, (int)(sizeof(E) * 8)); });
}
template <class T> inline T pm_ctz(T x) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap1<T>(x, [](E a) { return (E)__builtin_ctzg((U)a, (int)(sizeof(E) * 8)); });
}
template <class T> inline T pm_popcount(T x) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap1<T>(x, [](E a) { return (E)__builtin_popcountg((U)a); });
}
template <class T> inline T pm_reverse_bits(T x) { return __builtin_elementwise_bitreverse(x); }
PM_IMATH1(clz)
PM_IMATH1(ctz)
PM_IMATH1(popcount)
PM_IMATH1(reverse_bits)

// extract_bits(x, offset, bits), insert_bits(base, insert, offset, bits)
template <class E> inline E pm_extract1(E x, uint offset, uint bits) {
    if (bits == 0) return 0;
    ulong u = (ulong)(pm_unsigned_t<E>)x >> offset;
    if (bits < 64) u &= (1ul << bits) - 1ul;
    if constexpr (pm_is_signed<E>) return (E)((long)(u << (64 - bits)) >> (64 - bits));
    else return (E)u;
}
template <class E> inline E pm_insert1(E base, E ins, uint offset, uint bits) {
    if (bits == 0) return base;
    ulong m = bits < 64 ? ((1ul << bits) - 1ul) << offset : ~0ul;
    ulong b = (ulong)(pm_unsigned_t<E>)base, n = (ulong)(pm_unsigned_t<E>)ins << offset;
    return (E)(pm_unsigned_t<E>)((b & ~m) | (n & m));
}
template <class T> inline T pm_extract_bits(T x, uint offset, uint bits) {
    typedef pm_elem_t<T> E;
    return pm_imap1<T>(x, [=](E a) { return pm_extract1<E>(a, offset, bits); });
}
template <class T> inline T pm_insert_bits(T base, T ins, uint offset, uint bits) {
    typedef pm_elem_t<T> E;
    return pm_imap2<T>(base, ins, [=](E a, E b) { return pm_insert1<E>(a, b, offset, bits); });
}
#define PM_IBITS(T, _)                                                                          \
    template <class P = void> inline T extract_bits(T x, uint offset, uint bits) {              \
        return pm_extract_bits((pm_dep_t<P, T>)x, offset, bits);                                \
    }                                                                                           \
    template <class P = void> inline T insert_bits(T base, T insert, uint offset, uint bits) {  \
        return pm_insert_bits((pm_dep_t<P, T>)base, insert, offset, bits);                      \
    }
PM_ITYPES(PM_IBITS, _)
#undef PM_IBITS

// mulhi, madhi, mul24, mad24, madsat, rotate
template <class E> inline E pm_mulhi1(E a, E b) {
    if constexpr (sizeof(E) == 8) {
        if constexpr (pm_is_signed<E>) return (E)(((__int128)a * (__int128)b) >> 64);
        else return (E)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
    } else {
        if constexpr (pm_is_signed<E>) return (E)(((long)a * (long)b) >> (sizeof(E) * 8));
        else return (E)(((ulong)a * (ulong)b) >> (sizeof(E) * 8));
    }
}
template <class T> inline T pm_mulhi(T x, T y) {
    typedef pm_elem_t<T> E;
    return pm_imap2<T>(x, y, [](E a, E b) { return pm_mulhi1<E>(a, b); });
}
template <class T> inline T pm_madhi(T x, T y, T z) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap3<T>(x, y, z, [](E a, E b, E c) { return (E)(U)((U)pm_mulhi1<E>(a, b) + (U)c); });
}
template <class E> inline E pm_madsat1(E a, E b, E c) {
    if constexpr (pm_is_signed<E>) {
        __int128 r = (__int128)a * (__int128)b + (__int128)c;
        if (r > (__int128)numeric_limits<E>::max()) return numeric_limits<E>::max();
        if (r < (__int128)numeric_limits<E>::min()) return numeric_limits<E>::min();
        return (E)r;
    } else {
        E p, s;
        if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, &s)) return numeric_limits<E>::max();
        return s;
    }
}
template <class T> inline T pm_madsat(T x, T y, T z) {
    typedef pm_elem_t<T> E;
    return pm_imap3<T>(x, y, z, [](E a, E b, E c) { return pm_madsat1<E>(a, b, c); });
}
// mul24 / mad24: the operands are 24-bit values; wrapping 32-bit arithmetic.
template <class T> inline T pm_mul24(T x, T y) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap2<T>(x, y, [](E a, E b) { return (E)(U)((U)a * (U)b); });
}
template <class T> inline T pm_mad24(T x, T y, T z) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap3<T>(x, y, z, [](E a, E b, E c) { return (E)(U)((U)a * (U)b + (U)c); });
}
template <class T> inline T pm_rotate(T v, T i) {
    typedef pm_elem_t<T> E;
    typedef pm_unsigned_t<E> U;
    return pm_imap2<T>(v, i, [](E a, E b) {
        constexpr uint W = sizeof(E) * 8;
        uint n = (uint)(U)b & (W - 1);
        U u = (U)a;
        return (E)(U)((U)(u << n) | (U)(u >> ((W - n) & (W - 1))));
    });
}
PM_IMATH2(mulhi)
PM_IMATH3(madhi)
PM_IMATH3(madsat)
PM_IMATH2(rotate)
#define PM_I24(T, _)                                                          \
    template <class P = void> inline T mul24(T x, T y) { return pm_mul24((pm_dep_t<P, T>)x, y); }         \
    template <class P = void> inline T mad24(T x, T y, T z) { return pm_mad24((pm_dep_t<P, T>)x, y, z); }
PM_I24(int, _) PM_I24(int2, _) PM_I24(int3, _) PM_I24(int4, _)
PM_I24(uint, _) PM_I24(uint2, _) PM_I24(uint3, _) PM_I24(uint4, _)
#undef PM_I24

// max, min, clamp (integers), max3, min3, median3 (integers and floats)
template <class T> inline T pm_imax(T x, T y) { return __builtin_elementwise_max(x, y); }
template <class T> inline T pm_imin(T x, T y) { return __builtin_elementwise_min(x, y); }
template <class T> inline T pm_iclamp(T x, T lo, T hi) {
    return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi);
}
#define PM_IMINMAX(T, _)                                                            \
    template <class P = void> inline T max(T x, T y) { return pm_imax((pm_dep_t<P, T>)x, y); }           \
    template <class P = void> inline T min(T x, T y) { return pm_imin((pm_dep_t<P, T>)x, y); }           \
    template <class P = void> inline T clamp(T x, T lo, T hi) { return pm_iclamp((pm_dep_t<P, T>)x, lo, hi); } \
    template <class P = void> inline T max3(T x, T y, T z) {                                               \
        return pm_imax(pm_imax((pm_dep_t<P, T>)x, y), z);                                                  \
    }                                                                                                      \
    template <class P = void> inline T min3(T x, T y, T z) {                                               \
        return pm_imin(pm_imin((pm_dep_t<P, T>)x, y), z);                                                  \
    }                                                                                                      \
    template <class P = void> inline T median3(T x, T y, T z) {                                            \
        pm_dep_t<P, T> a = x;                                                                              \
        return pm_imax(pm_imin(a, y), pm_imin(pm_imax(a, y), z));                                          \
    }
PM_ITYPES(PM_IMINMAX, _)
#undef PM_IMINMAX
#define PM_FMINMAX3(T, _)                                                           \
    template <class P = void> inline T max3(T x, T y, T z) {                                               \
        return pm_fmax(pm_fmax((pm_dep_t<P, T>)x, y), z);                                                  \
    }                                                                                                      \
    template <class P = void> inline T min3(T x, T y, T z) {                                               \
        return pm_fmin(pm_fmin((pm_dep_t<P, T>)x, y), z);                                                  \
    }                                                                                                      \
    template <class P = void> inline T median3(T x, T y, T z) {                                            \
        pm_dep_t<P, T> a = x;                                                                              \
        return pm_fmax(pm_fmin(a, y), pm_fmin(pm_fmax(a, y), z));                                          \
    }
PM_FTYPES(PM_FMINMAX3, _)
#undef PM_FMINMAX3

// Mixed scalar arguments: max(uint, int), max(float, 0), clamp(h, 0.0, 1.0), ...
#define PM_ANY2(name)                                                      \
    template <class A, class B>                                            \
        requires(pm_anymixed<A, B>)                                        \
    inline pm_anycommon_t<A, B> name(A x, B y) {                           \
        typedef pm_anycommon_t<A, B> C;                                    \
        return name((C)x, (C)y);                                           \
    }
#define PM_ANY3(name)                                                      \
    template <class A, class B, class C>                                   \
        requires(pm_anymixed<A, B, C>)                                     \
    inline pm_anycommon_t<A, B, C> name(A x, B y, C z) {                   \
        typedef pm_anycommon_t<A, B, C> R;                                 \
        return name((R)x, (R)y, (R)z);                                     \
    }
PM_ANY2(max)
PM_ANY2(min)
PM_ANY3(clamp)
PM_ANY3(max3)
PM_ANY3(min3)
PM_ANY3(median3)
#undef PM_ANY2
#undef PM_ANY3

} // namespace metal
