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
//   metal::pm_make<V>(...).
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

namespace metal {
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;
typedef __bf16 bfloat;

#define PM_VECTORS(T)                                                   \
    typedef T T##2 __attribute__((ext_vector_type(2)));                 \
    typedef T T##3 __attribute__((ext_vector_type(3)));                 \
    typedef T T##4 __attribute__((ext_vector_type(4)));
PM_VECTORS(char) PM_VECTORS(uchar) PM_VECTORS(short) PM_VECTORS(ushort)
PM_VECTORS(int) PM_VECTORS(uint) PM_VECTORS(long) PM_VECTORS(ulong)
PM_VECTORS(half) PM_VECTORS(float) PM_VECTORS(bfloat)
#undef PM_VECTORS

// ---------------------------------------------------------------------------
// Minimal type traits (no <type_traits>)
// ---------------------------------------------------------------------------
template <class T> struct pm_type_is { typedef T type; };
template <class T> using pm_identity_t = typename pm_type_is<T>::type;
template <class A, class B> inline constexpr bool pm_same = false;
template <class A> inline constexpr bool pm_same<A, A> = true;
template <bool C, class A, class B> struct pm_cond { typedef A type; };
template <class A, class B> struct pm_cond<false, A, B> { typedef B type; };
template <bool C, class A, class B> using pm_cond_t = typename pm_cond<C, A, B>::type;
template <class T> struct pm_uncv { typedef T type; };
template <class T> struct pm_uncv<const T> { typedef T type; };
template <class T> struct pm_uncv<volatile T> { typedef T type; };
template <class T> struct pm_uncv<const volatile T> { typedef T type; };
template <class T> struct pm_uncv<T &> : pm_uncv<T> {};
template <class T> struct pm_uncv<T &&> : pm_uncv<T> {};
template <class T> using pm_uncv_t = typename pm_uncv<T>::type;
template <class T> T &&pm_declval() noexcept;
// T, but dependent on P: the per-type overloads are `template <class P = void>`
// functions whose bodies name pm_dep_t<P, T>, so that nothing is instantiated
// until a kernel calls them (parsing the headers stays fast).
template <class P, class T> struct pm_dep { typedef T type; };
template <class P, class T> using pm_dep_t = typename pm_dep<P, T>::type;

// Scalar categories.
template <class T> inline constexpr bool pm_is_int = false;       // integer scalars (not bool)
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
template <class T> inline constexpr bool pm_is_float = false;     // MSL floating scalars
template <> inline constexpr bool pm_is_float<float> = true;
template <> inline constexpr bool pm_is_float<half> = true;
template <> inline constexpr bool pm_is_float<bfloat> = true;
template <class T> inline constexpr bool pm_is_double = false;    // C++ only (1.0 literals)
template <> inline constexpr bool pm_is_double<double> = true;
template <> inline constexpr bool pm_is_double<long double> = true;
template <class T> inline constexpr bool pm_is_arith =
    pm_is_int<T> || pm_is_float<T> || pm_is_double<T>;
template <class T> inline constexpr bool pm_is_scalar = pm_is_arith<T> || pm_same<T, bool>;
template <class T> inline constexpr bool pm_is_signed = (T)-1 < (T)0;

// boolN and packed_TN (defined below).
template <int N> struct pm_bool_vec;
template <class T, int N> struct pm_packed;

// Element type and width of scalars, ext vectors, boolN, packed_TN.
template <class T> struct pm_vinfo {
    typedef T elem;
    static constexpr int n = 1;
    static constexpr bool is_vec = false;  // a clang ext vector
    static constexpr bool is_any_vec = false;
};
template <class T, int N> struct pm_vinfo<T __attribute__((ext_vector_type(N)))> {
    typedef T elem;
    static constexpr int n = N;
    static constexpr bool is_vec = true;
    static constexpr bool is_any_vec = true;
};
template <int N> struct pm_vinfo<pm_bool_vec<N>> {
    typedef bool elem;
    static constexpr int n = N;
    static constexpr bool is_vec = false;
    static constexpr bool is_any_vec = true;
};
template <class T, int N> struct pm_vinfo<pm_packed<T, N>> {
    typedef T elem;
    static constexpr int n = N;
    static constexpr bool is_vec = false;
    static constexpr bool is_any_vec = true;
};
template <class T> using pm_elem_t = typename pm_vinfo<pm_uncv_t<T>>::elem;
template <class T> inline constexpr int pm_width = pm_vinfo<pm_uncv_t<T>>::n;
template <class T> inline constexpr bool pm_is_vec = pm_vinfo<pm_uncv_t<T>>::is_vec;
template <class T> inline constexpr bool pm_is_fvec = pm_is_vec<T> && pm_is_float<pm_elem_t<T>>;
template <class T> inline constexpr bool pm_is_ivec = pm_is_vec<T> && pm_is_int<pm_elem_t<T>>;
// float-ish: a floating scalar or a clang vector of them; int-ish likewise.
template <class T> inline constexpr bool pm_is_fgen = pm_is_float<T> || pm_is_fvec<T>;
template <class T> inline constexpr bool pm_is_igen = pm_is_int<T> || pm_is_ivec<T>;

// vec<T, N>: the clang vector (deducible: template <class T, int N> f(vec<T, N>)).
// vec<bool, N> is clang's bit-packed bool vector, not boolN; use boolN for masks.
template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));
// T or vec<T, N> (N == 1 gives the scalar).
template <class T, int N> struct pm_vec_or_scalar { typedef T __attribute__((ext_vector_type(N))) type; };
template <class T> struct pm_vec_or_scalar<T, 1> { typedef T type; };
template <class T, int N> using pm_vec_t = typename pm_vec_or_scalar<T, N>::type;
// The same shape as V with element E.
template <class E, class V> using pm_rebind_t = pm_vec_t<E, pm_width<V>>;
// Signed integer type of the same size as E (for masks).
template <int Size> struct pm_int_of_size;
template <> struct pm_int_of_size<1> { typedef char type; };
template <> struct pm_int_of_size<2> { typedef short type; };
template <> struct pm_int_of_size<4> { typedef int type; };
template <> struct pm_int_of_size<8> { typedef long type; };
template <class E> using pm_mask_elem_t = typename pm_int_of_size<sizeof(E)>::type;

// ---------------------------------------------------------------------------
// boolN: one byte per element (sizeof(bool3) == 4 as in MSL), .x/.y/.z/.w and
// .r/.g/.b/.a members, [], logical and bitwise operators, implicit conversion
// from bool (splat) and from integer vectors (vector comparison masks).
// ---------------------------------------------------------------------------
template <int N> struct pm_bool_storage;
template <> struct alignas(2) pm_bool_storage<2> {
    union { bool e[2]; struct { bool x, y; }; struct { bool r, g; }; };
};
template <> struct alignas(4) pm_bool_storage<3> {
    union { bool e[3]; struct { bool x, y, z; }; struct { bool r, g, b; }; };
};
template <> struct alignas(4) pm_bool_storage<4> {
    union { bool e[4]; struct { bool x, y, z, w; }; struct { bool r, g, b, a; }; };
};

template <int N> struct pm_bool_vec : pm_bool_storage<N> {
    using pm_bool_storage<N>::e;
    pm_bool_vec() = default;
    constexpr pm_bool_vec(bool v) : pm_bool_storage<N>() {
        for (int i = 0; i < N; i++) e[i] = v;
    }
    // From a comparison mask or any integer vector of the same width (nonzero = true).
    template <class V>
        requires(pm_is_ivec<V> && pm_width<V> == N)
    constexpr pm_bool_vec(V m) : pm_bool_storage<N>() {
        for (int i = 0; i < N; i++) e[i] = m[i] != 0;
    }
    // bool4 m = {true, false, a, b};
    template <class... A>
        requires(sizeof...(A) == N && N > 1 && (pm_is_scalar<A> && ...))
    constexpr pm_bool_vec(A... a) : pm_bool_storage<N>() {
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
    template <class M> constexpr vec<M, N> pm_mask() const {
        vec<M, N> r = 0;
        for (int i = 0; i < N; i++) r[i] = e[i] ? (M)-1 : (M)0;
        return r;
    }
    constexpr pm_bool_vec operator!() const {
        pm_bool_vec r;
        for (int i = 0; i < N; i++) r.e[i] = !e[i];
        return r;
    }
#define PM_BOOL_OP(op)                                                                \
    friend constexpr pm_bool_vec operator op(pm_bool_vec a, pm_bool_vec b) {          \
        pm_bool_vec r;                                                                \
        for (int i = 0; i < N; i++) r.e[i] = (a.e[i] op b.e[i]);                      \
        return r;                                                                     \
    }
    PM_BOOL_OP(&&) PM_BOOL_OP(||) PM_BOOL_OP(==) PM_BOOL_OP(!=)
#undef PM_BOOL_OP
#define PM_BOOL_BITOP(op)                                                             \
    friend constexpr pm_bool_vec operator op(pm_bool_vec a, pm_bool_vec b) {          \
        pm_bool_vec r;                                                                \
        for (int i = 0; i < N; i++) r.e[i] = (bool)(a.e[i] op b.e[i]);                \
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
template <class T, int N> struct pm_packed_storage;
template <class T> struct pm_packed_storage<T, 2> {
    union { T e[2]; struct { T x, y; }; struct { T r, g; }; };
};
template <class T> struct pm_packed_storage<T, 3> {
    union { T e[3]; struct { T x, y, z; }; struct { T r, g, b; }; };
};
template <class T> struct pm_packed_storage<T, 4> {
    union { T e[4]; struct { T x, y, z, w; }; struct { T r, g, b, a; }; };
};

template <class T, int N> struct pm_packed : pm_packed_storage<T, N> {
    typedef vec<T, N> vector_type;
    using pm_packed_storage<T, N>::e;
    pm_packed() = default;
    constexpr pm_packed(vector_type v) : pm_packed_storage<T, N>() {
        for (int i = 0; i < N; i++) e[i] = v[i];
    }
    template <class S>
        requires(pm_is_arith<S>)
    constexpr pm_packed(S s) : pm_packed_storage<T, N>() {
        for (int i = 0; i < N; i++) e[i] = (T)s;
    }
    template <class... A>
        requires(sizeof...(A) == N && (pm_is_arith<A> && ...))
    constexpr pm_packed(A... a) : pm_packed_storage<T, N>() {
        int i = 0;
        ((e[i++] = (T)a), ...);
    }
    constexpr operator vector_type() const {
        vector_type v = 0;
        for (int i = 0; i < N; i++) v[i] = e[i];
        return v;
    }
    constexpr vector_type pm_v() const { return *this; }
    constexpr T &operator[](int i) { return e[i]; }
    constexpr const T &operator[](int i) const { return e[i]; }
    constexpr T &operator[](unsigned i) { return e[i]; }
    constexpr const T &operator[](unsigned i) const { return e[i]; }
    constexpr T &operator[](long i) { return e[i]; }
    constexpr const T &operator[](long i) const { return e[i]; }
    constexpr T &operator[](unsigned long i) { return e[i]; }
    constexpr const T &operator[](unsigned long i) const { return e[i]; }
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
    template <class S>                                                                    \
        requires(pm_is_arith<S>)                                                          \
    friend constexpr vector_type operator op(const pm_packed &a, S b) {                   \
        return a.pm_v() op(T) b;                                                          \
    }                                                                                     \
    template <class S>                                                                    \
        requires(pm_is_arith<S>)                                                          \
    friend constexpr vector_type operator op(S a, const pm_packed &b) {                   \
        return (T)a op b.pm_v();                                                          \
    }                                                                                     \
    template <class S>                                                                    \
    constexpr pm_packed &operator op##=(const S & b) {                                    \
        return *this = pm_packed(vector_type(*this op b));                                \
    }
    PM_PACKED_OP(+) PM_PACKED_OP(-) PM_PACKED_OP(*) PM_PACKED_OP(/)
#undef PM_PACKED_OP
    friend constexpr auto operator==(const pm_packed &a, const pm_packed &b) { return a.pm_v() == b.pm_v(); }
    friend constexpr auto operator!=(const pm_packed &a, const pm_packed &b) { return a.pm_v() != b.pm_v(); }
};

#define PM_PACKED(T)                             \
    typedef pm_packed<T, 2> packed_##T##2;       \
    typedef pm_packed<T, 3> packed_##T##3;       \
    typedef pm_packed<T, 4> packed_##T##4;
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
template <class E, class S> constexpr E pm_elem_cast(S s) {
    if constexpr (pm_same<E, bool>) return s != 0;
    else return (E)s;
}
template <class E, int N, class A> constexpr void pm_put(E (&out)[N], int &k, const A &a) {
    typedef pm_uncv_t<A> U;
    if constexpr (pm_is_scalar<U>) {
        out[k++] = pm_elem_cast<E>(a);
    } else {
        static_assert(pm_vinfo<U>::is_any_vec, "MSL vector constructor: unsupported argument type");
        for (int i = 0; i < pm_width<U>; i++) out[k++] = pm_elem_cast<E>(a[i]);
    }
}
template <class A> inline constexpr int pm_ncomp = pm_width<A>;

template <class V, class A> constexpr V pm_convert_vec(A a) { return __builtin_convertvector(a, V); }

template <class V, class... A> constexpr V pm_make(const A &...a) {
    typedef pm_elem_t<V> E;
    constexpr int N = pm_width<V>;
    if constexpr (sizeof...(A) == 0) {
        return V{};
    } else if constexpr (sizeof...(A) == 1 && (pm_is_scalar<pm_uncv_t<A>> && ...)) {
        E s = pm_elem_cast<E>(a...);
        if constexpr (pm_vinfo<V>::is_vec) return (V)s;
        else return V(s);
    } else if constexpr (sizeof...(A) == 1 && pm_vinfo<V>::is_vec &&
                         (pm_is_vec<A> && ...) && ((pm_width<A> == N) && ...) &&
                         !pm_same<E, bool>) {
        return pm_convert_vec<V>(a...);
    } else {
        static_assert(((pm_ncomp<pm_uncv_t<A>>) + ...) == N,
                      "MSL vector constructor: the arguments must have exactly as many components as the vector");
        E tmp[N] = {};
        int k = 0;
        (pm_put<E, N>(tmp, k, a), ...);
        V r{};
        for (int i = 0; i < N; i++) r[i] = tmp[i];
        return r;
    }
}

#define char2(...) ::metal::pm_make<::metal::char2>(__VA_ARGS__)
#define char3(...) ::metal::pm_make<::metal::char3>(__VA_ARGS__)
#define char4(...) ::metal::pm_make<::metal::char4>(__VA_ARGS__)
#define uchar2(...) ::metal::pm_make<::metal::uchar2>(__VA_ARGS__)
#define uchar3(...) ::metal::pm_make<::metal::uchar3>(__VA_ARGS__)
#define uchar4(...) ::metal::pm_make<::metal::uchar4>(__VA_ARGS__)
#define short2(...) ::metal::pm_make<::metal::short2>(__VA_ARGS__)
#define short3(...) ::metal::pm_make<::metal::short3>(__VA_ARGS__)
#define short4(...) ::metal::pm_make<::metal::short4>(__VA_ARGS__)
#define ushort2(...) ::metal::pm_make<::metal::ushort2>(__VA_ARGS__)
#define ushort3(...) ::metal::pm_make<::metal::ushort3>(__VA_ARGS__)
#define ushort4(...) ::metal::pm_make<::metal::ushort4>(__VA_ARGS__)
#define int2(...) ::metal::pm_make<::metal::int2>(__VA_ARGS__)
#define int3(...) ::metal::pm_make<::metal::int3>(__VA_ARGS__)
#define int4(...) ::metal::pm_make<::metal::int4>(__VA_ARGS__)
#define uint2(...) ::metal::pm_make<::metal::uint2>(__VA_ARGS__)
#define uint3(...) ::metal::pm_make<::metal::uint3>(__VA_ARGS__)
#define uint4(...) ::metal::pm_make<::metal::uint4>(__VA_ARGS__)
#define long2(...) ::metal::pm_make<::metal::long2>(__VA_ARGS__)
#define long3(...) ::metal::pm_make<::metal::long3>(__VA_ARGS__)
#define long4(...) ::metal::pm_make<::metal::long4>(__VA_ARGS__)
#define ulong2(...) ::metal::pm_make<::metal::ulong2>(__VA_ARGS__)
#define ulong3(...) ::metal::pm_make<::metal::ulong3>(__VA_ARGS__)
#define ulong4(...) ::metal::pm_make<::metal::ulong4>(__VA_ARGS__)
#define half2(...) ::metal::pm_make<::metal::half2>(__VA_ARGS__)
#define half3(...) ::metal::pm_make<::metal::half3>(__VA_ARGS__)
#define half4(...) ::metal::pm_make<::metal::half4>(__VA_ARGS__)
#define float2(...) ::metal::pm_make<::metal::float2>(__VA_ARGS__)
#define float3(...) ::metal::pm_make<::metal::float3>(__VA_ARGS__)
#define float4(...) ::metal::pm_make<::metal::float4>(__VA_ARGS__)
#define bfloat2(...) ::metal::pm_make<::metal::bfloat2>(__VA_ARGS__)
#define bfloat3(...) ::metal::pm_make<::metal::bfloat3>(__VA_ARGS__)
#define bfloat4(...) ::metal::pm_make<::metal::bfloat4>(__VA_ARGS__)
#define bool2(...) ::metal::pm_make<::metal::bool2>(__VA_ARGS__)
#define bool3(...) ::metal::pm_make<::metal::bool3>(__VA_ARGS__)
#define bool4(...) ::metal::pm_make<::metal::bool4>(__VA_ARGS__)
#define packed_char2(...) ::metal::pm_make<::metal::packed_char2>(__VA_ARGS__)
#define packed_char3(...) ::metal::pm_make<::metal::packed_char3>(__VA_ARGS__)
#define packed_char4(...) ::metal::pm_make<::metal::packed_char4>(__VA_ARGS__)
#define packed_uchar2(...) ::metal::pm_make<::metal::packed_uchar2>(__VA_ARGS__)
#define packed_uchar3(...) ::metal::pm_make<::metal::packed_uchar3>(__VA_ARGS__)
#define packed_uchar4(...) ::metal::pm_make<::metal::packed_uchar4>(__VA_ARGS__)
#define packed_short2(...) ::metal::pm_make<::metal::packed_short2>(__VA_ARGS__)
#define packed_short3(...) ::metal::pm_make<::metal::packed_short3>(__VA_ARGS__)
#define packed_short4(...) ::metal::pm_make<::metal::packed_short4>(__VA_ARGS__)
#define packed_ushort2(...) ::metal::pm_make<::metal::packed_ushort2>(__VA_ARGS__)
#define packed_ushort3(...) ::metal::pm_make<::metal::packed_ushort3>(__VA_ARGS__)
#define packed_ushort4(...) ::metal::pm_make<::metal::packed_ushort4>(__VA_ARGS__)
#define packed_int2(...) ::metal::pm_make<::metal::packed_int2>(__VA_ARGS__)
#define packed_int3(...) ::metal::pm_make<::metal::packed_int3>(__VA_ARGS__)
#define packed_int4(...) ::metal::pm_make<::metal::packed_int4>(__VA_ARGS__)
#define packed_uint2(...) ::metal::pm_make<::metal::packed_uint2>(__VA_ARGS__)
#define packed_uint3(...) ::metal::pm_make<::metal::packed_uint3>(__VA_ARGS__)
#define packed_uint4(...) ::metal::pm_make<::metal::packed_uint4>(__VA_ARGS__)
#define packed_long2(...) ::metal::pm_make<::metal::packed_long2>(__VA_ARGS__)
#define packed_long3(...) ::metal::pm_make<::metal::packed_long3>(__VA_ARGS__)
#define packed_long4(...) ::metal::pm_make<::metal::packed_long4>(__VA_ARGS__)
#define packed_ulong2(...) ::metal::pm_make<::metal::packed_ulong2>(__VA_ARGS__)
#define packed_ulong3(...) ::metal::pm_make<::metal::packed_ulong3>(__VA_ARGS__)
#define packed_ulong4(...) ::metal::pm_make<::metal::packed_ulong4>(__VA_ARGS__)
#define packed_half2(...) ::metal::pm_make<::metal::packed_half2>(__VA_ARGS__)
#define packed_half3(...) ::metal::pm_make<::metal::packed_half3>(__VA_ARGS__)
#define packed_half4(...) ::metal::pm_make<::metal::packed_half4>(__VA_ARGS__)
#define packed_float2(...) ::metal::pm_make<::metal::packed_float2>(__VA_ARGS__)
#define packed_float3(...) ::metal::pm_make<::metal::packed_float3>(__VA_ARGS__)
#define packed_float4(...) ::metal::pm_make<::metal::packed_float4>(__VA_ARGS__)
#define packed_bfloat2(...) ::metal::pm_make<::metal::packed_bfloat2>(__VA_ARGS__)
#define packed_bfloat3(...) ::metal::pm_make<::metal::packed_bfloat3>(__VA_ARGS__)
#define packed_bfloat4(...) ::metal::pm_make<::metal::packed_bfloat4>(__VA_ARGS__)

// ---------------------------------------------------------------------------
// as_type<T>(x): reinterpret the bits (sizes must match).
// ---------------------------------------------------------------------------
template <class T, class U> constexpr T as_type(const U &x) {
    static_assert(sizeof(T) == sizeof(U), "as_type: source and destination must have the same size");
    return __builtin_bit_cast(T, x);
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
template <class T> struct numeric_limits {
    static constexpr bool is_specialized = false;
};
#define PM_INT_LIMITS(T, MIN, MAX, DIG)                                         \
    template <> struct numeric_limits<T> {                                     \
        static constexpr bool is_specialized = true;                           \
        static constexpr bool is_signed = (T)-1 < (T)0;                        \
        static constexpr bool is_integer = true;                               \
        static constexpr bool is_exact = true;                                 \
        static constexpr bool has_infinity = false;                            \
        static constexpr bool has_quiet_NaN = false;                           \
        static constexpr int digits = DIG;                                     \
        static constexpr int radix = 2;                                        \
        static constexpr T min() { return MIN; }                               \
        static constexpr T max() { return MAX; }                               \
        static constexpr T lowest() { return MIN; }                            \
        static constexpr T epsilon() { return 0; }                             \
        static constexpr T round_error() { return 0; }                         \
        static constexpr T infinity() { return 0; }                            \
        static constexpr T quiet_NaN() { return 0; }                           \
        static constexpr T signaling_NaN() { return 0; }                       \
        static constexpr T denorm_min() { return 0; }                          \
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
#define PM_FLOAT_LIMITS(T, MIN, MAX, EPS, DMIN, DIG)                            \
    template <> struct numeric_limits<T> {                                     \
        static constexpr bool is_specialized = true;                           \
        static constexpr bool is_signed = true;                                \
        static constexpr bool is_integer = false;                              \
        static constexpr bool is_exact = false;                                \
        static constexpr bool has_infinity = true;                             \
        static constexpr bool has_quiet_NaN = true;                            \
        static constexpr int digits = DIG;                                     \
        static constexpr int radix = 2;                                        \
        static constexpr T min() { return (T)(MIN); }                          \
        static constexpr T max() { return (T)(MAX); }                          \
        static constexpr T lowest() { return (T)(-(MAX)); }                    \
        static constexpr T epsilon() { return (T)(EPS); }                      \
        static constexpr T round_error() { return (T)0.5f; }                   \
        static constexpr T infinity() { return (T)__builtin_inff(); }          \
        static constexpr T quiet_NaN() { return (T)__builtin_nanf(""); }       \
        static constexpr T signaling_NaN() { return (T)__builtin_nansf(""); }  \
        static constexpr T denorm_min() { return (T)(DMIN); }                  \
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
