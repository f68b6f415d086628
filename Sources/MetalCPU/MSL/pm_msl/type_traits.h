// <metal_type_traits> and the parts of <metal_utility> kernels use (declval,
// move), in namespace metal as the specification lists them: C++14's
// <type_traits> (clang builtins, no libstdc++: see tests/msl_runtime/hygiene.sh)
// with MSL's own types counted where MSL counts them: half and bfloat are
// floating-point, vectors are not arithmetic but is_vector, vec_elements and
// make_scalar describe them.
#pragma once
#include "types.h"

namespace metal {
template <class _PmT, _PmT _PmV> struct integral_constant {
    static constexpr _PmT value = _PmV;
    typedef _PmT value_type;
    typedef integral_constant type;
    constexpr operator value_type() const noexcept { return value; }
    constexpr value_type operator()() const noexcept { return value; }
};
template <bool _PmB> using bool_constant = integral_constant<bool, _PmB>;
typedef bool_constant<true> true_type;
typedef bool_constant<false> false_type;

template <bool _PmC, class _PmT = void> struct enable_if {};
template <class _PmT> struct enable_if<true, _PmT> { typedef _PmT type; };
template <bool _PmC, class _PmT = void> using enable_if_t = typename enable_if<_PmC, _PmT>::type;
template <bool _PmC, class _PmA, class _PmB> struct conditional { typedef _PmA type; };
template <class _PmA, class _PmB> struct conditional<false, _PmA, _PmB> { typedef _PmB type; };
template <bool _PmC, class _PmA, class _PmB> using conditional_t = typename conditional<_PmC, _PmA, _PmB>::type;

// Transformations
#define PM_TRANSFORM(name, expr)                                  \
    template <class _PmT> struct name { typedef expr type; };     \
    template <class _PmT> using name##_t = typename name<_PmT>::type;
PM_TRANSFORM(remove_const, __remove_const(_PmT))
PM_TRANSFORM(remove_volatile, __remove_volatile(_PmT))
PM_TRANSFORM(remove_cv, __remove_cv(_PmT))
PM_TRANSFORM(remove_reference, __remove_reference_t(_PmT))
PM_TRANSFORM(remove_cvref, __remove_cvref(_PmT))
PM_TRANSFORM(remove_pointer, __remove_pointer(_PmT))
PM_TRANSFORM(remove_extent, __remove_extent(_PmT))
PM_TRANSFORM(remove_all_extents, __remove_all_extents(_PmT))
PM_TRANSFORM(add_const, const _PmT)
PM_TRANSFORM(add_volatile, volatile _PmT)
PM_TRANSFORM(add_cv, const volatile _PmT)
PM_TRANSFORM(add_pointer, __add_pointer(_PmT))
PM_TRANSFORM(add_lvalue_reference, __add_lvalue_reference(_PmT))
PM_TRANSFORM(add_rvalue_reference, __add_rvalue_reference(_PmT))
PM_TRANSFORM(decay, __decay(_PmT))
PM_TRANSFORM(make_signed, __make_signed(_PmT))
PM_TRANSFORM(make_unsigned, __make_unsigned(_PmT))
PM_TRANSFORM(underlying_type, __underlying_type(_PmT))
PM_TRANSFORM(type_identity, _PmT)
// MSL's remove_addrspace strips the address space (device, constant, threadgroup, thread) from a
// type and keeps its cv-qualifiers: here types carry no address space (the front end removes
// them, `constant` reads as `const`), so it is the type itself.
PM_TRANSFORM(remove_addrspace, _PmT)
// The element type of a vector; a scalar is its own.
PM_TRANSFORM(make_scalar, pm_elem_t<_PmT>)
#undef PM_TRANSFORM

// Properties: name<T>::value and name_v<T>.
#define PM_TRAIT(name, ...)                                                  \
    template <class _PmT> struct name : bool_constant<(__VA_ARGS__)> {};     \
    template <class _PmT> inline constexpr bool name##_v = name<_PmT>::value;
PM_TRAIT(is_void, __is_void(_PmT))
PM_TRAIT(is_null_pointer, __is_same(__remove_cv(_PmT), decltype(nullptr)))
PM_TRAIT(is_integral, pm_is_int<__remove_cv(_PmT)> || __is_same(__remove_cv(_PmT), bool))
PM_TRAIT(is_floating_point, pm_is_float<__remove_cv(_PmT)> || pm_is_double<__remove_cv(_PmT)>)
PM_TRAIT(is_arithmetic, is_integral_v<_PmT> || is_floating_point_v<_PmT>)
PM_TRAIT(is_vector, pm_vinfo<pm_uncv_t<_PmT>>::is_any_vec)
PM_TRAIT(is_array, __is_array(_PmT))
PM_TRAIT(is_pointer, __is_pointer(_PmT))
PM_TRAIT(is_lvalue_reference, __is_lvalue_reference(_PmT))
PM_TRAIT(is_rvalue_reference, __is_rvalue_reference(_PmT))
PM_TRAIT(is_reference, __is_reference(_PmT))
PM_TRAIT(is_member_pointer, __is_member_pointer(_PmT))
PM_TRAIT(is_enum, __is_enum(_PmT))
PM_TRAIT(is_union, __is_union(_PmT))
PM_TRAIT(is_class, __is_class(_PmT))
PM_TRAIT(is_function, __is_function(_PmT))
PM_TRAIT(is_fundamental, is_arithmetic_v<_PmT> || is_void_v<_PmT> || is_null_pointer_v<_PmT>)
PM_TRAIT(is_scalar, is_arithmetic_v<_PmT> || is_enum_v<_PmT> || is_pointer_v<_PmT> || is_null_pointer_v<_PmT> ||
                        is_member_pointer_v<_PmT>)
PM_TRAIT(is_object, __is_object(_PmT))
PM_TRAIT(is_compound, !is_fundamental_v<_PmT>)
PM_TRAIT(is_const, __is_const(_PmT))
PM_TRAIT(is_volatile, __is_volatile(_PmT))
PM_TRAIT(is_trivial, __is_trivial(_PmT))
PM_TRAIT(is_trivially_copyable, __is_trivially_copyable(_PmT))
PM_TRAIT(is_standard_layout, __is_standard_layout(_PmT))
PM_TRAIT(is_polymorphic, __is_polymorphic(_PmT))
PM_TRAIT(is_abstract, __is_abstract(_PmT))
PM_TRAIT(is_signed, __is_signed(_PmT))
PM_TRAIT(is_unsigned, __is_unsigned(_PmT))
#undef PM_TRAIT
template <class _PmA, class _PmB> struct is_same : bool_constant<__is_same(_PmA, _PmB)> {};
template <class _PmA, class _PmB> inline constexpr bool is_same_v = __is_same(_PmA, _PmB);
template <class _PmA, class _PmB> struct is_base_of : bool_constant<__is_base_of(_PmA, _PmB)> {};
template <class _PmA, class _PmB> inline constexpr bool is_base_of_v = __is_base_of(_PmA, _PmB);
template <class _PmA, class _PmB> struct is_convertible : bool_constant<__is_convertible_to(_PmA, _PmB)> {};
template <class _PmA, class _PmB> inline constexpr bool is_convertible_v = __is_convertible_to(_PmA, _PmB);
template <class _PmA, class _PmB> struct is_assignable : bool_constant<__is_assignable(_PmA, _PmB)> {};
template <class _PmA, class _PmB> inline constexpr bool is_assignable_v = __is_assignable(_PmA, _PmB);
template <class _PmT, class... _PmA> struct is_constructible : bool_constant<__is_constructible(_PmT, _PmA...)> {};
template <class _PmT, class... _PmA> inline constexpr bool is_constructible_v = __is_constructible(_PmT, _PmA...);
// Number of elements of a vector (1 for a scalar).
template <class _PmT> struct vec_elements : integral_constant<int, pm_width<_PmT>> {};
template <class _PmT> inline constexpr int vec_elements_v = pm_width<_PmT>;
template <class _PmT> struct alignment_of : integral_constant<size_t, alignof(_PmT)> {};
template <class _PmT> inline constexpr size_t alignment_of_v = alignof(_PmT);

// Apple-internal names that kernels use under `#pragma METAL internals : enable`: MLX's atomic.h
// (_disjunction), candle's reduce.metal (__is_valid_simdgroup_type; it specializes
// _numeric_limits_impl, which numeric_limits derives from: types.h).
template <class... _PmB> struct _disjunction : false_type {};
template <class _PmB, class... _PmR>
struct _disjunction<_PmB, _PmR...> : conditional_t<bool(_PmB::value), _PmB, _disjunction<_PmR...>> {};
template <class... _PmB> struct _conjunction : true_type {};
template <class _PmB, class... _PmR>
struct _conjunction<_PmB, _PmR...> : conditional_t<bool(_PmB::value), _conjunction<_PmR...>, _PmB> {};
template <class _PmB> struct _negation : bool_constant<!bool(_PmB::value)> {};
// What simd_* functions take: scalars and vectors of 32 bits or less per element (no long / ulong).
template <class _PmT, class = void>
struct __is_valid_simdgroup_type
    : bool_constant<pm_vinfo<pm_uncv_t<_PmT>>::is_vec || pm_is_scalar<pm_uncv_t<_PmT>>
                    ? sizeof(pm_elem_t<pm_uncv_t<_PmT>>) <= 4 : false> {};

// <metal_utility>
template <class _PmT> __add_rvalue_reference(_PmT) declval() noexcept;
// No forward: Apple's namespace metal has none, and MLX's rope.metal declares a function constant
// named `forward` under `using namespace metal`.
template <class _PmT> constexpr __remove_reference_t(_PmT) && move(_PmT &&x) noexcept {
    return static_cast<__remove_reference_t(_PmT) &&>(x);
}
} // namespace metal
