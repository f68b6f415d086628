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
// The parts: runtime_common.h (state, errors, threadgroup sites, the library
// table, arguments, groups), runtime_loop.h, runtime_fibers.h,
// runtime_lockstep.h (one per mode), runtime_validation.h (checked accesses,
// PM_VALIDATION builds), runtime_sync.h (barriers, SIMD-group rendezvous and
// yield points, which every mode reaches); the launcher run() is here.
//
// Errors are reported, never hung on: threads waiting at different barriers
// (runtime_common.h, gpu_barriers: a thread that returned counts as arrived,
// except under PM_VALIDATION), lanes of one simdgroup waiting at different SIMD
// call sites, any other deadlock, a
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
#include "pm_msl/runtime_common.h"
#include "pm_msl/runtime_loop.h"
#include "pm_msl/runtime_fibers.h"
#include "pm_msl/runtime_lockstep.h"

#pragma GCC visibility push(hidden)

namespace pm::rt {

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

#pragma GCC visibility pop

#include "pm_msl/runtime_validation.h"
#include "pm_msl/runtime_sync.h"
