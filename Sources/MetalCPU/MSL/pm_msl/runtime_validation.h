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

// `name`: the parameter's or array's name in the source ("" if unknown);
// `index`: its [[buffer(n)]] / [[threadgroup(n)]] index, or an array's line.
__attribute__((noinline, cold)) inline void *out_of_bounds(unsigned kind, unsigned index, const char *name,
                                                          int64_t element, uint64_t count, uint32_t size,
                                                          const char *file, uint32_t line) {
    worker *w = tls_w;
    if (w && !w->err) {
        const u3 pos = thread_position(w);
        char what[160];
        const char *q = *name ? "`" : "";
        if (kind == _PmVBuffer) __builtin_snprintf(what, sizeof what, "%s%s%s[[buffer(%u)]]", q, name, *name ? "` " : "", index);
        else if (kind == _PmVThreadgroup)
            __builtin_snprintf(what, sizeof what, "%s%s%s[[threadgroup(%u)]]", q, name, *name ? "` " : "", index);
        else __builtin_snprintf(what, sizeof what, "the threadgroup array %s%s%sdeclared at line %u", q, name, *name ? "` " : "", index);
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
    alignas(64) static thread_local unsigned char scratch[4096];
    __builtin_memset(scratch, 0, size < sizeof scratch ? size : sizeof scratch);
    return scratch;
}

template <class _PmT> PM_AI _PmT &vcheck(_PmT *base, int64_t e, uint64_t count, unsigned kind, unsigned index,
                                         const char *name, const char *file, uint32_t line) {
    static_assert(sizeof(_PmT) <= 4096, "validation: element type over 4 KiB");
    if (__builtin_expect((uint64_t)e < count, 1)) return base[e];
    return *(_PmT *)out_of_bounds(kind, index, name, e, count, sizeof(_PmT), file, line);
}

// A bounds-checked `T *` buffer or threadgroup parameter: `base` and `count`
// are the binding's, `p` where this pointer points (after arithmetic).
template <class _PmT, unsigned _PmK, unsigned _PmI, vname _PmName> struct vptr {
    _PmT *p, *base;
    uint64_t count;
    PM_AI vptr(_PmT *b, uint64_t n) : p(b), base(b), count(n) {}
    PM_AI vptr(_PmT *at, _PmT *b, uint64_t n) : p(at), base(b), count(n) {}
    PM_AI _PmT &operator[](vidx i) const {
        return vcheck(base, (p - base) + i.v, count, _PmK, _PmI, _PmName.s, i.file, i.line);
    }
    PM_AI _PmT &operator*() const { return vcheck(base, p - base, count, _PmK, _PmI, _PmName.s, nullptr, 0); }
    PM_AI _PmT *operator->() const { return &vcheck(base, p - base, count, _PmK, _PmI, _PmName.s, nullptr, 0); }
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
template <class _PmT, unsigned _PmK, unsigned _PmI, pm::rt::vname _PmName>
struct pm::abi::binding_type<pm::rt::vptr<_PmT, _PmK, _PmI, _PmName>> {
    typedef _PmT *type;
};
namespace pm::rt {

// A kernel-scope threadgroup array, checked on its first index.
template <class _PmE, uint64_t _PmN, vname _PmName> struct tg_view<_PmE[_PmN], _PmName> {
    _PmE (&a)[_PmN];
    uint32_t line;
    PM_AI _PmE &operator[](vidx i) const { return vcheck(&a[0], i.v, _PmN, _PmVArray, line, _PmName.s, i.file, i.line); }
    template <class _PmU>
        requires(__is_convertible_to(_PmE *, _PmU *))
    PM_AI operator _PmU *() const { return &a[0]; }
    template <class _PmU>
        requires(!__is_convertible_to(_PmE *, _PmU *))
    PM_AI explicit operator _PmU *() const { return (_PmU *)&a[0]; }
};
} // namespace pm::rt
#endif

#pragma GCC visibility pop
