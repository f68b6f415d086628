// SIMD-group matrices (metal_simdgroup_matrix) on the CPU: 8x8 only.
//
// Each of the 32 lanes of a simdgroup owns two consecutive elements of one
// row, with Apple's layout (the one MLX's steel GEMM relies on through
// thread_elements()):
//   q = lane / 4
//   row = (q & 4) + (lane / 2) % 4
//   col = (q & 2) * 2 + (lane % 2) * 2        -> elements (row, col), (row, col + 1)
// simdgroup_load / simdgroup_store / make_filled / the diagonal constructor
// touch only the calling lane's own elements (no rendezvous). Multiplies are
// a rendezvous of the simdgroup (see simd.h): each lane hands in its elements
// of the operands, the last lane to arrive assembles the three 8x8 matrices,
// computes the product once as whole-matrix vector code (8-wide rows, k in
// order with fused multiply-adds, half / bfloat accumulated in float) and
// hands every lane its two elements of the result. Elements of lanes that do
// not exist (partial edge simdgroup) or returned read as 0.
//
// That is for kernels running as fibers. A kernel in SIMD lockstep (runtime.h)
// runs each operation once per simdgroup on all its lanes' elements instead
// (ls_load, ls_store, ls_mma below).
#pragma once
#include "pm_msl/types.h"
#include "pm_msl/runtime.h"
#include "pm_msl/simd.h"

#pragma GCC visibility push(hidden)

namespace metal {
template <class _PmT, int _PmCols, int _PmRows> struct simdgroup_matrix {
    static_assert(_PmCols == 8 && _PmRows == 8, "simdgroup_matrix: only 8x8 matrices are supported");
};

namespace pm_sgm {
// Element index (row * 8 + col) of the lane's first element.
PM_AI constexpr uint32_t pos(uint32_t lane) {
    uint32_t q = lane / 4;
    return ((q & 4) + (lane / 2) % 4) * 8 + (q & 2) * 2 + (lane % 2) * 2;
}
} // namespace pm_sgm

template <class _PmT> struct simdgroup_matrix<_PmT, 8, 8> {
    typedef _PmT element_type;
    typedef vec<_PmT, 2> storage_type;
    storage_type pm_e = {}; // this lane's two elements

    simdgroup_matrix() = default;
    // A diagonal matrix with `dval` on the diagonal (0 elsewhere).
    simdgroup_matrix(_PmT dval) {
        uint32_t p = pm_sgm::pos(::pm::rt::current_lane()), r = p / 8, c = p % 8;
        pm_e[0] = r == c ? dval : (_PmT)0;
        pm_e[1] = r == c + 1 ? dval : (_PmT)0;
    }
    storage_type &thread_elements() { return pm_e; }
    const storage_type &thread_elements() const { return pm_e; }
};

typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class _PmT, int _PmCols, int _PmRows = _PmCols> // Rows defaults to Cols, as in Metal
inline simdgroup_matrix<_PmT, _PmCols, _PmRows> make_filled_simdgroup_matrix(_PmT value) {
    simdgroup_matrix<_PmT, _PmCols, _PmRows> m;
    m.pm_e = (vec<_PmT, 2>)value;
    return m;
}

namespace pm_sgm {
// Where element (r, c) of the 8x8 matrix is in memory: src[(origin.y + r) * elements_per_row + origin.x + c],
// or with transpose_matrix src[(origin.y + c) * elements_per_row + origin.x + r].
PM_AI ulong offset(uint32_t r, uint32_t c, ulong elements_per_row, ulong2 origin, bool transpose) {
    return transpose ? (origin.y + c) * elements_per_row + origin.x + r : (origin.y + r) * elements_per_row + origin.x + c;
}
// `lane`'s two elements.
template <class _PmT, class _PmU>
PM_AI void load_lane(vec<_PmT, 2> &e, uint32_t lane, const _PmU *src, ulong elements_per_row, ulong2 origin,
                     bool transpose) {
    uint32_t p = pos(lane), r = p / 8, c = p % 8;
    for (uint32_t k = 0; k < 2; k++) e[k] = (_PmT)src[offset(r, c + k, elements_per_row, origin, transpose)];
}
template <class _PmT, class _PmU>
PM_AI void store_lane(const vec<_PmT, 2> &e, uint32_t lane, _PmU *dst, ulong elements_per_row, ulong2 origin,
                      bool transpose) {
    uint32_t p = pos(lane), r = p / 8, c = p % 8;
    for (uint32_t k = 0; k < 2; k++) dst[offset(r, c + k, elements_per_row, origin, transpose)] = (_PmU)e[k];
}
} // namespace pm_sgm

template <class _PmT, class _PmU>
inline void simdgroup_load(simdgroup_matrix<_PmT, 8, 8> &d, const _PmU *src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = 0, bool transpose_matrix = false) {
#ifdef PM_VALIDATION
    ::pm::rt::vplain(src, (matrix_origin.x + matrix_origin.y + 8) * (elements_per_row + 1) * sizeof(_PmU));
#endif
    pm_sgm::load_lane(d.pm_e, ::pm::rt::current_lane(), src, elements_per_row, matrix_origin, transpose_matrix);
}
template <class _PmT, class _PmU>
inline void simdgroup_store(const simdgroup_matrix<_PmT, 8, 8> &a, _PmU *dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = 0, bool transpose_matrix = false) {
#ifdef PM_VALIDATION // (a bound on the elements the matrix covers: offset() below)
    ::pm::rt::vplain(dst, (matrix_origin.x + matrix_origin.y + 8) * (elements_per_row + 1) * sizeof(_PmU));
#endif
    pm_sgm::store_lane(a.pm_e, ::pm::rt::current_lane(), dst, elements_per_row, matrix_origin, transpose_matrix);
}
#ifdef PM_VALIDATION
// Validation's checked pointers (runtime_validation.h) as the plain pointers they stand for
// (template deduction sees no conversion); the matrix's elements are not checked.
template <class _PmT, class _PmU, unsigned _PmK, unsigned _PmI, ::pm::rt::vname _PmN>
inline void simdgroup_load(simdgroup_matrix<_PmT, 8, 8> &d, const ::pm::rt::vptr<_PmU, _PmK, _PmI, _PmN> &src,
                           ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    simdgroup_load(d, (const _PmU *)src, elements_per_row, matrix_origin, transpose_matrix);
}
template <class _PmT, class _PmU, unsigned _PmK, unsigned _PmI, ::pm::rt::vname _PmN>
inline void simdgroup_store(const simdgroup_matrix<_PmT, 8, 8> &a, const ::pm::rt::vptr<_PmU, _PmK, _PmI, _PmN> &dst,
                            ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    simdgroup_store(a, (_PmU *)dst, elements_per_row, matrix_origin, transpose_matrix);
}
template <class _PmT, class _PmE, uint64_t _PmM, ::pm::rt::vname _PmN, class _PmF>
inline void simdgroup_load(simdgroup_matrix<_PmT, 8, 8> &d, const ::pm::rt::tg_view<_PmE[_PmM], _PmN, _PmF> &src,
                           ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    simdgroup_load(d, (const _PmE *)src, elements_per_row, matrix_origin, transpose_matrix);
}
template <class _PmT, class _PmE, uint64_t _PmM, ::pm::rt::vname _PmN, class _PmF>
inline void simdgroup_store(const simdgroup_matrix<_PmT, 8, 8> &a, const ::pm::rt::tg_view<_PmE[_PmM], _PmN, _PmF> &dst,
                            ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    simdgroup_store(a, (_PmE *)dst, elements_per_row, matrix_origin, transpose_matrix);
}
#endif

namespace pm_sgm {
typedef float f8 __attribute__((ext_vector_type(8)));

// What a lane hands in: its elements of a, b, c, in float (exact for half and bfloat).
struct operands {
    float a[2], b[2], c[2];
};

// out = a @ b (+ c when c), row-major 8x8 in float: whole-matrix vector code
// (8-wide rows, k in order with fused multiply-adds). out may be a, b or c.
inline void product(const float *a, const float *b, const float *c, float *out) {
    f8 rb[8];
    for (int k = 0; k < 8; k++) __builtin_memcpy(&rb[k], b + 8 * k, sizeof(f8));
    for (int i = 0; i < 8; i++) {
        f8 acc = 0.0f;
        if (c) __builtin_memcpy(&acc, c + 8 * i, sizeof(f8));
        for (int k = 0; k < 8; k++) acc = __builtin_elementwise_fma((f8)a[8 * i + k], rb[k], acc);
        __builtin_memcpy(out + 8 * i, &acc, sizeof(f8));
    }
}

// The rendezvous' computation (param: 1 when there is a c): d = a @ b (+ c)
// for the whole simdgroup, each lane's elements of d rounded to _PmTD.
template <class _PmTD> void c_mma(::pm::rt::simd_slot &s) {
    alignas(32) float a[64], b[64], c[64];
    const uint32_t act = s.arrived_mask;
    if (act != 0xFFFFFFFFu) { // elements of lanes not taking part are 0
        __builtin_memset(a, 0, sizeof a);
        __builtin_memset(b, 0, sizeof b);
        __builtin_memset(c, 0, sizeof c);
    }
    for (uint32_t m = act; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m), p = pos(l);
        operands o = ::pm::rt::simd::in0<operands>(s, l);
        a[p] = o.a[0], a[p + 1] = o.a[1];
        b[p] = o.b[0], b[p + 1] = o.b[1];
        c[p] = o.c[0], c[p + 1] = o.c[1];
    }
    product(a, b, s.param[__builtin_ctz(act)] != 0 ? c : nullptr, c); // c becomes d
    for (uint32_t m = act; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m), p = pos(l);
        ::pm::rt::simd::put(s, l, vec<_PmTD, 2>{(_PmTD)c[p], (_PmTD)c[p + 1]});
    }
}

// SIMD lockstep (runtime.h): a simdgroup's matrix is the 32 consecutive
// per-thread matrices of its lanes. They hold the elements in Apple's lane
// layout (what thread_elements() shows), or in row-major order (element
// p = row * 8 + col is scalar p of the 32) when the kernel only hands the
// matrix to simdgroup_matrix functions (Lockstep.swift decides): loads,
// stores and products then move whole rows. One call per simdgroup works on
// the elements of its active lanes `lanes`; elements of other lanes are 0 in a
// product and are not written.
template <class _PmT, bool _PmRowMajor> struct ls_matrix {
    simdgroup_matrix<_PmT, 8, 8> *m;
};
template <bool _PmRowMajor, class _PmT> PM_AI ls_matrix<_PmT, _PmRowMajor> ls_at(simdgroup_matrix<_PmT, 8, 8> *m) {
    return {m};
}
// The lane holding element p (even) in Apple's layout.
inline constexpr struct lane_table {
    uint8_t of[64] = {};
    constexpr lane_table() {
        for (uint32_t l = 0; l < 32; l++) of[pos(l)] = of[pos(l) + 1] = (uint8_t)l;
    }
} lane_of;
template <class _PmT> PM_AI _PmT &at(ls_matrix<_PmT, true> v, uint32_t p) { return ((_PmT *)v.m)[p]; }
template <class _PmT> PM_AI _PmT &at(ls_matrix<_PmT, false> v, uint32_t p) { return ((_PmT *)&v.m[lane_of.of[p]].pm_e)[p & 1]; }

// make_filled_simdgroup_matrix(v) in thread `lane`: its own two elements.
template <class _PmT, bool _PmR, class _PmV> PM_AI void ls_fill(ls_matrix<_PmT, _PmR> m, uint32_t lane, _PmV v) {
    const uint32_t p = pos(lane);
    at(m, p) = (_PmT)v;
    at(m, p + 1) = (_PmT)v;
}

// Calls f(p, r, c) for each element of `lanes`: all 64 in order when all take part.
template <class _PmF> PM_AI void each_element(uint32_t lanes, _PmF f) {
    if (lanes == 0xFFFFFFFFu) {
        for (uint32_t r = 0; r < 8; r++)
            for (uint32_t c = 0; c < 8; c++) f(r * 8 + c, r, c);
        return;
    }
    for (; lanes; lanes &= lanes - 1) {
        uint32_t p = pos(__builtin_ctz(lanes));
        f(p, p / 8, p % 8);
        f(p + 1, p / 8, p % 8 + 1);
    }
}
template <class _PmT, bool _PmR, class _PmU>
PM_AI void ls_load(uint32_t lanes, ls_matrix<_PmT, _PmR> d, const _PmU *src, ulong elements_per_row = 8,
                    ulong2 origin = 0, bool transpose_matrix = false) {
    if (_PmR && lanes == 0xFFFFFFFFu && !transpose_matrix) { // whole rows (what a product then reads whole)
        for (uint32_t r = 0; r < 8; r++) {
            const _PmU *row = src + (origin.y + r) * elements_per_row + origin.x;
            _PmT *out = (_PmT *)d.m + r * 8;
            if constexpr (__is_same(__remove_cv(_PmU), _PmT)) __builtin_memcpy(out, row, 8 * sizeof(_PmT)); // one move
            else for (uint32_t c = 0; c < 8; c++) out[c] = (_PmT)row[c];
        }
        return;
    }
    each_element(lanes, [&](uint32_t p, uint32_t r, uint32_t c) {
        at(d, p) = (_PmT)src[offset(r, c, elements_per_row, origin, transpose_matrix)];
    });
}
template <class _PmT, bool _PmR, class _PmU>
inline void ls_store(uint32_t lanes, ls_matrix<_PmT, _PmR> a, _PmU *dst, ulong elements_per_row = 8,
                     ulong2 origin = 0, bool transpose_matrix = false) {
    each_element(lanes, [&](uint32_t p, uint32_t r, uint32_t c) {
        dst[offset(r, c, elements_per_row, origin, transpose_matrix)] = (_PmU)at(a, p);
    });
}
// The elements of `lanes` as row-major floats (others 0): a row-major float matrix as it is.
template <class _PmT, bool _PmR> PM_AI const float *ls_floats(uint32_t lanes, ls_matrix<_PmT, _PmR> a, float *scratch) {
    if constexpr (_PmR && __is_same(_PmT, float)) {
        if (lanes == 0xFFFFFFFFu) return (const float *)a.m;
    }
    if (lanes != 0xFFFFFFFFu) __builtin_memset(scratch, 0, 64 * sizeof(float));
    each_element(lanes, [&](uint32_t p, uint32_t, uint32_t) { scratch[p] = (float)at(a, p); });
    return scratch;
}
template <class _PmTD, bool _PmRD, class _PmTA, bool _PmRA, class _PmTB, bool _PmRB, class _PmTC, bool _PmRC>
PM_AI void ls_mma(uint32_t lanes, ls_matrix<_PmTD, _PmRD> d, ls_matrix<_PmTA, _PmRA> a, ls_matrix<_PmTB, _PmRB> b,
                   const ls_matrix<_PmTC, _PmRC> *c) {
    alignas(32) float fa[64], fb[64], fc[64], out[64];
    const float *pc = c ? ls_floats(lanes, *c, fc) : nullptr;
    if constexpr (_PmRD && __is_same(_PmTD, float)) {
        if (lanes == 0xFFFFFFFFu) return product(ls_floats(lanes, a, fa), ls_floats(lanes, b, fb), pc, (float *)d.m);
    }
    product(ls_floats(lanes, a, fa), ls_floats(lanes, b, fb), pc, out);
    each_element(lanes, [&](uint32_t p, uint32_t, uint32_t) { at(d, p) = (_PmTD)out[p]; });
}
template <class _PmTD, bool _PmRD, class _PmTA, bool _PmRA, class _PmTB, bool _PmRB>
inline void ls_multiply(uint32_t lanes, ls_matrix<_PmTD, _PmRD> d, ls_matrix<_PmTA, _PmRA> a, ls_matrix<_PmTB, _PmRB> b) {
    ls_mma(lanes, d, a, b, (const ls_matrix<_PmTD, true> *)nullptr);
}
template <class _PmTD, bool _PmRD, class _PmTA, bool _PmRA, class _PmTB, bool _PmRB, class _PmTC, bool _PmRC>
inline void ls_multiply_accumulate(uint32_t lanes, ls_matrix<_PmTD, _PmRD> d, ls_matrix<_PmTA, _PmRA> a,
                                   ls_matrix<_PmTB, _PmRB> b, ls_matrix<_PmTC, _PmRC> c) {
    ls_mma(lanes, d, a, b, &c);
}

template <class _PmTD, class _PmTA, class _PmTB, class _PmTC>
inline void mma(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                const simdgroup_matrix<_PmTB, 8, 8> &b, const simdgroup_matrix<_PmTC, 8, 8> *c, const char *name,
                ::pm::rt::site pm_site) {
    operands o{{(float)a.pm_e[0], (float)a.pm_e[1]},
               {(float)b.pm_e[0], (float)b.pm_e[1]},
               {c ? (float)c->pm_e[0] : 0.0f, c ? (float)c->pm_e[1] : 0.0f}};
    d.pm_e = ::pm::rt::simd::call<vec<_PmTD, 2>>(o, c != nullptr, &c_mma<_PmTD>, name, pm_site);
}
} // namespace pm_sgm

template <class _PmTD, class _PmTA, class _PmTB>
inline void simdgroup_multiply(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                               const simdgroup_matrix<_PmTB, 8, 8> &b, ::pm::rt::site pm_site = ::pm::rt::site()) {
    pm_sgm::mma<_PmTD, _PmTA, _PmTB, _PmTD>(d, a, b, nullptr, "simdgroup_multiply", pm_site);
}
// a * b: the product, as simdgroup_multiply (MLX's Winograd transforms write (G * g) * Gt).
template <class _PmT>
inline simdgroup_matrix<_PmT, 8, 8> operator*(const simdgroup_matrix<_PmT, 8, 8> &a, const simdgroup_matrix<_PmT, 8, 8> &b) {
    simdgroup_matrix<_PmT, 8, 8> d;
    simdgroup_multiply(d, a, b);
    return d;
}
template <class _PmTD, class _PmTA, class _PmTB, class _PmTC>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                                          const simdgroup_matrix<_PmTB, 8, 8> &b,
                                          const simdgroup_matrix<_PmTC, 8, 8> &c,
                                          ::pm::rt::site pm_site = ::pm::rt::site()) {
    pm_sgm::mma<_PmTD, _PmTA, _PmTB, _PmTC>(d, a, b, &c, "simdgroup_multiply_accumulate", pm_site);
}
} // namespace metal

#pragma GCC visibility pop
