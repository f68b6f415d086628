// Grid-stride sum, simd_sum, threadgroup memory, one partial per group: the GPU way
// (tests/python/msl/test_msl_interleaving.py, test_simd_lockstep.py; scripts/bench_gpu_patterns.py times it).
// Needs <metal_stdlib> and `using namespace metal`.
kernel void gs_sum(device const float* x [[buffer(0)]], device float* partials [[buffer(1)]],
                   constant uint& n [[buffer(2)]],
                   uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                   uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float shared[32];
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) acc += x[i];
    float s = simd_sum(acc);
    if (lane == 0) shared[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < sgs ? shared[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) partials[group] = v;
    }
}
