"""Strided loops interleaved across lanes, against NumPy.

On the CPU backend the front end gives the strided loops of kernels that use
barriers / SIMD functions a yield point (pm::rt::tick): every PM_YIELD_EVERY
iterations a lane lets the other lanes of its simdgroup run, so that a
simdgroup walks a grid-stride loop together, as on a GPU. Yielding must never
change a result: each source here is compiled with the default and with
PM_YIELD_EVERY=1 and 3 (a switch at every / every third iteration, the most
interleaving), and run on shapes with partial threadgroups and partial
simdgroups. The kernels are ordinary MSL (on a Mac the macro does nothing).

Sums use integer-valued floats, exact in any order.
"""

import numpy as np
import pytest

import msl_kernels
import pymetal as pm

SRC = r"""
#include <metal_stdlib>
using namespace metal;

""" + msl_kernels.source("grid_stride_sum.metal") + r"""

// Running sums in each thread's grid-stride order (the order within a thread
// must survive the interleaving), then each lane's total through a SIMD scan.
kernel void gs_running(device const float* x [[buffer(0)]], device float* run [[buffer(1)]],
                       device float* scan [[buffer(2)]], constant uint& n [[buffer(3)]],
                       uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) {
        acc += x[i];
        run[i] = acc;
    }
    scan[gid] = simd_prefix_inclusive_sum(acc);
}

// Per-lane trip counts from the data, lanes that return before the loop and
// inside it; the SIMD sum afterwards is over the lanes still running.
kernel void gs_ragged(device const uint* limit [[buffer(0)]], device const float* x [[buffer(1)]],
                      device float* acc_out [[buffer(2)]], device float* sum_out [[buffer(3)]],
                      uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    uint end = limit[gid];
    if (end == 0xFFFFFFFFu) return;
    float acc = 0.0f;
    for (uint i = gid; i < end; i += grid) {
        if (x[i] >= 95.0f) {
            acc_out[gid] = -acc;
            return;
        }
        acc += x[i];
    }
    acc_out[gid] = acc;
    sum_out[gid] = simd_sum(acc);
}

// Histogram: threadgroup atomics from a grid-stride loop, then device atomics.
kernel void gs_hist(device const uint* x [[buffer(0)]], device atomic_uint* hist [[buffer(1)]],
                    constant uint& n [[buffer(2)]], constant uint& nbins [[buffer(3)]],
                    uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                    uint lid [[thread_index_in_threadgroup]], uint size [[threads_per_threadgroup]]) {
    threadgroup atomic_uint h[64];
    for (uint b = lid; b < nbins; b += size) atomic_store_explicit(&h[b], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint i = gid; i < n; i += grid) atomic_fetch_add_explicit(&h[x[i] % nbins], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint b = lid; b < nbins; b += size)
        atomic_fetch_add_explicit(&hist[b], atomic_load_explicit(&h[b], memory_order_relaxed), memory_order_relaxed);
}

// Nested strided loops with a per-row inner step, through a helper function
// that a LOOP kernel below uses too.
float row_sum(device const float* m, uint r, uint cols) {
    float s = 0.0f;
    for (uint c = r % 3; c < cols; c += 3 + r % 2) s += m[r * cols + c];
    return s;
}
kernel void gs_nested(device const float* m [[buffer(0)]], device float* rows_out [[buffer(1)]],
                      device float* lane_out [[buffer(2)]], constant uint& rows [[buffer(3)]],
                      constant uint& cols [[buffer(4)]],
                      uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float total = 0.0f;
    for (uint r = gid; r < rows; r += grid) {
        float s = row_sum(m, r, cols);
        rows_out[r] = s;
        total += s;
    }
    lane_out[gid] = simd_sum(total);
}
kernel void loop_rows(device const float* m [[buffer(0)]], device float* rows_out [[buffer(1)]],
                      constant uint& cols [[buffer(2)]], uint r [[thread_position_in_grid]]) {
    rows_out[r] = row_sum(m, r, cols);
}

// A strided loop whose body meets at a SIMD function and a barrier (no yield
// point: the lanes meet anyway) after one that yields; every lane has the same
// trip count here, as MSL requires for the SIMD call.
kernel void gs_meet(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    constant uint& steps [[buffer(2)]],
                    uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                    uint lid [[thread_index_in_threadgroup]], uint size [[threads_per_threadgroup]]) {
    threadgroup float stage[1024];
    float own = 0.0f;
    for (uint i = gid; i < steps * grid; i += grid) own += x[i];
    float shared = 0.0f;
    for (uint i = gid; i < steps * grid; i += grid) {
        stage[lid] = x[i];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        shared += simd_sum(stage[size - 1 - lid]);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    out[2 * gid] = own;
    out[2 * gid + 1] = shared;
}

// Strided loops where a rewrite could go wrong: evaluated at compile time,
// in a lambda, as the bodies of if / else without braces, under a case label,
// with break and continue.
constexpr uint strided_sum(uint n, uint step) {
    uint a = 0;
    for (uint i = 0; i < n; i += step) a += i;
    return a;
}
static_assert(strided_sum(100, 7) == 735, "evaluated by the compiler");
kernel void gs_forms(device const uint* x [[buffer(0)]], device uint* out [[buffer(1)]],
                     constant uint& n [[buffer(2)]], uint gid [[thread_position_in_grid]],
                     uint grid [[threads_per_grid]]) {
    constexpr uint folded = strided_sum(50, 3);
    auto walk = [&](uint from) { uint a = 0; for (uint i = from; i < n; i += grid) a += x[i]; return a; };
    uint a = walk(gid), b = 0, c = 0;
    if (gid % 2) for (uint i = gid; i < n; i += grid) b += x[i];
    else for (uint i = gid; i < n; i += grid) b += 2 * x[i];
    switch (gid % 3) {
    case 0:
        for (uint i = gid; i < n; i += grid) {
            if (x[i] % 5 == 0) continue;
            if (x[i] % 7 == 0) break;
            c += x[i];
        }
        break;
    default:
        c = strided_sum(n, grid);
    }
    out[gid] = simd_sum(1u) * 0 + a + 3 * b + 5 * c + folded;
}

// Logs which thread runs each iteration (the CPU backend's schedule).
kernel void gs_order(device atomic_uint* counter [[buffer(0)]], device uint* log [[buffer(1)]],
                     constant uint& iters [[buffer(2)]],
                     uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    for (uint i = gid; i < iters * grid; i += grid)
        log[atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed)] = gid;
    log[iters * grid + gid] = simd_sum(1u);
}
"""

YIELD_EVERY = [None, 1, 3, 8]  # None: the default build (SIMD lockstep where the kernel allows); else fibers
SHAPES = [(1, 1), (33, 32), (100, 64), (1000, 256), (2048, 1024), (40, 40)]  # (grid, threadgroup)


@pytest.fixture(scope="module", params=YIELD_EVERY, ids=lambda k: "default" if k is None else "every%d" % k)
def ylib(dev, request):
    macros = None if request.param is None else {"PM_YIELD_EVERY": "%du" % request.param, "PM_NO_LOCKSTEP": None}
    lib = pm.compile(SRC, macros=macros)
    lib.pm_yield_id = "default" if request.param is None else "every%d" % request.param
    return lib


def _ints(rng, n, lo=-100, hi=100):
    return rng.integers(lo, hi, size=n).astype(np.float32)


def _lanes(grid, tg):
    """Lists of grid positions forming each simdgroup of a 1-D dispatchThreads(grid, tg)."""
    out = []
    for start in range(0, grid, tg):
        size = min(tg, grid - start)
        out += [list(range(start + s, start + min(s + 32, size))) for s in range(0, size, 32)]
    return out


@pytest.mark.parametrize("grid,tg", SHAPES)
@pytest.mark.parametrize("n", [0, 1, 1000, 50000])
def test_grid_stride_sum(ylib, grid, tg, n):
    x = _ints(np.random.default_rng(n + grid), n)
    groups = -(-grid // tg)
    partials = np.full(groups, np.nan, np.float32)
    ylib.gs_sum(x, partials, np.uint32(n), groups=groups, threadgroup=tg)
    total_grid = groups * tg
    expected = [sum(x[t::total_grid].sum(dtype=np.float64) for t in range(g * tg, (g + 1) * tg))
                for g in range(groups)]
    np.testing.assert_array_equal(partials, np.array(expected, np.float32))


@pytest.mark.parametrize("grid,tg", SHAPES)
@pytest.mark.parametrize("n", [1, 777, 20000])
def test_running_sums_keep_each_threads_order(ylib, grid, tg, n):
    x = _ints(np.random.default_rng(n * 3 + tg), n)
    run = np.full(n, np.nan, np.float32)
    scan = np.full(grid, np.nan, np.float32)
    ylib.gs_running(x, run, scan, np.uint32(n), grid=grid, threadgroup=tg)
    expected_run = np.empty(n, np.float32)
    totals = np.zeros(grid)
    for t in range(min(grid, n)):
        expected_run[t::grid] = np.cumsum(x[t::grid], dtype=np.float64)
        totals[t] = x[t::grid].sum(dtype=np.float64)
    np.testing.assert_array_equal(run, expected_run)
    for lanes in _lanes(grid, tg):
        np.testing.assert_array_equal(scan[lanes], np.cumsum(totals[lanes]).astype(np.float32))


@pytest.mark.parametrize("grid,tg", SHAPES)
def test_data_dependent_trip_counts_and_early_returns(ylib, grid, tg):
    rng = np.random.default_rng(grid * 7 + tg)
    n = 40 * grid
    x = _ints(rng, n)
    limit = rng.integers(0, n + 1, size=grid).astype(np.uint32)
    limit[rng.random(grid) < 0.2] = 0xFFFFFFFF  # these lanes return at once
    limit[rng.random(grid) < 0.1] = 0           # these never enter the loop
    acc_out = np.full(grid, np.nan, np.float32)
    sum_out = np.full(grid, np.nan, np.float32)
    ylib.gs_ragged(limit, x, acc_out, sum_out, grid=grid, threadgroup=tg)
    acc = np.full(grid, np.nan)
    finished = np.zeros(grid, bool)
    for t in range(grid):
        if limit[t] == 0xFFFFFFFF:
            continue
        a = 0.0
        for i in range(t, limit[t], grid):
            if x[i] >= 95:
                a = -a
                break
            a += x[i]
        else:
            finished[t] = True
        acc[t] = a
    ran = limit != 0xFFFFFFFF
    np.testing.assert_array_equal(acc_out[ran], acc[ran].astype(np.float32))
    assert np.isnan(acc_out[~ran]).all()
    for lanes in _lanes(grid, tg):
        active = [t for t in lanes if finished[t]]
        expected = acc[active].sum()
        np.testing.assert_array_equal(sum_out[active], np.full(len(active), expected, np.float32))
        assert np.isnan(sum_out[[t for t in lanes if not finished[t]]]).all()


@pytest.mark.parametrize("grid,tg", SHAPES)
@pytest.mark.parametrize("nbins", [1, 7, 64])
def test_grid_stride_histogram_with_atomics(ylib, grid, tg, nbins):
    n = 30011
    x = np.random.default_rng(nbins + grid).integers(0, 1 << 20, size=n).astype(np.uint32)
    hist = np.zeros(nbins, np.uint32)
    ylib.gs_hist(x, hist, np.uint32(n), np.uint32(nbins), grid=grid, threadgroup=tg)
    np.testing.assert_array_equal(hist, np.bincount(x % nbins, minlength=nbins))


@pytest.mark.parametrize("grid,tg", SHAPES)
def test_nested_strided_loops(ylib, grid, tg):
    rows, cols = 157, 301
    m = _ints(np.random.default_rng(grid + tg), rows * cols).reshape(rows, cols)
    rows_out = np.full(rows, np.nan, np.float32)
    lane_out = np.full(grid, np.nan, np.float32)
    ylib.gs_nested(m, rows_out, lane_out, np.uint32(rows), np.uint32(cols), grid=grid, threadgroup=tg)
    expected_rows = np.array([m[r, r % 3::3 + r % 2].sum(dtype=np.float64) for r in range(rows)], np.float32)
    np.testing.assert_array_equal(rows_out, expected_rows)
    totals = np.array([expected_rows[t::grid].sum(dtype=np.float64) for t in range(grid)])
    for lanes in _lanes(grid, tg):
        np.testing.assert_array_equal(lane_out[lanes], np.full(len(lanes), totals[lanes].sum(), np.float32))
    # the same helper in a kernel whose threads run as a plain loop
    again = np.full(rows, np.nan, np.float32)
    ylib.loop_rows(m, again, np.uint32(cols), grid=rows, threadgroup=32)
    np.testing.assert_array_equal(again, expected_rows)


@pytest.mark.parametrize("grid,tg", SHAPES)
def test_rewritten_loop_forms(ylib, grid, tg):
    n = 5000
    x = np.random.default_rng(grid).integers(0, 100, size=n).astype(np.uint32)
    out = np.zeros(grid, np.uint32)
    ylib.gs_forms(x, out, np.uint32(n), grid=grid, threadgroup=tg)
    folded = sum(range(0, 50, 3))
    expected = []
    for t in range(grid):
        seq = [int(v) for v in x[t::grid]]
        a = sum(seq)
        b = sum(seq) if t % 2 else 2 * sum(seq)
        if t % 3 == 0:
            c = 0
            for v in seq:
                if v % 5 == 0:
                    continue
                if v % 7 == 0:
                    break
                c += v
        else:
            c = sum(range(0, n, grid))
        expected.append((a + 3 * b + 5 * c + folded) & 0xFFFFFFFF)
    np.testing.assert_array_equal(out, np.array(expected, np.uint32))


@pytest.mark.parametrize("tg", [64, 40, 1])
@pytest.mark.parametrize("iters", [1, 6, 10])
def test_cpu_lanes_of_a_simdgroup_take_turns(ylib, tg, iters):
    # The mechanism itself (the order is the CPU backend's, a GPU's differs).
    # Fibers: in one threadgroup, each simdgroup's lanes take turns of
    # PM_YIELD_EVERY iterations, in lane order, simdgroup after simdgroup.
    # SIMD lockstep (the default build of this kernel): the whole group takes
    # each step of the grid-stride loop together, threads in order.
    if pm.device().backend != "cpu":
        pytest.skip("the CPU backend's schedule")
    counter = np.zeros(1, np.uint32)
    log = np.full(iters * tg + tg, 0xFFFFFFFF, np.uint32)
    ylib.gs_order(counter, log, np.uint32(iters), groups=1, threadgroup=tg)
    if ylib.pm_yield_id == "default":
        expected = [lane for _ in range(iters) for lane in range(tg)]
    else:
        every = int(ylib.pm_yield_id[len("every"):])
        expected = []
        for lanes in _lanes(tg, tg):
            for done in range(0, iters, every):
                for lane in lanes:
                    expected += [lane] * min(every, iters - done)
    assert log[:iters * tg].tolist() == expected
    assert log[iters * tg:].tolist() == [len(lanes) for lanes in _lanes(tg, tg) for _ in lanes]


@pytest.mark.parametrize("grid,tg", [(32, 32), (100, 64), (1000, 256), (2048, 1024)])
def test_loops_meeting_at_simd_functions_and_barriers(ylib, grid, tg):
    steps = 5
    groups = -(-grid // tg)
    total = groups * tg  # dispatchThreadgroups: every group whole
    x = _ints(np.random.default_rng(grid), steps * total)
    out = np.full(2 * total, np.nan, np.float32)
    ylib.gs_meet(x, out, np.uint32(steps), groups=groups, threadgroup=tg)
    out = out.reshape(total, 2)
    xs = x.reshape(steps, total)
    np.testing.assert_array_equal(out[:, 0], xs.sum(axis=0, dtype=np.float64).astype(np.float32))
    expected = np.zeros(total)
    for t in range(total):
        g, lid = divmod(t, tg)
        sg = lid // 32
        # lane l of simdgroup sg reads stage[size - 1 - l]: the threads tg-1-l of the group
        sources = [g * tg + tg - 1 - (sg * 32 + l) for l in range(min(32, tg - sg * 32))]
        expected[t] = xs[:, sources].sum(dtype=np.float64)
    np.testing.assert_array_equal(out[:, 1], expected.astype(np.float32))
