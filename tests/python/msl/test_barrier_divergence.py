"""Barriers that not every thread reaches, as Apple GPUs run them (runtime_common.h, gpu_barriers).

Real MLX kernels rely on it: gemv returns whole simdgroups past the output and puts its
threadgroup reduction's barrier inside `if (thrN == 0)`; gemv_t's lanes past a partial tile skip
the loop whose steps end at a barrier and wait at the simd_shuffle_down after it;
col_reduce_small returns the threads past the row's width before its barrier. Outside
validation these run and match NumPy in both execution modes; under PYMETAL_VALIDATION=1 MSL's
rule (every thread reaches every barrier) is kept and they are reported as "barrier divergence".
Barriers that would pair up wrongly on a GPU (simdgroups waiting at different barrier calls) stay
errors in every mode. The kernels are our own, in MLX's idioms.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pymetal as pm
from msl_kernels import MODES, compile_mode

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// gemv (MLX: the input >= 16x longer than the output): simdgroup r of the group owns row
// gid * ROWS + r for K slice `ks`; a simdgroup whose row is past the output returns, then the
// others meet at a barrier to add up the K slices. threadgroup (32, KS, ROWS).
constant constexpr int KS = 2, ROWS = 4;
kernel void gemv_return(const device float* mat [[buffer(0)]], const device float* vec [[buffer(1)]],
                        device float* out [[buffer(2)]], constant int& K [[buffer(3)]],
                        constant int& M [[buffer(4)]], uint3 gid [[threadgroup_position_in_grid]],
                        uint3 lid [[thread_position_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float partial[ROWS * KS];
    const int row = int(gid.x) * ROWS + int(lid.z);
    if (row >= M) return;                           // "exit simdgroup if rows out of bound"
    float acc = 0;
    for (int k = int(lid.y) * 32 + int(lane); k < K; k += 32 * KS) acc += mat[row * K + k] * vec[k];
    acc = simd_sum(acc);
    if (lane == 0) partial[lid.z * KS + lid.y] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0 && lid.y == 0) {
        float total = 0;
        for (int s = 0; s < KS; s++) total += partial[lid.z * KS + s];
        out[row] = total;
    }
}

// The same with gemv's reduction: the barrier inside the branch lane 0 of each simdgroup takes.
kernel void gemv_branch(const device float* mat [[buffer(0)]], const device float* vec [[buffer(1)]],
                        device float* out [[buffer(2)]], constant int& K [[buffer(3)]],
                        constant int& M [[buffer(4)]], uint3 gid [[threadgroup_position_in_grid]],
                        uint3 lid [[thread_position_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float partial[ROWS * KS];
    const int row = int(gid.x) * ROWS + int(lid.z);
    if (row >= M) return;
    float acc = 0;
    for (int k = int(lid.y) * 32 + int(lane); k < K; k += 32 * KS) acc += mat[row * K + k] * vec[k];
    acc = simd_sum(acc);
    if (lane == 0) {
        partial[lid.z * KS + lid.y] = acc;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (lid.y == 0) {
            float total = 0;
            for (int s = 0; s < KS; s++) total += partial[lid.z * KS + s];
            out[row] = total;
        }
    }
}

// gemv_t (vector times matrix): lane % 8 picks one of 8 columns, lane / 8 one of 4 K slices;
// lanes past the output skip the loop (the same steps in every lane that runs it, each ending at
// a barrier) and wait at the shuffles after it. A group of 64: two simdgroups of 8 columns each,
// so at a partial tile whole simdgroups, or some lanes of one, skip the loop.
kernel void gemv_t_tile(const device float* mat [[buffer(0)]], const device float* vec [[buffer(1)]],
                        device float* out [[buffer(2)]], constant int& K [[buffer(3)]],
                        constant int& N [[buffer(4)]], uint gid [[threadgroup_position_in_grid]],
                        uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    const int col = int(gid) * 16 + int(sg) * 8 + int(lane % 8);
    const int slice = int(lane / 8);
    float acc = 0;
    if (col < N) {
        for (int k0 = 0; k0 < K; k0 += 4) {
            threadgroup_barrier(mem_flags::mem_none);
            int k = k0 + slice;
            if (k < K) acc += mat[k * N + col] * vec[k];
        }
    }
    acc += simd_shuffle_down(acc, 16);
    acc += simd_shuffle_down(acc, 8);
    if (lane < 8 && col < N) out[col] = acc;
}

// col_reduce_small: threads (x: 4 columns each, y: rows); those past the width return, the others
// sum their rows and meet at a barrier to add up the row slices. threadgroup (32, 2..8).
kernel void col_sum(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                    constant int& rows [[buffer(2)]], constant int& width [[buffer(3)]],
                    uint3 gid [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]],
                    uint3 lsize [[threads_per_threadgroup]]) {
    const int column = int(gid.x * lsize.x + lid.x) * 4;
    if (column >= width) return;
    float totals[4] = {0, 0, 0, 0};
    for (int r = int(lid.y); r < rows; r += int(lsize.y))
        for (int i = 0; i < 4; i++)
            if (column + i < width) totals[i] += in[r * width + column + i];
    threadgroup float shared_vals[8 * 32 * 4];
    for (int i = 0; i < 4; i++) shared_vals[(lid.y * lsize.x + lid.x) * 4 + i] = totals[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid.y == 0) {
        for (uint j = 1; j < lsize.y; j++)
            for (int i = 0; i < 4; i++) totals[i] += shared_vals[(j * lsize.x + lid.x) * 4 + i];
        for (int i = 0; i < 4 && column + i < width; i++) out[column + i] = totals[i];
    }
}

// Deadlocks: each simdgroup waits at a barrier the other never calls.
kernel void split_barriers(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                           uint sg [[simdgroup_index_in_threadgroup]]) {
    if (sg == 0) threadgroup_barrier(mem_flags::mem_threadgroup);
    else threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = 1;
}
// ... and threads that skip a barrier only to wait at a later one.
kernel void skip_then_wait(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
                           uint t [[thread_position_in_threadgroup]]) {
    threadgroup float sh[64];
    sh[t] = float(t);
    if (t < 16) threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = sh[63 - t];
}
"""


@pytest.fixture(scope="module", params=MODES)
def lib(dev, request):
    return compile_mode(SOURCE, request.param)


def _gemv(lib, name, M, K):
    rng = np.random.default_rng(M * 1000 + K)
    mat = rng.standard_normal((M, K)).astype(np.float32)
    vec = rng.standard_normal(K).astype(np.float32)
    out = np.full(M, np.nan, np.float32)
    groups = max(1, (M + 3) // 4)
    getattr(lib, name)(mat, vec, out, np.int32(K), np.int32(M), groups=(groups, 1, 1), threadgroup=(32, 2, 4))
    return out, mat.astype(np.float64) @ vec


@pytest.mark.parametrize("name", ["gemv_return", "gemv_branch"])
@pytest.mark.parametrize("M,K", [(1, 64), (2, 33), (3, 100), (5, 97), (4, 1), (7, 1000), (9, 130)])
def test_gemv_with_returned_simdgroups_matches_numpy(lib, name, M, K):
    out, want = _gemv(lib, name, M, K)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("N,K", [(1, 9), (3, 1), (5, 17), (8, 20), (13, 9), (16, 40), (20, 7), (40, 33), (100, 300)])
def test_gemv_t_partial_tile_matches_numpy(lib, N, K):
    rng = np.random.default_rng(N * 1000 + K)
    mat = rng.standard_normal((K, N)).astype(np.float32)
    vec = rng.standard_normal(K).astype(np.float32)
    out = np.full(N, np.nan, np.float32)
    lib.gemv_t_tile(mat, vec, out, np.int32(K), np.int32(N), groups=(N + 15) // 16, threadgroup=64)
    np.testing.assert_allclose(out, vec.astype(np.float64) @ mat, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("rows,width", [(2, 1), (2, 200), (3, 129), (5, 130), (8, 5), (17, 1000), (31, 4100)])
def test_col_reduce_small_with_returned_threads_matches_numpy(lib, rows, width):
    rng = np.random.default_rng(rows * width)
    x = rng.standard_normal((rows, width)).astype(np.float32)
    out = np.full(width, np.nan, np.float32)
    blocks = (width + 3) // 4
    tx, ty = min(blocks, 32), min(8, rows)  # as MLX's host code sizes the group
    lib.col_sum(x, out, np.int32(rows), np.int32(width), groups=((blocks + tx - 1) // tx, 1, 1), threadgroup=(tx, ty, 1))
    np.testing.assert_allclose(out, x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kernel", ["split_barriers", "skip_then_wait"])
def test_simdgroups_at_different_barriers_stay_errors(lib, kernel):
    out = np.zeros(64, np.float32)
    with pytest.raises(pm.KernelError, match="barrier divergence"):
        getattr(lib, kernel)(out, grid=64, threadgroup=64)
    # the device runs the next kernel as usual
    out2, want = _gemv(lib, "gemv_return", 5, 97)
    np.testing.assert_allclose(out2, want, rtol=1e-5, atol=1e-4)


VALIDATION_CHILD = r"""
import numpy as np, pymetal as pm, sys
sys.path.insert(0, {tests!r})
from msl_kernels import compile_mode
from test_barrier_divergence import SOURCE
f32, i32 = np.float32, np.int32
calls = {{
    "gemv_return": lambda lib: lib.gemv_return(np.ones((5, 64), f32), np.ones(64, f32), np.zeros(5, f32), i32(64), i32(5),
                                               groups=(2, 1, 1), threadgroup=(32, 2, 4)),
    "gemv_branch": lambda lib: lib.gemv_branch(np.ones((5, 64), f32), np.ones(64, f32), np.zeros(5, f32), i32(64), i32(5),
                                               groups=(2, 1, 1), threadgroup=(32, 2, 4)),
    "gemv_t_tile": lambda lib: lib.gemv_t_tile(np.ones((33, 40), f32), np.ones(33, f32), np.zeros(40, f32), i32(33),
                                               i32(40), groups=3, threadgroup=64),
    "col_sum": lambda lib: lib.col_sum(np.ones((5, 130), f32), np.zeros(130, f32), i32(5), i32(130), groups=(2, 1, 1),
                                       threadgroup=(32, 5, 1)),
}}
for mode in ("default", "fibers"):
    lib = compile_mode(SOURCE, mode)
    for name, call in calls.items():
        try:
            call(lib)
            print("CLEAN", mode, name)
        except pm.KernelError as e:
            print("KERNEL-ERROR", mode, name, str(e).replace("\n", " "))
"""


def test_validation_reports_threads_that_skip_a_barrier(dev):
    """PYMETAL_VALIDATION=1 keeps MSL's rule: each of the kernels above is reported, in both modes."""
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)
    repo = os.path.dirname(os.path.dirname(tests))
    env = dict(os.environ, PYMETAL_VALIDATION="1", PYTHONPATH=os.pathsep.join([repo, tests, here]))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(VALIDATION_CHILD.format(tests=tests))], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [l for l in proc.stdout.splitlines() if l.startswith(("CLEAN", "KERNEL-ERROR"))]
    assert len(lines) == 8, proc.stdout
    for line in lines:
        assert line.startswith("KERNEL-ERROR") and "barrier divergence" in line, line
