// MSL atomics (metal_atomic): atomic<T> and the *_explicit functions, on real
// hardware atomics (device memory is shared by several OS threads).
//
// atomic<T> has the size and alignment of T, so a buffer of uint can be bound
// as `device atomic_uint *`. Every function takes plain and volatile pointers.
// Supported: int, uint (all operations), bool (load/store/exchange/CAS),
// float (load/store/exchange/CAS/add/sub), long/ulong (all operations;
// MSL's atomic_ulong has atomic_min/max_explicit).
#pragma once
#include "types.h"

#ifdef PM_VALIDATION
// Shader validation: an atomic operation on an element just accessed through a
// checked pointer (`(device atomic_uint *)&hist[i]`) is no plain write (runtime_validation.h).
namespace pm::rt {
inline void vatomic(const volatile void *p);
}
#define PM_ATOMIC_SEEN(obj) ::pm::rt::vatomic(obj)
#else
#define PM_ATOMIC_SEEN(obj) (void)0
#endif

namespace metal {

template <class _PmT> struct alignas(sizeof(_PmT)) atomic {
    _PmT pm_value;
};
typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<bool> atomic_bool;
typedef atomic<float> atomic_float;
typedef atomic<long> atomic_long;
typedef atomic<ulong> atomic_ulong;
static_assert(sizeof(atomic_uint) == 4 && alignof(atomic_uint) == 4, "atomic layout");

template <class _PmT> inline constexpr bool pm_atomic_int = pm_same<_PmT, int> || pm_same<_PmT, uint> || pm_same<_PmT, long> || pm_same<_PmT, ulong>;
template <class _PmT> inline constexpr bool pm_atomic_arith = pm_atomic_int<_PmT> || pm_same<_PmT, float>;

// The order argument of a failed compare-exchange may not be release / acq_rel.
inline int pm_fail_order(memory_order o) {
    return o == memory_order_release ? __ATOMIC_RELAXED : o == memory_order_acq_rel ? __ATOMIC_ACQUIRE : (int)o;
}
inline int pm_load_order(memory_order o) {
    return (o == memory_order_release) ? __ATOMIC_RELAXED : (o == memory_order_acq_rel) ? __ATOMIC_ACQUIRE : (int)o;
}
inline int pm_store_order(memory_order o) {
    return (o == memory_order_acquire) ? __ATOMIC_RELAXED : (o == memory_order_acq_rel) ? __ATOMIC_RELEASE : (int)o;
}

template <class _PmT>
inline void atomic_store_explicit(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> desired, memory_order order,
                                  memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    __atomic_store(&obj->pm_value, &desired, pm_store_order(order)); // generic forms: float too
}
template <class _PmT>
inline _PmT atomic_load_explicit(const volatile atomic<_PmT> *obj, memory_order order, memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    _PmT r;
    __atomic_load(&obj->pm_value, &r, pm_load_order(order));
    return r;
}
template <class _PmT>
inline _PmT atomic_exchange_explicit(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> desired, memory_order order,
                                  memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    _PmT r;
    __atomic_exchange(&obj->pm_value, &desired, &r, (int)order);
    return r;
}
// Both forms are strong (never fail spuriously), which the weak form allows.
template <class _PmT>
inline bool atomic_compare_exchange_weak_explicit(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> *expected,
                                                  pm_identity_t<_PmT> desired, memory_order succ, memory_order fail,
                                                  memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    return __atomic_compare_exchange(&obj->pm_value, expected, &desired, false, (int)succ, pm_fail_order(fail));
}
template <class _PmT>
inline bool atomic_compare_exchange_strong_explicit(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> *expected,
                                                    pm_identity_t<_PmT> desired, memory_order succ, memory_order fail,
                                                    memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    return __atomic_compare_exchange(&obj->pm_value, expected, &desired, false, (int)succ, pm_fail_order(fail));
}

#define PM_ATOMIC_RMW(name, builtin, cond)                                                         \
    template <class _PmT>                                                                             \
        requires(cond)                                                                             \
    inline _PmT name(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> operand, memory_order order,           \
                  memory_scope = thread_scope_device) {                                            \
        PM_ATOMIC_SEEN(obj);                                                                       \
        return builtin(&obj->pm_value, operand, (int)order);                                       \
    }
PM_ATOMIC_RMW(atomic_fetch_add_explicit, __atomic_fetch_add, pm_atomic_arith<_PmT>)
PM_ATOMIC_RMW(atomic_fetch_sub_explicit, __atomic_fetch_sub, pm_atomic_arith<_PmT>)
PM_ATOMIC_RMW(atomic_fetch_and_explicit, __atomic_fetch_and, pm_atomic_int<_PmT>)
PM_ATOMIC_RMW(atomic_fetch_or_explicit, __atomic_fetch_or, pm_atomic_int<_PmT>)
PM_ATOMIC_RMW(atomic_fetch_xor_explicit, __atomic_fetch_xor, pm_atomic_int<_PmT>)
PM_ATOMIC_RMW(atomic_fetch_min_explicit, __atomic_fetch_min, pm_atomic_int<_PmT>)
PM_ATOMIC_RMW(atomic_fetch_max_explicit, __atomic_fetch_max, pm_atomic_int<_PmT>)
#undef PM_ATOMIC_RMW
// atomic_ulong's min / max (no result).
template <class _PmT>
    requires(pm_atomic_int<_PmT>)
inline void atomic_min_explicit(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> operand, memory_order order,
                                memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    __atomic_fetch_min(&obj->pm_value, operand, (int)order);
}
template <class _PmT>
    requires(pm_atomic_int<_PmT>)
inline void atomic_max_explicit(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> operand, memory_order order,
                                memory_scope = thread_scope_device) {
    PM_ATOMIC_SEEN(obj);
    __atomic_fetch_max(&obj->pm_value, operand, (int)order);
}

// Sequentially consistent forms without _explicit (older MSL).
template <class _PmT> inline void atomic_store(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> desired) {
    atomic_store_explicit(obj, desired, memory_order_seq_cst);
}
template <class _PmT> inline _PmT atomic_load(const volatile atomic<_PmT> *obj) {
    return atomic_load_explicit(obj, memory_order_seq_cst);
}
template <class _PmT> inline _PmT atomic_exchange(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> desired) {
    return atomic_exchange_explicit(obj, desired, memory_order_seq_cst);
}
template <class _PmT>
inline bool atomic_compare_exchange_weak(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> *expected, pm_identity_t<_PmT> desired) {
    return atomic_compare_exchange_weak_explicit(obj, expected, desired, memory_order_seq_cst, memory_order_seq_cst);
}
#define PM_ATOMIC_SC(name)                                                                 \
    template <class _PmT> inline _PmT name(volatile atomic<_PmT> *obj, pm_identity_t<_PmT> operand) {  \
        return name##_explicit(obj, operand, memory_order_seq_cst);                        \
    }
PM_ATOMIC_SC(atomic_fetch_add)
PM_ATOMIC_SC(atomic_fetch_sub)
PM_ATOMIC_SC(atomic_fetch_and)
PM_ATOMIC_SC(atomic_fetch_or)
PM_ATOMIC_SC(atomic_fetch_xor)
PM_ATOMIC_SC(atomic_fetch_min)
PM_ATOMIC_SC(atomic_fetch_max)
#undef PM_ATOMIC_SC

// Fence. Every memory kind lives in ordinary CPU memory, so the flags and the
// scope only matter through `order` (relaxed: no effect).
inline void atomic_thread_fence(mem_flags flags, memory_order order, thread_scope scope = thread_scope_device) {
    (void)flags;
    (void)scope;
    __atomic_thread_fence((int)order);
}

} // namespace metal
