// RMS normalisation over the last axis, one threadgroup per row, with an
// optional weight chosen per pipeline by a function constant.
#include "utils.h"

constant bool has_w [[function_constant(20)]];

template <typename T, int N_READS = 4>
[[kernel]] void rms_single_row(
    const device T* x [[buffer(0)]],
    const device T* w [[buffer(1)]],
    device T* out [[buffer(2)]],
    constant float& eps [[buffer(3)]],
    constant uint& axis_size [[buffer(4)]],
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint lsize [[threads_per_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
  constexpr int SIMD_SIZE = 32;
  threadgroup float local_inv_mean[1];
  threadgroup float local_sums[SIMD_SIZE];

  float acc = 0;
  x += gid * size_t(axis_size);
  out += gid * size_t(axis_size);
  for (uint i = lid * N_READS; i < axis_size; i += lsize * N_READS) {
    for (int j = 0; j < N_READS; j++) {
      if (i + j < axis_size) {
        float xi = x[i + j];
        acc += xi * xi;
      }
    }
  }
  acc = simd_sum(acc);
  if (simd_group_id == 0) local_sums[simd_lane_id] = 0;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_lane_id == 0) local_sums[simd_group_id] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group_id == 0) {
    acc = simd_sum(local_sums[simd_lane_id]);
    if (simd_lane_id == 0) local_inv_mean[0] = metal::precise::rsqrt(acc / axis_size + eps);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  for (uint i = lid * N_READS; i < axis_size; i += lsize * N_READS) {
    for (int j = 0; j < N_READS; j++) {
      if (i + j < axis_size) {
        float v = float(x[i + j]) * local_inv_mean[0];
        out[i + j] = has_w ? static_cast<T>(v * float(w[i + j])) : static_cast<T>(v);
      }
    }
  }
}

#define instantiate_rms(name, itype) \
  template [[host_name("rms" #name)]] [[kernel]] void rms_single_row<itype>( \
      const device itype* x [[buffer(0)]], const device itype* w [[buffer(1)]], device itype* out [[buffer(2)]], \
      constant float& eps [[buffer(3)]], constant uint& axis_size [[buffer(4)]], \
      uint gid [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]], \
      uint lsize [[threads_per_threadgroup]], uint simd_lane_id [[thread_index_in_simdgroup]], \
      uint simd_group_id [[simdgroup_index_in_threadgroup]]);

instantiate_rms(float32, float)
instantiate_rms(float16, half)
instantiate_rms(bfloat16, bfloat16_t)
