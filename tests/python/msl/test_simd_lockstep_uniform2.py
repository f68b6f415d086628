"""SIMD lockstep's group-wide shortcuts, second round: adversarial cases, against NumPy.

test_simd_lockstep_uniform.py checks what the shortcuts are for; this file tries
to break them (Sources/MetalCPU/Compiler/Lockstep.swift):
- group-wide ("uniform") loops: signed, decrementing, multiplying and wrapping
  indices, zero trips, bounds on a threadgroup scalar that the body changes
  between barriers, on a constant struct's members and on the group's own size
  in partial groups (dispatchThreads with a grid not a multiple of the group),
  inside branches and inside loops whose trip count differs between
  simdgroups, after some threads returned; names that shadow (the index over a
  thread's local, a thread's local over a group constant), an index changed
  through a reference or a function object;
- statements under masks that lose threads mid-kernel (their all-thread copy);
- statements vectorised over the threads: a thread reading back what it wrote
  through device and threadgroup memory, pointers, arrays, vectors, a user
  function and the same array passed twice, atomics;
- `for (j = lane; j < L; j += 32)`: lanes of other types, a "lane" that is not
  the lane, L not a multiple of 32, `continue`, partial simdgroups; literal
  bounds stepped across the threads.
Each kernel runs compiled by default (lockstep: each was checked to be
rewritten, but for loop_exits, which lockstep leaves to fibers: continue or break
around SIMD calls)
and with PM_NO_LOCKSTEP (one fiber per thread), and is compared with
a NumPy model of MSL. SIMD-group calls here see whole simdgroups (or all their
lanes that are left): a lane's loop trips are the same for its simdgroup, so
the active lanes are the same in both modes. Values are small integers, so sums
are exact in any order. Cases parametrized with `_fixed(...)` are lockstep bugs
this file found (names that shadow, an index changed through a reference, a
functor, a static method or a ?: argument, a parameter whose [[attribute]]
comes first, an octal bound), since fixed and kept as regression tests.
"""

import numpy as np
import pytest

import pymetal as pm
from msl_kernels import MODES, compile_mode, fixed as _fixed

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"

SRC = r"""
struct Params { uint count; uint step; };
struct Bump { void operator()(thread uint &x) const { x += 1; } };
void step_on(thread uint &x) { x += 1; }
struct Steps { static void on(thread uint &x) { x += 1; } };
float bump_and_read(device float* p, uint i) { p[i] += 1.0f; return p[i] * 2.0f; }
void add_to(thread float& r, float v) { r += v; }
float scan8(device float* seg) { for (int q = 1; q < 8; q++) seg[q] += seg[q - 1]; return seg[7]; }

// Uniform loops of every shape, after some threads returned (partial simdgroups).
kernel void shapes(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]], constant int& m [[buffer(2)]],
                   constant uint& live [[buffer(3)]],
                   uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
                   uint tgp [[threadgroup_position_in_grid]], uint ngroups [[threadgroups_per_grid]]) {
    if (gid >= live) return;
    float acc = 0;
    for (int i = m - 1; i >= 0; i--) { float s = simd_sum(float(i + 1)); acc += s; }   // signed, decrementing
    for (uint i = 1; i < n; i *= 2) { float s = simd_sum(float(i)); acc += 2 * s; }    // multiplying
    for (uint i = n; i < n + 3u; i--) {                                                 // ends when i wraps
        uint w = i % 4 + 1;                                                             // (a const w: fibers)
        for (uint j = 0; j < w; j++) { float s = simd_sum(float(j + w)); acc += s; }
    }
    if (sg % 2 == 0) {                                                                  // in a branch
        for (uint i = 0; i < n; i += 3) { float s = simd_sum(1.0f); acc += s; }
    }
    for (uint r = sg; r < 3; r++) {                                                     // in a per-simdgroup loop
        for (uint c = tgp; c < n; c += ngroups) { float s = simd_sum(float(c)); acc += s; out[gid] = acc; }
    }
    out[gid] = acc;
}

// A group-wide loop whose start and step are the outer one's index; the size at dispatch in partial groups.
kernel void nested_on_index(device float* out [[buffer(0)]], device float* sizes [[buffer(1)]], constant uint& n [[buffer(2)]],
                            uint gid [[thread_position_in_grid]],
                            uint dtpg [[dispatch_threads_per_threadgroup]], uint tpg [[threads_per_threadgroup]]) {
    float acc = 0;
    for (uint i = 0; i < n; i++) {
        for (uint j = i * 2; j < n + i; j += i + 1) { float s = simd_sum(float(i * j)); acc += s; }
    }
    for (uint i = 0; i < dtpg; i += 32) { float s = simd_sum(1.0f); acc += s * 1000; }
    out[gid] = acc;
    sizes[gid] = float(tpg + dtpg * 10000);
}

// Bounds in parameters of every shape (an [[attribute]] is no array extent; an array, a pointer and a
// device reference are no group constants); a literal-bound loop stepping down across the threads.
kernel void parameter_bounds(device float* out [[buffer(0)]], constant uint (&w)[4] [[buffer(1)]],
                             device const uint& dn [[buffer(2)]], constant float4& v [[buffer(3)]],
                             [[maybe_unused]] constant uint* cp [[buffer(4)]],
                             uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
    float acc = 0;
    for (uint i = 0; i < w[1]; i++) { float s = simd_sum(1.0f); acc += s; }
    for (uint i = 0; i < dn; i += 2) { float s = simd_sum(2.0f); acc += s; }
    for (uint i = 0; i < v.y; i++) { float s = simd_sum(4.0f); acc += s; }
    for (uint i = 0; i < *cp; i++) { float s = simd_sum(8.0f); acc += s; }
    for (int j = 99 - lid; j >= 0; j += -48) acc += float(j) * 100.0f;
    out[gid] = acc;
}

// Grid- and lane-strided loops inside a group-wide loop, starting on its index; an index declared
// before its loop and read after it.
kernel void strided_in_uniform(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                               constant uint& n [[buffer(2)]], constant uint& K [[buffer(3)]],
                               uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                               uint tpg [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    float total = 0;
    for (uint k = 0; k < K; k++) {
        float acc = 0;
        for (uint j = lid + k; j < n; j += tpg) acc += x[j] * float(k + 1);
        for (uint j = lane; j < 64; j += 32) acc += x[j + k] * 100.0f;
        float s = simd_sum(acc);
        total += s;
    }
    uint k;
    for (k = 0; k < K; k++) { float s = simd_sum(1.0f); total += s * 10000.0f; }
    out[gid] = total + float(k) * 1000000.0f;
}

// A pointer and a reference whose [[attribute]] comes first, as steps the thread changes.
kernel void attribute_first(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                            [[maybe_unused]] device uint* st [[buffer(2)]], constant uint& n [[buffer(3)]],
                            uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint i = gid; i < n; i += *st) { acc += x[i]; *st += 1; }
    out[gid] = simd_sum(acc);
}
kernel void attribute_first_ref(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                [[maybe_unused]] device uint& st [[buffer(2)]], constant uint& n [[buffer(3)]],
                                uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint i = gid; i < n; i += st) { acc += x[i]; st += 1; }
    out[gid] = simd_sum(acc);
}

// Group constants set from the index in the body, bounding a loop inside it and read by statements.
kernel void constants_from_index(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                                 uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
    float acc = 0;
    for (uint i = 0; i < n; i++) {
        const uint w = i % 4 + 1;
        for (uint j = 0; j < w; j++) { float s = simd_sum(float(j + w)); acc += s; }
        acc += float(w * lid);
    }
    out[gid] = acc;
}

// continue and break in a loop around SIMD-group calls.
kernel void loop_exits(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                       uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint i = 0; i < n; i++) {
        float s = simd_sum(float(i));
        acc += s;
        if (i % 3 == 1) continue;
        if (i == 7) break;
        acc += 1000;
    }
    out[gid] = acc;
}

// Bounds and steps on the simdgroup count and width in partial groups; threadgroup and device
// atomics counted in a group-wide loop.
kernel void simdgroup_counts(device float* out [[buffer(0)]], device atomic_uint* total [[buffer(1)]], device uint* sizes [[buffer(2)]],
                             uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                             uint nsg [[simdgroups_per_threadgroup]], uint width [[threads_per_simdgroup]],
                             uint tpg [[threads_per_threadgroup]]) {
    threadgroup atomic_uint count;
    if (lid == 0) atomic_store_explicit(&count, 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0;
    for (uint s = 0; s < nsg * width; s += width) {
        atomic_fetch_add_explicit(&count, 1u, memory_order_relaxed);
        atomic_fetch_add_explicit(total, 1u, memory_order_relaxed);
        float v = simd_sum(1.0f);
        acc += v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = acc + float(atomic_load_explicit(&count, memory_order_relaxed)) * 100.0f;
    sizes[gid] = nsg * 10000 + tpg;
}

// The group's own size in partial groups, as a bound of a loop with barriers.
kernel void own_size(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                     uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                     uint tpg [[threads_per_threadgroup]]) {
    threadgroup float t[1024];
    t[lid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0;
    for (uint i = 0; i < tpg; i += 32) {
        float s = simd_sum(t[(lid + i) % tpg]);
        acc += s;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = acc + float(tpg);
}

// A bound in threadgroup memory, lowered by one thread between barriers; a constant struct's members.
kernel void shared_bound(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                         constant Params& p [[buffer(2)]],
                         uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                         uint tgp [[threadgroup_position_in_grid]]) {
    threadgroup uint lim;
    if (lid == 0) lim = n + tgp;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0;
    for (uint i = 0; i < lim; i++) {
        float s = simd_sum(float(i));
        acc += s;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (lid == 0) lim -= 1;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint i = 0; i < p.count; i += p.step) { float s = simd_sum(1.0f); acc += s * 1000; }
    out[gid] = acc;
}

// The index shadowed inside the body by a thread's local (the loop is then the threads' own).
kernel void shadow_in_body(device float* out [[buffer(0)]], constant uint& K [[buffer(1)]],
                           uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    float acc = 0;
    for (uint k = 0; k < K; k++) {
        {
            uint k = sg + 1;
            for (uint j = 0; j < k; j++) { float s = simd_sum(1.0f); acc += s; }
        }
        float s = simd_sum(float(k));
        acc += s;
    }
    out[gid] = acc;
}

// The index shadows a thread's local; the local is used after the loop.
kernel void shadow_outer_local(device float* out [[buffer(0)]],
                               uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
    uint i = lid + 100;
    float acc = 0;
    for (uint i = 0; i < 3; i++) { float s = simd_sum(float(i)); acc += s; }
    out[gid] = acc + float(i);
}

// A thread's local shadows a group constant, and bounds a loop (per simdgroup).
kernel void shadow_group_constant(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]],
                                  uint sg [[simdgroup_index_in_threadgroup]]) {
    float acc = 0;
    const uint m = 2;
    {
        uint m = sg + 1;
        for (uint i = 0; i < m; i++) { float s = simd_sum(1.0f); acc += s; }
    }
    out[gid] = acc + float(m);
}

// A group-wide loop's index shadows the index of the simdgroups' own loop.
kernel void shadow_loop_index(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]],
                              uint sg [[simdgroup_index_in_threadgroup]]) {
    float acc = 0;
    for (uint i = sg; i < 4; i++) {
        for (uint i = 0; i < 2; i++) { float s = simd_sum(float(i + 1)); acc += s; }
    }
    out[gid] = acc;
}

// A thread's local shadows threadgroup memory, and bounds a loop (per simdgroup).
kernel void shadow_threadgroup_scalar(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]],
                                      uint lid [[thread_index_in_threadgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup uint lim;
    if (lid == 0) lim = 3;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0;
    {
        uint lim = sg + 1;
        for (uint i = 0; i < lim; i++) { float s = simd_sum(1.0f); acc += s; }
    }
    out[gid] = acc + float(lim);
}

// A barrier in a group-wide loop after some threads returned: they count as arrived (as on Apple GPUs).
kernel void barrier_after_return(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]], constant uint& K [[buffer(2)]],
                                 uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup float t[256];
    if (gid >= n) return;
    float acc = 0;
    for (uint k = 0; k < K; k++) {
        t[lid] = float(k + lid);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        acc += t[0];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = acc;
}

// Short indices: signed steps past zero, unsigned wrapping.
kernel void short_indices(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (short i = 5; i != -3; i -= 2) { float s = simd_sum(float(i)); acc += s; }
    for (ushort i = 65534; i != 2; i++) { float s = simd_sum(float(i)); acc += s; }
    out[gid] = acc;
}

// A grid-stride loop whose condition reads what the thread wrote in the step before.
kernel void strided_condition(device float* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]],
                              uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0;
    for (uint i = gid; i < n && x[i] > 0; i += grid) { acc += x[i]; if (i + grid < n) x[i + grid] -= x[i]; }
    out[gid] = simd_sum(acc) + acc;
}

// The index moved on by one in the body (every other step is skipped), `how`: through a reference
// bound to it, a function object, a conditional expression that is the index (an lvalue) handed
// to a function, a static member function; each takes it by reference.
kernel void index_moved(device float* out [[buffer(0)]], constant uint& K [[buffer(1)]], constant uint& how [[buffer(2)]],
                        uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint k = 0; k < K; k++) {
        float s = simd_sum(float(k));
        acc += s;
        if (how == 0) { thread uint &r(k); r += 1; }
        else if (how == 1) { Bump bump; bump(k); }
        else if (how == 2) step_on(K > 0 ? k : k);
        else Steps::on(k);
    }
    out[gid] = acc;
}

// A lane-strided loop whose index a reference moves on: one step, not two.
kernel void lane_steps_by_reference(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                    uint lane [[thread_index_in_simdgroup]], uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint j = lane; j < 64; j += 32) { acc += x[j]; { thread uint &r(j); r += 32; } }
    out[gid] = simd_sum(acc) + acc;
}

// A group-strided loop whose index a reference moves on: every other step.
kernel void strided_by_reference(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                 constant uint& n [[buffer(2)]],
                                 uint lid [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]],
                                 uint tpg [[threads_per_threadgroup]]) {
    float acc = 0;
    for (uint j = lid; j < n; j += tpg) { acc += x[j]; { thread uint &r(j); r += tpg; } }
    out[gid] = simd_sum(acc) + acc;
}

// Masks that lose threads: after a return, in a loop whose trips differ between simdgroups;
// a lane-strided loop and a simdgroup barrier under them.
kernel void masks(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], device float* scratch [[buffer(2)]],
                  constant uint& n [[buffer(3)]],
                  uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
                  uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float t[8][64];
    if (gid >= n) return;
    scratch[gid] = x[gid] * 2;
    for (uint k = sg; k < 4; k++) {
        scratch[gid] += float(k);
        for (uint j = lane; j < 64; j += 32) t[sg][j] = float(k + j);
        simdgroup_barrier(mem_flags::mem_threadgroup);
        float s = simd_sum(t[sg][lane] + t[sg][lane + 32]);
        scratch[gid] += s;
        simdgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = scratch[gid] + 1;
}

// A thread reads back its own writes within a statement: device (a and b may be one array),
// threadgroup memory at a per-thread offset, arrays, vectors, a user function; atomics.
kernel void readback(device float* a [[buffer(0)]], device float* b [[buffer(1)]],
                     device atomic_uint* counts [[buffer(2)]], device float* out [[buffer(3)]],
                     uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup float t[2048];
    float v[4];
    float4 q = float4(a[gid]);
    { a[gid] += 1.0f; b[gid] = b[gid] * 2.0f + a[gid]; }
    { threadgroup float* p = t + 2 * lid; p[0] = a[gid]; p[1] = p[0] * 3.0f; p[0] += p[1]; }
    v[0] = t[2 * lid]; v[1] = v[0] + 1; v[2] = v[1] * v[0]; v[3] = bump_and_read(b, gid);
    q.y = q.x + v[1]; q.z = q.y * 2; q.w = dot(q.xyz, float3(1));
    atomic_fetch_add_explicit(&counts[gid % 4], 1u, memory_order_relaxed);
    float s = simd_sum(v[3]);
    out[gid] = v[2] + q.w + s;
}

// More of a thread's own writes: a user function's loop over its segment, a local through a
// pointer and a reference, an array at a per-thread index, threadgroup scans at per-thread
// offsets; tickets from device and threadgroup atomics.
kernel void readback_more(device float* seg [[buffer(0)]], device atomic_uint* count [[buffer(1)]],
                          device uint* tickets [[buffer(2)]], device uint* mine [[buffer(3)]], device float* out [[buffer(4)]],
                          uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup atomic_uint slots[4];
    threadgroup float tg[1024 * 4];
    if (lid < 4) atomic_store_explicit(&slots[lid], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0;
    thread float* pa = &acc;
    device float* p = seg + gid * 8;
    float v[4];
    v[0] = 0; v[1] = 0; v[2] = 0; v[3] = 0;
    float total = scan8(p);
    add_to(acc, total);
    *pa += p[0];
    v[lid % 4] = acc; v[(lid + 1) % 4] = v[lid % 4] * 2;
    { threadgroup float* t = tg + lid * 4; for (int q = 0; q < 4; q++) t[q] = v[q]; for (int q = 1; q < 4; q++) t[q] += t[q - 1]; acc = t[3]; }
    tickets[gid] = atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
    mine[gid] = atomic_fetch_add_explicit(&slots[lid % 4], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = simd_sum(acc);
    out[gid] = s + float(atomic_load_explicit(&slots[lid % 4], memory_order_relaxed)) * 1000.0f;
}

// Lane-strided loops: a ushort lane and index, L not a multiple of 32, a continue, after returns.
kernel void lane_loops(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& live [[buffer(2)]],
                       ushort lane [[thread_index_in_simdgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                       uint gid [[thread_position_in_grid]], uint tgp [[threadgroup_position_in_grid]]) {
    threadgroup float t[8][96];
    if (gid >= live) return;
    for (ushort j = lane; j < 96; j += 32) t[sg][j] = x[tgp * 768 + sg * 96 + j];
    for (int j = lane; j < 40; j += 32) t[sg][j] += 10.0f;
    for (uint j = lane; j < 64; j += 32) { if (j % 3 == 0) continue; t[sg][j] *= 2.0f; }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    float s = simd_sum(t[sg][lane] + t[sg][lane + 32] * 3.0f + t[sg][lane + 64] * 5.0f);
    out[gid] = s;
}

// 2-D groups whose rows are no multiple of 32: a lane-strided loop and a group-wide loop on the
// group's 2-D position, after returns.
kernel void lanes_2d(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& live [[buffer(2)]],
                     uint2 pos [[thread_position_in_grid]], uint2 size [[threads_per_grid]],
                     uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                     uint lid [[thread_index_in_threadgroup]], uint2 tgp [[threadgroup_position_in_grid]],
                     uint2 ngroups [[threadgroups_per_grid]]) {
    threadgroup float t[8][64];
    uint gid = pos.y * size.x + pos.x;
    if (gid >= live) return;
    for (uint j = lane; j < 64; j += 32) t[sg][j] = x[(tgp.y * ngroups.x + tgp.x) * 512 + sg * 64 + j];
    simdgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0;
    for (uint k = tgp.x; k < 3; k += ngroups.y) { float s = simd_sum(t[sg][lane] * float(k + 1) + t[sg][lane + 32]); acc += s; }
    out[gid] = acc + float(lid) * 1000;
}

// A lane-strided loop to an octal bound (0320 == 208: 6 or 7 steps, not 320 / 32).
kernel void octal_bound(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        uint lane [[thread_index_in_simdgroup]], uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint j = lane; j < 0320; j += 32) acc += x[j];
    out[gid] = simd_sum(acc) + acc;
}

// A "lane" that is the thread's index in its group: lanes past 31 take fewer steps.
kernel void not_the_lane(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         uint lane [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
    float acc = 0;
    for (uint j = lane; j < 64; j += 32) acc += x[j];
    for (uint j = lane; j < 64; j += 32) { acc += x[j] * 10.0f; j += 32; }
    out[gid] = simd_sum(acc) + acc;
}

// Literal bounds stepped across the threads: partial simdgroups, signed, offset, <=, continue, 1024 threads.
kernel void literal_bounds(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]],
                           uint lid [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]],
                           uint tgp [[threadgroup_position_in_grid]]) {
    if (gid >= n) return;
    float acc = 0;
    for (uint j = lid; j < 100; j += 48) acc += x[j];
    for (int j = int(lid) - 5; j < 7; j += 16) acc += float(j) * 100.0f;
    for (uint j = lid + 3; j <= 1000; j += 1024) acc += x[j % 1000] * 3.0f;
    for (uint j = lid; j < 130; j += 64) { if (j % 5 == 0) continue; acc += x[j + tgp] * 7.0f; }
    out[gid] = simd_sum(acc) + acc;
}
"""


def _lib(mode):
    return compile_mode(HEADER + SRC, mode)


def _ints(seed, shape, lo=-3, hi=4):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(np.float32)


def _threads(grid, tg, live=None):
    """Per thread of a 1-D dispatch: lid, simdgroup, lane, group, and how many of its
    simdgroup's lanes are active (exist, and have gid < live)."""
    gid = np.arange(grid)
    lid, group = gid % tg, gid // tg
    sg, lane = lid // 32, lid % 32
    key = group * ((tg + 31) // 32) + sg
    active = gid < (grid if live is None else live)
    count = np.bincount(key[active], minlength=key.max() + 1)[key]
    return lid, sg, lane, group, count, active


def _simd_sum(values, grid, tg, active):
    """simd_sum over the active lanes of each thread's simdgroup."""
    gid = np.arange(grid)
    key = (gid // tg) * ((tg + 31) // 32) + gid % tg // 32
    sums = np.zeros(key.max() + 1)
    np.add.at(sums, key[active], np.asarray(values, np.float64)[active])
    return sums[key]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,live", [(1, 1, 1), (32, 32, 32), (100, 64, 70), (96, 48, 90), (1024, 1024, 1000),
                                          (640, 128, 517)])
@pytest.mark.parametrize("n,m", [(0, 0), (1, -2), (13, 4)])
def test_uniform_loop_shapes(mode, grid, tg, live, n, m):
    out = np.full(grid, -1.0, np.float32)
    _lib(mode).shapes(out, np.uint32(n), np.int32(m), np.uint32(live), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg, live)
    groups = -(-grid // tg)
    acc = c * sum(i + 1 for i in range(max(m, 0)))
    acc = acc + 2 * c * sum(1 << k for k in range(32) if (1 << k) < n)
    acc = acc + c * sum(sum(j + i % 4 + 1 for j in range(i % 4 + 1)) for i in range(n, -1, -1))
    acc = acc + np.where(sg % 2 == 0, c * len(range(0, n, 3)), 0)
    acc = acc + np.maximum(3 - sg, 0) * c * np.array([sum(range(g, n, groups)) for g in group])
    np.testing.assert_array_equal(out, np.where(active, acc, -1.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (1, 64), (96, 64), (70, 48), (2053, 1024)])
@pytest.mark.parametrize("n", [0, 1, 6])
def test_nested_loop_on_the_outer_index_and_the_dispatch_size(mode, grid, tg, n):
    out = np.full(grid, np.nan, np.float32)
    sizes = np.full(grid, np.nan, np.float32)
    _lib(mode).nested_on_index(out, sizes, np.uint32(n), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    tri = sum(i * j for i in range(n) for j in range(2 * i, n + i, i + 1))
    np.testing.assert_array_equal(out, c * tri + c * 1000 * len(range(0, tg, 32)))
    np.testing.assert_array_equal(sizes, np.minimum(tg, grid - group * tg) + tg * 10000)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (128, 128), (200, 96), (1024, 1024)])
@pytest.mark.parametrize("w1,dn,vy,cp", [(0, 0, 0.0, 0), (3, 5, 2.0, 2), (1, 1, 1.5, 7)])
def test_bounds_in_parameters_of_every_shape(mode, grid, tg, w1, dn, vy, cp):
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).parameter_bounds(out, np.array([9, w1, 9, 9], np.uint32), np.uint32(dn), np.array([9, vy, 9, 9], np.float32),
                                np.array([cp], np.uint32), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    acc = c * (w1 + 2 * len(range(0, dn, 2)) + 4 * int(np.ceil(vy)) + 8 * cp)
    acc = acc + np.array([100 * sum(range(99 - l, -1, -48)) for l in lid])
    np.testing.assert_array_equal(out, acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (100, 48), (1100, 1024)])
@pytest.mark.parametrize("n,K", [(0, 2), (70, 0), (300, 3)])
def test_strided_loops_inside_a_uniform_loop(mode, grid, tg, n, K):
    x = _ints(n + K, max(n, 64 + K))
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).strided_in_uniform(x, out, np.uint32(n), np.uint32(K), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    size = np.minimum(tg, grid - group * tg)
    xs = x.astype(np.float64)
    total = np.zeros(grid)
    for k in range(K):
        acc = np.array([xs[l + k:n:s].sum() * (k + 1) for l, s in zip(lid, size)])
        acc += (xs[lane + k] + xs[lane + 32 + k]) * 100
        total += _simd_sum(acc, grid, tg, active)
    np.testing.assert_array_equal(out, total + c * K * 10000 + K * 1000000)


@pytest.mark.parametrize("mode", _fixed("a parameter whose [[attribute]] comes first is taken for a value (invariant), "
                                     "so a step read through it is not read again"))
@pytest.mark.parametrize("kernel", ["attribute_first", "attribute_first_ref"])
@pytest.mark.parametrize("n,step", [(50, 1), (200, 3)])
def test_parameters_with_their_attribute_first(mode, kernel, n, step):
    # one thread (a step that the threads share and change would be a race)
    x = _ints(n, n)
    out = np.full(1, np.nan, np.float32)
    st = np.array([step], np.uint32)
    getattr(_lib(mode), kernel)(x, out, st, np.uint32(n), grid=1, threadgroup=1)
    i, acc, s = 0, 0.0, step
    while i < n:
        acc += x[i]
        s += 1
        i += s
    np.testing.assert_array_equal(out, [acc])
    np.testing.assert_array_equal(st, [s])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (100, 48), (1024, 1024)])
@pytest.mark.parametrize("n", [0, 5, 12])
def test_constants_from_the_index_and_loop_exits(mode, grid, tg, n):
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).constants_from_index(out, np.uint32(n), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    acc = sum(c * sum(j + i % 4 + 1 for j in range(i % 4 + 1)) + (i % 4 + 1) * lid for i in range(n))
    np.testing.assert_array_equal(out, np.zeros(grid) + acc)
    _lib(mode).loop_exits(out, np.uint32(n), grid=grid, threadgroup=tg)
    acc = np.zeros(grid)
    for i in range(n):
        acc += c * i
        if i % 3 == 1:
            continue
        if i == 7:
            break
        acc += 1000
    np.testing.assert_array_equal(out, acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (37, 32), (100, 64), (70, 48), (2053, 1024), (5, 1024)])
def test_simdgroup_count_and_width_in_partial_groups(mode, grid, tg):
    out = np.full(grid, np.nan, np.float32)
    total = np.zeros(1, np.uint32)
    sizes = np.zeros(grid, np.uint32)
    _lib(mode).simdgroup_counts(out, total, sizes, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    size = np.minimum(tg, grid - group * tg)  # the group's own size
    nsg = (size + 31) // 32
    np.testing.assert_array_equal(out, nsg * c + nsg * size * 100)  # each thread counted once a step
    np.testing.assert_array_equal(sizes, nsg * 10000 + size)
    assert total[0] == nsg.sum()  # each thread adds nsg


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 32), (37, 32), (100, 64), (70, 48), (1000, 256), (2053, 1024), (5, 1024)])
def test_the_groups_own_size_in_partial_groups(mode, grid, tg):
    x = _ints(grid, grid)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).own_size(x, out, grid=grid, threadgroup=tg)
    expected = np.zeros(grid)
    for g0 in range(0, grid, tg):
        t = x[g0:g0 + tg].astype(np.float64)
        size = t.size  # the last group is smaller
        lid = np.arange(size)
        for i in range(0, size, 32):
            v = t[(lid + i) % size]
            expected[g0:g0 + size] += _simd_sum(v, size, size, np.ones(size, bool))
        expected[g0:g0 + size] += size
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (300, 128), (1024, 1024)])
@pytest.mark.parametrize("n,count,step", [(0, 0, 1), (3, 5, 2), (6, 1, 7)])
def test_bounds_in_threadgroup_memory_and_constant_structs(mode, grid, tg, n, count, step):
    out = np.full(grid, np.nan, np.float32)
    params = np.array([count, step], np.uint32)
    _lib(mode).shared_bound(out, np.uint32(n), params, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    # lim = n + group, lowered by one each step while i rises: ceil(lim / 2) steps
    trips = (n + group + 1) // 2
    acc = c * trips * (trips - 1) / 2 + c * 1000 * len(range(0, count, step))
    np.testing.assert_array_equal(out, acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (96, 96), (200, 128)])
@pytest.mark.parametrize("K", [0, 3])
def test_index_shadowed_inside_the_body(mode, grid, tg, K):
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).shadow_in_body(out, np.uint32(K), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    np.testing.assert_array_equal(out, K * c * (sg + 1) + c * K * (K - 1) / 2)


# What each shadowing kernel writes, from its threads' simdgroup sizes, simdgroups and indices.
SHADOWED = {
    "shadow_outer_local": lambda c, sg, lid: c * 3 + lid + 100,
    "shadow_loop_index": lambda c, sg, lid: np.maximum(4 - sg, 0) * c * 3,
    "shadow_group_constant": lambda c, sg, lid: c * (sg + 1) + 2,
    "shadow_threadgroup_scalar": lambda c, sg, lid: c * (sg + 1) + 3,
}


def _shadowed(mode, kernel, grid, tg):
    out = np.full(grid, np.nan, np.float32)
    getattr(_lib(mode), kernel)(out, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    np.testing.assert_array_equal(out, SHADOWED[kernel](c, sg, lid))


@pytest.mark.parametrize("mode", _fixed("a uniform index shadowing a thread's local (or loop index): the body's statements see the thread's"))
@pytest.mark.parametrize("kernel", ["shadow_outer_local", "shadow_loop_index"])
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (300, 128)])
def test_uniform_index_shadowing_a_threads_name(mode, kernel, grid, tg):
    _shadowed(mode, kernel, grid, tg)


@pytest.mark.parametrize("mode", _fixed("a group constant or threadgroup scalar shadowed by a thread's local still bounds a group-wide loop"))
@pytest.mark.parametrize("kernel", ["shadow_group_constant", "shadow_threadgroup_scalar"])
@pytest.mark.parametrize("grid,tg", [(32, 32), (96, 96), (300, 128)])
def test_threads_local_shadowing_a_group_name(mode, kernel, grid, tg):
    _shadowed(mode, kernel, grid, tg)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,n,K", [(1, 1, 1, 3), (96, 96, 96, 2), (256, 64, 192, 3), (256, 64, 0, 5), (100, 32, 64, 0),
                                        (96, 96, 50, 2), (256, 64, 200, 2), (64, 32, 33, 2)])
def test_barrier_in_a_uniform_loop_after_returns(mode, grid, tg, n, K):
    # groups whose threads all returned take no step (nobody waits at the barrier); in a group that
    # some threads left, those count as arrived at every later barrier, as on Apple GPUs (an error
    # only under PYMETAL_VALIDATION: test_barrier_divergence.py)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).barrier_after_return(out, np.uint32(n), np.uint32(K), grid=grid, threadgroup=tg)
    gid = np.arange(grid)
    np.testing.assert_array_equal(out, np.where(gid < n, sum(range(K)), np.nan))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (40, 40), (128, 64)])
def test_short_indices(mode, grid, tg):
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).short_indices(out, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    np.testing.assert_array_equal(out, c * (5 + 3 + 1 - 1 + 65534 + 65535 + 0 + 1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,n", [(1, 1, 1), (1, 1, 7), (64, 64, 300), (96, 32, 1000), (1024, 1024, 5000)])
def test_strided_condition_on_the_threads_own_writes(mode, grid, tg, n):
    x0 = _ints(n, n, 0, 4)
    x = x0.copy()
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).strided_condition(x, out, np.uint32(n), grid=grid, threadgroup=tg)
    xs = x0.astype(np.float64)
    acc = np.zeros(grid)
    for g in range(grid):
        i = g
        while i < n and xs[i] > 0:
            acc[g] += xs[i]
            if i + grid < n:
                xs[i + grid] -= xs[i]
            i += grid
    lid, sg, lane, group, c, active = _threads(grid, tg)
    np.testing.assert_array_equal(x, xs)
    np.testing.assert_array_equal(out, _simd_sum(acc, grid, tg, active) + acc)


@pytest.mark.parametrize("mode", _fixed("a uniform index changed through a reference the front end does not see "
                                     "(T &r(k), a function object, c ? k : k, S::f(k)) is changed by every thread"))
@pytest.mark.parametrize("how", [0, 1, 2, 3])
@pytest.mark.parametrize("grid,tg", [(2, 2), (64, 64), (300, 128)])  # (one thread moves it once, as it should)
def test_index_changed_through_a_reference(mode, how, grid, tg):
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).index_moved(out, np.uint32(7), np.uint32(how), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    np.testing.assert_array_equal(out, c * (0 + 2 + 4 + 6))


@pytest.mark.parametrize("mode", _fixed("a lane-strided loop's index moved on through a reference still takes L / 32 steps"))
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (100, 48)])
def test_lane_strided_index_changed_through_a_reference(mode, grid, tg):
    x = _ints(1, 64)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).lane_steps_by_reference(x, out, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    acc = x[lane].astype(np.float64)  # one step: the reference moved j past 64
    np.testing.assert_array_equal(out, _simd_sum(acc, grid, tg, active) + acc)


@pytest.mark.parametrize("mode", _fixed("a strided loop's index moved on through a reference is recomputed as A + k * S"))
@pytest.mark.parametrize("grid,tg,n", [(64, 64, 200), (300, 128, 1000)])
def test_strided_index_changed_through_a_reference(mode, grid, tg, n):
    x = _ints(2, n)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).strided_by_reference(x, out, np.uint32(n), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    size = np.minimum(tg, grid - group * tg)  # threads_per_threadgroup
    acc = np.array([x[l:n:2 * s].sum(dtype=np.float64) for l, s in zip(lid, size)])
    np.testing.assert_array_equal(out, _simd_sum(acc, grid, tg, active) + acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,n", [(1, 1, 1), (64, 64, 64), (128, 128, 100), (256, 256, 75), (480, 160, 333),
                                       (512, 256, 0)])
def test_masks_losing_threads(mode, grid, tg, n):
    x = _ints(n, grid)
    out = np.full(grid, np.nan, np.float32)
    scratch = np.full(grid, np.nan, np.float32)
    _lib(mode).masks(x, out, scratch, np.uint32(n), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg, n)
    s = x.astype(np.float64) * 2
    lanes = _simd_sum(lane, grid, tg, active)
    for k in range(4):
        took = active & (sg <= k)
        s = np.where(took, s + k + 2 * k * c + 2 * lanes + 32 * c, s)
    np.testing.assert_array_equal(scratch, np.where(active, s, np.nan))
    np.testing.assert_array_equal(out, np.where(active, s + 1, np.nan))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (33, 32), (1024, 1024), (3000, 1024), (1000, 200)])
@pytest.mark.parametrize("same", [False, True])
def test_a_threads_own_writes_read_back(mode, grid, tg, same):
    a0, b0 = _ints(grid, grid), _ints(grid + 1, grid)
    a = a0.copy()
    b = a if same else b0.copy()
    counts = np.zeros(4, np.uint32)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).readback(a, b, counts, out, grid=grid, threadgroup=tg)
    a1 = a0.astype(np.float64) + 1
    b1 = a1 * 3 if same else b0 * 2.0 + a1
    v0 = (b1 if same else a1) * 4  # p[0] reads a after b's statement
    b1 = b1 + 1  # bump_and_read
    v1 = v0 + 1
    v2 = v1 * v0
    v3 = b1 * 2
    q = a0.astype(np.float64)
    qy = q + v1
    qw = q + qy + qy * 2
    lid, sg, lane, group, c, active = _threads(grid, tg)
    np.testing.assert_array_equal(b, b1)
    np.testing.assert_array_equal(a, b1 if same else a1)
    np.testing.assert_array_equal(counts, np.bincount(np.arange(grid) % 4, minlength=4))
    np.testing.assert_array_equal(out, v2 + qw + _simd_sum(v3, grid, tg, active))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (37, 32), (1024, 1024), (2500, 1024), (300, 128)])
def test_more_of_a_threads_own_writes_and_atomics(mode, grid, tg):
    seg0 = _ints(grid, grid * 8)
    seg = seg0.copy()
    count = np.zeros(1, np.uint32)
    tickets = np.zeros(grid, np.uint32)
    mine = np.zeros(grid, np.uint32)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).readback_more(seg, count, tickets, mine, out, grid=grid, threadgroup=tg)
    scanned = np.cumsum(seg0.reshape(grid, 8).astype(np.float64), axis=1)
    np.testing.assert_array_equal(seg, scanned.ravel())
    acc = (scanned[:, 7] + scanned[:, 0]) * 3  # v holds acc and 2 * acc; t's scan ends on their sum
    lid, sg, lane, group, c, active = _threads(grid, tg)
    assert count[0] == grid
    np.testing.assert_array_equal(np.sort(tickets), np.arange(grid))
    slot = group * 4 + lid % 4
    in_slot = np.bincount(slot, minlength=slot.max() + 1)
    for k in np.unique(slot):  # each slot's threads took tickets 0, 1, ... of it
        np.testing.assert_array_equal(np.sort(mine[slot == k]), np.arange(in_slot[k]))
    np.testing.assert_array_equal(out, _simd_sum(acc, grid, tg, active) + in_slot[slot] * 1000)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,live", [(1, 1, 1), (32, 32, 20), (100, 48, 100), (256, 256, 200), (600, 224, 555)])
def test_lane_strided_loops(mode, grid, tg, live):
    x = _ints(live, -(-grid // tg) * 768)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).lane_loops(x, out, np.uint32(live), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg, live)
    j = np.arange(96)
    t = x.reshape(-1, 8, 96)[group, sg].astype(np.float64)  # each thread's simdgroup's row
    t = t + np.where(j < 40, 10.0, 0.0)
    t = t * np.where((j < 64) & (j % 3 != 0), 2.0, 1.0)
    rows = np.arange(grid)
    own = t[rows, lane] + t[rows, lane + 32] * 3 + t[rows, lane + 64] * 5
    np.testing.assert_array_equal(out, np.where(active, _simd_sum(own, grid, tg, active), np.nan))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,live", [((12, 5), (12, 5), 60), ((24, 10), (12, 5), 200), ((36, 4), (12, 2), 100),
                                          ((7, 3), (7, 3), 21), ((64, 2), (32, 2), 90)])
def test_2d_groups_with_rows_no_multiple_of_32(mode, grid, tg, live):
    W, H = grid
    w, h = tg
    ngx = W // w
    x = _ints(live, (W // w) * (H // h) * 512)
    out = np.full(W * H, np.nan, np.float32)
    _lib(mode).lanes_2d(x, out, np.uint32(live), grid=grid, threadgroup=tg)
    py, px = np.divmod(np.arange(W * H), W)
    gid = py * W + px
    lid = (py % h) * w + px % w
    sg, lane = lid // 32, lid % 32
    gx, gy = px // w, py // h
    group = gy * ngx + gx
    active = gid < live
    t = x.reshape(-1, 8, 64)[group, sg].astype(np.float64)
    rows = np.arange(W * H)
    key = group * ((w * h + 31) // 32) + sg
    acc = np.zeros(W * H)
    for k in range(3):
        v = t[rows, lane] * (k + 1) + t[rows, lane + 32]
        sums = np.zeros(key.max() + 1)
        np.add.at(sums, key[active], v[active])
        steps = np.array([k in range(g, 3, H // h) for g in gx])  # k = tgp.x, += ngroups.y
        acc += np.where(steps, sums[key], 0)
    np.testing.assert_array_equal(out, np.where(active, acc + lid * 1000, np.nan))


@pytest.mark.parametrize("mode", _fixed("an octal bound is read as decimal (0320 taken for 320): 10 steps for every lane"))
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (100, 48)])
def test_lane_strided_loop_to_an_octal_bound(mode, grid, tg):
    x = _ints(4, 320)  # (320 elements: the wrong bound reads no further than this)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).octal_bound(x, out, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    acc = np.array([x[l:0o320:32].sum(dtype=np.float64) for l in lane])
    np.testing.assert_array_equal(out, _simd_sum(acc, grid, tg, active) + acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg", [(1, 1), (64, 64), (100, 128), (300, 96)])
def test_a_lane_named_parameter_that_is_not_the_lane(mode, grid, tg):
    x = _ints(3, 64)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).not_the_lane(x, out, grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg)
    acc = np.array([x[l:64:32].sum(dtype=np.float64) + 10 * x[l:64:64].sum(dtype=np.float64) for l in lid])
    np.testing.assert_array_equal(out, _simd_sum(acc, grid, tg, active) + acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,tg,n", [(1, 1, 1), (48, 48, 48), (100, 64, 90), (2048, 1024, 2000), (150, 20, 150)])
def test_literal_bounds_stepped_across_threads(mode, grid, tg, n):
    x = _ints(grid, 1000 + grid)
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).literal_bounds(x, out, np.uint32(n), grid=grid, threadgroup=tg)
    lid, sg, lane, group, c, active = _threads(grid, tg, n)
    xs = x.astype(np.float64)
    acc = np.array([xs[l:100:48].sum() + 100 * sum(range(l - 5, 7, 16)) + 3 * xs[[j % 1000 for j in range(l + 3, 1001, 1024)]].sum()
                    + 7 * sum(xs[j + g] for j in range(l, 130, 64) if j % 5) for l, g in zip(lid, group)])
    np.testing.assert_array_equal(out, np.where(active, _simd_sum(acc, grid, tg, active) + acc, np.nan))
