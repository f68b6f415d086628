// <metal_uniform>: uniform<T>, a T that MSL promises is the same in every thread of the dispatch
// (gemv loops in MLX bound their trip counts with it). The promise only helps Apple's compiler
// keep the value in a scalar register; on the CPU it is a plain T. As in MSL, a T becomes uniform
// only through make_uniform (or an operation whose operands are all uniform), and a uniform<T>
// reads as a T wherever one is expected, so mixed expressions give a T.
#pragma once

namespace metal {
template <class _PmT> struct uniform {
    constexpr uniform() = default;
    constexpr explicit uniform(_PmT v) : _PmV(v) {}
    constexpr operator _PmT() const { return _PmV; }
    _PmT _PmV{};
};
template <class _PmT> constexpr uniform<_PmT> make_uniform(_PmT v) { return uniform<_PmT>(v); }

// uniform op uniform stays uniform.
#define PM_UNIFORM_BINARY(op)                                                                   \
    template <class _PmA, class _PmB>                                                           \
    constexpr auto operator op(uniform<_PmA> a, uniform<_PmB> b) {                              \
        return make_uniform(a._PmV op b._PmV);                                                  \
    }
PM_UNIFORM_BINARY(+) PM_UNIFORM_BINARY(-) PM_UNIFORM_BINARY(*) PM_UNIFORM_BINARY(/) PM_UNIFORM_BINARY(%)
PM_UNIFORM_BINARY(&) PM_UNIFORM_BINARY(|) PM_UNIFORM_BINARY(^) PM_UNIFORM_BINARY(<<) PM_UNIFORM_BINARY(>>)
PM_UNIFORM_BINARY(==) PM_UNIFORM_BINARY(!=) PM_UNIFORM_BINARY(<) PM_UNIFORM_BINARY(>) PM_UNIFORM_BINARY(<=)
PM_UNIFORM_BINARY(>=) PM_UNIFORM_BINARY(&&) PM_UNIFORM_BINARY(||)
#undef PM_UNIFORM_BINARY
#define PM_UNIFORM_UNARY(op) \
    template <class _PmA> constexpr auto operator op(uniform<_PmA> a) { return make_uniform(op a._PmV); }
PM_UNIFORM_UNARY(-) PM_UNIFORM_UNARY(+) PM_UNIFORM_UNARY(~) PM_UNIFORM_UNARY(!)
#undef PM_UNIFORM_UNARY
} // namespace metal
