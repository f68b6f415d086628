"""SIMD lockstep's group-wide shortcuts, against NumPy.

Lockstep (Sources/MetalCPU/Compiler/Lockstep.swift) runs some statements for the
whole group at once where it can tell that every thread would do the same:
- a loop around SIMD calls or barriers whose index starts, steps and stops on
  values the group shares (constants, arguments, the group's position) is one
  C++ loop for the group, not one mask of the threads still in it;
- `for (j = lane; j < 64; j += 32)` takes 64 / 32 steps in every lane;
- a statement under a mask that may have lost threads (after `if (c) return;`,
  in a loop) has a second copy for when every thread takes part, so that it
  vectorises without masked stores;
- statements vectorise over the threads (their iterations are threads, with no
  order between them, as on a GPU), with the same thread's reads and writes in
  order.
Each kernel runs compiled by default (lockstep) and with PM_NO_LOCKSTEP (one
fiber per thread), on full and partial groups (a mask that is and is not full
in the same dispatch), and is compared with a NumPy model. Values are small
integers, so sums are exact in any order.
"""

import numpy as np
import pytest

import pymetal as pm
from msl_kernels import MODES, compile_mode

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"

SRC = r"""
// A k-loop on an argument after some threads left (the last group's mask is not full).
kernel void uniform_k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      constant uint& n [[buffer(2)]], constant uint& K [[buffer(3)]],
                      uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    if (gid >= n) return;
    float a = 0;
    for (uint k = 0; k < K; k += 2) {
        float s = simd_sum(x[k * 32 + lane]);
        a += s * float(k + 1);
        out[gid] = a;  // a statement under the mask, every step
    }
    out[gid] = a + float(K);
}

// A loop that would never end (step 0) in groups where every thread left: they take no step.
kernel void uniform_none(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                         constant uint& step [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    if (gid >= n) return;
    for (uint k = 0; k < 4; k += step) {
        float s = simd_sum(1.0f);
        out[gid] += s;
    }
}

// Nested group-wide loops; a grid-stride loop inside starting on the outer index.
kernel void uniform_nested(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                           constant uint& n [[buffer(2)]], constant uint& R [[buffer(3)]],
                           uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                           uint lane [[thread_index_in_simdgroup]]) {
    float total = 0;
    for (uint r = 0; r < R; r++) {
        for (uint c = 0; c < 2; c++) {
            float acc = 0;
            for (uint i = gid + r + c; i < n; i += grid) acc += x[i];
            float s = simd_sum(acc);
            total += s * float(r + 1);
        }
    }
    out[gid] = total;
}

// A loop on the group's position; threadgroup memory and barriers in it.
kernel void uniform_groups(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                           constant uint& G [[buffer(2)]],
                           uint tgp [[threadgroup_position_in_grid]], uint ngroups [[threadgroups_per_grid]],
                           uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
                           uint gid [[thread_position_in_grid]]) {
    threadgroup float t[1024];
    float a = 0;
    for (uint g = tgp; g < G; g += ngroups) {
        t[lid] = x[g * tpg + lid];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        a += t[tpg - 1 - lid];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[gid] = a;
}

// The simdgroup's cooperative copy (two steps for every lane), after some simdgroups left.
kernel void lane_copy(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      constant uint& live [[buffer(2)]],
                      uint sg [[simdgroup_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                      uint gid [[thread_position_in_grid]], uint tgp [[threadgroup_position_in_grid]]) {
    threadgroup float t[8][64];
    if (sg >= live) return;
    for (uint j = lane; j < 64; j += 32) t[sg][j] = x[(tgp * 8 + sg) * 64 + j] * 2;
    simdgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = t[sg][63 - lane] + t[sg][31 - lane];
}

// Addresses divided by constants (whole simdgroups run as runs of 8 lanes), on whole and
// partial simdgroups and on 2-D groups whose rows cut simdgroups.
kernel void runs_of_eight(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                          uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint lid [[thread_index_in_threadgroup]], uint tgp [[threadgroup_position_in_grid]],
                          uint3 tpg [[threads_per_threadgroup]]) {
    float v;
    v = x[(sg * 4 + lane / 8) * 16 + lane % 8] + x[lane / 4 + 512] * 10;  // a statement of its own
    float s = simd_sum(v);
    out[tgp * (tpg.x * tpg.y * tpg.z) + lid] = v + s * 100;
}

// A literal bound that is no multiple of the step: threads take 2 or 1 steps.
kernel void literal_steps(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                          uint lid [[thread_index_in_threadgroup]], uint gid [[thread_position_in_grid]],
                          uint tgp [[threadgroup_position_in_grid]]) {
    threadgroup float t[100];
    for (uint j = lid; j < 100; j += 64) t[j] = x[tgp * 100 + j] + 1;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = simd_sum(t[lid] + (lid + 64 < 100 ? t[lid + 64] : 0.0f));
    out[gid] = s;
}

// A thread's own writes and reads within one statement stay in order; an index handed
// to MSL functions (min, a vector constructor) is still stepped across the threads.
kernel void own_order(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      device float* scratch [[buffer(2)]], constant uint& n [[buffer(3)]],
                      uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                      uint lid [[thread_index_in_threadgroup]]) {
    threadgroup float t[256];
    { scratch[gid] = x[gid] * 2; scratch[gid] += scratch[gid]; t[lid] = scratch[gid]; out[gid] = t[lid] + 1; }
    float acc = 0;
    for (uint i = gid; i < n; i += grid) acc += x[min(i, n - 1)] * float2(i % 3, 1).x;
    float s = simd_sum(acc);
    out[gid] += s;
}
"""


def _lib(mode):
    return compile_mode(HEADER + SRC, mode)


def _ints(seed, shape, lo=-3, hi=4):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(np.float32)


def _simd_key(n, tg):
    """Each thread's simdgroup (numbered over the dispatch) and lane, for a 1-D dispatch of n threads."""
    t = np.arange(n)
    lid = t % tg
    return (t // tg) * ((tg + 31) // 32) + lid // 32, lid % 32


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,tg,dispatched", [(1, 32, 32), (37, 32, 64), (100, 64, 128), (256, 128, 256), (1000, 256, 1024)])
@pytest.mark.parametrize("K", [0, 1, 6])
def test_uniform_loop_after_returns(mode, n, tg, dispatched, K):
    x = _ints(K, max(K, 1) * 32)
    out = np.full(dispatched, -1.0, np.float32)
    _lib(mode).uniform_k(x, out, np.uint32(n), np.uint32(K), grid=dispatched, threadgroup=tg)
    key, lane = _simd_key(dispatched, tg)
    active = np.arange(dispatched) < n
    expected = np.full(dispatched, -1.0)
    a = np.zeros(dispatched)
    for k in range(0, K, 2):
        # simd_sum over the simdgroup's active lanes, each adding x[k * 32 + its lane]
        vals = x[k * 32 + lane].astype(np.float64)
        sums = np.zeros(key.max() + 1)
        np.add.at(sums, key[active], vals[active])
        a += sums[key] * (k + 1)
    expected[active] = (a + K)[active]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("mode", MODES)
def test_uniform_loop_of_a_group_whose_threads_all_left(mode):
    out = np.zeros(256, np.float32)
    # step 0 would loop for ever: only groups without a thread left in them run (none here)
    _lib(mode).uniform_none(out, np.uint32(0), np.uint32(0), grid=256, threadgroup=64)
    np.testing.assert_array_equal(out, 0)
    out = np.zeros(256, np.float32)
    _lib(mode).uniform_none(out, np.uint32(64), np.uint32(1), grid=256, threadgroup=64)
    np.testing.assert_array_equal(out, np.where(np.arange(256) < 64, 4 * 32, 0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,grid,tg", [(0, 32, 32), (50, 64, 32), (1000, 96, 96), (4099, 256, 128)])
@pytest.mark.parametrize("R", [0, 3])
def test_nested_uniform_loops(mode, n, grid, tg, R):
    x = _ints(n + R, max(n, 1))
    out = np.full(grid, np.nan, np.float32)
    _lib(mode).uniform_nested(x, out, np.uint32(n), np.uint32(R), grid=grid, threadgroup=tg)
    key, _ = _simd_key(grid, tg)
    total = np.zeros(grid)
    for r in range(R):
        for c in range(2):
            acc = np.array([x[g + r + c:n:grid].sum(dtype=np.float64) if g + r + c < n else 0.0 for g in range(grid)])
            sums = np.zeros(key.max() + 1)
            np.add.at(sums, key, acc)
            total += sums[key] * (r + 1)
    np.testing.assert_array_equal(out, total)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("groups,tg,G", [(1, 32, 3), (3, 64, 7), (4, 100, 4), (2, 1024, 5), (5, 33, 2)])
def test_loop_on_the_group_position_with_barriers(mode, groups, tg, G):
    x = _ints(G, G * tg)
    out = np.full(groups * tg, np.nan, np.float32)
    _lib(mode).uniform_groups(x, out, np.uint32(G), groups=groups, threadgroup=tg)
    expected = np.zeros((groups, tg))
    for g in range(groups):
        for gg in range(g, G, groups):
            expected[g] += x[gg * tg:(gg + 1) * tg][::-1]
    np.testing.assert_array_equal(out, expected.ravel())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("groups,tg,live", [(1, 32, 1), (2, 256, 8), (3, 256, 5), (2, 96, 2), (1, 64, 0)])
def test_simdgroup_cooperative_copy(mode, groups, tg, live):
    sgs = tg // 32
    x = _ints(tg + live, groups * 8 * 64)
    out = np.full(groups * tg, np.nan, np.float32)
    _lib(mode).lane_copy(x, out, np.uint32(live), groups=groups, threadgroup=tg)
    expected = np.full((groups, sgs, 32), np.nan)
    tiles = x.reshape(groups, 8, 64) * 2
    lane = np.arange(32)
    for g in range(groups):
        for s in range(min(live, sgs)):
            expected[g, s] = tiles[g, s, 63 - lane] + tiles[g, s, 31 - lane]
    np.testing.assert_array_equal(out, expected.ravel())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("groups", [1, 3])
def test_literal_bound_with_uneven_steps(mode, groups):
    x = _ints(groups, groups * 100)
    out = np.full(groups * 64, np.nan, np.float32)
    _lib(mode).literal_steps(x, out, groups=groups, threadgroup=64)
    t = x.reshape(groups, 100) + 1
    lid = np.arange(64)
    per = t[:, lid] + np.where(lid + 64 < 100, t[:, np.minimum(lid + 64, 99)], 0)
    sums = per.reshape(groups, 2, 32).sum(axis=2, dtype=np.float64)
    np.testing.assert_array_equal(out, np.repeat(sums, 32, axis=1).ravel())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,grid,tg", [(1, 32, 32), (300, 256, 256), (5000, 192, 64)])
def test_a_threads_own_order_and_indices_handed_to_msl_functions(mode, n, grid, tg):
    x = _ints(n, max(n, grid))
    out = np.full(grid, np.nan, np.float32)
    scratch = np.zeros(grid, np.float32)
    _lib(mode).own_order(x, out, scratch, np.uint32(n), grid=grid, threadgroup=tg)
    np.testing.assert_array_equal(scratch, x[:grid] * 4)
    key, _ = _simd_key(grid, tg)
    i = np.arange(n)
    acc = np.zeros(grid)
    np.add.at(acc, i % grid, x[:n].astype(np.float64) * (i % 3))
    sums = np.zeros(key.max() + 1)
    np.add.at(sums, key, acc)
    np.testing.assert_array_equal(out, x[:grid] * 4 + 1 + sums[key])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("groups,tg", [(1, 32), (2, 48), (3, 64), (1, 100), (2, (16, 4)), (1, (8, 8, 2))])
def test_addresses_divided_by_constants(mode, groups, tg):
    n = int(np.prod(tg))
    x = _ints(n, 1024)
    out = np.full(groups * n, np.nan, np.float32)
    _lib(mode).runs_of_eight(x, out, groups=groups, threadgroup=tg)
    lid = np.arange(n)
    sg, lane = lid // 32, lid % 32
    v = x[(sg * 4 + lane // 8) * 16 + lane % 8].astype(np.float64) + x[lane // 4 + 512] * 10
    sums = np.zeros(sg.max() + 1)
    np.add.at(sums, sg, v)
    np.testing.assert_array_equal(out, np.tile(v + sums[sg] * 100, groups))
