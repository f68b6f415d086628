// MSL integer functions (metal_integer) for char, uchar, short, ushort, int,
// uint, long, ulong and their 2/3/4 vectors, plus max/min/clamp/max3/min3/
// median3 for mixed scalar arguments (integer and floating).
#pragma once
#include "types.h"
#include "math.h"

namespace metal {

// Unsigned type of the same size.
template <class _PmE> struct pm_unsigned_of;
template <> struct pm_unsigned_of<char> { typedef uchar type; };
template <> struct pm_unsigned_of<signed char> { typedef uchar type; };
template <> struct pm_unsigned_of<uchar> { typedef uchar type; };
template <> struct pm_unsigned_of<short> { typedef ushort type; };
template <> struct pm_unsigned_of<ushort> { typedef ushort type; };
template <> struct pm_unsigned_of<int> { typedef uint type; };
template <> struct pm_unsigned_of<uint> { typedef uint type; };
template <> struct pm_unsigned_of<long> { typedef ulong type; };
template <> struct pm_unsigned_of<ulong> { typedef ulong type; };
template <class _PmE> using pm_unsigned_t = typename pm_unsigned_of<_PmE>::type;
template <class _PmT> using pm_uvec_t = pm_rebind_t<pm_unsigned_t<pm_elem_t<_PmT>>, _PmT>;

// Per-element application of scalar functions.
template <class _PmR, class _PmT, class _PmF> inline _PmR pm_imap1(_PmT x, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmR)f(x);
    } else {
        _PmR r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = f(x[i]);
        return r;
    }
}
template <class _PmR, class _PmT, class _PmF> inline _PmR pm_imap2(_PmT x, _PmT y, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmR)f(x, y);
    } else {
        _PmR r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = f(x[i], y[i]);
        return r;
    }
}
template <class _PmR, class _PmT, class _PmF> inline _PmR pm_imap3(_PmT x, _PmT y, _PmT z, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return (_PmR)f(x, y, z);
    } else {
        _PmR r = 0;
        for (int i = 0; i < pm_width<_PmT>; i++) r[i] = f(x[i], y[i], z[i]);
        return r;
    }
}

#define PM_ITYPES(_PmM, ...)                                                                    \
    _PmM(char, __VA_ARGS__) _PmM(char2, __VA_ARGS__) _PmM(char3, __VA_ARGS__) _PmM(char4, __VA_ARGS__)     \
    _PmM(uchar, __VA_ARGS__) _PmM(uchar2, __VA_ARGS__) _PmM(uchar3, __VA_ARGS__) _PmM(uchar4, __VA_ARGS__) \
    _PmM(short, __VA_ARGS__) _PmM(short2, __VA_ARGS__) _PmM(short3, __VA_ARGS__) _PmM(short4, __VA_ARGS__) \
    _PmM(ushort, __VA_ARGS__) _PmM(ushort2, __VA_ARGS__) _PmM(ushort3, __VA_ARGS__) _PmM(ushort4, __VA_ARGS__) \
    _PmM(int, __VA_ARGS__) _PmM(int2, __VA_ARGS__) _PmM(int3, __VA_ARGS__) _PmM(int4, __VA_ARGS__)         \
    _PmM(uint, __VA_ARGS__) _PmM(uint2, __VA_ARGS__) _PmM(uint3, __VA_ARGS__) _PmM(uint4, __VA_ARGS__)     \
    _PmM(long, __VA_ARGS__) _PmM(long2, __VA_ARGS__) _PmM(long3, __VA_ARGS__) _PmM(long4, __VA_ARGS__)     \
    _PmM(ulong, __VA_ARGS__) _PmM(ulong2, __VA_ARGS__) _PmM(ulong3, __VA_ARGS__) _PmM(ulong4, __VA_ARGS__)

// Scalar MSL integer types with exact overloads.
template <class _PmT> inline constexpr bool pm_is_msl_int =
    pm_same<_PmT, char> || pm_same<_PmT, uchar> || pm_same<_PmT, short> || pm_same<_PmT, ushort> ||
    pm_same<_PmT, int> || pm_same<_PmT, uint> || pm_same<_PmT, long> || pm_same<_PmT, ulong>;
// Scalars of different (or overload-less) types: resolved by a common type.
template <class... _PmA> inline constexpr bool pm_all_same = true;
template <class _PmA, class... _PmB> inline constexpr bool pm_all_same<_PmA, _PmB...> = (pm_same<_PmA, _PmB> && ...);
template <class... _PmA> inline constexpr bool pm_imixed =
    (pm_is_int<_PmA> && ...) && !(pm_all_same<_PmA...> && (pm_is_msl_int<_PmA> && ...));
template <class... _PmA> inline constexpr bool pm_anymixed =
    (pm_is_arith<_PmA> && ...) && !(pm_all_same<_PmA...> && ((pm_is_msl_int<_PmA> || pm_is_float<_PmA>) && ...));
template <bool _PmF, class... _PmA> struct pm_anycommon { typedef pm_fcommon_t<_PmA...> type; };
template <class... _PmA> struct pm_anycommon<false, _PmA...> { typedef decltype((pm_declval<_PmA>() + ...)) type; };
template <class... _PmA> using pm_anycommon_t =
    typename pm_anycommon<((pm_is_float<_PmA> || pm_is_double<_PmA>) || ...), _PmA...>::type;

// PM_OV1/2/3 (math.h) give the overloads, for integer types as for floating ones.
#define PM_IMATH1(name) PM_ITYPES(PM_OV1, name)
#define PM_IMATH2(name)                                                    \
    PM_ITYPES(PM_OV2, name)                                               \
    template <class _PmA, class _PmB>                                            \
        requires(pm_imixed<_PmA, _PmB>)                                          \
    inline pm_anycommon_t<_PmA, _PmB> name(_PmA x, _PmB y) {                           \
        typedef pm_anycommon_t<_PmA, _PmB> _PmC;                                    \
        return name((_PmC)x, (_PmC)y);                                           \
    }
#define PM_IMATH3(name)                                                    \
    PM_ITYPES(PM_OV3, name)                                               \
    template <class _PmA, class _PmB, class _PmC>                                   \
        requires(pm_imixed<_PmA, _PmB, _PmC>)                                       \
    inline pm_anycommon_t<_PmA, _PmB, _PmC> name(_PmA x, _PmB y, _PmC z) {                   \
        typedef pm_anycommon_t<_PmA, _PmB, _PmC> _PmR;                                 \
        return name((_PmR)x, (_PmR)y, (_PmR)z);                                     \
    }

// abs, absdiff
template <class _PmT> inline _PmT pm_abs_i(_PmT x) {
    if constexpr (pm_is_signed<pm_elem_t<_PmT>>) return __builtin_elementwise_abs(x);
    else return x;
}
#define PM_IABS(_PmT, _) \
    template <class _PmP = void> inline _PmT abs(_PmT x) { return pm_abs_i((pm_dep_t<_PmP, _PmT>)x); }
PM_ITYPES(PM_IABS, _)
#undef PM_IABS
template <class _PmT> inline pm_uvec_t<_PmT> pm_absdiff(_PmT x, _PmT y) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap2<pm_uvec_t<_PmT>>(x, y, [](_PmE a, _PmE b) { return a > b ? (_PmU)((_PmU)a - (_PmU)b) : (_PmU)((_PmU)b - (_PmU)a); });
}
#define PM_IABSDIFF(_PmT, _) \
    template <class _PmP = void> inline pm_uvec_t<_PmT> absdiff(_PmT x, _PmT y) { return pm_absdiff((pm_dep_t<_PmP, _PmT>)x, y); }
PM_ITYPES(PM_IABSDIFF, _)
#undef PM_IABSDIFF
template <class _PmA, class _PmB>
    requires(pm_imixed<_PmA, _PmB>)
inline auto absdiff(_PmA x, _PmB y) {
    typedef pm_anycommon_t<_PmA, _PmB> _PmC;
    return absdiff((_PmC)x, (_PmC)y);
}

// addsat, subsat, hadd, rhadd
template <class _PmT> inline _PmT pm_addsat(_PmT x, _PmT y) { return __builtin_elementwise_add_sat(x, y); }
template <class _PmT> inline _PmT pm_subsat(_PmT x, _PmT y) { return __builtin_elementwise_sub_sat(x, y); }
template <class _PmT> inline _PmT pm_hadd(_PmT x, _PmT y) {
    typedef pm_elem_t<_PmT> _PmE;
    return pm_imap2<_PmT>(x, y, [](_PmE a, _PmE b) { return (_PmE)((a >> 1) + (b >> 1) + (a & b & 1)); });
}
template <class _PmT> inline _PmT pm_rhadd(_PmT x, _PmT y) {
    typedef pm_elem_t<_PmT> _PmE;
    return pm_imap2<_PmT>(x, y, [](_PmE a, _PmE b) { return (_PmE)((a >> 1) + (b >> 1) + ((a | b) & 1)); });
}
PM_IMATH2(addsat)
PM_IMATH2(subsat)
PM_IMATH2(hadd)
PM_IMATH2(rhadd)

// clz, ctz, popcount, reverse_bits
template <class _PmT> inline _PmT pm_clz(_PmT x) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap1<_PmT>(x, [](_PmE a) { return (_PmE)__builtin_clzg((_PmU)a, (int)(sizeof(_PmE) * 8)); });
}
template <class _PmT> inline _PmT pm_ctz(_PmT x) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap1<_PmT>(x, [](_PmE a) { return (_PmE)__builtin_ctzg((_PmU)a, (int)(sizeof(_PmE) * 8)); });
}
template <class _PmT> inline _PmT pm_popcount(_PmT x) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap1<_PmT>(x, [](_PmE a) { return (_PmE)__builtin_popcountg((_PmU)a); });
}
template <class _PmT> inline _PmT pm_reverse_bits(_PmT x) { return __builtin_elementwise_bitreverse(x); }
PM_IMATH1(clz)
PM_IMATH1(ctz)
PM_IMATH1(popcount)
PM_IMATH1(reverse_bits)

// extract_bits(x, offset, bits), insert_bits(base, insert, offset, bits)
template <class _PmE> inline _PmE pm_extract1(_PmE x, uint offset, uint bits) {
    if (bits == 0) return 0;
    ulong u = (ulong)(pm_unsigned_t<_PmE>)x >> offset;
    if (bits < 64) u &= (1ul << bits) - 1ul;
    if constexpr (pm_is_signed<_PmE>) return (_PmE)((long)(u << (64 - bits)) >> (64 - bits));
    else return (_PmE)u;
}
template <class _PmE> inline _PmE pm_insert1(_PmE base, _PmE ins, uint offset, uint bits) {
    if (bits == 0) return base;
    ulong m = bits < 64 ? ((1ul << bits) - 1ul) << offset : ~0ul;
    ulong b = (ulong)(pm_unsigned_t<_PmE>)base, n = (ulong)(pm_unsigned_t<_PmE>)ins << offset;
    return (_PmE)(pm_unsigned_t<_PmE>)((b & ~m) | (n & m));
}
template <class _PmT> inline _PmT pm_extract_bits(_PmT x, uint offset, uint bits) {
    typedef pm_elem_t<_PmT> _PmE;
    return pm_imap1<_PmT>(x, [=](_PmE a) { return pm_extract1<_PmE>(a, offset, bits); });
}
template <class _PmT> inline _PmT pm_insert_bits(_PmT base, _PmT ins, uint offset, uint bits) {
    typedef pm_elem_t<_PmT> _PmE;
    return pm_imap2<_PmT>(base, ins, [=](_PmE a, _PmE b) { return pm_insert1<_PmE>(a, b, offset, bits); });
}
#define PM_IBITS(_PmT, _)                                                                          \
    template <class _PmP = void> inline _PmT extract_bits(_PmT x, uint offset, uint bits) {              \
        return pm_extract_bits((pm_dep_t<_PmP, _PmT>)x, offset, bits);                                \
    }                                                                                           \
    template <class _PmP = void> inline _PmT insert_bits(_PmT base, _PmT insert, uint offset, uint bits) {  \
        return pm_insert_bits((pm_dep_t<_PmP, _PmT>)base, insert, offset, bits);                      \
    }
PM_ITYPES(PM_IBITS, _)
#undef PM_IBITS

// mulhi, madhi, mul24, mad24, madsat, rotate
template <class _PmE> inline _PmE pm_mulhi1(_PmE a, _PmE b) {
    if constexpr (sizeof(_PmE) == 8) {
        if constexpr (pm_is_signed<_PmE>) return (_PmE)(((__int128)a * (__int128)b) >> 64);
        else return (_PmE)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
    } else {
        if constexpr (pm_is_signed<_PmE>) return (_PmE)(((long)a * (long)b) >> (sizeof(_PmE) * 8));
        else return (_PmE)(((ulong)a * (ulong)b) >> (sizeof(_PmE) * 8));
    }
}
template <class _PmT> inline _PmT pm_mulhi(_PmT x, _PmT y) {
    typedef pm_elem_t<_PmT> _PmE;
    return pm_imap2<_PmT>(x, y, [](_PmE a, _PmE b) { return pm_mulhi1<_PmE>(a, b); });
}
template <class _PmT> inline _PmT pm_madhi(_PmT x, _PmT y, _PmT z) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap3<_PmT>(x, y, z, [](_PmE a, _PmE b, _PmE c) { return (_PmE)(_PmU)((_PmU)pm_mulhi1<_PmE>(a, b) + (_PmU)c); });
}
template <class _PmE> inline _PmE pm_madsat1(_PmE a, _PmE b, _PmE c) {
    if constexpr (pm_is_signed<_PmE>) {
        __int128 r = (__int128)a * (__int128)b + (__int128)c;
        if (r > (__int128)numeric_limits<_PmE>::max()) return numeric_limits<_PmE>::max();
        if (r < (__int128)numeric_limits<_PmE>::min()) return numeric_limits<_PmE>::min();
        return (_PmE)r;
    } else {
        _PmE p, s;
        if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, &s)) return numeric_limits<_PmE>::max();
        return s;
    }
}
template <class _PmT> inline _PmT pm_madsat(_PmT x, _PmT y, _PmT z) {
    typedef pm_elem_t<_PmT> _PmE;
    return pm_imap3<_PmT>(x, y, z, [](_PmE a, _PmE b, _PmE c) { return pm_madsat1<_PmE>(a, b, c); });
}
// mul24 / mad24: the operands are 24-bit values; wrapping 32-bit arithmetic.
template <class _PmT> inline _PmT pm_mul24(_PmT x, _PmT y) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap2<_PmT>(x, y, [](_PmE a, _PmE b) { return (_PmE)(_PmU)((_PmU)a * (_PmU)b); });
}
template <class _PmT> inline _PmT pm_mad24(_PmT x, _PmT y, _PmT z) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap3<_PmT>(x, y, z, [](_PmE a, _PmE b, _PmE c) { return (_PmE)(_PmU)((_PmU)a * (_PmU)b + (_PmU)c); });
}
template <class _PmT> inline _PmT pm_rotate(_PmT v, _PmT i) {
    typedef pm_elem_t<_PmT> _PmE;
    typedef pm_unsigned_t<_PmE> _PmU;
    return pm_imap2<_PmT>(v, i, [](_PmE a, _PmE b) {
        constexpr uint _PmW = sizeof(_PmE) * 8;
        uint n = (uint)(_PmU)b & (_PmW - 1);
        _PmU u = (_PmU)a;
        return (_PmE)(_PmU)((_PmU)(u << n) | (_PmU)(u >> ((_PmW - n) & (_PmW - 1))));
    });
}
PM_IMATH2(mulhi)
PM_IMATH3(madhi)
PM_IMATH3(madsat)
PM_IMATH2(rotate)
#define PM_I24(_PmT, _)                                                          \
    template <class _PmP = void> inline _PmT mul24(_PmT x, _PmT y) { return pm_mul24((pm_dep_t<_PmP, _PmT>)x, y); }         \
    template <class _PmP = void> inline _PmT mad24(_PmT x, _PmT y, _PmT z) { return pm_mad24((pm_dep_t<_PmP, _PmT>)x, y, z); }
PM_I24(int, _) PM_I24(int2, _) PM_I24(int3, _) PM_I24(int4, _)
PM_I24(uint, _) PM_I24(uint2, _) PM_I24(uint3, _) PM_I24(uint4, _)
#undef PM_I24

// max, min, clamp (integers), max3, min3, median3 (integers and floats)
template <class _PmT> inline _PmT pm_imax(_PmT x, _PmT y) { return __builtin_elementwise_max(x, y); }
template <class _PmT> inline _PmT pm_imin(_PmT x, _PmT y) { return __builtin_elementwise_min(x, y); }
template <class _PmT> inline _PmT pm_iclamp(_PmT x, _PmT lo, _PmT hi) {
    return __builtin_elementwise_min(__builtin_elementwise_max(x, lo), hi);
}
#define PM_IMINMAX(_PmT, _)                                                            \
    template <class _PmP = void> inline _PmT max(_PmT x, _PmT y) { return pm_imax((pm_dep_t<_PmP, _PmT>)x, y); }           \
    template <class _PmP = void> inline _PmT min(_PmT x, _PmT y) { return pm_imin((pm_dep_t<_PmP, _PmT>)x, y); }           \
    template <class _PmP = void> inline _PmT clamp(_PmT x, _PmT lo, _PmT hi) { return pm_iclamp((pm_dep_t<_PmP, _PmT>)x, lo, hi); } \
    template <class _PmP = void> inline _PmT max3(_PmT x, _PmT y, _PmT z) {                                               \
        return pm_imax(pm_imax((pm_dep_t<_PmP, _PmT>)x, y), z);                                                  \
    }                                                                                                      \
    template <class _PmP = void> inline _PmT min3(_PmT x, _PmT y, _PmT z) {                                               \
        return pm_imin(pm_imin((pm_dep_t<_PmP, _PmT>)x, y), z);                                                  \
    }                                                                                                      \
    template <class _PmP = void> inline _PmT median3(_PmT x, _PmT y, _PmT z) {                                            \
        pm_dep_t<_PmP, _PmT> a = x;                                                                              \
        return pm_imax(pm_imin(a, y), pm_imin(pm_imax(a, y), z));                                          \
    }
PM_ITYPES(PM_IMINMAX, _)
#undef PM_IMINMAX
#define PM_FMINMAX3(_PmT, _)                                                           \
    template <class _PmP = void> inline _PmT max3(_PmT x, _PmT y, _PmT z) {                                               \
        return pm_fmax(pm_fmax((pm_dep_t<_PmP, _PmT>)x, y), z);                                                  \
    }                                                                                                      \
    template <class _PmP = void> inline _PmT min3(_PmT x, _PmT y, _PmT z) {                                               \
        return pm_fmin(pm_fmin((pm_dep_t<_PmP, _PmT>)x, y), z);                                                  \
    }                                                                                                      \
    template <class _PmP = void> inline _PmT median3(_PmT x, _PmT y, _PmT z) {                                            \
        pm_dep_t<_PmP, _PmT> a = x;                                                                              \
        return pm_fmax(pm_fmin(a, y), pm_fmin(pm_fmax(a, y), z));                                          \
    }                                                                                                      \
    /* the math functions of the same meaning (metal_math) */                                              \
    template <class _PmP = void> inline _PmT fmax3(_PmT x, _PmT y, _PmT z) { return max3<_PmP>(x, y, z); }  \
    template <class _PmP = void> inline _PmT fmin3(_PmT x, _PmT y, _PmT z) { return min3<_PmP>(x, y, z); }  \
    template <class _PmP = void> inline _PmT fmedian3(_PmT x, _PmT y, _PmT z) { return median3<_PmP>(x, y, z); }
PM_FTYPES(PM_FMINMAX3, _)
#undef PM_FMINMAX3

// Mixed scalar arguments: max(uint, int), max(float, 0), clamp(h, 0.0, 1.0), ...
#define PM_ANY2(name)                                                      \
    template <class _PmA, class _PmB>                                            \
        requires(pm_anymixed<_PmA, _PmB>)                                        \
    inline pm_anycommon_t<_PmA, _PmB> name(_PmA x, _PmB y) {                           \
        typedef pm_anycommon_t<_PmA, _PmB> _PmC;                                    \
        return name((_PmC)x, (_PmC)y);                                           \
    }
#define PM_ANY3(name)                                                      \
    template <class _PmA, class _PmB, class _PmC>                                   \
        requires(pm_anymixed<_PmA, _PmB, _PmC>)                                     \
    inline pm_anycommon_t<_PmA, _PmB, _PmC> name(_PmA x, _PmB y, _PmC z) {                   \
        typedef pm_anycommon_t<_PmA, _PmB, _PmC> _PmR;                                 \
        return name((_PmR)x, (_PmR)y, (_PmR)z);                                     \
    }
PM_ANY2(max)
PM_ANY2(min)
PM_ANY3(clamp)
PM_ANY3(max3)
PM_ANY3(min3)
PM_ANY3(median3)
PM_ANY3(fmax3)
PM_ANY3(fmin3)
PM_ANY3(fmedian3)
#undef PM_ANY2
#undef PM_ANY3

} // namespace metal
