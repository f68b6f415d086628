// SIMD-group matrices (metal_simdgroup_matrix) on the CPU: 8x8 only.
//
// Each of the 32 lanes of a simdgroup owns two consecutive elements of one
// row, with Apple's layout (the one MLX's steel GEMM relies on through
// thread_elements()):
//   q = lane / 4
//   row = (q & 4) + (lane / 2) % 4
//   col = (q & 2) * 2 + (lane % 2) * 2        -> elements (row, col), (row, col + 1)
// A matrix object holds its lane's two elements (pm_e, what thread_elements()
// returns) and a hint (pm_h): the operation whose full result it holds.
//
// MSL requires simdgroup_load and the multiplies in simdgroup-uniform control
// flow with uniform arguments. So the lanes of a simdgroup, which run one
// after another as fibers, do not meet at each of them: the first lane to
// reach an operation performs it for the whole simdgroup, as whole-matrix
// vector code, and keeps the 8x8 result in the simdgroup's ring of results;
// the other lanes, when they get there, take their two elements from it and
// check that they did what the first lane did (same call, same arguments, for
// a multiply the same operand values in their elements). The first lane may
// run up to `window` operations ahead before it lets the others catch up.
// A multiply whose operands are not all known as whole matrices (a fragment
// filled through thread_elements(), make_filled_simdgroup_matrix, a result
// older than the window) is a rendezvous instead: every lane writes its
// elements into the simdgroup's gather buffers, the last one to arrive
// computes. Elements of lanes that do not exist (partial edge simdgroup) or
// returned read as 0. simdgroup_store and the constructors touch only the
// calling lane's own elements.
//
// Consequence of the first lane loading for all: memory written by other
// lanes of the simdgroup must be made visible with a barrier
// (simdgroup_barrier or threadgroup_barrier) before a simdgroup_load reads
// it, as MSL's memory model requires. Lanes whose operands were changed in
// divergent control flow between the first lane's multiply and theirs make
// the dispatch fail with a message (the first lane cannot take it back).
#pragma once
#include "pm_msl/types.h"
#include "pm_msl/runtime.h"
#include "pm_msl/simd.h"

#pragma GCC visibility push(hidden)

namespace pm::rt::sgm {
inline constexpr uint32_t ring = 16;  // results kept per simdgroup
inline constexpr uint32_t window = 8; // operations the first lane may run ahead (ring = 2 * window)
enum : uint32_t { k_load = 1, k_mma = 2, k_gather = 3 };

struct entry {
    uint32_t seq;   // operation number + 1 whose result is in m (0: none)
    uint32_t kind;
    uint32_t ready; // k_gather: m computed
    uint32_t line, col;
    const char *file;
    uint32_t in[3];  // k_mma: the operands' operation numbers + 1 (0: no c)
    uint64_t arg[4]; // k_load: source address, elements per row, origin, transpose
    alignas(32) float m[64]; // row-major, values of the result's element type
};

struct state { // one simdgroup
    uint32_t serial; // worker::group_serial of the group the counters are for
    uint32_t ops;    // operations started by the simdgroup
    uint32_t passed[PM_SIMD_WIDTH]; // operations each lane reached
    alignas(32) float g[3][64];     // k_gather: a, b, c as the lanes deliver them
    entry e[ring];
};

PM_AI uint32_t pos(uint32_t lane) { // element index (row * 8 + col) of the lane's first element
    uint32_t q = lane / 4;
    return ((q & 4) + (lane / 2) % 4) * 8 + (q & 2) * 2 + (lane % 2) * 2;
}

// One call: what the other lanes must repeat exactly.
struct call {
    uint32_t kind;
    site s;
    uint64_t arg[4];
};

[[noreturn]] inline void diverged(worker *w, uint32_t index, const char *what, const call &c, const entry &e) {
    char where[48];
    set_error(w,
              "divergent control flow: in simdgroup %u of threadgroup %s, thread %u %s (line %u:%u) where "
              "thread %u's simdgroup matrix operation %u was at line %u:%u",
              index / PM_SIMD_WIDTH, gpos_str(w->g, where), index, what, c.s.line, c.s.col,
              index - index % PM_SIMD_WIDTH, e.seq - 1, e.line, e.col);
    abort_group(w);
}

inline state &state_of(worker *w, uint32_t sgi) {
    if (!w->ext) {
        size_t bytes = sizeof(state) * (PM_FIBER_MAX / PM_SIMD_WIDTH);
        void *p = sys::mmap(nullptr, bytes, sys::prot_read | sys::prot_write,
                            sys::map_private | sys::map_anonymous | sys::map_noreserve, -1, 0);
        if (sys::map_failed(p)) {
            set_error(w, "out of memory: cannot allocate the simdgroup matrix state");
            abort_group(w);
        }
        w->ext = p;
        w->ext_bytes = bytes;
    }
    state &ms = ((state *)w->ext)[sgi];
    if (ms.serial != w->group_serial) { // first operation of this simdgroup in this group
        ms.serial = w->group_serial;
        ms.ops = 0;
        for (uint32_t l = 0; l < PM_SIMD_WIDTH; l++) ms.passed[l] = 0;
        for (uint32_t i = 0; i < ring; i++) ms.e[i].seq = 0;
    }
    return ms;
}

// The entry of the calling lane's next operation. `first`: the lane is the
// first to reach it and performs it (its entry's m is to be written).
__attribute__((noinline)) inline entry *begin(worker *w, uint32_t index, const call &c, bool &first) {
    const uint32_t sgi = index / PM_SIMD_WIDTH, lane = index % PM_SIMD_WIDTH;
    state &ms = state_of(w, sgi);
    const uint32_t k = ms.passed[lane]++;
    for (;;) {
        if (k < ms.ops) { // performed (or started) by another lane: check it was this call
            entry &e = ms.e[k % ring];
            bool same = c.s.line == e.line && c.s.col == e.col && c.s.file == e.file &&
                        (c.kind == e.kind || (c.kind == k_mma && e.kind == k_gather));
            if (!same) diverged(w, index, "calls a simdgroup matrix function", c, e);
            if (c.kind == k_load)
                for (int i = 0; i < 4; i++)
                    if (c.arg[i] != e.arg[i]) diverged(w, index, "calls simdgroup_load with other arguments", c, e);
            first = false;
            return &e;
        }
        // First: the slot is free when every active lane reached operation k - window.
        uint32_t low = k;
        for (uint32_t m = w->sg[sgi].active_mask & ~(1u << lane); m; m &= m - 1) {
            uint32_t p = ms.passed[__builtin_ctz(m)];
            if (p < low) low = p;
        }
        if (low + window > k) {
            entry &e = ms.e[k % ring];
            e.seq = k + 1;
            e.kind = c.kind;
            e.ready = 0;
            e.file = c.s.file;
            e.line = c.s.line;
            e.col = c.s.col;
            for (int i = 0; i < 4; i++) e.arg[i] = c.arg[i];
            ms.ops = k + 1;
            first = true;
            return &e;
        }
        if (!yield_to_siblings(w, index)) { // cannot happen: the lanes behind are runnable
            char where[48];
            set_error(w, "internal error: simdgroup %u of threadgroup %s cannot make progress", sgi,
                      gpos_str(w->g, where));
            abort_group(w);
        }
    }
}

// The result entry of operation h (op number + 1) when it can serve operation
// k: still in the ring for as long as every lane needs it (see begin).
PM_AI const entry *result(const state &ms, uint32_t h, uint32_t k) {
    if (h == 0 || k - (h - 1) >= window) return nullptr;
    const entry &e = ms.e[(h - 1) % ring];
    return e.seq == h ? &e : nullptr;
}

template <class _PmT> PM_AI bool holds(const float *m, uint32_t p, vec<_PmT, 2> v) {
    return __builtin_bit_cast(uint32_t, (float)v[0]) == __builtin_bit_cast(uint32_t, m[p]) &&
           __builtin_bit_cast(uint32_t, (float)v[1]) == __builtin_bit_cast(uint32_t, m[p + 1]);
}

typedef float f8 __attribute__((ext_vector_type(8)));

// d = a @ b (+ c), k in order with fused multiply-adds, rounded to _PmTD.
template <class _PmTD> inline void multiply(float *d, const float *a, const float *b, const float *c) {
    f8 rb[8];
    for (int k = 0; k < 8; k++) __builtin_memcpy(&rb[k], b + 8 * k, sizeof(f8));
    for (int i = 0; i < 8; i++) {
        f8 acc = 0.0f;
        if (c) __builtin_memcpy(&acc, c + 8 * i, sizeof(f8));
        for (int k = 0; k < 8; k++) acc = __builtin_elementwise_fma((f8)a[8 * i + k], rb[k], acc);
        if constexpr (!__is_same(_PmTD, float))
            acc = __builtin_convertvector(__builtin_convertvector(acc, vec<_PmTD, 8>), f8);
        __builtin_memcpy(d + 8 * i, &acc, sizeof(f8));
    }
}

// The rendezvous of a k_gather multiply (a function of its own: rendezvous are told apart by it).
inline void c_gather(simd_slot &) {}

template <class _PmT> PM_AI void put(float *m, uint32_t p, vec<_PmT, 2> v) {
    m[p] = (float)v[0];
    m[p + 1] = (float)v[1];
}
} // namespace pm::rt::sgm

namespace metal {
template <class _PmT, int _PmCols, int _PmRows> struct simdgroup_matrix {
    static_assert(_PmCols == 8 && _PmRows == 8, "simdgroup_matrix: only 8x8 matrices are supported");
};

template <class _PmT> struct simdgroup_matrix<_PmT, 8, 8> {
    typedef _PmT element_type;
    typedef vec<_PmT, 2> storage_type;
    storage_type pm_e = {}; // this lane's two elements
    uint32_t pm_h = 0;      // operation number + 1 whose result this is (a hint: checked before use)

    simdgroup_matrix() = default;
    // A diagonal matrix with `dval` on the diagonal (0 elsewhere).
    simdgroup_matrix(_PmT dval) {
        uint32_t p = ::pm::rt::sgm::pos(::pm::rt::current_lane()), r = p / 8, c = p % 8;
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
                           ulong2 matrix_origin = 0, bool transpose_matrix = false,
                           ::pm::rt::site pm_site = ::pm::rt::site()) {
    namespace sgm = ::pm::rt::sgm;
    auto at = [&](uint32_t r, uint32_t c) -> const _PmU & {
        ulong row = transpose_matrix ? c : r, col = transpose_matrix ? r : c;
        return src[(matrix_origin.y + row) * elements_per_row + matrix_origin.x + col];
    };
    const ::pm::rt::fiber_self me = ::pm::rt::self();
    if (!me.w) { // not running as fibers: a lone lane 0
        ::pm::rt::loop_mode_call(::pm::rt::tls_w, "simdgroup_load", pm_site);
        d.pm_e = vec<_PmT, 2>{(_PmT)at(0, 0), (_PmT)at(0, 1)};
        d.pm_h = 0;
        return;
    }
    const uint32_t lane = me.index % PM_SIMD_WIDTH, p = sgm::pos(lane);
    sgm::call c{sgm::k_load, pm_site,
                {(uint64_t)(uintptr_t)src, elements_per_row, matrix_origin.x | (matrix_origin.y << 32),
                 transpose_matrix}};
    bool first;
    sgm::entry &e = *sgm::begin(me.w, me.index, c, first);
    if (first) { // the whole matrix: the elements of the lanes that take part
        const uint32_t act = me.w->sg[me.index / PM_SIMD_WIDTH].active_mask;
        for (uint32_t l = 0; l < PM_SIMD_WIDTH; l++) {
            uint32_t q = sgm::pos(l), r = q / 8, col = q % 8;
            bool on = (act >> l) & 1u;
            e.m[q] = on ? (float)(_PmT)at(r, col) : 0.0f;
            e.m[q + 1] = on ? (float)(_PmT)at(r, col + 1) : 0.0f;
        }
    }
    d.pm_e = vec<_PmT, 2>{(_PmT)e.m[p], (_PmT)e.m[p + 1]};
    d.pm_h = e.seq;
}

template <class _PmT, class _PmU>
inline void simdgroup_store(const simdgroup_matrix<_PmT, 8, 8> &a, _PmU *dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    uint32_t p = ::pm::rt::sgm::pos(::pm::rt::current_lane()), r = p / 8, c = p % 8;
    for (uint32_t k = 0; k < 2; k++) {
        ulong row = transpose_matrix ? c + k : r, col = transpose_matrix ? r : c + k;
        dst[(matrix_origin.y + row) * elements_per_row + matrix_origin.x + col] = (_PmU)a.pm_e[k];
    }
}

namespace pm_sgm {
// d = a @ b + c (c null: d = a @ b), see the top of this file.
template <class _PmTD, class _PmTA, class _PmTB, class _PmTC>
inline void mma(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                const simdgroup_matrix<_PmTB, 8, 8> &b, const simdgroup_matrix<_PmTC, 8, 8> *c, const char *name,
                ::pm::rt::site pm_site) {
    namespace sgm = ::pm::rt::sgm;
    const ::pm::rt::fiber_self me = ::pm::rt::self();
    if (!me.w) { // not running as fibers: a lone lane 0, the other lanes' elements 0
        ::pm::rt::loop_mode_call(::pm::rt::tls_w, name, pm_site);
        alignas(32) float m[4][64] = {};
        sgm::put(m[0], 0, a.pm_e);
        sgm::put(m[1], 0, b.pm_e);
        if (c) sgm::put(m[2], 0, c->pm_e);
        sgm::multiply<_PmTD>(m[3], m[0], m[1], c ? m[2] : nullptr);
        d.pm_e = vec<_PmTD, 2>{(_PmTD)m[3][0], (_PmTD)m[3][1]};
        d.pm_h = 0;
        return;
    }
    ::pm::rt::worker *w = me.w;
    const uint32_t sgi = me.index / PM_SIMD_WIDTH, p = sgm::pos(me.index % PM_SIMD_WIDTH);
    bool first;
    sgm::entry &e = *sgm::begin(w, me.index, sgm::call{sgm::k_mma, pm_site, {}}, first);
    sgm::state &ms = ((sgm::state *)w->ext)[sgi];
    const uint32_t k = e.seq - 1;
    if (first) { // whole matrices for every operand, the same values as this lane's elements?
        const sgm::entry *ea = sgm::result(ms, a.pm_h, k), *eb = sgm::result(ms, b.pm_h, k),
                         *ec = c ? sgm::result(ms, c->pm_h, k) : nullptr;
        if (ea && eb && (!c || ec) && sgm::holds(ea->m, p, a.pm_e) && sgm::holds(eb->m, p, b.pm_e) &&
            (!c || sgm::holds(ec->m, p, c->pm_e))) {
            e.in[0] = ea->seq;
            e.in[1] = eb->seq;
            e.in[2] = c ? ec->seq : 0;
            sgm::multiply<_PmTD>(e.m, ea->m, eb->m, c ? ec->m : nullptr);
        } else {
            e.kind = sgm::k_gather;
            __builtin_memset(ms.g, 0, sizeof ms.g);
        }
    } else if (e.kind == sgm::k_mma) { // did the first lane see this lane's operands?
        if (!sgm::holds(ms.e[(e.in[0] - 1) % sgm::ring].m, p, a.pm_e) ||
            !sgm::holds(ms.e[(e.in[1] - 1) % sgm::ring].m, p, b.pm_e) ||
            (c && !sgm::holds(ms.e[(e.in[2] - 1) % sgm::ring].m, p, c->pm_e))) {
            char where[48];
            ::pm::rt::set_error(w,
                                "%s (line %u:%u): in simdgroup %u of threadgroup %s, thread %u's operands differ "
                                "from what the simdgroup's first thread saw (a matrix changed through "
                                "thread_elements() in divergent control flow); the CPU backend cannot run this",
                                name, pm_site.line, pm_site.col, sgi, ::pm::rt::gpos_str(w->g, where), me.index);
            ::pm::rt::abort_group(w);
        }
    }
    if (e.kind == sgm::k_gather) {
        sgm::put(ms.g[0], p, a.pm_e);
        sgm::put(ms.g[1], p, b.pm_e);
        if (c) sgm::put(ms.g[2], p, c->pm_e);
        char none = 0;
        (void)::pm::rt::simd_arrive(&none, 1, nullptr, 0, &sgm::c_gather, name, pm_site);
        if (!e.ready) { // the last lane to arrive runs on first
            sgm::multiply<_PmTD>(e.m, ms.g[0], ms.g[1], c ? ms.g[2] : nullptr);
            e.ready = 1;
        }
    }
    d.pm_e = vec<_PmTD, 2>{(_PmTD)e.m[p], (_PmTD)e.m[p + 1]};
    d.pm_h = e.seq;
}
} // namespace pm_sgm

template <class _PmTD, class _PmTA, class _PmTB>
inline void simdgroup_multiply(simdgroup_matrix<_PmTD, 8, 8> &d, const simdgroup_matrix<_PmTA, 8, 8> &a,
                               const simdgroup_matrix<_PmTB, 8, 8> &b, ::pm::rt::site pm_site = ::pm::rt::site()) {
    pm_sgm::mma<_PmTD, _PmTA, _PmTB, _PmTD>(d, a, b, nullptr, "simdgroup_multiply", pm_site);
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
