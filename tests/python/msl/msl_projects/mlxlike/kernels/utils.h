// Shared helpers of the test project (written in the style of MLX's kernels/ folder).
#pragma once

#include <metal_stdlib>

using namespace metal;

typedef bfloat bfloat16_t;

template <typename U>
struct Limits {
  static constexpr constant U max = metal::numeric_limits<U>::max();
  static constexpr constant U min = metal::numeric_limits<U>::lowest();
};

// Location of element `elem` of a strided array.
template <typename IdxT = int64_t>
METAL_FUNC IdxT elem_to_loc(uint elem, constant const int* shape, constant const int64_t* strides, int ndim) {
  IdxT loc = 0;
  for (int i = ndim - 1; i >= 0 && elem > 0; --i) {
    loc += (elem % shape[i]) * IdxT(strides[i]);
    elem /= shape[i];
  }
  return loc;
}

template <typename T>
METAL_FUNC T ceildiv(T n, T d) { return (n + d - 1) / d; }
