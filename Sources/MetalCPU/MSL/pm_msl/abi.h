// Compile-time facts about kernel parameters, used by the generated binding
// tables (pm_cpu_bindings): how many bytes a parameter reads at least, and
// whether the kernel can write through it.
#pragma once
#include "pm_kernel_abi.h"

namespace pm::abi {
// A pointer may point at an empty array (the kernel may read nothing), so it
// needs only to be bound; a reference or a value is read whole.
template <class _PmT> constexpr uint32_t bytes_of() {
    if constexpr (__is_pointer(_PmT)) return 0;
    else return (uint32_t)sizeof(__remove_cvref(_PmT));
}

// Read-only: a pointer or reference to const (`device const T*`; `constant T*`
// and `constant T&` too, since the prelude makes `constant` mean const), or a
// value (the kernel gets a copy). Lets pymetal skip copying such buffers back.
template <class _PmT> constexpr uint32_t flags_of() {
    if constexpr (__is_pointer(_PmT)) return __is_const(__remove_pointer(_PmT)) ? PM_BIND_READ_ONLY : 0;
    else if constexpr (__is_reference(_PmT)) return __is_const(__remove_reference_t(_PmT)) ? PM_BIND_READ_ONLY : 0;
    else return PM_BIND_READ_ONLY;
}

// A parameter's type as its binding sees it: shader validation's checked
// pointers (runtime.h, vptr) count as the plain pointers they stand for.
template <class _PmT> struct binding_type { typedef _PmT type; };

template <auto _PmF> struct params;
template <class _PmR, class... _PmA, _PmR (*_PmF)(_PmA...)> struct params<_PmF> {
    template <unsigned _PmI> static constexpr uint32_t bytes() {
        return bytes_of<typename binding_type<__type_pack_element<_PmI, _PmA...>>::type>();
    }
    template <unsigned _PmI> static constexpr uint32_t flags() {
        return flags_of<typename binding_type<__type_pack_element<_PmI, _PmA...>>::type>();
    }
};

template <auto _PmF, unsigned _PmI> constexpr uint32_t param_bytes() { return params<_PmF>::template bytes<_PmI>(); }
template <auto _PmF, unsigned _PmI> constexpr uint32_t param_flags() { return params<_PmF>::template flags<_PmI>(); }
} // namespace pm::abi
