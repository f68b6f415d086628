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
// a rendezvous of the simdgroup (see simd.h): the last lane to arrive gathers
// the fragments of all lanes, computes the product once (k in order,
// accumulating in float for half / bfloat) and scatters the result. Elements
// of lanes that do not exist (partial edge simdgroup) read as 0.
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
PM_AI void coord(uint32_t lane, uint32_t &row, uint32_t &col) {
    uint32_t q = lane / 4;
    row = (q & 4) + (lane / 2) % 4;
    col = (q & 2) * 2 + (lane % 2) * 2;
}
} // namespace pm_sgm

template <class _PmT> struct simdgroup_matrix<_PmT, 8, 8> {
    typedef _PmT element_type;
    typedef vec<_PmT, 2> storage_type;
    storage_type pm_e = {}; // this lane's two elements

    simdgroup_matrix() = default;
    // A diagonal matrix with `dval` on the diagonal (0 elsewhere).
    simdgroup_matrix(_PmT dval) {
        uint32_t r, c;
        pm_sgm::coord(::pm::rt::current_lane(), r, c);
        pm_e[0] = r == c ? dval : (_PmT)0;
        pm_e[1] = r == c + 1 ? dval : (_PmT)0;
    }
    storage_type &thread_elements() { return pm_e; }
    const storage_type &thread_elements() const { return pm_e; }
};

typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class _PmT, int _PmCols, int _PmRows>
inline simdgroup_matrix<_PmT, _PmCols, _PmRows> make_filled_simdgroup_matrix(_PmT value) {
    simdgroup_matrix<_PmT, _PmCols, _PmRows> m;
    m.pm_e = (vec<_PmT, 2>)value;
    return m;
}

// Element (r, c) of the 8x8 matrix is src[(origin.y + r) * elements_per_row + origin.x + c],
// or with transpose_matrix src[(origin.y + c) * elements_per_row + origin.x + r].
template <class _PmT, class _PmU>
inline void simdgroup_load(simdgroup_matrix<_PmT, 8, 8> &d, const _PmU *src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    uint32_t r, c;
    pm_sgm::coord(::pm::rt::current_lane(), r, c);
    for (uint32_t k = 0; k < 2; k++) {
        ulong row = transpose_matrix ? c + k : r, col = transpose_matrix ? r : c + k;
        d.pm_e[k] = (_PmT)src[(matrix_origin.y + row) * elements_per_row + matrix_origin.x + col];
    }
}
template <class _PmT, class _PmU>
inline void simdgroup_store(const simdgroup_matrix<_PmT, 8, 8> &a, _PmU *dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    uint32_t r, c;
    pm_sgm::coord(::pm::rt::current_lane(), r, c);
    for (uint32_t k = 0; k < 2; k++) {
        ulong row = transpose_matrix ? c + k : r, col = transpose_matrix ? r : c + k;
        dst[(matrix_origin.y + row) * elements_per_row + matrix_origin.x + col] = (_PmU)a.pm_e[k];
    }
}

namespace pm_sgm {
template <class _PmTD, class _PmTA, class _PmTB, class _PmTC> struct mma_args {
    simdgroup_matrix<_PmTD, 8, 8> *d;
    const simdgroup_matrix<_PmTA, 8, 8> *a;
    const simdgroup_matrix<_PmTB, 8, 8> *b;
    const simdgroup_matrix<_PmTC, 8, 8> *c; // null: no accumulate
};
template <class _PmT> using acc_t = decltype((_PmT)0 * (float)0);

template <class _PmTD, class _PmTA, class _PmTB, class _PmTC> void c_mma(::pm::rt::simd_slot &s) {
    typedef mma_args<_PmTD, _PmTA, _PmTB, _PmTC> args;
    typedef acc_t<_PmTD> _PmAcc;
    _PmAcc ma[8][8] = {}, mb[8][8] = {}, mc[8][8] = {};
    const uint32_t act = s.arrived_mask;
    for (uint32_t m = act; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m), r, c;
        coord(l, r, c);
        args p = ::pm::rt::simd::in0<args>(s, l);
        for (int k = 0; k < 2; k++) {
            ma[r][c + k] = (_PmAcc)p.a->pm_e[k];
            mb[r][c + k] = (_PmAcc)p.b->pm_e[k];
            if (p.c) mc[r][c + k] = (_PmAcc)p.c->pm_e[k];
        }
    }
    _PmAcc md[8][8];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            _PmAcc acc = mc[i][j];
            for (int k = 0; k < 8; k++) acc += ma[i][k] * mb[k][j];
            md[i][j] = acc;
        }
    for (uint32_t m = act; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m), r, c;
        coord(l, r, c);
        args p = ::pm::rt::simd::in0<args>(s, l);
        p.d->pm_e[0] = (_PmTD)md[r][c];
        p.d->pm_e[1] = (_PmTD)md[r][c + 1];
    }
}
} // namespace pm_sgm

template <class _PmTD, class _PmTA, class _PmTB>
inline void simdgroup_multiply(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                               const simdgroup_matrix<_PmTB, 8, 8> &b, ::pm::rt::site pm_site = ::pm::rt::site()) {
    pm_sgm::mma_args<_PmTD, _PmTA, _PmTB, _PmTD> p{&d, &a, &b, nullptr};
    (void)::pm::rt::simd::call<char>(p, 0, &pm_sgm::c_mma<_PmTD, _PmTA, _PmTB, _PmTD>, "simdgroup_multiply", pm_site);
}
template <class _PmTD, class _PmTA, class _PmTB, class _PmTC>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                                          const simdgroup_matrix<_PmTB, 8, 8> &b,
                                          const simdgroup_matrix<_PmTC, 8, 8> &c,
                                          ::pm::rt::site pm_site = ::pm::rt::site()) {
    pm_sgm::mma_args<_PmTD, _PmTA, _PmTB, _PmTC> p{&d, &a, &b, &c};
    (void)::pm::rt::simd::call<char>(p, 0, &pm_sgm::c_mma<_PmTD, _PmTA, _PmTB, _PmTC>,
                                     "simdgroup_multiply_accumulate", pm_site);
}
} // namespace metal

#pragma GCC visibility pop
