// Fibers for MSL threads on the CPU: a minimal user-mode context switch
// (x86-64 SysV and arm64 AAPCS64) and per-OS-thread fiber stacks.
//
// The switch saves only what the calling convention says a callee must
// preserve (x86-64: rbx, rbp, r12-r15; arm64: x19-x29, lr, d8-d15) plus the
// stack pointer, on the stack being left; no signal mask, no system call (glibc
// swapcontext makes one per switch). MXCSR / FPCR are not switched: kernels
// never change them.
//
// Stacks: one reservation per OS thread of PM_FIBER_MAX slots of
// PM_FIBER_SLOT bytes (a guard page, then the stack); made
// read-write lazily as groups need more fibers, reused across groups and
// dispatches, released when the OS thread exits.
//
// Fiber-local storage without thread-local variables: slots are aligned to
// their (power-of-two) size, and the top 64 bytes of each slot, above the
// stack, say which MSL thread of which worker runs there. here() finds them
// from the stack pointer: a few instructions, where a thread_local in a
// shared object costs a __tls_get_addr call. Each library keeps a small table
// of its reservations to tell fiber stacks from other stacks.
#pragma once
#include <stdint.h>
#include <stddef.h>

// The few system calls the runtime needs, declared here rather than through
// <sys/mman.h> (which drags in <sys/types.h>, <sys/select.h>, ... and their
// global names, `select` among them, into every kernel's translation unit).
// They are bound to the libc symbols by asm labels, not by extern "C": no
// C-linkage entity named mmap & co. exists in the program, so a user's own
// global `mmap` (or <sys/mman.h> itself) cannot conflict with them. Declared
// outside the visibility push below, so the references stay default-visibility
// (resolved against libc by the dynamic linker).
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
namespace pm::rt::sys {
void *mmap(void *, size_t, int, int, int, long) noexcept __asm__("mmap");
int mprotect(void *, size_t, int) noexcept __asm__("mprotect");
int munmap(void *, size_t) noexcept __asm__("munmap");
int madvise(void *, size_t, int) noexcept __asm__("madvise");
int getpagesize() noexcept __asm__("getpagesize");
// Linux x86-64 and arm64 (asm-generic) values.
inline constexpr int prot_none = 0x0, prot_read = 0x1, prot_write = 0x2;
inline constexpr int map_private = 0x02, map_anonymous = 0x20, map_noreserve = 0x4000;
inline constexpr int madv_guard_install = 102; // Linux 6.13+: a guard without a mapping of its own
static inline bool map_failed(void *p) { return p == (void *)-1; } // MAP_FAILED
} // namespace pm::rt::sys
#else
#include <sys/mman.h> // other systems: their own header and values
#include <unistd.h>
namespace pm::rt::sys {
using ::mmap;
using ::mprotect;
using ::munmap;
using ::getpagesize;
static inline int madvise(void *, size_t, int) { return -1; } // no guard regions: mprotect
inline constexpr int madv_guard_install = 0;
inline constexpr int prot_none = PROT_NONE, prot_read = PROT_READ, prot_write = PROT_WRITE;
inline constexpr int map_private = MAP_PRIVATE, map_anonymous = MAP_ANON, map_noreserve = MAP_NORESERVE;
static inline bool map_failed(void *p) { return p == MAP_FAILED; }
} // namespace pm::rt::sys
#endif

#define PM_FIBER_MAX 1024u                 // threads per threadgroup, at most
#define PM_FIBER_SLOT (128u * 1024u)       // guard page + stack + 64-byte header, a power of two
// Below each stack a PROT_NONE guard of one page of the system's size
// (getpagesize: 4 KiB on x86-64, 16 KiB on Apple Silicon and some arm64 Linux).
#define PM_FIBER_REGIONS 16u               // reservations a library tells apart quickly

#pragma GCC visibility push(hidden)
namespace pm::rt::fiber {

// pm_swap(save, to): saves the current context on the current stack, stores
// the stack pointer in *save and resumes the context whose stack pointer is
// `to`. Returns when some other context swaps back to *save.
#if defined(__x86_64__)
__attribute__((naked, noinline)) static void pm_swap(void **save, void *to) {
    __asm__ volatile(
        "pushq %rbp\n\t"
        "pushq %rbx\n\t"
        "pushq %r12\n\t"
        "pushq %r13\n\t"
        "pushq %r14\n\t"
        "pushq %r15\n\t"
        "movq %rsp, (%rdi)\n\t"
        // loads through rsi rather than pops: they need not wait for rsp
        "movq 0(%rsi), %r15\n\t"
        "movq 8(%rsi), %r14\n\t"
        "movq 16(%rsi), %r13\n\t"
        "movq 24(%rsi), %r12\n\t"
        "movq 32(%rsi), %rbx\n\t"
        "movq 40(%rsi), %rbp\n\t"
        "leaq 48(%rsi), %rsp\n\t"
        "retq\n\t");
}
// First code of a new fiber: r12 = entry function, r13 = its argument.
__attribute__((naked, noinline)) static void pm_fiber_start() {
    __asm__ volatile(
        "movq %r13, %rdi\n\t"
        "callq *%r12\n\t"
        "ud2\n\t");
}
// Builds the initial frame of a fiber whose stack ends at `top` (16-aligned):
// pm_swap pops six registers, then returns into pm_fiber_start with the stack
// 16-aligned, so the call inside it enters `entry` with the usual alignment.
static inline void *prepare(void *top, void (*entry)(void *), void *arg) {
    uint64_t *sp = (uint64_t *)top;
    *--sp = (uint64_t)(void *)&pm_fiber_start; // return address of pm_swap
    *--sp = 0;                                 // rbp
    *--sp = 0;                                 // rbx
    *--sp = (uint64_t)(void *)entry;           // r12
    *--sp = (uint64_t)arg;                     // r13
    *--sp = 0;                                 // r14
    *--sp = 0;                                 // r15
    return sp;
}
#elif defined(__aarch64__)
__attribute__((naked, noinline)) static void pm_swap(void **save, void *to) {
    __asm__ volatile(
        "sub sp, sp, #160\n\t"
        "stp x19, x20, [sp, #0]\n\t"
        "stp x21, x22, [sp, #16]\n\t"
        "stp x23, x24, [sp, #32]\n\t"
        "stp x25, x26, [sp, #48]\n\t"
        "stp x27, x28, [sp, #64]\n\t"
        "stp x29, x30, [sp, #80]\n\t"
        "stp d8, d9, [sp, #96]\n\t"
        "stp d10, d11, [sp, #112]\n\t"
        "stp d12, d13, [sp, #128]\n\t"
        "stp d14, d15, [sp, #144]\n\t"
        "mov x9, sp\n\t"
        "str x9, [x0]\n\t"
        "mov sp, x1\n\t"
        "ldp x19, x20, [sp, #0]\n\t"
        "ldp x21, x22, [sp, #16]\n\t"
        "ldp x23, x24, [sp, #32]\n\t"
        "ldp x25, x26, [sp, #48]\n\t"
        "ldp x27, x28, [sp, #64]\n\t"
        "ldp x29, x30, [sp, #80]\n\t"
        "ldp d8, d9, [sp, #96]\n\t"
        "ldp d10, d11, [sp, #112]\n\t"
        "ldp d12, d13, [sp, #128]\n\t"
        "ldp d14, d15, [sp, #144]\n\t"
        "add sp, sp, #160\n\t"
        "ret\n\t");
}
// First code of a new fiber: x19 = entry function, x20 = its argument.
__attribute__((naked, noinline)) static void pm_fiber_start() {
    __asm__ volatile(
        "mov x0, x20\n\t"
        "blr x19\n\t"
        "brk #0\n\t");
}
static inline void *prepare(void *top, void (*entry)(void *), void *arg) {
    uint64_t *sp = (uint64_t *)top - 20; // 160-byte frame, as pm_swap leaves it
    for (int i = 0; i < 20; i++) sp[i] = 0;
    sp[0] = (uint64_t)(void *)entry;            // x19
    sp[1] = (uint64_t)arg;                      // x20
    sp[11] = (uint64_t)(void *)&pm_fiber_start; // x30 (lr)
    return sp;
}
#else
#error "pymetal MSL runtime: fibers need x86-64 or arm64"
#endif

// Who runs on a slot: written when an MSL thread starts on it.
struct slot_header {
    void *owner;    // the worker (runtime.h)
    uint32_t index; // of the MSL thread in its group (not `thread`: an MSL macro)
};

// The reservations of this library's workers (0: free entry).
struct region_table {
    uintptr_t lo[PM_FIBER_REGIONS];
    uint32_t n; // entries ever used (a high-water mark)
};
inline region_table g_regions;

static inline uintptr_t stack_pointer() {
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__("movq %%rsp, %0" : "=r"(sp));
#else
    __asm__("mov %0, sp" : "=r"(sp));
#endif
    return sp;
}

// The slot the caller runs on, or null when it does not run on a fiber
// stack of this library (LOOP mode, or a reservation beyond the table).
__attribute__((always_inline)) static inline const slot_header *here() {
    const uintptr_t sp = stack_pointer();
    uint32_t n = __atomic_load_n(&g_regions.n, __ATOMIC_RELAXED);
    if (n > PM_FIBER_REGIONS) n = PM_FIBER_REGIONS;
    for (uint32_t i = 0; i < n; i++) {
        uintptr_t lo = __atomic_load_n(&g_regions.lo[i], __ATOMIC_RELAXED);
        if (lo && sp - lo < (uintptr_t)PM_FIBER_SLOT * PM_FIBER_MAX)
            return (const slot_header *)((sp | (PM_FIBER_SLOT - 1)) + 1 - 64);
    }
    return nullptr;
}

// The stacks of one OS thread.
struct stacks {
    unsigned char *base = nullptr; // reservation: PM_FIBER_MAX slots of guard + stack + header
    uint32_t ready = 0;            // slots made read-write so far
    uint32_t region = 0;           // entry in g_regions + 1 (0: none); all zero is the initial state

    static constexpr size_t slot = PM_FIBER_SLOT;

    // Makes sure `n` stacks are usable. Returns false if the system refuses.
    bool reserve(uint32_t n) {
        if (n > PM_FIBER_MAX) return false;
        if (!base) {
            // One slot more than needed, to align the start to a slot.
            size_t bytes = slot * (PM_FIBER_MAX + 1);
            void *p = sys::mmap(nullptr, bytes, sys::prot_none,
                                sys::map_private | sys::map_anonymous | sys::map_noreserve, -1, 0);
            if (sys::map_failed(p)) return false;
            uintptr_t lo = ((uintptr_t)p + slot - 1) & ~(uintptr_t)(slot - 1);
            if (lo != (uintptr_t)p) sys::munmap(p, lo - (uintptr_t)p);
            uintptr_t end = (uintptr_t)p + bytes, hi = lo + slot * PM_FIBER_MAX;
            if (end != hi) sys::munmap((void *)hi, end - hi);
            base = (unsigned char *)lo;
            claim_region(lo);
        }
        if (n > ready) {
            // One mprotect for the whole new range keeps it cheap; the guard
            // pages inside it are then made one by one (first use only). As
            // guard regions where the kernel has them: a PROT_NONE page would
            // split the mapping, two mappings a stack, and a process may have
            // only vm.max_map_count (65530) mappings in all.
            unsigned char *lo = base + slot * ready;
            if (sys::mprotect(lo, slot * (n - ready), sys::prot_read | sys::prot_write) != 0) return false;
            const size_t page = (size_t)sys::getpagesize();
            for (uint32_t i = ready; i < n; i++)
                if (sys::madvise(base + slot * i, page, sys::madv_guard_install) != 0 &&
                    sys::mprotect(base + slot * i, page, sys::prot_none) != 0)
                    return false;
            ready = n;
        }
        return true;
    }
    // Top of stack i, staggered by a few cache lines per fiber so that the
    // hot top frames of many fibers do not all map to the same cache sets.
    void *top(uint32_t i) const {
        unsigned char *end = base + slot * (i + 1);
        return end - 64 - (size_t)(i & 63) * 64;
    }
    slot_header &header(uint32_t i) const { return *(slot_header *)(base + slot * (i + 1) - 64); }
    void claim_region(uintptr_t lo) {
        for (uint32_t i = 0; i < PM_FIBER_REGIONS; i++) {
            uintptr_t expect = 0;
            if (__atomic_compare_exchange_n(&g_regions.lo[i], &expect, lo, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED)) {
                region = i + 1;
                uint32_t n = __atomic_load_n(&g_regions.n, __ATOMIC_RELAXED);
                while (n < i + 1 && !__atomic_compare_exchange_n(&g_regions.n, &n, i + 1, true, __ATOMIC_ACQ_REL,
                                                                  __ATOMIC_RELAXED)) {
                }
                return;
            }
        }
    }
    void release() {
        if (region) __atomic_store_n(&g_regions.lo[region - 1], (uintptr_t)0, __ATOMIC_RELEASE);
        region = 0;
        if (base) sys::munmap(base, slot * PM_FIBER_MAX);
        base = nullptr;
        ready = 0;
    }
};

} // namespace pm::rt::fiber
#pragma GCC visibility pop
