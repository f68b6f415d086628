// Shader validation (PYMETAL_VALIDATION=1 or the PM_VALIDATION macro): checked accesses.
#pragma once
#include "pm_msl/runtime_fibers.h"

#pragma GCC visibility push(hidden)

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

// An index and the source line it is used on (the default arguments are taken
// where the conversion happens: in the user's expression).
struct vidx {
    int64_t v;
    uint32_t line;
    const char *file;
    template <class _PmI>
        requires(__is_integral(_PmI) || __is_enum(_PmI))
    PM_AI constexpr vidx(_PmI i, uint32_t l = __builtin_LINE(), const char *f = __builtin_FILE())
        : v((int64_t)i), line(l), file(f) {}
};

// The grid position of the calling MSL thread (a fiber: from its index in the group).
inline u3 thread_position(const worker *w) {
    const fiber_self me = self();
    if (me.w && me.w->g) {
        const group &g = *me.w->g;
        return u3{g.origin.x + me.index % g.size.x, g.origin.y + me.index / g.size.x % g.size.y,
                  g.origin.z + me.index / (g.size.x * g.size.y)};
    }
    return w->vpos;
}

// What an access went to: "`b` [[buffer(1)]]", "the threadgroup array `s` declared at line 3".
inline void describe(char (&what)[160], unsigned kind, unsigned index, const char *name) {
    const char *q = *name ? "`" : "", *sp = *name ? "` " : "";
    if (kind == _PmVBuffer) __builtin_snprintf(what, sizeof what, "%s%s%s[[buffer(%u)]]", q, name, sp, index);
    else if (kind == _PmVThreadgroup) __builtin_snprintf(what, sizeof what, "%s%s%s[[threadgroup(%u)]]", q, name, sp, index);
    else __builtin_snprintf(what, sizeof what, "the threadgroup array %s%s%sdeclared at line %u", q, name, sp, index);
}

// A multi-dimensional threadgroup array's extents, outermost first (`float p[2][3]`: 2, 3): its
// elements are numbered row by row, and messages give their indices too ("element 4 ([1][1])").
struct vdims {
    uint32_t rank;
    uint64_t n[8];
};
template <class _PmA> constexpr vdims vdims_of() {
    vdims d{};
    if constexpr (__is_array(_PmA)) {
        d = vdims_of<__remove_extent(_PmA)>();
        static_assert(__array_rank(_PmA) <= 8, "validation: threadgroup array of over 8 dimensions");
        for (uint32_t k = d.rank; k > 0; k--) d.n[k] = d.n[k - 1];
        d.n[0] = __array_extent(_PmA, 0);
        d.rank++;
    }
    return d;
}
template <class _PmA> inline constexpr vdims vdims_v = vdims_of<_PmA>();

// "4", or with the indices of a multi-dimensional array's element "4 ([1][1])".
inline void velement(char (&out)[128], int64_t e, const vdims *d) {
    int n = __builtin_snprintf(out, sizeof out, "%lld", (long long)e);
    if (!d || d->rank < 2 || e < 0) return;
    uint64_t idx[8], rest = (uint64_t)e;
    for (uint32_t k = d->rank; k-- > 0;) {
        idx[k] = rest % d->n[k];
        rest /= d->n[k];
    }
    n += __builtin_snprintf(out + n, sizeof out - n, " (");
    for (uint32_t k = 0; k < d->rank && n < (int)sizeof out; k++)
        n += __builtin_snprintf(out + n, sizeof out - n, "[%llu]", (unsigned long long)idx[k]);
    if (n < (int)sizeof out) __builtin_snprintf(out + n, sizeof out - n, ")");
}

// Zeroed per-thread memory that a reported out-of-bounds access reads or writes
// instead (the kernel runs on to the end of the dispatch; the error is kept).
alignas(64) inline thread_local unsigned char fault_memory[4096];
inline void *fault_scratch(uint64_t size) {
    __builtin_memset(fault_memory, 0, size);
    return fault_memory;
}

// Checked memory that leaves as a plain pointer (a checked pointer passed to a helper function, cast,
// given to a template): its range, by which a helper's `p[i]` on a plain pointer is checked
// (vsub; the front end wraps such subscripts, CheckedArguments.swift). Per OS thread (the fibers
// of a group share it), emptied at each group's start (vgroup_start). Past 32 ranges, no more are
// kept: accesses through the others' pointers go unchecked (never a false report).
struct vrange {
    const unsigned char *base;
    uint64_t bytes;
    unsigned kind, index;
    const char *name;
};
alignas(64) inline thread_local vrange vranges[32];
inline thread_local unsigned vnranges;
inline void vleave(const void *base, uint64_t bytes, unsigned kind, unsigned index, const char *name) {
    if (!base) return;
    for (unsigned k = 0; k < vnranges; k++)
        if (vranges[k].base == base && vranges[k].bytes == bytes && vranges[k].name == name) return;
    if (vnranges < 32) vranges[vnranges++] = {(const unsigned char *)base, bytes, kind, index, name};
}

// `name`: the parameter's or array's name in the source ("" if unknown);
// `index`: its [[buffer(n)]] / [[threadgroup(n)]] index, or an array's line.
__attribute__((noinline, cold)) inline void *out_of_bounds(unsigned kind, unsigned index, const char *name,
                                                          int64_t element, uint64_t count, uint32_t size,
                                                          const char *file, uint32_t line) {
    worker *w = tls_w;
    if (w && !w->err) {
        const u3 pos = thread_position(w);
        char what[160];
        describe(what, kind, index, name);
        char at[160];
        if (line) __builtin_snprintf(at, sizeof at, "line %u of %s", line, file ? file : "the kernel source");
        else __builtin_snprintf(at, sizeof at, "a dereference (no line known)");
        // The count is that of the memory bound: for an array passed from
        // Python, exactly its bytes (function.py passes each argument's range).
        set_error(w,
                  "validation: out of bounds: element %lld of %s, which has %llu elements of %u bytes, accessed at "
                  "%s by the thread at position (%u,%u,%u) in the grid",
                  (long long)element, what, (unsigned long long)count, size, at, pos.x, pos.y, pos.z);
    }
    return fault_scratch(size < sizeof fault_memory ? size : sizeof fault_memory);
}

// An index past its dimension of a multi-dimensional threadgroup array (`p[i][j]`, j >= the row's
// length, even where the flat element would be inside the array: MSL's rule, as C's). Returns
// scratch memory of `size` bytes (zeroed), or null when a row is bigger than it.
__attribute__((noinline, cold)) inline void *vindex_out_of_bounds(unsigned line_declared, const char *name,
                                                                 const vdims *d, uint32_t dim, int64_t index,
                                                                 uint64_t size, const char *file, uint32_t line) {
    worker *w = tls_w;
    if (w && !w->err) {
        const u3 pos = thread_position(w);
        char what[160];
        describe(what, _PmVArray, line_declared, name);
        char shape[96];
        int n = 0;
        shape[0] = 0;
        for (uint32_t k = 0; k < d->rank && n < (int)sizeof shape; k++)
            n += __builtin_snprintf(shape + n, sizeof shape - n, "[%llu]", (unsigned long long)d->n[k]);
        set_error(w,
                  "validation: out of bounds: index %lld of dimension %u (of %llu) of %s, of shape %s, accessed "
                  "at line %u of %s by the thread at position (%u,%u,%u) in the grid",
                  (long long)index, dim + 1, (unsigned long long)d->n[dim], what, shape, line,
                  file ? file : "the kernel source", pos.x, pos.y, pos.z);
    }
    return size > sizeof fault_memory ? nullptr : fault_scratch(size);
}

// ---------------------------------------------------------------------------
// Threadgroup memory: uninitialized reads and data races
// ---------------------------------------------------------------------------
// An access hands out a reference, so whether it reads or writes is known only
// afterwards: each access to threadgroup memory is kept pending with a copy of
// the element's bytes and classified at the next one (by any thread: one runs
// at a time on a worker) or at the group's end: changed bytes are a write.
// (A store of the value already there counts as a read: threadgroup memory is
// filled with 0xA5 bytes at each group's start, so that a first store rarely
// stores what is there.) Per byte offset the shadow keeps the last write and
// read: barrier interval (epoch), thread and line. Reported: a read of an
// element no thread of the group wrote before ("uninitialized"); a write and
// another thread's read or write of one element in one interval between
// barriers ("data race"). A simdgroup_barrier also starts an interval (lanes
// of one simdgroup that share memory through it are not reported: fewer
// reports, never false ones). Atomic elements are not tracked.
inline constexpr unsigned char vfill = 0xA5;
inline constexpr uint16_t vmany = 0xFFFF; // several threads read in this interval

inline u3 vthread_pos(const worker *w, uint32_t t) {
    const group &g = *w->vg;
    return u3{g.origin.x + t % g.size.x, g.origin.y + t / g.size.x % g.size.y, g.origin.z + t / (g.size.x * g.size.y)};
}

__attribute__((noinline, cold)) inline void vrace(worker *w, const vpending &q, bool wrote, bool other_wrote,
                                                 uint32_t other, uint32_t other_line) {
    char what[160], element[128];
    describe(what, q.kind, q.index, q.name);
    velement(element, q.element, q.dims);
    const u3 a = vthread_pos(w, q.tid);
    char them[96];
    if (other == vmany) __builtin_snprintf(them, sizeof them, "other threads read it");
    else {
        const u3 b = vthread_pos(w, other);
        __builtin_snprintf(them, sizeof them, "the thread at position (%u,%u,%u) %s it at line %u", b.x, b.y, b.z,
                           other_wrote ? "wrote" : "read", other_line);
    }
    set_error(w,
              "validation: data race on element %s of %s: the thread at position (%u,%u,%u) in the grid %s it at "
              "line %u of %s after %s, with no threadgroup_barrier between",
              element, what, a.x, a.y, a.z, wrote ? "writes" : "reads", q.line, q.file ? q.file : "?",
              them);
}

// PYMETAL_VALIDATION=nan: whether any lane of a float / half element is a NaN or an Inf.
inline bool vnonfinite(const unsigned char *p, uint32_t size, uint32_t lane) {
    for (uint32_t o = 0; o + lane <= size; o += lane) {
        if (lane == 4) {
            uint32_t f;
            __builtin_memcpy(&f, p + o, 4);
            if ((f & 0x7F800000u) == 0x7F800000u) return true;
        } else {
            uint16_t h;
            __builtin_memcpy(&h, p + o, 2);
            if ((h & 0x7C00u) == 0x7C00u) return true;
        }
    }
    return false;
}
// A store of a NaN / Inf by a thread that has read none: it made it from finite values.
inline void vnan(worker *w, const vpending &q, const unsigned char *now, bool wrote) {
    uint32_t &bits = w->vnan_read[q.tid / 32];
    const uint32_t bit = 1u << (q.tid % 32);
    if (!vnonfinite(now, q.size, q.lane)) return;
    if (!wrote) {
        bits |= bit;
        return;
    }
    if (bits & bit) return;
    char what[160];
    describe(what, q.kind, q.index, q.name);
    const u3 a = vthread_pos(w, q.tid);
    set_error(w,
              "validation: NaN: the thread at position (%u,%u,%u) in the grid stores a NaN or Inf into element %lld of "
              "%s at line %u of %s, computed from finite values (it read no NaN or Inf before)",
              a.x, a.y, a.z, (long long)q.element, what, q.line, q.file ? q.file : "?");
}

// A write to device memory: another thread of the dispatch (run on this
// worker) wrote the element without atomics: a data race. Past the table's
// capacity (PM_VDEV_SLOTS elements per run, 8 probes) writes go unchecked.
inline void vdevice_write(worker *w, const vpending &q, const unsigned char *p) {
    const uintptr_t a = (uintptr_t)p;
    const u3 me = vthread_pos(w, q.tid);
    uint32_t h = (uint32_t)((a >> 2) * 0x9E3779B1u) % PM_VDEV_SLOTS;
    for (int probe = 0; probe < 8; probe++, h = (h + 1) % PM_VDEV_SLOTS) {
        vdev_entry &e = w->vdev[h];
        if (e.run != w->vrun) { // free (stale) slot: the first write
            e = vdev_entry{a, w->vrun, q.line, me};
            return;
        }
        if (e.addr != a) continue;
        if (e.pos.x != me.x || e.pos.y != me.y || e.pos.z != me.z) {
            char what[160];
            describe(what, q.kind, q.index, q.name);
            set_error(w,
                      "validation: data race on element %lld of %s: the thread at position (%u,%u,%u) in the grid "
                      "writes it at line %u of %s after the thread at position (%u,%u,%u) wrote it at line %u, "
                      "without atomics",
                      (long long)q.element, what, me.x, me.y, me.z, q.line, q.file ? q.file : "?", e.pos.x, e.pos.y,
                      e.pos.z, e.line);
        }
        e.line = q.line;
        return;
    }
}

inline bool vescaped(const worker *w, uint32_t off);

// Classifies the pending access and checks it against the shadow.
inline void vresolve(worker *w) {
    vpending &q = w->vpend;
    if (!q.p) return;
    unsigned char *p = q.p;
    q.p = nullptr;
    if (w->err) return;
    const bool wrote = __builtin_memcmp(p, q.old, q.size) != 0;
#ifdef PM_VALIDATION_NAN
    if (q.lane) vnan(w, q, p, wrote);
#endif
    if (q.kind == _PmVBuffer) {
#ifdef PM_VALIDATION_DEVICE_RACE
        if (wrote) vdevice_write(w, q, p);
#endif
        return;
    }
    if (w->vnescaped && vescaped(w, q.off)) return;
    vshadow &v = w->vs;
    const uint32_t o = q.off;
    if (wrote) {
        if (v.wstamp[o] == q.epoch && v.writer[o] != q.tid) vrace(w, q, true, true, v.writer[o], v.wline[o]);
        else if (v.rstamp[o] == q.epoch && v.reader[o] != q.tid) vrace(w, q, true, false, v.reader[o], v.rline[o]);
        v.wstamp[o] = q.epoch;
        v.writer[o] = (uint16_t)q.tid;
        v.wline[o] = q.line;
        return;
    }
    if (v.wstamp[o] < w->vgroup_epoch) {
        char what[160], element[128];
        describe(what, q.kind, q.index, q.name);
        velement(element, q.element, q.dims);
        const u3 a = vthread_pos(w, q.tid);
        set_error(w,
                  "validation: uninitialized read: element %s of %s is read at line %u of %s by the thread at "
                  "position (%u,%u,%u) in the grid, but no thread of its threadgroup wrote it before in this dispatch",
                  element, what, q.line, q.file ? q.file : "?", a.x, a.y, a.z);
        return;
    }
    if (v.wstamp[o] == q.epoch && v.writer[o] != q.tid) vrace(w, q, false, true, v.writer[o], v.wline[o]);
    v.reader[o] = v.rstamp[o] == q.epoch && v.reader[o] != q.tid ? vmany : (uint16_t)q.tid;
    v.rstamp[o] = q.epoch;
    v.rline[o] = q.line;
}

__attribute__((noinline)) inline void vtrack(void *p, uint32_t size, unsigned kind, unsigned index, const char *name,
                                             int64_t element, const char *file, uint32_t line, uint32_t lane,
                                             const vdims *dims = nullptr) {
    worker *w = tls_w;
    if (!w || !w->vg) return;
    vresolve(w);
    const uint64_t off = kind == _PmVBuffer ? 0 : (uint64_t)((unsigned char *)p - w->tg_mem);
    if (size > sizeof w->vpend.old || off >= PM_MAX_THREADGROUP_MEMORY) return;
    const fiber_self me = self();
    vpending &q = w->vpend;
    q.p = (unsigned char *)p;
    q.file = file;
    q.name = name;
    q.element = element;
    q.size = size;
    q.off = (uint32_t)off;
    q.epoch = w->vepoch;
    q.tid = me.w ? me.index : w->vindex;
    q.line = line;
    q.kind = kind;
    q.index = index;
    q.lane = lane;
    q.dims = dims;
    __builtin_memcpy(q.old, p, size);
}

// Threadgroup memory that became a plain pointer (passed to a function,
// simdgroup_load/store, a cast) is read and written where nothing sees it:
// the group's accesses to it are not judged (no uninitialized read or race is
// reported there: fewer reports, never false ones). Past 8 ranges, none is.
inline void vescape(const void *p, uint64_t bytes) {
    worker *w = tls_w;
    if (!w || !w->vg) return;
    const uint64_t off = (uint64_t)((const unsigned char *)p - w->tg_mem);
    if (off >= PM_MAX_THREADGROUP_MEMORY) return; // not threadgroup memory
    const uint32_t end = (uint32_t)(off + bytes < PM_MAX_THREADGROUP_MEMORY ? off + bytes : PM_MAX_THREADGROUP_MEMORY);
    for (uint32_t k = 0; k < w->vnescaped && k < 8; k++)
        if (w->vescaped[k][0] == off && w->vescaped[k][1] == end) return;
    if (w->vnescaped < 8) {
        w->vescaped[w->vnescaped][0] = (uint32_t)off;
        w->vescaped[w->vnescaped][1] = end;
    }
    w->vnescaped++;
}
inline bool vescaped(const worker *w, uint32_t off) {
    if (w->vnescaped > 8) return true;
    for (uint32_t k = 0; k < w->vnescaped; k++)
        if (w->vescaped[k][0] <= off && off < w->vescaped[k][1]) return true;
    return false;
}

// Threadgroup memory reached through a plain pointer by the runtime (simdgroup_load/store of
// `&tile[i][0]`): `bytes` from `p` escape (vescape), and the access that made the pointer (`tile[i][0]`,
// pending) is no read or write of its own (it would be judged by the bytes the store changed: a
// false race between the lanes).
inline void vplain(const void *p, uint64_t bytes) {
    worker *w = tls_w;
    if (!w || !w->vg) return;
    if (w->vpend.p == (const unsigned char *)p) w->vpend.p = nullptr;
    vescape(p, bytes);
}

// An atomic operation on the element just accessed: not a plain read or write.
inline void vatomic(const volatile void *p) {
    worker *w = tls_w;
    if (w && w->vpend.p == (const volatile unsigned char *)p) w->vpend.p = nullptr;
}

// A new barrier interval (a threadgroup_barrier released).
inline void vbarrier(worker *w) {
    vresolve(w);
    if (++w->vepoch >= 0xFFFFFFF0u) { // wrapped: forget every stamp
        __builtin_memset(w->vs.wstamp, 0, sizeof w->vs.wstamp);
        __builtin_memset(w->vs.rstamp, 0, sizeof w->vs.rstamp);
        w->vepoch = w->vgroup_epoch = 2;
    }
}
inline void vgroup_start(worker *w, const group &g) {
    vnranges = 0;
    w->vpend.p = nullptr;
    w->vg = &g;
    w->vnescaped = 0;
    __builtin_memset(w->vnan_read, 0, sizeof w->vnan_read);
    vbarrier(w);
    w->vgroup_epoch = w->vepoch;
    if (g.tg_bytes) __builtin_memset(w->tg_mem, vfill, g.tg_bytes);
}
inline void vgroup_end(worker *w) {
    vresolve(w);
    w->vg = nullptr;
}

// `first`, `dims`: a row of a multi-dimensional threadgroup array (bounds checked by its view),
// base[0] its element `first` of the whole array, whose extents are `dims`.
template <class _PmT> PM_AI _PmT &vcheck(_PmT *base, int64_t e, uint64_t count, unsigned kind, unsigned index,
                                         const char *name, const char *file, uint32_t line, int64_t first = 0,
                                         const vdims *dims = nullptr) {
    static_assert(sizeof(_PmT) <= 4096, "validation: element type over 4 KiB");
    if (__builtin_expect((uint64_t)e < count, 1)) {
        typedef __remove_cv(_PmT) _PmU;
        if constexpr (!::pm::abi::unatomic<_PmU>::flag) {
            typedef ::metal::pm_elem_t<_PmU> _PmE;
            constexpr uint32_t _PmLane = __is_same(_PmE, float) ? 4 : __is_same(_PmE, half) ? 2 : 0;
#ifdef PM_VALIDATION_BOUNDS_ONLY // (scripts/bench_faults.py: the cost of each check)
            constexpr bool _PmShared = false;
#else
            constexpr bool _PmShared = true; // threadgroup memory: uninitialized reads, races
#endif
#if defined(PM_VALIDATION_DEVICE_RACE)
            constexpr bool _PmDev = true; // device memory: races (PYMETAL_VALIDATION=race)
#elif defined(PM_VALIDATION_NAN)
            constexpr bool _PmDev = _PmLane != 0; // float stores: NaN origins
#else
            constexpr bool _PmDev = false;
#endif
            if (_PmDev || (_PmShared && kind != _PmVBuffer)) vtrack((void *)(base + e), sizeof(_PmT), kind, index, name, first + e, file, line, _PmLane, dims);
        }
        return base[e];
    }
    return *(_PmT *)out_of_bounds(kind, index, name, e, count, sizeof(_PmT), file, line);
}

template <class _PmX> inline constexpr bool vis_vptr = false;
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmN>
inline constexpr bool vis_vptr<vptr<_PmT, _PmK, _PmI, _PmN>> = true;

// `p[i]` in a helper function, on its pointer parameter `p`: when `p` points into memory that left
// a checked pointer (vleave), the element must lie in that memory too; a pointer into nothing
// known (thread memory, a `void *` buffer's cast) is not checked. A pointer just past the end of
// one range is the start of the next array as well: it counts as inside only for what lies below it.
__attribute__((noinline)) inline void *vsub_check(const unsigned char *p, int64_t i, uint32_t size,
                                                  const char *file, uint32_t line) {
    const unsigned char *at = p + i * (int64_t)size;
    const vrange *found = nullptr;
    for (unsigned k = 0; k < vnranges; k++) {
        const vrange &r = vranges[k];
        const bool holds = (p >= r.base && p < r.base + r.bytes) || (p == r.base + r.bytes && at < p);
        if (!holds) continue;
        if (at >= r.base && at + size <= r.base + r.bytes) return (void *)at;
        found = &r;
    }
    if (!found) return (void *)at;
    return out_of_bounds(found->kind, found->index, found->name, (at - found->base) / (int64_t)size,
                         found->bytes / size, size, file, line);
}
template <class _PmT> struct vsub_ptr {
    _PmT *p;
    PM_AI _PmT &operator[](vidx i) const {
        if (!vnranges) return p[i.v];
        return *(_PmT *)vsub_check((const unsigned char *)p, i.v, sizeof(_PmT), i.file, i.line);
    }
    template <class _PmI> // an index of a class type (uniform<int>): as written, unchecked
        requires(!__is_integral(_PmI) && !__is_enum(_PmI))
    PM_AI decltype(auto) operator[](const _PmI &i) const {
        return p[i];
    }
};
template <class _PmX> PM_AI decltype(auto) vsub(_PmX &&x) {
    typedef __remove_cvref(_PmX) _PmV;
    if constexpr (__is_pointer(_PmV) && !__is_void(__remove_pointer(_PmV))) return vsub_ptr<__remove_pointer(_PmV)>{x};
    else return static_cast<_PmX &&>(x);
}
template <class _PmX> PM_AI auto vraw(const _PmX &x) {
    if constexpr (vis_vptr<_PmX>) return x.p;
    else return x;
}

// A bounds-checked `T *` buffer or threadgroup parameter: `base` and `count`
// are the binding's, `p` where this pointer points (after arithmetic).
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmName> struct vptr {
    static constexpr unsigned kind = _PmK;
    _PmT *p, *base;
    uint64_t count;
    // The binding it points into, for the messages: its own, or another parameter's once assigned
    // one (ggml's flash attention: `k = pad;`, both checked parameters of one kernel).
    unsigned bind_index = _PmI;
    const char *bind_name = _PmName.s;
    PM_AI vptr(_PmT *b, uint64_t n) : p(b), base(b), count(n) {}
    PM_AI vptr(_PmT *at, _PmT *b, uint64_t n) : p(at), base(b), count(n) {}
    PM_AI vptr(decltype(nullptr)) : p(nullptr), base(nullptr), count(0) {} // `c ? nullptr : buf`
    // From another checked pointer of the same address space: its bounds and its name come along.
    template <class _PmU, unsigned _PmJ, vname _PmM>
        requires(__is_convertible_to(_PmU *, _PmT *) && sizeof(_PmU) == sizeof(_PmT))
    PM_AI vptr(const vptr<_PmU, _PmK, _PmJ, _PmM> &o) : p(o.p), base(o.base), count(o.count), bind_index(o.bind_index), bind_name(o.bind_name) {}
    PM_AI _PmT &operator[](vidx i) const {
        return vcheck(base, (p - base) + i.v, count, _PmK, bind_index, bind_name, i.file, i.line);
    }
    PM_AI _PmT &operator*() const { return vcheck(base, p - base, count, _PmK, bind_index, bind_name, nullptr, 0); }
    PM_AI _PmT *operator->() const { return &vcheck(base, p - base, count, _PmK, bind_index, bind_name, nullptr, 0); }
    PM_AI vptr operator+(int64_t n) const { vptr o = *this; o.p += n; return o; }
    PM_AI friend vptr operator+(int64_t n, const vptr &v) { return v + n; }
    PM_AI vptr operator-(int64_t n) const { vptr o = *this; o.p -= n; return o; }
    PM_AI ptrdiff_t operator-(const vptr &o) const { return p - o.p; }
    PM_AI vptr &operator+=(int64_t n) { p += n; return *this; }
    PM_AI vptr &operator-=(int64_t n) { p -= n; return *this; }
    PM_AI vptr &operator++() { ++p; return *this; }
    PM_AI vptr &operator--() { --p; return *this; }
    PM_AI vptr operator++(int) { vptr o = *this; ++p; return o; }
    PM_AI vptr operator--(int) { vptr o = *this; --p; return o; }
    PM_AI explicit operator bool() const { return p != nullptr; }
    // Compared as the pointers they stand for (with another checked pointer, a plain one, nullptr).
#define PM_VPTR_COMPARE(_PmOp)                                                                          \
    template <class _PmO> PM_AI bool operator _PmOp(const _PmO &o) const { return p _PmOp vraw(o); }   \
    template <class _PmO>                                                                               \
        requires(!vis_vptr<_PmO>)                                                                       \
    PM_AI friend bool operator _PmOp(const _PmO &o, const vptr &v) { return vraw(o) _PmOp v.p; }
    PM_VPTR_COMPARE(==) PM_VPTR_COMPARE(!=) PM_VPTR_COMPARE(<) PM_VPTR_COMPARE(>) PM_VPTR_COMPARE(<=)
    PM_VPTR_COMPARE(>=)
#undef PM_VPTR_COMPARE
    // Templates, so that no built-in operator[] on a converted pointer competes with ours.
    template <class _PmU>
        requires(__is_convertible_to(_PmT *, _PmU *))
    PM_AI operator _PmU *() const {
        leave();
        return p;
    }
    template <class _PmU>
        requires(!__is_convertible_to(_PmT *, _PmU *))
    PM_AI explicit operator _PmU *() const {
        leave();
        return (_PmU *)p;
    }
    PM_AI void leave() const { // becoming a plain pointer
        if constexpr (_PmK == _PmVThreadgroup) vescape(base, count * sizeof(_PmT));
        vleave(base, count * sizeof(_PmT), _PmK, bind_index, bind_name);
    }
};

// `&p[i]` on a checked pointer (the front end's rewrite, rewriteCheckedAddresses): the element's
// address, a plain pointer as written, and no access. Its index is checked as an address's: one past
// the end is the address C++ allows (`end = &a[n]`, a loop's bound), so only below the start or past
// that is out of bounds. (Through operator[] it was an access, and its scratch memory the end: the
// loop ran on past the buffer.) The pointer leaves as a plain one (vleave: helpers check through it).
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmN>
PM_AI _PmT *vaddr(const vptr<_PmT, _PmK, _PmI, _PmN> &v, vidx i) {
    const int64_t e = (v.p - v.base) + i.v;
    v.leave();
    if (__builtin_expect(e >= 0 && (uint64_t)e <= v.count, 1)) return v.base + e;
    return (_PmT *)out_of_bounds(_PmK, v.bind_index, v.bind_name, e, v.count, sizeof(_PmT), i.file, i.line);
}
// The first argument of an `atomic_*` call (rewriteCheckedAtomicArguments): a checked pointer is the
// element it points at (checked as an access); anything else as written.
template <class _PmX> PM_AI decltype(auto) vatom(_PmX &&x) {
    if constexpr (vis_vptr<__remove_cvref(_PmX)>) return &*x;
    else return static_cast<_PmX &&>(x);
}

template <class _PmX, class _PmI> // anything else (an index of a class type, not a checked pointer): as written
    requires(!vis_vptr<__remove_cvref(_PmX)> || !(__is_integral(__remove_cvref(_PmI)) || __is_enum(__remove_cvref(_PmI))))
PM_AI decltype(auto) vaddr(_PmX &&x, _PmI &&i) {
    return &x[static_cast<_PmI &&>(i)];
}

} // namespace pm::rt
template <class _PmT, unsigned _PmK, unsigned _PmI, pm::rt::vname _PmName>
struct pm::abi::binding_type<pm::rt::vptr<_PmT, _PmK, _PmI, _PmName>> {
    typedef _PmT *type;
};
namespace pm::rt {

// A kernel-scope threadgroup array (`_PmFull`, as declared), or a row of a multi-dimensional
// one (`p[i]`; `_PmE[_PmN]` is what this view indexes): checked at each index. A row is a view
// too, so that `p[i][j]` is tracked as the element [i][j] (a row tracked whole made threads that
// write distinct elements of one row a false data race).
template <class _PmE, uint64_t _PmN, vname _PmName, class _PmFull> struct tg_view<_PmE[_PmN], _PmName, _PmFull> {
    typedef _PmE _PmArray[_PmN];
    _PmArray *pa; // the array (null: `c ? nullptr : array`, MLX's gemv)
    uint32_t line;
    int64_t first; // the number (row by row) of its first element in the declared array
    PM_AI tg_view(_PmArray &a, uint32_t l, int64_t f = 0) : pa(&a), line(l), first(f) {}
    PM_AI tg_view(decltype(nullptr)) : pa(nullptr), line(0), first(0) {}
    static constexpr uint32_t dim = __array_rank(_PmFull) - 1 - __array_rank(_PmE); // the index this view takes
    PM_AI decltype(auto) operator[](vidx i) const {
        if constexpr (__array_rank(_PmFull) == 1) {
            return vcheck(*pa, i.v, _PmN, _PmVArray, line, _PmName.s, i.file, i.line);
        } else if constexpr (!__is_array(_PmE)) { // an element of the last dimension
            static_assert(sizeof(_PmE) <= 4096, "validation: element type over 4 KiB");
            if (__builtin_expect((uint64_t)i.v < _PmN, 1))
                return vcheck(*pa, i.v, _PmN, _PmVArray, line, _PmName.s, i.file, i.line, first, &vdims_v<_PmFull>);
            return *(_PmE *)vindex_out_of_bounds(line, _PmName.s, &vdims_v<_PmFull>, dim, i.v, sizeof(_PmE), i.file,
                                                 i.line);
        } else { // a row: bounds checked here, its elements where they are indexed
            typedef tg_view<_PmE, _PmName, _PmFull> _PmRow;
            constexpr int64_t _PmEach = sizeof(_PmE) / sizeof(__remove_all_extents(_PmE)); // elements per row
            if (__builtin_expect((uint64_t)i.v < _PmN, 1)) return _PmRow{(*pa)[i.v], line, first + i.v * _PmEach};
            void *s = vindex_out_of_bounds(line, _PmName.s, &vdims_v<_PmFull>, dim, i.v, sizeof(_PmE), i.file, i.line);
            return _PmRow{s ? *(_PmE *)s : (*pa)[0], line, first}; // (the run has failed: a row too big for scratch)
        }
    }
    // As a pointer or an array reference (passed to a function, simdgroup_load/store): plain memory.
    template <class _PmU>
        requires(__is_convertible_to(_PmE *, _PmU *))
    PM_AI operator _PmU *() const {
        leave();
        return pa ? &(*pa)[0] : nullptr;
    }
    template <class _PmU>
        requires(!__is_convertible_to(_PmE *, _PmU *))
    PM_AI explicit operator _PmU *() const {
        leave();
        return (_PmU *)pa;
    }
    template <class _PmR> // a template, as above: no built-in operator[] competes with ours
        requires(__is_same(__remove_cv(_PmR), _PmE[_PmN]))
    PM_AI operator _PmR &() const {
        leave();
        return *pa;
    }
    PM_AI void leave() const { // becoming plain memory; the whole array's range for helpers (vsub), not a row's
        vescape(pa, sizeof *pa);
        if constexpr (__is_same(_PmArray, _PmFull)) vleave(pa, sizeof *pa, _PmVArray, line, _PmName.s);
    }
    // `sk + n` (ggml's flash attention: `simdgroup_load(m, sk + 8*i, ...)`): the address, in plain
    // memory as above (a checked pointer would not deduce simdgroup_load's element type)
    PM_AI friend _PmE *operator+(const tg_view &v, int64_t n) { return static_cast<_PmE *>(v) + n; }
    PM_AI friend _PmE *operator+(int64_t n, const tg_view &v) { return static_cast<_PmE *>(v) + n; }
    PM_AI friend _PmE *operator-(const tg_view &v, int64_t n) { return static_cast<_PmE *>(v) - n; }
};

// `auto *p = x;` (MLX's gemv: `const constant auto* s = strides;`) cannot deduce from a checked
// pointer, which is a class: the front end writes `auto p = vauto<C>(x)` instead (CheckedAuto.swift;
// C: `const` stood before the `*`). A checked pointer stays checked (with a const element for C); a
// threadgroup array's view gives its plain first-element pointer (unchecked, as when passed to a
// function); anything else what `auto *` / `const auto *` deduces.
template <class _PmX> inline constexpr bool vis_view = false;
template <class _PmA, vname _PmN, class _PmF> inline constexpr bool vis_view<tg_view<_PmA, _PmN, _PmF>> = true;
template <class _PmX> struct vconst_ptr { typedef _PmX type; };
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmN> struct vconst_ptr<vptr<_PmT, _PmK, _PmI, _PmN>> {
    typedef vptr<const _PmT, _PmK, _PmI, _PmN> type;
};
template <bool _PmC, class _PmX> PM_AI auto vauto(_PmX &&x) {
    typedef __remove_cvref(_PmX) _PmV;
    if constexpr (vis_vptr<_PmV>) {
        if constexpr (_PmC) return typename vconst_ptr<_PmV>::type(x);
        else return _PmV(x);
    } else if constexpr (vis_view<_PmV>) {
        typedef __remove_extent(__remove_pointer(decltype(x.pa))) _PmE;
        if constexpr (_PmC) return (const _PmE *)x;
        else return (_PmE *)x;
    } else if constexpr (_PmC) {
        const auto *p = x;
        return p;
    } else {
        auto *p = x;
        return p;
    }
}

// A checked pointer or threadgroup array passed whole to a function template (CheckedArguments.swift):
// the pointer's own `T *` lvalue, from which `const device T *` and `device T *&` deduce `T` (no
// template deduces from the class), and through which the callee advances it (`x += offset`: the
// bounds stay); the array itself, which decays to `threadgroup T *` or binds `T (&)[N]`. Leaving the
// checked memory like the conversions to plain memory do. Anything else passes through as is.
template <class _PmX> PM_AI decltype(auto) vref(_PmX &&x) {
    typedef __remove_cvref(_PmX) _PmV;
    if constexpr (vis_vptr<_PmV>) {
        x.leave();
        return (x.p);
    } else if constexpr (vis_view<_PmV>) {
        x.leave();
        return (*x.pa);
    } else {
        return static_cast<_PmX &&>(x);
    }
}
} // namespace pm::rt
#endif

#pragma GCC visibility pop
