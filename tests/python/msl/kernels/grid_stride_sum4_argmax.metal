// Two grid-stride reductions the GPU way, timed by scripts/bench_gpu_patterns.py (with grid_stride_sum.metal)
// and checked by tests/python/msl/test_simd_lockstep.py. Needs <metal_stdlib> and `using namespace metal`.

// Thread gid reads 4 float4 (64 bytes) per step, steps of the whole grid. n4 % 4 == 0.
kernel void sum4(device const float4* x [[buffer(0)]], device float* partials [[buffer(1)]],
                 constant uint& n4 [[buffer(2)]],
                 uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                 uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                 uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float shared[32];
    float4 a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
    for (uint i = gid * 4; i < n4; i += grid * 4) {
        a += x[i]; b += x[i + 1]; c += x[i + 2]; d += x[i + 3];
    }
    float4 acc = (a + b) + (c + d);
    float s = simd_sum(acc.x + acc.y + acc.z + acc.w);
    if (lane == 0) shared[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < sgs ? shared[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) partials[group] = v;
    }
}

// argmax, the GPU way: grid-stride per thread, then the simdgroup's maximum
// (simd_max) and its first index (simd_min over the lanes holding it), then
// threadgroup memory and the first simdgroup, one (value, index) per group.
kernel void argmax(device const float* x [[buffer(0)]], device float* pval [[buffer(1)]],
                   device uint* pidx [[buffer(2)]], constant uint& n [[buffer(3)]],
                   uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                   uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float sval[32];
    threadgroup uint sidx[32];
    float best = -INFINITY;
    uint bi = 0xFFFFFFFFu;
    for (uint i = gid; i < n; i += grid) {
        float v = x[i];
        if (v > best) { best = v; bi = i; }
    }
    float m = simd_max(best);
    uint mi = simd_min(best == m ? bi : 0xFFFFFFFFu);
    if (lane == 0) { sval[sg] = m; sidx[sg] = mi; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < sgs ? sval[lane] : -INFINITY;
        uint j = lane < sgs ? sidx[lane] : 0xFFFFFFFFu;
        float m2 = simd_max(v);
        uint j2 = simd_min(v == m2 ? j : 0xFFFFFFFFu);
        if (lane == 0) { pval[group] = m2; pidx[group] = j2; }
    }
}
