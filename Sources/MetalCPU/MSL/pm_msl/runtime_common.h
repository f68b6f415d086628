// The execution runtime shared by every mode (pm_msl/runtime.h gives the overview):
// per-OS-thread state, errors, threadgroup memory sites, the library table,
// kernel arguments, groups and per-run setup.
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

// Barriers as Apple GPUs run them (gpu_barriers). MSL asks every thread of the
// threadgroup to reach each threadgroup_barrier, but real kernels rely on what
// the hardware does: MLX's gemv and col_reduce_small return threads past the
// edge and then meet at a barrier; gemv puts one inside a branch that only some
// lanes of each simdgroup take; gemv_t's lanes past the output skip a loop
// whose steps end at a barrier (whole simdgroups of them at a partial tile).
// On a GPU a thread that finished is gone, and a simdgroup executes a barrier
// when some of its lanes do; its lanes that took another path wait where the
// paths meet again. So in a normal build:
//   - a thread that finished (returned) counts as arrived at every later barrier;
//   - a lane blocked at a SIMD-group function whose simdgroup has lanes at the
//     barrier waits for them there (carried: runtime_fibers.h, carry_barrier);
//   - errors in every mode: threads waiting at different threadgroup_barrier
//     calls (on a GPU the barriers would pair up wrongly), lanes of a simdgroup
//     at different SIMD-group calls, and any wait nothing can end (deadlock).
// The sanitizer (PM_VALIDATION) keeps MSL's rule: a thread that does not reach
// the barrier is reported as "barrier divergence", as before.
#ifdef PM_VALIDATION
inline constexpr bool gpu_barriers = false;
#else
inline constexpr bool gpu_barriers = true;
#endif

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
    bool ls_skipped;       // LOCKSTEP mode: ran past a threadgroup_barrier the others waited at (ls_barrier)
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

#ifdef PM_VALIDATION
// Validation's tracking of threadgroup memory (runtime_validation.h, vtrack):
// the access whose kind (read / write) is not known yet, and per byte offset
// of threadgroup memory the last write and read (barrier interval, thread, line).
struct vpending {
    unsigned char *p; // null: none
    const char *file, *name;
    int64_t element;
    uint32_t size, off, epoch, tid, line, kind, index; // tid: the thread, by index in its group
    uint32_t lane; // float elements: bytes per lane (4: float, 2: half), else 0 (NaN check)
    const struct vdims *dims; // a multi-dimensional threadgroup array's extents (its elements' indices), else null
    unsigned char old[16]; // the element's bytes before the access
};
// A device-memory element written in this run (an open-addressed table per
// worker: its groups of one dispatch; PM_VDEV_SLOTS elements at most).
#define PM_VDEV_SLOTS 65536u
struct vdev_entry {
    uintptr_t addr;
    uint32_t run, line; // run: the worker's vrun when written
    u3 pos;             // the writer's grid position
};
struct vshadow {
    uint32_t wstamp[PM_MAX_THREADGROUP_MEMORY], rstamp[PM_MAX_THREADGROUP_MEMORY];
    uint32_t wline[PM_MAX_THREADGROUP_MEMORY], rline[PM_MAX_THREADGROUP_MEMORY];
    uint16_t writer[PM_MAX_THREADGROUP_MEMORY], reader[PM_MAX_THREADGROUP_MEMORY];
};
#endif

struct worker {
    uint32_t mode;
    uint32_t cur;      // running fiber
    uint32_t nthreads; // of the current group
    uint32_t done;     // fibers that returned
    uint32_t first_done;
    uint32_t bar_arrived;
    site bar_site; // where the threads waiting at a threadgroup_barrier wait (the first one's call); LOCKSTEP: ls_group_barrier
    bool ls_deliver; // LOCKSTEP mode: SIMD-group calls hand out results (else they collect operands)
    bool ls_skipped; // LOCKSTEP mode: some simdgroup's ls_skipped is set
    uint32_t q_head, q_tail;
    int32_t err;
    const group *g;
    void (*body)(worker *, uint32_t);
    const kinfo *ki; // kernel whose site offsets are in site_off
    void *main_sp;
    void *dead_sp;
    char msg[PM_ERROR_CAPACITY];
#ifdef PM_VALIDATION
    u3 vpos;         // LOOP mode: grid position of the running thread
    uint32_t vindex; // LOOP mode: its index in the group
    const group *vg; // the group being run (both modes)
    uint32_t vepoch, vgroup_epoch; // barrier intervals: the current one, the group's first
    vpending vpend;
    uint32_t vnan_read[PM_FIBER_MAX / 32]; // threads of the group that read a NaN or Inf (PM_VALIDATION_NAN)
    uint32_t vrun; // run() calls (device-memory writes of one run share a stamp)
    uint32_t vnescaped;       // threadgroup ranges that escaped to plain pointers in this group (vescape)
    uint32_t vescaped[8][2];  // their [first, end) byte offsets

    vshadow vs;
    vdev_entry vdev[PM_VDEV_SLOTS];
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

// A name from the source as a template argument (validation's messages say
// `b`, not [[buffer(1)]]): vptr<float, 0, 1, "b">.
template <unsigned _PmN> struct vname {
    char s[_PmN];
    constexpr vname(const char (&a)[_PmN]) {
        for (unsigned i = 0; i < _PmN; i++) s[i] = a[i];
    }
};
template <unsigned _PmN> vname(const char (&)[_PmN]) -> vname<_PmN>;
template <class _PmT, unsigned _PmK, unsigned _PmN, vname _PmName = ""> struct vptr;
template <class _PmA, vname _PmName, class _PmFull = _PmA> struct tg_view; // _PmFull: the declared array

// The front end declares kernel-scope threadgroup storage as
// `decltype(auto) name = tg_var<U, SITE>();`: a reference to it, or in
// validation builds a bounds-checked view of an array.
template <class _PmU, int _PmSite, vname _PmName = "">
inline decltype(auto) tg_var([[maybe_unused]] uint32_t line = __builtin_LINE()) {
    (void)&tg_site<_PmU, _PmSite>::reg;
    static_assert(_PmSite >= 0 && (unsigned)_PmSite < PM_MAX_TG_SITES, "threadgroup SITE out of range");
    worker *w = tls_w;
    _PmU &v = *(_PmU *)(w->tg_mem + w->site_off[_PmSite]);
#ifdef PM_VALIDATION
    if constexpr (__is_array(_PmU)) return tg_view<_PmU, _PmName>{v, line};
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
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmS, unsigned _PmN>
struct arg<vptr<_PmT, _PmK, _PmI, _PmS>, bind<attr::buffer, _PmN>> {
    static PM_AI vptr<_PmT, _PmK, _PmI, _PmS> get(const group &g, const tpos &) {
        return vptr<_PmT, _PmK, _PmI, _PmS>((_PmT *)g.buf[_PmN], g.len[_PmN] / sizeof(_PmT));
    }
};
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmS, unsigned _PmN>
struct arg<vptr<_PmT, _PmK, _PmI, _PmS>, bind<attr::threadgroup, _PmN>> {
    static PM_AI vptr<_PmT, _PmK, _PmI, _PmS> get(const group &g, const tpos &) {
        return vptr<_PmT, _PmK, _PmI, _PmS>((_PmT *)g.tg_arg[_PmN], g.tg_len[_PmN] / sizeof(_PmT));
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
        w->vindex = t.index;
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
#ifdef PM_VALIDATION
    if (++w->vrun == 0) { // wrapped: forget every device write
        __builtin_memset(w->vdev, 0, sizeof w->vdev);
        w->vrun = 1;
    }
#endif
    return 0;
}

#ifdef PM_VALIDATION
inline void vgroup_start(worker *w, const group &g); // runtime_validation.h
inline void vgroup_end(worker *w);
#endif
PM_AI void start_group_memory(worker *w, const group &g) {
    if (g.poison && g.tg_bytes) __builtin_memset(w->tg_mem, 0xFF, g.tg_bytes);
#ifdef PM_VALIDATION
    vgroup_start(w, g);
#endif
}

inline int32_t finish_error(worker *w, pm_status *st) {
    w->mode = _PmModeNone;
    return report(st, w->msg);
}

} // namespace pm::rt

#pragma GCC visibility pop
