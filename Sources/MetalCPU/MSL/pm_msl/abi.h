// Compile-time facts about kernel parameters, used by the generated binding
// tables (pm_cpu_bindings): how many bytes a parameter reads at least.
#pragma once
#include "pm_kernel_abi.h"

namespace pm::abi {
// A pointer may point at an empty array (the kernel may read nothing), so it
// needs only to be bound; a reference or a value is read whole.
template <class _PmT> constexpr uint32_t bytes_of() {
    if constexpr (__is_pointer(_PmT)) return 0;
    else return (uint32_t)sizeof(__remove_cvref(_PmT));
}

template <auto _PmF> struct params;
template <class _PmR, class... _PmA, _PmR (*_PmF)(_PmA...)> struct params<_PmF> {
    template <unsigned _PmI> static constexpr uint32_t bytes() {
        return bytes_of<__type_pack_element<_PmI, _PmA...>>();
    }
};

template <auto _PmF, unsigned _PmI> constexpr uint32_t param_bytes() { return params<_PmF>::template bytes<_PmI>(); }
} // namespace pm::abi
