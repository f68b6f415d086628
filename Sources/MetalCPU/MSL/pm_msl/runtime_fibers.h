// FIBERS mode: each thread of a group is a fiber (pm_msl/runtime.h).
#pragma once
#include "pm_msl/runtime_common.h"

#pragma GCC visibility push(hidden)

namespace pm::rt {

// ---------------------------------------------------------------------------
// FIBERS mode: scheduling
// ---------------------------------------------------------------------------
// The run queue (FIFO; yield_to_siblings also puts threads at the front).
PM_AI void push(worker *w, uint32_t i) { w->queue[w->q_tail++ & (PM_FIBER_MAX - 1)] = i; }
PM_AI void push_front(worker *w, uint32_t i) { w->queue[--w->q_head & (PM_FIBER_MAX - 1)] = i; }
PM_AI uint32_t pop(worker *w) { return w->queue[w->q_head++ & (PM_FIBER_MAX - 1)]; }
// The parked lanes of simdgroup `sgi` run next, in lane order. (Out of line:
// it is rare outside yield_point, and block() stays small enough to inline.)
__attribute__((noinline)) inline void unpark(worker *w, simd_slot &s, uint32_t sgi) {
    for (uint32_t m = s.parked; m; m &= ~(0x80000000u >> __builtin_clz(m)))
        push_front(w, sgi * PM_SIMD_WIDTH + 31u - (uint32_t)__builtin_clz(m));
    s.parked = 0;
}

// Execution contexts: a stack and a saved stack pointer. MSL threads get one
// when they start and give it back when they return, so a group whose threads
// never block runs them all back to back on one context, and contexts are
// reused most-recently-freed first (their stack tops are hot in the caches).
void ctx_entry(void *arg);

// A context for a thread that has not started yet, ready to run it.
PM_AI uint32_t take_ctx(worker *w) {
    uint32_t c;
    if (w->nfree) c = w->free_ctx[--w->nfree];
    else c = w->nctx++; // stacks for it were reserved by run_fibers
    w->ctx_sp[c] = fiber::prepare(w->stacks.top(c), &ctx_entry, w);
    return c;
}

// The calling MSL thread when it runs as a fiber (w null otherwise): from its
// stack (fiber::here), else from the thread-local worker.
struct fiber_self {
    worker *w;
    uint32_t index; // of the MSL thread in its group
};
PM_AI fiber_self self() {
    if (const fiber::slot_header *h = fiber::here()) return {(worker *)h->owner, h->index};
    worker *w = tls_w;
    if (w && w->mode == _PmModeFibers) return {w, w->cur};
    return {nullptr, 0};
}

// Thread `i` starts on context `c` (see fiber::here).
PM_AI void start_on(worker *w, fiber_state &f, uint32_t c, uint32_t i) {
    f.ctx = (uint16_t)c;
    w->stacks.header(c) = fiber::slot_header{w, i};
}

// Switches from context `from` (saving into *save) to thread `next`.
PM_AI void switch_to(worker *w, void **save, uint32_t next) {
    fiber_state &n = w->fibers[next];
    if (n.state == _PmFiberNew) start_on(w, n, take_ctx(w), next);
    n.state = _PmFiberReady;
    w->cur = next;
    fiber::pm_swap(save, w->ctx_sp[n.ctx]);
}

// Gives up the OS thread: runs the next runnable thread, or returns to run()
// when none is left. Returns when this thread is resumed.
// Lanes parked in a loop wait only while a sibling runs: they go first now.
PM_AI void block(worker *w) {
    uint32_t self = w->cur;
    simd_slot &s = w->sg[self / PM_SIMD_WIDTH];
    if (__builtin_expect(s.parked != 0, 0)) unpark(w, s, self / PM_SIMD_WIDTH);
    void **save = &w->ctx_sp[w->fibers[self].ctx];
    if (w->q_head == w->q_tail) { // nothing runnable: run() releases a barrier (carry_barrier) or diagnoses
        fiber::pm_swap(save, w->main_sp);
        return; // resumed by run() after carry_barrier
    }
    switch_to(w, save, pop(w));
}

// Leaves the group's contexts for good (error): back to run().
[[noreturn]] inline void abort_group(worker *w) {
    fiber::pm_swap(&w->dead_sp, w->main_sp);
    __builtin_trap();
}

// All active lanes of `s` arrived: compute, wake the others (lane order).
inline void complete_simd(worker *w, simd_slot &s, uint32_t sgi, uint32_t self_lane) {
    s.key.op(s);
    uint32_t m = s.arrived_mask;
    s.arrived_mask = 0;
    if (self_lane < PM_SIMD_WIDTH) m &= ~(1u << self_lane);
    while (m) {
        uint32_t lane = __builtin_ctz(m);
        m &= m - 1;
        uint32_t f = sgi * PM_SIMD_WIDTH + lane;
        w->fibers[f].state = _PmFiberReady;
        push(w, f);
    }
}

// A barrier that can never release because thread `gone` returned.
[[noreturn]] inline void returned_early(worker *w, uint32_t gone) {
    char where[48];
    uint32_t waiting = PM_FIBER_MAX;
    for (uint32_t j = 0; j < w->nthreads; j++)
        if (w->fibers[j].state == _PmFiberBarrier) {
            waiting = j;
            break;
        }
    if (waiting < PM_FIBER_MAX)
        set_error(w,
                  "barrier divergence: threadgroup_barrier not reached by all threads of threadgroup %s: thread %u returned early "
                  "while thread %u waits at threadgroup_barrier (line %u:%u)",
                  gpos_str(w->g, where), gone, waiting, w->fibers[waiting].line, w->fibers[waiting].col);
    else
        set_error(w, "barrier divergence: threadgroup_barrier not reached by all threads of threadgroup %s: thread %u returned early",
                  gpos_str(w->g, where), gone);
    abort_group(w);
}

// The threads waiting at the threadgroup barrier go on, in thread order; `except`
// (the thread that completed it and goes on itself) is not queued.
inline void release_barrier(worker *w, uint32_t except) {
    const uint32_t n = w->nthreads;
    w->bar_arrived = 0;
    for (uint32_t j = 0; j < n; j++) {
        if (j == except || w->fibers[j].state != _PmFiberBarrier) continue;
        w->fibers[j].state = _PmFiberReady;
        push(w, j);
    }
    for (uint32_t k = 0, nsg = (n + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH; k < nsg; k++) w->sg[k].bar_waiting = 0;
}

// Thread i finished: it leaves its simdgroup's active lanes, and counts as
// arrived at the pending threadgroup barrier and later ones (gpu_barriers).
PM_AI void thread_done(worker *w, uint32_t i) {
    w->fibers[i].state = _PmFiberDone;
    if (w->done++ == 0) w->first_done = i;
    uint32_t sgi = i / PM_SIMD_WIDTH, lane = i % PM_SIMD_WIDTH;
    simd_slot &s = w->sg[sgi];
    s.active_mask &= ~(1u << lane);
    if (__builtin_expect(w->bar_arrived != 0, 0)) {
        if (!gpu_barriers) returned_early(w, i);
        if (w->bar_arrived == w->nthreads - w->done) release_barrier(w, PM_FIBER_MAX);
    }
    if (__builtin_expect(s.arrived_mask != 0, 0) && s.arrived_mask == s.active_mask)
        complete_simd(w, s, sgi, PM_SIMD_WIDTH);
}

// The code of every context: runs threads until one blocks; after a thread
// returns, runs the next new thread right here, or frees the context and
// switches to the next resumed thread, or returns to run() when none is left.
inline void ctx_entry(void *arg) {
    worker *w = (worker *)arg;
    for (;;) {
        uint32_t i = w->cur;
        uint32_t c = w->fibers[i].ctx;
        w->body(w, i);
        thread_done(w, i);
        simd_slot &s = w->sg[i / PM_SIMD_WIDTH];
        if (s.parked) unpark(w, s, i / PM_SIMD_WIDTH);
        if (w->q_head == w->q_tail) {
            w->free_ctx[w->nfree++] = (uint16_t)c;
            fiber::pm_swap(&w->dead_sp, w->main_sp);
            __builtin_trap();
        }
        uint32_t next = pop(w);
        fiber_state &n = w->fibers[next];
        if (n.state == _PmFiberNew) { // start it on this context
            start_on(w, n, c, next);
            n.state = _PmFiberReady;
            w->cur = next;
            continue;
        }
        w->free_ctx[w->nfree++] = (uint16_t)c;
        w->cur = next;
        fiber::pm_swap(&w->dead_sp, w->ctx_sp[n.ctx]);
        __builtin_trap();
    }
}

template <class _PmInv> inline void fiber_body(worker *w, uint32_t i) {
    const group &g = *w->g;
    uint32_t ax = g.size.x, ay = g.size.y;
    tpos t;
    if (g.size.y == 1 && g.size.z == 1) t = tpos{i, 0, 0, i};
    else t = tpos{i % ax, (i / ax) % ay, i / (ax * ay), i};
    _PmInv::call(g, t);
}

inline const char *simd_name(const simd_key &k) { return k.name ? k.name : "a SIMD-group function"; }

// Lane `lane` of simdgroup `sgi` waits at a SIMD-group function while another
// active lane waits at a threadgroup barrier: neither can ever proceed.
[[noreturn]] inline void divergent_barrier(worker *w, uint32_t sgi, const simd_slot &s) {
    uint32_t wl = __builtin_ctz(s.arrived_mask);
    uint32_t bl = PM_SIMD_WIDTH;
    for (uint32_t m = s.active_mask & ~s.arrived_mask; m; m &= m - 1) {
        uint32_t l = __builtin_ctz(m);
        if (w->fibers[sgi * PM_SIMD_WIDTH + l].state == _PmFiberBarrier) {
            bl = l;
            break;
        }
    }
    char where[48];
    if (bl < PM_SIMD_WIDTH) {
        const fiber_state &b = w->fibers[sgi * PM_SIMD_WIDTH + bl];
        set_error(w,
                  "barrier divergence: divergent control flow: in simdgroup %u of threadgroup %s, thread %u waits at %s "
                  "(line %u:%u) while thread %u waits at threadgroup_barrier (line %u:%u)",
                  sgi, gpos_str(w->g, where), sgi * PM_SIMD_WIDTH + wl, simd_name(s.key), s.key.line, s.key.col,
                  sgi * PM_SIMD_WIDTH + bl, b.line, b.col);
    } else {
        set_error(w, "divergent control flow: in simdgroup %u of threadgroup %s, %s (line %u:%u) is not reached by all "
                  "active threads", sgi, gpos_str(w->g, where), simd_name(s.key), s.key.line, s.key.col);
    }
    abort_group(w);
}

// Thread i reaches the threadgroup_barrier at s while others wait at another one.
[[noreturn]] inline void different_barriers(worker *w, uint32_t i, site s) {
    char where[48];
    uint32_t waiting = 0;
    while (waiting < w->nthreads && (waiting == i || w->fibers[waiting].state != _PmFiberBarrier)) waiting++;
    set_error(w,
              "barrier divergence: divergent control flow: in threadgroup %s, thread %u reaches threadgroup_barrier "
              "(line %u:%u) while thread %u waits at another threadgroup_barrier (line %u:%u)",
              gpos_str(w->g, where), i, s.line, s.col, waiting, w->bar_site.line, w->bar_site.col);
    abort_group(w);
}

// The deadlock that remains when no fiber can run and not all have returned.
inline void diagnose(worker *w) {
    char where[48];
    uint32_t nsg = (w->nthreads + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH;
    for (uint32_t sgi = 0; sgi < nsg; sgi++) {
        simd_slot &s = w->sg[sgi];
        if (s.arrived_mask && s.arrived_mask != s.active_mask) {
            uint32_t missing = __builtin_ctz(s.active_mask & ~s.arrived_mask);
            const fiber_state &f = w->fibers[sgi * PM_SIMD_WIDTH + missing];
            set_error(w,
                      "divergent control flow: in simdgroup %u of threadgroup %s, thread %u waits at %s (line %u:%u) "
                      "while thread %u waits at %s (line %u:%u)",
                      sgi, gpos_str(w->g, where), sgi * PM_SIMD_WIDTH + __builtin_ctz(s.arrived_mask),
                      simd_name(s.key), s.key.line, s.key.col, sgi * PM_SIMD_WIDTH + missing,
                      f.state == _PmFiberBarrier ? "threadgroup_barrier" : "another synchronisation point", f.line,
                      f.col);
            return;
        }
    }
    if (!gpu_barriers && w->bar_arrived && w->done) {
        set_error(w, "barrier divergence: threadgroup_barrier not reached by all threads of threadgroup %s: thread %u returned early",
                  gpos_str(w->g, where), w->first_done);
        return;
    }
    set_error(w, "deadlock in threadgroup %s: %u of %u threads wait and none can run", gpos_str(w->g, where),
              w->nthreads - w->done, w->nthreads);
}

// No thread can run and a threadgroup barrier is pending. On a GPU the lanes
// of a simdgroup that took another path wait for its lanes at the barrier
// where the paths meet again (MLX's gemv_t: lanes past the output skip the
// loop whose steps end at a barrier, and wait at the simd_shuffle_down after
// it). A lane blocked at a SIMD-group function whose simdgroup has lanes at the
// barrier is such a lane: when every live thread is at the barrier or is one,
// the barrier releases. True when threads can run again.
inline bool carry_barrier(worker *w) {
    if (!gpu_barriers || w->bar_arrived == 0) return false;
    for (uint32_t j = 0; j < w->nthreads; j++) {
        const uint8_t st = w->fibers[j].state;
        if (st == _PmFiberDone || st == _PmFiberBarrier) continue;
        if (st == _PmFiberSimd && w->sg[j / PM_SIMD_WIDTH].bar_waiting) continue;
        return false;
    }
    release_barrier(w, PM_FIBER_MAX);
    return w->q_head != w->q_tail;
}

// The simdgroups of a group of n threads, before it runs: every lane that exists active, nothing pending.
inline void start_simdgroups(worker *w, uint32_t n) {
    for (uint32_t s = 0; s < (n + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH; s++) {
        uint32_t lanes = n - s * PM_SIMD_WIDTH;
        if (lanes > PM_SIMD_WIDTH) lanes = PM_SIMD_WIDTH;
        simd_slot &sl = w->sg[s];
        sl.nlanes = lanes;
        sl.active_mask = lanes == 32 ? 0xFFFFFFFFu : ((1u << lanes) - 1u);
        sl.arrived_mask = 0;
        sl.bar_waiting = 0;
        sl.parked = 0;
        sl.ls_skipped = false;
    }
}

// A group larger than the runtime's per-group state (Metal's limit is 1024 too).
inline int32_t too_many_threads(worker *w, const group &g, pm_status *st) {
    char where[48];
    set_error(w, "threadgroup %s has %u threads, more than the %u supported", gpos_str(&g, where), g.nthreads,
              PM_FIBER_MAX);
    return finish_error(w, st);
}

template <class _PmInv>
inline int32_t run_fibers(worker *w, uint64_t first, uint64_t end, group g, pm_status *st) {
    w->mode = _PmModeFibers;
    w->g = &g;
    w->body = &fiber_body<_PmInv>;
    for (uint64_t gi = first; gi < end; gi++) {
        if (!place_group(g, gi)) continue;
        const uint32_t n = g.nthreads;
        if (n > PM_FIBER_MAX) return too_many_threads(w, g, st);
        if (!w->stacks.reserve(n)) {
            set_error(w, "cannot allocate stacks for %u fibers (mmap failed)", n);
            return finish_error(w, st);
        }
        start_group_memory(w, g);
        w->nthreads = n;
        w->done = 0;
        w->bar_arrived = 0;
        if (w->nfree != w->nctx) { // contexts abandoned by an error: all free again
            w->nfree = w->nctx;
            for (uint32_t c = 0; c < w->nctx; c++) w->free_ctx[c] = (uint16_t)(w->nctx - 1 - c);
        }
        for (uint32_t i = 0; i < n; i++) {
            w->fibers[i].state = _PmFiberNew;
            w->queue[i] = i;
        }
        start_simdgroups(w, n);
        w->q_head = 1;
        w->q_tail = n;
        switch_to(w, &w->main_sp, 0);
        // back here when the group finished, failed or no thread can run
        while (!w->err && w->done != n && carry_barrier(w)) switch_to(w, &w->main_sp, pop(w));
#ifdef PM_VALIDATION
        vgroup_end(w);
#endif
        if (!w->err && w->done != n) diagnose(w);
        if (w->err) return finish_error(w, st);
    }
    w->mode = _PmModeNone;
    return 0;
}

} // namespace pm::rt

#pragma GCC visibility pop
