// Compile-time facts about kernel parameters, used by the generated binding
// tables (pm_cpu_bindings): how many bytes a parameter reads at least.
#pragma once
#include "pm_kernel_abi.h"

namespace pm::abi {
// A pointer may point at an empty array (the kernel may read nothing), so it
// needs only to be bound; a reference or a value is read whole.
template <class T> constexpr uint32_t bytes_of() {
    if constexpr (__is_pointer(T)) return 0;
    else return (uint32_t)sizeof(__remove_cvref(T));
}

template <auto F> struct params;
template <class R, class... A, R (*F)(A...)> struct params<F> {
    template <unsigned I> static constexpr uint32_t bytes() { return bytes_of<__type_pack_element<I, A...>>(); }
};

template <auto F, unsigned I> constexpr uint32_t param_bytes() { return params<F>::template bytes<I>(); }
} // namespace pm::abi
