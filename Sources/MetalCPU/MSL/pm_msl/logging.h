// Shader logging (Metal 3.2's <metal_logging>): `os_log_default.log("i=%d", i)`
// and `os_log` objects with a subsystem and a category. Messages are
// printf-formatted here, in the thread that logs, and handed whole to the
// host through pm_cpu_log_sink (pm_kernel_abi.h), which keeps each thread's
// messages in order; pymetal passes them to Python's `logging` (logger
// "pymetal.kernel"). As on a Mac, logging happens only in a library compiled
// with logging (pm.compile(..., logging=True): PM_KERNEL_LOGGING); otherwise
// the calls do nothing. Arguments: scalars (half is passed as a double, bool
// as an int) and strings; a vector is refused at compile time.
#pragma once
#include <stdint.h>
#include "pm_kernel_abi.h"
#include "pm_msl/types.h"
#include "pm_msl/runtime.h"

#ifdef PM_KERNEL_LOGGING
// One definition per library (weak: a library made of several objects keeps one).
extern "C" __attribute__((weak, visibility("default"))) pm_log_fn pm_cpu_log_sink = nullptr;
#endif

#pragma GCC visibility push(hidden)
namespace pm::rt {
template <class _PmT> __attribute__((always_inline)) inline auto log_arg(_PmT v) {
    typedef __remove_cvref(_PmT) _PmU;
    if constexpr (__is_pointer(_PmU)) return v;
    else if constexpr (__is_same(_PmU, half)) return (double)v;
    else if constexpr (__is_same(_PmU, bool)) return (int)v;
    else {
        static_assert(::metal::pm_width<_PmU> == 1, "os_log: log a vector's components one by one");
        return v;
    }
}
// LOCKSTEP mode runs a statement with a SIMD-group call twice (runtime_lockstep.h):
// the first pass, whose SIMD results are placeholders, logs nothing.
inline bool log_collect_pass() {
    const worker *w = tls_w;
    if (!w || w->mode != _PmModeLockstep || w->ls_deliver) return false;
    const uint32_t i = w->cur;
    return (w->sg[i / PM_SIMD_WIDTH].arrived_mask >> (i % PM_SIMD_WIDTH)) & 1u;
}
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wformat-nonliteral"
__attribute__((noinline)) inline void log_message(uint32_t level, const char *subsystem, const char *category,
                                                  const char *fmt, ...) {
#ifdef PM_KERNEL_LOGGING
    const pm_log_fn sink = __atomic_load_n(&pm_cpu_log_sink, __ATOMIC_ACQUIRE);
    if (!sink || log_collect_pass()) return;
    char msg[1024];
    __builtin_va_list ap;
    __builtin_va_start(ap, fmt);
    __builtin_vsnprintf(msg, sizeof msg, fmt, ap);
    __builtin_va_end(ap);
    sink(level, subsystem, category, msg);
#else
    (void)level, (void)subsystem, (void)category, (void)fmt;
#endif
}
#pragma clang diagnostic pop
} // namespace pm::rt

namespace metal {
struct os_log {
    const char *subsystem, *category;
    constexpr os_log(const char *_PmS, const char *_PmC) : subsystem(_PmS), category(_PmC) {}
    template <class... _PmA> void log(const char *_PmF, _PmA... _PmV) const {
        ::pm::rt::log_message(0, subsystem, category, _PmF, ::pm::rt::log_arg(_PmV)...);
    }
    template <class... _PmA> void log_info(const char *_PmF, _PmA... _PmV) const {
        ::pm::rt::log_message(1, subsystem, category, _PmF, ::pm::rt::log_arg(_PmV)...);
    }
    template <class... _PmA> void log_debug(const char *_PmF, _PmA... _PmV) const {
        ::pm::rt::log_message(2, subsystem, category, _PmF, ::pm::rt::log_arg(_PmV)...);
    }
    template <class... _PmA> void log_error(const char *_PmF, _PmA... _PmV) const {
        ::pm::rt::log_message(3, subsystem, category, _PmF, ::pm::rt::log_arg(_PmV)...);
    }
    template <class... _PmA> void log_fault(const char *_PmF, _PmA... _PmV) const {
        ::pm::rt::log_message(4, subsystem, category, _PmF, ::pm::rt::log_arg(_PmV)...);
    }
};
inline constexpr os_log os_log_default("", "");
} // namespace metal
#pragma GCC visibility pop
