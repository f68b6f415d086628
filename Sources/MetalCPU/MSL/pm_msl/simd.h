// SIMD-group and quad-group functions (metal_simdgroup) on the CPU.
//
// Every function is a rendezvous of the calling simdgroup's *active* lanes
// (pm::rt::simd_arrive in runtime.h): lanes that exist and have not returned.
// Lanes beyond the end of a partial edge simdgroup and lanes that returned
// early do not take part:
//   - reductions, prefixes and votes are over the active lanes, in lane order
//     (deterministic; uniform results are computed once and given to all);
//   - a shuffle / broadcast whose source lane is inactive or out of range
//     returns the caller's own value (for simd_shuffle_and_fill_*: its own
//     `data`); simd_shuffle_up/down leave the lanes without a source
//     unchanged, as MSL says;
//   - simd_broadcast_first / simd_is_first use the lowest active lane.
// Quad functions work on groups of 4 consecutive lanes but are still a
// rendezvous of the whole simdgroup. All active lanes of a simdgroup must
// reach the same call site (the same simd_/quad_ call in the source): lanes
// waiting at different SIMD-group calls, or at one and at a barrier, are
// reported as divergent control flow instead of computing something the GPU
// would not. simdgroup_barrier matches any other simdgroup_barrier.
#pragma once
#include "pm_msl/types.h"
#include "pm_msl/runtime.h"

#pragma GCC visibility push(hidden)

namespace metal {
// The result of simd_ballot / simd_active_threads_mask: bit i = lane i.
class simd_vote {
public:
    typedef ulong vote_t;
    explicit constexpr simd_vote(vote_t v = 0) : v_(v) {}
    explicit constexpr operator vote_t() const { return v_; }
    // True when the bits of all 32 lanes are set (inactive lanes read as 0).
    constexpr bool all() const { return (v_ & 0xFFFFFFFFul) == 0xFFFFFFFFul; }
    constexpr bool any() const { return v_ != 0; }

private:
    vote_t v_;
};
// The result of quad_ballot / quad_active_threads_mask: bit i = lane i of the quad.
class quad_vote {
public:
    typedef ushort vote_t;
    explicit constexpr quad_vote(vote_t v = 0) : v_(v) {}
    explicit constexpr operator vote_t() const { return v_; }
    constexpr bool all() const { return (v_ & 0xFu) == 0xFu; }
    constexpr bool any() const { return (v_ & 0xFu) != 0; }

private:
    vote_t v_;
};
} // namespace metal

namespace pm::rt::simd {
template <class _PmT> PM_AI _PmT in0(const simd_slot &s, uint32_t l) {
    _PmT v;
    __builtin_memcpy(&v, s.in[l], sizeof(_PmT));
    return v;
}
template <class _PmT> PM_AI _PmT in1(const simd_slot &s, uint32_t l) {
    _PmT v;
    __builtin_memcpy(&v, s.in[l] + 32, sizeof(_PmT));
    return v;
}
template <class _PmT> PM_AI void put(simd_slot &s, uint32_t l, const _PmT &v) {
    __builtin_memcpy(s.out[l], &v, sizeof(_PmT));
}

// Active lanes of the W-lane group starting at `base`, as bits from `base`.
template <uint32_t _PmW> PM_AI uint32_t lanes_of(uint32_t act, uint32_t base) {
    if constexpr (_PmW == 32) return act;
    else return (act >> base) & ((1u << _PmW) - 1u);
}

struct op_sum { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return a + b; } template <class _PmT> static PM_AI _PmT id() { return (_PmT)0; } };
struct op_product { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return a * b; } template <class _PmT> static PM_AI _PmT id() { return (_PmT)1; } };
struct op_min { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return __builtin_elementwise_min(a, b); } };
struct op_max { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return __builtin_elementwise_max(a, b); } };
// and / or / xor of floating values (Apple's __metal_simd_xor(float), which MLX's bf16 overloads
// call) combine their bit patterns.
template <class _PmT, class _PmF> PM_AI _PmT bitwise(_PmT a, _PmT b, _PmF f) {
    if constexpr (__is_integral(_PmT) || !__is_arithmetic(_PmT)) {
        return f(a, b);
    } else {
        typedef unsigned _BitInt(sizeof(_PmT) * 8) _PmU;
        return __builtin_bit_cast(_PmT, (_PmU)f(__builtin_bit_cast(_PmU, a), __builtin_bit_cast(_PmU, b)));
    }
}
struct op_and { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return bitwise(a, b, [](auto x, auto y) { return x & y; }); } };
struct op_or { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return bitwise(a, b, [](auto x, auto y) { return x | y; }); } };
struct op_xor { template <class _PmT> static PM_AI _PmT f(_PmT a, _PmT b) { return bitwise(a, b, [](auto x, auto y) { return x ^ y; }); } };

template <class _PmT, class _PmOp, uint32_t _PmW> void c_reduce(simd_slot &s) {
    const uint32_t act = s.arrived_mask;
    for (uint32_t base = 0; base < PM_SIMD_WIDTH; base += _PmW) {
        uint32_t m = lanes_of<_PmW>(act, base);
        if (!m) continue;
        _PmT acc = in0<_PmT>(s, base + __builtin_ctz(m));
        for (uint32_t r = m & (m - 1); r; r &= r - 1) acc = _PmOp::f(acc, in0<_PmT>(s, base + __builtin_ctz(r)));
        for (; m; m &= m - 1) put(s, base + __builtin_ctz(m), acc);
    }
}

template <class _PmT, class _PmOp, bool _PmInclusive, uint32_t _PmW> void c_prefix(simd_slot &s) {
    const uint32_t act = s.arrived_mask;
    for (uint32_t base = 0; base < PM_SIMD_WIDTH; base += _PmW) {
        uint32_t m = lanes_of<_PmW>(act, base);
        if (!m) continue;
        _PmT acc = _PmOp::template id<_PmT>();
        bool first = true;
        for (; m; m &= m - 1) {
            uint32_t l = base + __builtin_ctz(m);
            _PmT v = in0<_PmT>(s, l);
            if (_PmInclusive) {
                acc = first ? v : _PmOp::f(acc, v);
                put(s, l, acc);
            } else {
                put(s, l, acc);
                acc = first ? v : _PmOp::f(acc, v);
            }
            first = false;
        }
    }
}

// Source lane (within the W-lane group) of lane `li` for parameter p; -1: own value.
struct src_index { static PM_AI int f(uint32_t, uint32_t p, uint32_t _PmW) { return p < _PmW ? (int)p : -1; } };
struct src_up { static PM_AI int f(uint32_t li, uint32_t p, uint32_t) { return li >= p ? (int)(li - p) : -1; } };
struct src_down { static PM_AI int f(uint32_t li, uint32_t p, uint32_t _PmW) { return li + p < _PmW ? (int)(li + p) : -1; } };
struct src_rot_up { static PM_AI int f(uint32_t li, uint32_t p, uint32_t _PmW) { return (int)((li + _PmW - p % _PmW) % _PmW); } };
struct src_rot_down { static PM_AI int f(uint32_t li, uint32_t p, uint32_t _PmW) { return (int)((li + p) % _PmW); } };
struct src_xor { static PM_AI int f(uint32_t li, uint32_t p, uint32_t _PmW) { return (li ^ p) < _PmW ? (int)(li ^ p) : -1; } };

template <class _PmT, class _PmSrc, uint32_t _PmW> void c_shuffle(simd_slot &s) {
    const uint32_t act = s.arrived_mask;
    for (uint32_t m = act; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m), base = l & ~(_PmW - 1), li = l - base;
        int src = _PmSrc::f(li, s.param[l], _PmW);
        uint32_t from = src >= 0 ? base + (uint32_t)src : l;
        if (!((act >> from) & 1u)) from = l;
        put(s, l, in0<_PmT>(s, from));
    }
}

// shuffle_and_fill: param = delta | modulo << 16 (modulo 0: the whole group).
template <class _PmT, bool _PmUp, uint32_t _PmW> void c_fill(simd_slot &s) {
    const uint32_t act = s.arrived_mask;
    for (uint32_t m = act; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m), base = l & ~(_PmW - 1), li = l - base;
        uint32_t d = s.param[l] & 0xFFFFu, mod = s.param[l] >> 16;
        if (mod == 0 || mod > _PmW) mod = _PmW;
        uint32_t seg = base + li / mod * mod, lj = li % mod;
        _PmT v = in0<_PmT>(s, l); // own data: no source (delta > modulo is undefined in MSL)
        if (d <= mod) {
            bool fill = _PmUp ? lj < d : lj + d >= mod;
            uint32_t from = _PmUp ? (fill ? seg + mod - d + lj : seg + lj - d)
                                  : (fill ? seg + lj + d - mod : seg + lj + d);
            if ((act >> from) & 1u) v = fill ? in1<_PmT>(s, from) : in0<_PmT>(s, from);
        }
        put(s, l, v);
    }
}

template <class _PmT, uint32_t _PmW> void c_broadcast_first(simd_slot &s) {
    const uint32_t act = s.arrived_mask;
    for (uint32_t base = 0; base < PM_SIMD_WIDTH; base += _PmW) {
        uint32_t m = lanes_of<_PmW>(act, base);
        if (!m) continue;
        _PmT v = in0<_PmT>(s, base + __builtin_ctz(m));
        for (; m; m &= m - 1) put(s, base + __builtin_ctz(m), v);
    }
}

// Votes. kind 0: ballot (mask of active lanes with true), 1: all, 2: any,
// 3: is_first, 4: active_threads_mask.
template <int _PmKind, uint32_t _PmW> void c_vote(simd_slot &s) {
    const uint32_t act = s.arrived_mask;
    for (uint32_t base = 0; base < PM_SIMD_WIDTH; base += _PmW) {
        uint32_t m = lanes_of<_PmW>(act, base);
        if (!m) continue;
        uint32_t yes = 0;
        for (uint32_t r = m; r; r &= r - 1) {
            uint32_t b = __builtin_ctz(r);
            if (in0<bool>(s, base + b)) yes |= 1u << b;
        }
        for (uint32_t r = m; r; r &= r - 1) {
            uint32_t b = __builtin_ctz(r), l = base + b;
            if constexpr (_PmKind == 0) put(s, l, (uint64_t)yes);
            else if constexpr (_PmKind == 1) put(s, l, (bool)(yes == m));
            else if constexpr (_PmKind == 2) put(s, l, (bool)(yes != 0));
            else if constexpr (_PmKind == 3) put(s, l, (bool)(b == (uint32_t)__builtin_ctz(m)));
            else put(s, l, (uint64_t)m);
        }
    }
}

inline void c_nop(simd_slot &) {}

template <class _PmR, class _PmT>
PM_AI _PmR call(const _PmT &x, uint32_t param, simd_compute_fn op, const char *name, site s, const _PmT *fill = nullptr,
             bool any_site = false) {
    static_assert(sizeof(_PmT) <= 32 && sizeof(_PmR) <= 32, "SIMD-group functions take scalars and vectors");
    alignas(32) unsigned char a[32], b[32];
    __builtin_memcpy(a, &x, sizeof(_PmT));
    if (fill) __builtin_memcpy(b, fill, sizeof(_PmT));
    const void *r = simd_arrive(a, fill ? b : nullptr, param, op, name, s, any_site);
    _PmR v;
    __builtin_memcpy(&v, r, sizeof(_PmR));
    return v;
}
} // namespace pm::rt::simd

#pragma GCC visibility pop
#pragma GCC visibility push(hidden)

namespace metal {
#define PM_SITE ::pm::rt::site pm_site = ::pm::rt::site()
#define PM_SIMD_NS ::pm::rt::simd

// Reductions: simd_sum, quad_sum, ...
#define PM_RED(NAME, OP)                                                                                       \
    template <class _PmT> inline _PmT simd_##NAME(_PmT data, PM_SITE) {                                        \
        return PM_SIMD_NS::call<_PmT>(data, 0, &PM_SIMD_NS::c_reduce<_PmT, PM_SIMD_NS::OP, 32>, "simd_" #NAME, \
                                      pm_site);                                                                \
    }                                                                                                          \
    template <class _PmT> inline _PmT quad_##NAME(_PmT data, PM_SITE) {                                        \
        return PM_SIMD_NS::call<_PmT>(data, 0, &PM_SIMD_NS::c_reduce<_PmT, PM_SIMD_NS::OP, 4>, "quad_" #NAME,  \
                                      pm_site);                                                                \
    }
PM_RED(sum, op_sum)
PM_RED(product, op_product)
PM_RED(min, op_min)
PM_RED(max, op_max)
PM_RED(and, op_and)
PM_RED(or, op_or)
PM_RED(xor, op_xor)
#undef PM_RED

#define PM_PREFIX(NAME, OP, INCL)                                                                     \
    template <class _PmT> inline _PmT simd_prefix_##NAME(_PmT data, PM_SITE) {                        \
        return PM_SIMD_NS::call<_PmT>(data, 0, &PM_SIMD_NS::c_prefix<_PmT, PM_SIMD_NS::OP, INCL, 32>, \
                                      "simd_prefix_" #NAME, pm_site);                                 \
    }                                                                                                 \
    template <class _PmT> inline _PmT quad_prefix_##NAME(_PmT data, PM_SITE) {                        \
        return PM_SIMD_NS::call<_PmT>(data, 0, &PM_SIMD_NS::c_prefix<_PmT, PM_SIMD_NS::OP, INCL, 4>,  \
                                      "quad_prefix_" #NAME, pm_site);                                 \
    }
PM_PREFIX(exclusive_sum, op_sum, false)
PM_PREFIX(inclusive_sum, op_sum, true)
PM_PREFIX(exclusive_product, op_product, false)
PM_PREFIX(inclusive_product, op_product, true)
#undef PM_PREFIX

#define PM_SHUF(NAME, SRC, PARAM)                                                                     \
    template <class _PmT> inline _PmT simd_##NAME(_PmT data, ushort PARAM, PM_SITE) {                 \
        return PM_SIMD_NS::call<_PmT>(data, PARAM, &PM_SIMD_NS::c_shuffle<_PmT, PM_SIMD_NS::SRC, 32>, \
                                      "simd_" #NAME, pm_site);                                        \
    }                                                                                                 \
    template <class _PmT> inline _PmT quad_##NAME(_PmT data, ushort PARAM, PM_SITE) {                 \
        return PM_SIMD_NS::call<_PmT>(data, PARAM, &PM_SIMD_NS::c_shuffle<_PmT, PM_SIMD_NS::SRC, 4>,  \
                                      "quad_" #NAME, pm_site);                                        \
    }
PM_SHUF(broadcast, src_index, lane)
PM_SHUF(shuffle, src_index, lane)
PM_SHUF(shuffle_up, src_up, delta)
PM_SHUF(shuffle_down, src_down, delta)
PM_SHUF(shuffle_xor, src_xor, mask)
PM_SHUF(shuffle_rotate_up, src_rot_up, delta)
PM_SHUF(shuffle_rotate_down, src_rot_down, delta)
#undef PM_SHUF

#define PM_FILL(NAME, UP)                                                                                        \
    template <class _PmT> inline _PmT simd_##NAME(_PmT data, _PmT filling_data, ushort delta, PM_SITE) {         \
        return PM_SIMD_NS::call<_PmT>(data, delta, &PM_SIMD_NS::c_fill<_PmT, UP, 32>, "simd_" #NAME, pm_site,    \
                                      &filling_data);                                                            \
    }                                                                                                            \
    template <class _PmT>                                                                                        \
    inline _PmT simd_##NAME(_PmT data, _PmT filling_data, ushort delta, ushort modulo, PM_SITE) {                \
        return PM_SIMD_NS::call<_PmT>(data, (uint32_t)delta | ((uint32_t)modulo << 16),                          \
                                      &PM_SIMD_NS::c_fill<_PmT, UP, 32>, "simd_" #NAME, pm_site, &filling_data); \
    }                                                                                                            \
    template <class _PmT> inline _PmT quad_##NAME(_PmT data, _PmT filling_data, ushort delta, PM_SITE) {         \
        return PM_SIMD_NS::call<_PmT>(data, delta, &PM_SIMD_NS::c_fill<_PmT, UP, 4>, "quad_" #NAME, pm_site,     \
                                      &filling_data);                                                            \
    }                                                                                                            \
    template <class _PmT>                                                                                        \
    inline _PmT quad_##NAME(_PmT data, _PmT filling_data, ushort delta, ushort modulo, PM_SITE) {                \
        return PM_SIMD_NS::call<_PmT>(data, (uint32_t)delta | ((uint32_t)modulo << 16),                          \
                                      &PM_SIMD_NS::c_fill<_PmT, UP, 4>, "quad_" #NAME, pm_site, &filling_data);  \
    }
PM_FILL(shuffle_and_fill_up, true)
PM_FILL(shuffle_and_fill_down, false)
#undef PM_FILL

template <class _PmT> inline _PmT simd_broadcast_first(_PmT data, PM_SITE) {
    return PM_SIMD_NS::call<_PmT>(data, 0, &PM_SIMD_NS::c_broadcast_first<_PmT, 32>, "simd_broadcast_first", pm_site);
}
template <class _PmT> inline _PmT quad_broadcast_first(_PmT data, PM_SITE) {
    return PM_SIMD_NS::call<_PmT>(data, 0, &PM_SIMD_NS::c_broadcast_first<_PmT, 4>, "quad_broadcast_first", pm_site);
}

inline simd_vote simd_ballot(bool expr, PM_SITE) {
    return simd_vote(PM_SIMD_NS::call<uint64_t>(expr, 0, &PM_SIMD_NS::c_vote<0, 32>, "simd_ballot", pm_site));
}
inline quad_vote quad_ballot(bool expr, PM_SITE) {
    return quad_vote((ushort)PM_SIMD_NS::call<uint64_t>(expr, 0, &PM_SIMD_NS::c_vote<0, 4>, "quad_ballot", pm_site));
}
inline bool simd_all(bool expr, PM_SITE) {
    return PM_SIMD_NS::call<bool>(expr, 0, &PM_SIMD_NS::c_vote<1, 32>, "simd_all", pm_site);
}
inline bool quad_all(bool expr, PM_SITE) {
    return PM_SIMD_NS::call<bool>(expr, 0, &PM_SIMD_NS::c_vote<1, 4>, "quad_all", pm_site);
}
inline bool simd_any(bool expr, PM_SITE) {
    return PM_SIMD_NS::call<bool>(expr, 0, &PM_SIMD_NS::c_vote<2, 32>, "simd_any", pm_site);
}
inline bool quad_any(bool expr, PM_SITE) {
    return PM_SIMD_NS::call<bool>(expr, 0, &PM_SIMD_NS::c_vote<2, 4>, "quad_any", pm_site);
}
inline bool simd_is_first(PM_SITE) {
    return PM_SIMD_NS::call<bool>(false, 0, &PM_SIMD_NS::c_vote<3, 32>, "simd_is_first", pm_site);
}
inline bool quad_is_first(PM_SITE) {
    return PM_SIMD_NS::call<bool>(false, 0, &PM_SIMD_NS::c_vote<3, 4>, "quad_is_first", pm_site);
}
inline simd_vote simd_active_threads_mask(PM_SITE) {
    return simd_vote(
        PM_SIMD_NS::call<uint64_t>(false, 0, &PM_SIMD_NS::c_vote<4, 32>, "simd_active_threads_mask", pm_site));
}
inline quad_vote quad_active_threads_mask(PM_SITE) {
    return quad_vote((ushort)PM_SIMD_NS::call<uint64_t>(false, 0, &PM_SIMD_NS::c_vote<4, 4>,
                                                        "quad_active_threads_mask", pm_site));
}

// Waits for the simdgroup's active lanes (any simdgroup_barrier call matches).
inline void simdgroup_barrier(mem_flags, PM_SITE) {
    (void)PM_SIMD_NS::call<char>((char)0, 0, &PM_SIMD_NS::c_nop, "simdgroup_barrier", pm_site, (const char *)nullptr, true);
}

#undef PM_SIMD_NS
#undef PM_SITE
} // namespace metal

#pragma GCC visibility pop
