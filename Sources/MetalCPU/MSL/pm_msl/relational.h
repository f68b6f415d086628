// MSL relational functions (metal_relational): all, any, select, isfinite,
// isinf, isnan, isnormal, isordered, isunordered, signbit. `not(x)` is C++'s
// alternative token for `!x`, which boolN, bool and comparison masks support.
#pragma once
#include "types.h"

namespace metal {

// all / any: bool, boolN, and integer vectors (comparison masks: nonzero = true).
constexpr bool all(bool b) { return b; }
constexpr bool any(bool b) { return b; }
template <int N> constexpr bool all(pm_bool_vec<N> m) {
    for (int i = 0; i < N; i++)
        if (!m.e[i]) return false;
    return true;
}
template <int N> constexpr bool any(pm_bool_vec<N> m) {
    for (int i = 0; i < N; i++)
        if (m.e[i]) return true;
    return false;
}
template <class V>
    requires(pm_is_ivec<V>)
constexpr bool all(V m) {
    for (int i = 0; i < pm_width<V>; i++)
        if (m[i] == 0) return false;
    return true;
}
template <class V>
    requires(pm_is_ivec<V>)
constexpr bool any(V m) {
    for (int i = 0; i < pm_width<V>; i++)
        if (m[i] != 0) return true;
    return false;
}

// select(a, b, c): c ? b : a, per element for vector c.
template <class T>
    requires(pm_is_scalar<T> || pm_vinfo<T>::is_any_vec)
constexpr T select(T a, pm_identity_t<T> b, bool c) { return c ? b : a; }
template <class T>
    requires(pm_is_vec<T>)
constexpr T select(T a, pm_identity_t<T> b, pm_identity_t<pm_bool_vec<pm_width<T>>> c) {
    T r = a;
    for (int i = 0; i < pm_width<T>; i++)
        if (c.e[i]) r[i] = b[i];
    return r;
}
template <int N> constexpr pm_bool_vec<N> select(pm_bool_vec<N> a, pm_bool_vec<N> b, pm_bool_vec<N> c) {
    pm_bool_vec<N> r = a;
    for (int i = 0; i < N; i++)
        if (c.e[i]) r.e[i] = b.e[i];
    return r;
}

// Classification: bool for scalars, boolN for vectors.
template <class T> using pm_bool_for_t = pm_cond_t<pm_is_vec<T>, pm_bool_vec<pm_width<T>>, bool>;
template <class T, class F> constexpr pm_bool_for_t<T> pm_classify(T x, F f) {
    if constexpr (!pm_is_vec<T>) {
        return f((float)x);
    } else {
        pm_bool_for_t<T> r(false);
        for (int i = 0; i < pm_width<T>; i++) r.e[i] = f((float)x[i]);
        return r;
    }
}
template <class T, class F> constexpr pm_bool_for_t<T> pm_classify2(T x, T y, F f) {
    if constexpr (!pm_is_vec<T>) {
        return f((float)x, (float)y);
    } else {
        pm_bool_for_t<T> r(false);
        for (int i = 0; i < pm_width<T>; i++) r.e[i] = f((float)x[i], (float)y[i]);
        return r;
    }
}
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> isfinite(T x) { return pm_classify(x, [](float v) { return __builtin_isfinite(v) != 0; }); }
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> isinf(T x) { return pm_classify(x, [](float v) { return __builtin_isinf(v) != 0; }); }
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> isnan(T x) { return pm_classify(x, [](float v) { return v != v; }); }
// Normal in the element's own format (half: |x| >= 2^-14).
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> isnormal(T x) {
    constexpr float lo = pm_same<pm_elem_t<T>, half> ? 0x1p-14f : 0x1p-126f;
    return pm_classify(x, [](float v) { return __builtin_isfinite(v) && __builtin_fabsf(v) >= lo; });
}
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> signbit(T x) { return pm_classify(x, [](float v) { return __builtin_signbit(v) != 0; }); }
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> isordered(T x, pm_identity_t<T> y) {
    return pm_classify2(x, y, [](float a, float b) { return a == a && b == b; });
}
template <class T>
    requires(pm_is_fgen<T> || pm_is_double<T>)
constexpr pm_bool_for_t<T> isunordered(T x, pm_identity_t<T> y) {
    return pm_classify2(x, y, [](float a, float b) { return a != a || b != b; });
}

} // namespace metal
