// MSL scalar and vector types as clang extended vectors, boolN, packed_TN,
// vector constructors, as_type, numeric limits, mem_flags / memory_order.
//
// Design notes:
// - TN (float4, int2, half3, ...) are clang ext_vector_type vectors: swizzles,
//   arithmetic and the MSL sizes/alignments (T3 is the size of T4) come for free.
// - Vector comparisons on clang vectors yield integer masks (-1 / 0). boolN is a
//   small class (one byte per element, as MSL) that converts implicitly from such
//   masks, so `bool4 m = a > b;`, `all(a > b)` and `select(x, y, a < b)` behave
//   as in MSL. A mask that is *not* first converted to boolN keeps -1 for true:
//   `float4(a > b)` gives -1.0 where MSL gives 1.0 (write `float4(bool4(a > b))`).
// - Constructors `float4(v.xy, z, 1.0f)`, `float4(x)`, `float4(int4)` go through
//   function-like macros (only expanded when a '(' follows the name) calling
//   pm_make<V>(...), unqualified so that `metal::float4(...)` works too.
// - Only <stdint.h> / <stddef.h>; everything else comes from clang builtins.
#pragma once
// A kernel library is one translation unit whose only external interface is C:
// passing 32-byte vectors (long4, ulong3, ...) by value between its inline
// functions has no ABI to break, so clang's -Wpsabi note is noise. Disabled for
// the rest of the translation unit (the user's code included) on purpose.
#pragma clang diagnostic ignored "-Wpsabi"
#include <stdint.h>
#include <stddef.h>
#include "pm_kernel_abi.h"

// float / double -> bfloat conversions are calls to compiler-rt / libgcc
// helpers that a kernel library (a shared object) may not find when it is
// loaded: define them here (weak, hidden), round to nearest even, NaN stays NaN.
extern "C" {
__attribute__((weak, visibility("hidden"))) __bf16 __truncsfbf2(float f) {
    uint32_t b = __builtin_bit_cast(uint32_t, f);
    uint16_t r;
    if ((b & 0x7fffffffu) > 0x7f800000u) r = (uint16_t)((b >> 16) | 0x40u); // quiet NaN
    else r = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    return __builtin_bit_cast(__bf16, r);
}
__attribute__((weak, visibility("hidden"))) __bf16 __truncdfbf2(double d) {
    // Round to odd into float, then to nearest even into bfloat: no double rounding.
    float f = (float)d;
    if (d == d && (double)f != d && __builtin_fabs(d) <= 0x1.fffffep+127) {
        uint32_t b = __builtin_bit_cast(uint32_t, f);
        if (__builtin_fabs((double)f) > __builtin_fabs(d)) b -= 1u;
        f = __builtin_bit_cast(float, b | 1u);
    }
    return __truncsfbf2(f);
}
}

namespace metal {
// the fixed-width types (Apple's shared headers spell `#define NSInteger metal::int32_t`)
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
typedef __bf16 bfloat;

#define PM_VECTORS(_PmT)                                                   \
    typedef _PmT _PmT##2 __attribute__((ext_vector_type(2)));                 \
    typedef _PmT _PmT##3 __attribute__((ext_vector_type(3)));                 \
    typedef _PmT _PmT##4 __attribute__((ext_vector_type(4)));
PM_VECTORS(char) PM_VECTORS(uchar) PM_VECTORS(short) PM_VECTORS(ushort)
PM_VECTORS(int) PM_VECTORS(uint) PM_VECTORS(long) PM_VECTORS(ulong)
PM_VECTORS(half) PM_VECTORS(float) PM_VECTORS(bfloat)
#undef PM_VECTORS

// ---------------------------------------------------------------------------
// Minimal type traits (no <type_traits>)
// ---------------------------------------------------------------------------
template <class _PmT> struct pm_type_is { typedef _PmT type; };
template <class _PmT> using pm_identity_t = typename pm_type_is<_PmT>::type;
template <class _PmA, class _PmB> inline constexpr bool pm_same = false;
template <class _PmA> inline constexpr bool pm_same<_PmA, _PmA> = true;
template <bool _PmC, class _PmA, class _PmB> struct pm_cond { typedef _PmA type; };
template <class _PmA, class _PmB> struct pm_cond<false, _PmA, _PmB> { typedef _PmB type; };
template <bool _PmC, class _PmA, class _PmB> using pm_cond_t = typename pm_cond<_PmC, _PmA, _PmB>::type;
template <class _PmT> struct pm_uncv { typedef _PmT type; };
template <class _PmT> struct pm_uncv<const _PmT> { typedef _PmT type; };
template <class _PmT> struct pm_uncv<volatile _PmT> { typedef _PmT type; };
template <class _PmT> struct pm_uncv<const volatile _PmT> { typedef _PmT type; };
template <class _PmT> struct pm_uncv<_PmT &> : pm_uncv<_PmT> {};
template <class _PmT> struct pm_uncv<_PmT &&> : pm_uncv<_PmT> {};
template <class _PmT> using pm_uncv_t = typename pm_uncv<_PmT>::type;
template <class _PmT> _PmT &&pm_declval() noexcept;
// T, but dependent on P: the per-type overloads are `template <class P = void>`
// functions whose bodies name pm_dep_t<P, T>, so that nothing is instantiated
// until a kernel calls them (parsing the headers stays fast).
template <class _PmP, class _PmT> struct pm_dep { typedef _PmT type; };
template <class _PmP, class _PmT> using pm_dep_t = typename pm_dep<_PmP, _PmT>::type;

// Scalar categories.
template <class _PmT> inline constexpr bool pm_is_int = false;       // integer scalars (not bool)
template <> inline constexpr bool pm_is_int<char> = true;
template <> inline constexpr bool pm_is_int<signed char> = true;
template <> inline constexpr bool pm_is_int<unsigned char> = true;
template <> inline constexpr bool pm_is_int<short> = true;
template <> inline constexpr bool pm_is_int<unsigned short> = true;
template <> inline constexpr bool pm_is_int<int> = true;
template <> inline constexpr bool pm_is_int<unsigned int> = true;
template <> inline constexpr bool pm_is_int<long> = true;
template <> inline constexpr bool pm_is_int<unsigned long> = true;
template <> inline constexpr bool pm_is_int<long long> = true;
template <> inline constexpr bool pm_is_int<unsigned long long> = true;
template <class _PmT> inline constexpr bool pm_is_float = false;     // MSL floating scalars
template <> inline constexpr bool pm_is_float<float> = true;
template <> inline constexpr bool pm_is_float<half> = true;
template <> inline constexpr bool pm_is_float<bfloat> = true;
template <class _PmT> inline constexpr bool pm_is_double = false;    // C++ only (1.0 literals)
template <> inline constexpr bool pm_is_double<double> = true;
template <> inline constexpr bool pm_is_double<long double> = true;
template <class _PmT> inline constexpr bool pm_is_arith =
    pm_is_int<_PmT> || pm_is_float<_PmT> || pm_is_double<_PmT>;
template <class _PmT> inline constexpr bool pm_is_scalar = pm_is_arith<_PmT> || pm_same<_PmT, bool>;
template <class _PmT> inline constexpr bool pm_is_signed = (_PmT)-1 < (_PmT)0;

// boolN and packed_TN (defined below).
template <int _PmN> struct pm_bool_vec;
template <class _PmT, int _PmN> struct pm_packed;

// Element type and width of scalars, ext vectors, boolN, packed_TN.
template <class _PmT> struct pm_vinfo {
    typedef _PmT elem;
    static constexpr int n = 1;
    static constexpr bool is_vec = false;  // a clang ext vector
    static constexpr bool is_any_vec = false;
};
template <class _PmT, int _PmN> struct pm_vinfo<_PmT __attribute__((ext_vector_type(_PmN)))> {
    typedef _PmT elem;
    static constexpr int n = _PmN;
    static constexpr bool is_vec = true;
    static constexpr bool is_any_vec = true;
};
template <int _PmN> struct pm_vinfo<pm_bool_vec<_PmN>> {
    typedef bool elem;
    static constexpr int n = _PmN;
    static constexpr bool is_vec = false;
    static constexpr bool is_any_vec = true;
};
template <class _PmT, int _PmN> struct pm_vinfo<pm_packed<_PmT, _PmN>> {
    typedef _PmT elem;
    static constexpr int n = _PmN;
    static constexpr bool is_vec = false;
    static constexpr bool is_any_vec = true;
};
template <class _PmT> using pm_elem_t = typename pm_vinfo<pm_uncv_t<_PmT>>::elem;
template <class _PmT> inline constexpr int pm_width = pm_vinfo<pm_uncv_t<_PmT>>::n;
template <class _PmT> inline constexpr bool pm_is_vec = pm_vinfo<pm_uncv_t<_PmT>>::is_vec;
template <class _PmT> inline constexpr bool pm_is_fvec = pm_is_vec<_PmT> && pm_is_float<pm_elem_t<_PmT>>;
template <class _PmT> inline constexpr bool pm_is_ivec = pm_is_vec<_PmT> && pm_is_int<pm_elem_t<_PmT>>;
// float-ish: a floating scalar or a clang vector of them; int-ish likewise.
template <class _PmT> inline constexpr bool pm_is_fgen = pm_is_float<_PmT> || pm_is_fvec<_PmT>;
template <class _PmT> inline constexpr bool pm_is_igen = pm_is_int<_PmT> || pm_is_ivec<_PmT>;

// vec<T, N>: the clang vector (deducible: template <class T, int N> f(vec<T, N>)).
// vec<bool, N> is clang's bit-packed bool vector, not boolN; use boolN for masks.
template <class _PmT, int _PmN> using vec = _PmT __attribute__((ext_vector_type(_PmN)));
// T or vec<T, N> (N == 1 gives the scalar).
template <class _PmT, int _PmN> struct pm_vec_or_scalar { typedef _PmT __attribute__((ext_vector_type(_PmN))) type; };
template <class _PmT> struct pm_vec_or_scalar<_PmT, 1> { typedef _PmT type; };
template <class _PmT, int _PmN> using pm_vec_t = typename pm_vec_or_scalar<_PmT, _PmN>::type;
// The same shape as V with element E.
template <class _PmE, class _PmV> using pm_rebind_t = pm_vec_t<_PmE, pm_width<_PmV>>;
// Signed integer type of the same size as E (for masks).
template <int _PmSize> struct pm_int_of_size;
template <> struct pm_int_of_size<1> { typedef char type; };
template <> struct pm_int_of_size<2> { typedef short type; };
template <> struct pm_int_of_size<4> { typedef int type; };
template <> struct pm_int_of_size<8> { typedef long type; };
template <class _PmE> using pm_mask_elem_t = typename pm_int_of_size<sizeof(_PmE)>::type;

// ---------------------------------------------------------------------------
// boolN: one byte per element (sizeof(bool3) == 4 as in MSL), .x/.y/.z/.w and
// .r/.g/.b/.a members, [], logical and bitwise operators, implicit conversion
// from bool (splat) and from integer vectors (vector comparison masks).
// ---------------------------------------------------------------------------
template <int _PmN> struct pm_bool_storage;
template <> struct alignas(2) pm_bool_storage<2> {
    union { bool e[2]; struct { bool x, y; }; struct { bool r, g; }; };
};
template <> struct alignas(4) pm_bool_storage<3> {
    union { bool e[3]; struct { bool x, y, z; }; struct { bool r, g, b; }; };
};
template <> struct alignas(4) pm_bool_storage<4> {
    union { bool e[4]; struct { bool x, y, z, w; }; struct { bool r, g, b, a; }; };
};

template <int _PmN> struct pm_bool_vec : pm_bool_storage<_PmN> {
    using pm_bool_storage<_PmN>::e;
    pm_bool_vec() = default;
    constexpr pm_bool_vec(bool v) : pm_bool_storage<_PmN>() {
        for (int i = 0; i < _PmN; i++) e[i] = v;
    }
    // From a comparison mask or any integer vector of the same width (nonzero = true).
    template <class _PmV>
        requires(pm_is_ivec<_PmV> && pm_width<_PmV> == _PmN)
    constexpr pm_bool_vec(_PmV m) : pm_bool_storage<_PmN>() {
        for (int i = 0; i < _PmN; i++) e[i] = m[i] != 0;
    }
    // bool4 m = {true, false, a, b};
    template <class... _PmA>
        requires(sizeof...(_PmA) == _PmN && _PmN > 1 && (pm_is_scalar<_PmA> && ...))
    constexpr pm_bool_vec(_PmA... a) : pm_bool_storage<_PmN>() {
        int i = 0;
        ((e[i++] = a != 0), ...);
    }
    constexpr bool &operator[](int i) { return e[i]; }
    constexpr const bool &operator[](int i) const { return e[i]; }
    constexpr bool &operator[](unsigned i) { return e[i]; }
    constexpr const bool &operator[](unsigned i) const { return e[i]; }
    constexpr bool &operator[](long i) { return e[i]; }
    constexpr const bool &operator[](long i) const { return e[i]; }
    constexpr bool &operator[](unsigned long i) { return e[i]; }
    constexpr const bool &operator[](unsigned long i) const { return e[i]; }
    // As an integer mask (-1 / 0) of the given element type.
    template <class _PmM> constexpr vec<_PmM, _PmN> pm_mask() const {
        vec<_PmM, _PmN> r = 0;
        for (int i = 0; i < _PmN; i++) r[i] = e[i] ? (_PmM)-1 : (_PmM)0;
        return r;
    }
    constexpr pm_bool_vec operator!() const {
        pm_bool_vec r;
        for (int i = 0; i < _PmN; i++) r.e[i] = !e[i];
        return r;
    }
#define PM_BOOL_OP(op)                                                                \
    friend constexpr pm_bool_vec operator op(pm_bool_vec a, pm_bool_vec b) {          \
        pm_bool_vec r;                                                                \
        for (int i = 0; i < _PmN; i++) r.e[i] = (a.e[i] op b.e[i]);                      \
        return r;                                                                     \
    }
    PM_BOOL_OP(&&) PM_BOOL_OP(||) PM_BOOL_OP(==) PM_BOOL_OP(!=)
#undef PM_BOOL_OP
#define PM_BOOL_BITOP(op)                                                             \
    friend constexpr pm_bool_vec operator op(pm_bool_vec a, pm_bool_vec b) {          \
        pm_bool_vec r;                                                                \
        for (int i = 0; i < _PmN; i++) r.e[i] = (bool)(a.e[i] op b.e[i]);                \
        return r;                                                                     \
    }                                                                                 \
    constexpr pm_bool_vec &operator op##=(pm_bool_vec b) { return *this = *this op b; }
    PM_BOOL_BITOP(&) PM_BOOL_BITOP(|) PM_BOOL_BITOP(^)
#undef PM_BOOL_BITOP
};
typedef pm_bool_vec<2> bool2;
typedef pm_bool_vec<3> bool3;
typedef pm_bool_vec<4> bool4;
static_assert(sizeof(bool2) == 2 && sizeof(bool3) == 4 && sizeof(bool4) == 4, "boolN layout");

// ---------------------------------------------------------------------------
// packed_TN: N elements of T, tightly packed, alignment of T. Converts to and
// from TN, indexable, .x/.y/.z/.w (.r/.g/.b/.a) members, arithmetic through TN.
// ---------------------------------------------------------------------------
template <class _PmT, int _PmN> struct pm_packed_storage;
template <class _PmT> struct pm_packed_storage<_PmT, 2> {
    union { _PmT e[2]; struct { _PmT x, y; }; struct { _PmT r, g; }; };
};
template <class _PmT> struct pm_packed_storage<_PmT, 3> {
    union { _PmT e[3]; struct { _PmT x, y, z; }; struct { _PmT r, g, b; }; };
};
template <class _PmT> struct pm_packed_storage<_PmT, 4> {
    union { _PmT e[4]; struct { _PmT x, y, z, w; }; struct { _PmT r, g, b, a; }; };
};

template <class _PmT, int _PmN> struct pm_packed : pm_packed_storage<_PmT, _PmN> {
    typedef vec<_PmT, _PmN> vector_type;
    using pm_packed_storage<_PmT, _PmN>::e;
    pm_packed() = default;
    constexpr pm_packed(vector_type v) : pm_packed_storage<_PmT, _PmN>() {
        for (int i = 0; i < _PmN; i++) e[i] = v[i];
    }
    template <class _PmS>
        requires(pm_is_arith<_PmS>)
    constexpr pm_packed(_PmS s) : pm_packed_storage<_PmT, _PmN>() {
        for (int i = 0; i < _PmN; i++) e[i] = (_PmT)s;
    }
    template <class... _PmA>
        requires(sizeof...(_PmA) == _PmN && (pm_is_arith<_PmA> && ...))
    constexpr pm_packed(_PmA... a) : pm_packed_storage<_PmT, _PmN>() {
        int i = 0;
        ((e[i++] = (_PmT)a), ...);
    }
    constexpr operator vector_type() const {
        vector_type v = 0;
        for (int i = 0; i < _PmN; i++) v[i] = e[i];
        return v;
    }
    constexpr vector_type pm_v() const { return *this; }
    constexpr _PmT &operator[](int i) { return e[i]; }
    constexpr const _PmT &operator[](int i) const { return e[i]; }
    constexpr _PmT &operator[](unsigned i) { return e[i]; }
    constexpr const _PmT &operator[](unsigned i) const { return e[i]; }
    constexpr _PmT &operator[](long i) { return e[i]; }
    constexpr const _PmT &operator[](long i) const { return e[i]; }
    constexpr _PmT &operator[](unsigned long i) { return e[i]; }
    constexpr const _PmT &operator[](unsigned long i) const { return e[i]; }
    constexpr vector_type operator-() const { return -pm_v(); }
    constexpr vector_type operator+() const { return pm_v(); }
#define PM_PACKED_OP(op)                                                                  \
    friend constexpr vector_type operator op(const pm_packed &a, const pm_packed &b) {     \
        return a.pm_v() op b.pm_v();                                                      \
    }                                                                                     \
    friend constexpr vector_type operator op(const pm_packed &a, vector_type b) {         \
        return a.pm_v() op b;                                                             \
    }                                                                                     \
    friend constexpr vector_type operator op(vector_type a, const pm_packed &b) {         \
        return a op b.pm_v();                                                             \
    }                                                                                     \
    template <class _PmS>                                                                    \
        requires(pm_is_arith<_PmS>)                                                          \
    friend constexpr vector_type operator op(const pm_packed &a, _PmS b) {                   \
        return a.pm_v() op(_PmT) b;                                                          \
    }                                                                                     \
    template <class _PmS>                                                                    \
        requires(pm_is_arith<_PmS>)                                                          \
    friend constexpr vector_type operator op(_PmS a, const pm_packed &b) {                   \
        return (_PmT)a op b.pm_v();                                                          \
    }                                                                                     \
    template <class _PmS>                                                                    \
    constexpr pm_packed &operator op##=(const _PmS & b) {                                    \
        return *this = pm_packed(vector_type(*this op b));                                \
    }
    PM_PACKED_OP(+) PM_PACKED_OP(-) PM_PACKED_OP(*) PM_PACKED_OP(/)
#undef PM_PACKED_OP
    friend constexpr auto operator==(const pm_packed &a, const pm_packed &b) { return a.pm_v() == b.pm_v(); }
    friend constexpr auto operator!=(const pm_packed &a, const pm_packed &b) { return a.pm_v() != b.pm_v(); }
};

#define PM_PACKED(_PmT)                             \
    typedef pm_packed<_PmT, 2> packed_##_PmT##2;       \
    typedef pm_packed<_PmT, 3> packed_##_PmT##3;       \
    typedef pm_packed<_PmT, 4> packed_##_PmT##4;
PM_PACKED(char) PM_PACKED(uchar) PM_PACKED(short) PM_PACKED(ushort)
PM_PACKED(int) PM_PACKED(uint) PM_PACKED(long) PM_PACKED(ulong)
PM_PACKED(half) PM_PACKED(float) PM_PACKED(bfloat)
#undef PM_PACKED
static_assert(sizeof(packed_float3) == 12 && alignof(packed_float3) == 4, "packed layout");
static_assert(sizeof(packed_half3) == 6 && alignof(packed_half3) == 2, "packed layout");

// ---------------------------------------------------------------------------
// Vector constructors: float4(x), float4(a, b, c, d), float4(v.xy, z, 1),
// float4(int4), bool4(...), packed_float3(...).
// ---------------------------------------------------------------------------
template <class _PmE, class _PmS> constexpr _PmE pm_elem_cast(_PmS s) {
    if constexpr (pm_same<_PmE, bool>) return s != 0;
    else return (_PmE)s;
}
template <class _PmE, int _PmN, class _PmA> constexpr void pm_put(_PmE (&out)[_PmN], int &k, const _PmA &a) {
    typedef pm_uncv_t<_PmA> _PmU;
    if constexpr (pm_is_scalar<_PmU>) {
        out[k++] = pm_elem_cast<_PmE>(a);
    } else {
        static_assert(pm_vinfo<_PmU>::is_any_vec, "MSL vector constructor: unsupported argument type");
        for (int i = 0; i < pm_width<_PmU>; i++) out[k++] = pm_elem_cast<_PmE>(a[i]);
    }
}
template <class _PmA> inline constexpr int pm_ncomp = pm_width<_PmA>;

template <class _PmV, class _PmA> constexpr _PmV pm_convert_vec(_PmA a) { return __builtin_convertvector(a, _PmV); }

template <class _PmV, class... _PmA> constexpr _PmV pm_make(const _PmA &...a) {
    typedef pm_elem_t<_PmV> _PmE;
    constexpr int _PmN = pm_width<_PmV>;
    if constexpr (sizeof...(_PmA) == 0) {
        return _PmV{};
    } else if constexpr (sizeof...(_PmA) == 1 && (pm_is_scalar<pm_uncv_t<_PmA>> && ...)) {
        _PmE s = pm_elem_cast<_PmE>(a...);
        if constexpr (pm_vinfo<_PmV>::is_vec) return (_PmV)s;
        else return _PmV(s);
    } else if constexpr (sizeof...(_PmA) == 1 && pm_vinfo<_PmV>::is_vec &&
                         (pm_is_vec<_PmA> && ...) && ((pm_width<_PmA> == _PmN) && ...) &&
                         !pm_same<_PmE, bool>) {
        return pm_convert_vec<_PmV>(a...);
    } else {
        static_assert(((pm_ncomp<pm_uncv_t<_PmA>>) + ...) == _PmN,
                      "MSL vector constructor: the arguments must have exactly as many components as the vector");
        _PmE tmp[_PmN] = {};
        int k = 0;
        (pm_put<_PmE, _PmN>(tmp, k, a), ...);
        _PmV r{};
        for (int i = 0; i < _PmN; i++) r[i] = tmp[i];
        return r;
    }
}

// What MetalCPU's front end makes of a conversion written as a cast: `(float4) h4`,
// `static_cast<float4>(h4)`, `TC(x)` with TC a template parameter or an alias (FrontEnd.swift,
// rewriteConversions). Metal converts there; a cast between clang ext vectors is a bit cast, and clang
// refuses one between half and bfloat. Vectors are made as by their constructors, half <-> bfloat
// goes through float (exact for either), everything else is T(a...) as written.
template <class _PmT, class... _PmA> constexpr _PmT pm_construct(const _PmA &...a) {
    if constexpr (pm_vinfo<_PmT>::is_vec) return pm_make<_PmT>(a...);
    else if constexpr (sizeof...(_PmA) == 1 && pm_is_float<_PmT> && (pm_is_float<pm_uncv_t<_PmA>> && ...)) return _PmT((float)(a, ...));
    else return _PmT(a...);
}

// A braced list handed to a function (`elem_to_loc({N * i.x, i.y, i.z}, ...)`, MLX): clang cannot
// initialise an ext vector parameter from one, so MetalCPU's front end passes pm_braced(...) instead
// (FrontEnd.swift, rewriteBracedArguments), which becomes the parameter's type: a vector as by its
// constructor, anything else as T(a...) (C++20's aggregate initialisation).
template <class... _PmA> struct pm_braced_list;
template <> struct pm_braced_list<> {
    template <class _PmV, class... _PmE> constexpr _PmV pm_to(const _PmE &...e) const {
        if constexpr (pm_vinfo<_PmV>::is_vec) return pm_make<_PmV>(e...);
        else return _PmV(e...);
    }
    template <class _PmV> constexpr operator _PmV() const { return pm_to<_PmV>(); }
};
template <class _PmH, class... _PmR> struct pm_braced_list<_PmH, _PmR...> {
    _PmH head;
    pm_braced_list<_PmR...> rest;
    template <class _PmV, class... _PmE> constexpr _PmV pm_to(const _PmE &...e) const {
        return rest.template pm_to<_PmV>(e..., head);
    }
    template <class _PmV> constexpr operator _PmV() const { return pm_to<_PmV>(); }
};
constexpr pm_braced_list<> pm_braced() { return {}; }
template <class _PmH, class... _PmR>
constexpr pm_braced_list<_PmH, _PmR...> pm_braced(const _PmH &h, const _PmR &...r) { return {h, pm_braced(r...)}; }

#define char2(...) pm_make<::metal::char2>(__VA_ARGS__)
#define char3(...) pm_make<::metal::char3>(__VA_ARGS__)
#define char4(...) pm_make<::metal::char4>(__VA_ARGS__)
#define uchar2(...) pm_make<::metal::uchar2>(__VA_ARGS__)
#define uchar3(...) pm_make<::metal::uchar3>(__VA_ARGS__)
#define uchar4(...) pm_make<::metal::uchar4>(__VA_ARGS__)
#define short2(...) pm_make<::metal::short2>(__VA_ARGS__)
#define short3(...) pm_make<::metal::short3>(__VA_ARGS__)
#define short4(...) pm_make<::metal::short4>(__VA_ARGS__)
#define ushort2(...) pm_make<::metal::ushort2>(__VA_ARGS__)
#define ushort3(...) pm_make<::metal::ushort3>(__VA_ARGS__)
#define ushort4(...) pm_make<::metal::ushort4>(__VA_ARGS__)
#define int2(...) pm_make<::metal::int2>(__VA_ARGS__)
#define int3(...) pm_make<::metal::int3>(__VA_ARGS__)
#define int4(...) pm_make<::metal::int4>(__VA_ARGS__)
#define uint2(...) pm_make<::metal::uint2>(__VA_ARGS__)
#define uint3(...) pm_make<::metal::uint3>(__VA_ARGS__)
#define uint4(...) pm_make<::metal::uint4>(__VA_ARGS__)
#define long2(...) pm_make<::metal::long2>(__VA_ARGS__)
#define long3(...) pm_make<::metal::long3>(__VA_ARGS__)
#define long4(...) pm_make<::metal::long4>(__VA_ARGS__)
#define ulong2(...) pm_make<::metal::ulong2>(__VA_ARGS__)
#define ulong3(...) pm_make<::metal::ulong3>(__VA_ARGS__)
#define ulong4(...) pm_make<::metal::ulong4>(__VA_ARGS__)
#define half2(...) pm_make<::metal::half2>(__VA_ARGS__)
#define half3(...) pm_make<::metal::half3>(__VA_ARGS__)
#define half4(...) pm_make<::metal::half4>(__VA_ARGS__)
#define float2(...) pm_make<::metal::float2>(__VA_ARGS__)
#define float3(...) pm_make<::metal::float3>(__VA_ARGS__)
#define float4(...) pm_make<::metal::float4>(__VA_ARGS__)
#define bfloat2(...) pm_make<::metal::bfloat2>(__VA_ARGS__)
#define bfloat3(...) pm_make<::metal::bfloat3>(__VA_ARGS__)
#define bfloat4(...) pm_make<::metal::bfloat4>(__VA_ARGS__)
#define bool2(...) pm_make<::metal::bool2>(__VA_ARGS__)
#define bool3(...) pm_make<::metal::bool3>(__VA_ARGS__)
#define bool4(...) pm_make<::metal::bool4>(__VA_ARGS__)
#define packed_char2(...) pm_make<::metal::packed_char2>(__VA_ARGS__)
#define packed_char3(...) pm_make<::metal::packed_char3>(__VA_ARGS__)
#define packed_char4(...) pm_make<::metal::packed_char4>(__VA_ARGS__)
#define packed_uchar2(...) pm_make<::metal::packed_uchar2>(__VA_ARGS__)
#define packed_uchar3(...) pm_make<::metal::packed_uchar3>(__VA_ARGS__)
#define packed_uchar4(...) pm_make<::metal::packed_uchar4>(__VA_ARGS__)
#define packed_short2(...) pm_make<::metal::packed_short2>(__VA_ARGS__)
#define packed_short3(...) pm_make<::metal::packed_short3>(__VA_ARGS__)
#define packed_short4(...) pm_make<::metal::packed_short4>(__VA_ARGS__)
#define packed_ushort2(...) pm_make<::metal::packed_ushort2>(__VA_ARGS__)
#define packed_ushort3(...) pm_make<::metal::packed_ushort3>(__VA_ARGS__)
#define packed_ushort4(...) pm_make<::metal::packed_ushort4>(__VA_ARGS__)
#define packed_int2(...) pm_make<::metal::packed_int2>(__VA_ARGS__)
#define packed_int3(...) pm_make<::metal::packed_int3>(__VA_ARGS__)
#define packed_int4(...) pm_make<::metal::packed_int4>(__VA_ARGS__)
#define packed_uint2(...) pm_make<::metal::packed_uint2>(__VA_ARGS__)
#define packed_uint3(...) pm_make<::metal::packed_uint3>(__VA_ARGS__)
#define packed_uint4(...) pm_make<::metal::packed_uint4>(__VA_ARGS__)
#define packed_long2(...) pm_make<::metal::packed_long2>(__VA_ARGS__)
#define packed_long3(...) pm_make<::metal::packed_long3>(__VA_ARGS__)
#define packed_long4(...) pm_make<::metal::packed_long4>(__VA_ARGS__)
#define packed_ulong2(...) pm_make<::metal::packed_ulong2>(__VA_ARGS__)
#define packed_ulong3(...) pm_make<::metal::packed_ulong3>(__VA_ARGS__)
#define packed_ulong4(...) pm_make<::metal::packed_ulong4>(__VA_ARGS__)
#define packed_half2(...) pm_make<::metal::packed_half2>(__VA_ARGS__)
#define packed_half3(...) pm_make<::metal::packed_half3>(__VA_ARGS__)
#define packed_half4(...) pm_make<::metal::packed_half4>(__VA_ARGS__)
#define packed_float2(...) pm_make<::metal::packed_float2>(__VA_ARGS__)
#define packed_float3(...) pm_make<::metal::packed_float3>(__VA_ARGS__)
#define packed_float4(...) pm_make<::metal::packed_float4>(__VA_ARGS__)
#define packed_bfloat2(...) pm_make<::metal::packed_bfloat2>(__VA_ARGS__)
#define packed_bfloat3(...) pm_make<::metal::packed_bfloat3>(__VA_ARGS__)
#define packed_bfloat4(...) pm_make<::metal::packed_bfloat4>(__VA_ARGS__)

// ---------------------------------------------------------------------------
// as_type<T>(x): reinterpret the bits (sizes must match).
// ---------------------------------------------------------------------------
template <class _PmT, class _PmU> constexpr _PmT as_type(const _PmU &x) {
    static_assert(sizeof(_PmT) == sizeof(_PmU), "as_type: source and destination must have the same size");
    return __builtin_bit_cast(_PmT, x);
}

// ---------------------------------------------------------------------------
// Memory flags, memory order, thread scope (used by atomics and barriers).
// ---------------------------------------------------------------------------
enum class mem_flags : uint32_t {
    mem_none = 0,
    mem_device = 1,
    mem_threadgroup = 2,
    mem_texture = 4,
    mem_threadgroup_imageblock = 0x8,
    mem_object_data = 0x10,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return (mem_flags)((uint32_t)a | (uint32_t)b); }
constexpr mem_flags operator&(mem_flags a, mem_flags b) { return (mem_flags)((uint32_t)a & (uint32_t)b); }
constexpr mem_flags operator^(mem_flags a, mem_flags b) { return (mem_flags)((uint32_t)a ^ (uint32_t)b); }
constexpr mem_flags operator~(mem_flags a) { return (mem_flags)(~(uint32_t)a & 0x1fu); }
constexpr mem_flags &operator|=(mem_flags &a, mem_flags b) { return a = a | b; }
constexpr mem_flags &operator&=(mem_flags &a, mem_flags b) { return a = a & b; }

// Values are the compiler's __ATOMIC_* orders so they pass straight to __atomic builtins.
enum memory_order {
    memory_order_relaxed = __ATOMIC_RELAXED,
    memory_order_acquire = __ATOMIC_ACQUIRE,
    memory_order_release = __ATOMIC_RELEASE,
    memory_order_acq_rel = __ATOMIC_ACQ_REL,
    memory_order_seq_cst = __ATOMIC_SEQ_CST,
};
// Unscoped so that both `thread_scope_device` and `thread_scope::thread_scope_device` work.
enum thread_scope {
    thread_scope_thread = 0,
    thread_scope_simdgroup = 1,
    thread_scope_threadgroup = 2,
    thread_scope_device = 3,
};
typedef thread_scope memory_scope;

// ---------------------------------------------------------------------------
// Limits (metal_limits, metal_types constants)
// ---------------------------------------------------------------------------
// Apple's numeric_limits<T> derives from _numeric_limits_impl<T>, which candle's reduce.metal
// specializes for its own types.
template <class _PmT> struct _numeric_limits_impl {
    static constexpr bool is_specialized = false;
};
template <class _PmT> struct numeric_limits : _numeric_limits_impl<_PmT> {};
#define PM_INT_LIMITS(_PmT, MIN, MAX, DIG)                                         \
    template <> struct _numeric_limits_impl<_PmT> {                                     \
        static constexpr bool is_specialized = true;                           \
        static constexpr bool is_signed = (_PmT)-1 < (_PmT)0;                        \
        static constexpr bool is_integer = true;                               \
        static constexpr bool is_exact = true;                                 \
        static constexpr bool has_infinity = false;                            \
        static constexpr bool has_quiet_NaN = false;                           \
        static constexpr int digits = DIG;                                     \
        static constexpr int radix = 2;                                        \
        static constexpr _PmT min() { return MIN; }                               \
        static constexpr _PmT max() { return MAX; }                               \
        static constexpr _PmT lowest() { return MIN; }                            \
        static constexpr _PmT epsilon() { return 0; }                             \
        static constexpr _PmT round_error() { return 0; }                         \
        static constexpr _PmT infinity() { return 0; }                            \
        static constexpr _PmT quiet_NaN() { return 0; }                           \
        static constexpr _PmT signaling_NaN() { return 0; }                       \
        static constexpr _PmT denorm_min() { return 0; }                          \
    };
PM_INT_LIMITS(bool, false, true, 1)
PM_INT_LIMITS(char, (char)(-128), (char)127, 7)
PM_INT_LIMITS(signed char, (signed char)(-128), (signed char)127, 7)
PM_INT_LIMITS(uchar, (uchar)0, (uchar)255, 8)
PM_INT_LIMITS(short, (short)(-32768), (short)32767, 15)
PM_INT_LIMITS(ushort, (ushort)0, (ushort)65535, 16)
PM_INT_LIMITS(int, (-2147483647 - 1), 2147483647, 31)
PM_INT_LIMITS(uint, 0u, 4294967295u, 32)
PM_INT_LIMITS(long, (-9223372036854775807L - 1), 9223372036854775807L, 63)
PM_INT_LIMITS(ulong, 0ul, 18446744073709551615ul, 64)
#undef PM_INT_LIMITS
#define PM_FLOAT_LIMITS(_PmT, MIN, MAX, EPS, DMIN, DIG)                            \
    template <> struct _numeric_limits_impl<_PmT> {                                     \
        static constexpr bool is_specialized = true;                           \
        static constexpr bool is_signed = true;                                \
        static constexpr bool is_integer = false;                              \
        static constexpr bool is_exact = false;                                \
        static constexpr bool has_infinity = true;                             \
        static constexpr bool has_quiet_NaN = true;                            \
        static constexpr int digits = DIG;                                     \
        static constexpr int radix = 2;                                        \
        static constexpr _PmT min() { return (_PmT)(MIN); }                          \
        static constexpr _PmT max() { return (_PmT)(MAX); }                          \
        static constexpr _PmT lowest() { return (_PmT)(-(MAX)); }                    \
        static constexpr _PmT epsilon() { return (_PmT)(EPS); }                      \
        static constexpr _PmT round_error() { return (_PmT)0.5f; }                   \
        static constexpr _PmT infinity() { return (_PmT)__builtin_inff(); }          \
        static constexpr _PmT quiet_NaN() { return (_PmT)__builtin_nanf(""); }       \
        static constexpr _PmT signaling_NaN() { return (_PmT)__builtin_nansf(""); }  \
        static constexpr _PmT denorm_min() { return (_PmT)(DMIN); }                  \
    };
PM_FLOAT_LIMITS(float, 0x1p-126f, 0x1.fffffep127f, 0x1p-23f, 0x1p-149f, 24)
PM_FLOAT_LIMITS(half, 0x1p-14f, 65504.0f, 0x1p-10f, 0x1p-24f, 11)
PM_FLOAT_LIMITS(bfloat, 0x1p-126f, 0x1.fep127f, 0x1p-7f, 0x1p-133f, 8)
#undef PM_FLOAT_LIMITS
} // namespace metal

// Integer limits (as MSL's metal_types / C's limits.h).
#ifndef CHAR_BIT
#define CHAR_BIT 8
#endif
#ifndef SCHAR_MAX
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 4294967295u
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L - 1)
#define ULONG_MAX 18446744073709551615ul
#endif

using namespace metal;
