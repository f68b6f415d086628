// Generic elementwise kernels, instantiated per op and dtype with host names
// such as "square_float32" or "add_scalar_uint8".
#include "ops.h"

template <typename T, typename Op>
[[kernel]] void unary(device const T* in [[buffer(0)]],
                      device T* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    out[i] = Op()(in[i]);
}

template <typename T, typename Op>
[[kernel]] void binary(device const T* a [[buffer(0)]],
                       device const T* b [[buffer(1)]],
                       device T* out [[buffer(2)]],
                       uint i [[thread_position_in_grid]]) {
    out[i] = Op()(a[i], b[i]);
}

// x[i] = op(x[i], scalar), in place.
template <typename T, typename Op>
[[kernel]] void scalar_inplace(device T* x [[buffer(0)]],
                               constant T& value [[buffer(1)]],
                               uint i [[thread_position_in_grid]]) {
    x[i] = Op()(x[i], value);
}

#define instantiate_unary(op, Op, name, T) \
    template [[host_name(#op "_" #name)]] [[kernel]] decltype(unary<T, Op>) unary<T, Op>;
#define instantiate_binary(op, Op, name, T) \
    template [[host_name(#op "_" #name)]] [[kernel]] decltype(binary<T, Op>) binary<T, Op>;
#define instantiate_float_unary(op, Op) \
    instantiate_unary(op, Op, float32, float) instantiate_unary(op, Op, float16, half)
#define instantiate_all_binary(op, Op) \
    instantiate_binary(op, Op, float32, float) instantiate_binary(op, Op, float16, half) \
    instantiate_binary(op, Op, int32, int) instantiate_binary(op, Op, uint32, uint)

instantiate_float_unary(square, Square)
instantiate_float_unary(cube, Cube)
instantiate_float_unary(log, Log)
instantiate_float_unary(exp, Exp)
instantiate_float_unary(sqrt, Sqrt)
instantiate_float_unary(negate, Negate)

instantiate_all_binary(add, Add)
instantiate_all_binary(sub, Sub)
instantiate_all_binary(mul, Mul)
instantiate_all_binary(div, Div)
instantiate_all_binary(maximum, Max)
instantiate_all_binary(minimum, Min)

template [[host_name("add_scalar_uint8")]] [[kernel]] decltype(scalar_inplace<uchar, Add>) scalar_inplace<uchar, Add>;
template [[host_name("add_scalar_int32")]] [[kernel]] decltype(scalar_inplace<int, Add>) scalar_inplace<int, Add>;
template [[host_name("add_scalar_float32")]] [[kernel]] decltype(scalar_inplace<float, Add>) scalar_inplace<float, Add>;
