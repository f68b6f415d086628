// LOOP mode: the threads of a group are a plain loop (pm_msl/runtime.h).
#pragma once
#include "pm_msl/runtime_common.h"

#pragma GCC visibility push(hidden)

namespace pm::rt {

// ---------------------------------------------------------------------------
// LOOP mode
// ---------------------------------------------------------------------------
template <class _PmInv>
inline int32_t run_loop(worker *w, uint64_t first, uint64_t end, group g, pm_status *st) {
    w->mode = _PmModeLoop;
    w->g = nullptr;
    for (uint64_t gi = first; gi < end; gi++) {
        if (!place_group(g, gi)) continue;
        w->nthreads = g.nthreads;
        start_group_memory(w, g);
        const uint32_t ax = g.size.x, ay = g.size.y, az = g.size.z;
        uint32_t idx = 0;
        for (uint32_t z = 0; z < az; z++) {
            for (uint32_t y = 0; y < ay; y++) {
                for (uint32_t x = 0; x < ax; x++) _PmInv::call(g, tpos{x, y, z, idx + x});
                idx += ax;
            }
        }
#ifdef PM_VALIDATION
        vgroup_end(w);
#endif
        if (__builtin_expect(w->err, 0)) {
            char where[48];
            char m[PM_ERROR_CAPACITY];
            __builtin_snprintf(m, sizeof m, "%s (threadgroup %s)", w->msg, gpos_str(&g, where));
            __builtin_snprintf(w->msg, sizeof w->msg, "%s", m);
            return finish_error(w, st);
        }
    }
    w->mode = _PmModeNone;
    return 0;
}

// A barrier / SIMD-group call outside fibers. Fine in a one-thread group.
__attribute__((noinline)) inline void loop_mode_call(worker *w, const char *what, site s) {
    if (!w || w->mode != _PmModeLoop || w->nthreads <= 1) return;
    set_error(w,
              "internal error: %s (line %u) called in a kernel compiled to run its threads as a plain loop "
              "(PM_KERNEL_LOOP) with %u threads per threadgroup",
              what, s.line, w->nthreads);
}

} // namespace pm::rt

#pragma GCC visibility pop
