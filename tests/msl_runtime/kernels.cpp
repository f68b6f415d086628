// Test kernels for the MSL runtime (pm_msl/runtime.h, simd.h, simdgroup_matrix.h),
// written as MetalCPU's front end hands them to clang: the user's MSL with
// `kernel` and every [[attribute]] removed (kept here as comments), kernel-scope
// `threadgroup` declarations rewritten to pm::rt::tg_var, then the generated
// table `pm_generated::entries` and `pm_cpu_library`. Driven by test_runtime.py.
#include <metal_stdlib>
using namespace metal;

// ---------------------------------------------------------------------------
// Position attributes: 24 uints per thread at the thread's linear grid index.
// ---------------------------------------------------------------------------
/*kernel*/ void positions(device uint *out /*[[buffer(0)]]*/,
                          uint3 gid /*[[thread_position_in_grid]]*/,
                          uint3 grid /*[[threads_per_grid]]*/,
                          ushort3 lid /*[[thread_position_in_threadgroup]]*/,
                          uint3 tpg /*[[threads_per_threadgroup]]*/,
                          uint3 tgpos /*[[threadgroup_position_in_grid]]*/,
                          uint3 ngroups /*[[threadgroups_per_grid]]*/,
                          uint tidx /*[[thread_index_in_threadgroup]]*/,
                          ushort lane /*[[thread_index_in_simdgroup]]*/,
                          uint sg /*[[simdgroup_index_in_threadgroup]]*/,
                          uint tps /*[[threads_per_simdgroup]]*/,
                          ushort nsg /*[[simdgroups_per_threadgroup]]*/,
                          uint qlane /*[[thread_index_in_quadgroup]]*/,
                          ushort qg /*[[quadgroup_index_in_threadgroup]]*/,
                          uint nqg /*[[quadgroups_per_threadgroup]]*/,
                          uint3 dtpg /*[[dispatch_threads_per_threadgroup]]*/) {
    uint i = gid.x + gid.y * grid.x + gid.z * grid.x * grid.y;
    device uint *o = out + i * 24;
    o[0] = gid.x; o[1] = gid.y; o[2] = gid.z;
    o[3] = lid.x; o[4] = lid.y; o[5] = lid.z;
    o[6] = tpg.x; o[7] = tpg.y; o[8] = tpg.z;
    o[9] = tgpos.x; o[10] = tgpos.y; o[11] = tgpos.z;
    o[12] = ngroups.x; o[13] = ngroups.y; o[14] = ngroups.z;
    o[15] = tidx; o[16] = lane; o[17] = sg; o[18] = tps; o[19] = nsg;
    o[20] = qlane; o[21] = qg; o[22] = nqg;
    o[23] = dtpg.x + 1000 * dtpg.y + 1000000 * dtpg.z;
}

// Narrower declared types: 2-vectors, a scalar grid position, signed ints.
/*kernel*/ void positions2(device int *out /*[[buffer(0)]]*/,
                           uint2 gid /*[[thread_position_in_grid]]*/,
                           ushort2 grid /*[[threads_per_grid]]*/,
                           int gx /*[[thread_position_in_grid]]*/,
                           int2 lid /*[[thread_position_in_threadgroup]]*/) {
    uint i = gid.x + gid.y * grid.x;
    out[i * 4 + 0] = gx;
    out[i * 4 + 1] = (int)gid.y;
    out[i * 4 + 2] = lid.x;
    out[i * 4 + 3] = lid.y;
}

// ---------------------------------------------------------------------------
// SAXPY (LOOP mode), also used by the benchmark.
// ---------------------------------------------------------------------------
/*kernel*/ void saxpy(device float *y /*[[buffer(0)]]*/, const device float *x /*[[buffer(1)]]*/,
                      constant float &a /*[[buffer(2)]]*/, uint i /*[[thread_position_in_grid]]*/) {
    y[i] = a * x[i] + y[i];
}

// ---------------------------------------------------------------------------
// Tree reduction in threadgroup memory with barriers.
// ---------------------------------------------------------------------------
/*kernel*/ void reduce_tree(const device float *in /*[[buffer(0)]]*/, device float *out /*[[buffer(1)]]*/,
                            uint gid /*[[thread_position_in_grid]]*/, ushort lid /*[[thread_position_in_threadgroup]]*/,
                            uint tpg /*[[threads_per_threadgroup]]*/, uint tg /*[[threadgroup_position_in_grid]]*/) {
    // threadgroup float buf[1024];
    auto &buf = ::pm::rt::tg_var<float[1024], 1>();
    buf[lid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = tpg / 2; s > 0; s >>= 1) {
        if (lid < s) buf[lid] += buf[lid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) out[tg] = buf[0];
}

// The same with [[threadgroup(0)]] memory and a second static variable.
/*kernel*/ void reduce_dyn(const device float *in /*[[buffer(0)]]*/, device float *out /*[[buffer(1)]]*/,
                           /*threadgroup*/ float *tmp /*[[threadgroup(0)]]*/,
                           uint gid /*[[thread_position_in_grid]]*/, uint lid /*[[thread_index_in_threadgroup]]*/,
                           uint tpg /*[[threads_per_threadgroup]]*/, uint tg /*[[threadgroup_position_in_grid]]*/) {
    // threadgroup int flag;
    auto &flag = ::pm::rt::tg_var<int, 2>();
    if (lid == 0) flag = 7;
    tmp[lid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = tpg / 2; s > 0; s >>= 1) {
        if (lid < s) tmp[lid] += tmp[lid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) out[tg] = tmp[0] + (flag == 7 ? 0.0f : 1e9f);
}

// ---------------------------------------------------------------------------
// Every SIMD-group and quad-group function. Threads with skip[i] != 0 return
// at once (inactive lanes). NR results per thread.
// ---------------------------------------------------------------------------
constant constexpr uint NR = 64;
template <class T> uint bits(T v) { return as_type<uint>(v); }

/*kernel*/ void simd_ops(const device int *xs /*[[buffer(0)]]*/, const device uint *us /*[[buffer(1)]]*/,
                         const device int *skip /*[[buffer(2)]]*/, device uint *out /*[[buffer(3)]]*/,
                         const device float *fs /*[[buffer(4)]]*/,
                         uint2 gid /*[[thread_position_in_grid]]*/, uint2 grid /*[[threads_per_grid]]*/,
                         ushort lane /*[[thread_index_in_simdgroup]]*/) {
    uint i = gid.x + gid.y * grid.x;
    if (skip[i]) return;
    int x = xs[i];
    uint u = us[i];
    float f = fs[i];
    device uint *o = out + i * NR;
    o[0] = simd_sum(x);
    o[1] = simd_product(u);
    o[2] = simd_min(x);
    o[3] = simd_max(x);
    o[4] = simd_and(x);
    o[5] = simd_or(x);
    o[6] = simd_xor(x);
    o[7] = simd_prefix_exclusive_sum(x);
    o[8] = simd_prefix_inclusive_sum(x);
    o[9] = simd_prefix_exclusive_product(u);
    o[10] = simd_prefix_inclusive_product(u);
    o[11] = simd_broadcast(x, 5);
    o[12] = simd_broadcast_first(x);
    o[13] = simd_shuffle(x, (lane * 7 + 3) % 32);
    o[14] = simd_shuffle_up(x, 3);
    o[15] = simd_shuffle_down(x, 5);
    o[16] = simd_shuffle_xor(x, 6);
    o[17] = simd_shuffle_rotate_up(x, 3);
    o[18] = simd_shuffle_rotate_down(x, 9);
    o[19] = simd_shuffle_and_fill_up(x, x + 1000, 3);
    o[20] = simd_shuffle_and_fill_down(x, x + 1000, 5);
    o[21] = simd_shuffle_and_fill_up(x, x + 1000, 3, 8);
    o[22] = simd_shuffle_and_fill_down(x, x + 1000, 2, 8);
    simd_vote v = simd_ballot(x > 0);
    o[23] = (uint)(ulong)v;
    o[24] = (uint)((ulong)v >> 32);
    o[25] = simd_all(x > -3);
    o[26] = simd_any(x == 3);
    o[27] = simd_is_first();
    o[28] = (uint)(ulong)simd_active_threads_mask();
    o[29] = quad_sum(x);
    o[30] = quad_product(u);
    o[31] = quad_min(x);
    o[32] = quad_max(x);
    o[33] = quad_and(x);
    o[34] = quad_or(x);
    o[35] = quad_xor(x);
    o[36] = quad_prefix_exclusive_sum(x);
    o[37] = quad_prefix_inclusive_sum(x);
    o[38] = quad_broadcast(x, 2);
    o[39] = quad_broadcast_first(x);
    o[40] = quad_shuffle(x, (lane * 3 + 1) % 4);
    o[41] = quad_shuffle_up(x, 1);
    o[42] = quad_shuffle_down(x, 1);
    o[43] = quad_shuffle_xor(x, 2);
    o[44] = quad_shuffle_rotate_up(x, 1);
    o[45] = quad_shuffle_rotate_down(x, 3);
    o[46] = quad_shuffle_and_fill_up(x, x + 1000, 1);
    o[47] = quad_shuffle_and_fill_down(x, x + 1000, 2);
    o[48] = (ushort)quad_ballot(x > 0);
    o[49] = quad_all(x > -3);
    o[50] = quad_any(x == 3);
    o[51] = quad_is_first();
    o[52] = (ushort)quad_active_threads_mask();
    o[53] = simd_ballot(true).all();
    o[54] = simd_ballot(x > 2).any();
    o[55] = bits(simd_sum(f));                       // lane order
    o[56] = bits(simd_prefix_inclusive_sum(f));
    float4 f4 = simd_sum(float4(f, 2 * f, (float)x, 1.0f));
    o[57] = bits(f4.y);
    o[58] = bits(f4.w);
    o[59] = bits((float)simd_max((half)x));
    o[60] = bits(simd_shuffle_down(float2(f, f + 1), 1).y);
    o[61] = (uint)simd_min((short)x) + 1000u * (uint)simd_max((uchar)(x + 3));
    o[62] = simd_sum(simd_shuffle_xor(x, 1)); // back-to-back calls
    simdgroup_barrier(mem_flags::mem_none);
    o[63] = simd_sum(1u);
}

// ---------------------------------------------------------------------------
// Errors that must be reported, not hang.
// ---------------------------------------------------------------------------
// A thread that returned counts as arrived at later barriers (as on Apple GPUs; not an error any
// more outside validation builds).
/*kernel*/ void err_return_early(device int *out /*[[buffer(0)]]*/, uint lid /*[[thread_index_in_threadgroup]]*/) {
    if (lid == 17) return;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid] = 1;
}
// One simdgroup waits at a barrier the other never calls (it waits at a later one): on a GPU they
// would pair up wrongly. (A thread that calls an extra barrier while the others finish is fine, as
// on a GPU: finished threads count as arrived; runtime_common.h, gpu_barriers.)
/*kernel*/ void err_extra_barrier(device int *out /*[[buffer(0)]]*/, uint lid /*[[thread_index_in_threadgroup]]*/) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid >= 32) threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid] = 1;
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
/*kernel*/ void err_simd_sites(device int *out /*[[buffer(0)]]*/, uint lid /*[[thread_index_in_threadgroup]]*/,
                               uint lane /*[[thread_index_in_simdgroup]]*/) {
    int v;
    if (lane & 1) v = simd_sum((int)lid);
    else v = simd_max((int)lid);
    out[lid] = v;
}
// Lanes at a SIMD-group function while the rest of their simdgroup waits at a barrier: the
// barrier carries them (runtime_fibers.h, carry_barrier), the sum covers the lanes that call it.
/*kernel*/ void err_simd_barrier(device int *out /*[[buffer(0)]]*/, uint lid /*[[thread_index_in_threadgroup]]*/,
                                 uint lane /*[[thread_index_in_simdgroup]]*/) {
    int v = 0;
    if (lane < 16) v = simd_sum((int)lid);
    else threadgroup_barrier(mem_flags::mem_threadgroup);
    out[lid] = v;
}
// Generated as LOOP by mistake (the front end would say FIBERS): must not pass silently.
/*kernel*/ void err_loop_barrier(device int *out /*[[buffer(0)]]*/, uint lid /*[[thread_index_in_threadgroup]]*/) {
    out[lid] = 1;
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// ---------------------------------------------------------------------------
// Threadgroup memory poison: reads what nobody wrote.
// ---------------------------------------------------------------------------
/*kernel*/ void tg_poison(device uint *out /*[[buffer(0)]]*/, /*threadgroup*/ uint *dyn /*[[threadgroup(0)]]*/,
                          uint gid /*[[thread_position_in_grid]]*/) {
    // threadgroup uint st[16];
    auto &st = ::pm::rt::tg_var<uint[16], 3>();
    out[gid * 2] = st[gid % 16];
    out[gid * 2 + 1] = dyn[gid % 8];
}

// ---------------------------------------------------------------------------
// SIMD-group matrices: C = A * B (row-major, M, N, K multiples of 8). One
// threadgroup of 4 simdgroups computes a 16x16 tile of C.
// ---------------------------------------------------------------------------
struct gemm_dims { uint M, N, K; };

template <class T>
/*kernel*/ void gemm_sg(const device T *A /*[[buffer(0)]]*/, const device T *B /*[[buffer(1)]]*/,
                        device float *C /*[[buffer(2)]]*/, constant gemm_dims &d /*[[buffer(3)]]*/,
                        uint sg /*[[simdgroup_index_in_threadgroup]]*/, uint2 tg /*[[threadgroup_position_in_grid]]*/) {
    uint row0 = tg.y * 16 + (sg / 2) * 8, col0 = tg.x * 16 + (sg % 2) * 8;
    simdgroup_matrix<float, 8, 8> acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    for (uint k = 0; k < d.K; k += 8) {
        simdgroup_matrix<T, 8, 8> a, b;
        simdgroup_load(a, A, d.K, ulong2(k, row0));
        simdgroup_load(b, B, d.N, ulong2(col0, k));
        simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    simdgroup_store(acc, C, d.N, ulong2(col0, row0));
}
template void gemm_sg<float>(const device float *, const device float *, device float *, constant gemm_dims &, uint, uint2);
template void gemm_sg<half>(const device half *, const device half *, device float *, constant gemm_dims &, uint, uint2);

// B given transposed (BT is N x K), loaded with transpose_matrix; result via
// simdgroup_multiply then an add through a diagonal matrix (I * X).
/*kernel*/ void gemm_bt(const device float *A /*[[buffer(0)]]*/, const device float *BT /*[[buffer(1)]]*/,
                        device float *C /*[[buffer(2)]]*/, constant gemm_dims &d /*[[buffer(3)]]*/,
                        uint sg /*[[simdgroup_index_in_threadgroup]]*/, uint2 tg /*[[threadgroup_position_in_grid]]*/) {
    uint row0 = tg.y * 16 + (sg / 2) * 8, col0 = tg.x * 16 + (sg % 2) * 8;
    simdgroup_float8x8 acc(0.0f), eye(1.0f);
    for (uint k = 0; k < d.K; k += 8) {
        simdgroup_float8x8 a, b, p;
        simdgroup_load(a, A, d.K, ulong2(k, row0));
        simdgroup_load(b, BT, d.K, ulong2(k, col0), true);
        simdgroup_multiply(p, a, b);
        simdgroup_multiply_accumulate(acc, eye, p, acc);
    }
    simdgroup_store(acc, C, d.N, ulong2(col0, row0));
}

// MLX steel style: fragments filled and read through thread_elements() with
// the lane layout, staged through threadgroup memory, simdgroup_barrier.
/*kernel*/ void gemm_frag(const device float *A /*[[buffer(0)]]*/, const device float *B /*[[buffer(1)]]*/,
                          device float *C /*[[buffer(2)]]*/, constant gemm_dims &d /*[[buffer(3)]]*/,
                          uint sg /*[[simdgroup_index_in_threadgroup]]*/, ushort lane /*[[thread_index_in_simdgroup]]*/,
                          uint2 tg /*[[threadgroup_position_in_grid]]*/) {
    // threadgroup float As[4][64];
    auto &As = ::pm::rt::tg_var<float[4][64], 4>();
    short qid = lane / 4;
    short sm = (qid & 4) + (lane / 2) % 4;
    short sn = (qid & 2) * 2 + (lane % 2) * 2;
    uint row0 = tg.y * 16 + (sg / 2) * 8, col0 = tg.x * 16 + (sg % 2) * 8;
    simdgroup_matrix<float, 8, 8> acc(0);
    for (uint k = 0; k < d.K; k += 8) {
        // stage the A tile in threadgroup memory (2 elements per lane)
        As[sg][sm * 8 + sn] = A[(row0 + sm) * d.K + k + sn];
        As[sg][sm * 8 + sn + 1] = A[(row0 + sm) * d.K + k + sn + 1];
        simdgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_matrix<float, 8, 8> a, b;
        a.thread_elements()[0] = As[sg][sm * 8 + sn];
        a.thread_elements()[1] = As[sg][sm * 8 + sn + 1];
        b.thread_elements()[0] = B[(k + sm) * d.N + col0 + sn];
        b.thread_elements()[1] = B[(k + sm) * d.N + col0 + sn + 1];
        simdgroup_barrier(mem_flags::mem_none);
        simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    thread const auto &r = acc.thread_elements();
    C[(row0 + sm) * d.N + col0 + sn] = r[0];
    C[(row0 + sm) * d.N + col0 + sn + 1] = r[1];
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------
/*kernel*/ void barrier_loop(device uint *out /*[[buffer(0)]]*/, constant uint &iters /*[[buffer(1)]]*/,
                             uint lid /*[[thread_index_in_threadgroup]]*/) {
    uint x = lid;
    for (uint i = 0; i < iters; i++) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        x += i;
    }
    out[lid] = x;
}

// Grid-stride sum, MLX style (N_READS = 4 float4 per thread and step: one
// 64-byte line), simd_sum, one barrier, threadgroup memory. n4 % 4 == 0.
/*kernel*/ void sum_grid(const device float4 *in /*[[buffer(0)]]*/, device float *partial /*[[buffer(1)]]*/,
                         constant uint &n4 /*[[buffer(2)]]*/, uint gid /*[[thread_position_in_grid]]*/,
                         uint grid /*[[threads_per_grid]]*/, uint lane /*[[thread_index_in_simdgroup]]*/,
                         uint sg /*[[simdgroup_index_in_threadgroup]]*/, uint nsg /*[[simdgroups_per_threadgroup]]*/,
                         uint tg /*[[threadgroup_position_in_grid]]*/) {
    // threadgroup float part[32];
    auto &part = ::pm::rt::tg_var<float[32], 5>();
    float4 a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
    for (uint i = gid * 4; i < n4; i += grid * 4) {
        a += in[i];
        b += in[i + 1];
        c += in[i + 2];
        d += in[i + 3];
    }
    float4 acc = (a + b) + (c + d);
    float s = simd_sum(acc.x + acc.y + acc.z + acc.w);
    if (lane == 0) part[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        float v = lane < nsg ? part[lane] : 0.0f;
        v = simd_sum(v);
        if (lane == 0) partial[tg] = v;
    }
}

// ===========================================================================
// Generated by MetalCPU's front end (mimicked).
// ===========================================================================
namespace pm_generated {
static const int sites_reduce_tree[] = {1};
static const int sites_reduce_dyn[] = {2};
static const int sites_tg_poison[] = {3};
static const int sites_gemm_frag[] = {4};
static const int sites_sum_grid[] = {5};
#define B_(A, N) ::pm::rt::bind<::pm::rt::attr::A, N>
static const ::pm::rt::kernel_entry entries[] = {
    {"positions_loop",
     &::pm::rt::run<&::positions, PM_KERNEL_LOOP, B_(buffer, 0), B_(thread_position_in_grid, 0),
                    B_(threads_per_grid, 0), B_(thread_position_in_threadgroup, 0), B_(threads_per_threadgroup, 0),
                    B_(threadgroup_position_in_grid, 0), B_(threadgroups_per_grid, 0),
                    B_(thread_index_in_threadgroup, 0), B_(thread_index_in_simdgroup, 0),
                    B_(simdgroup_index_in_threadgroup, 0), B_(threads_per_simdgroup, 0),
                    B_(simdgroups_per_threadgroup, 0), B_(thread_index_in_quadgroup, 0),
                    B_(quadgroup_index_in_threadgroup, 0), B_(quadgroups_per_threadgroup, 0),
                    B_(dispatch_threads_per_threadgroup, 0)>,
     PM_KERNEL_LOOP, 0, nullptr, 0},
    {"positions_fibers",
     &::pm::rt::run<&::positions, PM_KERNEL_FIBERS, B_(buffer, 0), B_(thread_position_in_grid, 0),
                    B_(threads_per_grid, 0), B_(thread_position_in_threadgroup, 0), B_(threads_per_threadgroup, 0),
                    B_(threadgroup_position_in_grid, 0), B_(threadgroups_per_grid, 0),
                    B_(thread_index_in_threadgroup, 0), B_(thread_index_in_simdgroup, 0),
                    B_(simdgroup_index_in_threadgroup, 0), B_(threads_per_simdgroup, 0),
                    B_(simdgroups_per_threadgroup, 0), B_(thread_index_in_quadgroup, 0),
                    B_(quadgroup_index_in_threadgroup, 0), B_(quadgroups_per_threadgroup, 0),
                    B_(dispatch_threads_per_threadgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"positions2",
     &::pm::rt::run<&::positions2, PM_KERNEL_LOOP, B_(buffer, 0), B_(thread_position_in_grid, 0),
                    B_(threads_per_grid, 0), B_(thread_position_in_grid, 0), B_(thread_position_in_threadgroup, 0)>,
     PM_KERNEL_LOOP, 0, nullptr, 0},
    {"saxpy",
     &::pm::rt::run<&::saxpy, PM_KERNEL_LOOP, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2),
                    B_(thread_position_in_grid, 0)>,
     PM_KERNEL_LOOP, 0, nullptr, 0},
    {"saxpy_fibers",
     &::pm::rt::run<&::saxpy, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2),
                    B_(thread_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"reduce_tree",
     &::pm::rt::run<&::reduce_tree, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(thread_position_in_grid, 0),
                    B_(thread_position_in_threadgroup, 0), B_(threads_per_threadgroup, 0),
                    B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 1024, sites_reduce_tree, 1},
    {"reduce_dyn",
     &::pm::rt::run<&::reduce_dyn, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(threadgroup, 0),
                    B_(thread_position_in_grid, 0), B_(thread_index_in_threadgroup, 0), B_(threads_per_threadgroup, 0),
                    B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, sites_reduce_dyn, 1},
    {"simd_ops",
     &::pm::rt::run<&::simd_ops, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2), B_(buffer, 3),
                    B_(buffer, 4), B_(thread_position_in_grid, 0), B_(threads_per_grid, 0),
                    B_(thread_index_in_simdgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"err_return_early",
     &::pm::rt::run<&::err_return_early, PM_KERNEL_FIBERS, B_(buffer, 0), B_(thread_index_in_threadgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"err_extra_barrier",
     &::pm::rt::run<&::err_extra_barrier, PM_KERNEL_FIBERS, B_(buffer, 0), B_(thread_index_in_threadgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"err_simd_sites",
     &::pm::rt::run<&::err_simd_sites, PM_KERNEL_FIBERS, B_(buffer, 0), B_(thread_index_in_threadgroup, 0),
                    B_(thread_index_in_simdgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"err_simd_barrier",
     &::pm::rt::run<&::err_simd_barrier, PM_KERNEL_FIBERS, B_(buffer, 0), B_(thread_index_in_threadgroup, 0),
                    B_(thread_index_in_simdgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"err_loop_barrier",
     &::pm::rt::run<&::err_loop_barrier, PM_KERNEL_LOOP, B_(buffer, 0), B_(thread_index_in_threadgroup, 0)>,
     PM_KERNEL_LOOP, 0, nullptr, 0},
    {"tg_poison",
     &::pm::rt::run<&::tg_poison, PM_KERNEL_LOOP, B_(buffer, 0), B_(threadgroup, 0), B_(thread_position_in_grid, 0)>,
     PM_KERNEL_LOOP, 0, sites_tg_poison, 1},
    {"gemm_sg_float",
     &::pm::rt::run<&::gemm_sg<float>, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2), B_(buffer, 3),
                    B_(simdgroup_index_in_threadgroup, 0), B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"gemm_sg_half",
     &::pm::rt::run<&::gemm_sg<half>, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2), B_(buffer, 3),
                    B_(simdgroup_index_in_threadgroup, 0), B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"gemm_bt",
     &::pm::rt::run<&::gemm_bt, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2), B_(buffer, 3),
                    B_(simdgroup_index_in_threadgroup, 0), B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"gemm_frag",
     &::pm::rt::run<&::gemm_frag, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2), B_(buffer, 3),
                    B_(simdgroup_index_in_threadgroup, 0), B_(thread_index_in_simdgroup, 0),
                    B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, sites_gemm_frag, 1},
    {"barrier_loop",
     &::pm::rt::run<&::barrier_loop, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(thread_index_in_threadgroup, 0)>,
     PM_KERNEL_FIBERS, 0, nullptr, 0},
    {"sum_grid",
     &::pm::rt::run<&::sum_grid, PM_KERNEL_FIBERS, B_(buffer, 0), B_(buffer, 1), B_(buffer, 2),
                    B_(thread_position_in_grid, 0), B_(threads_per_grid, 0), B_(thread_index_in_simdgroup, 0),
                    B_(simdgroup_index_in_threadgroup, 0), B_(simdgroups_per_threadgroup, 0),
                    B_(threadgroup_position_in_grid, 0)>,
     PM_KERNEL_FIBERS, 0, sites_sum_grid, 1},
};
#undef B_
} // namespace pm_generated

extern "C" __attribute__((visibility("default"))) uint32_t pm_cpu_library(const pm_kernel_desc **kernels,
                                                                           uint32_t *count) {
    return ::pm::rt::library(pm_generated::entries, sizeof(pm_generated::entries) / sizeof(pm_generated::entries[0]),
                             kernels, count);
}
