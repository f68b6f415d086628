// Synchronisation as kernels call it in every mode: threadgroup barriers,
// SIMD-group rendezvous, loop yield points (pm_msl/runtime.h).
#pragma once
#include "pm_msl/runtime_loop.h"
#include "pm_msl/runtime_fibers.h"
#include "pm_msl/runtime_lockstep.h"

#pragma GCC visibility push(hidden)

// ---------------------------------------------------------------------------
// Barriers
// ---------------------------------------------------------------------------
namespace pm::rt {
__attribute__((noinline)) inline void tg_barrier(site s) {
    const fiber_self me = self();
    worker *w = me.w;
    if (!w) return loop_mode_call(tls_w, "threadgroup_barrier", s);
    const uint32_t i = me.index;
    const uint32_t sgi = i / PM_SIMD_WIDTH;
    simd_slot &sl = w->sg[sgi];
    fiber_state &f = w->fibers[i];
    f.line = s.line;
    f.col = s.col;
    f.state = _PmFiberBarrier;
    if (!gpu_barriers && w->done) returned_early(w, w->first_done);
    if (!gpu_barriers && sl.arrived_mask) divergent_barrier(w, sgi, sl); // else carried (carry_barrier)
    // One barrier releases the group: threads waiting at different
    // threadgroup_barrier calls (an if / else with one in each branch) would
    // never meet on a GPU. LOCKSTEP mode (ls_barrier) finds this by its masks.
    if (w->bar_arrived == 0) w->bar_site = s;
    else if (s.line != w->bar_site.line || s.col != w->bar_site.col ||
             (s.file != w->bar_site.file && __builtin_strcmp(s.file, w->bar_site.file) != 0))
        different_barriers(w, i, s);
    if (++w->bar_arrived == w->nthreads - w->done) { // the threads that returned count as arrived
        release_barrier(w, i); // the others run again in thread order, this one goes on
#ifdef PM_VALIDATION
        vbarrier(w);
#endif
        f.state = _PmFiberReady;
        return;
    }
    sl.bar_waiting++;
    block(w);
}

// Arrival at a SIMD-group rendezvous. `a`/`b` are the operands, 32 bytes
// each (copied into the slot; fixed sizes keep the copies inline), `param`
// the lane / delta / mask argument. Returns the lane's result slot (valid
// until this lane's next SIMD-group call).
// any_site: every call site matches (simdgroup_barrier, like threadgroup_barrier).
__attribute__((noinline)) inline const void *simd_arrive(const void *a, const void *b, uint32_t param,
                                                         simd_compute_fn op, const char *name, site s,
                                                         bool any_site = false) {
    const fiber_self me = self();
    worker *w = me.w;
    if (!w) {
        w = tls_w;
        if (w && w->mode == _PmModeLockstep) return ls_arrive(w, a, b, param, op, name, s, any_site);
        // Not running as fibers: a lone lane 0 (an error if the group has more threads).
        loop_mode_call(w, name, s);
        static thread_local simd_slot lone;
        simd_slot &sl = w ? w->sg[0] : lone;
        sl.active_mask = sl.arrived_mask = 1u;
        sl.nlanes = 1;
        __builtin_memcpy(sl.in[0], a, 32);
        if (b) __builtin_memcpy(sl.in[0] + 32, b, 32);
        sl.param[0] = param;
        op(sl);
        return sl.out[0];
    }
    const uint32_t i = me.index, sgi = i / PM_SIMD_WIDTH, lane = i % PM_SIMD_WIDTH;
    simd_slot &sl = w->sg[sgi];
    if (sl.arrived_mask == 0) {
        sl.key = simd_key{s.file, s.line, s.col, op, name};
        if (!gpu_barriers && sl.bar_waiting) { // else the barrier carries this lane (carry_barrier)
            sl.arrived_mask = 1u << lane;
            divergent_barrier(w, sgi, sl);
        }
    } else if (sl.key.op != op ||
               (!any_site && (sl.key.line != s.line || sl.key.col != s.col || sl.key.file != s.file))) {
        divergent_simd(w, sl, i, name, s);
        abort_group(w);
    }
    __builtin_memcpy(sl.in[lane], a, 32);
    if (b) __builtin_memcpy(sl.in[lane] + 32, b, 32);
    sl.param[lane] = param;
    sl.arrived_mask |= 1u << lane;
    if (sl.arrived_mask == sl.active_mask) {
#ifdef PM_VALIDATION
        if (any_site) vbarrier(w); // simdgroup_barrier: an ordering the race check respects (see vbarrier)
#endif
        complete_simd(w, sl, sgi, lane);
    } else {
        w->fibers[i].state = _PmFiberSimd;
        block(w);
    }
    return sl.out[lane];
}

// Loop yield points. On a GPU the lanes of a simdgroup step through a
// grid-stride loop together, so neighbouring threads read neighbouring
// addresses at the same time; fibers that each ran a whole loop alone would
// turn that into one strided scan per thread (each cache line fetched again
// by every lane that reads part of it). The front end therefore gives the
// strided loops of code reachable from a FIBERS kernel a counter of their
// own and calls tick() at each back edge (FrontEnd.swift, addYieldPoints):
// every PM_YIELD_EVERY iterations the lane lets the other lanes of its
// simdgroup run, which then run in lane order, each for a turn of as many
// iterations; the lanes cycle like this until they leave the loop, and lane
// i + 1 finds in the cache the lines lane i just fetched. Cycling within a
// simdgroup (not through the whole group) keeps the stack tops of 32 fibers
// in the L1 cache: a switch costs half as much as one through 1024 threads.
// Yielding only changes which runnable thread runs next, and any interleaving
// is valid for concurrent threads.
// PM_YIELD_EVERY (a macro a kernel library can be compiled with): 8 measured
// best for one-float-per-step loops over power-of-two grids (more lines per
// turn than the L1 cache's 8 ways), larger only repays for heavy iterations.
#ifndef PM_YIELD_EVERY
#define PM_YIELD_EVERY 8u
#endif
inline constexpr unsigned yield_every = PM_YIELD_EVERY; // what the front end's counters start at

// Lets the other runnable lanes of thread `self`'s simdgroup run first.
// While the next thread in the run queue is a sibling, a yielding lane parks
// (leaves the queue) and that sibling runs; otherwise the turn is over and the
// parked lanes go back to the front of the queue in lane order, the yielding
// one among them. block() and a returning thread unpark too, so parked lanes
// never wait on a lane that waits elsewhere. Returns false at once when no
// sibling is next or parked (then no sibling can run before this lane
// reaches a barrier or returns, in the order threads are queued).
inline bool yield_to_siblings(worker *w, uint32_t self) {
    const uint32_t sgi = self / PM_SIMD_WIDTH;
    simd_slot &s = w->sg[sgi];
    const bool sibling_next = w->q_head != w->q_tail &&
                              w->queue[w->q_head & (PM_FIBER_MAX - 1)] / PM_SIMD_WIDTH == sgi;
    if (!sibling_next && !s.parked) return false;
    s.parked |= 1u << (self % PM_SIMD_WIDTH);
    if (!sibling_next) unpark(w, s, sgi);
    const uint32_t next = pop(w);
    if (next != self) switch_to(w, &w->ctx_sp[w->fibers[self].ctx], next);
    return true;
}

// One loop's yield state; `once` drives the one-pass wrapper loop that
// declares it (see FrontEnd.swift). The worker is looked up at the first
// yield of the loop only.
struct yield_result {
    unsigned count; // iterations until the next yield_point call
    worker *w;
};
struct loop_yield {
    unsigned count = yield_every;
    bool once = true;
    worker *w = nullptr;
};
// Returns a huge count when yielding is pointless: not running as fibers
// (a function a LOOP kernel shares), or no sibling can run before this lane
// reaches a barrier.
__attribute__((noinline)) inline yield_result yield_point(worker *w) {
    if (!w) {
        w = self().w;
        if (!w) return {0xFFFFFFFFu, nullptr};
    }
    return {yield_to_siblings(w, w->cur) ? yield_every : 0xFFFFFFFFu, w};
}
constexpr PM_AI void tick(loop_yield &y) {
    if (__builtin_is_constant_evaluated()) return;
    if (__builtin_expect(--y.count == 0, 0)) {
        yield_result r = yield_point(y.w);
        y.count = r.count;
        y.w = r.w;
    }
}

// The calling thread's lane in its simdgroup (0 outside fibers and lockstep).
PM_AI uint32_t current_lane() {
    if (const fiber_self me = self(); me.w) return me.index % PM_SIMD_WIDTH; // a fiber: from its stack
    const worker *w = tls_w;
    return w && w->mode == _PmModeLockstep ? w->cur % PM_SIMD_WIDTH : 0;
}
} // namespace pm::rt

namespace metal {
inline void threadgroup_barrier(mem_flags, ::pm::rt::site s = ::pm::rt::site()) { ::pm::rt::tg_barrier(s); }
} // namespace metal

#pragma GCC visibility pop
