// Compile-time facts about kernel parameters, used by the generated binding
// tables (pm_cpu_bindings): how many bytes a parameter reads at least,
// whether the kernel can write through it, and its element type (what Metal's
// reflection reports as a binding's data type and size).
#pragma once
#include "pm_kernel_abi.h"

namespace metal { template <class _PmT> struct atomic; }

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

// A parameter's type as its binding sees it: shader validation's checked
// pointers (runtime.h, vptr) count as the plain pointers they stand for.
template <class _PmT> struct binding_type { typedef _PmT type; };

// The element type: pointee, referenced or value type, without cv.
template <class _PmT> using element_t = __remove_cvref(__remove_pointer(__remove_reference_t(_PmT)));
template <class _PmT> struct unatomic { typedef _PmT type; static constexpr uint32_t flag = 0; };
template <class _PmT> struct unatomic<::metal::atomic<_PmT>> { typedef _PmT type; static constexpr uint32_t flag = PM_BIND_ATOMIC; };

template <class _PmT> constexpr uint32_t form_of() {
    if constexpr (__is_pointer(__remove_reference_t(_PmT))) return PM_BIND_POINTER;
    else if constexpr (__is_reference(_PmT)) return PM_BIND_REFERENCE;
    else return 0;
}

// PM_ELEM_* | lane bytes << 8 | lanes << 16 (pm_binding.type).
template <class _PmT> constexpr uint32_t type_of() {
    typedef element_t<_PmT> _PmE;
    if constexpr (__is_void(_PmE)) return PM_ELEM_OTHER;
    else {
        typedef ::metal::pm_uncv_t<typename unatomic<_PmE>::type> _PmV;
        typedef ::metal::pm_elem_t<_PmV> _PmS;
        uint32_t kind = PM_ELEM_OTHER;
        if constexpr (::metal::pm_same<_PmS, bool>) kind = PM_ELEM_BOOL;
        else if constexpr (::metal::pm_same<_PmS, ::metal::bfloat>) kind = PM_ELEM_BFLOAT;
        else if constexpr (::metal::pm_is_float<_PmS>) kind = PM_ELEM_FLOAT;
        else if constexpr (::metal::pm_is_int<_PmS>) kind = ::metal::pm_is_signed<_PmS> ? PM_ELEM_INT : PM_ELEM_UINT;
        if (kind == PM_ELEM_OTHER) return PM_ELEM_OTHER;
        return kind | (uint32_t)sizeof(_PmS) << 8 | (uint32_t)::metal::pm_width<_PmV> << 16;
    }
}

template <class _PmT> constexpr uint32_t size_of() {
    if constexpr (__is_void(element_t<_PmT>)) return 0;
    else return (uint32_t)sizeof(element_t<_PmT>);
}

template <auto _PmF> struct params;
template <class _PmR, class... _PmA, _PmR (*_PmF)(_PmA...)> struct params<_PmF> {
    // Parameter _PmI as its binding sees it (validation's checked pointers as plain pointers).
    template <unsigned _PmI> using param_t = typename binding_type<__type_pack_element<_PmI, _PmA...>>::type;
    template <unsigned _PmI> static constexpr uint32_t bytes() { return bytes_of<param_t<_PmI>>(); }
    template <unsigned _PmI> static constexpr uint32_t flags() {
        return flags_of<param_t<_PmI>>() | form_of<param_t<_PmI>>() | unatomic<element_t<param_t<_PmI>>>::flag;
    }
    template <unsigned _PmI> static constexpr uint32_t type() { return type_of<param_t<_PmI>>(); }
    template <unsigned _PmI> static constexpr uint32_t size() { return size_of<param_t<_PmI>>(); }
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
template <auto _PmF, unsigned _PmI> constexpr uint32_t param_type() { return params<_PmF>::template type<_PmI>(); }
template <auto _PmF, unsigned _PmI> constexpr uint32_t param_size() { return params<_PmF>::template size<_PmI>(); }
} // namespace pm::abi
