"""Edge cases of SIMD lockstep (Sources/MetalCPU/Compiler/Lockstep.swift), second round, against NumPy.

test_simd_lockstep_edge.py probed the statement forms; this file probes what
lockstep learned since: loops whose body meets other threads (SIMD calls,
barriers) with trip counts that differ between simdgroups and lanes, nested,
with locals of their own and indices shadowing outer locals; `if (c) return;`
at the body's level before SIMD calls, barriers and simdgroup matrices;
simdgroup matrices run once per simdgroup (loads and stores with
elements_per_row, origin and transpose, from device and threadgroup memory,
products whose result aliases an operand, half and bfloat, thread_elements()
in Apple's lane layout, partial simdgroups, GEMM tiles guarded by a return,
MLX-like (32, 2, 2) threadgroups); masks of nested branches; large locals in
groups of 1024 from several Python threads; diagnostics and faults.

Every kernel is compiled twice, as the CPU backend compiles it by default
(lockstep wherever the front end rewrites it) and with PM_NO_LOCKSTEP (one
fiber per thread), and both results are compared with a NumPy model. Each
kernel here was checked to be rewritten by default (the default mode runs
lockstep). Cases parametrized with `_fixed(...)` are bugs this file found in
lockstep, since fixed and kept as regression tests:
- a make_filled matrix kept row-major in a simdgroup with missing lanes
  (partial, or lanes that returned), or filled with each lane's own value;
- the diagonal constructor from a user function or in a grid-stride loop
  (the lane is not set for it);
- an error in a grid-stride loop's condition reported three times;
- a barrier error's column off by 4.

Fibers reject a simdgroup whose lanes call different SIMD-group functions, so
branches around SIMD calls here are uniform across each simdgroup, or leave the
lanes that skip them nothing more to call. Values are small integers: sums and
products are exact in any order (and in half and bfloat).
"""

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


def _ints(seed, shape, lo=-3, hi=4, dtype=np.float32):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(dtype)


def _key_1d(n, tg):
    """(simdgroup key, lane, simdgroup index in its group, group) per thread of a 1-D dispatch."""
    t = np.arange(n)
    lid = t % tg
    return (t // tg) * ((tg + 31) // 32) + lid // 32, lid % 32, lid // 32, t // tg


def _reduce(ufunc, values, key, active, identity):
    """ufunc over the active lanes of each simdgroup, per thread (float64)."""
    out = np.full(int(key.max()) + 1 if key.size else 0, identity, np.float64)
    ufunc.at(out, key[active], np.asarray(values, np.float64)[active])
    return out[key]


# ===========================================================================
# Loops whose body meets other threads
# ===========================================================================

LOOPS = r"""
// Trip counts per simdgroup from memory, a nested loop whose count changes with
// the outer index, locals fresh each iteration, a loop index shadowing a local.
kernel void loop_trips(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       device const uint* trips [[buffer(2)]],
                       uint gid [[thread_position_in_grid]], uint tgp [[threadgroup_position_in_grid]],
                       uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    float v = x[gid];
    float acc = 0.0f;
    uint k = 100;                        // the loop's index shadows it
    uint T = trips[tgp * sgs + sg];      // the same for a whole simdgroup
    for (uint k = 0; k < T; ++k) {
        float t = v * float(k + 1);      // a new t each iteration
        float s = simd_sum(t);
        for (uint j = 0; j < k % 3; j++) {
            float u = simd_max(t + float(j));
            acc += u;
        }
        acc += s;
    }
    out[gid] = acc + float(k);
}

// A loop whose condition differs between the lanes: the lanes still in it call simd_sum.
kernel void loop_lanes(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    float acc = 0.0f;
    for (uint k = 0; k < lane % 5; k += 1) {
        float s = simd_sum(v * float(k + 1));
        acc += s;
    }
    out[gid] = acc;
}

// for (k = 0; k < K; k += 8) with a SIMD call and two barriers: a tile of K staged in threadgroup memory.
kernel void loop_tiles(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& K [[buffer(2)]],
                       uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                       uint tpg [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float tile[8];
    float acc = 0.0f;
    for (uint k = 0; k < K; k += 8) {
        if (tid < 8) tile[tid] = k + tid < K ? x[k + tid] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float w = tile[tid % 8];
        float s = simd_sum(w);
        acc += s + tile[(tid + 3) % 8];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = acc;
}

// A barrier in a loop whose trip count differs between threadgroups (uniform within each).
kernel void loop_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         device const uint* trips [[buffer(2)]],
                         uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                         uint tgp [[threadgroup_position_in_grid]], uint tpg [[threads_per_threadgroup]]) {
    threadgroup float buf[1024];
    float v = x[gid];
    for (uint k = 0; k < trips[tgp]; k++) {
        buf[tid] = v;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        v = v + buf[(tid + 1 + k) % tpg];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = v;
}

// A simdgroup_barrier in a loop whose trip count differs between simdgroups; then a
// local named s at three depths (a loop's, its nested loop's, the body's).
kernel void loop_simd_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              device const uint* trips [[buffer(2)]],
                              uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                              uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float buf[1024];
    float v = x[gid];
    for (uint k = 0; k < trips[sg]; ++k) {
        buf[tid] = v;
        simdgroup_barrier(mem_flags::mem_threadgroup);
        v = v + buf[sg * 32 + (lane + 1) % 32];
        simdgroup_barrier(mem_flags::mem_threadgroup);
    }
    float s = 0.5f;
    for (uint k = 0; k < 2; ++k) {
        float s = simd_sum(v);
        for (uint j = 0; j < 2; ++j) {
            float s = simd_max(v + float(j));
            v = v + s;
        }
        v = v + s;
    }
    out[gid] = v + s;
}

// Row sums, one row per iteration of a loop with two indices (r, w), a block-stride loop
// inside it, a SIMD call, partial sums through threadgroup memory between two barriers.
kernel void loop_rows(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      constant uint& R [[buffer(2)]], constant uint& C [[buffer(3)]],
                      uint tid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float part[32];
    for (uint r = 0, w = 7; r < R; ++r, w += 2) {
        float a = 0.0f;
        for (uint i = tid; i < C; i += tpg) a += x[r * C + i];
        float s = simd_sum(a);
        if (lane == 0) part[sg] = s;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (tid == 0) {
            float t = 0.0f;
            for (uint j = 0; j < (tpg + 31) / 32; ++j) t += part[j];
            out[r] = t + float(w);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
}

// A loop index a thread also steps inside the body: each thread's trip count its own.
kernel void loop_index_stepped(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                               uint gid [[thread_position_in_grid]]) {
    float v = x[gid];
    float acc = 0.0f;
    for (uint k = 0; k < 8; k++) {
        float s = simd_sum(v);
        acc += s * float(k);
        if (v > 0.0f) k++;
    }
    out[gid] = acc;
}

// A loop with its step in the condition (k++ < T) and none after it.
kernel void loop_step_in_condition(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                   constant uint& T [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (uint k = 0; k++ < T;) {
        float s = simd_sum(x[gid] * float(k));
        acc += s;
    }
    out[gid] = acc;
}
"""


def _loop_trips_model(x, trips, n, tg):
    key, lane, sg, grp = _key_1d(n, tg)
    sgs = (np.minimum(tg, n - grp * tg) + 31) // 32  # simdgroups_per_threadgroup: fewer in a partial group
    T = trips[grp * sgs + sg]
    acc = np.zeros(n)
    for k in range(int(T.max()) if n else 0):
        on = T > k
        t = x * (k + 1)
        s = _reduce(np.add, t, key, on, 0)
        for j in range(k % 3):
            acc += np.where(on, _reduce(np.maximum, t + j, key, on, -np.inf), 0)
        acc += np.where(on, s, 0)
    return acc + 100


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(1, 1), (40, 40), (100, 100), (300, 128), (1024, 1024)])
def test_loop_trip_count_per_simdgroup(mode, n, tg):
    x = _ints(n, n)
    sgs = (tg + 31) // 32
    trips = np.random.default_rng(n + 1).integers(0, 6, size=(-(-n // tg)) * sgs).astype(np.uint32)
    out = np.full(n, np.nan, np.float32)
    _lib(LOOPS, mode).loop_trips(x, out, trips, grid=n, threadgroup=tg)
    np.testing.assert_array_equal(out, _loop_trips_model(x, trips, n, tg))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(1, 1), (7, 7), (40, 40), (100, 64), (1024, 1024)])
def test_loop_condition_differs_between_lanes(mode, n, tg):
    x = _ints(n, n)
    out = np.full(n, np.nan, np.float32)
    _lib(LOOPS, mode).loop_lanes(x, out, grid=n, threadgroup=tg)
    key, lane, _, _ = _key_1d(n, tg)
    exp = np.zeros(n)
    for k in range(4):
        on = lane % 5 > k
        exp += np.where(on, _reduce(np.add, x * (k + 1), key, on, 0), 0)
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(8, 8), (40, 40), (100, 100), (256, 256)])
@pytest.mark.parametrize("K", [0, 1, 8, 13, 40])
def test_loop_over_k_with_barriers(mode, n, tg, K):
    x = _ints(K + 7, max(K, 1))
    out = np.full(n, np.nan, np.float32)
    _lib(LOOPS, mode).loop_tiles(x, out, np.uint32(K), grid=n, threadgroup=tg)
    key, _, _, _ = _key_1d(n, tg)
    tid = np.arange(n) % tg
    exp = np.zeros(n)
    for k in range(0, K, 8):
        tile = np.array([x[k + i] if k + i < K else 0 for i in range(8)])
        exp += _reduce(np.add, tile[tid % 8], key, np.ones(n, bool), 0) + tile[(tid + 3) % 8]
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(64, 32), (250, 100), (2048, 1024)])
def test_barrier_loop_trip_count_per_threadgroup(mode, n, tg):
    x = _ints(n, n)
    groups = -(-n // tg)
    trips = np.random.default_rng(n).integers(0, 4, size=groups).astype(np.uint32)
    out = np.full(n, np.nan, np.float32)
    _lib(LOOPS, mode).loop_barrier(x, out, trips, grid=n, threadgroup=tg)
    exp = x.astype(np.float64).copy()
    for g in range(groups):
        v = exp[g * tg:(g + 1) * tg]
        size = len(v)
        for k in range(int(trips[g])):
            v = v + v[(np.arange(size) + 1 + k) % size]
        exp[g * tg:(g + 1) * tg] = v
    np.testing.assert_array_equal(out, exp)


# ===========================================================================
# if (c) return; at the top of the body
# ===========================================================================

RETURNS = r"""
// Several returns: by position, by data (any lanes), then SIMD calls and a loop with one.
kernel void returns(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    constant uint& cut [[buffer(2)]],
                    uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    if (gid >= cut) return;
    float v = x[gid];
    if (v < -2.0f) return;
    if (lane == 5) return;
    float s = simd_sum(v);
    float p = simd_prefix_exclusive_sum(v);
    float acc = 0.0f;
    for (uint k = 0; k < 3; k += 1) {
        float m = simd_max(v + float(k));
        acc += m;
    }
    out[2 * gid] = s + p;
    out[2 * gid + 1] = acc;
}

// A threadgroup barrier after some threads returned: they count as arrived, as on Apple GPUs
// (PYMETAL_VALIDATION=1 reports it: test_barrier_divergence.py).
kernel void ret_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        constant uint& cut [[buffer(2)]],
                        uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float buf[1024];
    if (tid >= cut) return;
    buf[tid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = buf[0] + simd_sum(1.0f);
}

// A simdgroup barrier after whole simdgroups returned, then one after single lanes did.
kernel void ret_simd_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                             constant uint& cut [[buffer(2)]],
                             uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                             uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float buf[1024];
    if (sg * 32 >= cut) return;
    buf[tid] = x[gid];
    simdgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = buf[sg * 32 + (lane + 1) % 32 < 1024 ? sg * 32 + (lane + 1) % 32 : 0] + simd_sum(1.0f);
}

// A barrier in a loop whose trip count differs between the simdgroups of a group: a simdgroup that
// left the loop and finishes counts as arrived, as on Apple GPUs.
kernel void loop_barrier_divergent(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                   uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    float v = x[gid];
    for (uint k = 0; k < sg; k++) {
        v = v + 1.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = v;
}

// A simdgroup that runs past a barrier the others wait at and meets them at the next one: the
// barriers would pair up wrongly on a GPU, an error in every mode.
kernel void skip_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& cut [[buffer(2)]],
                         uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    if (sg * 32 < cut) threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = x[gid];
}
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(1, 1), (40, 40), (100, 100), (300, 256), (1024, 1024)])
@pytest.mark.parametrize("cut", [0, 1, 37, 10 ** 6])
def test_several_returns_then_simd_calls(mode, n, tg, cut):
    x = _ints(n + cut % 7, n)
    out = np.full(2 * n, np.nan, np.float32)
    _lib(RETURNS, mode).returns(x, out, np.uint32(cut), grid=n, threadgroup=tg)
    key, lane, _, _ = _key_1d(n, tg)
    on = (np.arange(n) < cut) & (x >= -2) & (lane != 5)
    w = np.where(on, x, 0).astype(np.float64)
    order = np.argsort(key, kind="stable")  # 1-D: threads of a simdgroup are consecutive, lanes ascending
    c = np.cumsum(w[order]) - w[order]
    prefix = np.empty(n)
    prefix[order] = c - c[np.searchsorted(key[order], key[order])]
    acc = sum(_reduce(np.maximum, x + k, key, on, -np.inf) for k in range(3))
    exp = np.stack([_reduce(np.add, x, key, on, 0) + prefix, acc], axis=1).ravel()
    exp[np.repeat(~on, 2)] = np.nan
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tg,cut", [(32, 31), (100, 64), (100, 99), (1024, 1000), (100, 100)])
def test_threadgroup_barrier_after_return_runs_as_on_a_gpu(mode, tg, cut):
    lib = _lib(RETURNS, mode)
    x = _ints(tg, tg)
    out = np.full(tg, np.nan, np.float32)
    lib.ret_barrier(x, out, np.uint32(cut), grid=tg, threadgroup=tg)
    t = np.arange(tg)
    lanes_left = np.clip(min(cut, tg) - t // 32 * 32, 0, 32)  # simd_sum(1) counts the lanes that did not return
    np.testing.assert_array_equal(out, np.where(t < cut, x[0] + lanes_left, np.nan))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tg,cut", [(64, 5), (100, 64), (1024, 40)])
def test_simdgroup_that_runs_past_a_barrier_and_meets_the_next_is_an_error(mode, tg, cut):
    lib = _lib(RETURNS, mode)
    with pytest.raises(pm.KernelError, match="barrier divergence"):
        lib.skip_barrier(_ints(1, tg), np.zeros(tg, np.float32), np.uint32(cut), grid=tg, threadgroup=tg)
        pm.device().synchronize()
    x = _ints(2, tg)
    out = np.zeros(tg, np.float32)
    lib.skip_barrier(x, out, np.uint32(tg), grid=tg, threadgroup=tg)  # every simdgroup at both barriers
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tg,cut", [(64, 32), (100, 96), (100, 64), (40, 1000)])
def test_simdgroup_barrier_after_whole_simdgroups_returned(mode, tg, cut):
    x = _ints(tg + cut, tg)
    out = np.full(tg, np.nan, np.float32)
    _lib(RETURNS, mode).ret_simd_barrier(x, out, np.uint32(cut), grid=tg, threadgroup=tg)
    t = np.arange(tg)
    sg, lane = t // 32, t % 32
    src = sg * 32 + (lane + 1) % 32
    width = np.minimum(32, tg - sg * 32)
    # a partial simdgroup reads a slot no thread wrote: compare the lanes that read a written one
    ok = (sg * 32 < cut) & (src < tg)
    exp = np.where(ok, x[np.minimum(src, tg - 1)] + width, np.nan)
    np.testing.assert_array_equal(np.where(ok, out, np.nan), exp)
    assert np.isnan(out[sg * 32 >= cut]).all()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tg", [64, 100])
def test_barrier_in_loop_divergent_between_simdgroups_runs_as_on_a_gpu(mode, tg):
    lib = _lib(RETURNS, mode)
    out = np.full(tg, np.nan, np.float32)
    x1 = _ints(1, tg)
    lib.loop_barrier_divergent(x1, out, grid=tg, threadgroup=tg)
    np.testing.assert_array_equal(out, x1 + np.arange(tg) // 32)
    x = _ints(2, 32)
    lib.loop_barrier_divergent(x, out[:32], grid=32, threadgroup=32)  # one simdgroup: no barrier at all
    np.testing.assert_array_equal(out[:32], x)


# ===========================================================================
# Simdgroup matrices
# ===========================================================================

MATRICES = r"""
// Each simdgroup works on its own 16x16 block S of A: loads with elements_per_row,
// origin and transpose from device and threadgroup memory, products whose result is
// an operand, the diagonal constructor and make_filled, stores the same ways.
kernel void sgm_ops(device const float* A [[buffer(0)]], device float* out [[buffer(1)]],
                    device float* te [[buffer(2)]],
                    uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                    uint tgp [[threadgroup_position_in_grid]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float ts[4 * 256];
    threadgroup float to[4 * 256];
    uint blk = tgp * sgs + sg;
    device const float* S = A + blk * 256;
    device float* O = out + blk * 16 * 64;
    for (uint j = lane % 4; j < 256; j += 4) ts[sg * 256 + j] = 2.0f * S[j];  // 4 lanes: a partial simdgroup too
    simdgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 a, b, c, d;
    simdgroup_load(a, S, 16, ulong2(4, 3));                     // S[3:11, 4:12]
    simdgroup_load(b, S, 16, ulong2(2, 5), true);               // S[5:13, 2:10].T
    simdgroup_load(c, &ts[sg * 256], 16, ulong2(7, 1));         // 2 S[1:9, 7:15]
    simdgroup_float8x8 e = simdgroup_float8x8(2.0f);            // 2 I
    simdgroup_float8x8 f;
    simdgroup_load(f, S + 8);                                   // S.flat[8:72]
    simdgroup_multiply(d, a, b);                                // d = a b
    simdgroup_store(d, O);
    simdgroup_multiply(a, a, b);                                // a = a b (d == a)
    simdgroup_store(a, O + 64);
    simdgroup_multiply_accumulate(b, c, b, b);                  // b = c b + b (d == b == c)
    simdgroup_store(b, O + 128);
    simdgroup_multiply_accumulate(c, c, e, c);                  // c = c 2I + c = 3 c
    simdgroup_store(c, O + 192, 8, ulong2(0, 0), true);         // transposed
    simdgroup_multiply_accumulate(f, e, d, f);                  // f = 2 d + f
    simdgroup_store(f, O + 256);
    simdgroup_store(e, O + 320);
    simdgroup_store(d, &to[sg * 256], 16, ulong2(8, 1), true);  // into a 16x16 block: [1:9, 8:16] = d.T
    simdgroup_store(a, &to[sg * 256], 16, ulong2(0, 8));        // [8:16, 0:8] = a
    simdgroup_barrier(mem_flags::mem_threadgroup);
    for (uint j = lane; j < 256; j += 32) O[384 + j] = to[sg * 256 + j];
    // Apple's lane layout: te[blk][lane] = the lane's two elements of d
    te[(blk * 32 + lane) * 2] = d.thread_elements()[0];
    te[(blk * 32 + lane) * 2 + 1] = d.thread_elements()[1];
}

// A lane's elements written through thread_elements(), then a product and a store.
kernel void sgm_elements(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                         device float* out [[buffer(2)]],
                         uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 a, b, d;
    simdgroup_load(b, B + sg * 64);
    a.thread_elements()[0] = A[sg * 64 + lane * 2];       // lane l's elements are A[2l], A[2l + 1]
    a.thread_elements()[1] = A[sg * 64 + lane * 2 + 1];
    simdgroup_multiply(d, a, b);
    simdgroup_store(d, out + sg * 64);
}
"""


def _apple_layout():
    """(row, first column) of each lane's two elements of an 8x8 simdgroup matrix."""
    lane = np.arange(32)
    q = lane // 4
    return (q & 4) + (lane // 2) % 4, (q & 2) * 2 + (lane % 2) * 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("groups,tg", [(1, 32), (2, 64), (3, 128), (1, 40), (2, 100)])
def test_matrix_loads_products_aliasing_and_stores(mode, groups, tg):
    sgs = (tg + 31) // 32
    blocks = groups * sgs
    A = _ints(tg + groups, (blocks, 16, 16))
    out = np.full((blocks, 16, 64), np.nan, np.float32)
    te = np.full((blocks, 32, 2), np.nan, np.float32)
    _lib(MATRICES, mode).sgm_ops(A, out, te, grid=groups * tg, threadgroup=tg)
    rows, cols = _apple_layout()
    for blk in range(blocks):
        # a partial simdgroup (tg 40, 100): elements of lanes that do not exist are 0 in products
        width = min(32, tg - (blk % sgs) * 32)
        have = np.zeros((8, 8), bool)
        for lane in range(width):
            have[rows[lane], cols[lane]:cols[lane] + 2] = True
        S = A[blk].astype(np.float64)
        a, b, c = S[3:11, 4:12] * have, S[5:13, 2:10].T * have, 2 * S[1:9, 7:15] * have
        e, f = 2 * np.eye(8) * have, S.ravel()[8:72].reshape(8, 8) * have
        d = (a @ b) * have
        a2 = d
        b2 = (c @ b + b) * have
        c2 = (c @ e + c) * have
        f2 = (e @ d + f) * have
        o = out[blk].reshape(16, 8, 8)
        for i, m in enumerate([d, a2, b2, c2.T, f2, e]):
            np.testing.assert_array_equal(np.where(have.T if i == 3 else have, o[i], 0), m, err_msg=str((blk, i)))
        if width == 32:
            big = o[6:10].reshape(16, 16)
            np.testing.assert_array_equal(big[1:9, 8:16], d.T)
            np.testing.assert_array_equal(big[8:16, 0:8], a2)
        for lane in range(width):
            assert te[blk, lane].tolist() == d[rows[lane], cols[lane]:cols[lane] + 2].tolist(), (blk, lane)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tg", [32, 96])
def test_matrix_written_through_thread_elements(mode, tg):
    sgs = tg // 32
    A = _ints(1, (sgs, 64))
    B = _ints(2, (sgs, 8, 8))
    out = np.full((sgs, 8, 8), np.nan, np.float32)
    _lib(MATRICES, mode).sgm_elements(A, B, out, grid=tg, threadgroup=tg)
    rows, cols = _apple_layout()
    for s in range(sgs):
        a = np.zeros((8, 8))
        for lane in range(32):
            a[rows[lane], cols[lane]:cols[lane] + 2] = A[s, 2 * lane:2 * lane + 2]
        np.testing.assert_array_equal(out[s], a @ B[s])


FILLED = r"""
// make_filled in a simdgroup with lanes that do not exist (a partial simdgroup) or returned.
kernel void sgm_filled(device const float* A [[buffer(0)]], device float* out [[buffer(1)]],
                       constant float& fill [[buffer(2)]], constant uint& keep [[buffer(3)]],
                       uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    if (lane >= keep) return;
    simdgroup_float8x8 a;
    simdgroup_float8x8 c = make_filled_simdgroup_matrix<float, 8, 8>(fill);
    simdgroup_load(a, A + sg * 64);
    simdgroup_multiply_accumulate(c, a, a, c);
    simdgroup_store(c, out + sg * 64);
}

// make_filled with each lane's own value: the lane's two elements (Apple's layout).
kernel void sgm_filled_lanes(device const float* A [[buffer(0)]], device float* out [[buffer(1)]],
                             uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 c = make_filled_simdgroup_matrix<float, 8, 8>(A[lane]);
    simdgroup_store(c, out);
}
"""

_FILL = np.random.default_rng(99)


def _filled_case(mode, tg, keep):
    sgs = (tg + 31) // 32
    A = _ints(tg + keep, (sgs, 8, 8))
    out = np.full((sgs, 8, 8), np.nan, np.float32)
    fill = float(_FILL.integers(1, 1000))  # a new value each call: nothing left over from an earlier one matches
    _lib(FILLED, mode).sgm_filled(A, out, np.float32(fill), np.uint32(keep), grid=tg, threadgroup=tg)
    rows, cols = _apple_layout()
    for s in range(sgs):
        have = np.zeros((8, 8), bool)
        for lane in range(min(keep, tg - 32 * s, 32)):
            have[rows[lane], cols[lane]:cols[lane] + 2] = True
        a = A[s] * have
        np.testing.assert_array_equal(np.where(have, out[s], 0), (a @ a + fill) * have)
        assert np.isnan(out[s][~have]).all()


@pytest.mark.parametrize("mode", MODES)
def test_make_filled_in_whole_simdgroups(mode):
    _filled_case(mode, 64, 32)


@pytest.mark.parametrize("mode", _fixed("a make_filled matrix only handed to simdgroup functions is kept row-major, "
                                      "and each existing lane fills its own slot: in a partial simdgroup or after "
                                      "lanes returned, the active lanes' elements (Apple layout) lie in slots no lane "
                                      "filled, so the product adds stale values instead of the fill"))
@pytest.mark.parametrize("tg,keep", [(40, 32), (32, 8), (100, 17)])
def test_make_filled_with_missing_lanes(mode, tg, keep):
    _filled_case(mode, tg, keep)


@pytest.mark.parametrize("mode", _fixed("make_filled_simdgroup_matrix(v) with a different v per lane: the matrix is "
                                      "kept row-major, so lane l's value lands on elements 2l, 2l + 1 instead of the "
                                      "lane's own elements in Apple's layout"))
def test_make_filled_with_each_lanes_value(mode):
    A = _ints(5, 32, -100, 100)
    out = np.full((8, 8), np.nan, np.float32)
    _lib(FILLED, mode).sgm_filled_lanes(A, out, grid=32, threadgroup=32)
    rows, cols = _apple_layout()
    exp = np.zeros((8, 8), np.float32)
    for lane in range(32):
        exp[rows[lane], cols[lane]:cols[lane] + 2] = A[lane]
    np.testing.assert_array_equal(out, exp)


GEMM = r"""
// C = A @ B, 16x16 per group of 4 simdgroups in a (32, 2, 2) threadgroup as MLX lays them
// out; M and N multiples of 8, not of 16: simdgroups past the edge return. A loop over K
// whose trip count comes from memory, a tile of B staged in threadgroup memory.
kernel void gemm_tiles(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                       device float* C [[buffer(2)]], constant uint3& mnk [[buffer(3)]],
                       uint3 tgp [[threadgroup_position_in_grid]], uint3 tid [[thread_position_in_threadgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float tb[4][64];
    uint row0 = tgp.y * 16 + tid.z * 8;
    uint col0 = tgp.x * 16 + tid.y * 8;
    if (row0 >= mnk.x || col0 >= mnk.y) return;
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    for (uint k = 0; k < mnk.z; k += 8) {
        simdgroup_float8x8 a;
        simdgroup_float8x8 b;
        simdgroup_load(a, A, mnk.z, ulong2(k, row0));
        for (uint j = lane; j < 64; j += 32) tb[sg][j] = B[(k + j / 8) * mnk.y + col0 + j % 8];
        simdgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_load(b, &tb[sg][0]);
        simdgroup_multiply_accumulate(acc, a, b, acc);
        simdgroup_barrier(mem_flags::mem_threadgroup);
    }
    simdgroup_store(acc, C, mnk.y, ulong2(col0, row0));
}

// A K loop whose trip count differs between the simdgroups of a group.
kernel void gemm_k_per_simdgroup(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                                 device float* C [[buffer(2)]], device const uint* Ks [[buffer(3)]],
                                 uint sg [[simdgroup_index_in_threadgroup]]) {
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    for (uint k = 0; k < Ks[sg]; k += 8) {
        simdgroup_float8x8 a, b;
        simdgroup_load(a, A + sg * 8 * 64, 64, ulong2(k, 0));
        simdgroup_load(b, B + sg * 64 * 8, 8, ulong2(0, k));
        simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    simdgroup_store(acc, C + sg * 64);
}

// Position values straight in a matrix operation's arguments (the first active lane's).
kernel void gemm_position_arguments(device const float* A [[buffer(0)]], device float* C [[buffer(1)]],
                                    uint3 tgp [[threadgroup_position_in_grid]],
                                    ushort3 tid [[thread_position_in_threadgroup]],
                                    uint3 ntg [[threadgroups_per_grid]]) {
    simdgroup_float8x8 a;
    simdgroup_load(a, A, ntg.x * 16, ulong2(tgp.x * 16 + tid.y * 8, tgp.y * 16 + tid.z * 8), tgp.x % 2 == 1);
    simdgroup_store(a, C, ntg.x * 16, ulong2(tgp.x * 16 + tid.y * 8, tgp.y * 16 + tid.z * 8));
}

// half and bfloat: D = A @ B + C per simdgroup, A loaded transposed, the result also
// read through thread_elements() into a float buffer.
kernel void gemm_half(device const half* A [[buffer(0)]], device const half* B [[buffer(1)]],
                      device const half* Cm [[buffer(2)]], device half* D [[buffer(3)]],
                      device float* te [[buffer(4)]],
                      uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_half8x8 a, b, c;
    simdgroup_load(a, A + sg * 64, 8, ulong2(0, 0), true);
    simdgroup_load(b, B + sg * 64);
    simdgroup_load(c, Cm + sg * 64);
    simdgroup_multiply_accumulate(c, a, b, c);
    simdgroup_store(c, D + sg * 64);
    te[sg * 64 + 2 * lane] = float(c.thread_elements()[0]);
    te[sg * 64 + 2 * lane + 1] = float(c.thread_elements()[1]);
}
kernel void gemm_bfloat(device const bfloat* A [[buffer(0)]], device const bfloat* B [[buffer(1)]],
                        device const bfloat* Cm [[buffer(2)]], device float* D [[buffer(3)]],
                        device float* te [[buffer(4)]],
                        uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_bfloat8x8 a, b;
    simdgroup_float8x8 c;
    simdgroup_load(a, A + sg * 64, 8, ulong2(0, 0), true);
    simdgroup_load(b, B + sg * 64);
    simdgroup_load(c, Cm + sg * 64);
    simdgroup_multiply_accumulate(c, a, b, c);
    simdgroup_store(c, D + sg * 64);
    te[sg * 64 + 2 * lane] = c.thread_elements()[0];
    te[sg * 64 + 2 * lane + 1] = c.thread_elements()[1];
}
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("M,N,K", [(8, 8, 8), (24, 40, 8), (40, 8, 24), (8, 56, 0), (72, 24, 40)])
def test_gemm_tiles_in_32x2x2_threadgroups(mode, M, N, K):
    A = _ints(M + K, (M, K))
    B = _ints(N + K, (K, N))
    C = np.full((M, N), np.nan, np.float32)
    groups = (-(-N // 16), -(-M // 16))
    _lib(GEMM, mode).gemm_tiles(A, B, C, np.array([M, N, K], np.uint32), groups=groups, threadgroup=(32, 2, 2))
    np.testing.assert_array_equal(C, A.astype(np.float64) @ B)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["half", "bfloat"])
@pytest.mark.parametrize("tg", [32, 64])
def test_half_and_bfloat_products(mode, kind, tg):
    sgs = tg // 32
    A, B, Cm = (_ints(i + tg, (sgs, 8, 8)) for i in range(3))  # small integers: exact in half and bfloat
    if kind == "half":
        args = [m.astype(np.float16) for m in (A, B, Cm)]
        D = np.full((sgs, 8, 8), np.nan, np.float16)
    else:  # bfloat as its bits: the top half of a float32's
        args = [(m.view(np.uint32) >> 16).astype(np.uint16) for m in (A, B, Cm)]
        D = np.full((sgs, 8, 8), np.nan, np.float32)
    te = np.full((sgs, 32, 2), np.nan, np.float32)
    getattr(_lib(GEMM, mode), "gemm_" + kind)(*args, D, te, grid=tg, threadgroup=tg)
    rows, cols = _apple_layout()
    for s in range(sgs):
        exp = A[s].astype(np.float64).T @ B[s] + Cm[s]
        np.testing.assert_array_equal(D[s].astype(np.float64), exp)
        for lane in range(32):
            assert te[s, lane].tolist() == exp[rows[lane], cols[lane]:cols[lane] + 2].tolist()


# ===========================================================================
# Masks: nested branches, else-if chains, barriers in branches
# ===========================================================================

MASKS = r"""
// Nested ifs with SIMD calls in both branches, an else-if chain where the simdgroups
// of a group take different paths; a barrier in a branch every thread takes, a
// simdgroup_barrier in a branch whole simdgroups take; lanes of a simdgroup split by
// a branch whose other side calls nothing more.
kernel void masks(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant uint& flag [[buffer(2)]],
                  uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                  uint tgp [[threadgroup_position_in_grid]], uint tpg [[threads_per_threadgroup]],
                  uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float buf[1024];
    float v = x[gid];
    float r0 = 0.0f, r1 = 0.0f, r2 = 0.0f;
    if (tgp % 2 == 0) {
        if (sg % 2 == 0) {
            r0 = simd_sum(v);
        } else {
            r0 = simd_max(v);
            float m = simd_min(v);
            r0 = r0 - m;
        }
    } else {
        if (sg % 3 == 0) r0 = simd_product(v == 0.0f ? 1.0f : 1.0f) + 1.0f;
        else r0 = simd_prefix_inclusive_sum(v);
    }
    if (sg == 0) {
        r1 = simd_broadcast(v, 3u % max(1u, min(32u, tpg)));
    } else if (sg == 1) {
        r1 = simd_shuffle_down(v, 1u);
    } else if (sg % 2 == 0) {
        float s = simd_sum(v * 2.0f);
        r1 = s + 1.0f;
    } else {
        r1 = -1.0f;
    }
    if (flag != 0) {          // every thread takes it
        buf[tid] = v;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        r2 = buf[tpg - 1 - tid];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (sg % 2 == 1) {        // whole simdgroups take it
        buf[tid] = v * 3.0f;
        simdgroup_barrier(mem_flags::mem_threadgroup);
        r2 = r2 + buf[sg * 32 + (lane ^ 1) < tpg ? sg * 32 + (lane ^ 1) : tid];
    }
    if (lane < 13) {          // some lanes; the others call nothing more
        float t = simd_sum(v);
        r2 = r2 + 100.0f * t;
    }
    out[3 * gid] = r0;
    out[3 * gid + 1] = r1;
    out[3 * gid + 2] = r2;
}
"""


def _masks_model(x, n, tg, flag):
    key, lane, sg, grp = _key_1d(n, tg)
    t = np.arange(n)
    tid = t % tg
    size = np.minimum(tg, n - grp * tg)
    every = np.ones(n, bool)
    width = np.minimum(32, size - sg * 32)
    # r0
    even = grp % 2 == 0
    s = _reduce(np.add, x, key, every, 0)
    mx = _reduce(np.maximum, x, key, every, -np.inf)
    mn = _reduce(np.minimum, x, key, every, np.inf)
    w = x.astype(np.float64)
    c = np.cumsum(w)
    incl = c - (c - w)[np.searchsorted(key, key)]
    r0 = np.where(even, np.where(sg % 2 == 0, s, mx - mn), np.where(sg % 3 == 0, 2.0, incl))
    # r1
    src = t - lane + 3 % np.maximum(1, np.minimum(32, size))
    down = np.where(lane + 1 < width, t + 1, t)  # simd_shuffle_down past the last lane: the lane's own value
    r1 = np.select([sg == 0, sg == 1, sg % 2 == 0],
                   [x[np.minimum(src, n - 1)], x[np.minimum(down, n - 1)], _reduce(np.add, 2 * x, key, every, 0) + 1],
                   -1.0)
    # r2
    r2 = np.where(flag != 0, x[grp * tg + size - 1 - tid], 0.0)
    nb = sg * 32 + (lane ^ 1)
    r2 = r2 + np.where(sg % 2 == 1, 3 * x[np.where(nb < size, grp * tg + nb, t)], 0)
    low = lane < 13
    r2 = r2 + np.where(low, 100 * _reduce(np.add, x, key, low, 0), 0)
    return np.stack([r0, r1, r2], axis=1).ravel(), (lane + 1 < width) | (sg != 1)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(1, 1), (40, 40), (200, 100), (300, 128), (1024, 1024), (3000, 1024)])
@pytest.mark.parametrize("flag", [0, 1])
def test_nested_masks_else_if_and_branch_barriers(mode, n, tg, flag):
    x = _ints(n + flag, n)
    out = np.full(3 * n, np.nan, np.float32)
    _lib(MASKS, mode).masks(x, out, np.uint32(flag), grid=n, threadgroup=tg)
    exp, defined = _masks_model(x, n, tg, flag)
    # simd_shuffle_down from the last lane of simdgroup 1 reads past the simdgroup: undefined, not compared
    got = out.reshape(n, 3).copy()
    e = exp.reshape(n, 3).copy()
    got[~defined, 1] = e[~defined, 1] = 0
    np.testing.assert_array_equal(got, e)


GROUPS3D = r"""
// Simdgroups that cross rows and planes of a 3-D threadgroup at odd places, with a
// SIMD call inside a loop and a matrix-free shuffle.
kernel void grid3d(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   uint3 pos [[thread_position_in_grid]], uint3 grid [[threads_per_grid]],
                   uint lid [[thread_index_in_threadgroup]],
                   ushort lane [[thread_index_in_simdgroup]], ushort sg [[simdgroup_index_in_threadgroup]]) {
    uint i = (pos.z * grid.y + pos.y) * grid.x + pos.x;
    float v = x[i];
    float p = simd_prefix_exclusive_sum(v);
    float acc = 0.0f;
    for (uint k = 0; k < 2; k += 1) {
        float s = simd_sum(v + float(k));
        acc += s;
    }
    out[4 * i] = p;
    out[4 * i + 1] = acc;
    out[4 * i + 2] = float(lid);
    out[4 * i + 3] = float(sg * 32 + lane);
}
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size,tg", [((5, 3, 3), (5, 3, 3)), ((16, 8, 4), (8, 4, 2)), ((7, 5, 4), (3, 3, 3)),
                                     ((64, 4, 4), (32, 2, 2)), ((11, 9, 3), (8, 4, 2))])
def test_3d_threadgroups_crossing_rows(mode, size, tg):
    sx, sy, sz = size
    n = sx * sy * sz
    x = _ints(n, n)
    out = np.full(4 * n, np.nan, np.float32)
    _lib(GROUPS3D, mode).grid3d(x, out, grid=size, threadgroup=tg)
    z, y, xx = np.unravel_index(np.arange(n), (sz, sy, sx))
    pos = [xx, y, z]
    gpos = [p // t for p, t in zip(pos, tg)]
    width = [np.minimum(t, s - g * t) for t, s, g in zip(tg, size, gpos)]  # edge groups are smaller
    lid = (pos[0] % tg[0]) + (pos[1] % tg[1]) * width[0] + (pos[2] % tg[2]) * width[0] * width[1]
    gid = (gpos[2] * -(-sy // tg[1]) + gpos[1]) * -(-sx // tg[0]) + gpos[0]
    key = gid * 64 + lid // 32
    lane = lid % 32
    every = np.ones(n, bool)
    prefix = np.zeros(n)
    table = {}
    for t in np.lexsort((lane, key)):
        prefix[t] = table.get(key[t], 0.0)
        table[key[t]] = prefix[t] + x[t]
    acc = sum(_reduce(np.add, x + k, key, every, 0) for k in range(2))
    exp = np.stack([prefix, acc, lid, lid], axis=1).ravel()
    np.testing.assert_array_equal(out, exp)


# ===========================================================================
# Large locals, groups of 1024, several Python threads at once
# ===========================================================================

BIG = r"""
// 508 bytes of locals a thread (lockstep's bound is 512), kept across SIMD calls and a barrier.
kernel void big(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                uint tpg [[threads_per_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float buf[1024];
    float a[110];
    float4 b[4];
    for (uint k = 0; k < 110; ++k) a[k] = x[gid] * float(k % 7) + float(k);
    for (uint k = 0; k < 4; ++k) b[k] = float4(x[gid]) + float4(k, 2 * k, 3 * k, 4 * k);
    float s = simd_sum(a[lane % 110] + b[lane % 4].w);
    buf[tid] = s + a[109];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = buf[tpg - 1 - tid] + a[gid % 110] + b[gid % 4].y;
}
"""


def _big_model(x, n, tg):
    key, lane, _, grp = _key_1d(n, tg)
    k = np.arange(110)
    a = x[:, None].astype(np.float64) * (k % 7) + k
    b = x[:, None, None].astype(np.float64) + np.arange(4)[:, None] * np.array([1, 2, 3, 4])
    s = _reduce(np.add, a[np.arange(n), lane % 110] + b[np.arange(n), lane % 4, 3], key, np.ones(n, bool), 0)
    v = s + a[:, 109]
    t = np.arange(n)
    size = np.minimum(tg, n - grp * tg)
    mirror = grp * tg + size - 1 - t % tg
    return v[mirror] + a[t, t % 110] + b[t, t % 4, 1]


@pytest.mark.parametrize("mode", MODES)
def test_large_locals_from_several_threads_repeatedly(mode):
    lib = _lib(BIG, mode)
    n, tg = 3000, 1024
    inputs = [_ints(i, n, -50, 50) for i in range(4)]
    expected = [_big_model(x, n, tg) for x in inputs]
    errors = []

    def run(i):
        try:
            for r in range(3):
                out = np.full(n, np.nan, np.float32)
                lib.big(inputs[i], out, grid=n, threadgroup=tg)
                pm.device().synchronize()
                np.testing.assert_array_equal(out, expected[i], err_msg=f"thread {i}, call {r}")
        except Exception as e:  # reported below, from the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# ===========================================================================
# Diagnostics and faults
# ===========================================================================

ERR_KERNEL = r"""
kernel void bad(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                uint grid [[threads_per_grid]]) {
    float v = x[gid];
    simdgroup_float8x8 m;
"""

# Each body has one error, `.zz` on a float, in a statement lockstep rewrites.
ERRORS = {
    "loop_condition": "    float acc = 0.0f;\n    for (uint k = 0; k < v.zz; ++k) {\n"
                      "        float s = simd_sum(v);\n        acc += s;\n    }\n    out[gid] = acc;\n}\n",
    "loop_step": "    float acc = 0.0f;\n    for (uint k = 0; k < 4; k += v.zz) {\n"
                 "        float s = simd_sum(v);\n        acc += s;\n    }\n    out[gid] = acc;\n}\n",
    "loop_body_local": "    float acc = 0.0f;\n    for (uint k = 0; k < 4; ++k) {\n        float t = v.zz;\n"
                       "        float s = simd_sum(t);\n        acc += s;\n    }\n    out[gid] = acc;\n}\n",
    "loop_body_simd": "    float acc = 0.0f;\n    for (uint k = 0; k < 4; ++k) {\n"
                      "        float s = simd_sum(v.zz);\n        acc += s;\n    }\n    out[gid] = acc;\n}\n",
    "return_condition": "    if (v.zz > 0.0f) return;\n    out[gid] = simd_sum(v);\n}\n",
    "matrix_argument": "    simdgroup_load(m, x + v.zz);\n    simdgroup_store(m, out);\n}\n",
    "else_branch": "    if (lane < 16) out[gid] = simd_sum(v);\n    else out[gid] = simd_max(v.zz);\n}\n",
    "strided_body": "    float a = 0.0f;\n    for (uint i = gid; i < 100; i += grid) a += x[i].zz;\n"
                    "    out[gid] = simd_sum(a);\n}\n",
    "strided_condition": "    float a = 0.0f;\n    for (uint i = gid; i < v.zz; i += grid) a += x[i];\n"
                         "    out[gid] = simd_sum(a);\n}\n",
    "strided_start": "    float a = 0.0f;\n    for (uint i = gid + grid.zz; i < 100; i += grid) a += x[i];\n"
                     "    out[gid] = simd_sum(a);\n}\n",
    "strided_step": "    float a = 0.0f;\n    for (uint i = gid; i < 100; i += grid.zz) a += x[i];\n"
                    "    out[gid] = simd_sum(a);\n}\n",
    "strided_in_loop": "    float acc = 0.0f;\n    for (uint k = 0; k < 2; ++k) {\n"
                       "        float a = 0.0f;\n        for (uint i = gid; i < 100; i += grid) a += x[i].zz;\n"
                       "        float s = simd_sum(a);\n        acc += s;\n    }\n    out[gid] = acc;\n}\n",
}


def _error_sites(body, mode):
    """The (line, column) of each error clang reports for ERR_KERNEL + body, and where `.zz` is."""
    with pytest.raises(pm.CompileError) as info:
        _lib(ERR_KERNEL + body, mode)
    full = HEADER + ERR_KERNEL + body
    before = full[:full.index(".zz")]
    where = (before.count("\n") + 1, len(before) - before.rfind("\n"))
    return [(int(a), int(b)) for a, b in re.findall(r"program_source:(\d+):(\d+): error", str(info.value))], where


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(set(ERRORS) - {"strided_condition"}))
def test_error_in_rewritten_statement_once_on_its_line(case, mode):
    errors, where = _error_sites(ERRORS[case], mode)
    assert errors == [where]


@pytest.mark.parametrize("mode", _fixed("an error in a grid-stride loop's condition is reported three times (the "
                                      "rewritten loop tests the condition for step 0 and, twice, for the next step)"))
def test_error_in_grid_stride_condition_once(mode):
    errors, where = _error_sites(ERRORS["strided_condition"], mode)
    assert errors == [where]


FAULTS = r"""
// An out-of-bounds write far away (`far` elements past out): in a statement after a SIMD
// call, in a SIMD statement's target, in a loop around a SIMD call, in a matrix store.
kernel void fault_lane(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& far [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    float s = simd_sum(x[gid]);
    out[gid + (gid == 7 ? far : 0u)] = s;
}
kernel void fault_target(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& far [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    out[gid + (gid == 7 ? far : 0u)] = simd_sum(x[gid]);
}
kernel void fault_loop(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& far [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (uint k = 0; k < 3; k += 1) {
        float s = simd_sum(x[gid]);
        acc += s;
        out[gid + (gid == 7 ? far : 0u)] = acc;
    }
}
kernel void fault_matrix(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& far [[buffer(2)]], uint sg [[simdgroup_index_in_threadgroup]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, x);
    simdgroup_store(m, out + (sg == 1 ? far : 0u));
}
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["fault_lane", "fault_target", "fault_loop", "fault_matrix"])
def test_fault_names_the_kernel_and_leaves_the_library_usable(mode, name):
    lib = _lib(FAULTS, mode)
    x = _ints(3, 128)
    out = np.full(128, np.nan, np.float32)
    with pytest.raises(pm.KernelError, match=name):
        getattr(lib, name)(x, out, np.uint32(1 << 30), grid=128, threadgroup=64)
        pm.device().synchronize()
    for _ in range(2):  # the same kernel, then again: the worker that faulted runs them as before
        out = np.full(128, np.nan, np.float32)
        getattr(lib, name)(x, out, np.uint32(0), grid=128, threadgroup=64)
        key, _, _, _ = _key_1d(128, 64)
        s = _reduce(np.add, x, key, np.ones(128, bool), 0)
        if name == "fault_matrix":
            np.testing.assert_array_equal(out[:64], x[:64])
        else:
            np.testing.assert_array_equal(out, 3 * s if name == "fault_loop" else s)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tg", [32, 128, 1024])
def test_simdgroup_barrier_loop_and_shadowed_locals(mode, tg):
    x = _ints(tg, tg)
    trips = np.random.default_rng(tg).integers(0, 4, size=tg // 32).astype(np.uint32)
    out = np.full(tg, np.nan, np.float32)
    _lib(LOOPS, mode).loop_simd_barrier(x, out, trips, grid=tg, threadgroup=tg)
    v = x.astype(np.float64).reshape(-1, 32)
    for sg in range(tg // 32):
        for _ in range(int(trips[sg])):
            v[sg] = v[sg] + np.roll(v[sg], -1)
    for _ in range(2):
        outer = v.sum(axis=1, keepdims=True)
        for j in range(2):
            v = v + (v + j).max(axis=1, keepdims=True)
        v = v + outer
    np.testing.assert_array_equal(out, v.ravel() + 0.5)


DIAGONAL = r"""
// The diagonal constructor reads the running lane: from a user function, in a grid-stride loop.
simdgroup_float8x8 eye(float v) { return simdgroup_float8x8(v); }
kernel void diag_fn(device const float* A [[buffer(0)]], device float* out [[buffer(1)]]) {
    simdgroup_float8x8 e = eye(2.0f);
    simdgroup_float8x8 a, d;
    simdgroup_load(a, A);
    simdgroup_multiply(d, e, a);
    simdgroup_store(d, out);
}
kernel void diag_strided(device const float* A [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& n [[buffer(2)]], uint lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 e = simdgroup_float8x8(0.0f);
    for (uint i = lane; i < n; i += 32) e = simdgroup_float8x8(3.0f);
    simdgroup_float8x8 a, d;
    simdgroup_load(a, A);
    simdgroup_multiply(d, e, a);
    simdgroup_store(d, out);
}
"""


@pytest.mark.parametrize("mode", _fixed("the diagonal constructor inside a user function (`simdgroup_float8x8 e = "
                                      "eye(2.0f);`) runs without the runtime being told the lane (laneIndex only "
                                      "looks for simdgroup_ names in the statement itself): every lane builds the "
                                      "same lane's elements"))
def test_diagonal_matrix_from_a_user_function(mode):
    A = _ints(1, (8, 8))
    out = np.full((8, 8), np.nan, np.float32)
    _lib(DIAGONAL, mode).diag_fn(A, out, grid=32, threadgroup=32)
    np.testing.assert_array_equal(out, 2 * A)


@pytest.mark.parametrize("mode", _fixed("the diagonal constructor in a grid-stride loop's body runs without the "
                                      "runtime being told the lane (the strided loop emits no ls_lane): wrong matrix"))
def test_diagonal_matrix_in_grid_stride_loop(mode):
    A = _ints(2, (8, 8))
    out = np.full((8, 8), np.nan, np.float32)
    _lib(DIAGONAL, mode).diag_strided(A, out, np.uint32(64), grid=32, threadgroup=32)
    np.testing.assert_array_equal(out, 3 * A)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("R,C,tg", [(0, 5, 32), (1, 0, 64), (3, 1000, 256), (5, 37, 100), (4, 5000, 1024)])
def test_row_sums_in_loop_with_two_indices(mode, R, C, tg):
    x = _ints(C, R * C)
    out = np.full(R, np.nan, np.float32)
    _lib(LOOPS, mode).loop_rows(x, out, np.uint32(R), np.uint32(C), grid=tg, threadgroup=tg)
    np.testing.assert_array_equal(out, x.reshape(R, C).astype(np.float64).sum(1) + 7 + 2 * np.arange(R))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg", [(1, 1), (96, 96), (300, 128)])
def test_loop_index_stepped_in_body(mode, n, tg):
    x = _ints(n, n)
    out = np.full(n, np.nan, np.float32)
    _lib(LOOPS, mode).loop_index_stepped(x, out, grid=n, threadgroup=tg)
    key, _, _, _ = _key_1d(n, tg)
    exp, k = np.zeros(n), np.zeros(n, int)
    while (k < 8).any():
        on = k < 8
        exp += np.where(on, _reduce(np.add, x, key, on, 0) * k, 0)
        k = np.where(on, k + 1 + (x > 0), k)
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("mode", MODES)
def test_gemm_k_loop_per_simdgroup(mode):
    A, B = _ints(2, (4, 8, 64)), _ints(3, (4, 64, 8))
    Ks = np.array([0, 8, 64, 24], np.uint32)
    C = np.full((4, 8, 8), np.nan, np.float32)
    _lib(GEMM, mode).gemm_k_per_simdgroup(A, B, C, Ks, grid=128, threadgroup=128)
    for s in range(4):
        np.testing.assert_array_equal(C[s], A[s][:, :Ks[s]].astype(np.float64) @ B[s][:Ks[s]])


@pytest.mark.parametrize("mode", MODES)
def test_positions_in_matrix_arguments(mode):
    A = _ints(1, (32, 48))
    C = np.full((32, 48), np.nan, np.float32)
    _lib(GEMM, mode).gemm_position_arguments(A, C, groups=(3, 2), threadgroup=(32, 2, 2))
    exp = A.copy()
    for gx in range(3):
        for r in range(0, 32, 8):
            for c in range(gx * 16, gx * 16 + 16, 8):
                if gx % 2 == 1:  # loaded transposed, stored as it is
                    exp[r:r + 8, c:c + 8] = A[r:r + 8, c:c + 8].T
    np.testing.assert_array_equal(C, exp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("T", [0, 3])
def test_loop_step_in_condition(mode, T):
    x = _ints(2, 100)
    out = np.full(100, np.nan, np.float32)
    _lib(LOOPS, mode).loop_step_in_condition(x, out, np.uint32(T), grid=100, threadgroup=64)
    key, _, _, _ = _key_1d(100, 64)
    np.testing.assert_array_equal(out, _reduce(np.add, x, key, np.ones(100, bool), 0) * (T * (T + 1) // 2))


@pytest.mark.parametrize("mode", _fixed("a barrier error names the barrier's column plus 4 (the rewritten "
                                      "`if (ls_barrier(...))` starts at the barrier's column: the call's site is "
                                      "4 characters further)"))
@pytest.mark.parametrize("kernel", ["skip_barrier"])
def test_barrier_error_names_the_barriers_line_and_column(mode, kernel):
    full = HEADER + RETURNS
    body = full[full.index("kernel void " + kernel):]
    at = full.index("threadgroup_barrier(", full.index("kernel void " + kernel) + body.index("{"))
    line, column = full[:at].count("\n") + 1, at - full[:at].rfind("\n")
    tg = 64
    with pytest.raises(pm.KernelError, match=r"\(line %d:%d\)" % (line, column)):
        extra = [np.uint32(5)]  # simdgroup 1 runs past the first barrier
        getattr(_lib(RETURNS, mode), kernel)(_ints(1, tg), np.zeros(tg, np.float32), *extra, grid=tg, threadgroup=tg)
        pm.device().synchronize()
