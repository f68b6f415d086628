"""Edge cases of SIMD lockstep (Sources/MetalCPU/Compiler/Lockstep.swift), against NumPy.

test_simd_lockstep.py covers the kernel shapes lockstep is for; this file is
the adversary's: source patterns a token-level rewrite may get wrong. Every
kernel is compiled twice, as the CPU backend compiles it by default (lockstep
wherever the front end rewrites it) and with PM_NO_LOCKSTEP (one fiber per
thread), and both results are compared with a NumPy model, so with each other.

- shadowing: nested locals named like body-level locals and buffer
  parameters; parameters and locals named l, i, k, w, x, y, z, g;
- declarations: const, pointers to device memory and to a local, several
  declarators, arrays, vectors, half, bool, ushort, a local assigned in an if;
  locals lockstep leaves to fibers (a struct, auto, a reference, an array
  with an initialiser);
- statements: every SIMD-group function, one per statement, over all lanes
  and over some; a ternary around a SIMD call, a SIMD call inside a function
  argument, two in one statement, compound assignments, increments and
  comma expressions, user functions with and without side effects;
- control flow: else-if chains around SIMD calls, barriers inside a uniform
  if, loops with SIMD calls or barriers inside, while, do, switch, break and
  continue in grid-stride loops, other steps and index types, downward
  indices, a bound that changes inside the body, #pragma unroll, grid-stride
  loops inside branches;
- threadgroup memory declared late, a [[threadgroup(0)]] parameter,
  threadgroup and device atomics, macros and statements over several lines;
- every position attribute on partial 2-D groups; 3-D grids with partial
  threadgroups; threadgroups of 1, 31, 33 and 1024;
- diagnostics: an error in a rewritten statement names the user's line.

The fibers reject a simdgroup whose lanes call different SIMD-group functions
(lockstep runs it as a GPU would), so a branch around SIMD calls here is
uniform across the simdgroup, or leaves the lanes that skip it nothing more
to call.

Tests parametrized with _fixed(...) are bugs this file found in lockstep (the
kernel is valid MSL, the fibers run matched NumPy, the lockstep compile failed,
computed something else or failed where fibers did not), kept as regression tests.
Sums use integer-valued floats: exact in any order.
"""

import functools
import re
import threading

import numpy as np
import pytest

import pymetal as pm
from msl_kernels import MODES, compile_mode, fixed as _fixed

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"


def _lib(source, mode):
    """The library of HEADER + source, compiled by default (lockstep where possible) or on fibers."""
    return compile_mode(HEADER + source, mode)


def _ints(seed, n, lo=-100, hi=100):
    return np.random.default_rng(seed).integers(lo, hi, size=n).astype(np.float32)


# ---------------------------------------------------------------------------
# A NumPy model of the simdgroups of a 1-D dispatch
# ---------------------------------------------------------------------------

def _lanes(n, tg):
    """(simdgroup key, lane, simdgroup index) per thread of a 1-D dispatch of n threads in groups of tg."""
    t = np.arange(n)
    lid = t % tg
    return (t // tg) * ((tg + 31) // 32) + lid // 32, lid % 32, lid // 32


def _reduce(ufunc, values, key, active, identity):
    """ufunc over the active lanes of each simdgroup, per thread (float64, or int64 for integers and bools)."""
    values = np.asarray(values)
    dtype = np.float64 if values.dtype.kind == "f" else np.int64
    out = np.full(int(key.max()) + 1 if key.size else 0, identity, dtype)
    ufunc.at(out, key[active], values.astype(dtype)[active])
    return out[key]


def _simd_sum(values, n, tg):
    """simd_sum with every lane active, per thread of a 1-D dispatch of n threads in groups of tg."""
    return _reduce(np.add, values, _lanes(n, tg)[0], np.ones(n, bool), 0)


def _exclusive(values, key, active):
    """Sum over the active lanes below each lane (keys ascending with the thread, as in 1-D)."""
    w = np.where(active, values, 0).astype(np.float64)
    c = np.cumsum(w) - w
    return c - c[np.searchsorted(key, key)]


# 1-D launches (threads, threadgroup): groups of 1, 31, 33 and 1024 threads, partial last groups
SHAPES = [(1, 1), (5, 1), (31, 31), (100, 31), (33, 33), (70, 33), (1000, 256), (1024, 1024), (3000, 1024)]


# ===========================================================================
# Kernels that both modes must run alike (one source, compiled once per mode)
# ===========================================================================

SRC = r"""
float twice(float v) { return 2.0f * v; }
void count(device atomic_uint* c) { atomic_fetch_add_explicit(c, 1u, memory_order_relaxed); }

// Names the generated code might use, and locals shadowing locals and a buffer parameter.
kernel void shadow(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]]) {
    float l = x[gid], i = 2.0f, k = 3.0f;
    uint y = lane, z = gid;
    {
        float l = 100.0f;     // shadows a body-level local
        float x = l + 1.0f;   // shadows the buffer parameter
        i += x;
    }
    if (sg % 2 == 0) {        // uniform across the simdgroup: fibers reject divergent SIMD calls
        float k = l * 2.0f;   // shadows a body-level local, in a branch with a SIMD call
        float s = simd_sum(k);
        out[4 * z] = s;
    } else {
        float l = -1.0f;
        out[4 * z] = simd_sum(l);
    }
    out[4 * z + 1] = i + k;
    out[4 * z + 2] = simd_max(l) + float(y);
    out[4 * z + 3] = float(z);
}

// Declarations of every kind a thread keeps across a SIMD call.
kernel void decls(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    const float c = x[gid] * 2.0f;
    device const float* row = x + gid;
    float acc = row[0];
    thread float* p = &acc;
    float a = 1.0f, b, d = a + c;
    float arr[4];
    for (uint q = 0; q < 4; ++q) arr[q] = float(q) * c;
    uint2 u2 = uint2(lane, gid);
    float4 f4 = float4(c, 1.0f, 2.0f, 3.0f);
    half h = half(lane);
    bool odd = (lane & 1) != 0;
    ushort us = ushort(lane * 3);
    float late;
    if (odd) late = 5.0f;
    else late = -5.0f;
    b = simd_sum(acc);
    *p += 10.0f;
    float s2 = simd_sum(f4.x + arr[3]);
    out[8 * gid + 0] = b;
    out[8 * gid + 1] = acc;
    out[8 * gid + 2] = d;
    out[8 * gid + 3] = s2;
    out[8 * gid + 4] = float(u2.x + u2.y);
    out[8 * gid + 5] = float(h) + float(us);
    out[8 * gid + 6] = late;
    out[8 * gid + 7] = simd_prefix_exclusive_sum(odd ? 1.0f : 0.0f);
}

// Statement forms around SIMD calls; `calls` counts the calls of a side-effecting helper.
kernel void stmts(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  device atomic_uint* calls [[buffer(2)]],
                  uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    float v = x[gid];
    float w = v * 2.0f;
    float t = sg % 2 == 0 ? simd_sum(v) : 0.0f;   // uniform across the simdgroup
    float m = max(simd_max(v), 0.0f);
    float acc = v;
    acc = acc + simd_min(v);
    uint j = 1;
    float tw = twice(v);
    tw = tw + simd_sum(v);
    count(calls);
    float cm;
    cm = (j += 1, w);
    out[6 * gid + 0] = t;
    out[6 * gid + 1] = m;
    out[6 * gid + 2] = acc;
    out[6 * gid + 3] = tw;
    out[6 * gid + 4] = float(j);
    out[6 * gid + 5] = cm;
}

// Statements a SIMD call cannot run twice for: two calls, a compound assignment, an increment
// inside the call's argument, a user function inside it.
kernel void stmts2(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
    float v = x[gid];
    float two = simd_sum(v) + simd_sum(v * 2.0f);
    float acc = v;
    acc += simd_sum(1.0f);
    uint j = 0;
    float inc = simd_sum(x[gid + j++]);
    float tw = simd_sum(twice(v));
    out[5 * gid + 0] = two;
    out[5 * gid + 1] = acc;
    out[5 * gid + 2] = inc;
    out[5 * gid + 3] = float(j);
    out[5 * gid + 4] = tw;
}

// Every SIMD-group function, one per statement, over all lanes (sel 0), lanes whose index is not
// a multiple of 3 (sel 1) or lanes with a positive value (sel 2): the others call nothing.
kernel void funcs(device const float* x [[buffer(0)]], device float* f [[buffer(1)]],
                  device uint* u [[buffer(2)]], constant uint& n [[buffer(3)]], constant uint& sel [[buffer(4)]],
                  uint gid [[thread_position_in_grid]], ushort lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    float pm1 = v > 0.0f ? 1.0f : -1.0f;
    uint bits = uint(int(v) + 100) * 2654435761u;
    if (sel == 0 || (lane % 3 != 0 && sel == 1) || (sel == 2 && v > 0.0f)) {  // (`&& lane` keeps fibers)
        f[0 * n + gid] = simd_sum(v);
        f[1 * n + gid] = simd_product(pm1);
        f[2 * n + gid] = simd_min(v);
        f[3 * n + gid] = simd_max(v);
        f[4 * n + gid] = simd_prefix_inclusive_sum(v);
        f[5 * n + gid] = simd_prefix_exclusive_sum(v);
        f[6 * n + gid] = simd_prefix_exclusive_product(pm1);
        f[7 * n + gid] = simd_shuffle(v, (lane * 7 + 1) % 32);
        f[8 * n + gid] = simd_shuffle_down(v, 3);
        f[9 * n + gid] = simd_shuffle_up(v, 2);
        f[10 * n + gid] = simd_shuffle_xor(v, 5);
        f[11 * n + gid] = simd_broadcast(v, 2);
        f[12 * n + gid] = simd_broadcast_first(v);
        f[13 * n + gid] = quad_sum(v);
        f[14 * n + gid] = quad_broadcast(v, 1);
        u[0 * n + gid] = (uint)(ulong)simd_ballot(v > 10.0f);
        u[1 * n + gid] = simd_all(v > -50.0f) ? 1u : 0u;
        u[2 * n + gid] = simd_any(v > 60.0f) ? 1u : 0u;
        u[3 * n + gid] = simd_and(bits);
        u[4 * n + gid] = simd_or(bits);
        u[5 * n + gid] = simd_xor(bits);
        u[6 * n + gid] = simd_is_first() ? 1u : 0u;
        u[7 * n + gid] = (uint)(ulong)simd_active_threads_mask();
        u[8 * n + gid] = uint(simd_sum(int(v)));
    }
}

// An else-if chain around SIMD calls, on the simdgroup (fibers reject a simdgroup whose lanes
// call different SIMD functions), then on data and on the lane: each call is over the lanes
// that reach it; the others call nothing more.
kernel void branches(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                     uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                     uint sg [[simdgroup_index_in_threadgroup]]) {
    float v = x[gid];
    float r = 0.0f;
    if (sg % 4 == 0) r = simd_sum(v);
    else if (sg % 4 == 1) {
        r = simd_max(v);
    } else if (sg % 4 == 2) {
        if (v > 0.0f) {
            if (true) r = simd_prefix_exclusive_sum(v);
        }
    } else if (lane < 16) r = simd_min(v);
    out[gid] = r;
}

// Grid-stride loop forms, each thread's sums; then the simdgroup's sum of all.
kernel void loops(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant uint& n [[buffer(2)]],
                  uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                  uint lane [[thread_index_in_simdgroup]]) {
    float s[3];
    s[0] = s[1] = s[2] = 0.0f;
    float s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
    uint stride = grid;
    for (uint i = gid; i < n; i = i + grid) s1 += x[i];
    for (uint i = gid; i < n; i += stride) s2 += x[i];
    for (int i = int(n) - 1 - int(gid); i >= 0; i -= int(grid)) s3 += x[i];
    for (ulong i = gid; i < n; i += grid) {
        if (x[i] < 0.0f) continue;
        s4 += x[i];
    }
    for (uint i = gid; i < n; i += grid) {
        if (x[i] > 90.0f) break;
        s5 += x[i];
    }
    uint lim = n;
    for (uint i = gid; i < lim; i += grid) {
        s6 += x[i];
        if (x[i] > 95.0f) lim = i;
    }
    #pragma unroll 4
    for (int i = gid; i < int(n); i += grid) s7 += x[i];
    uint w = gid;
    while (w < n) { s[0] += x[w]; w += grid; }
    uint dd = 0;
    do { s[1] += 1.0f; dd++; } while (dd < lane % 4);
    switch (lane % 3) {
        case 0: s[2] = 10.0f; break;
        case 1: s[2] = 20.0f;
        default: s[2] += 1.0f;
    }
    out[11 * gid + 0] = s1;
    out[11 * gid + 1] = s2;
    out[11 * gid + 2] = s3;
    out[11 * gid + 3] = s4;
    out[11 * gid + 4] = s5;
    out[11 * gid + 5] = s6;
    out[11 * gid + 6] = s7;
    out[11 * gid + 7] = s[0];
    out[11 * gid + 8] = s[1];
    out[11 * gid + 9] = s[2];
    out[11 * gid + 10] = simd_sum(s1 + s2 + s3 + s4 + s5 + s6 + s7 + s[0]);
}

// Grid-stride indices of other types, a condition with a side effect, a qualified SIMD call.
kernel void index_forms(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        constant uint& n [[buffer(2)]],
                        uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    typedef uint idx_t;
    float a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
    uint steps = 0;
    for (uint2 p = uint2(gid, 0); p.x < n; p += uint2(grid, 1)) a += x[p.x] + float(p.y);
    for (ushort i = gid; i < n; i += grid) b += x[i];
    for (idx_t i = gid; i < n; i += grid) c += x[i];
    for (uint i = gid; steps++, i < n; i += grid) d += x[i];
    out[6 * gid + 0] = a;
    out[6 * gid + 1] = b;
    out[6 * gid + 2] = c;
    out[6 * gid + 3] = d;
    out[6 * gid + 4] = float(steps);
    out[6 * gid + 5] = metal::simd_sum(a + b + c + d);
}

// Parameters and locals with the short names generated code might use.
kernel void names(device const float* l [[buffer(0)]], device float* w [[buffer(1)]],
                  constant uint& n [[buffer(2)]],
                  uint g [[thread_position_in_grid]], uint z [[threads_per_grid]],
                  uint x [[thread_index_in_simdgroup]]) {
    float k = 0.0f, y = 1.0f;
    for (int i = n - 1 - g; i >= 0; i += -z) k += l[i];  // downward, by a negative step
    y += float(x);
    w[2 * g] = k;
    w[2 * g + 1] = simd_sum(k) + y;
}

// Loops with a SIMD call and with barriers inside, in braces.
kernel void loop_collectives(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                             uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                             uint tpg [[threads_per_threadgroup]]) {
    threadgroup float t[1024];
    float acc = x[gid];
    for (uint k = 0; k < 2; ++k) {
        acc = acc + simd_sum(acc);
    }
    uint w = 0;
    while (w < 2) {
        t[tid] = acc;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        acc += t[tpg - 1 - tid];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        w++;
    }
    out[gid] = acc;
}

// A strided loop with user functions: a pure one and one that counts its calls.
kernel void gs_calls(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                     device atomic_uint* calls [[buffer(2)]], constant uint& n [[buffer(3)]],
                     uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) {
        acc += twice(x[i]);
        count(calls);
    }
    out[gid] = simd_sum(acc);
}

// Barriers inside an if that is uniform across the group, threadgroup memory declared late.
kernel void tg_phases(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                      uint tpg [[threads_per_threadgroup]], uint group [[threadgroup_position_in_grid]]) {
    threadgroup float a[1024];
    a[tid] = x[gid];
    if (group % 2 == 0) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float t = a[tpg - 1 - tid];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        a[tid] = t;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup float b[1024];
    b[tid] = a[(tid + 1) % tpg];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = b[tid];
}

// A [[threadgroup(0)]] parameter, threadgroup and device atomics.
kernel void tg_atomics(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       device atomic_uint* dcount [[buffer(2)]], threadgroup float* shared [[threadgroup(0)]],
                       uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                       uint tpg [[threads_per_threadgroup]], uint group [[threadgroup_position_in_grid]]) {
    threadgroup atomic_uint tcount;
    if (tid == 0) atomic_store_explicit(&tcount, 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float v = x[gid];
    if (v > 0.0f) atomic_fetch_add_explicit(&tcount, 1u, memory_order_relaxed);
    atomic_fetch_add_explicit(dcount, 1u, memory_order_relaxed);
    shared[tid] = simd_sum(v);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        float t = 0.0f;
        for (uint s = 0; s < tpg; s += 32) t += shared[s];
        out[2 * group] = t;
        out[2 * group + 1] = float(atomic_load_explicit(&tcount, memory_order_relaxed));
    }
}

// Macros expanding to statements and to SIMD calls, statements over several lines.
#define ACCUM(a, v) a += (v); a = a - 0.0f
#define SUMOF(v) simd_sum(v)
kernel void macros(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
    float acc = 0.0f;
    ACCUM(acc, x[gid]);
    ACCUM(acc,
          x[gid]);
    float s =
        SUMOF(
            acc);
    out[2 * gid] =
        acc;
    out[2 * gid + 1]
        = s;
}

struct Pair {
    float a;
    float b;
};

// Locals lockstep does not keep per thread (a struct, auto, a reference, an initialised array).
kernel void other_locals(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    Pair p;
    p.a = x[gid];
    p.b = float(lane);
    auto twice_a = 2.0f * p.a;
    float acc = p.b;
    thread float& r = acc;
    float init[2] = {1.0f, 2.0f};
    r += init[1];
    out[4 * gid + 0] = simd_sum(p.a);
    out[4 * gid + 1] = simd_max(twice_a);
    out[4 * gid + 2] = acc;
    out[4 * gid + 3] = simd_sum(p.b + init[0]);
}

// Grid-stride loops inside both branches of an if that is uniform across the simdgroup.
kernel void strided_branches(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                             constant uint& n [[buffer(2)]],
                             uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                             uint sg [[simdgroup_index_in_threadgroup]]) {
    float acc = 0.0f;
    if (sg % 2 == 0) {
        for (uint i = gid; i < n; i += grid) acc += x[i];
        acc = simd_sum(acc);
    } else {
        for (uint i = gid; i < n; i += grid) acc = max(acc, x[i]);
        acc = simd_max(acc);
    }
    out[gid] = acc;
}

// Every position attribute, in a 2-D dispatch with partial threadgroups.
kernel void positions(device uint* out [[buffer(0)]],
                      uint2 p [[thread_position_in_grid]], uint2 g [[threads_per_grid]],
                      uint2 t [[thread_position_in_threadgroup]], uint2 tpg [[threads_per_threadgroup]],
                      uint2 gp [[threadgroup_position_in_grid]], uint2 gpg [[threadgroups_per_grid]],
                      uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]], uint tps [[threads_per_simdgroup]],
                      uint spt [[simdgroups_per_threadgroup]], uint qi [[thread_index_in_quadgroup]],
                      uint qg [[quadgroup_index_in_threadgroup]], uint qpt [[quadgroups_per_threadgroup]],
                      uint2 d [[dispatch_threads_per_threadgroup]]) {
    device uint* o = out + 21 * (p.y * g.x + p.x);
    o[0] = p.x;
    o[1] = p.y;
    o[2] = g.x;
    o[3] = g.y;
    o[4] = t.x;
    o[5] = t.y;
    o[6] = tpg.x;
    o[7] = tpg.y;
    o[8] = gp.x;
    o[9] = gp.y;
    o[10] = gpg.x;
    o[11] = gpg.y;
    o[12] = lid;
    o[13] = lane;
    o[14] = sg;
    o[15] = tps;
    o[16] = spt;
    o[17] = qi;
    o[18] = qg;
    o[19] = qpt;
    o[20] = d.x * 1000 + d.y + (uint)simd_sum(0);
}

// A 3-D grid: lanes follow the linear index in the (possibly partial) threadgroup.
kernel void grid3d(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   uint3 pos [[thread_position_in_grid]], uint3 gsz [[threads_per_grid]],
                   uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]]) {
    uint i = (pos.z * gsz.y + pos.y) * gsz.x + pos.x;
    float v = x[i];
    out[2 * i] = simd_sum(v);
    out[2 * i + 1] = float(sg * 32 + lane) - float(lid);
}
"""


@pytest.fixture(scope="module", params=MODES)
def elib(dev, request):
    return _lib(SRC, request.param)


@pytest.mark.parametrize("n,tg", SHAPES)
def test_shadowing_and_generated_names(elib, n, tg):
    x = _ints(n + tg, n)
    out = np.full((n, 4), np.nan, np.float32)
    elib.shadow(x, out, grid=n, threadgroup=tg)
    key, lane, sg = _lanes(n, tg)
    even = sg % 2 == 0
    want0 = np.where(even, _reduce(np.add, 2.0 * x, key, even, 0), _reduce(np.add, -np.ones(n), key, ~even, 0))
    np.testing.assert_array_equal(out[:, 0], want0)
    np.testing.assert_array_equal(out[:, 1], np.full(n, 106.0))
    np.testing.assert_array_equal(out[:, 2], _reduce(np.maximum, x, key, np.ones(n, bool), -np.inf) + lane)
    np.testing.assert_array_equal(out[:, 3], np.arange(n))


@pytest.mark.parametrize("n,tg", SHAPES)
def test_declarations(elib, n, tg):
    x = _ints(2 * n + tg, n)
    out = np.full((n, 8), np.nan, np.float32)
    elib.decls(x, out, grid=n, threadgroup=tg)
    key, lane, _ = _lanes(n, tg)
    everyone = np.ones(n, bool)
    odd = lane % 2 == 1
    np.testing.assert_array_equal(out[:, 0], _reduce(np.add, x, key, everyone, 0))
    np.testing.assert_array_equal(out[:, 1], x + 10)
    np.testing.assert_array_equal(out[:, 2], 1 + 2 * x)
    np.testing.assert_array_equal(out[:, 3], _reduce(np.add, 8.0 * x, key, everyone, 0))
    np.testing.assert_array_equal(out[:, 4], lane + np.arange(n))
    np.testing.assert_array_equal(out[:, 5], 4 * lane)
    np.testing.assert_array_equal(out[:, 6], np.where(odd, 5.0, -5.0))
    np.testing.assert_array_equal(out[:, 7], _exclusive(odd, key, everyone))


@pytest.mark.parametrize("n,tg", SHAPES)
def test_statement_forms(elib, n, tg):
    x = _ints(3 * n + tg, n)
    out = np.full((n, 6), np.nan, np.float32)
    calls = np.zeros(1, np.uint32)
    elib.stmts(x, out, calls, grid=n, threadgroup=tg)
    key, _, sg = _lanes(n, tg)
    everyone = np.ones(n, bool)
    s = _reduce(np.add, x, key, everyone, 0)
    np.testing.assert_array_equal(out[:, 0], np.where(sg % 2 == 0, s, 0))
    np.testing.assert_array_equal(out[:, 1], np.maximum(_reduce(np.maximum, x, key, everyone, -np.inf), 0))
    np.testing.assert_array_equal(out[:, 2], x + _reduce(np.minimum, x, key, everyone, np.inf))
    np.testing.assert_array_equal(out[:, 3], 2 * x + s)
    np.testing.assert_array_equal(out[:, 4], np.full(n, 2.0))
    np.testing.assert_array_equal(out[:, 5], 2 * x)
    assert calls[0] == n  # the side-effecting helper ran once per thread


@pytest.mark.parametrize("n,tg", SHAPES)
def test_statements_with_two_calls_or_side_effects(elib, n, tg):
    x = _ints(3 * n + tg + 1, n)
    out = np.full((n, 5), np.nan, np.float32)
    elib.stmts2(x, out, grid=n, threadgroup=tg)
    key, _, _ = _lanes(n, tg)
    everyone = np.ones(n, bool)
    s = _reduce(np.add, x, key, everyone, 0)
    np.testing.assert_array_equal(out[:, 0], 3 * s)
    np.testing.assert_array_equal(out[:, 1], x + _reduce(np.add, np.ones(n), key, everyone, 0))
    np.testing.assert_array_equal(out[:, 2], s)
    np.testing.assert_array_equal(out[:, 3], np.ones(n))
    np.testing.assert_array_equal(out[:, 4], 2 * s)


def _source(lane, key, src_lane, active):
    """(thread, defined) of lane src_lane of each thread's simdgroup: defined where that lane is active."""
    table = np.full((int(key.max()) + 1, 32), -1, np.int64)
    table[key, lane] = np.arange(key.size)
    src = table[key, np.clip(src_lane, 0, 31)]
    ok = (src >= 0) & (src_lane >= 0) & (src_lane < 32)
    ok &= active[np.where(ok, src, 0)]
    return np.where(ok, src, 0), ok


@pytest.mark.parametrize("n,tg", SHAPES)
@pytest.mark.parametrize("sel", [0, 1, 2])
def test_every_simd_function(elib, n, tg, sel):
    x = _ints(5 * n + tg + sel, n)
    x[(np.arange(n) // 32) % 4 == 1] = 20.0  # whole simdgroups where every vote holds
    f = np.full((15, n), np.nan, np.float32)
    u = np.full((9, n), 0xDEADBEEF, np.uint32)
    elib.funcs(x, f, u, np.uint32(n), np.uint32(sel), grid=n, threadgroup=tg)
    key, lane, _ = _lanes(n, tg)
    active = [np.ones(n, bool), lane % 3 != 0, x > 0][sel]
    v = x.astype(np.float64)
    pm1 = np.where(x > 0, 1.0, -1.0)
    bits = ((x.astype(np.int64) + 100) * 2654435761) % 2 ** 32

    def check(row, want, where=None):
        ok = active if where is None else active & where
        got = (f if row < 15 else u)[row % 15 if row < 15 else row - 15]
        np.testing.assert_array_equal(got[ok], np.asarray(want)[ok], err_msg="row %d" % row)

    check(0, _reduce(np.add, v, key, active, 0))
    check(1, _reduce(np.multiply, pm1, key, active, 1))
    check(2, _reduce(np.minimum, v, key, active, np.inf))
    check(3, _reduce(np.maximum, v, key, active, -np.inf))
    check(4, _exclusive(v, key, active) + v)
    check(5, _exclusive(v, key, active))
    # exclusive product of +-1: the sign is the parity of the active -1s below
    check(6, np.where(_exclusive(pm1 < 0, key, active) % 2 == 1, -1.0, 1.0))
    for row, src_lane, own in ((7, (lane * 7 + 1) % 32, None), (8, lane + 3, lane + 3 >= 32),
                               (9, lane - 2, lane - 2 < 0), (10, lane ^ 5, None), (11, np.full(n, 2), None)):
        src, ok = _source(lane, key, src_lane, active)
        if own is not None:  # the lanes without a source lane keep their value
            ok |= own
            src = np.where(own, np.arange(n), src)
        check(row, x[src], ok)
    first = _reduce(np.minimum, np.where(active, lane, 99), key, active, 99).astype(np.int64)
    src, ok = _source(lane, key, first, active)
    check(12, x[src], ok)
    quads = key * 8 + lane // 4
    check(13, _reduce(np.add, v, quads, active, 0))
    src, ok = _source(lane, key, lane // 4 * 4 + 1, active)
    check(14, x[src], ok)
    check(15, _reduce(np.bitwise_or, np.where(active & (x > 10), 1 << lane, 0), key, active, 0))
    check(16, _reduce(np.minimum, x > -50, key, active, 1))
    check(17, _reduce(np.maximum, x > 60, key, active, 0))
    for row, ufunc, identity in ((18, np.bitwise_and, 2 ** 32 - 1), (19, np.bitwise_or, 0), (20, np.bitwise_xor, 0)):
        check(row, _reduce(ufunc, bits, key, active, identity))
    check(21, lane == first)
    check(22, _reduce(np.bitwise_or, np.where(active, 1 << lane, 0), key, active, 0))
    check(23, _reduce(np.add, x.astype(np.int64), key, active, 0) % 2 ** 32)
    assert np.isnan(f[:, ~active]).all() and (u[:, ~active] == 0xDEADBEEF).all()


@pytest.mark.parametrize("n,tg", SHAPES)
def test_else_if_chain_around_simd_calls(elib, n, tg):
    x = _ints(4 * n + tg, n)
    x[(np.arange(n) // 7) % 3 == 0] = 0.0  # zeros, besides the negatives: lanes that skip the prefix sum
    out = np.full(n, np.nan, np.float32)
    elib.branches(x, out, grid=n, threadgroup=tg)
    key, lane, sg = _lanes(n, tg)
    a, b = sg % 4 == 0, sg % 4 == 1
    c = (sg % 4 == 2) & (x > 0)
    d = (sg % 4 == 3) & (lane < 16)
    want = np.select([a, b, c, d], [_reduce(np.add, x, key, a, 0), _reduce(np.maximum, x, key, b, -np.inf),
                                    _exclusive(x, key, c), _reduce(np.minimum, x, key, d, np.inf)], 0)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("threads,tg", [(1, 1), (31, 31), (100, 33), (256, 256), (1024, 1024), (2000, 1024)])
@pytest.mark.parametrize("extra", [0, 5, 3001])
def test_grid_stride_loop_forms(elib, threads, tg, extra):
    n = threads + extra if extra else threads // 2
    x = _ints(n * 5 + tg, n)
    out = np.full((threads, 11), np.nan, np.float32)
    elib.loops(x, out, np.uint32(n), grid=threads, threadgroup=tg)
    key, lane, _ = _lanes(threads, tg)
    owner = np.arange(n) % threads
    per = functools.partial(np.bincount, minlength=threads)
    s1 = per(owner, weights=x)
    s3 = per((n - 1 - np.arange(n)) % threads, weights=x)
    s4 = per(owner, weights=np.maximum(x, 0))
    # s5 stops before a thread's first element over 90, s6 after its first over 95
    steps = -(-n // threads)
    pad = np.zeros(steps * threads, np.float64)
    pad[:n] = x
    grid = pad.reshape(steps, threads)
    s5 = np.where(np.cumsum(grid > 90, axis=0) == 0, grid, 0).sum(axis=0)
    over = grid > 95
    s6 = np.where(np.cumsum(over, axis=0) - over == 0, grid, 0).sum(axis=0)
    np.testing.assert_array_equal(out[:, 0], s1)
    np.testing.assert_array_equal(out[:, 1], s1)
    np.testing.assert_array_equal(out[:, 2], s3)
    np.testing.assert_array_equal(out[:, 3], s4)
    np.testing.assert_array_equal(out[:, 4], s5)
    np.testing.assert_array_equal(out[:, 5], s6)
    np.testing.assert_array_equal(out[:, 6], s1)
    np.testing.assert_array_equal(out[:, 7], s1)
    np.testing.assert_array_equal(out[:, 8], np.maximum(lane % 4, 1))
    np.testing.assert_array_equal(out[:, 9], np.choose(lane % 3, [10.0, 21.0, 1.0]))
    total = 4 * s1 + s3 + s4 + s5 + s6  # s1, s2, s7 and s[0] are the same sums
    np.testing.assert_array_equal(out[:, 10], _reduce(np.add, total, key, np.ones(threads, bool), 0))


@pytest.mark.parametrize("threads,tg", [(1, 1), (33, 33), (1000, 256), (1024, 1024)])
@pytest.mark.parametrize("n", [0, 5, 4099])
def test_grid_stride_index_types(elib, threads, tg, n):
    x = _ints(n * 3 + threads, n)
    out = np.full((threads, 6), np.nan, np.float32)
    elib.index_forms(x, out, np.uint32(n), grid=threads, threadgroup=tg)
    i = np.arange(n)
    s1 = np.bincount(i % threads, weights=x, minlength=threads)
    a = s1 + np.bincount(i % threads, weights=i // threads, minlength=threads)  # + the step number
    steps = np.bincount(i % threads, minlength=threads) + 1
    key, _, _ = _lanes(threads, tg)
    for k, want in enumerate([a, s1, s1, s1, steps, _reduce(np.add, a + 3 * s1, key, np.ones(threads, bool), 0)]):
        np.testing.assert_array_equal(out[:, k], want, err_msg="value %d" % k)


@pytest.mark.parametrize("threads,tg", [(1, 1), (33, 33), (1000, 256)])
@pytest.mark.parametrize("n", [0, 5, 4099])
def test_short_names_and_downward_step(elib, threads, tg, n):
    x = _ints(n * 29 + threads, n)
    out = np.full((threads, 2), np.nan, np.float32)
    elib.names(x, out, np.uint32(n), grid=threads, threadgroup=tg)
    k = np.bincount((n - 1 - np.arange(n)) % threads, weights=x, minlength=threads)
    key, lane, _ = _lanes(threads, tg)
    np.testing.assert_array_equal(out[:, 0], k)
    np.testing.assert_array_equal(out[:, 1], _reduce(np.add, k, key, np.ones(threads, bool), 0) + 1 + lane)


@pytest.mark.parametrize("groups,tg", [(1, 1), (3, 32), (2, 100), (1, 1024)])
def test_loops_with_simd_calls_and_barriers(elib, groups, tg):
    n = groups * tg
    x = _ints(n * 7, n)
    out = np.full(n, np.nan, np.float32)
    elib.loop_collectives(x, out, groups=groups, threadgroup=tg)
    acc = x.astype(np.float64)
    for _ in range(2):
        acc = acc + _simd_sum(acc, n, tg)
    rev = (np.arange(n) // tg) * tg + tg - 1 - np.arange(n) % tg
    for _ in range(2):
        acc = acc + acc[rev]
    np.testing.assert_array_equal(out, acc)


@pytest.mark.parametrize("threads,tg", [(1, 1), (33, 33), (1000, 256), (1024, 1024)])
@pytest.mark.parametrize("n", [0, 7, 5000])
def test_user_functions_in_strided_loop(elib, threads, tg, n):
    x = _ints(n + threads, n)
    out = np.full(threads, np.nan, np.float32)
    calls = np.zeros(1, np.uint32)
    elib.gs_calls(x, out, calls, np.uint32(n), grid=threads, threadgroup=tg)
    key, _, _ = _lanes(threads, tg)
    acc = np.bincount(np.arange(n) % threads, weights=2.0 * x, minlength=threads)
    np.testing.assert_array_equal(out, _reduce(np.add, acc, key, np.ones(threads, bool), 0))
    assert calls[0] == n


@pytest.mark.parametrize("n,tg", [(1, 1), (31, 31), (100, 33), (1000, 256), (3000, 1024)])
def test_barriers_in_uniform_if_and_late_threadgroup_memory(elib, n, tg):
    x = _ints(n * 11 + tg, n)
    out = np.full(n, np.nan, np.float32)
    elib.tg_phases(x, out, grid=n, threadgroup=tg)
    t = np.arange(n)
    start = t // tg * tg
    size = np.minimum(tg, n - start)
    tid = t - start
    a = np.where((t // tg) % 2 == 0, x[start + size - 1 - tid], x)
    np.testing.assert_array_equal(out, a[start + (tid + 1) % size])


@pytest.mark.parametrize("n,tg", [(1, 1), (31, 31), (100, 33), (1000, 256), (3000, 1024)])
def test_threadgroup_parameter_and_atomics(elib, n, tg):
    x = _ints(n * 13 + tg, n)
    groups = -(-n // tg)
    out = np.full((groups, 2), np.nan, np.float32)
    dcount = np.zeros(1, np.uint32)
    elib.tg_atomics(x, out, dcount, grid=n, threadgroup=tg, threadgroup_memory=4 * tg)
    group = np.arange(n) // tg
    np.testing.assert_array_equal(out[:, 0], np.bincount(group, weights=x, minlength=groups))
    np.testing.assert_array_equal(out[:, 1], np.bincount(group, weights=x > 0, minlength=groups))
    assert dcount[0] == n


@pytest.mark.parametrize("n,tg", SHAPES)
def test_macros_and_statements_over_lines(elib, n, tg):
    x = _ints(n * 17 + tg, n)
    out = np.full((n, 2), np.nan, np.float32)
    elib.macros(x, out, grid=n, threadgroup=tg)
    np.testing.assert_array_equal(out[:, 0], 2 * x)
    np.testing.assert_array_equal(out[:, 1], _simd_sum(2.0 * x, n, tg))


@pytest.mark.parametrize("n,tg", SHAPES)
def test_locals_kept_on_fibers(elib, n, tg):
    x = _ints(n * 19 + tg, n)
    out = np.full((n, 4), np.nan, np.float32)
    elib.other_locals(x, out, grid=n, threadgroup=tg)
    key, lane, _ = _lanes(n, tg)
    everyone = np.ones(n, bool)
    np.testing.assert_array_equal(out[:, 0], _reduce(np.add, x, key, everyone, 0))
    np.testing.assert_array_equal(out[:, 1], _reduce(np.maximum, 2.0 * x, key, everyone, -np.inf))
    np.testing.assert_array_equal(out[:, 2], lane + 2)
    np.testing.assert_array_equal(out[:, 3], _reduce(np.add, lane + 1, key, everyone, 0))


@pytest.mark.parametrize("threads,tg", [(1, 1), (33, 33), (100, 64), (1000, 256), (1024, 1024)])
@pytest.mark.parametrize("n", [0, 3, 5001])
def test_grid_stride_loops_in_branches(elib, threads, tg, n):
    x = _ints(n * 23 + threads, n)
    out = np.full(threads, np.nan, np.float32)
    elib.strided_branches(x, out, np.uint32(n), grid=threads, threadgroup=tg)
    key, _, sg = _lanes(threads, tg)
    owner = np.arange(n) % threads
    sums = np.bincount(owner, weights=x, minlength=threads)
    tops = np.zeros(threads)  # acc starts at 0
    np.maximum.at(tops, owner, x)
    even = sg % 2 == 0
    want = np.where(even, _reduce(np.add, sums, key, even, 0), _reduce(np.maximum, tops, key, ~even, -np.inf))
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("size,tg", [((37, 21), (16, 8)), ((64, 6), (32, 2)), ((5, 3), (1, 1)), ((33, 35), (32, 32)),
                                     ((7, 40), (3, 11))])
def test_position_attributes(elib, size, tg):
    w, h = size
    out = np.full((h, w, 21), 0xDEADBEEF, np.uint32)
    elib.positions(out, grid=size, threadgroup=tg)
    y, x = np.mgrid[0:h, 0:w]
    gx, gy = x // tg[0], y // tg[1]
    sx, sy = np.minimum(tg[0], w - gx * tg[0]), np.minimum(tg[1], h - gy * tg[1])  # actual group extents
    lid = (y % tg[1]) * sx + x % tg[0]
    want = [x, y, np.full_like(x, w), np.full_like(x, h), x % tg[0], y % tg[1], sx, sy, gx, gy,
            np.full_like(x, -(-w // tg[0])), np.full_like(x, -(-h // tg[1])), lid, lid % 32, lid // 32,
            np.full_like(x, 32), -(-(sx * sy) // 32), lid % 4, lid // 4, -(-(sx * sy) // 4),
            np.full_like(x, tg[0] * 1000 + tg[1])]
    for k, expected in enumerate(want):
        np.testing.assert_array_equal(out[:, :, k], expected, err_msg="value %d" % k)


@pytest.mark.parametrize("size,tg", [((5, 3, 2), (2, 2, 2)), ((9, 7, 5), (4, 4, 2)), ((33, 2, 3), (32, 1, 2)),
                                     ((17, 9, 4), (8, 8, 8)), ((8, 4, 32), (8, 4, 32)), ((3, 3, 3), (1, 1, 1))])
def test_3d_grid_with_partial_threadgroups(elib, size, tg):
    sx, sy, sz = size
    n = sx * sy * sz
    x = _ints(n + sum(tg), n)
    out = np.full((n, 2), np.nan, np.float32)
    elib.grid3d(x, out, grid=size, threadgroup=tg)
    z, y, xx = np.unravel_index(np.arange(n), (sz, sy, sx))
    g = [xx // tg[0], y // tg[1], z // tg[2]]
    ext = [np.minimum(tg[d], size[d] - g[d] * tg[d]) for d in range(3)]  # the edge groups' actual extents
    lid = ((z % tg[2]) * ext[1] + y % tg[1]) * ext[0] + xx % tg[0]
    ngroups = [-(-size[d] // tg[d]) for d in range(3)]
    group = (g[2] * ngroups[1] + g[1]) * ngroups[0] + g[0]
    key = group * ((tg[0] * tg[1] * tg[2] + 31) // 32) + lid // 32
    np.testing.assert_array_equal(out[:, 0], _reduce(np.add, x, key, np.ones(n, bool), 0))
    np.testing.assert_array_equal(out[:, 1], np.zeros(n))


# ===========================================================================
# Diagnostics: an error inside a rewritten statement names the user's line
# ===========================================================================

KERNEL = """kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
              uint grid [[threads_per_grid]]) {
"""


def _errors(body, mode):
    """The (line, column) of each error clang reports for KERNEL + body, and where `.zz` (the error) is."""
    source = KERNEL + body
    with pytest.raises(pm.CompileError) as info:
        _lib(source, mode)
    full = HEADER + source
    before = full[:full.index(".zz")]
    where = (before.count("\n") + 1, len(before) - before.rfind("\n"))
    return [(int(a), int(b)) for a, b in re.findall(r"program_source:(\d+):(\d+): error", str(info.value))], where


def _error_sites(body, mode):
    errors, where = _errors(body, mode)
    return set(errors), where


ERRORS_ON_ONE_LINE = {
    "local": "    float v = x[gid].zz;\n    out[gid] = simd_sum(v);\n}\n",
    "collective": "    float v = x[gid];\n    out[gid] = simd_sum(v.zz);\n}\n",
    "branch": "    float v = x[gid];\n    if (v.zz > 0.0f) out[gid] = simd_sum(v);\n}\n",
    "strided_body": "    float a = 0.0f;\n    for (uint i = gid; i < 100; i += grid) a += x[i].zz;\n"
                    "    out[gid] = simd_sum(a);\n}\n",
    "after_barrier": "    float v = simd_sum(x[gid]);\n    threadgroup_barrier(mem_flags::mem_none);\n"
                     "    out[gid] = v.zz;\n}\n",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(ERRORS_ON_ONE_LINE))
def test_error_line_in_rewritten_statement(dev, case, mode):
    sites, where = _error_sites(ERRORS_ON_ONE_LINE[case], mode)
    assert sites == {where}


# ===========================================================================
# Lockstep bugs (reported to the lead): the default compile is expected to fail
# ===========================================================================

@pytest.mark.parametrize("mode", _fixed("an error in a SIMD statement is reported twice (its collect and deliver "
                                      "copies)"))
def test_error_in_simd_statement_reported_once(dev, mode):
    errors, where = _errors(ERRORS_ON_ONE_LINE["collective"], mode)
    assert errors == [where]


@pytest.mark.parametrize("mode", _fixed("a statement spanning lines reports its first line (and shifted columns)"))
@pytest.mark.parametrize("case", ["collective", "local", "strided_step"])
def test_error_line_in_statement_over_lines(dev, case, mode):
    body = {
        "collective": "    float v = x[gid];\n    out[gid] =\n        simd_sum(v.zz);\n}\n",
        "local": "    float a = x[gid],\n          b = a.zz;\n    out[gid] = simd_sum(a + b);\n}\n",
        "strided_step": "    float a = 0.0f;\n    for (uint i = gid; i < 64;\n         i += grid.zz)\n"
                        "        a += x[i];\n    out[gid] = simd_sum(a);\n}\n",
    }[case]
    sites, where = _error_sites(body, mode)
    assert sites == {where}


def _run_1d(source, mode, name, x, out_shape, n, tg, *extra, **launch):
    out = np.full(out_shape, np.nan, np.float32)
    getattr(_lib(source, mode), name)(x, out, *extra, grid=n, threadgroup=tg, **launch)
    return out


TG_POINTER = r"""
kernel void tg_pointer(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                       uint tpg [[threads_per_threadgroup]]) {
    threadgroup float buf[1024];
    threadgroup float* mine = buf + tid;  // a thread's own pointer into threadgroup memory
    *mine = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = buf[tpg - 1 - tid];
}
"""


@pytest.mark.parametrize("mode", _fixed("`threadgroup T* p = buf + tid;` is run once, with thread 0's position"))
@pytest.mark.parametrize("n,tg", [(64, 32), (250, 100)])
def test_thread_pointer_into_threadgroup_memory(dev, mode, n, tg):
    x = _ints(n, n)
    out = _run_1d(TG_POINTER, mode, "tg_pointer", x, n, n, tg)
    t = np.arange(n)
    start = t // tg * tg
    np.testing.assert_array_equal(out, x[start + np.minimum(tg, n - start) - 1 - (t - start)])


CONST_BOUND = r"""
kernel void const_tile(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {
    const uint TILE = 64;
    threadgroup float t[TILE];  // a const local as an array bound
    t[tid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = t[TILE - 1 - tid];
}
"""


@pytest.mark.parametrize("mode", _fixed("a const local used in a constant expression becomes a per-thread array"))
def test_const_local_as_threadgroup_array_bound(dev, mode):
    x = _ints(1, 192)
    out = _run_1d(CONST_BOUND, mode, "const_tile", x, 192, 192, 64)
    np.testing.assert_array_equal(out, x.reshape(3, 64)[:, ::-1].ravel())


LOOP_AROUND_SIMD = {
    "for": "for (uint k = 0; k < 2; ++k) acc = acc + simd_sum(acc);",
    "while": "uint k = 0;\n    while (k++ < 2) acc = acc + simd_sum(acc);",
    "pragma_for": "#pragma unroll\n    for (uint k = 0; k < 2; ++k) acc = acc + simd_sum(acc);",
}


@pytest.mark.parametrize("mode", _fixed("a loop whose body is one statement with a SIMD call collects once, "
                                      "delivers the first result at every iteration"))
@pytest.mark.parametrize("loop", sorted(LOOP_AROUND_SIMD))
def test_single_statement_loop_around_simd_call(dev, mode, loop):
    source = """
kernel void loop1(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
    float acc = x[gid];
    %s
    out[gid] = acc;
}
""" % LOOP_AROUND_SIMD[loop]
    n, tg = 100, 64
    x = _ints(2, n)
    out = _run_1d(source, mode, "loop1", x, n, n, tg)
    acc = x.astype(np.float64)
    for _ in range(2):
        acc = acc + _simd_sum(acc, n, tg)
    np.testing.assert_array_equal(out, acc)


LOOP_INDEX_IN_SIMD = r"""
kernel void loop2(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
    for (uint k = 0; k < 2; ++k) out[2 * gid + k] = simd_sum(x[2 * gid + k]);
}
"""


@pytest.mark.parametrize("mode", _fixed("a one-statement loop with a SIMD call on its index does not compile "
                                      "(the collect pass runs the value outside the loop)"))
def test_single_statement_loop_simd_call_on_index(dev, mode):
    n, tg = 96, 32
    x = _ints(3, 2 * n)
    out = _run_1d(LOOP_INDEX_IN_SIMD, mode, "loop2", x, 2 * n, n, tg)
    got = out.reshape(n, 2)
    for k in range(2):
        np.testing.assert_array_equal(got[:, k], _simd_sum(x[k::2], n, tg))


POINTER_DECLARATORS = r"""
kernel void ptrdecl(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    float acc = x[gid];
    thread float *p = &acc, q = 2.0f;  // q is a float, not a pointer
    *p += q;
    out[gid] = simd_sum(acc);
}
"""


@pytest.mark.parametrize("mode", _fixed("in `T *p = ..., q = ...;` q becomes a pointer too"))
def test_pointer_and_value_declarators(dev, mode):
    n, tg = 64, 32
    x = _ints(4, n)
    out = _run_1d(POINTER_DECLARATORS, mode, "ptrdecl", x, n, n, tg)
    np.testing.assert_array_equal(out, _simd_sum(x + 2.0, n, tg))


LOOP_INDEX_SHADOWS = r"""
kernel void shadow_index(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& n [[buffer(2)]],
                         uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    uint i = 7;
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) acc += x[i];  // the index shadows a body-level local
    out[gid] = simd_sum(acc) + float(i);
}
"""


@pytest.mark.parametrize("mode", _fixed("a grid-stride index named like a body-level local: redefinition error"))
def test_grid_stride_index_shadows_local(dev, mode):
    threads, tg, n = 64, 32, 1000
    x = _ints(5, n)
    out = _run_1d(LOOP_INDEX_SHADOWS, mode, "shadow_index", x, threads, threads, tg, np.uint32(n))
    key, _, _ = _lanes(threads, tg)
    acc = np.bincount(np.arange(n) % threads, weights=x, minlength=threads)
    np.testing.assert_array_equal(out, _reduce(np.add, acc, key, np.ones(threads, bool), 0) + 7)


FLOAT_INDEX = r"""
kernel void float_index(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        uint gid [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (float t = 0.0f; t <= 1.0f; t += 0.1f) acc += 1.0f;  // rounding decides the last step
    out[gid] = simd_max(acc) + x[gid];
}
"""


@pytest.mark.parametrize("mode", _fixed("a float loop index is computed as A + k * S, not by repeated addition"))
def test_float_loop_index(dev, mode):
    n, tg = 32, 32
    x = _ints(6, n)
    out = _run_1d(FLOAT_INDEX, mode, "float_index", x, n, n, tg)
    steps, t = 0, np.float32(0)
    while t <= np.float32(1):
        steps += 1
        t = np.float32(t + np.float32(0.1))
    np.testing.assert_array_equal(out, x + steps)


INDEX_BY_REFERENCE = r"""
void skip_next(thread uint& i, uint step) { i += step; }
kernel void by_ref(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   constant uint& n [[buffer(2)]],
                   uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) {
        acc += x[i];
        skip_next(i, grid);  // moves the index through a reference
    }
    out[2 * gid] = acc;
    out[2 * gid + 1] = simd_sum(acc);
}
"""


@pytest.mark.parametrize("mode", _fixed("a grid-stride index changed through a reference is recomputed as A + k * S"))
def test_grid_stride_index_changed_by_reference(dev, mode):
    threads, tg, n = 64, 32, 1000
    x = _ints(7, n)
    out = _run_1d(INDEX_BY_REFERENCE, mode, "by_ref", x, 2 * threads, threads, tg, np.uint32(n))
    i = np.arange(n)
    taken = (i // threads) % 2 == 0  # every other step is skipped
    acc = np.bincount(i[taken] % threads, weights=x[taken], minlength=threads)
    key, _, _ = _lanes(threads, tg)
    np.testing.assert_array_equal(out[0::2], acc)
    np.testing.assert_array_equal(out[1::2], _reduce(np.add, acc, key, np.ones(threads, bool), 0))


TEMPLATE_SIDE_EFFECT = r"""
template <typename T>
T counted(device atomic_uint* c, T v) { atomic_fetch_add_explicit(c, 1u, memory_order_relaxed); return v; }
kernel void tmpl(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                 device atomic_uint* calls [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    out[gid] = simd_sum(counted<float>(calls, x[gid]));
}
"""


@pytest.mark.parametrize("mode", _fixed("a side-effecting template function called as f<T>(...) in a SIMD "
                                      "statement runs twice (pure() misses the call)"))
def test_template_call_with_side_effect_in_simd_statement(dev, mode):
    n, tg = 100, 64
    x = _ints(8, n)
    calls = np.zeros(1, np.uint32)
    out = _run_1d(TEMPLATE_SIDE_EFFECT, mode, "tmpl", x, n, n, tg, calls)
    np.testing.assert_array_equal(out, _simd_sum(x, n, tg))
    assert calls[0] == n


SHIFT_ASSIGN = r"""
kernel void shift(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
    uint m = 1024;
    out[gid] = simd_sum(x[gid]) + float(m >>= 1);  // >>= is an assignment, not a comparison
    out[gid] += float(m);
}
"""


@pytest.mark.parametrize("mode", _fixed("`>>=`/`<<=` in a SIMD statement's value is taken for a comparison; "
                                      "the assignment runs twice"))
def test_shift_assignment_in_simd_statement(dev, mode):
    n, tg = 64, 32
    x = _ints(9, n)
    out = _run_1d(SHIFT_ASSIGN, mode, "shift", x, n, n, tg)
    np.testing.assert_array_equal(out, _simd_sum(x, n, tg) + 1024)


CONDITION_DECLARATION = r"""
kernel void cond_decl(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    if (bool low = lane < 16) out[gid] = simd_sum(v) + (low ? 1.0f : 0.0f);
}
"""


@pytest.mark.parametrize("mode", _fixed("an if whose condition declares a variable does not compile"))
def test_declaration_in_if_condition(dev, mode):
    n, tg = 64, 64
    x = _ints(10, n)
    out = _run_1d(CONDITION_DECLARATION, mode, "cond_decl", x, n, n, tg)
    key, lane, _ = _lanes(n, tg)
    low = lane < 16
    np.testing.assert_array_equal(out[low], (_reduce(np.add, x, key, low, 0) + 1)[low])
    assert np.isnan(out[~low]).all()


SHADOWING_DECLARATORS = r"""
kernel void shadow_decl(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    if (lane < 16) {
        float w = v, v = w + 100.0f;  // w is the outer v; then a new v
        out[gid] = simd_sum(v) - w;
    }
}
"""


@pytest.mark.parametrize("mode", _fixed("in `T w = v, v = ...;` shadowing an outer v, w's initialiser reads the new v"))
def test_declarator_reads_the_name_a_later_declarator_shadows(dev, mode):
    n, tg = 64, 32
    x = _ints(11, n)
    out = _run_1d(SHADOWING_DECLARATORS, mode, "shadow_decl", x, n, n, tg)
    key, lane, _ = _lanes(n, tg)
    low = lane < 16
    np.testing.assert_array_equal(out[low], (_reduce(np.add, x + 100.0, key, low, 0) - x)[low])
    assert np.isnan(out[~low]).all()


DECLTYPE_COPY = r"""
kernel void dcopy(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
    float acc = x[gid];
    {
        decltype(acc) t = acc;  // a float copy: changing it leaves acc alone
        t += 100.0f;
        out[2 * gid] = t;
    }
    out[2 * gid + 1] = simd_sum(acc);
}
"""


@pytest.mark.parametrize("mode", _fixed("decltype of a per-thread local is a reference (auto &acc = ...): "
                                      "a `decltype(acc)` copy aliases acc"))
def test_decltype_of_local_is_its_type(dev, mode):
    n, tg = 64, 32
    x = _ints(12, n)
    out = _run_1d(DECLTYPE_COPY, mode, "dcopy", x, 2 * n, n, tg).reshape(n, 2)
    np.testing.assert_array_equal(out[:, 0], x + 100)
    np.testing.assert_array_equal(out[:, 1], _simd_sum(x, n, tg))


UNRECOGNISED_DECLARATIONS = {
    "decltype": "decltype(x[0] + 1.0f) t = x[gid];",
    "qualified": "::metal::float2 t2 = float2(x[gid], 0.0f);\n    float t = t2.x;",
    "after_pragma": "#pragma clang diagnostic ignored \"-Wunused-variable\"\n    float t = x[gid];",
}


@pytest.mark.parametrize("mode", _fixed("a body-level declaration spelled decltype(...) or ::ns::T, or after a "
                                      "#pragma, is not seen as one: it lives inside one statement's thread loop"))
@pytest.mark.parametrize("spelling", sorted(UNRECOGNISED_DECLARATIONS))
def test_declaration_spellings(dev, mode, spelling):
    source = """
kernel void spell(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
    %s
    out[gid] = simd_sum(t);
}
""" % UNRECOGNISED_DECLARATIONS[spelling]
    n, tg = 64, 32
    x = _ints(13, n)
    out = _run_1d(source, mode, "spell", x, n, n, tg)
    np.testing.assert_array_equal(out, _simd_sum(x, n, tg))


STATIC_ASSERT_ON_LOCAL = r"""
kernel void sassert(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
    float acc = simd_sum(x[gid]);
    static_assert(sizeof(acc) == 4, "a float");
    out[gid] = acc;
}
"""


@pytest.mark.parametrize("mode", _fixed("static_assert/typedef/using statements run outside the thread loops: "
                                      "the body's locals are not in scope"))
def test_static_assert_on_local(dev, mode):
    n, tg = 64, 32
    x = _ints(14, n)
    out = _run_1d(STATIC_ASSERT_ON_LOCAL, mode, "sassert", x, n, n, tg)
    np.testing.assert_array_equal(out, _simd_sum(x, n, tg))


AUTO_INDEX = r"""
kernel void auto_index(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& n [[buffer(2)]],
                       uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    for (auto i = gid; i < n; i += grid) acc += x[i];
    out[gid] = simd_sum(acc);
}
"""


@pytest.mark.parametrize("mode", _fixed("a grid-stride loop `for (auto i = ...; ...; i += S)` does not compile: "
                                      "the index is rebuilt as (auto)k * S"))
def test_grid_stride_auto_index(dev, mode):
    threads, tg, n = 64, 32, 1000
    x = _ints(15, n)
    out = _run_1d(AUTO_INDEX, mode, "auto_index", x, threads, threads, tg, np.uint32(n))
    key, _, _ = _lanes(threads, tg)
    acc = np.bincount(np.arange(n) % threads, weights=x, minlength=threads)
    np.testing.assert_array_equal(out, _reduce(np.add, acc, key, np.ones(threads, bool), 0))


SPIN = r"""
kernel void spin(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
    float v = x[gid];
    uint k = 0;
    while (v >= 0.0f) { k++; v = v + 0.0f; }  // never ends for v >= 0: a GPU hangs
    out[gid] = float(k) + simd_sum(0.0f);
}
"""


@pytest.mark.parametrize("mode", _fixed("a loop that never ends is removed (C++ forward progress) instead of timing "
                                      "out as in LOOP and FIBERS mode: the kernel returns k = 0"))
def test_endless_loop_times_out(dev, mode):
    lib = _lib(SPIN, mode)
    x = np.zeros(64, np.float32)
    out = np.full(64, np.nan, np.float32)
    before = pm.kernel_timeout()
    pm.set_kernel_timeout(0.3)
    try:
        with pytest.raises(pm.KernelError, match="timed out"):
            lib.spin(x, out, grid=64, threadgroup=32)
            dev.synchronize()
    finally:
        pm.set_kernel_timeout(before)
    lib.spin(-x - 1, out, grid=64, threadgroup=32)  # the device still runs kernels
    np.testing.assert_array_equal(out, np.zeros(64))


BIG_LOCALS = r"""
kernel void big_locals(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    float a[120];  // 480 bytes a thread, under lockstep's 512-byte budget
    for (uint k = 0; k < 120; ++k) a[k] = x[gid] + float(k);
    float s = simd_sum(a[lane]);
    out[gid] = s + a[119];
}
"""


@pytest.mark.parametrize("mode", _fixed("a group's per-thread locals (up to 512 bytes x 1024 threads) live on the "
                                      "calling thread's stack: from a thread with a 256 KB stack the kernel faults"))
def test_large_locals_from_a_thread_with_a_small_stack(dev, mode):
    lib = _lib(BIG_LOCALS, mode)
    x = _ints(16, 1024)
    out = np.full(1024, np.nan, np.float32)
    errors = []

    def run():
        try:
            lib.big_locals(x, out, grid=1024, threadgroup=1024)
            dev.synchronize()
        except pm.Error as e:
            errors.append(e)

    threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
    finally:
        threading.stack_size(0)
    thread.join()
    assert not errors, errors
    key, lane, _ = _lanes(1024, 1024)
    np.testing.assert_array_equal(out, _reduce(np.add, x + lane, key, np.ones(1024, bool), 0) + x + 119)
