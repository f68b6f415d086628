// LOCKSTEP mode: one call runs the whole group, statement by statement (pm_msl/runtime.h).
#pragma once
#include "pm_msl/runtime_common.h"

#pragma GCC visibility push(hidden)

namespace pm::rt {

// ---------------------------------------------------------------------------
// LOCKSTEP mode
// ---------------------------------------------------------------------------
// The front end (Lockstep.swift) rewrote the kernel so that one call runs the
// whole group: each statement of the kernel's body is a loop over the group's
// threads (x innermost, as on a GPU), a thread's locals that outlive a
// statement live in arrays indexed by the thread, and a grid-stride loop runs
// step by step across the threads, so neighbouring threads read neighbouring
// addresses at the same time and the compiler vectorises over threads.
// A statement calling a SIMD-group function runs twice: the first pass
// collects every active lane's operands (the call returns a placeholder), the
// rendezvous computes the results, the second pass hands them out. Barriers
// are the boundaries between statements.
inline constexpr uint32_t ls_arena_bytes = 512u * PM_FIBER_MAX + 64u * 1024u;
template <class _PmInv>
inline int32_t run_lockstep(worker *w, uint64_t first, uint64_t end, group g, pm_status *st) {
    // The per-thread locals live on the stack that the host gives kernel code
    // (8 MiB between guards: pm_host.h), not in the worker: a write past the
    // end of one then meets the guard above that stack, a fault the host
    // reports, rather than the worker's state after it. Pages are touched only when used.
    alignas(64) unsigned char arena[ls_arena_bytes];
    w->ls_arena = arena;
    w->mode = _PmModeLockstep;
    w->g = &g;
    for (uint64_t gi = first; gi < end; gi++) {
        if (!place_group(g, gi)) continue;
        const uint32_t n = g.nthreads;
        if (n > PM_FIBER_MAX) return too_many_threads(w, g, st);
        start_group_memory(w, g);
        w->nthreads = n;
        w->ls_deliver = false;
        w->ls_skipped = false;
        w->ls_used = 0;
        start_simdgroups(w, n);
        _PmInv::call(g, tpos{0, 0, 0, 0});
        if (__builtin_expect(w->err, 0)) return finish_error(w, st);
    }
    w->mode = _PmModeNone;
    return 0;
}

// What the rewritten kernel calls (see Lockstep.swift for the code around them).
inline constexpr uint32_t ls_max = PM_FIBER_MAX;
// The group being run, as a local copy: the compiler then knows that stores
// through the kernel's pointers do not change it.
PM_AI group ls_group() { return *tls_w->g; }
// A per-thread array of `bytes` a thread for the running group, from the worker's arena
// (for whole simdgroups: a row-major simdgroup matrix uses all 32 lanes' slots).
inline void *ls_alloc(worker *w, uint32_t bytes) {
    const uint32_t need = (bytes * ((w->nthreads + 31u) & ~31u) + 31u) & ~31u;
    if (w->ls_used + need > ls_arena_bytes) { // the front end's bound makes this unreachable
        set_error(w, "internal error: the kernel's per-thread locals exceed %u bytes", ls_arena_bytes);
        return w->ls_arena;
    }
    void *p = w->ls_arena + w->ls_used;
    w->ls_used += need;
    return p;
}
// Every thread of the group takes part (the outermost mask).
PM_AI void ls_all(bool *mask, const group &g) {
    for (uint32_t l = 0; l < ls_max; l++) mask[l] = l < g.nthreads;
}
// A position value of thread (x, y, z) = linear index l = 32 * sg + lane of the group
// (the lane and simdgroup given as such keep them affine for the vectoriser).
template <attr _PmA, class _PmP>
PM_AI _PmP ls_pos(const group &g, uint32_t x, uint32_t y, uint32_t z, uint32_t l, uint32_t lane, uint32_t sg) {
    if constexpr (_PmA == attr::thread_index_in_simdgroup) return from_scalar<_PmP>(lane);
    else if constexpr (_PmA == attr::simdgroup_index_in_threadgroup) return from_scalar<_PmP>(sg);
    else return arg<_PmP, bind<_PmA, 0>>::get(g, tpos{x, y, z, l});
}
// The threads of simdgroup `s` set in `mask`, as lane bits (the mask's bytes
// past the group's threads are false: ls_all).
PM_AI uint32_t ls_lanes(const bool *mask, uint32_t s) {
    typedef unsigned char _PmB32 __attribute__((ext_vector_type(32)));
    typedef bool _PmBits __attribute__((ext_vector_type(32)));
    _PmB32 bytes;
    __builtin_memcpy(&bytes, mask + s * PM_SIMD_WIDTH, sizeof bytes);
    return __builtin_bit_cast(uint32_t, __builtin_convertvector(bytes != 0, _PmBits));
}
PM_AI bool ls_full(const bool *mask, const group &g) {
    unsigned all = 1;
    for (uint32_t l = 0; l < g.nthreads; l++) all &= mask[l];
    return all != 0;
}
PM_AI bool ls_any(const bool *mask, const group &g) {
    unsigned any = 0;
    for (uint32_t l = 0; l < g.nthreads; l++) any |= mask[l];
    return any != 0;
}
// The two passes of a statement with a SIMD-group call.
PM_AI void ls_lane(worker *w, uint32_t l) { w->cur = l; }
inline void ls_collect(worker *w) { w->ls_deliver = false; }
// Every simdgroup whose lanes arrived computes its results; true after an error (the kernel returns).
inline bool ls_complete(worker *w) {
    if (w->err) return true;
    for (uint32_t s = 0; s < (w->nthreads + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH; s++) {
        simd_slot &sl = w->sg[s];
        if (sl.arrived_mask) sl.key.op(sl);
    }
    w->ls_deliver = true;
    return false;
}
// A threadgroup_barrier as Apple GPUs run it (runtime_common.h, gpu_barriers):
// lanes that returned count as arrived, live lanes of a simdgroup that has lanes
// here wait for them where the paths meet. A simdgroup none of whose live lanes
// comes here ran past the barrier: fine if it finishes (on a GPU it leaves the
// barrier's count), an error when it meets the others at a later barrier (the
// two would pair up), as fibers find it (different_barriers).
inline bool ls_group_barrier(worker *w, const bool *mask, const bool *alive, site s) {
    const group &g = *w->g;
    if (!w->ls_skipped && ls_full(mask, g)) return w->err != 0;
    if (!ls_any(mask, g)) return w->err != 0;
    for (uint32_t k = 0, nsg = (w->nthreads + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH; k < nsg; k++) {
        simd_slot &sl = w->sg[k];
        const uint32_t here = ls_lanes(mask, k);
        if (here && sl.ls_skipped) {
            char where[48];
            set_error(w, "barrier divergence: divergent control flow: in threadgroup %s, thread %u reaches threadgroup_barrier "
                         "(line %u:%u) after its simdgroup ran past the threadgroup_barrier (line %u:%u) the other simdgroups "
                         "waited at", gpos_str(w->g, where), k * PM_SIMD_WIDTH + __builtin_ctz(here), s.line, s.col,
                      w->bar_site.line, w->bar_site.col);
            return true;
        }
        if (!here && ls_lanes(alive, k)) {
            if (!w->ls_skipped) w->bar_site = s; // the first barrier run past, for the error above
            sl.ls_skipped = w->ls_skipped = true;
        }
    }
    return w->err != 0;
}

// A barrier reached by the threads in `mask` (`alive`: those that have not
// returned). A threadgroup_barrier: ls_group_barrier, under PM_VALIDATION every
// thread; a simdgroup_barrier every live thread of a simdgroup that reaches it;
// else the error fibers report too. True after an error (the kernel returns).
inline bool ls_barrier(worker *w, const bool *mask, const bool *alive, bool threadgroup, site s = site()) {
    if (gpu_barriers && threadgroup) return ls_group_barrier(w, mask, alive, s);
    if (ls_full(mask, *w->g)) return w->err != 0;
    const uint32_t n = w->nthreads;
    for (uint32_t l = 0; l < n; l++) {
        if (mask[l]) continue;
        uint32_t waiting = n;
        const uint32_t from = threadgroup ? 0 : l / PM_SIMD_WIDTH * PM_SIMD_WIDTH;
        const uint32_t to = threadgroup ? n : (from + PM_SIMD_WIDTH < n ? from + PM_SIMD_WIDTH : n);
        for (uint32_t j = from; j < to && waiting == n; j++)
            if (mask[j]) waiting = j;
        if (waiting == n || (!threadgroup && !alive[l])) continue; // nobody of its simdgroup waits / it returned
        const char *name = threadgroup ? "threadgroup_barrier" : "simdgroup_barrier";
        char where[48];
        if (!alive[l])
            set_error(w, "barrier divergence: %s not reached by all threads of threadgroup %s: thread %u returned early while thread %u "
                         "waits at %s (line %u:%u)", name, gpos_str(w->g, where), l, waiting, name, s.line, s.col);
        else
            set_error(w, "barrier divergence: divergent control flow: in threadgroup %s, thread %u waits at %s (line %u:%u) while thread "
                         "%u takes another path", gpos_str(w->g, where), waiting, name, s.line, s.col, l);
        return true;
    }
    return w->err != 0;
}
inline void ls_done(worker *w) {
    for (uint32_t s = 0; s < (w->nthreads + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH; s++) w->sg[s].arrived_mask = 0;
    w->ls_deliver = false;
}
// Thread i calls `name` at s while other lanes of its simdgroup wait at another SIMD-group call.
inline void divergent_simd(worker *w, const simd_slot &sl, uint32_t i, const char *name, site s) {
    char where[48];
    const uint32_t sgi = i / PM_SIMD_WIDTH;
    set_error(w,
              "divergent control flow: in simdgroup %u of threadgroup %s, thread %u calls %s (line %u:%u) while "
              "thread %u waits at %s (line %u:%u)",
              sgi, gpos_str(w->g, where), i, name, s.line, s.col,
              sgi * PM_SIMD_WIDTH + __builtin_ctz(sl.arrived_mask), simd_name(sl.key), sl.key.line, sl.key.col);
}

// simd_arrive in LOCKSTEP mode: lane w->cur's operands (first pass) or its result (second pass).
__attribute__((noinline)) inline const void *ls_arrive(worker *w, const void *a, const void *b, uint32_t param,
                                                       simd_compute_fn op, const char *name, site s, bool any_site) {
    const uint32_t i = w->cur, sgi = i / PM_SIMD_WIDTH, lane = i % PM_SIMD_WIDTH;
    simd_slot &sl = w->sg[sgi];
    if (w->ls_deliver) return sl.out[lane];
    if (sl.arrived_mask == 0) {
        sl.key = simd_key{s.file, s.line, s.col, op, name};
    } else if (sl.key.op != op ||
               (!any_site && (sl.key.line != s.line || sl.key.col != s.col || sl.key.file != s.file))) {
        divergent_simd(w, sl, i, name, s);
    }
    __builtin_memcpy(sl.in[lane], a, 32);
    if (b) __builtin_memcpy(sl.in[lane] + 32, b, 32);
    sl.param[lane] = param;
    sl.arrived_mask |= 1u << lane;
    alignas(32) static const unsigned char placeholder[32] = {};
    return placeholder;
}

} // namespace pm::rt

#pragma GCC visibility pop
