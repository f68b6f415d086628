// Compile-time facts about kernel parameters, used by the generated binding
// tables (pm_cpu_bindings): how many bytes a parameter reads at least, and
// whether the kernel can write through it.
#pragma once
#include "pm_kernel_abi.h"

namespace pm::abi {
// Scalars and clang vectors: element type and width (boolN, packed types: 0).
template <class _PmT> struct pm_vinfo_width { typedef _PmT elem; static constexpr int value = 1; };
template <class _PmT, int _PmN> struct pm_vinfo_width<_PmT __attribute__((ext_vector_type(_PmN)))> {
    typedef _PmT elem;
    static constexpr int value = _PmN;
};

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

template <auto _PmF> struct params;
template <class _PmR, class... _PmA, _PmR (*_PmF)(_PmA...)> struct params<_PmF> {
    template <unsigned _PmI> static constexpr uint32_t bytes() {
        return bytes_of<__type_pack_element<_PmI, _PmA...>>();
    }
    template <unsigned _PmI> static constexpr uint32_t flags() {
        return flags_of<__type_pack_element<_PmI, _PmA...>>();
    }
};

// Function constants: the MTLDataType of a declared type (MTLDataType's raw
// values; 0 for a type MetalCPU cannot set), and a value from its bytes.
template <class _PmT> constexpr uint32_t data_type() {
    typedef __remove_cv(_PmT) _PmU;
    constexpr int n = pm_vinfo_width<_PmU>::value;
    typedef typename pm_vinfo_width<_PmU>::elem _PmE;
    uint32_t base = __is_same(_PmE, float) ? 3 : __is_same(_PmE, _Float16) ? 16 : __is_same(_PmE, int) ? 29
        : __is_same(_PmE, unsigned int) ? 33 : __is_same(_PmE, short) ? 37 : __is_same(_PmE, unsigned short) ? 41
        : __is_same(_PmE, char) || __is_same(_PmE, signed char) ? 45 : __is_same(_PmE, unsigned char) ? 49
        : __is_same(_PmE, bool) ? 53 : __is_same(_PmE, long) ? 81 : __is_same(_PmE, unsigned long) ? 85
        : __is_same(_PmE, __bf16) ? 121 : 0;
    return base == 0 || n < 1 || n > 4 ? 0 : base + (uint32_t)(n - 1);
}
template <class _PmT, size_t _PmN> constexpr _PmT constant_value(const unsigned char (&bytes)[_PmN]) {
    struct raw { unsigned char b[sizeof(_PmT)]; } r{};
    for (size_t i = 0; i < _PmN && i < sizeof(_PmT); i++) r.b[i] = bytes[i];
    return __builtin_bit_cast(_PmT, r);
}

template <auto _PmF, unsigned _PmI> constexpr uint32_t param_bytes() { return params<_PmF>::template bytes<_PmI>(); }
template <auto _PmF, unsigned _PmI> constexpr uint32_t param_flags() { return params<_PmF>::template flags<_PmI>(); }
} // namespace pm::abi
