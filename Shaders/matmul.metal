// Batched matrix multiply, two variants (pymetal/_kernels/matmul.py picks one):
//
// - CPU (matmul_packa_<dtype>, matmul_packb_<dtype>, then matmul_cpu_<dtype>):
//   A is packed into panels of TM rows, each K x TM contiguous, and B into
//   panels of TN columns, each K x TN (converted to the accumulator type,
//   zero-padded past M and N). Then each thread computes a TM x TN tile of C
//   over the whole K in registers: per k it reads TN packed values of B (vector
//   loads) and TM of A (broadcasts), both sequentially. No barriers, so the
//   CPU backend runs a threadgroup's threads as a plain loop; the threads of a
//   group share one B panel (it stays in cache). Packing makes the operands'
//   layouts (transposed or not) irrelevant to the inner loop and keeps its
//   reads sequential: rows of A and B are often exactly 4 KiB apart, which maps
//   a strip of them onto a few cache sets.
// - GPU (matmul_gpu_<dtype>, float types): 32 x 32 tiles of C per threadgroup
//   of 4 simdgroups, each accumulating 2 x 2 simdgroup_float8x8 fragments over
//   K in steps of 16, with A and B tiles staged in threadgroup memory (as
//   float, zero-filled at the edges).
// - matmul_row_<dtype>: matrix-vector products in the CPU variant (below).
// Integer and bool types use the CPU variant on every device.
#include "matmul.h"

#define PM_MATMUL_TM 6  // rows of C per thread (CPU variant) = packed A panel width
#define PM_MATMUL_TN 16 // columns of C per thread = packed B panel width

// packed[batch][panel][k][j] = B[batch][k][panel * W + j] (0 past N), over the
// batch dimensions in which B is not broadcast (p.batch_shape and p.b_batch
// hold only those). One thread per (k, panel, batch); consecutive threads go
// along B's unit stride (gid.x is the panel when B's rows are contiguous, else
// k). A is packed as B = A^T (the glue swaps the fields).
template <typename T, int W>
[[kernel]] void matmul_pack(device const T* b [[buffer(0)]],
                            device typename MatmulAcc<T>::type* packed [[buffer(1)]],
                            constant MatmulParams& p [[buffer(2)]],
                            uint3 gid [[thread_position_in_grid]]) {
    typedef typename MatmulAcc<T>::type Acc;
    // Parameters in locals: stores through `packed` could alias `p` as far as
    // the compiler knows, which would reload them in the loop.
    const int N = p.N, K = p.K;
    const long b_col = p.b_col;
    int k = b_col == 1 ? gid.y : gid.x, panel = b_col == 1 ? gid.x : gid.y, col0 = panel * W;
    long panels = (N + W - 1) / W;
    device const T* row = b + p.b_off + pm_batch_offset(gid.z, p.batch_shape, p.b_batch, p.batch_ndim)
                          + k * p.b_row;
    device Acc* dst = packed + (long(gid.z) * panels + panel) * K * W + long(k) * W;
    if (col0 + W <= N && b_col == 1) { // the common case, as vector loads
        for (int j = 0; j < W; j++) dst[j] = Acc(row[col0 + j]);
    } else {
        for (int j = 0; j < W; j++) dst[j] = col0 + j < N ? Acc(row[(col0 + j) * b_col]) : Acc(0);
    }
}

// One thread: C[tile*TM .. +TM, panel*TN .. +TN] of one batch element.
template <typename T>
[[kernel]] void matmul_cpu(device const typename MatmulAcc<T>::type* pa [[buffer(0)]],
                           device const typename MatmulAcc<T>::type* pb [[buffer(1)]],
                           device T* c [[buffer(2)]],
                           constant MatmulParams& p [[buffer(3)]],
                           uint3 gid [[thread_position_in_grid]]) {
    typedef typename MatmulAcc<T>::type Acc;
    const int TM = PM_MATMUL_TM, TN = PM_MATMUL_TN;
    const int M = p.M, N = p.N, K = p.K;
    int panel = gid.x, i0 = gid.y * TM;
    pa += pm_batch_offset(gid.z, p.batch_shape, p.pa_batch, p.batch_ndim) + long(gid.y) * K * TM;
    pb += pm_batch_offset(gid.z, p.batch_shape, p.pb_batch, p.batch_ndim) + long(panel) * K * TN;
    Acc acc[TM][TN];
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) acc[i][j] = Acc(0);
    for (int k = 0; k < K; k++) {
        Acc bk[TN];
        for (int j = 0; j < TN; j++) bk[j] = pb[long(k) * TN + j];
        for (int i = 0; i < TM; i++) {
            Acc aik = pa[long(k) * TM + i];
            for (int j = 0; j < TN; j++) acc[i][j] += aik * bk[j];
        }
    }
    device T* out = c + p.c_off + long(gid.z) * M * N + long(i0) * N + panel * TN;
    int rows_left = min(TM, M - i0), cols_left = min(TN, N - panel * TN);
    for (int i = 0; i < rows_left; i++)
        for (int j = 0; j < cols_left; j++) out[long(i) * N + j] = T(acc[i][j]);
}

#define PM_MATMUL_ROW_TN 64 // columns of C per thread (matmul_row)

// A row times a matrix, for matrix-vector products (M == 1; the glue turns
// N == 1 into that by transposing), where packing would copy a whole matrix to
// use it once. One thread: C[i, j0 .. j0+ROW_TN) of one row i, reading A and B
// where they are, along B's unit stride: rows of B as axpys into ROW_TN
// accumulators, or columns of B as dot products (a few far-apart rows at once
// would fall into the same cache sets).
template <typename T>
[[kernel]] void matmul_row(device const T* a [[buffer(0)]],
                           device const T* b [[buffer(1)]],
                           device T* c [[buffer(2)]],
                           constant MatmulParams& p [[buffer(3)]],
                           uint3 gid [[thread_position_in_grid]]) {
    typedef typename MatmulAcc<T>::type Acc;
    const int TN = PM_MATMUL_ROW_TN;
    const int M = p.M, N = p.N, K = p.K;
    const long a_col = p.a_col, b_row = p.b_row, b_col = p.b_col;
    int j0 = gid.x * TN, i = gid.y, cols = min(TN, N - j0);
    a += p.a_off + pm_batch_offset(gid.z, p.batch_shape, p.a_batch, p.batch_ndim) + i * p.a_row;
    b += p.b_off + pm_batch_offset(gid.z, p.batch_shape, p.b_batch, p.batch_ndim) + j0 * b_col;
    device T* out = c + p.c_off + long(gid.z) * M * N + long(i) * N + j0;
    if (b_col == 1) {
        Acc acc[TN];
        for (int j = 0; j < TN; j++) acc[j] = Acc(0);
        for (int k = 0; k < K; k++) {
            Acc ak = Acc(a[k * a_col]);
            device const T* brow = b + k * b_row;
            if (cols == TN) { // a whole row segment: vector code
                for (int j = 0; j < TN; j++) acc[j] += ak * Acc(brow[j]);
            } else {
                for (int j = 0; j < cols; j++) acc[j] += ak * Acc(brow[j]);
            }
        }
        for (int j = 0; j < cols; j++) out[j] = T(acc[j]);
        return;
    }
    for (int j = 0; j < cols; j++) { // b_row == 1
        device const T* col = b + j * b_col;
        Acc part[8]; // independent partial sums: no single dependency chain
        for (int u = 0; u < 8; u++) part[u] = Acc(0);
        int k = 0;
        for (; k + 8 <= K; k += 8)
            for (int u = 0; u < 8; u++) part[u] += Acc(a[(k + u) * a_col]) * Acc(col[k + u]);
        for (; k < K; k++) part[0] += Acc(a[k * a_col]) * Acc(col[k]);
        Acc sum = Acc(0);
        for (int u = 0; u < 8; u++) sum += part[u];
        out[j] = T(sum);
    }
}

#define PM_MATMUL_BM 32
#define PM_MATMUL_BN 32
#define PM_MATMUL_BK 16
#define PM_MATMUL_LDA (PM_MATMUL_BK + 4) // padded rows of the A tile
#define PM_MATMUL_LDB (PM_MATMUL_BN + 4) // and of the B tile

// Threadgroup (128, 1, 1) = 4 simdgroups in a 2 x 2 layout, each owning a
// 16 x 16 quarter of the threadgroup's 32 x 32 tile of C.
template <typename T>
[[kernel]] void matmul_gpu(device const T* a [[buffer(0)]],
                            device const T* b [[buffer(1)]],
                            device T* c [[buffer(2)]],
                            constant MatmulParams& p [[buffer(3)]],
                            uint3 group [[threadgroup_position_in_grid]],
                            uint t [[thread_index_in_threadgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]]) {
    const int BM = PM_MATMUL_BM, BN = PM_MATMUL_BN, BK = PM_MATMUL_BK;
    const int LDA = PM_MATMUL_LDA, LDB = PM_MATMUL_LDB;
    const int THREADS = 128;
    // A tile, B tile; C's tile reuses the same memory at the end.
    threadgroup float smem[BM * LDA + BK * LDB];
    threadgroup float* As = smem;
    threadgroup float* Bs = smem + BM * LDA;

    const int M = p.M, N = p.N, K = p.K;
    int m0 = group.y * BM, n0 = group.x * BN;
    a += p.a_off + pm_batch_offset(group.z, p.batch_shape, p.a_batch, p.batch_ndim);
    b += p.b_off + pm_batch_offset(group.z, p.batch_shape, p.b_batch, p.batch_ndim);
    int sm = (sg / 2) * 16, sn = (sg % 2) * 16; // this simdgroup's quarter

    simdgroup_float8x8 acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Consecutive threads read consecutive k of A and n of B (coalesced
        // for row-major operands).
        for (int e = int(t); e < BM * BK; e += THREADS) {
            int i = e / BK, k = e % BK, gi = m0 + i, gk = k0 + k;
            As[i * LDA + k] = gi < M && gk < K ? float(a[gi * p.a_row + gk * p.a_col]) : 0.0f;
        }
        for (int e = int(t); e < BK * BN; e += THREADS) {
            int k = e / BN, j = e % BN, gk = k0 + k, gj = n0 + j;
            Bs[k * LDB + j] = gk < K && gj < N ? float(b[gk * p.b_row + gj * p.b_col]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (int kk = 0; kk < BK; kk += 8) {
            simdgroup_float8x8 af[2], bf[2];
            for (int i = 0; i < 2; i++) simdgroup_load(af[i], As, LDA, ulong2(kk, sm + i * 8));
            for (int j = 0; j < 2; j++) simdgroup_load(bf[j], Bs, LDB, ulong2(sn + j * 8, kk));
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) simdgroup_multiply_accumulate(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // Through threadgroup memory, so that edge tiles and T != float are one path.
    threadgroup float* Cs = smem;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) simdgroup_store(acc[i][j], Cs, BN, ulong2(sn + j * 8, sm + i * 8));
    threadgroup_barrier(mem_flags::mem_threadgroup);
    device T* out = c + p.c_off + long(group.z) * M * N;
    for (int e = int(t); e < BM * BN; e += THREADS) {
        int i = e / BN, j = e % BN, gi = m0 + i, gj = n0 + j;
        if (gi < M && gj < N) out[long(gi) * N + gj] = T(Cs[e]);
    }
}

#define PM_MATMUL_CPU(name, T)                                                                 \
    template [[host_name("matmul_packa_" #name)]] [[kernel]]                                   \
    decltype(matmul_pack<T, PM_MATMUL_TM>) matmul_pack<T, PM_MATMUL_TM>;                       \
    template [[host_name("matmul_packb_" #name)]] [[kernel]]                                   \
    decltype(matmul_pack<T, PM_MATMUL_TN>) matmul_pack<T, PM_MATMUL_TN>;                       \
    template [[host_name("matmul_cpu_" #name)]] [[kernel]] decltype(matmul_cpu<T>) matmul_cpu<T>;     \
    template [[host_name("matmul_row_" #name)]] [[kernel]] decltype(matmul_row<T>) matmul_row<T>;
#define PM_MATMUL_GPU(name, T) \
    template [[host_name("matmul_gpu_" #name)]] [[kernel]] decltype(matmul_gpu<T>) matmul_gpu<T>;

PM_DTYPES_ALL(PM_MATMUL_CPU)
PM_DTYPES_FLOAT(PM_MATMUL_GPU)
#undef PM_MATMUL_CPU
#undef PM_MATMUL_GPU
