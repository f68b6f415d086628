"""Loops that store through an index cycling with the loop counter (`t[j % 4] += x[j]`).

clang 20-22's loop vectorizer miscompiles them (LLVM issues 191382, 215690): it widened
the store as if the index grew with the counter, so the sums came out wrong and memory
past the array was written (a kernel with simd_sum crashed). The front end turns the
vectorizer off for such loops (Sources/MetalCPU/Compiler/CyclicStores.swift). Each kernel
runs against NumPy over widths that are and are not multiples of the period and the vector
width, in every execution mode.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import pymetal as pm
from msl_kernels import MODES, compile_mode

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// a thread's own array, remainder index
kernel void private_rem(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                        constant uint& w [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float t[4] = {0, 0, 0, 0};
    for (uint j = 0; j < w; j++) t[j % 4] += x[i * w + j];
    for (uint l = 0; l < 4; l++) out[i * 4 + l] = t[l];
}

// the same with a SIMD-group function in the kernel (lockstep)
kernel void private_rem_simd(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                             constant uint& w [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float t[4] = {0, 0, 0, 0};
    for (uint j = 0; j < w; j++) t[j % 4] += x[i * w + j];
    float total = simd_sum(t[0]);
    for (uint l = 0; l < 4; l++) out[i * 4 + l] = t[l] + 0.0f * total;
}

// a mask, through a variable, in a while loop
kernel void private_mask(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         constant uint& w [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float t[4] = {0, 0, 0, 0};
    uint j = 0;
    while (j < w) { uint q = j & 3; t[q] = t[q] + x[i * w + j]; j++; }
    for (uint l = 0; l < 4; l++) out[i * 4 + l] = t[l];
}

// threadgroup memory, one thread accumulating, then every thread reads
kernel void shared_rem(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& w [[buffer(2)]], uint i [[thread_position_in_grid]],
                       uint l [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
    threadgroup float t[4];
    if (l == 0) {
        for (uint k = 0; k < 4; k++) t[k] = 0;
        for (uint j = 0; j < w; j++) t[j % 4] += x[g * w + j];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (l < 4) out[g * 4 + l] = t[l];
}

// device memory, nested loops (the inner one cycles)
kernel void device_rem(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                       constant uint& w [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    for (uint l = 0; l < 4; l++) out[i * 4 + l] = 0;
    for (uint r = 0; r < 1; r++)
        for (uint j = 0; j < w; j++) out[i * 4 + j % 4] += x[i * w + j];
}
"""

ROWS = 37  # threads: not a multiple of a SIMD group


def _want(x, w, n=ROWS):
    rows = x.reshape(n, w)
    out = np.zeros((n, 4), np.float32)
    for j in range(w):
        out[:, j % 4] += rows[:, j]
    return out.ravel()


@pytest.fixture(scope="module", params=MODES)
def lib(dev, request):
    return compile_mode(SOURCE, request.param)


@pytest.mark.parametrize("w", [0, 1, 3, 4, 7, 16, 33, 100, 1000])
@pytest.mark.parametrize("name", ["private_rem", "private_rem_simd", "private_mask", "device_rem"])
def test_per_thread_cyclic_sums(lib, name, w):
    x = (np.arange(ROWS * w) % 7).astype(np.float32)
    out = np.full(ROWS * 4, np.nan, np.float32)
    getattr(lib, name)(x, out, np.uint32(w), grid=ROWS)
    pm.synchronize()
    np.testing.assert_array_equal(out, _want(x, w))


@pytest.mark.parametrize("w", [1, 4, 7, 100, 1000])
def test_threadgroup_cyclic_sums(lib, w):
    groups = 5
    x = (np.arange(groups * w) % 7).astype(np.float32)
    out = np.full(groups * 4, np.nan, np.float32)
    lib.shared_rem(x, out, np.uint32(w), grid=groups * 32, threadgroup=32)
    pm.synchronize()
    np.testing.assert_array_equal(out, _want(x, w, groups))


CHILD = r"""
import sys, numpy as np, pymetal as pm
sys.path[:0] = [%r, %r]
from test_cyclic_stores import SOURCE, ROWS, _want
lib = pm.compile(SOURCE)
for name in ("private_rem", "private_rem_simd", "private_mask", "device_rem"):
    for w in (7, 100):
        x = (np.arange(ROWS * w) %% 7).astype(np.float32)
        out = np.full(ROWS * 4, np.nan, np.float32)
        getattr(lib, name)(x, out, np.uint32(w), grid=ROWS)
        pm.synchronize()
        np.testing.assert_array_equal(out, _want(x, w))
print("ok")
"""


def test_validation_mode(dev):
    # shader validation builds (PYMETAL_VALIDATION=1, read at start: a child process) take the same guard
    env = dict(os.environ, PYMETAL_VALIDATION="1")
    done = subprocess.run([sys.executable, "-c", CHILD % (os.path.dirname(__file__), os.path.dirname(os.path.dirname(__file__)))], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
