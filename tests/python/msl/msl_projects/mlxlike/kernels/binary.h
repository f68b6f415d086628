// Templated binary kernels: contiguous and general (strided) inputs.
#pragma once

template <typename T, typename U, typename Op>
[[kernel]] void binary_vv(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* c [[buffer(2)]],
    uint index [[thread_position_in_grid]]) {
  c[index] = Op()(a[index], b[index]);
}

template <typename T, typename U, typename Op>
[[kernel]] void binary_sv(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* c [[buffer(2)]],
    uint index [[thread_position_in_grid]]) {
  c[index] = Op()(a[0], b[index]);
}

template <typename T, typename U, typename Op>
[[kernel]] void binary_g(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device U* c [[buffer(2)]],
    constant const int* shape [[buffer(3)]],
    constant const int64_t* a_strides [[buffer(4)]],
    constant const int64_t* b_strides [[buffer(5)]],
    constant const int& ndim [[buffer(6)]],
    uint index [[thread_position_in_grid]]) {
  auto a_idx = elem_to_loc(index, shape, a_strides, ndim);
  auto b_idx = elem_to_loc(index, shape, b_strides, ndim);
  c[index] = Op()(a[a_idx], b[b_idx]);
}
