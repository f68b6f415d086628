// The simdgroup-matrix GEMM of the conformance suite (tests/python/msl/test_msl_conformance.py), timed by
// scripts/bench_gpu_patterns.py. Needs <metal_stdlib>, <metal_simdgroup_matrix> and `using namespace metal`.
// C[M][N] = A[M][K] @ B[K][N] (+ C when accumulate): one 8x8 tile per simdgroup,
// 4 simdgroups per threadgroup (a 16x16 block). M, N, K multiples of 8.
// A from device memory directly, B staged through threadgroup memory.
kernel void sgm_gemm(device const float* A [[buffer(0)]],
                     device const float* B [[buffer(1)]],
                     device float* C [[buffer(2)]],
                     constant uint& M [[buffer(3)]],
                     constant uint& N [[buffer(4)]],
                     constant uint& K [[buffer(5)]],
                     constant uint& accumulate [[buffer(6)]],
                     uint2 tgp [[threadgroup_position_in_grid]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]]) {
    threadgroup float tb[4][64];
    uint row0 = tgp.y * 16 + (sg / 2) * 8;
    uint col0 = tgp.x * 16 + (sg % 2) * 8;
    if (row0 >= M || col0 >= N) return;  // whole simdgroups leave
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    if (accumulate) simdgroup_load(acc, C, N, ulong2(col0, row0));
    for (uint k = 0; k < K; k += 8) {
        simdgroup_float8x8 a, b;
        simdgroup_load(a, A, K, ulong2(k, row0));
        for (uint j = lane; j < 64; j += 32) tb[sg][j] = B[(k + j / 8) * N + col0 + j % 8];
        simdgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_load(b, &tb[sg][0]);
        simdgroup_multiply_accumulate(acc, a, b, acc);
        simdgroup_barrier(mem_flags::mem_threadgroup);
    }
    simdgroup_store(acc, C, N, ulong2(col0, row0));
}
