"""MSL conformance: real Metal kernels run through the public API, against NumPy.

Each kernel here is ordinary MSL, written as one would for an Apple GPU:
threadgroup-memory reductions and scans, atomics histograms, tiled matmul and
transpose, bitonic sort, simdgroup-matrix GEMM, template instantiation forms,
every SIMD-group / quad-group function (with partial simdgroups at the edge of
non-uniform threadgroups), bfloat, float atomics, launch limits and the errors
the CPU backend reports. Sizes are chosen to leave partial threadgroups and
partial simdgroups (e.g. grid=33 with threadgroup=32, threadgroup=40).

Expected SIMD semantics (MSL spec, "SIMD-group functions"): reductions, prefix
operations and votes are over the *active* threads; simd_shuffle_up/down leave
lanes without a source lane unchanged; rotate wraps within the simdgroup (or
quad); reading an inactive lane is undefined on a GPU, so those lanes are not
compared (the CPU backend's documented choice, the caller's own value, has its
own test).

Every source is compiled once per module (module-scoped fixtures); the CPU
backend caches compiled libraries on disk.
"""

import threading

import numpy as np
import pytest

import msl_kernels
import pymetal as pm

SIZES = [1, 31, 32, 33, 1000, 4097]
HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"


def _rng(seed):
    return np.random.default_rng(seed)


def _groups_1d(n, tg):
    """(start, size) of each threadgroup of a 1-D dispatchThreads(n) with threadgroup tg."""
    return [(s, min(tg, n - s)) for s in range(0, n, tg)]


def _line_of(src, kernel, needle):
    """1-based line number of the first line containing `needle` after `kernel void <kernel>(`."""
    lines = src.split("\n")
    start = next(i for i, l in enumerate(lines) if "kernel void %s(" % kernel in l)
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


def _call_with_timeout(fn, timeout=60.0):
    """Runs fn() in a daemon thread; returns the exception it raised (or None)."""
    box = {}

    def target():
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            box["exc"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "kernel call did not return within %.0f s (hang)" % timeout
    return box.get("exc")


# ===========================================================================
# Reductions and scans
# ===========================================================================

REDUCE_SRC = HEADER + r"""
static inline uint pow2_ceil(uint v) {
    uint p = 1;
    while (p < v) p <<= 1;
    return p;
}

// One sum per threadgroup; works for any (partial, non power of two) group size <= 256.
kernel void tree_sum_static(device const float* x [[buffer(0)]],
                            device float* partial [[buffer(1)]],
                            uint gid [[thread_position_in_grid]],
                            uint lid [[thread_index_in_threadgroup]],
                            uint tg [[threadgroup_position_in_grid]],
                            uint size [[threads_per_threadgroup]]) {
    threadgroup float s[256];
    s[lid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = pow2_ceil(size) / 2; stride > 0; stride >>= 1) {
        if (lid < stride && lid + stride < size) s[lid] += s[lid + stride];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) partial[tg] = s[0];
}

kernel void tree_sum_dynamic(device const float* x [[buffer(0)]],
                             device float* partial [[buffer(1)]],
                             threadgroup float* s [[threadgroup(0)]],
                             uint gid [[thread_position_in_grid]],
                             uint lid [[thread_index_in_threadgroup]],
                             uint tg [[threadgroup_position_in_grid]],
                             uint size [[threads_per_threadgroup]]) {
    s[lid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = pow2_ceil(size) / 2; stride > 0; stride >>= 1) {
        if (lid < stride && lid + stride < size) s[lid] += s[lid + stride];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) partial[tg] = s[0];
}

// SIMD reduction, then a second level over the simdgroups' results.
kernel void two_level(device const float* x [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]],
                      uint tg [[threadgroup_position_in_grid]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]],
                      uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float ssum[32];
    threadgroup float smax[32];
    threadgroup float smin[32];
    float v = x[gid];
    float s = simd_sum(v), mx = simd_max(v), mn = simd_min(v);
    if (lane == 0) { ssum[sg] = s; smax[sg] = mx; smin[sg] = mn; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        bool ok = lane < nsg;
        float a = ok ? ssum[lane] : 0.0f;
        float b = ok ? smax[lane] : -INFINITY;
        float c = ok ? smin[lane] : INFINITY;
        a = simd_sum(a);
        b = simd_max(b);
        c = simd_min(c);
        if (lane == 0) { out[3 * tg] = a; out[3 * tg + 1] = b; out[3 * tg + 2] = c; }
    }
}

kernel void simd_scans(device const int* x [[buffer(0)]],
                       device int* incl [[buffer(1)]],
                       device int* excl [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
    int v = x[gid];
    incl[gid] = simd_prefix_inclusive_sum(v);
    excl[gid] = simd_prefix_exclusive_sum(v);
}

// Hillis-Steele inclusive scan of a threadgroup, ping-pong between two
// [[threadgroup(n)]] buffers.
kernel void block_scan_hs(device const int* x [[buffer(0)]],
                          device int* y [[buffer(1)]],
                          threadgroup int* a [[threadgroup(0)]],
                          threadgroup int* b [[threadgroup(1)]],
                          uint gid [[thread_position_in_grid]],
                          uint lid [[thread_index_in_threadgroup]],
                          uint size [[threads_per_threadgroup]]) {
    threadgroup int* src = a;
    threadgroup int* dst = b;
    src[lid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint off = 1; off < size; off <<= 1) {
        int v = src[lid];
        if (lid >= off) v += src[lid - off];
        dst[lid] = v;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        threadgroup int* t = src; src = dst; dst = t;
    }
    y[gid] = src[lid];
}

// Exclusive scan of a threadgroup: SIMD prefix + a scan of the simdgroup totals.
kernel void block_scan_simd(device const int* x [[buffer(0)]],
                            device int* y [[buffer(1)]],
                            device int* totals [[buffer(2)]],
                            uint gid [[thread_position_in_grid]],
                            uint tg [[threadgroup_position_in_grid]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]],
                            uint nsg [[simdgroups_per_threadgroup]],
                            uint lid [[thread_index_in_threadgroup]],
                            uint size [[threads_per_threadgroup]]) {
    threadgroup int sums[32];
    int v = x[gid];
    int incl = simd_prefix_inclusive_sum(v);
    if (lane == 31 || lid == size - 1) sums[sg] = incl;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        int s = lane < nsg ? sums[lane] : 0;
        int e = simd_prefix_exclusive_sum(s);
        if (lane < nsg) sums[lane] = e;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    int r = incl - v + sums[sg];
    y[gid] = r;
    if (lid == size - 1) totals[tg] = r + v;
}

// Histograms: threadgroup atomics, then one device atomic per bin and group.
kernel void hist_tg_static(device const uint* x [[buffer(0)]],
                           device atomic_uint* hist [[buffer(1)]],
                           constant uint& nbins [[buffer(2)]],
                           uint gid [[thread_position_in_grid]],
                           uint lid [[thread_index_in_threadgroup]],
                           uint size [[threads_per_threadgroup]]) {
    threadgroup atomic_uint h[256];
    for (uint b = lid; b < nbins; b += size) atomic_store_explicit(&h[b], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&h[x[gid]], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint b = lid; b < nbins; b += size) {
        uint c = atomic_load_explicit(&h[b], memory_order_relaxed);
        if (c != 0) atomic_fetch_add_explicit(&hist[b], c, memory_order_relaxed);
    }
}

kernel void hist_tg_dynamic(device const uint* x [[buffer(0)]],
                            device atomic_uint* hist [[buffer(1)]],
                            constant uint& nbins [[buffer(2)]],
                            constant uint& n [[buffer(3)]],
                            threadgroup atomic_uint* h [[threadgroup(0)]],
                            uint gid [[thread_position_in_grid]],
                            uint lid [[thread_index_in_threadgroup]],
                            uint size [[threads_per_threadgroup]]) {
    for (uint b = lid; b < nbins; b += size) atomic_store_explicit(&h[b], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (gid < n) atomic_fetch_add_explicit(&h[x[gid]], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint b = lid; b < nbins; b += size) {
        uint c = atomic_load_explicit(&h[b], memory_order_relaxed);
        if (c != 0) atomic_fetch_add_explicit(&hist[b], c, memory_order_relaxed);
    }
}

// Device atomics only, with a grid-stride loop.
kernel void hist_device(device const uint* x [[buffer(0)]],
                        device atomic_uint* hist [[buffer(1)]],
                        constant uint& n [[buffer(2)]],
                        uint gid [[thread_position_in_grid]],
                        uint nthreads [[threads_per_grid]]) {
    for (uint i = gid; i < n; i += nthreads) atomic_fetch_add_explicit(&hist[x[i]], 1u, memory_order_relaxed);
}
"""


@pytest.fixture(scope="module")
def rlib(dev):
    return pm.compile(REDUCE_SRC)


def _int_floats(rng, n, lo=-100, hi=100):
    # integer-valued float32: every sum below is exact whatever the order
    return rng.integers(lo, hi, size=n).astype(np.float32)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tg", [32, 64, 100, 256])
def test_tree_reduction_static(rlib, n, tg):
    x = _int_floats(_rng(n * 7 + tg), n)
    groups = _groups_1d(n, tg)
    partial = np.full(len(groups), np.nan, np.float32)
    rlib.tree_sum_static(x, partial, grid=n, threadgroup=tg)
    expected = [x[s:s + k].sum(dtype=np.float64) for s, k in groups]
    np.testing.assert_array_equal(partial, np.array(expected, np.float32))
    assert partial.sum(dtype=np.float64) == x.sum(dtype=np.float64)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tg", [32, 100, 256, 1024])
def test_tree_reduction_dynamic(rlib, n, tg):
    x = _int_floats(_rng(n * 11 + tg), n)
    groups = _groups_1d(n, tg)
    partial = np.full(len(groups), np.nan, np.float32)
    rlib.tree_sum_dynamic(x, partial, grid=n, threadgroup=tg, threadgroup_memory=tg * 4)
    expected = [x[s:s + k].sum(dtype=np.float64) for s, k in groups]
    np.testing.assert_array_equal(partial, np.array(expected, np.float32))


def test_tree_reduction_dynamic_groups_dispatch(rlib):
    # dispatchThreadgroups: every group is full; the input is padded with zeros
    n, tg = 5000, 128
    ngroups = -(-n // tg)
    x = np.zeros(ngroups * tg, np.float32)
    x[:n] = _int_floats(_rng(3), n)
    partial = np.zeros(ngroups, np.float32)
    rlib.tree_sum_dynamic(x, partial, groups=ngroups, threadgroup=tg, threadgroup_memory=[tg * 4])
    np.testing.assert_array_equal(partial, x.reshape(ngroups, tg).sum(axis=1))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tg", [32, 40, 64, 100, 1024])
def test_two_level_simd_reduction(rlib, n, tg):
    x = _int_floats(_rng(n * 13 + tg), n, -1000, 1000)
    groups = _groups_1d(n, tg)
    out = np.full(3 * len(groups), np.nan, np.float32)
    rlib.two_level(x, out, grid=n, threadgroup=tg)
    out = out.reshape(-1, 3)
    for g, (s, k) in enumerate(groups):
        seg = x[s:s + k]
        assert out[g, 0] == seg.sum(dtype=np.float64), (g, s, k)
        assert out[g, 1] == seg.max(), (g, s, k)
        assert out[g, 2] == seg.min(), (g, s, k)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tg", [32, 40, 100, 256])
def test_simd_prefix_scans(rlib, n, tg):
    x = _rng(n + tg).integers(-50, 50, size=n).astype(np.int32)
    incl = np.zeros(n, np.int32)
    excl = np.zeros(n, np.int32)
    rlib.simd_scans(x, incl, excl, grid=n, threadgroup=tg)
    ei, ee = np.zeros(n, np.int32), np.zeros(n, np.int32)
    for s, k in _groups_1d(n, tg):
        for b in range(s, s + k, 32):
            seg = x[b:min(b + 32, s + k)]
            c = np.cumsum(seg)
            ei[b:b + len(seg)] = c
            ee[b:b + len(seg)] = c - seg
    np.testing.assert_array_equal(incl, ei)
    np.testing.assert_array_equal(excl, ee)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tg", [32, 64, 100, 1024])
def test_block_scan_hillis_steele(rlib, n, tg):
    x = _rng(n * 3 + tg).integers(-1000, 1000, size=n).astype(np.int32)
    y = np.zeros(n, np.int32)
    rlib.block_scan_hs(x, y, grid=n, threadgroup=tg, threadgroup_memory=[tg * 4, tg * 4])
    expected = np.concatenate([np.cumsum(x[s:s + k]) for s, k in _groups_1d(n, tg)])
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("n", SIZES + [100003])
@pytest.mark.parametrize("tg", [32, 40, 256, 1024])
def test_block_scan_simd_and_device_scan(rlib, n, tg):
    x = _rng(n * 5 + tg).integers(-1000, 1000, size=n).astype(np.int32)
    groups = _groups_1d(n, tg)
    y = np.zeros(n, np.int32)
    totals = np.zeros(len(groups), np.int32)
    rlib.block_scan_simd(x, y, totals, grid=n, threadgroup=tg)
    expected = np.concatenate([np.cumsum(x[s:s + k]) - x[s:s + k] for s, k in groups])
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(totals, [x[s:s + k].sum() for s, k in groups])
    # the device-wide exclusive scan from the blocks' results
    offsets = np.cumsum(totals) - totals
    full = y + np.repeat(offsets, [k for _, k in groups])
    np.testing.assert_array_equal(full, np.cumsum(x) - x)


@pytest.mark.parametrize("n", SIZES + [100000])
@pytest.mark.parametrize("tg,nbins", [(32, 7), (100, 256), (256, 1), (1024, 256)])
def test_histogram_threadgroup_atomics_static(rlib, n, tg, nbins):
    x = _rng(n + nbins).integers(0, nbins, size=n).astype(np.uint32)
    hist = np.zeros(nbins, np.uint32)
    rlib.hist_tg_static(x, hist, np.uint32(nbins), grid=n, threadgroup=tg)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=nbins))


@pytest.mark.parametrize("n", SIZES + [100000])
@pytest.mark.parametrize("tg,nbins", [(64, 1000), (256, 4096), (1024, 3)])
def test_histogram_threadgroup_atomics_dynamic(rlib, n, tg, nbins):
    x = _rng(n + 2 * nbins).integers(0, nbins, size=n).astype(np.uint32)
    hist = np.zeros(nbins, np.uint32)
    ngroups = -(-n // tg)  # dispatchThreadgroups: the kernel guards gid < n
    rlib.hist_tg_dynamic(x, hist, np.uint32(nbins), np.uint32(n), groups=ngroups, threadgroup=tg,
                         threadgroup_memory=nbins * 4)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=nbins))


@pytest.mark.parametrize("n", SIZES + [300001])
@pytest.mark.parametrize("grid", [1, 33, 4096])
def test_histogram_device_atomics(rlib, n, grid):
    x = (_rng(n).standard_normal(n) * 20 + 64).clip(0, 127).astype(np.uint32)
    hist = np.zeros(128, np.uint32)
    rlib.hist_device(x, hist, np.uint32(n), grid=grid, threadgroup=min(grid, 64))
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=128))


# ===========================================================================
# Tiled matmul, transpose, bitonic sort, 3-D threadgroup layout
# ===========================================================================

TILE_SRC = HEADER + r"""
#define TS 16

kernel void matmul_tiled(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         constant uint& M [[buffer(3)]],
                         constant uint& N [[buffer(4)]],
                         constant uint& K [[buffer(5)]],
                         uint2 lid [[thread_position_in_threadgroup]],
                         uint2 tgp [[threadgroup_position_in_grid]]) {
    threadgroup float As[TS][TS];
    threadgroup float Bs[TS][TS];
    uint row = tgp.y * TS + lid.y;
    uint col = tgp.x * TS + lid.x;
    float acc = 0.0f;
    for (uint t = 0; t < K; t += TS) {
        As[lid.y][lid.x] = (row < M && t + lid.x < K) ? A[row * K + t + lid.x] : 0.0f;
        Bs[lid.y][lid.x] = (t + lid.y < K && col < N) ? B[(t + lid.y) * N + col] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TS; k++) acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// Batched transpose through a padded tile: in is [batch][H][W], out [batch][W][H].
kernel void transpose_tile(device const float* in [[buffer(0)]],
                           device float* out [[buffer(1)]],
                           constant uint& W [[buffer(2)]],
                           constant uint& H [[buffer(3)]],
                           uint3 lid [[thread_position_in_threadgroup]],
                           uint3 tgp [[threadgroup_position_in_grid]]) {
    threadgroup float tile[TS][TS + 1];
    uint b = tgp.z;
    uint x = tgp.x * TS + lid.x, y = tgp.y * TS + lid.y;
    if (x < W && y < H) tile[lid.y][lid.x] = in[(b * H + y) * W + x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint ox = tgp.y * TS + lid.x, oy = tgp.x * TS + lid.y;
    if (ox < H && oy < W) out[(b * W + oy) * H + ox] = tile[lid.x][lid.y];
}

// Bitonic sort of one row per threadgroup, P = threads_per_threadgroup (a power
// of two >= n), padded with +inf; keys carry their original index.
kernel void bitonic_sort(device float* keys [[buffer(0)]],
                         device uint* idx [[buffer(1)]],
                         constant uint& n [[buffer(2)]],
                         uint lid [[thread_index_in_threadgroup]],
                         uint row [[threadgroup_position_in_grid]],
                         uint P [[threads_per_threadgroup]]) {
    threadgroup float s[1024];
    threadgroup uint si[1024];
    device float* k = keys + row * n;
    device uint* ix = idx + row * n;
    s[lid] = lid < n ? k[lid] : INFINITY;
    si[lid] = lid;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint size = 2; size <= P; size <<= 1) {
        for (uint stride = size >> 1; stride > 0; stride >>= 1) {
            uint other = lid ^ stride;
            if (other > lid) {
                bool up = (lid & size) == 0;
                float a = s[lid], c = s[other];
                if ((a > c) == up) {
                    s[lid] = c; s[other] = a;
                    uint t = si[lid]; si[lid] = si[other]; si[other] = t;
                }
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
    }
    if (lid < n) { k[lid] = s[lid]; ix[lid] = si[lid]; }
}

// Positions in a 3-D (possibly partial) threadgroup and the SIMD lanes they map to.
kernel void layout3d(device uint* out [[buffer(0)]],
                     device const float* x [[buffer(1)]],
                     device float* sums [[buffer(2)]],
                     uint3 gid [[thread_position_in_grid]],
                     uint3 grid [[threads_per_grid]],
                     uint3 tpg [[threads_per_threadgroup]],
                     uint3 dtpg [[dispatch_threads_per_threadgroup]],
                     uint tidx [[thread_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort q [[thread_index_in_quadgroup]]) {
    uint i = (gid.z * grid.y + gid.y) * grid.x + gid.x;
    device uint* o = out + 6 * i;
    o[0] = tidx; o[1] = lane; o[2] = sg; o[3] = q;
    o[4] = tpg.x + 1000 * tpg.y + 1000000 * tpg.z;
    o[5] = dtpg.x + 1000 * dtpg.y + 1000000 * dtpg.z;
    sums[i] = simd_sum(x[i]);
}
"""


@pytest.fixture(scope="module")
def tlib(dev):
    return pm.compile(TILE_SRC)


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (17, 33, 5), (31, 47, 65), (64, 64, 64), (100, 37, 129), (3, 200, 16)])
def test_tiled_matmul(tlib, M, N, K):
    rng = _rng(M * 10000 + N * 100 + K)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    tlib.matmul_tiled(A, B, C, np.uint32(M), np.uint32(N), np.uint32(K),
                      groups=(-(-N // 16), -(-M // 16)), threadgroup=(16, 16))
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C, ref, rtol=1e-4, atol=1e-4 * np.sqrt(K))


@pytest.mark.parametrize("H,W,batch", [(1, 1, 1), (1, 37, 2), (33, 1, 1), (31, 47, 3), (64, 16, 1), (100, 129, 2)])
def test_transpose_padded_tile(tlib, H, W, batch):
    a = _rng(H * W + batch).standard_normal((batch, H, W)).astype(np.float32)
    out = np.full((batch, W, H), np.nan, np.float32)
    if batch == 1:  # a 2-D dispatch
        tlib.transpose_tile(a, out, np.uint32(W), np.uint32(H), groups=(-(-W // 16), -(-H // 16)), threadgroup=(16, 16))
    else:
        tlib.transpose_tile(a, out, np.uint32(W), np.uint32(H),
                            groups=(-(-W // 16), -(-H // 16), batch), threadgroup=(16, 16, 1))
    np.testing.assert_array_equal(out, a.transpose(0, 2, 1))


@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 100, 1000, 1024])
def test_bitonic_sort(tlib, n):
    rows = 3
    P = 1 << max(0, (n - 1).bit_length())
    rng = _rng(n)
    keys = np.stack([rng.permutation(n).astype(np.float32) * 0.5 - n / 4 for _ in range(rows)])
    keys[0] = rng.integers(-3, 3, size=n).astype(np.float32)  # duplicates
    orig = keys.copy()
    idx = np.zeros((rows, n), np.uint32)
    tlib.bitonic_sort(keys, idx, np.uint32(n), groups=rows, threadgroup=P)
    np.testing.assert_array_equal(keys, np.sort(orig, axis=1))
    for r in range(rows):
        assert sorted(idx[r].tolist()) == list(range(n))  # a permutation of the row
        np.testing.assert_array_equal(orig[r][idx[r]], keys[r])
    for r in range(1, rows):  # unique keys: the argsort itself
        np.testing.assert_array_equal(idx[r], np.argsort(orig[r], kind="stable"))


@pytest.mark.parametrize("grid,tg", [((7, 5, 3), (4, 3, 2)), ((10, 9, 4), (5, 3, 4)), ((33, 2, 1), (32, 1, 1)),
                                     ((8, 8, 8), (8, 8, 8)), ((13, 11, 7), (3, 5, 7))])
def test_threadgroup_3d_layout_and_simd_lanes(tlib, grid, tg):
    gx, gy, gz = grid
    total = gx * gy * gz
    x = _int_floats(_rng(total), total)
    out = np.zeros((total, 6), np.uint32)
    sums = np.full(total, np.nan, np.float32)
    tlib.layout3d(out, x, sums, grid=grid, threadgroup=tg)
    z, y, xx = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    z, y, xx = z.ravel(), y.ravel(), xx.ravel()
    pos = [xx, y, z]
    lid = [p % t for p, t in zip(pos, tg)]
    size = [np.minimum(t, g - (p // t) * t) for p, t, g in zip(pos, tg, grid)]  # actual (edge) group size
    tidx = lid[0] + lid[1] * size[0] + lid[2] * size[0] * size[1]
    np.testing.assert_array_equal(out[:, 0], tidx)
    np.testing.assert_array_equal(out[:, 1], tidx % 32)
    np.testing.assert_array_equal(out[:, 2], tidx // 32)
    np.testing.assert_array_equal(out[:, 3], tidx % 4)
    np.testing.assert_array_equal(out[:, 4], size[0] + 1000 * size[1] + 1000000 * size[2])
    np.testing.assert_array_equal(out[:, 5], tg[0] + 1000 * tg[1] + 1000000 * tg[2])
    # simd_sum over each simdgroup: threads with the same group and tidx // 32
    group = [p // t for p, t in zip(pos, tg)]
    key = ((group[2] * 1000 + group[1]) * 1000 + group[0]) * 100 + tidx // 32
    expected = np.zeros(total, np.float64)
    for kv in np.unique(key):
        m = key == kv
        expected[m] = x[m].sum(dtype=np.float64)
    np.testing.assert_array_equal(sums, expected.astype(np.float32))


# ===========================================================================
# Every SIMD-group and quad-group function, against a Python model
# ===========================================================================

SIMD_SRC = HEADER + r"""
// Rows of `of` (float results) and `ou` (uint results), n entries each.
kernel void simd_ops(device const float* x [[buffer(0)]],
                     device const uint* u [[buffer(1)]],
                     device const uint* c [[buffer(2)]],
                     device const ushort* idx [[buffer(3)]],
                     device float* of [[buffer(4)]],
                     device uint* ou [[buffer(5)]],
                     constant uint& n [[buffer(6)]],
                     constant ushort& d [[buffer(7)]],
                     uint i [[thread_position_in_grid]]) {
    float v = x[i];
    uint w = u[i];
    bool p = c[i] != 0;
    ushort sl = idx[i];
    ushort qd = d & 3;
    ushort ql = sl & 3;
    device float* f = of + i;
    device uint* o = ou + i;

    f[0 * n] = simd_sum(v);
    f[1 * n] = simd_product(v);
    f[2 * n] = simd_min(v);
    f[3 * n] = simd_max(v);
    f[4 * n] = simd_prefix_exclusive_sum(v);
    f[5 * n] = simd_prefix_inclusive_sum(v);
    f[6 * n] = simd_prefix_exclusive_product(v);
    f[7 * n] = simd_prefix_inclusive_product(v);
    f[8 * n] = simd_broadcast(v, d);
    f[9 * n] = simd_broadcast_first(v);
    f[10 * n] = simd_shuffle(v, sl);
    f[11 * n] = simd_shuffle_up(v, d);
    f[12 * n] = simd_shuffle_down(v, d);
    f[13 * n] = simd_shuffle_xor(v, d);
    f[14 * n] = simd_shuffle_rotate_up(v, d);
    f[15 * n] = simd_shuffle_rotate_down(v, d);

    f[16 * n] = quad_sum(v);
    f[17 * n] = quad_product(v);
    f[18 * n] = quad_min(v);
    f[19 * n] = quad_max(v);
    f[20 * n] = quad_prefix_exclusive_sum(v);
    f[21 * n] = quad_prefix_inclusive_sum(v);
    f[22 * n] = quad_prefix_exclusive_product(v);
    f[23 * n] = quad_prefix_inclusive_product(v);
    f[24 * n] = quad_broadcast(v, qd);
    f[25 * n] = quad_broadcast_first(v);
    f[26 * n] = quad_shuffle(v, ql);
    f[27 * n] = quad_shuffle_up(v, qd);
    f[28 * n] = quad_shuffle_down(v, qd);
    f[29 * n] = quad_shuffle_xor(v, qd);
    f[30 * n] = quad_shuffle_rotate_up(v, qd);
    f[31 * n] = quad_shuffle_rotate_down(v, qd);

    o[0 * n] = simd_and(w);
    o[1 * n] = simd_or(w);
    o[2 * n] = simd_xor(w);
    o[3 * n] = uint(ulong(simd_ballot(p)));
    o[4 * n] = simd_all(p) ? 1u : 0u;
    o[5 * n] = simd_any(p) ? 1u : 0u;
    o[6 * n] = simd_is_first() ? 1u : 0u;
    o[7 * n] = uint(ulong(simd_active_threads_mask()));

    o[8 * n] = quad_and(w);
    o[9 * n] = quad_or(w);
    o[10 * n] = quad_xor(w);
    o[11 * n] = uint(ushort(quad_ballot(p)));
    o[12 * n] = quad_all(p) ? 1u : 0u;
    o[13 * n] = quad_any(p) ? 1u : 0u;
    o[14 * n] = quad_is_first() ? 1u : 0u;
    o[15 * n] = uint(ushort(quad_active_threads_mask()));
}

// Other element types: int, uint, half and vectors.
kernel void simd_typed(device const int* a [[buffer(0)]],
                       device const half* h [[buffer(1)]],
                       device const float4* v4 [[buffer(2)]],
                       device int* oi [[buffer(3)]],
                       device half* oh [[buffer(4)]],
                       device float4* o4 [[buffer(5)]],
                       device int2* o2 [[buffer(6)]],
                       constant ushort& d [[buffer(7)]],
                       uint i [[thread_position_in_grid]]) {
    int x = a[i];
    oi[3 * i + 0] = simd_sum(x);
    oi[3 * i + 1] = simd_max(x);
    oi[3 * i + 2] = int(simd_min(uint(x + 1000))) - 1000;
    oh[2 * i + 0] = simd_sum(h[i]);
    oh[2 * i + 1] = simd_prefix_inclusive_sum(h[i]);
    o4[2 * i + 0] = simd_shuffle_xor(v4[i], d);
    o4[2 * i + 1] = quad_sum(v4[i]);
    o2[i] = simd_prefix_exclusive_sum(int2(x, -x));
}

// Lanes that returned before the call are inactive: they take no part.
kernel void simd_after_return(device const float* x [[buffer(0)]],
                              device float* out [[buffer(1)]],
                              device uint* ballot [[buffer(2)]],
                              constant uint& keep [[buffer(3)]],
                              uint i [[thread_position_in_grid]],
                              uint lane [[thread_index_in_simdgroup]]) {
    if (lane >= keep) return;
    out[2 * i] = simd_sum(x[i]);
    out[2 * i + 1] = simd_prefix_exclusive_sum(x[i]);
    ballot[i] = uint(ulong(simd_ballot(true)));
}
"""


@pytest.fixture(scope="module")
def slib(dev):
    return pm.compile(SIMD_SRC)


def _simd_model(x, u, c, idx, n, tg, d, width):
    """Expected rows (float, uint) and a mask of defined entries for one width (32 or 4)."""
    nf, nu = 16, 8
    ef = np.zeros((nf, n), np.float64)
    eu = np.zeros((nu, n), np.uint64)
    df = np.ones((nf, n), bool)
    if width == 4:
        d = d & 3
    for s, size in _groups_1d(n, tg):
        for b in range(s, s + size, width):
            k = min(width, s + size - b)  # active lanes 0..k-1 of this simdgroup / quad
            lanes = np.arange(k)
            g = slice(b, b + k)
            a = x[g].astype(np.float64)
            ef[0, g] = a.sum()
            ef[1, g] = a.prod()
            ef[2, g] = a.min()
            ef[3, g] = a.max()
            ef[4, g] = np.cumsum(a) - a
            ef[5, g] = np.cumsum(a)
            ef[6, g] = np.concatenate([[1.0], np.cumprod(a)[:-1]])
            ef[7, g] = np.cumprod(a)

            def src_rows(row, src):
                # source lane per lane, -1: own value; sources >= k are inactive (undefined)
                src = np.asarray(src)
                own = src < 0
                ok = own | (src < k)
                take = np.where(own | ~ok, lanes, src)
                ef[row, g] = a[take]
                df[row, g] = ok

            src_rows(8, np.full(k, d))
            ef[9, g] = a[0]
            sl = idx[g].astype(np.int64) % width
            src_rows(10, sl)
            src_rows(11, np.where(lanes >= d, lanes - d, -1))
            src_rows(12, np.where(lanes + d < width, lanes + d, -1))
            src_rows(13, lanes ^ d)
            src_rows(14, (lanes - d) % width)
            src_rows(15, (lanes + d) % width)

            w = u[g].astype(np.uint64)
            eu[0, g] = np.bitwise_and.reduce(w)
            eu[1, g] = np.bitwise_or.reduce(w)
            eu[2, g] = np.bitwise_xor.reduce(w)
            pr = c[g] != 0
            eu[3, g] = sum(1 << int(l) for l in lanes[pr])
            eu[4, g] = int(pr.all())
            eu[5, g] = int(pr.any())
            eu[6, g] = (lanes == 0).astype(np.uint64)
            eu[7, g] = (1 << k) - 1
    return ef, eu, df


def _simd_inputs(n, seed):
    rng = _rng(seed)
    x = rng.choice(np.array([-2, -1, -0.5, 0.5, 1, 2, 0.25, 4, -4], np.float32), size=n)
    u = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    u |= np.uint32(0x00100000)  # one bit set everywhere: simd_and is not always 0
    # predicates: blocks of mostly-true, all-true, all-false and random lanes
    blk = (np.arange(n) // 24) % 4
    c = np.where(blk == 0, 1, np.where(blk == 1, 0, np.where(blk == 2, rng.random(n) < 0.97, rng.random(n) < 0.5)))
    idx = rng.integers(0, 32, size=n).astype(np.uint16)
    return x, u, c.astype(np.uint32), idx


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("tg", [32, 40, 64, 100, 1024])
def test_every_simd_and_quad_function(slib, n, tg):
    x, u, c, idx = _simd_inputs(n, n * 31 + tg)
    for d in (1, 6, 31):
        of = np.full((32, n), np.nan, np.float32)
        ou = np.full((16, n), 0xDEADBEEF, np.uint32)
        slib.simd_ops(x, u, c, idx, of, ou, np.uint32(n), np.uint16(d), grid=n, threadgroup=tg)
        for width, fr, ur in ((32, 0, 0), (4, 16, 8)):
            ef, eu, df = _simd_model(x, u, c, idx, n, tg, d, width)
            for r in range(16):
                got, want, ok = of[fr + r].astype(np.float64), ef[r], df[r]
                bad = np.nonzero(ok & (got != want))[0]
                assert bad.size == 0, "%s row %d (d=%d): lanes %s got %s want %s" % (
                    "simd" if width == 32 else "quad", r, d, bad[:8], got[bad[:8]], want[bad[:8]])
            for r in range(8):
                got, want = ou[ur + r].astype(np.uint64), eu[r]
                bad = np.nonzero(got != want)[0]
                assert bad.size == 0, "%s uint row %d (d=%d): lanes %s got %s want %s" % (
                    "simd" if width == 32 else "quad", r, d, bad[:8], got[bad[:8]], want[bad[:8]])


@pytest.mark.cpu_backend
def test_cpu_shuffle_from_inactive_lane_returns_own_value(slib):
    # Undefined on a GPU; the CPU backend documents "the caller's own value" (README).
    n, tg, d = 40, 40, 6  # second simdgroup: 8 active lanes
    x, u, c, idx = _simd_inputs(n, 99)
    of = np.full((32, n), np.nan, np.float32)
    ou = np.zeros((16, n), np.uint32)
    slib.simd_ops(x, u, c, idx, of, ou, np.uint32(n), np.uint16(d), grid=n, threadgroup=tg)
    _, _, df = _simd_model(x, u, c, idx, n, tg, d, 32)
    for r in (8, 10, 12, 13, 14, 15):
        undefined = ~df[r]
        np.testing.assert_array_equal(of[r][undefined], x[undefined])
    assert (~df[12]).sum() == 6  # simd_shuffle_down by 6 from lanes 2..7 of the 8-lane group


@pytest.mark.parametrize("n,tg", [(1, 32), (33, 32), (1000, 40), (4097, 256)])
def test_simd_functions_other_types(slib, n, tg):
    rng = _rng(n + tg)
    a = rng.integers(-500, 500, size=n).astype(np.int32)
    h = rng.integers(-8, 8, size=n).astype(np.float16)
    v4 = rng.integers(-50, 50, size=(n, 4)).astype(np.float32)
    oi = np.zeros((n, 3), np.int32)
    oh = np.zeros((n, 2), np.float16)
    o4 = np.zeros((n, 2, 4), np.float32)
    o2 = np.zeros((n, 2), np.int32)
    d = 3
    slib.simd_typed(a, h, v4, oi, oh, o4, o2, np.uint16(d), grid=n, threadgroup=tg)
    for s, size in _groups_1d(n, tg):
        for b in range(s, s + size, 32):
            k = min(32, s + size - b)
            g = slice(b, b + k)
            np.testing.assert_array_equal(oi[g, 0], a[g].sum())
            np.testing.assert_array_equal(oi[g, 1], a[g].max())
            np.testing.assert_array_equal(oi[g, 2], a[g].min())
            np.testing.assert_array_equal(oh[g, 0], h[g].astype(np.float32).sum())
            np.testing.assert_array_equal(oh[g, 1], np.cumsum(h[g].astype(np.float32)))
            lanes = np.arange(k)
            src = lanes ^ d
            ok = src < k
            np.testing.assert_array_equal(o4[g, 0][ok], v4[g][src[ok]])
            for q in range(0, k, 4):
                qs = slice(b + q, b + min(q + 4, k))
                np.testing.assert_array_equal(o4[qs, 1], np.broadcast_to(v4[qs].sum(axis=0), o4[qs, 1].shape))
            ex = np.cumsum(a[g]) - a[g]
            np.testing.assert_array_equal(o2[g, 0], ex)
            np.testing.assert_array_equal(o2[g, 1], -ex)


@pytest.mark.parametrize("keep", [1, 5, 31, 32])
def test_simd_functions_skip_lanes_that_returned(slib, keep):
    n, tg = 100, 50  # simdgroups of 32, 18 (group 0) and 32, 18 (group 1)
    x = _int_floats(_rng(keep), n)
    out = np.full((n, 2), np.nan, np.float32)
    ballot = np.zeros(n, np.uint32)
    slib.simd_after_return(x, out, ballot, np.uint32(keep), grid=n, threadgroup=tg)
    for s, size in _groups_1d(n, tg):
        for b in range(s, s + size, 32):
            k = min(32, s + size - b, keep)
            g = slice(b, b + k)
            np.testing.assert_array_equal(out[g, 0], x[g].sum())
            np.testing.assert_array_equal(out[g, 1], np.cumsum(x[g]) - x[g])
            np.testing.assert_array_equal(ballot[g], (1 << k) - 1)
            rest = slice(b + k, b + min(32, s + size - b))
            assert np.isnan(out[rest]).all()


# ===========================================================================
# simdgroup matrices
# ===========================================================================

SGM_SRC = HEADER + r"""
#include <metal_simdgroup_matrix>

// S is a 16x16 row-major matrix (device). Results are 8x8 blocks in `out`.
kernel void sgm_loads(device const float* S [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      device float* big [[buffer(2)]],
                      device float* te [[buffer(3)]],
                      ushort lane [[thread_index_in_simdgroup]]) {
    threadgroup float ts[256];
    threadgroup float tout[64];
    for (uint j = lane; j < 256; j += 32) ts[j] = S[j] + 1000.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    simdgroup_float8x8 m0, m1, m2, m3, m4;
    simdgroup_load(m0, S);                                  // S.ravel()[0:64] as 8x8 (elements_per_row 8)
    simdgroup_load(m1, S, 16, ulong2(4, 3));                // S[3:11, 4:12]
    simdgroup_load(m2, S, 16, ulong2(2, 5), true);          // S[5:13, 2:10].T
    simdgroup_load(m3, ts, 16, ulong2(7, 1));               // (S + 1000)[1:9, 7:15], from threadgroup memory
    simdgroup_load(m4, ts, 16, ulong2(8, 8), true);         // (S + 1000)[8:16, 8:16].T
    simdgroup_store(m0, out + 0 * 64);
    simdgroup_store(m1, out + 1 * 64);
    simdgroup_store(m2, out + 2 * 64, 8);
    simdgroup_store(m3, out + 3 * 64);
    simdgroup_store(m4, out + 4 * 64);
    simdgroup_float8x8 f = make_filled_simdgroup_matrix<float, 8, 8>(3.5f);
    simdgroup_float8x8 dg = simdgroup_float8x8(2.0f);
    simdgroup_store(f, out + 5 * 64);
    simdgroup_store(dg, out + 6 * 64);
    // to threadgroup memory, then back to device
    simdgroup_store(m1, tout, 8, ulong2(0, 0), true);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint j = lane; j < 64; j += 32) out[7 * 64 + j] = tout[j];
    // stores with elements_per_row / origin / transpose into a 16x16 matrix
    simdgroup_store(m1, big, 16, ulong2(8, 1), true);       // big[1:9, 8:16] = m1.T
    simdgroup_store(m0, big, 16, ulong2(0, 8));             // big[8:16, 0:8] = m0
    // Apple's lane layout of thread_elements()
    te[2 * lane] = m0.thread_elements()[0];
    te[2 * lane + 1] = m0.thread_elements()[1];
}

""" + msl_kernels.source("simdgroup_gemm.metal") + r"""

// C = A @ Bt.T with Bt [N][K] loaded transposed; the result written through
// thread_elements() with Apple's lane layout (as MLX's steel GEMM does).
kernel void sgm_gemm_nt_elements(device const float* A [[buffer(0)]],
                                 device const float* Bt [[buffer(1)]],
                                 device float* C [[buffer(2)]],
                                 constant uint& N [[buffer(3)]],
                                 constant uint& K [[buffer(4)]],
                                 uint2 tgp [[threadgroup_position_in_grid]],
                                 ushort lane [[thread_index_in_simdgroup]]) {
    uint row0 = tgp.y * 8, col0 = tgp.x * 8;
    simdgroup_float8x8 acc(0.0f);
    for (uint k = 0; k < K; k += 8) {
        simdgroup_float8x8 a, b;
        simdgroup_load(a, A, K, ulong2(k, row0));
        simdgroup_load(b, Bt, K, ulong2(k, col0), true);
        simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    ushort qid = lane / 4;
    ushort fm = (qid & 4) + (lane / 2) % 4;
    ushort fn = (qid & 2) * 2 + (lane % 2) * 2;
    thread auto& e = acc.thread_elements();
    C[(row0 + fm) * N + col0 + fn] = e[0];
    C[(row0 + fm) * N + col0 + fn + 1] = e[1];
}

// half: D = A @ B (simdgroup_multiply) and E = A @ B + C, 8x8 blocks.
kernel void sgm_half(device const half* A [[buffer(0)]],
                     device const half* B [[buffer(1)]],
                     device const half* C [[buffer(2)]],
                     device half* D [[buffer(3)]],
                     device half* E [[buffer(4)]],
                     device float* F [[buffer(5)]]) {
    threadgroup half ta[64];
    simdgroup_half8x8 a, b, c, d, e;
    simdgroup_load(a, A);
    simdgroup_load(b, B);
    simdgroup_load(c, C);
    simdgroup_multiply(d, a, b);
    simdgroup_multiply_accumulate(e, a, b, c);
    simdgroup_store(d, D);
    simdgroup_store(e, ta);
    simdgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_half8x8 e2;
    simdgroup_load(e2, ta, 8, ulong2(0, 0), true);
    simdgroup_store(e2, E);  // E holds (A @ B + C).T
    // half inputs, float result
    simdgroup_float8x8 fa, fb, fc;
    simdgroup_load(fa, A);
    simdgroup_load(fb, B);
    simdgroup_multiply(fc, fa, fb);
    simdgroup_store(fc, F);
}

// C = op(A) @ op(B) (+ C), one 8x8 tile per simdgroup of 32 threads.
// dims: M, N, K, flags (1: A stored K x M, loaded transposed; 2: B stored
// N x K, loaded transposed; 4: accumulate onto C).
template <typename T, typename TAcc>
kernel void sgm_gemm_t(device const T* A [[buffer(0)]], device const T* B [[buffer(1)]],
                       device TAcc* C [[buffer(2)]], constant uint4& dims [[buffer(3)]],
                       uint2 tgp [[threadgroup_position_in_grid]]) {
    uint M = dims.x, N = dims.y, K = dims.z;
    bool ta = dims.w & 1, tb = dims.w & 2;
    uint row0 = tgp.y * 8, col0 = tgp.x * 8;
    simdgroup_matrix<TAcc, 8, 8> acc = make_filled_simdgroup_matrix<TAcc, 8, 8>(TAcc(0));
    if (dims.w & 4) simdgroup_load(acc, C, N, ulong2(col0, row0));
    for (uint k = 0; k < K; k += 8) {
        simdgroup_matrix<T, 8, 8> a, b;
        if (ta) simdgroup_load(a, A, M, ulong2(row0, k), true);
        else simdgroup_load(a, A, K, ulong2(k, row0));
        if (tb) simdgroup_load(b, B, K, ulong2(k, col0), true);
        else simdgroup_load(b, B, N, ulong2(col0, k));
        simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    simdgroup_store(acc, C, N, ulong2(col0, row0));
}
template [[host_name("sgm_gemm_f32")]] [[kernel]] decltype(sgm_gemm_t<float, float>) sgm_gemm_t<float, float>;
template [[host_name("sgm_gemm_f16")]] [[kernel]] decltype(sgm_gemm_t<half, half>) sgm_gemm_t<half, half>;
template [[host_name("sgm_gemm_f16_f32")]] [[kernel]] decltype(sgm_gemm_t<half, float>) sgm_gemm_t<half, float>;
template [[host_name("sgm_gemm_bf16")]] [[kernel]] decltype(sgm_gemm_t<bfloat, bfloat>) sgm_gemm_t<bfloat, bfloat>;
template [[host_name("sgm_gemm_bf16_f32")]] [[kernel]] decltype(sgm_gemm_t<bfloat, float>) sgm_gemm_t<bfloat, float>;

// thread_elements() mixed with multiplies: each lane changes its own elements
// (also through a reference it keeps) between loads and multiplies.
kernel void sgm_elements_mix(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                             device float* out [[buffer(2)]], ushort lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 a, b, d;
    simdgroup_load(a, A);
    simdgroup_load(b, B);
    a.thread_elements() *= float(lane % 3 + 1);
    thread auto& be = b.thread_elements();
    simdgroup_multiply(d, a, b);                // b as loaded
    be[1] = -be[1];
    d.thread_elements()[0] += 100.0f;
    simdgroup_multiply_accumulate(d, d, b, a);  // d = d @ b + a, b with its odd columns negated
    simdgroup_store(d, out);
    out[64 + 2 * lane] = d.thread_elements()[0];
    out[64 + 2 * lane + 1] = d.thread_elements()[1];
}

// The lanes that take part: the threadgroup's size (a partial simdgroup at
// the end) and lanes that return before the multiply.
kernel void sgm_partial(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                        device float* out [[buffer(2)]], constant uint& keep [[buffer(3)]],
                        ushort sg [[simdgroup_index_in_threadgroup]], ushort lane [[thread_index_in_simdgroup]]) {
    if (lane >= keep) return;
    simdgroup_float8x8 a, b, d;
    simdgroup_load(a, A);
    simdgroup_load(b, B);
    simdgroup_multiply(d, a, b);
    simdgroup_store(d, out + 64 * sg);
}
"""


@pytest.fixture(scope="module")
def mlib(dev):
    return pm.compile(SGM_SRC)


def test_simdgroup_matrix_loads_stores_and_lane_layout(mlib):
    S = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = np.full((8, 8, 8), np.nan, np.float32)
    big = np.full((16, 16), -1, np.float32)
    te = np.full((32, 2), np.nan, np.float32)
    mlib.sgm_loads(S, out, big, te, groups=1, threadgroup=32)
    T = S + 1000
    S0 = S.ravel()[:64].reshape(8, 8)  # default elements_per_row: 8
    np.testing.assert_array_equal(out[0], S0)
    np.testing.assert_array_equal(out[1], S[3:11, 4:12])
    np.testing.assert_array_equal(out[2], S[5:13, 2:10].T)
    np.testing.assert_array_equal(out[3], T[1:9, 7:15])
    np.testing.assert_array_equal(out[4], T[8:16, 8:16].T)
    np.testing.assert_array_equal(out[5], np.full((8, 8), 3.5))
    np.testing.assert_array_equal(out[6], 2 * np.eye(8))
    np.testing.assert_array_equal(out[7], S[3:11, 4:12].T)
    exp_big = np.full((16, 16), -1, np.float32)
    exp_big[1:9, 8:16] = S[3:11, 4:12].T
    exp_big[8:16, 0:8] = S0
    np.testing.assert_array_equal(big, exp_big)
    # lane l holds row (qid & 4) + (l / 2) % 4, columns (qid & 2) * 2 + (l % 2) * 2 + {0, 1}
    for lane in range(32):
        qid = lane // 4
        r = (qid & 4) + (lane // 2) % 4
        c0 = (qid & 2) * 2 + (lane % 2) * 2
        assert te[lane].tolist() == [S0[r, c0], S0[r, c0 + 1]], lane
    # every element exactly once
    assert sorted(te.ravel().tolist()) == sorted(S0.ravel().tolist())


@pytest.mark.parametrize("M,N,K", [(8, 8, 8), (16, 24, 40), (40, 8, 16), (64, 48, 32)])
@pytest.mark.parametrize("accumulate", [0, 1])
def test_simdgroup_matrix_gemm_float(mlib, M, N, K, accumulate):
    rng = _rng(M * N + K + accumulate)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    C = C0.copy()
    mlib.sgm_gemm(A, B, C, np.uint32(M), np.uint32(N), np.uint32(K), np.uint32(accumulate),
                  groups=(-(-N // 16), -(-M // 16)), threadgroup=128)
    ref = A.astype(np.float64) @ B.astype(np.float64) + (C0 if accumulate else 0)
    np.testing.assert_allclose(C, ref, rtol=1e-4, atol=1e-4 * np.sqrt(K))


@pytest.mark.parametrize("M,N,K", [(8, 8, 8), (24, 16, 40)])
def test_simdgroup_matrix_gemm_transposed_thread_elements(mlib, M, N, K):
    rng = _rng(M + N + K)
    A = rng.standard_normal((M, K)).astype(np.float32)
    Bt = rng.standard_normal((N, K)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    mlib.sgm_gemm_nt_elements(A, Bt, C, np.uint32(N), np.uint32(K), groups=(N // 8, M // 8), threadgroup=32)
    np.testing.assert_allclose(C, A.astype(np.float64) @ Bt.T.astype(np.float64), rtol=1e-4, atol=1e-4 * np.sqrt(K))


def _lane_pos(lane):
    q = lane // 4
    return (q & 4) + (lane // 2) % 4, (q & 2) * 2 + (lane % 2) * 2


SGM_TYPES = {  # kernel: (input dtype, result dtype); bfloat as its bits in uint16 (_bf16_round below)
    "sgm_gemm_f32": (np.float32, np.float32),
    "sgm_gemm_f16": (np.float16, np.float16),
    "sgm_gemm_f16_f32": (np.float16, np.float32),
    "sgm_gemm_bf16": ("bfloat", "bfloat"),
    "sgm_gemm_bf16_f32": ("bfloat", np.float32),
}


@pytest.mark.parametrize("kernel", list(SGM_TYPES))
@pytest.mark.parametrize("M,N,K", [(8, 8, 8), (16, 24, 32), (40, 8, 16)])
@pytest.mark.parametrize("flags", range(8))
def test_simdgroup_matrix_types_and_transposed_loads(mlib, kernel, M, N, K, flags):
    tin, tout = SGM_TYPES[kernel]
    rng = _rng(M * N + K + flags)
    exact = tin != np.float32  # small integers: every product and sum exact in half and bfloat
    if exact:
        a, b, c = (rng.integers(-2, 3, size=shape).astype(np.float32) for shape in [(M, K), (K, N), (M, N)])
    else:
        a, b, c = (rng.standard_normal(shape).astype(np.float32) for shape in [(M, K), (K, N), (M, N)])

    def as_type(x, t):
        return _bf16_round(x) if t == "bfloat" else x.astype(t)

    A = as_type(a.T.copy() if flags & 1 else a, tin)
    B = as_type(b.T.copy() if flags & 2 else b, tin)
    C = as_type(c, tout)
    mlib.function(kernel)(A, B, C, np.array([M, N, K, flags], np.uint32).tobytes(),
                          groups=(N // 8, M // 8), threadgroup=32)
    ref = a.astype(np.float64) @ b.astype(np.float64) + (c if flags & 4 else 0)
    got = _bf16_value(C) if tout == "bfloat" else C.astype(np.float64)
    if exact:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.sqrt(K))


def test_simdgroup_matrix_thread_elements_mixed_with_multiplies(mlib):
    rng = _rng(5)
    A = rng.integers(-4, 5, size=(8, 8)).astype(np.float32)
    B = rng.integers(-4, 5, size=(8, 8)).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    mlib.sgm_elements_mix(A, B, out, groups=1, threadgroup=32)
    a = A.copy()
    for lane in range(32):
        r, c = _lane_pos(lane)
        a[r, c:c + 2] *= lane % 3 + 1
    d = a @ B
    d[:, 0::2] += 100  # every lane's element 0: the even columns
    b2 = B.copy()
    b2[:, 1::2] *= -1
    expected = d @ b2 + a
    np.testing.assert_array_equal(out[:64].reshape(8, 8), expected)
    for lane in range(32):
        r, c = _lane_pos(lane)
        assert out[64 + 2 * lane:66 + 2 * lane].tolist() == expected[r, c:c + 2].tolist(), lane


@pytest.mark.parametrize("tg,keep", [(40, 32), (32, 16), (64, 5)])
def test_cpu_simdgroup_matrix_missing_lanes_read_as_zero(mlib, tg, keep):
    # Undefined on a GPU; the CPU backend documents that elements of lanes that
    # do not exist or returned read as 0 (pm_msl/simdgroup_matrix.h).
    if pm.device().backend != "cpu":
        pytest.skip("the CPU backend's choice")
    rng = _rng(tg + keep)
    A = rng.integers(-4, 5, size=(8, 8)).astype(np.float32)
    B = rng.integers(-4, 5, size=(8, 8)).astype(np.float32)
    nsg = -(-tg // 32)
    out = np.full((nsg, 8, 8), np.nan, np.float32)
    mlib.sgm_partial(A, B, out, np.uint32(keep), groups=1, threadgroup=tg)
    for sg in range(nsg):
        lanes = range(min(32, tg - 32 * sg, keep))
        mask = np.zeros((8, 8), bool)
        for lane in lanes:
            r, c = _lane_pos(lane)
            mask[r, c:c + 2] = True
        expected = np.where(mask, A, 0) @ np.where(mask, B, 0)
        np.testing.assert_array_equal(out[sg][mask], expected[mask])
        assert np.isnan(out[sg][~mask]).all()


def test_simdgroup_matrix_half(mlib):
    rng = _rng(8)
    # small integers: every product and sum is exact in half
    A = rng.integers(-3, 4, size=(8, 8)).astype(np.float16)
    B = rng.integers(-3, 4, size=(8, 8)).astype(np.float16)
    C = rng.integers(-20, 20, size=(8, 8)).astype(np.float16)
    D = np.zeros((8, 8), np.float16)
    E = np.zeros((8, 8), np.float16)
    F = np.zeros((8, 8), np.float32)
    mlib.sgm_half(A, B, C, D, E, F, groups=1, threadgroup=32)
    ab = A.astype(np.float32) @ B.astype(np.float32)
    np.testing.assert_array_equal(D.astype(np.float32), ab)
    np.testing.assert_array_equal(E.astype(np.float32), (ab + C.astype(np.float32)).T)
    np.testing.assert_array_equal(F, ab)


# ===========================================================================
# Template kernels and host names
# ===========================================================================

TEMPLATE_SRC = HEADER + r"""
template <typename T>
kernel void axpy(device const T* x [[buffer(0)]],
                 device T* y [[buffer(1)]],
                 constant T& a [[buffer(2)]],
                 uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
template [[host_name("axpy_f32")]] [[kernel]] decltype(axpy<float>) axpy<float>;
template [[host_name("axpy_f16")]] [[kernel]] decltype(axpy<half>) axpy<half>;
template [[host_name("axpy_i32")]] [[kernel]] decltype(axpy<int>) axpy<int>;

template <typename T>
[[kernel]] void iota_from(device T* a [[buffer(0)]],
                          constant T& start [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    a[i] = start + T(i);
}
template [[host_name("iota_int")]] [[kernel]] void iota_from<int>(device int* a [[buffer(0)]],
                                                                  constant int& start [[buffer(1)]],
                                                                  uint i [[thread_position_in_grid]]);
template [[host_name("iota_uint")]] [[kernel]] void iota_from<uint>(device uint* a [[buffer(0)]],
                                                                    constant uint& start [[buffer(1)]],
                                                                    uint i [[thread_position_in_grid]]);

template <typename T>
inline T simd_total_of(T v) { return simd_sum(v); }

template <typename T>
[[kernel]] void simd_total(device const T* x [[buffer(0)]],
                           device T* out [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
    out[i] = simd_total_of(x[i]);
}

// A two-level block reduction with a template block size.
template <typename T, int BLOCK>
[[kernel]] void block_sum(device const T* x [[buffer(0)]],
                          device T* out [[buffer(1)]],
                          uint i [[thread_position_in_grid]],
                          uint tg [[threadgroup_position_in_grid]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup T partial[BLOCK / 32];
    T s = simd_sum(x[i]);
    if (lane == 0) partial[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        T t = simd_sum(lane < nsg ? partial[lane] : T(0));
        if (lane == 0) out[tg] = t;
    }
}

#define instantiate(name, T) template [[host_name(#name "_" #T)]] [[kernel]] decltype(name<T>) name<T>;
instantiate(simd_total, float)
instantiate(simd_total, int)
instantiate(simd_total, uint)

#define instantiate_block(T, B) \
    template [[host_name("block_sum_" #T "_" #B)]] [[kernel]] decltype(block_sum<T, B>) block_sum<T, B>;
instantiate_block(float, 64)
instantiate_block(int, 256)
"""

TEMPLATE_NAMES = {"axpy_f32", "axpy_f16", "axpy_i32", "iota_int", "iota_uint", "simd_total_float",
                  "simd_total_int", "simd_total_uint", "block_sum_float_64", "block_sum_int_256"}


@pytest.fixture(scope="module")
def tmlib(dev):
    return pm.compile(TEMPLATE_SRC)


def test_template_host_names_listed_exactly(tmlib):
    assert sorted(tmlib.functions) == sorted(TEMPLATE_NAMES)
    for name in ("axpy", "iota_from", "simd_total", "block_sum", "simd_total_of"):
        with pytest.raises(pm.NotFoundError):
            tmlib.function(name)


@pytest.mark.parametrize("n", [1, 33, 1000])
def test_template_decltype_instantiations(tmlib, n):
    rng = _rng(n)
    for name, dt, a in (("axpy_f32", np.float32, np.float32(2.5)), ("axpy_f16", np.float16, np.float16(-1.5)),
                        ("axpy_i32", np.int32, np.int32(7))):
        x = rng.integers(-100, 100, size=n).astype(dt)
        y = rng.integers(-100, 100, size=n).astype(dt)
        expected = (a * x + y).astype(dt)
        tmlib.function(name)(x, y, a, grid=n)
        np.testing.assert_array_equal(y, expected)


def test_template_repeated_attributes_form(tmlib):
    a = np.zeros(100, np.int32)
    tmlib.iota_int(a, np.int32(-50), grid=100)
    np.testing.assert_array_equal(a, np.arange(-50, 50))
    b = np.zeros(100, np.uint32)
    tmlib.iota_uint(b, np.uint32(4000000000), grid=100)
    np.testing.assert_array_equal(b, np.arange(100, dtype=np.uint64) + 4000000000)


@pytest.mark.parametrize("n,tg", [(33, 32), (1000, 40)])
def test_template_macro_instantiation(tmlib, n, tg):
    rng = _rng(n)
    for T, dt in (("float", np.float32), ("int", np.int32), ("uint", np.uint32)):
        x = rng.integers(0, 100, size=n).astype(dt)
        out = np.zeros(n, dt)
        tmlib.function("simd_total_" + T)(x, out, grid=n, threadgroup=tg)
        for s, size in _groups_1d(n, tg):
            for b in range(s, s + size, 32):
                e = min(b + 32, s + size)
                np.testing.assert_array_equal(out[b:e], x[b:e].sum())
    for name, dt, block in (("block_sum_float_64", np.float32, 64), ("block_sum_int_256", np.int32, 256)):
        n2 = 1000
        x = rng.integers(-100, 100, size=n2).astype(dt)
        groups = _groups_1d(n2, block)
        out = np.zeros(len(groups), dt)
        tmlib.function(name)(x, out, grid=n2, threadgroup=block)
        np.testing.assert_array_equal(out, [x[s:s + k].sum() for s, k in groups])


# ===========================================================================
# Pipeline limits, bfloat, float atomics, poisoned threadgroup memory, errors
# ===========================================================================

MISC_SRC = HEADER + r"""
[[max_total_threads_per_threadgroup(256)]]
kernel void capped(device uint* out [[buffer(0)]],
                   uint i [[thread_position_in_grid]],
                   uint lid [[thread_index_in_threadgroup]],
                   uint size [[threads_per_threadgroup]]) {
    threadgroup uint count[1];
    if (lid == 0) count[0] = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit((threadgroup atomic_uint*)&count[0], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = count[0] * 1000 + size;
}

kernel void bf_ops(device const bfloat* a [[buffer(0)]],
                   device const bfloat* b [[buffer(1)]],
                   device bfloat* out [[buffer(2)]],
                   device float* outf [[buffer(3)]],
                   device const float* f [[buffer(4)]],
                   uint i [[thread_position_in_grid]]) {
    bfloat x = a[i], y = b[i];
    bfloat p = x * y;
    bfloat s = p + x;
    bfloat q = s - 1.5bf;
    bfloat m = max(x, y);
    out[5 * i + 0] = p;
    out[5 * i + 1] = s;
    out[5 * i + 2] = q;
    out[5 * i + 3] = m;
    out[5 * i + 4] = bfloat(f[i]);
    outf[i] = float(x) * float(y);
}

kernel void fatomic_device(device const float* x [[buffer(0)]],
                           device const uint* bin [[buffer(1)]],
                           device atomic_float* acc [[buffer(2)]],
                           uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(&acc[bin[i]], x[i], memory_order_relaxed);
    atomic_fetch_sub_explicit(&acc[bin[i]], 0.25f, memory_order_relaxed);
}

// Reads threadgroup memory before anything writes it (fibers: has barriers).
kernel void read_uninit(device uint* out [[buffer(0)]],
                        threadgroup uint* dyn [[threadgroup(0)]],
                        uint i [[thread_position_in_grid]],
                        uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint st[64];
    threadgroup half hs[64];
    out[3 * i] = st[lid];
    out[3 * i + 1] = dyn[lid];
    out[3 * i + 2] = as_type<ushort>(hs[lid]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    st[lid] = 0x12345678u + i;
    dyn[lid] = 0x9abcdef0u + i;
    hs[lid] = half(1.0h);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[3 * i] += st[lid] - (0x12345678u + i);
}

// The same without barriers (runs as a plain loop over the group's threads).
kernel void read_uninit_loop(device uint* out [[buffer(0)]],
                             uint i [[thread_position_in_grid]],
                             uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint st[64];
    out[i] = st[lid];
    st[lid] = 7u;
}

kernel void edge_sizes(device uint* out [[buffer(0)]],
                       uint i [[thread_position_in_grid]],
                       uint size [[threads_per_threadgroup]],
                       uint dsize [[dispatch_threads_per_threadgroup]],
                       uint nsg [[simdgroups_per_threadgroup]],
                       uint ngroups [[threadgroups_per_grid]]) {
    out[4 * i] = size; out[4 * i + 1] = dsize; out[4 * i + 2] = nsg; out[4 * i + 3] = ngroups;
}

// ---- errors -----------------------------------------------------------------
kernel void bad_barrier(device float* x [[buffer(0)]],
                        uint lid [[thread_index_in_threadgroup]]) {
    if (lid == 3) return;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x[lid] = 1.0f;
}

kernel void bad_simd(device float* x [[buffer(0)]],
                     uint lane [[thread_index_in_simdgroup]],
                     uint i [[thread_position_in_grid]]) {
    float v = x[i];
    if (lane < 5) v = simd_sum(v);
    x[i] = simd_max(v);
}

kernel void tg_static_too_big(device float* x [[buffer(0)]],
                              uint lid [[thread_index_in_threadgroup]]) {
    threadgroup float t[9000];
    t[lid] = x[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x[lid] = t[8999 - lid];
}

kernel void tg_dynamic(device float* x [[buffer(0)]],
                       threadgroup float* t [[threadgroup(0)]],
                       uint lid [[thread_index_in_threadgroup]]) {
    t[lid] = x[lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    x[lid] = t[lid] * 2.0f;
}
"""


@pytest.fixture(scope="module")
def xlib(dev):
    return pm.compile(MISC_SRC)


# atomic_float load / store / exchange / compare-exchange, device and threadgroup (MSL 3.0)
FATOMIC_SRC = HEADER + r"""
kernel void fatomic_threadgroup(device const float* x [[buffer(0)]],
                                device atomic_float* total [[buffer(1)]],
                                device float* group_sums [[buffer(2)]],
                                uint i [[thread_position_in_grid]],
                                uint lid [[thread_index_in_threadgroup]],
                                uint tg [[threadgroup_position_in_grid]]) {
    threadgroup atomic_float s;
    if (lid == 0) atomic_store_explicit(&s, 0.0f, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&s, x[i], memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) {
        float v = atomic_load_explicit(&s, memory_order_relaxed);
        group_sums[tg] = v;
        atomic_fetch_add_explicit(total, v, memory_order_relaxed);
    }
}

kernel void fatomic_cas_max(device const float* x [[buffer(0)]],
                            device atomic_float* mx [[buffer(1)]],
                            device float* old [[buffer(2)]],
                            device atomic_float* slot [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
    float v = x[i];
    float cur = atomic_load_explicit(mx, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(mx, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed)) {
    }
    old[i] = atomic_exchange_explicit(slot, float(i), memory_order_relaxed);
}

"""


@pytest.fixture(scope="module")
def falib(dev):
    return pm.compile(FATOMIC_SRC)


def test_max_total_threads_per_threadgroup(xlib):
    fn = xlib.capped
    assert fn.max_threads_per_threadgroup == 256
    out = np.zeros(600, np.uint32)
    fn(out, grid=600, threadgroup=256)
    sizes = np.repeat([256, 256, 88], [256, 256, 88])
    np.testing.assert_array_equal(out, sizes * 1000 + sizes)
    with pytest.raises(ValueError):
        fn(out, grid=600, threadgroup=512)
    with pytest.raises(ValueError):
        fn(out, groups=2, threadgroup=(16, 32))
    out[:] = 0
    fn(out, grid=600)  # the default threadgroup respects the cap
    assert (out % 1000 <= 256).all() and (out // 1000 == out % 1000).all()


def test_threadgroup_larger_than_pipeline_allows(xlib, basic_lib):
    for fn in (xlib.bad_barrier, basic_lib.add):
        limit = fn.max_threads_per_threadgroup
        assert 0 < limit <= 1024
        a = np.zeros(4 * limit, np.float32)
        args = (a, a, a) if fn is basic_lib.add else (a,)
        with pytest.raises(ValueError):
            fn(*args, grid=2 * limit, threadgroup=limit + 1)
        with pytest.raises(ValueError):
            fn(*args, groups=1, threadgroup=(limit + 1, 1, 1))
        with pytest.raises(ValueError):
            fn(*args, groups=1, threadgroup=(32, 32, 2))


def _bf16_round(f):
    """float32 -> bfloat16 bits, round to nearest even (no NaNs here)."""
    b = np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_value(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def test_bfloat_arithmetic(xlib):
    n = 1000
    rng = _rng(16)
    fa = (rng.uniform(0.5, 4, n) * rng.choice([-1, 1], n)).astype(np.float32)
    fb = (rng.uniform(0.5, 4, n) * rng.choice([-1, 1], n)).astype(np.float32)
    a, b = _bf16_round(fa), _bf16_round(fb)
    f = rng.standard_normal(n).astype(np.float32) * 100
    out = np.zeros((n, 5), np.uint16)
    outf = np.zeros(n, np.float32)
    xlib.bf_ops(a, b, out, outf, f, grid=n)
    x, y = _bf16_value(a), _bf16_value(b)
    p = _bf16_round(x * y)  # exact in float32, one rounding to bfloat
    s = _bf16_round(_bf16_value(p) + x)
    q = _bf16_round(_bf16_value(s) - np.float32(1.5))
    np.testing.assert_array_equal(outf, x * y)
    np.testing.assert_array_equal(out[:, 0], p)
    np.testing.assert_array_equal(out[:, 1], s)
    np.testing.assert_array_equal(out[:, 2], q)
    np.testing.assert_array_equal(out[:, 3], np.where(x >= y, a, b))
    np.testing.assert_array_equal(out[:, 4], _bf16_round(f))


@pytest.mark.parametrize("n", [1, 33, 4097, 100000])
def test_float_atomics_device(xlib, n):
    rng = _rng(n)
    x = rng.integers(-50, 50, size=n).astype(np.float32)
    bins = rng.integers(0, 16, size=n).astype(np.uint32)
    acc = np.zeros(16, np.float32)
    xlib.fatomic_device(x, bins, acc, grid=n)
    expected = np.bincount(bins, weights=x.astype(np.float64) - 0.25, minlength=16)
    np.testing.assert_array_equal(acc, expected.astype(np.float32))


@pytest.mark.parametrize("n,tg", [(1, 32), (33, 32), (1000, 100), (4097, 1024)])
def test_float_atomics_threadgroup(falib, n, tg):
    x = _int_floats(_rng(n + tg), n)
    total = np.zeros(1, np.float32)
    groups = _groups_1d(n, tg)
    gs = np.full(len(groups), np.nan, np.float32)
    falib.fatomic_threadgroup(x, total, gs, grid=n, threadgroup=tg)
    np.testing.assert_array_equal(gs, [x[s:s + k].sum() for s, k in groups])
    assert total[0] == x.sum(dtype=np.float64)


@pytest.mark.parametrize("n", [1, 1000, 50000])
def test_float_atomics_compare_exchange_and_exchange(falib, n):
    x = _rng(n).standard_normal(n).astype(np.float32)
    mx = np.full(1, -np.inf, np.float32)
    old = np.full(n, np.nan, np.float32)
    slot = np.full(1, -1.0, np.float32)
    falib.fatomic_cas_max(x, mx, old, slot, grid=n)
    assert mx[0] == x.max()
    # exchange: the old values and the final value are the initial value and 0..n-1, each once
    seen = np.sort(np.concatenate([old, slot]))
    np.testing.assert_array_equal(seen, np.concatenate([[-1.0], np.arange(n)]).astype(np.float32))


@pytest.mark.cpu_backend
@pytest.mark.parametrize("tg", [32, 64])
def test_threadgroup_memory_poisoned_each_group(xlib, tg):
    ngroups = 40
    out = np.zeros((ngroups * tg, 3), np.uint32)
    xlib.read_uninit(out, groups=ngroups, threadgroup=tg, threadgroup_memory=tg * 4)
    np.testing.assert_array_equal(out[:, 0], 0xFFFFFFFF)  # static, not zeros nor a previous group's values
    np.testing.assert_array_equal(out[:, 1], 0xFFFFFFFF)  # [[threadgroup(0)]]
    np.testing.assert_array_equal(out[:, 2], 0xFFFF)      # half: a NaN pattern
    out2 = np.zeros(ngroups * tg, np.uint32)
    xlib.read_uninit_loop(out2, groups=ngroups, threadgroup=tg)
    np.testing.assert_array_equal(out2, 0xFFFFFFFF)


def test_edge_threadgroup_sizes(xlib):
    n, tg = 100, 40
    out = np.zeros((n, 4), np.uint32)
    xlib.edge_sizes(out, grid=n, threadgroup=tg)
    size = np.repeat([40, 40, 20], [40, 40, 20])
    np.testing.assert_array_equal(out[:, 0], size)
    np.testing.assert_array_equal(out[:, 1], 40)
    np.testing.assert_array_equal(out[:, 2], (size + 31) // 32)
    np.testing.assert_array_equal(out[:, 3], 3)


@pytest.mark.cpu_backend
def test_barrier_after_a_return_runs_as_on_a_gpu(xlib):
    # A thread that returned counts as arrived at later barriers, as on Apple GPUs (MLX's gemv and
    # col_reduce_small rely on it); PYMETAL_VALIDATION=1 reports it (test_barrier_divergence.py).
    x = np.zeros(64, np.float32)
    exc = _call_with_timeout(lambda: xlib.bad_barrier(x, groups=1, threadgroup=64))
    assert exc is None, repr(exc)
    np.testing.assert_array_equal(x, np.where(np.arange(64) == 3, 0, 1))
    # the library (and the worker that ran it) still work afterwards
    y = np.zeros(64, np.float32)
    xlib.tg_dynamic(y + 1, groups=1, threadgroup=64, threadgroup_memory=256)
    out = np.zeros(64, np.uint32)
    xlib.read_uninit_loop(out, groups=1, threadgroup=64)
    np.testing.assert_array_equal(out, 0xFFFFFFFF)


def test_simd_function_under_divergent_control_flow(xlib):
    # On a GPU the lanes that take a branch run it together: the simd_sum is over them.
    # The CPU backend runs this kernel in SIMD lockstep, which does the same.
    x = np.arange(64, dtype=np.float32) % 7
    expected = x.reshape(2, 32).copy()
    expected[:, :5] = expected[:, :5].sum(axis=1, keepdims=True)
    expected = np.repeat(expected.max(axis=1), 32)
    xlib.bad_simd(x, grid=64, threadgroup=64)
    np.testing.assert_array_equal(x, expected)


@pytest.mark.cpu_backend
def test_simd_function_under_divergent_control_flow_raises_on_fibers():
    # One fiber per thread cannot tell which lanes will come: it reports the divergence.
    xlib = pm.compile(MISC_SRC, defines={"PM_NO_LOCKSTEP": None})
    x = np.ones(64, np.float32)
    exc = _call_with_timeout(lambda: xlib.bad_simd(x, grid=64, threadgroup=64))
    assert isinstance(exc, pm.KernelError), repr(exc)
    msg = str(exc)
    assert "bad_simd" in msg and "divergent" in msg, msg
    assert "line %d" % _line_of(MISC_SRC, "bad_simd", "simd_sum(") in msg, msg
    # lanes that *returned* are inactive instead: see test_simd_functions_skip_lanes_that_returned


@pytest.mark.cpu_backend
def test_static_threadgroup_memory_too_large(xlib):
    x = np.zeros(64, np.float32)
    with pytest.raises(pm.Error) as e:
        fn = xlib.function("tg_static_too_big")
        fn(x, groups=1, threadgroup=64)
    msg = str(e.value)
    assert "tg_static_too_big" in msg and "threadgroup memory" in msg, msg


def test_dynamic_threadgroup_memory_too_large(xlib):
    fn = xlib.tg_dynamic
    assert fn.static_threadgroup_memory == 0
    x = np.arange(64, dtype=np.float32)
    fn(x, groups=1, threadgroup=64, threadgroup_memory=256)
    np.testing.assert_array_equal(x, np.arange(64) * 2)
    with pytest.raises((pm.Error, ValueError)) as e:
        fn(x, groups=1, threadgroup=64, threadgroup_memory=40000)
    assert "threadgroup memory" in str(e.value)
    np.testing.assert_array_equal(x, np.arange(64) * 2)  # not run


def test_static_threadgroup_memory_reported(xlib, rlib):
    assert rlib.tree_sum_static.static_threadgroup_memory >= 256 * 4
    assert rlib.tree_sum_dynamic.static_threadgroup_memory == 0
    assert xlib.read_uninit.static_threadgroup_memory >= 64 * 4 + 64 * 2
