// Header hygiene check (run by hygiene.sh): the MSL headers must survive any
// macro a user passes with -D, and must not put libc names into the global
// namespace of a kernel.
//
// hygiene.sh compiles this file with every one- and two-letter upper-case name
// (A, N, T, BM, ...) and common template-parameter words (Op, Kernel, Binds,
// ...) defined as `)`, which breaks any header that uses such a name. So this
// file itself uses none of them, only lower-case names. Written as MetalCPU's
// front end hands a kernel to clang (attributes removed, generated tables
// appended), so the launchers, binding tables and every runtime template are
// instantiated under those macros too.
#include <metal_stdlib>
using namespace metal;

// The global namespace has none of libc's names: these would conflict with its
// functions (a variable and a function of one name in one scope). `select`
// hides metal::select from unqualified lookup here, so the kernel qualifies it.
int div, rand, select, index, rindex, calloc, malloc, realloc, free, mmap, munmap, mprotect, memset, memcpy,
    memmove, strlen, printf, snprintf, vsnprintf, sprintf, exit, abort, atoi, labs, llabs, qsort, bsearch, getenv,
    random, srand, pselect;

struct params {
    uint count;
    float scale;
};

/*kernel*/ void hy_everything(device float *out /*[[buffer(0)]]*/, device atomic_uint *counter /*[[buffer(1)]]*/,
                              device atomic_float *fsum /*[[buffer(2)]]*/, constant params &prm /*[[buffer(3)]]*/,
                              device int *ints /*[[buffer(4)]]*/, /*threadgroup*/ float *dyn /*[[threadgroup(0)]]*/,
                              uint gid /*[[thread_position_in_grid]]*/,
                              ushort2 lid2 /*[[thread_position_in_threadgroup]]*/,
                              uint tid /*[[thread_index_in_threadgroup]]*/,
                              uint lane /*[[thread_index_in_simdgroup]]*/,
                              uint sg /*[[simdgroup_index_in_threadgroup]]*/,
                              uint3 tpg /*[[threads_per_threadgroup]]*/) {
    // threadgroup float shared[64];
    auto &shared = ::pm::rt::tg_var<float[64], 1>();
    float v = (float)gid * prm.scale;
    shared[tid % 64] = v;
    dyn[tid % 32] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = simd_sum(v) + simd_max(v) + quad_sum(v) + simd_prefix_exclusive_sum(v);
    s += simd_shuffle_down(v, 1) + simd_shuffle_xor(v, 2) + simd_broadcast_first(v) + simd_shuffle(v, 3);
    s += simd_shuffle_and_fill_up(v, v, (ushort)1);
    int4 iv = int4((int)lane, 2, -3, 4);
    iv = simd_sum(iv);
    if (simd_all(v >= 0.0f) && simd_any(v >= 0.0f) && simd_is_first()) s += 1.0f;
    s += (float)(ulong)simd_ballot(v > 1.0f);
    simdgroup_barrier(mem_flags::mem_none);

    simdgroup_float8x8 ma, mb, mc = make_filled_simdgroup_matrix<float, 8, 8>(1.0f);
    simdgroup_load(ma, shared, 8);
    simdgroup_load(mb, shared, 8, ulong2(0, 0), true);
    simdgroup_multiply_accumulate(mc, ma, mb, mc);
    simdgroup_half8x8 mh;
    simdgroup_multiply(mh, simdgroup_half8x8(half(1)), simdgroup_half8x8(half(2)));
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) simdgroup_store(mc, shared, 8);

    atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
    uint expected = 0;
    atomic_compare_exchange_weak_explicit(counter, &expected, 0u, memory_order_relaxed, memory_order_relaxed);
    atomic_fetch_add_explicit(fsum, 1.0f, memory_order_relaxed);

    // MSL's integer abs, min, max, clamp on ints (not libc's).
    int neg = -3 - (int)(gid & 1u);
    ints[gid] = abs(neg) + abs(int2(neg, 1)).x + min(neg, 0) + max(neg, 0) + clamp(neg, -1, 1) + popcount(7u) +
                (int)clz(1u) + (int)all(bool2(true)) + (int)any(bool3(false));
    float3 dir = normalize(float3(v, 1.0f, 2.0f));
    out[gid] = s + dot(dir, float3(1.0f)) + fma(v, 2.0f, 1.0f) + sin(v) + fabs(-v) + clamp(v, 0.0f, 1.0f) +
               metal::select(0.0f, 1.0f, v > 2.0f) + as_type<float>(0x3f800000u) + (float)iv.x + (float)lid2.x +
               (float)tpg.x + float(mh.thread_elements()[0]) + (float)(half)v + (float)(bfloat)v;
}

template <typename elem>
/*kernel*/ void hy_scale(device elem *data /*[[buffer(0)]]*/, uint gid /*[[thread_position_in_grid]]*/) {
    data[gid] = data[gid] * (elem)2;
}
template void hy_scale<float>(device float *, uint);

namespace pm_generated {
static const int sites_0[] = {1};
#define b_(kind, n) ::pm::rt::bind<::pm::rt::attr::kind, n>
static const ::pm::rt::kernel_entry entries[] = {
    {"hy_everything",
     &::pm::rt::run<&::hy_everything, PM_KERNEL_FIBERS, b_(buffer, 0), b_(buffer, 1), b_(buffer, 2), b_(buffer, 3),
                    b_(buffer, 4), b_(threadgroup, 0), b_(thread_position_in_grid, 0),
                    b_(thread_position_in_threadgroup, 0), b_(thread_index_in_threadgroup, 0),
                    b_(thread_index_in_simdgroup, 0), b_(simdgroup_index_in_threadgroup, 0),
                    b_(threads_per_threadgroup, 0)>,
     PM_KERNEL_FIBERS, 256, sites_0, 1},
    {"hy_scale", &::pm::rt::run<&::hy_scale<float>, PM_KERNEL_LOOP, b_(buffer, 0), b_(thread_position_in_grid, 0)>,
     PM_KERNEL_LOOP, 0, nullptr, 0},
};
#undef b_
static const pm_binding bind_0[] = {
    {PM_BIND_BUFFER, 0, ::pm::abi::param_bytes<&::hy_everything, 0>(), ::pm::abi::param_flags<&::hy_everything, 0>()},
    {PM_BIND_BUFFER, 3, ::pm::abi::param_bytes<&::hy_everything, 3>(), ::pm::abi::param_flags<&::hy_everything, 3>()},
    {PM_BIND_THREADGROUP, 0, ::pm::abi::param_bytes<&::hy_everything, 5>(), 0},
};
static_assert(::pm::abi::param_bytes<&::hy_everything, 3>() == sizeof(params), "a reference is read whole");
static_assert(::pm::abi::param_bytes<&::hy_everything, 0>() == 0, "a pointer may point at nothing");
static_assert(::pm::abi::param_flags<&::hy_everything, 0>() == PM_BIND_POINTER, "device float* may be written");
static_assert(::pm::abi::param_flags<&::hy_everything, 3>() == (PM_BIND_READ_ONLY | PM_BIND_REFERENCE), "constant is read-only");
static_assert(::pm::abi::param_type<&::hy_everything, 0>() == (PM_ELEM_FLOAT | 4u << 8 | 1u << 16), "float lanes");
static_assert(::pm::abi::param_size<&::hy_everything, 3>() == sizeof(params), "the referenced type's size");
} // namespace pm_generated
extern "C" __attribute__((visibility("default"))) const pm_kernel_bindings pm_cpu_bindings[] = {
    {pm_generated::bind_0, 3}, {nullptr, 0}};
extern "C" __attribute__((visibility("default"))) uint32_t pm_cpu_library(const pm_kernel_desc **kernels,
                                                                           uint32_t *count) {
    return ::pm::rt::library(pm_generated::entries, 2, kernels, count);
}
