// MSL relational functions (metal_relational): all, any, select, isfinite,
// isinf, isnan, isnormal, isordered, isunordered, signbit. `not(x)` is C++'s
// alternative token for `!x`, which boolN, bool and comparison masks support.
#pragma once
#include "types.h"

namespace metal {

// all / any: bool, boolN, and integer vectors (comparison masks: nonzero = true).
constexpr bool all(bool b) { return b; }
constexpr bool any(bool b) { return b; }
template <int _PmN> constexpr bool all(pm_bool_vec<_PmN> m) {
    for (int i = 0; i < _PmN; i++)
        if (!m.e[i]) return false;
    return true;
}
template <int _PmN> constexpr bool any(pm_bool_vec<_PmN> m) {
    for (int i = 0; i < _PmN; i++)
        if (m.e[i]) return true;
    return false;
}
template <class _PmV>
    requires(pm_is_ivec<_PmV>)
constexpr bool all(_PmV m) {
    for (int i = 0; i < pm_width<_PmV>; i++)
        if (m[i] == 0) return false;
    return true;
}
template <class _PmV>
    requires(pm_is_ivec<_PmV>)
constexpr bool any(_PmV m) {
    for (int i = 0; i < pm_width<_PmV>; i++)
        if (m[i] != 0) return true;
    return false;
}

// select(a, b, c): c ? b : a, per element for vector c.
template <class _PmT>
    requires(pm_is_scalar<_PmT> || pm_vinfo<_PmT>::is_any_vec)
constexpr _PmT select(_PmT a, pm_identity_t<_PmT> b, bool c) { return c ? b : a; }
template <class _PmT>
    requires(pm_is_vec<_PmT>)
constexpr _PmT select(_PmT a, pm_identity_t<_PmT> b, pm_identity_t<pm_bool_vec<pm_width<_PmT>>> c) {
    _PmT r = a;
    for (int i = 0; i < pm_width<_PmT>; i++)
        if (c.e[i]) r[i] = b[i];
    return r;
}
template <int _PmN> constexpr pm_bool_vec<_PmN> select(pm_bool_vec<_PmN> a, pm_bool_vec<_PmN> b, pm_bool_vec<_PmN> c) {
    pm_bool_vec<_PmN> r = a;
    for (int i = 0; i < _PmN; i++)
        if (c.e[i]) r.e[i] = b.e[i];
    return r;
}

// Classification: bool for scalars, boolN for vectors.
template <class _PmT> using pm_bool_for_t = pm_cond_t<pm_is_vec<_PmT>, pm_bool_vec<pm_width<_PmT>>, bool>;
template <class _PmT, class _PmF> constexpr pm_bool_for_t<_PmT> pm_classify(_PmT x, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return f((float)x);
    } else {
        pm_bool_for_t<_PmT> r(false);
        for (int i = 0; i < pm_width<_PmT>; i++) r.e[i] = f((float)x[i]);
        return r;
    }
}
template <class _PmT, class _PmF> constexpr pm_bool_for_t<_PmT> pm_classify2(_PmT x, _PmT y, _PmF f) {
    if constexpr (!pm_is_vec<_PmT>) {
        return f((float)x, (float)y);
    } else {
        pm_bool_for_t<_PmT> r(false);
        for (int i = 0; i < pm_width<_PmT>; i++) r.e[i] = f((float)x[i], (float)y[i]);
        return r;
    }
}
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> isfinite(_PmT x) { return pm_classify(x, [](float v) { return __builtin_isfinite(v) != 0; }); }
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> isinf(_PmT x) { return pm_classify(x, [](float v) { return __builtin_isinf(v) != 0; }); }
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> isnan(_PmT x) { return pm_classify(x, [](float v) { return v != v; }); }
// Normal in the element's own format (half: |x| >= 2^-14).
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> isnormal(_PmT x) {
    constexpr float lo = pm_same<pm_elem_t<_PmT>, half> ? 0x1p-14f : 0x1p-126f;
    return pm_classify(x, [](float v) { return __builtin_isfinite(v) && __builtin_fabsf(v) >= lo; });
}
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> signbit(_PmT x) { return pm_classify(x, [](float v) { return __builtin_signbit(v) != 0; }); }
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> isordered(_PmT x, pm_identity_t<_PmT> y) {
    return pm_classify2(x, y, [](float a, float b) { return a == a && b == b; });
}
template <class _PmT>
    requires(pm_is_fgen<_PmT> || pm_is_double<_PmT>)
constexpr pm_bool_for_t<_PmT> isunordered(_PmT x, pm_identity_t<_PmT> y) {
    return pm_classify2(x, y, [](float a, float b) { return a != a || b != b; });
}

} // namespace metal
