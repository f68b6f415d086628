"""GPU-style kernels with SIMD-group functions and barriers, against NumPy.

The kernel shapes a CPU backend may run SIMD-group by SIMD-group in lockstep
(all threads of a threadgroup statement by statement, grid-stride loops
interchanged so that neighbouring threads read neighbouring addresses) instead
of one fiber per thread: grid-stride reductions ending in simd_sum and a
threadgroup-memory second level, GPU-style argmax, grid-stride loops with
`continue`, other starts and steps, nested loops and block-stride loops,
SIMD-group functions in every statement form, on some lanes only, in both
branches of a simdgroup-uniform if / else, two-phase threadgroup memory,
early returns, local arrays and vectors across a SIMD function, and 2-D
threadgroups. Whatever the execution mode, every result is compared with a
NumPy model of MSL's semantics (MSL spec, "SIMD-group functions"): SIMD
reductions, scans and votes are over the *active* lanes (lanes that exist,
have not returned and take the branch); a shuffle reading an inactive lane is
undefined, so those lanes are not compared; shuffle_down leaves lanes without a
source lane unchanged.

Launch shapes: threadgroups of 32, 64, 96 (three whole simdgroups), 100 (a
partial last simdgroup), 256 and 1024 threads, several group counts, both
dispatchThreadgroups (`groups=`, every group whole) and dispatchThreads
(`grid=`, a partial last threadgroup). Sums use integer-valued floats, exact
in any order, so every comparison is exact. gs_sum, sum4 and argmax are
scripts/bench_gpu_patterns.py's own kernels (tests/python/msl/kernels/), so what it times is tested here.

The source is compiled once per module; the CPU backend caches it on disk.
"""

import numpy as np
import pytest

import msl_kernels
import pymetal as pm
from msl_kernels import compile_mode


# The benchmark's kernels (scripts/bench_gpu_patterns.py times the same files): what it times is tested here.
SRC = ("#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;\n"
       + msl_kernels.source("grid_stride_sum4_argmax.metal") + msl_kernels.source("grid_stride_sum.metal")) + r"""
// ---- 1. gs_sum, sum4 (grid-stride sums) and the float argmax: the benchmark's, above

// ---- 2. argmax, the GPU way, over integers ------------------------------------

// The benchmark's float argmax (gs_sum, sum4 and argmax are
// scripts/bench_gpu_patterns.py's) for integer types, whose lowest value is the
// "nothing yet" marker: the data never hold it.
template <typename T>
kernel void argmax_t(device const T* x [[buffer(0)]], device T* pval [[buffer(1)]],
                     device uint* pidx [[buffer(2)]], constant uint& n [[buffer(3)]],
                     uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                     uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                     uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup T sval[32];
    threadgroup uint sidx[32];
    const T lowest = numeric_limits<T>::lowest();
    T best = lowest;
    uint bi = 0xFFFFFFFFu;
    for (uint i = gid; i < n; i += grid) {
        T v = x[i];
        if (v > best) { best = v; bi = i; }
    }
    T m = simd_max(best);
    uint mi = simd_min(best == m ? bi : 0xFFFFFFFFu);
    if (lane == 0) { sval[sg] = m; sidx[sg] = mi; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        T v = lane < sgs ? sval[lane] : lowest;
        uint j = lane < sgs ? sidx[lane] : 0xFFFFFFFFu;
        T m2 = simd_max(v);
        uint j2 = simd_min(v == m2 ? j : 0xFFFFFFFFu);
        if (lane == 0) { pval[group] = m2; pidx[group] = j2; }
    }
}
template [[host_name("argmax_int")]] [[kernel]] decltype(argmax_t<int>) argmax_t<int>;
template [[host_name("argmax_short")]] [[kernel]] decltype(argmax_t<short>) argmax_t<short>;

// ---- 3. loop forms ----------------------------------------------------------

// The body stores to a per-lane output under an if and continues; other
// elements go to y. The SIMD sum afterwards is over every lane.
kernel void gs_continue(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                        device uint* lastneg [[buffer(2)]], device float* sums [[buffer(3)]],
                        constant uint& n [[buffer(4)]],
                        uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    uint negs = 0;
    for (uint i = gid; i < n; i += grid) {
        float v = x[i];
        if (v < 0.0f) {
            lastneg[gid] = i;
            negs += 1;
            continue;
        }
        y[i] = v * 2.0f;
        acc += v;
    }
    sums[3 * gid] = acc;
    sums[3 * gid + 1] = simd_sum(acc);
    sums[3 * gid + 2] = float(negs);
}

// Starts at gid * 2, steps grid * 2: swaps the pairs (x[2p], x[2p + 1]).
kernel void gs_pairs(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                     device float* out [[buffer(2)]], constant uint& n [[buffer(3)]],
                     uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    for (uint i = gid * 2; i + 1 < n; i += grid * 2) {
        y[i] = x[i + 1];
        y[i + 1] = x[i];
        acc += x[i] - 2.0f * x[i + 1];
    }
    out[2 * gid] = acc;
    out[2 * gid + 1] = simd_prefix_inclusive_sum(acc);
}

// In place: y = a * x + y over a grid-stride loop (each element read and
// written by one thread), each thread's running sum of the new values in its
// own order, then the simdgroup's sum of them.
kernel void gs_axpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                    device float* run [[buffer(2)]], device float* sums [[buffer(3)]],
                    constant float& a [[buffer(4)]], constant uint& n [[buffer(5)]],
                    uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float acc = 0.0f;
    for (uint i = gid; i < n; i += grid) {
        y[i] = a * x[i] + y[i];
        acc += y[i];
        run[i] = acc;
    }
    sums[gid] = simd_sum(acc);
}

// A SIMD function inside a grid-stride loop: every lane makes the same number
// of steps (MSL requires it), so all lanes take part at every step.
kernel void gs_simd_in_loop(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                            constant uint& steps [[buffer(2)]],
                            uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float total = 0.0f, top = -INFINITY;
    for (uint i = gid; i < steps * grid; i += grid) {
        total += simd_sum(x[i]);
        top = max(top, simd_max(x[i]) + float(i / grid));
    }
    out[2 * gid] = total;
    out[2 * gid + 1] = top;
}

// Rows in a grid-stride loop bounded by a constant uint& parameter, each row
// summed by an ordinary inner loop; the simdgroup's largest row sum.
kernel void gs_rows(device const float* m [[buffer(0)]], device float* rowsum [[buffer(1)]],
                    device float* best_out [[buffer(2)]], constant uint& rows [[buffer(3)]],
                    constant uint& cols [[buffer(4)]],
                    uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]]) {
    float best = -INFINITY;
    for (uint r = gid; r < rows; r += grid) {
        float s = 0.0f;
        for (uint c = 0; c < cols; ++c) s += m[r * cols + c];
        rowsum[r] = s;
        best = max(best, s);
    }
    best_out[gid] = simd_max(best);
}

// One row of m elements per threadgroup, walked by block-stride loops
// (i = tid; i < m; i += tpg): the row's maximum (simd_max, threadgroup memory,
// every thread reads all the simdgroups' results), y = row - max, and the sum
// of y (simd_sum, threadgroup memory, thread 0).
kernel void block_rows(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                       device float* stats [[buffer(2)]], constant uint& m [[buffer(3)]],
                       uint tid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
                       uint group [[threadgroup_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]], uint sgs [[simdgroups_per_threadgroup]]) {
    threadgroup float smax[32];
    threadgroup float ssum[32];
    device const float* row = x + group * m;
    float mx = -INFINITY;
    for (uint i = tid; i < m; i += tpg) mx = max(mx, row[i]);
    mx = simd_max(mx);
    if (lane == 0) smax[sg] = mx;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    mx = smax[0];
    for (uint k = 1; k < sgs; ++k) mx = max(mx, smax[k]);
    float s = 0.0f;
    for (uint i = tid; i < m; i += tpg) {
        float d = row[i] - mx;
        y[group * m + i] = d;
        s += d;
    }
    s = simd_sum(s);
    if (lane == 0) ssum[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        float t = 0.0f;
        for (uint k = 0; k < sgs; ++k) t += ssum[k];
        stats[2 * group] = mx;
        stats[2 * group + 1] = t;
    }
}

// ---- 4. statement forms of SIMD-group functions -----------------------------

// Every lane takes part in every call; f has 10 rows, u 3 rows of n.
kernel void forms(device const float* x [[buffer(0)]], device float* f [[buffer(1)]],
                  device uint* u [[buffer(2)]], constant uint& n [[buffer(3)]],
                  uint gid [[thread_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]]) {
    float v = x[gid];
    float s = simd_sum(v);
    float m;
    m = simd_max(v);
    float acc = 1.0f;
    acc += simd_min(v);
    f[0 * n + gid] = s;
    f[1 * n + gid] = m;
    f[2 * n + gid] = acc;
    f[3 * n + gid] = simd_prefix_exclusive_sum(v);
    f[4 * n + gid] = simd_shuffle_down(v, 1);
    f[5 * n + gid] = simd_shuffle_xor(v, 16);
    f[6 * n + gid] = simd_broadcast(v, 3);
    f[7 * n + gid] = quad_sum(v);
    float alt;
    if (sg % 2 == 0) {
        alt = simd_max(v);
    } else {
        alt = simd_prefix_inclusive_sum(v);
    }
    f[8 * n + gid] = alt;
    f[9 * n + gid] = simd_sum(v * v) + simd_shuffle_down(s, 2);
    uint b = (uint)(ulong)simd_ballot(v > 0.0f);
    bool a = simd_all(v > -90.0f);
    bool any = simd_any(v > 90.0f);
    u[0 * n + gid] = b;
    u[1 * n + gid] = a ? 1u : 0u;
    u[2 * n + gid] = any ? 1u : 0u;
}

// SIMD functions on some lanes only (the others finish): lanes below `keep`,
// then lanes with a positive value. Rows of n: f 3, u 2.
kernel void some_lanes(device const float* x [[buffer(0)]], device float* f [[buffer(1)]],
                       device uint* u [[buffer(2)]], constant uint& n [[buffer(3)]],
                       constant uint& keep [[buffer(4)]],
                       uint gid [[thread_position_in_grid]], ushort lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    if (lane < keep) {
        float s = simd_sum(v);
        f[0 * n + gid] = s;
        f[1 * n + gid] = simd_prefix_exclusive_sum(v) + simd_max(v);
        u[0 * n + gid] = (uint)(ulong)simd_ballot(true);
    }
}

kernel void positive_lanes(device const float* x [[buffer(0)]], device float* f [[buffer(1)]],
                           device uint* u [[buffer(2)]], constant uint& n [[buffer(3)]],
                           uint gid [[thread_position_in_grid]]) {
    float v = x[gid];
    if (v > 0.0f) {
        f[gid] = simd_sum(v);
        f[n + gid] = simd_prefix_exclusive_sum(v);
        u[gid] = (uint)(ulong)simd_active_threads_mask();
    }
}

// ---- 5. two phases of threadgroup memory ------------------------------------

// Reverse within the threadgroup, then (after a barrier that orders the reads
// before the overwrite) a rotation by one of the doubled values.
kernel void tg_reverse(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                       device float* z [[buffer(2)]],
                       uint gid [[thread_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                       uint tpg [[threads_per_threadgroup]]) {
    threadgroup float shared[1024];
    shared[tid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = shared[tpg - 1 - tid];
    y[gid] = r;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    shared[tid] = r * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    z[gid] = shared[(tid + 1) % tpg];
}

// ---- 6. early returns ---------------------------------------------------------

// Threads past n return first: the SIMD functions are over the rest.
kernel void early_return(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         device uint* ballot [[buffer(2)]], constant uint& n [[buffer(3)]],
                         uint gid [[thread_position_in_grid]]) {
    if (gid >= n) return;
    float v = x[gid];
    float s = simd_sum(v);
    out[3 * gid] = s;
    out[3 * gid + 1] = simd_prefix_exclusive_sum(v);
    out[3 * gid + 2] = simd_min(v);
    ballot[gid] = (uint)(ulong)simd_ballot(true);
}

// Threads whose value is negative return first.
kernel void early_return_data(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                              uint gid [[thread_position_in_grid]]) {
    float v = x[gid];
    if (v < 0.0f) return;
    float s = simd_sum(v);
    out[2 * gid] = s;
    out[2 * gid + 1] = simd_max(v) - simd_broadcast_first(v);
}

// ---- 7. local arrays and vectors across a SIMD function -----------------------

kernel void local_arrays(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& n [[buffer(2)]],
                         uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                         uint lane [[thread_index_in_simdgroup]]) {
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint i = gid; i < n; i += grid) acc[i & 3] += x[i];
    float4 v = float4(acc[0], acc[1], acc[2], acc[3]);
    float4 s = simd_sum(v);
    float4 p = simd_prefix_exclusive_sum(v);
    acc[lane & 3] += s.w;  // written at a lane-dependent index after the SIMD call
    v.y -= p.x;
    for (uint k = 0; k < 4; ++k) {
        out[16 * gid + k] = s[k];
        out[16 * gid + 4 + k] = p[k];
        out[16 * gid + 8 + k] = acc[k];
        out[16 * gid + 12 + k] = v[k];
    }
}

// ---- 8. 2-D threadgroups --------------------------------------------------------

// Lanes follow the linear order in the threadgroup (x fastest); the tile in
// threadgroup memory is read back mirrored (the last thread's value first).
kernel void tile2d(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                   device uint* idx [[buffer(2)]],
                   uint2 pos [[thread_position_in_grid]], uint2 grid [[threads_per_grid]],
                   uint2 tid [[thread_position_in_threadgroup]], uint2 tpg [[threads_per_threadgroup]],
                   uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float tile[1024];
    uint i = pos.y * grid.x + pos.x;
    float v = x[i];
    out[4 * i] = simd_sum(v);
    out[4 * i + 1] = simd_prefix_exclusive_sum(v);
    tile[tid.y * tpg.x + tid.x] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[4 * i + 2] = tile[(tpg.y - 1 - tid.y) * tpg.x + (tpg.x - 1 - tid.x)];
    out[4 * i + 3] = simd_broadcast_first(v);
    idx[2 * i] = lid;
    idx[2 * i + 1] = sg * 32 + lane;
}
"""


# Each test runs twice: as the CPU backend compiles these kernels by default
# (SIMD lockstep wherever the front end can rewrite a kernel: Lockstep.swift)
# and with PM_NO_LOCKSTEP (every kernel one fiber per thread).
@pytest.fixture(scope="module", params=["default", "fibers"])
def llib(dev, request):
    return compile_mode(SRC, request.param)


def _ints(seed, n, lo=-100, hi=100):
    # integer-valued float32: every sum below is exact whatever the order
    return np.random.default_rng(seed).integers(lo, hi, size=n).astype(np.float32)


# ---------------------------------------------------------------------------
# A NumPy model of the SIMD-group functions
# ---------------------------------------------------------------------------

class Lanes:
    """The simdgroups of a dispatch. Per thread (in the order of the arrays the
    kernel indexes by thread): `key`, its simdgroup (or quad) id, and `lane`."""

    def __init__(self, key, lane):
        self.key = np.asarray(key, np.int64)
        self.lane = np.asarray(lane, np.int64)
        self.nkeys = int(self.key.max()) + 1 if self.key.size else 0
        # table[key, lane]: the thread at that lane of that simdgroup, -1 if none
        self.table = np.full((self.nkeys, 32), -1, np.int64)
        self.table[self.key, self.lane] = np.arange(self.key.size)

    def quads(self):
        return Lanes(self.key * 8 + self.lane // 4, self.lane % 4)

    def reduce(self, ufunc, values, active, identity):
        """ufunc over the active lanes of each simdgroup, per thread (float64 / int64)."""
        values = np.asarray(values)
        out = np.full(self.nkeys, identity, np.float64 if values.dtype.kind == "f" else np.int64)
        ufunc.at(out, self.key[active], values[active])
        return out[self.key]

    def exclusive_sum(self, values, active):
        """Sum over the active lanes below each lane of its simdgroup."""
        order = np.lexsort((self.lane, self.key))
        w = np.where(active, values, 0).astype(np.float64)[order]
        c = np.cumsum(w) - w
        k = self.key[order]
        first = np.searchsorted(k, k)  # position of each simdgroup's first lane in `order`
        out = np.empty(len(w))
        out[order] = c - c[first]
        return out

    def ballot(self, pred, active):
        """The mask of active lanes whose predicate holds, per thread."""
        bits = np.where(pred & active, np.left_shift(1, self.lane), 0)
        return self.reduce(np.bitwise_or, bits, active, 0)

    def source(self, src_lane, active):
        """(thread index, defined) of lane src_lane (per thread) of the same simdgroup."""
        src = self.table[self.key, np.clip(src_lane, 0, 31)]
        ok = (src >= 0) & (src_lane >= 0) & (src_lane < 32)
        ok &= active[np.where(ok, src, 0)]
        return np.where(ok, src, np.arange(self.key.size)), ok


def _lanes_1d(nthreads, tg):
    """Lanes of a 1-D dispatch of nthreads (threadgroups of tg, the last one possibly partial)."""
    t = np.arange(nthreads)
    lid = t % tg
    return Lanes((t // tg) * ((tg + 31) // 32) + lid // 32, lid % 32)


def _lanes_2d(width, height, tg):
    """Lanes of a 2-D dispatchThreads(width, height), threadgroup tg = (tx, ty), per
    thread in row-major order (x fastest); edge threadgroups may be partial."""
    tx, ty = tg
    y, x = np.divmod(np.arange(width * height), width)
    gx, gy = x // tx, y // ty
    size_x = np.minimum(tx, width - gx * tx)  # the edge groups' actual width
    lid = (x % tx) + (y % ty) * size_x
    group = gy * (-(-width // tx)) + gx
    return Lanes(group * ((tx * ty + 31) // 32) + lid // 32, lid % 32), lid


# ===========================================================================
# 1. Grid-stride sums
# ===========================================================================

# (groups, threads per group): 96 is three whole simdgroups, 100 ends in a partial one
GROUP_SHAPES = [(1, 32), (3, 64), (2, 96), (5, 100), (4, 256), (2, 1024), (13, 32), (40, 256), (7, 1)]


@pytest.mark.parametrize("groups,tg", GROUP_SHAPES)
@pytest.mark.parametrize("n", [0, 1, 31, 1000, 4099, 100003])
def test_grid_stride_sum1(llib, groups, tg, n):
    x = _ints(n * 7 + tg, n)
    partials = np.full(groups, np.nan, np.float32)
    llib.gs_sum(x, partials, np.uint32(n), groups=groups, threadgroup=tg)
    owner = (np.arange(n) % (groups * tg)) // tg  # thread t reads t, t + grid, ...
    expected = np.bincount(owner, weights=x, minlength=groups)
    np.testing.assert_array_equal(partials, expected.astype(np.float32))


@pytest.mark.parametrize("grid,tg", [(1, 32), (33, 32), (1000, 256), (2500, 1024), (130, 100), (96, 96)])
@pytest.mark.parametrize("n", [0, 5, 100003])
def test_grid_stride_sum1_partial_threadgroup(llib, grid, tg, n):
    # dispatchThreads: the last threadgroup (and its last simdgroup) may be partial
    x = _ints(n + grid, n)
    groups = -(-grid // tg)
    partials = np.full(groups, np.nan, np.float32)
    llib.gs_sum(x, partials, np.uint32(n), grid=grid, threadgroup=tg)
    expected = np.bincount((np.arange(n) % grid) // tg, weights=x, minlength=groups)
    np.testing.assert_array_equal(partials, expected.astype(np.float32))


@pytest.mark.parametrize("groups,tg", GROUP_SHAPES)
@pytest.mark.parametrize("n4", [0, 4, 1000, 25000])
def test_grid_stride_sum4(llib, groups, tg, n4):
    x = _ints(n4 * 3 + tg, 4 * n4)
    partials = np.full(groups, np.nan, np.float32)
    llib.sum4(x, partials, np.uint32(n4), groups=groups, threadgroup=tg)
    owner = ((np.arange(4 * n4) // 16) % (groups * tg)) // tg  # 16 floats per thread and step
    expected = np.bincount(owner, weights=x, minlength=groups)
    np.testing.assert_array_equal(partials, expected.astype(np.float32))


# ===========================================================================
# 2. GPU-style argmax
# ===========================================================================

def _argmax_partials(x, groups, tg, lowest):
    """(value, first index) per group of the elements its threads read; (lowest, ~0) if none."""
    owner = (np.arange(x.size) % (groups * tg)) // tg
    vals = np.full(groups, lowest, x.dtype)
    idx = np.full(groups, 0xFFFFFFFF, np.uint32)
    for g in range(groups):
        where = np.nonzero(owner == g)[0]
        if where.size:
            j = where[np.argmax(x[where])]  # np.argmax: the first of equal maxima
            vals[g], idx[g] = x[j], j
    return vals, idx


ARGMAX_SHAPES = [(1, 32), (3, 96), (4, 100), (2, 256), (2, 1024), (16, 64)]


@pytest.mark.parametrize("groups,tg", ARGMAX_SHAPES)
@pytest.mark.parametrize("n", [0, 1, 2, 33, 5000, 100003])
@pytest.mark.parametrize("kind", ["ties", "distinct"])
def test_argmax_float(llib, groups, tg, n, kind):
    rng = np.random.default_rng(n * 5 + tg)
    if kind == "ties":  # the maximum many times over, in many threads and groups
        x = rng.integers(-20, 20, size=n).astype(np.float32)
        x[rng.integers(0, max(n, 1), size=min(n, 3))] = 19.0
    else:
        x = rng.standard_normal(n).astype(np.float32)
    pval = np.full(groups, np.nan, np.float32)
    pidx = np.zeros(groups, np.uint32)
    llib.argmax(x, pval, pidx, np.uint32(n), groups=groups, threadgroup=tg)
    ev, ei = _argmax_partials(x, groups, tg, -np.inf)
    np.testing.assert_array_equal(pval, ev)
    np.testing.assert_array_equal(pidx, ei)
    if n:  # the host's last step: the first index of the largest partial
        assert pidx[pval == pval.max()].min() == np.argmax(x)


@pytest.mark.parametrize("groups,tg", ARGMAX_SHAPES)
@pytest.mark.parametrize("n", [1, 777, 100003])
@pytest.mark.parametrize("dtype", [np.int32, np.int16])
def test_argmax_integers(llib, groups, tg, n, dtype):
    rng = np.random.default_rng(n + tg)
    info = np.iinfo(dtype)
    step = info.max // 6
    x = (rng.integers(-5, 5, size=n) * step).astype(dtype)  # ties, values near both ends
    x[rng.random(n) < 0.01] = info.max
    pval = np.zeros(groups, dtype)
    pidx = np.zeros(groups, np.uint32)
    kernel = llib.argmax_int if dtype == np.int32 else llib.argmax_short
    kernel(x, pval, pidx, np.uint32(n), groups=groups, threadgroup=tg)
    ev, ei = _argmax_partials(x, groups, tg, info.min)
    np.testing.assert_array_equal(pval, ev)
    np.testing.assert_array_equal(pidx, ei)
    assert pidx[pval == pval.max()].min() == np.argmax(x)


# ===========================================================================
# 3. Loop forms
# ===========================================================================

LOOP_SHAPES = [(1, 32), (3, 96), (2, 100), (4, 256), (1, 1024)]


@pytest.mark.parametrize("groups,tg", LOOP_SHAPES)
@pytest.mark.parametrize("n", [0, 1, 999, 100003])
def test_grid_stride_continue(llib, groups, tg, n):
    total = groups * tg
    x = _ints(n * 11 + tg, n)
    y = np.full(n, np.nan, np.float32)
    lastneg = np.full(total, 0xFFFFFFFF, np.uint32)
    sums = np.full(3 * total, np.nan, np.float32)
    llib.gs_continue(x, y, lastneg, sums, np.uint32(n), groups=groups, threadgroup=tg)
    neg = x < 0
    np.testing.assert_array_equal(y[~neg], 2 * x[~neg])
    assert np.isnan(y[neg]).all()  # skipped by `continue`
    thread = np.arange(n) % total
    expected_last = np.full(total, -1, np.int64)
    np.maximum.at(expected_last, thread[neg], np.nonzero(neg)[0])
    np.testing.assert_array_equal(lastneg, np.where(expected_last < 0, 0xFFFFFFFF, expected_last).astype(np.uint32))
    acc = np.bincount(thread, weights=np.where(neg, 0, x), minlength=total)
    sums = sums.reshape(total, 3)
    np.testing.assert_array_equal(sums[:, 0], acc.astype(np.float32))
    lanes = _lanes_1d(total, tg)
    np.testing.assert_array_equal(sums[:, 1], lanes.reduce(np.add, acc, np.ones(total, bool), 0).astype(np.float32))
    np.testing.assert_array_equal(sums[:, 2], np.bincount(thread[neg], minlength=total).astype(np.float32))


@pytest.mark.parametrize("groups,tg", LOOP_SHAPES)
@pytest.mark.parametrize("n", [0, 1, 2, 1001, 100004])
def test_grid_stride_pairs(llib, groups, tg, n):
    total = groups * tg
    x = _ints(n * 13 + tg, n)
    y = np.full(n, np.nan, np.float32)
    out = np.full(2 * total, np.nan, np.float32)
    llib.gs_pairs(x, y, out, np.uint32(n), groups=groups, threadgroup=tg)
    even = n - n % 2
    expected_y = np.full(n, np.nan, np.float32)  # an odd last element has no pair: untouched
    expected_y[0:even:2], expected_y[1:even:2] = x[1:even:2], x[0:even:2]
    np.testing.assert_array_equal(y, expected_y)
    pairs = even // 2
    acc = np.bincount(np.arange(pairs) % total, weights=x[0:even:2] - 2.0 * x[1:even:2], minlength=total)
    out = out.reshape(total, 2)
    np.testing.assert_array_equal(out[:, 0], acc.astype(np.float32))
    lanes = _lanes_1d(total, tg)
    all_lanes = np.ones(total, bool)
    np.testing.assert_array_equal(out[:, 1], (lanes.exclusive_sum(acc, all_lanes) + acc).astype(np.float32))


@pytest.mark.parametrize("groups,tg", LOOP_SHAPES)
@pytest.mark.parametrize("n", [0, 1, 999, 100003])
def test_grid_stride_axpy_in_place(llib, groups, tg, n):
    total = groups * tg
    x, y0 = _ints(n, n), _ints(n + 1, n)
    y = y0.copy()
    run = np.full(n, np.nan, np.float32)
    sums = np.full(total, np.nan, np.float32)
    llib.gs_axpy(x, y, run, sums, np.float32(3.0), np.uint32(n), groups=groups, threadgroup=tg)
    expected = 3 * x + y0
    np.testing.assert_array_equal(y, expected)
    steps = np.zeros(-(-n // total) * total)  # row k: step k of every thread
    steps[:n] = expected
    np.testing.assert_array_equal(run, np.cumsum(steps.reshape(-1, total), axis=0).ravel()[:n])
    acc = np.bincount(np.arange(n) % total, weights=expected, minlength=total).astype(np.float64)
    np.testing.assert_array_equal(sums, _lanes_1d(total, tg).reduce(np.add, acc, np.ones(total, bool), 0))


@pytest.mark.parametrize("groups,tg", LOOP_SHAPES)
@pytest.mark.parametrize("steps", [0, 1, 7])
def test_simd_functions_inside_grid_stride_loop(llib, groups, tg, steps):
    total = groups * tg
    x = _ints(steps * 1000 + tg, steps * total).reshape(steps, total)
    out = np.full((total, 2), np.nan, np.float32)
    llib.gs_simd_in_loop(x, out, np.uint32(steps), groups=groups, threadgroup=tg)
    lanes = _lanes_1d(total, tg)
    everyone = np.ones(total, bool)
    sums = [lanes.reduce(np.add, x[k], everyone, 0) for k in range(steps)]
    tops = [lanes.reduce(np.maximum, x[k], everyone, -np.inf) + k for k in range(steps)]
    np.testing.assert_array_equal(out[:, 0], np.sum(sums, axis=0) if steps else 0)
    np.testing.assert_array_equal(out[:, 1], np.max(tops, axis=0) if steps else -np.inf)


@pytest.mark.parametrize("grid,tg", [(32, 32), (200, 96), (130, 100), (1024, 1024)])
@pytest.mark.parametrize("rows,cols", [(0, 5), (1, 1), (157, 301), (3000, 7)])
def test_grid_stride_rows_with_inner_loop(llib, grid, tg, rows, cols):
    m = _ints(rows * cols + grid, rows * cols).reshape(rows, cols)
    rowsum = np.full(rows, np.nan, np.float32)
    best = np.full(grid, np.nan, np.float32)
    llib.gs_rows(m, rowsum, best, np.uint32(rows), np.uint32(cols), grid=grid, threadgroup=tg)
    expected_rows = m.sum(axis=1, dtype=np.float64)
    np.testing.assert_array_equal(rowsum, expected_rows.astype(np.float32))
    per_thread = np.full(grid, -np.inf)
    np.maximum.at(per_thread, np.arange(rows) % grid, expected_rows)
    lanes = _lanes_1d(grid, tg)
    np.testing.assert_array_equal(best, lanes.reduce(np.maximum, per_thread, np.ones(grid, bool), -np.inf))


@pytest.mark.parametrize("tg", [32, 64, 96, 100, 256, 1024])
@pytest.mark.parametrize("rows,m", [(1, 0), (3, 1), (2, 31), (5, 1000), (2, 4099), (7, 20000)])
def test_block_stride_rows(llib, tg, rows, m):
    x = _ints(rows * m + tg, rows * m).reshape(rows, m)
    y = np.full((rows, m), np.nan, np.float32)
    stats = np.full((rows, 2), np.nan, np.float32)
    llib.block_rows(x, y, stats, np.uint32(m), groups=rows, threadgroup=tg)
    mx = x.max(axis=1) if m else np.full(rows, -np.inf, np.float32)
    np.testing.assert_array_equal(y, x - mx[:, None])
    np.testing.assert_array_equal(stats[:, 0], mx)
    np.testing.assert_array_equal(stats[:, 1], (x - mx[:, None]).sum(axis=1, dtype=np.float64).astype(np.float32))


# ===========================================================================
# 4. Statement forms, some lanes, simdgroup-uniform branches
# ===========================================================================

# (threads, threadgroup) of dispatchThreads: partial threadgroups and simdgroups
FORM_SHAPES = [(1, 32), (31, 32), (100, 32), (192, 64), (288, 96), (200, 96), (250, 100), (1000, 256),
               (3000, 1024), (100003, 256), (5, 1)]


def _form_inputs(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-100, 100, size=n).astype(np.float32)
    x[(np.arange(n) // 32) % 5 == 1] = 7.0   # whole simdgroups where every vote holds
    x[(np.arange(n) // 32) % 5 == 2] = -95.0  # and where none does
    return x


@pytest.mark.parametrize("n,tg", FORM_SHAPES)
def test_statement_forms(llib, n, tg):
    x = _form_inputs(n, n + tg)
    f = np.full((10, n), np.nan, np.float32)
    u = np.full((3, n), 0xDEADBEEF, np.uint32)
    llib.forms(x, f, u, np.uint32(n), grid=n, threadgroup=tg)
    lanes = _lanes_1d(n, tg)
    active = np.ones(n, bool)
    v = x.astype(np.float64)
    s = lanes.reduce(np.add, v, active, 0)
    mx = lanes.reduce(np.maximum, v, active, -np.inf)
    np.testing.assert_array_equal(f[0], s)
    np.testing.assert_array_equal(f[1], mx)
    np.testing.assert_array_equal(f[2], 1 + lanes.reduce(np.minimum, v, active, np.inf))
    np.testing.assert_array_equal(f[3], lanes.exclusive_sum(v, active))
    for row, src_lane, own in ((4, lanes.lane + 1, lanes.lane + 1 >= 32),  # the last lane keeps its own
                               (5, lanes.lane ^ 16, False),
                               (6, np.full(n, 3), False)):
        src, ok = lanes.source(src_lane, active)
        ok |= own
        got = f[row][ok]
        want = np.where(own, x, x[src])[ok]
        np.testing.assert_array_equal(got, want, err_msg="row %d" % row)
    np.testing.assert_array_equal(f[7], lanes.quads().reduce(np.add, v, active, 0))
    sg = (np.arange(n) % tg) // 32
    alt = np.where(sg % 2 == 0, mx, lanes.exclusive_sum(v, active) + v)
    np.testing.assert_array_equal(f[8], alt)
    src, ok = lanes.source(lanes.lane + 2, active)
    shuffled = np.where(lanes.lane + 2 >= 32, s, s[src])
    ok |= lanes.lane + 2 >= 32
    np.testing.assert_array_equal(f[9][ok], (lanes.reduce(np.add, v * v, active, 0) + shuffled)[ok])
    np.testing.assert_array_equal(u[0], lanes.ballot(x > 0, active))
    np.testing.assert_array_equal(u[1], lanes.reduce(np.minimum, (x > -90).astype(np.int64), active, 1))
    np.testing.assert_array_equal(u[2], lanes.reduce(np.maximum, (x > 90).astype(np.int64), active, 0))


@pytest.mark.parametrize("n,tg", FORM_SHAPES)
@pytest.mark.parametrize("keep", [1, 16, 31])
def test_simd_functions_on_lanes_below(llib, n, tg, keep):
    x = _form_inputs(n, n * 3 + keep)
    f = np.full((3, n), np.nan, np.float32)
    u = np.full(n, 0xDEADBEEF, np.uint32)
    llib.some_lanes(x, f, u, np.uint32(n), np.uint32(keep), grid=n, threadgroup=tg)
    lanes = _lanes_1d(n, tg)
    active = lanes.lane < keep
    v = x.astype(np.float64)
    np.testing.assert_array_equal(f[0][active], lanes.reduce(np.add, v, active, 0)[active])
    want = lanes.exclusive_sum(v, active) + lanes.reduce(np.maximum, v, active, -np.inf)
    np.testing.assert_array_equal(f[1][active], want[active])
    np.testing.assert_array_equal(u[active], lanes.ballot(np.ones(n, bool), active)[active])
    assert np.isnan(f[:2, ~active]).all() and (u[~active] == 0xDEADBEEF).all()  # the other lanes write nothing


@pytest.mark.parametrize("n,tg", FORM_SHAPES)
def test_simd_functions_on_positive_lanes(llib, n, tg):
    x = _form_inputs(n, n * 7 + tg)
    f = np.full((2, n), np.nan, np.float32)
    u = np.full(n, 0xDEADBEEF, np.uint32)
    llib.positive_lanes(x, f, u, np.uint32(n), grid=n, threadgroup=tg)
    lanes = _lanes_1d(n, tg)
    active = x > 0
    v = x.astype(np.float64)
    np.testing.assert_array_equal(f[0][active], lanes.reduce(np.add, v, active, 0)[active])
    np.testing.assert_array_equal(f[1][active], lanes.exclusive_sum(v, active)[active])
    np.testing.assert_array_equal(u[active], lanes.ballot(np.ones(n, bool), active)[active])
    assert np.isnan(f[:, ~active]).all() and (u[~active] == 0xDEADBEEF).all()


# ===========================================================================
# 5. Two phases of threadgroup memory
# ===========================================================================

@pytest.mark.parametrize("tg", [32, 64, 96, 100, 256, 1024])
@pytest.mark.parametrize("n", [1, 31, 1000, 100003])
def test_threadgroup_reverse_then_rotate(llib, tg, n):
    x = _ints(n * 17 + tg, n)
    y = np.full(n, np.nan, np.float32)
    z = np.full(n, np.nan, np.float32)
    llib.tg_reverse(x, y, z, grid=n, threadgroup=tg)  # the last group may be partial
    t = np.arange(n)
    start = (t // tg) * tg
    size = np.minimum(tg, n - start)  # threads_per_threadgroup of each thread's group
    tid = t - start
    np.testing.assert_array_equal(y, x[start + size - 1 - tid])
    np.testing.assert_array_equal(z, 2 * x[start + size - 1 - (tid + 1) % size])


# ===========================================================================
# 6. Early returns
# ===========================================================================

@pytest.mark.parametrize("tg", [32, 96, 100, 256, 1024])
@pytest.mark.parametrize("n", [0, 1, 33, 1000, 4099])
def test_simd_functions_after_bounds_return(llib, tg, n):
    groups = -(-n // tg) + 1  # a group or more past n: whole simdgroups and groups return
    total = groups * tg
    x = _ints(n * 19 + tg, total)
    out = np.full((total, 3), np.nan, np.float32)
    ballot = np.full(total, 0xDEADBEEF, np.uint32)
    llib.early_return(x, out, ballot, np.uint32(n), groups=groups, threadgroup=tg)
    lanes = _lanes_1d(total, tg)
    active = np.arange(total) < n
    v = x.astype(np.float64)
    np.testing.assert_array_equal(out[:n, 0], lanes.reduce(np.add, v, active, 0)[:n])
    np.testing.assert_array_equal(out[:n, 1], lanes.exclusive_sum(v, active)[:n])
    np.testing.assert_array_equal(out[:n, 2], lanes.reduce(np.minimum, v, active, np.inf)[:n])
    np.testing.assert_array_equal(ballot[:n], lanes.ballot(active, active)[:n])
    assert np.isnan(out[n:]).all() and (ballot[n:] == 0xDEADBEEF).all()


@pytest.mark.parametrize("n,tg", FORM_SHAPES)
def test_simd_functions_after_data_return(llib, n, tg):
    x = _form_inputs(n, n * 23 + tg)
    out = np.full((n, 2), np.nan, np.float32)
    llib.early_return_data(x, out, grid=n, threadgroup=tg)
    lanes = _lanes_1d(n, tg)
    active = x >= 0
    v = x.astype(np.float64)
    np.testing.assert_array_equal(out[active, 0], lanes.reduce(np.add, v, active, 0)[active])
    # simd_broadcast_first: the value of the lowest active lane
    first = lanes.reduce(np.minimum, np.where(active, lanes.lane, 99), active, 99)
    src, ok = lanes.source(first, active)
    assert ok[active].all()
    want = lanes.reduce(np.maximum, v, active, -np.inf) - v[src]
    np.testing.assert_array_equal(out[active, 1], want[active])
    assert np.isnan(out[~active]).all()


# ===========================================================================
# 7. Local arrays and vectors across a SIMD function
# ===========================================================================

@pytest.mark.parametrize("groups,tg", [(1, 32), (2, 96), (3, 100), (2, 256), (1, 1024)])
@pytest.mark.parametrize("n", [0, 3, 1000, 100003])
def test_local_array_and_float4_across_simd_sum(llib, groups, tg, n):
    total = groups * tg
    x = _ints(n * 29 + tg, n)
    out = np.full((total, 4, 4), np.nan, np.float32)
    llib.local_arrays(x, out, np.uint32(n), groups=groups, threadgroup=tg)
    i = np.arange(n)
    acc = np.bincount((i % total) * 4 + (i & 3), weights=x, minlength=4 * total).astype(np.float64).reshape(total, 4)
    lanes = _lanes_1d(total, tg)
    everyone = np.ones(total, bool)
    s = np.stack([lanes.reduce(np.add, acc[:, k], everyone, 0) for k in range(4)], axis=1)
    p = np.stack([lanes.exclusive_sum(acc[:, k], everyone) for k in range(4)], axis=1)
    np.testing.assert_array_equal(out[:, 0], s)
    np.testing.assert_array_equal(out[:, 1], p)
    acc2 = acc + (np.arange(4)[None, :] == (lanes.lane % 4)[:, None]) * s[:, 3:4]
    np.testing.assert_array_equal(out[:, 2], acc2)
    v = acc.copy()
    v[:, 1] -= p[:, 0]
    np.testing.assert_array_equal(out[:, 3], v)


# ===========================================================================
# 8. 2-D threadgroups
# ===========================================================================

@pytest.mark.parametrize("width,height,tg", [(16, 8, (16, 8)), (48, 16, (16, 8)), (37, 21, (16, 8)),
                                             (35, 23, (10, 10)), (64, 6, (32, 2)), (100, 30, (32, 32))])
def test_2d_threadgroups(llib, width, height, tg):
    n = width * height
    x = _ints(n + tg[0], n)
    out = np.full((n, 4), np.nan, np.float32)
    idx = np.full((n, 2), 0xDEADBEEF, np.uint32)
    if width % tg[0] == 0 and height % tg[1] == 0:  # whole groups: dispatchThreadgroups
        llib.tile2d(x, out, idx, groups=(width // tg[0], height // tg[1]), threadgroup=tg)
    else:
        llib.tile2d(x, out, idx, grid=(width, height), threadgroup=tg)
    lanes, lid = _lanes_2d(width, height, tg)
    np.testing.assert_array_equal(idx[:, 0], lid)
    np.testing.assert_array_equal(idx[:, 1], lid)  # sg * 32 + lane is the linear index
    active = np.ones(n, bool)
    v = x.astype(np.float64)
    np.testing.assert_array_equal(out[:, 0], lanes.reduce(np.add, v, active, 0))
    np.testing.assert_array_equal(out[:, 1], lanes.exclusive_sum(v, active))
    # mirrored tile: the thread at linear index size - 1 - lid of the same threadgroup
    y, xx = np.divmod(np.arange(n), width)
    gx, gy = xx // tg[0], y // tg[1]
    sx, sy = np.minimum(tg[0], width - gx * tg[0]), np.minimum(tg[1], height - gy * tg[1])
    mx, my = sx - 1 - xx % tg[0], sy - 1 - y % tg[1]
    np.testing.assert_array_equal(out[:, 2], x[(gy * tg[1] + my) * width + gx * tg[0] + mx])
    src, ok = lanes.source(np.zeros(n, np.int64), active)
    assert ok.all()
    np.testing.assert_array_equal(out[:, 3], x[src])
