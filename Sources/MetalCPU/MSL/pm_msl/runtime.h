// The kernel execution runtime of MSL on the CPU (see README.md here).
//
//   pm::rt::run<&kernel, Mode, bind<...>...>   the pm_run_fn of one kernel
//   pm::rt::tg_var<U, SITE>()                   a kernel-scope threadgroup variable
//   pm::rt::kernel_entry, pm::rt::library()     the generated pm_cpu_library
//   metal::threadgroup_barrier, simdgroup_barrier
//
// Execution model. All threads of one threadgroup run on the OS thread that
// calls run() for that group; groups run in parallel on several OS threads, so
// every piece of mutable runtime state is per OS thread (struct worker).
//
// - PM_KERNEL_LOOP: the threads of a group are a plain loop (x innermost) that
//   calls the kernel inlined; nothing per thread but the position values.
// - PM_KERNEL_FIBERS: each thread of the group is a fiber (pm_msl/fiber.h) on
//   the calling OS thread. A fiber runs until it returns, blocks at a
//   barrier / SIMD-group function, or yields in a strided loop (see
//   yield_point); the next runnable fiber (FIFO) then runs.
//   A threadgroup_barrier releases when all threads of the group arrived. A
//   SIMD-group function is a rendezvous of the simdgroup's *active* lanes
//   (lanes that exist and have not returned); the last lane to arrive computes
//   every lane's result once (in lane order, so results are deterministic and
//   uniform where MSL says so) and the others resume with it.
//
// Errors are reported, never hung on: a barrier that some threads can never
// reach (a thread returned), lanes of one simdgroup waiting at different SIMD
// call sites, or at a SIMD function and a barrier, any other deadlock, a
// barrier / SIMD call in a kernel compiled for LOOP mode with more than one
// thread per group, too much threadgroup memory. run() then returns non-zero
// with pm_status filled; the fibers of the failing group are abandoned.
//
// No libc header is included (only <stdint.h> / <stddef.h>): <stdlib.h>,
// <stdio.h>, <string.h> would put abs, div, rand, index, select, ... into the
// global namespace of every kernel, where they would take part in overload
// resolution against MSL's metal::abs etc. Formatting, copying and allocation
// use clang builtins (calls to the libc functions, without their
// declarations); mmap & co. are declared in pm::rt::sys (fiber.h).
// Template parameters and other names that a user's macro could replace
// (clang -DN=4, -DT=float, ...) are reserved-style (_PmT, _PmN, ...).
#pragma once
#include <stdint.h>
#include <stddef.h>
#include "pm_kernel_abi.h"
#include "pm_msl/types.h"
#include "pm_msl/fiber.h"

// Thread identity for make_worker (see there): raw system calls (gettid and
// tgkill have libc wrappers only since glibc 2.30), bound to libc's syscall()
// by an asm label as fiber.h's are; declared before the visibility push.
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
namespace pm::rt::sys {
long syscall(long, ...) noexcept __asm__("syscall");
int *errno_location() noexcept __asm__("__errno_location");
#if defined(__x86_64__)
inline constexpr long nr_getpid = 39, nr_gettid = 186, nr_tgkill = 234;
#else
inline constexpr long nr_getpid = 172, nr_gettid = 178, nr_tgkill = 131;
#endif
static inline int gettid() { return (int)syscall(nr_gettid); }
// Whether thread `tid` of this process may still exist: only "no such thread"
// (ESRCH) says it is gone; a reused id or a refused call counts as alive.
static inline bool thread_alive(int tid) {
    return syscall(nr_tgkill, syscall(nr_getpid), (long)tid, 0L) == 0 || *errno_location() != 3;
}
} // namespace pm::rt::sys
#else
namespace pm::rt::sys {
static inline int gettid() { return 0; }
static inline bool thread_alive(int) { return true; } // never adopt: workers live until unload
} // namespace pm::rt::sys
#endif

#pragma GCC visibility push(hidden)

#define PM_MAX_TG_SITES 16384u // threadgroup declaration SITEs per library

namespace pm::rt {

// ---------------------------------------------------------------------------
// Binding descriptions used by the generated launchers
// ---------------------------------------------------------------------------
enum class attr : uint32_t {
    buffer,
    threadgroup,
    thread_position_in_grid,
    threads_per_grid,
    thread_position_in_threadgroup,
    threads_per_threadgroup,
    threadgroup_position_in_grid,
    threadgroups_per_grid,
    thread_index_in_threadgroup,
    thread_index_in_simdgroup,
    simdgroup_index_in_threadgroup,
    threads_per_simdgroup,
    simdgroups_per_threadgroup,
    thread_index_in_quadgroup,
    quadgroup_index_in_threadgroup,
    quadgroups_per_threadgroup,
    dispatch_threads_per_threadgroup,
};
template <attr _PmA, unsigned _PmN> struct bind {};

struct kernel_entry {
    const char *name;
    pm_run_fn run;
    uint32_t mode;              // PM_KERNEL_LOOP / PM_KERNEL_FIBERS
    uint32_t max_total_threads; // 0: none declared
    const int *sites;           // threadgroup SITEs the kernel uses
    uint32_t nsites;
};

// A source location, captured by default arguments at the caller (SIMD-group
// calls are matched by call site). site() takes only defaults.
struct site_tag {};
struct site {
    const char *file;
    uint32_t line, col;
    constexpr site(site_tag = {}, const char *f = __builtin_FILE(), uint32_t l = __builtin_LINE(),
                   uint32_t c = __builtin_COLUMN())
        : file(f), line(l), col(c) {}
};

// ---------------------------------------------------------------------------
// Per-OS-thread state
// ---------------------------------------------------------------------------
struct u3 {
    uint32_t x, y, z;
};

// One threadgroup being run (lives on the OS thread's stack inside run()).
struct group {
    void *buf[PM_MAX_BUFFERS];
    unsigned char *tg_arg[PM_MAX_THREADGROUP_ARGS];
    u3 grid, tpg, ngroups; // threads_per_grid, dispatched threads_per_threadgroup, groups
    u3 gpos, size, origin; // this group: position, actual size, first thread's grid position
    uint32_t nthreads;     // size.x * size.y * size.z
    uint32_t tg_bytes;     // threadgroup memory used (static + [[threadgroup(n)]])
    uint32_t poison;
    uint32_t uniform;
#ifdef PM_VALIDATION
    uint64_t len[PM_MAX_BUFFERS];                // bytes bound at each [[buffer(n)]]
    uint32_t tg_len[PM_MAX_THREADGROUP_ARGS];    // bytes at each [[threadgroup(n)]]
#endif
};

// A thread inside its group.
struct tpos {
    uint32_t lx, ly, lz, index;
};

enum : uint32_t { _PmModeNone = 0, _PmModeLoop = 1, _PmModeFibers = 2, _PmModeLockstep = 3 };
// An MSL thread of the running group. _PmFiberNew: not started (no context yet).
enum : uint8_t { _PmFiberNew, _PmFiberReady, _PmFiberBarrier, _PmFiberSimd, _PmFiberDone };

struct fiber_state {
    uint16_t ctx;       // execution context (stack) it runs on, once started
    uint8_t state;
    uint32_t line, col; // where it waits (barrier)
};

struct simd_slot;
typedef void (*simd_compute_fn)(simd_slot &);

// What a pending SIMD-group rendezvous is: its call site and operation.
struct simd_key {
    const char *file;
    uint32_t line, col;
    simd_compute_fn op;
    const char *name;
};

// Rendezvous state of one simdgroup. in[] holds each arriving lane's operands
// (up to two values of up to 32 bytes), param[] its lane/delta/mask argument;
// the completing lane writes out[] for every active lane.
struct simd_slot {
    uint32_t active_mask;  // lanes that exist and have not returned
    uint32_t arrived_mask; // lanes waiting at the pending rendezvous
    uint32_t bar_waiting;  // lanes waiting at a threadgroup_barrier
    uint32_t nlanes;       // lanes that exist in this simdgroup
    uint32_t parked;       // lanes that yielded in a loop and wait for their siblings (see yield_point)
    simd_key key;
    uint32_t param[PM_SIMD_WIDTH];
    alignas(32) unsigned char in[PM_SIMD_WIDTH][64];
    alignas(32) unsigned char out[PM_SIMD_WIDTH][32];
};

struct kinfo {
    pm_run_fn run;
    uint32_t static_bytes;
    uint32_t nsites;
    const int *sites;
    uint32_t *offsets;
};

struct worker {
    uint32_t mode;
    uint32_t cur;      // running fiber
    uint32_t nthreads; // of the current group
    uint32_t done;     // fibers that returned
    uint32_t first_done;
    uint32_t bar_arrived;
    bool ls_deliver; // LOCKSTEP mode: SIMD-group calls hand out results (else they collect operands)
    uint32_t q_head, q_tail;
    int32_t err;
    const group *g;
    void (*body)(worker *, uint32_t);
    const kinfo *ki; // kernel whose site offsets are in site_off
    void *main_sp;
    void *dead_sp;
    char msg[PM_ERROR_CAPACITY];
#ifdef PM_VALIDATION
    u3 vpos; // LOOP mode: grid position of the running thread
#endif
    uint32_t nfree;    // free execution contexts (LIFO in free_ctx)
    uint32_t nctx;     // contexts ever prepared (stacks made usable)
    uint32_t queue[PM_FIBER_MAX];
    fiber_state fibers[PM_FIBER_MAX];
    void *ctx_sp[PM_FIBER_MAX];
    uint16_t free_ctx[PM_FIBER_MAX];
    simd_slot sg[PM_FIBER_MAX / PM_SIMD_WIDTH];
    uint32_t site_off[PM_MAX_TG_SITES];
    alignas(64) unsigned char tg_mem[PM_MAX_THREADGROUP_MEMORY];
    // LOCKSTEP mode: the group's per-thread locals (at most 512 bytes a thread:
    // Lockstep.swift), each array 32-byte aligned, in run_lockstep's frame.
    uint32_t ls_used;
    unsigned char *ls_arena;
    fiber::stacks stacks;
    worker *next; // in g_workers
    int owner;    // thread id of the OS thread using it
};

inline thread_local worker *tls_w = nullptr;

// Workers are kept in a per-library list, not owned by a thread_local with a
// destructor: glibc keeps a library with pending thread_local destructors
// loaded until those threads exit, and the pool's threads never do, so no
// kernel library could ever be unloaded. The list's destructor (run by dlclose,
// when no kernel of the library can be running) frees them all; a thread
// adopts the worker of a thread that has exited, so threads that come and go
// do not pile workers up.
struct worker_list {
    worker *head = nullptr;
    ~worker_list() {
        for (worker *w = head, *next; w; w = next) {
            next = w->next;
            w->stacks.release();
            sys::munmap(w, sizeof(worker));
        }
    }
};
inline worker_list g_workers;

__attribute__((noinline)) inline worker *make_worker() {
    const int me = sys::gettid();
    for (worker *w = __atomic_load_n(&g_workers.head, __ATOMIC_ACQUIRE); w; w = w->next) {
        int owner = __atomic_load_n(&w->owner, __ATOMIC_RELAXED);
        if (!sys::thread_alive(owner) &&
            __atomic_compare_exchange_n(&w->owner, &owner, me, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return tls_w = w;
    }
    void *p = sys::mmap(nullptr, sizeof(worker), sys::prot_read | sys::prot_write,
                        sys::map_private | sys::map_anonymous | sys::map_noreserve, -1, 0);
    if (sys::map_failed(p)) return nullptr;
    worker *w = (worker *)p; // zero-filled: a valid initial state
    w->owner = me;
    w->next = __atomic_load_n(&g_workers.head, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&g_workers.head, &w->next, w, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
    return tls_w = w;
}
inline worker *get_worker() {
    worker *w = tls_w;
    return w ? w : make_worker();
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------
__attribute__((format(printf, 2, 3))) inline void set_error(worker *w, const char *fmt, ...) {
    if (w->err) return; // keep the first
    __builtin_va_list ap;
    __builtin_va_start(ap, fmt);
    __builtin_vsnprintf(w->msg, sizeof w->msg, fmt, ap);
    __builtin_va_end(ap);
    w->err = 1;
}
inline int32_t report(pm_status *st, const char *msg) {
    if (st) {
        st->code = 1;
        __builtin_snprintf(st->message, sizeof st->message, "%s", msg);
    }
    return 1;
}
inline const char *gpos_str(const group *g, char (&buf)[48]) {
    if (g) __builtin_snprintf(buf, sizeof buf, "(%u,%u,%u)", g->gpos.x, g->gpos.y, g->gpos.z);
    else __builtin_snprintf(buf, sizeof buf, "(?)");
    return buf;
}

// ---------------------------------------------------------------------------
// Threadgroup memory sites (kernel-scope `threadgroup` declarations)
// ---------------------------------------------------------------------------
struct site_table {
    uint64_t size[PM_MAX_TG_SITES]; // 64-bit: `threadgroup char t[(1ull << 32) + 16]` is refused, not truncated
    uint32_t align[PM_MAX_TG_SITES];
    int overflow; // a SITE >= PM_MAX_TG_SITES was registered
};
inline site_table g_sites;

inline int register_site(int s, size_t size, size_t align) {
    if (s < 0 || (unsigned)s >= PM_MAX_TG_SITES) {
        g_sites.overflow = 1;
        return 0;
    }
    if (size > g_sites.size[s]) g_sites.size[s] = size;
    if (align > g_sites.align[s]) g_sites.align[s] = (uint32_t)align;
    return 1;
}
// One registration per instantiation, at library load (dynamic initialiser).
template <class _PmU, int _PmSite> struct tg_site {
    static inline const int reg = register_site(_PmSite, sizeof(_PmU), alignof(_PmU));
};

template <class _PmT, unsigned _PmK, unsigned _PmN> struct vptr;
template <class _PmA> struct tg_view;

// The front end declares kernel-scope threadgroup storage as
// `decltype(auto) name = tg_var<U, SITE>();`: a reference to it, or in
// validation builds a bounds-checked view of an array.
template <class _PmU, int _PmSite> inline decltype(auto) tg_var([[maybe_unused]] uint32_t line = __builtin_LINE()) {
    (void)&tg_site<_PmU, _PmSite>::reg;
    static_assert(_PmSite >= 0 && (unsigned)_PmSite < PM_MAX_TG_SITES, "threadgroup SITE out of range");
    worker *w = tls_w;
    _PmU &v = *(_PmU *)(w->tg_mem + w->site_off[_PmSite]);
#ifdef PM_VALIDATION
    if constexpr (__is_array(_PmU)) return tg_view<_PmU>{v, line};
    else return (v);
#else
    return (v);
#endif
}

// ---------------------------------------------------------------------------
// The library table
// ---------------------------------------------------------------------------
struct lib_state {
    kinfo *k;
    pm_kernel_desc *descs;
    uint32_t n;
    int state; // 0: not built, 1: building, 2: ready
};
inline lib_state g_lib;

inline uint32_t round16(uint32_t v) { return (v + 15u) & ~15u; }

inline uint32_t library(const kernel_entry *e, uint32_t n, const pm_kernel_desc **out, uint32_t *count) {
    int expect = 0;
    if (__atomic_compare_exchange_n(&g_lib.state, &expect, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        kinfo *k = (kinfo *)__builtin_calloc(n ? n : 1, sizeof(kinfo));
        pm_kernel_desc *d = (pm_kernel_desc *)__builtin_calloc(n ? n : 1, sizeof(pm_kernel_desc));
        for (uint32_t i = 0; k && d && i < n; i++) {
            // In 64 bits, saturated: a total over the limit is refused when a pipeline is made.
            uint64_t off = 0;
            uint32_t *offs = e[i].nsites ? (uint32_t *)__builtin_calloc(e[i].nsites, sizeof(uint32_t)) : nullptr;
            for (uint32_t j = 0; j < e[i].nsites; j++) {
                int s = e[i].sites[j];
                uint64_t size = 0, align = 16;
                if (s >= 0 && (unsigned)s < PM_MAX_TG_SITES) {
                    size = g_sites.size[s];
                    if (g_sites.align[s] > align) align = g_sites.align[s];
                }
                off = (off + align - 1) & ~(align - 1);
                if (offs) offs[j] = (uint32_t)(off < PM_MAX_THREADGROUP_MEMORY ? off : 0);
                off += size < (1ull << 40) ? size : (1ull << 40);
            }
            const uint32_t bytes = off < 0xFFFFFFF0u ? round16((uint32_t)off) : 0xFFFFFFF0u;
            k[i] = kinfo{e[i].run, bytes, e[i].nsites, e[i].sites, offs};
            d[i] = pm_kernel_desc{e[i].name, e[i].run, e[i].mode, e[i].max_total_threads, bytes};
        }
        g_lib.k = k;
        g_lib.descs = d;
        g_lib.n = (k && d) ? n : 0;
        __atomic_store_n(&g_lib.state, 2, __ATOMIC_RELEASE);
    } else {
        while (__atomic_load_n(&g_lib.state, __ATOMIC_ACQUIRE) != 2) {
        }
    }
    *out = g_lib.descs;
    *count = g_lib.n;
    return PM_KERNEL_ABI_VERSION;
}

inline const kinfo *find_kinfo(pm_run_fn f) {
    if (__atomic_load_n(&g_lib.state, __ATOMIC_ACQUIRE) != 2) return nullptr;
    for (uint32_t i = 0; i < g_lib.n; i++)
        if (g_lib.k[i].run == f) return &g_lib.k[i];
    return nullptr;
}

// ---------------------------------------------------------------------------
// Kernel arguments
// ---------------------------------------------------------------------------
#define PM_AI __attribute__((always_inline)) inline

template <class _PmP> PM_AI _PmP from_memory(void *p) {
    if constexpr (__is_pointer(_PmP)) return (_PmP)p;
    else if constexpr (__is_lvalue_reference(_PmP)) return *(__remove_reference_t(_PmP) *)p;
    else return *(__remove_cvref(_PmP) *)p;
}

// A position value as the declared type: a scalar takes .x, a 2-/3-vector .xy / .xyz.
template <class _PmP> PM_AI __remove_cvref(_PmP) from_pos(u3 v) {
    typedef __remove_cvref(_PmP) _PmD;
    constexpr int n = metal::pm_width<_PmD>;
    if constexpr (n == 1) {
        return (_PmD)v.x;
    } else {
        typedef metal::pm_elem_t<_PmD> _PmE;
        static_assert(n == 2 || n == 3, "position attribute: use a scalar, a 2- or a 3-vector");
        _PmD r = {};
        r[0] = (_PmE)v.x;
        r[1] = (_PmE)v.y;
        if constexpr (n == 3) r[2] = (_PmE)v.z;
        return r;
    }
}
template <class _PmP> PM_AI __remove_cvref(_PmP) from_scalar(uint32_t v) {
    typedef __remove_cvref(_PmP) _PmD;
    static_assert(metal::pm_width<_PmD> == 1, "this attribute is a scalar");
    return (_PmD)v;
}

template <class _PmP, class _PmB> struct arg;
template <class _PmP, unsigned _PmN> struct arg<_PmP, bind<attr::buffer, _PmN>> {
    static_assert(_PmN < PM_MAX_BUFFERS, "buffer index out of range");
    static PM_AI _PmP get(const group &g, const tpos &) { return from_memory<_PmP>(g.buf[_PmN]); }
};
template <class _PmP, unsigned _PmN> struct arg<_PmP, bind<attr::threadgroup, _PmN>> {
    static_assert(_PmN < PM_MAX_THREADGROUP_ARGS, "threadgroup index out of range");
    static PM_AI _PmP get(const group &g, const tpos &) { return from_memory<_PmP>(g.tg_arg[_PmN]); }
};
#ifdef PM_VALIDATION
// Validation builds: pointer parameters rewritten to vptr (FrontEnd.swift) get their binding's extent.
template <class _PmT, unsigned _PmK, unsigned _PmI, unsigned _PmN> struct arg<vptr<_PmT, _PmK, _PmI>, bind<attr::buffer, _PmN>> {
    static PM_AI vptr<_PmT, _PmK, _PmI> get(const group &g, const tpos &) {
        return vptr<_PmT, _PmK, _PmI>((_PmT *)g.buf[_PmN], g.len[_PmN] / sizeof(_PmT));
    }
};
template <class _PmT, unsigned _PmK, unsigned _PmI, unsigned _PmN>
struct arg<vptr<_PmT, _PmK, _PmI>, bind<attr::threadgroup, _PmN>> {
    static PM_AI vptr<_PmT, _PmK, _PmI> get(const group &g, const tpos &) {
        return vptr<_PmT, _PmK, _PmI>((_PmT *)g.tg_arg[_PmN], g.tg_len[_PmN] / sizeof(_PmT));
    }
};
#endif
#define PM_POS_ARG(_PmA, _PmExpr)                                                                \
    template <class _PmP, unsigned _PmN> struct arg<_PmP, bind<attr::_PmA, _PmN>> {              \
        static PM_AI auto get([[maybe_unused]] const group &g, [[maybe_unused]] const tpos &t) { \
            return _PmExpr;                                                                      \
        }                                                                                        \
    };
PM_POS_ARG(thread_position_in_grid, from_pos<_PmP>(u3{g.origin.x + t.lx, g.origin.y + t.ly, g.origin.z + t.lz}))
PM_POS_ARG(threads_per_grid, from_pos<_PmP>(g.grid))
PM_POS_ARG(thread_position_in_threadgroup, from_pos<_PmP>(u3{t.lx, t.ly, t.lz}))
PM_POS_ARG(threads_per_threadgroup, from_pos<_PmP>(g.size))
PM_POS_ARG(threadgroup_position_in_grid, from_pos<_PmP>(g.gpos))
PM_POS_ARG(threadgroups_per_grid, from_pos<_PmP>(g.ngroups))
PM_POS_ARG(dispatch_threads_per_threadgroup, from_pos<_PmP>(g.tpg))
PM_POS_ARG(thread_index_in_threadgroup, from_scalar<_PmP>(t.index))
PM_POS_ARG(thread_index_in_simdgroup, from_scalar<_PmP>(t.index % PM_SIMD_WIDTH))
PM_POS_ARG(simdgroup_index_in_threadgroup, from_scalar<_PmP>(t.index / PM_SIMD_WIDTH))
PM_POS_ARG(threads_per_simdgroup, from_scalar<_PmP>(PM_SIMD_WIDTH))
PM_POS_ARG(simdgroups_per_threadgroup, from_scalar<_PmP>((g.nthreads + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH))
PM_POS_ARG(thread_index_in_quadgroup, from_scalar<_PmP>(t.index % 4u))
PM_POS_ARG(quadgroup_index_in_threadgroup, from_scalar<_PmP>(t.index / 4u))
PM_POS_ARG(quadgroups_per_threadgroup, from_scalar<_PmP>((g.nthreads + 3u) / 4u))
#undef PM_POS_ARG

template <auto _PmK, class _PmSig, class... _PmB> struct invoker;
template <auto _PmK, class _PmR, class... _PmP, class... _PmB> struct invoker<_PmK, _PmR (*)(_PmP...), _PmB...> {
    static_assert(sizeof...(_PmP) == sizeof...(_PmB), "one bind per kernel parameter");
    static PM_AI void call(const group &g, const tpos &t) {
#ifdef PM_VALIDATION
        worker *w = tls_w; // where an out-of-bounds access finds the thread (LOOP mode)
        w->vpos = u3{g.origin.x + t.lx, g.origin.y + t.ly, g.origin.z + t.lz};
#endif
        [[clang::always_inline]] _PmK(arg<_PmP, _PmB>::get(g, t)...);
    }
};
template <auto _PmK, class _PmR, class... _PmP, class... _PmB>
struct invoker<_PmK, _PmR (*)(_PmP...) noexcept, _PmB...> : invoker<_PmK, _PmR (*)(_PmP...), _PmB...> {};

// ---------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------
PM_AI bool place_group(group &g, uint64_t gi) {
    uint64_t gx = gi % g.ngroups.x, rest = gi / g.ngroups.x;
    uint32_t gy = (uint32_t)(rest % g.ngroups.y), gz = (uint32_t)(rest / g.ngroups.y);
    g.gpos = u3{(uint32_t)gx, gy, gz};
    g.origin = u3{(uint32_t)gx * g.tpg.x, gy * g.tpg.y, gz * g.tpg.z};
    g.size = g.tpg;
    if (!g.uniform) {
        // dispatchThreads: the edge groups are cut at the grid
        uint32_t rx = g.grid.x > g.origin.x ? g.grid.x - g.origin.x : 0;
        uint32_t ry = g.grid.y > g.origin.y ? g.grid.y - g.origin.y : 0;
        uint32_t rz = g.grid.z > g.origin.z ? g.grid.z - g.origin.z : 0;
        if (rx < g.size.x) g.size.x = rx;
        if (ry < g.size.y) g.size.y = ry;
        if (rz < g.size.z) g.size.z = rz;
    }
    g.nthreads = g.size.x * g.size.y * g.size.z;
    return g.nthreads != 0;
}

// Per-run setup shared by both modes. Returns 0 or an error (status filled).
inline int32_t begin_run(worker *w, const pm_launch *lp, const kinfo *ki, group &g, pm_status *st) {
    for (int i = 0; i < PM_MAX_BUFFERS; i++) g.buf[i] = lp->buffers[i];
#ifdef PM_VALIDATION
    for (int i = 0; i < PM_MAX_BUFFERS; i++) g.len[i] = lp->buffer_lengths[i];
    for (int i = 0; i < PM_MAX_THREADGROUP_ARGS; i++) g.tg_len[i] = lp->threadgroup_lengths[i];
#endif
    g.grid = u3{lp->threads_per_grid[0], lp->threads_per_grid[1], lp->threads_per_grid[2]};
    g.tpg = u3{lp->threads_per_threadgroup[0], lp->threads_per_threadgroup[1], lp->threads_per_threadgroup[2]};
    g.ngroups = u3{lp->threadgroups_per_grid[0], lp->threadgroups_per_grid[1], lp->threadgroups_per_grid[2]};
    g.uniform = lp->uniform;
    g.poison = lp->poison_threadgroup_memory;
    uint32_t total = ki->static_bytes < 2u * PM_MAX_THREADGROUP_MEMORY ? ki->static_bytes : 2u * PM_MAX_THREADGROUP_MEMORY;
    uint32_t dyn = 0;
    for (int i = 0; i < PM_MAX_THREADGROUP_ARGS; i++) {
        uint32_t len = lp->threadgroup_lengths[i];
        g.tg_arg[i] = w->tg_mem + (total <= PM_MAX_THREADGROUP_MEMORY ? total : 0);
        total += round16(len);
        dyn += round16(len);
        if (total > 2u * PM_MAX_THREADGROUP_MEMORY) total = 2u * PM_MAX_THREADGROUP_MEMORY; // no overflow
    }
    if (total > PM_MAX_THREADGROUP_MEMORY) {
        char m[PM_ERROR_CAPACITY];
        __builtin_snprintf(m, sizeof m,
                           "threadgroup memory: the kernel needs %u bytes (%u in threadgroup variables, %u set with "
                           "setThreadgroupMemoryLength), more than the %u available",
                           total, ki->static_bytes, dyn, (unsigned)PM_MAX_THREADGROUP_MEMORY);
        return report(st, m);
    }
    g.tg_bytes = total;
    if (w->ki != ki) {
        for (uint32_t j = 0; j < ki->nsites; j++) {
            int s = ki->sites[j];
            if (s >= 0 && (unsigned)s < PM_MAX_TG_SITES) w->site_off[s] = ki->offsets[j];
        }
        w->ki = ki;
    }
    w->err = 0;
    w->msg[0] = 0;
    return 0;
}

PM_AI void start_group_memory(worker *w, const group &g) {
    if (g.poison && g.tg_bytes) __builtin_memset(w->tg_mem, 0xFF, g.tg_bytes);
}

inline int32_t finish_error(worker *w, pm_status *st) {
    w->mode = _PmModeNone;
    return report(st, w->msg);
}

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
    if (w->q_head == w->q_tail) {
        fiber::pm_swap(save, w->main_sp); // nothing runnable: run() diagnoses
        __builtin_trap();
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
                  "threadgroup_barrier not reached by all threads of threadgroup %s: thread %u returned early "
                  "while thread %u waits at threadgroup_barrier (line %u:%u)",
                  gpos_str(w->g, where), gone, waiting, w->fibers[waiting].line, w->fibers[waiting].col);
    else
        set_error(w, "threadgroup_barrier not reached by all threads of threadgroup %s: thread %u returned early",
                  gpos_str(w->g, where), gone);
    abort_group(w);
}

// Thread i returned: it leaves its simdgroup's active lanes.
PM_AI void thread_done(worker *w, uint32_t i) {
    w->fibers[i].state = _PmFiberDone;
    if (w->done++ == 0) w->first_done = i;
    uint32_t sgi = i / PM_SIMD_WIDTH, lane = i % PM_SIMD_WIDTH;
    simd_slot &s = w->sg[sgi];
    s.active_mask &= ~(1u << lane);
    if (__builtin_expect(w->bar_arrived != 0, 0)) returned_early(w, i);
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
                  "divergent control flow: in simdgroup %u of threadgroup %s, thread %u waits at %s "
                  "(line %u:%u) while thread %u waits at threadgroup_barrier (line %u:%u)",
                  sgi, gpos_str(w->g, where), sgi * PM_SIMD_WIDTH + wl, simd_name(s.key), s.key.line, s.key.col,
                  sgi * PM_SIMD_WIDTH + bl, b.line, b.col);
    } else {
        set_error(w, "divergent control flow: in simdgroup %u of threadgroup %s, %s (line %u:%u) is not reached by all "
                  "active threads", sgi, gpos_str(w->g, where), simd_name(s.key), s.key.line, s.key.col);
    }
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
    if (w->bar_arrived && w->done) {
        set_error(w, "threadgroup_barrier not reached by all threads of threadgroup %s: thread %u returned early",
                  gpos_str(w->g, where), w->first_done);
        return;
    }
    set_error(w, "deadlock in threadgroup %s: %u of %u threads wait and none can run", gpos_str(w->g, where),
              w->nthreads - w->done, w->nthreads);
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
        // back here when the group finished, failed or deadlocked
        if (!w->err && w->done != n) diagnose(w);
        if (w->err) return finish_error(w, st);
    }
    w->mode = _PmModeNone;
    return 0;
}

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
// A barrier reached by the threads in `mask` (`alive`: those that have not
// returned). A threadgroup_barrier needs every thread of the group, a
// simdgroup_barrier every live thread of a simdgroup that reaches it; else the
// error fibers report too. True after an error (the kernel returns).
inline bool ls_barrier(worker *w, const bool *mask, const bool *alive, bool threadgroup, site s = site()) {
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
            set_error(w, "%s not reached by all threads of threadgroup %s: thread %u returned early while thread %u "
                         "waits at %s (line %u:%u)", name, gpos_str(w->g, where), l, waiting, name, s.line, s.col);
        else
            set_error(w, "divergent control flow: in threadgroup %s, thread %u waits at %s (line %u:%u) while thread "
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

// ---------------------------------------------------------------------------
// The launcher
// ---------------------------------------------------------------------------
template <auto _PmKernel, uint32_t _PmMode, class... _PmBinds>
int32_t run(const pm_launch *launch, uint64_t first, uint64_t end, pm_status *status) {
    typedef invoker<_PmKernel, decltype(_PmKernel), _PmBinds...> _PmInv;
    static const kinfo *cached = nullptr;
    const kinfo *ki = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!ki) {
        ki = find_kinfo(&run<_PmKernel, _PmMode, _PmBinds...>);
        if (!ki) return report(status, "internal error: kernel library not initialised (call pm_cpu_library first)");
        __atomic_store_n(&cached, ki, __ATOMIC_RELEASE);
    }
    if (g_sites.overflow)
        return report(status, "internal error: too many threadgroup declarations in one library");
    if (first >= end) return 0;
    worker *w = get_worker();
    if (!w) return report(status, "out of memory: cannot allocate the kernel runtime state");
    // A run that a fault, timeout or interrupt ended (the host's guard jumped
    // out of it: pm_host.h, pm_guarded_run) left its mode set; nothing of it is
    // reused (begin_run and run_fibers reset the rest).
    w->mode = _PmModeNone;
    group g;
    if (int32_t e = begin_run(w, launch, ki, g, status)) return e;
    if constexpr (_PmMode == PM_KERNEL_LOOP) return run_loop<_PmInv>(w, first, end, g, status);
    else if constexpr (_PmMode == PM_KERNEL_LOCKSTEP) return run_lockstep<_PmInv>(w, first, end, g, status);
    else return run_fibers<_PmInv>(w, first, end, g, status);
}

} // namespace pm::rt

#ifdef PM_VALIDATION
// ---------------------------------------------------------------------------
// Shader validation (PYMETAL_VALIDATION=1, or the PM_VALIDATION macro): every
// access through a buffer or threadgroup pointer parameter, and every index
// of a kernel-scope threadgroup array, is checked against what is bound or
// declared. A bad access is reported (the first one, with its kernel, binding,
// element, thread and source line: the run then fails) and goes to a zeroed
// scratch element instead, so nothing outside the binding is read or written.
// Pointers made from a checked one by a cast, or passed to a function, are
// plain pointers again (unchecked).
// ---------------------------------------------------------------------------
namespace pm::rt {
enum : unsigned { _PmVBuffer = 0, _PmVThreadgroup = 1, _PmVArray = 2 };

// An index and the source line it is used on (the default argument is taken
// where the conversion happens: in the user's expression).
struct vidx {
    int64_t v;
    uint32_t line;
    template <class _PmI>
        requires(__is_integral(_PmI) || __is_enum(_PmI))
    PM_AI constexpr vidx(_PmI i, uint32_t l = __builtin_LINE()) : v((int64_t)i), line(l) {}
};

__attribute__((noinline, cold)) inline void *out_of_bounds(unsigned kind, unsigned index, int64_t element,
                                                          uint64_t count, uint32_t size, uint32_t line) {
    worker *w = tls_w;
    const fiber_self me = self();
    if (w && !w->err) {
        u3 pos = w->vpos;
        if (me.w && me.w->g) { // a fiber: from its index in the group
            const group &g = *me.w->g;
            pos = u3{g.origin.x + me.index % g.size.x, g.origin.y + me.index / g.size.x % g.size.y,
                     g.origin.z + me.index / (g.size.x * g.size.y)};
        }
        char what[64];
        if (kind == _PmVBuffer) __builtin_snprintf(what, sizeof what, "[[buffer(%u)]]", index);
        else if (kind == _PmVThreadgroup) __builtin_snprintf(what, sizeof what, "[[threadgroup(%u)]]", index);
        else __builtin_snprintf(what, sizeof what, "the threadgroup array declared at line %u", index);
        set_error(w,
                  "validation: out-of-bounds access at line %u: element %lld of %s, which has %llu elements of %u "
                  "bytes, by the thread at position (%u,%u,%u) in the grid",
                  line, (long long)element, what, (unsigned long long)count, size, pos.x, pos.y, pos.z);
    }
    alignas(64) static thread_local unsigned char scratch[4096];
    __builtin_memset(scratch, 0, size < sizeof scratch ? size : sizeof scratch);
    return scratch;
}

template <class _PmT> PM_AI _PmT &vcheck(_PmT *base, int64_t e, uint64_t count, unsigned kind, unsigned index,
                                         uint32_t line) {
    static_assert(sizeof(_PmT) <= 4096, "validation: element type over 4 KiB");
    if (__builtin_expect((uint64_t)e < count, 1)) return base[e];
    return *(_PmT *)out_of_bounds(kind, index, e, count, sizeof(_PmT), line);
}

// A bounds-checked `T *` buffer or threadgroup parameter: `base` and `count`
// are the binding's, `p` where this pointer points (after arithmetic).
template <class _PmT, unsigned _PmK, unsigned _PmI> struct vptr {
    _PmT *p, *base;
    uint64_t count;
    PM_AI vptr(_PmT *b, uint64_t n) : p(b), base(b), count(n) {}
    PM_AI vptr(_PmT *at, _PmT *b, uint64_t n) : p(at), base(b), count(n) {}
    PM_AI _PmT &operator[](vidx i) const { return vcheck(base, (p - base) + i.v, count, _PmK, _PmI, i.line); }
    PM_AI _PmT &operator*() const { return vcheck(base, p - base, count, _PmK, _PmI, 0); }
    PM_AI _PmT *operator->() const { return &vcheck(base, p - base, count, _PmK, _PmI, 0); }
    PM_AI vptr operator+(int64_t n) const { return vptr(p + n, base, count); }
    PM_AI friend vptr operator+(int64_t n, const vptr &v) { return v + n; }
    PM_AI vptr operator-(int64_t n) const { return vptr(p - n, base, count); }
    PM_AI ptrdiff_t operator-(const vptr &o) const { return p - o.p; }
    PM_AI vptr &operator+=(int64_t n) { p += n; return *this; }
    PM_AI vptr &operator-=(int64_t n) { p -= n; return *this; }
    PM_AI vptr &operator++() { ++p; return *this; }
    PM_AI vptr &operator--() { --p; return *this; }
    PM_AI vptr operator++(int) { vptr o = *this; ++p; return o; }
    PM_AI vptr operator--(int) { vptr o = *this; --p; return o; }
    PM_AI explicit operator bool() const { return p != nullptr; }
    // Templates, so that no built-in operator[] on a converted pointer competes with ours.
    template <class _PmU>
        requires(__is_convertible_to(_PmT *, _PmU *))
    PM_AI operator _PmU *() const { return p; }
    template <class _PmU>
        requires(!__is_convertible_to(_PmT *, _PmU *))
    PM_AI explicit operator _PmU *() const { return (_PmU *)p; }
};

} // namespace pm::rt
template <class _PmT, unsigned _PmK, unsigned _PmI> struct pm::abi::binding_type<pm::rt::vptr<_PmT, _PmK, _PmI>> {
    typedef _PmT *type;
};
namespace pm::rt {

// A kernel-scope threadgroup array, checked on its first index.
template <class _PmE, uint64_t _PmN> struct tg_view<_PmE[_PmN]> {
    _PmE (&a)[_PmN];
    uint32_t line;
    PM_AI _PmE &operator[](vidx i) const { return vcheck(&a[0], i.v, _PmN, _PmVArray, line, i.line); }
    template <class _PmU>
        requires(__is_convertible_to(_PmE *, _PmU *))
    PM_AI operator _PmU *() const { return &a[0]; }
    template <class _PmU>
        requires(!__is_convertible_to(_PmE *, _PmU *))
    PM_AI explicit operator _PmU *() const { return (_PmU *)&a[0]; }
};
} // namespace pm::rt
#endif

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
    if (w->done) returned_early(w, w->first_done);
    if (sl.arrived_mask) divergent_barrier(w, sgi, sl);
    if (++w->bar_arrived == w->nthreads) {
        // release: everyone else becomes runnable in thread order, this one goes on
        const uint32_t n = w->nthreads;
        w->bar_arrived = 0;
        for (uint32_t j = 0; j < n; j++) {
            if (j == i) continue;
            w->fibers[j].state = _PmFiberReady;
            push(w, j);
        }
        for (uint32_t k = 0, nsg = (n + PM_SIMD_WIDTH - 1) / PM_SIMD_WIDTH; k < nsg; k++) w->sg[k].bar_waiting = 0;
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
        if (sl.bar_waiting) {
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
