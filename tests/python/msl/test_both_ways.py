"""The shared way to run a kernel both ways the CPU backend runs it (msl_kernels.run_both_ways:
lockstep and fibers, compared bit for bit) and the shared .metal files (msl/kernels/)."""

import os
import re

import numpy as np
import pytest

import msl_kernels

SRC = """
#include <metal_stdlib>
using namespace metal;
kernel void prefix(device const float *x [[buffer(0)]], device float *out [[buffer(1)]],
                   device float *total [[buffer(2)]], constant uint &n [[buffer(3)]],
                   uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    if (i >= n) return;                      // a partial last simdgroup
    float v = x[i];
    out[i] = simd_prefix_exclusive_sum(v);
    float s = simd_sum(v);
    if (lane == 0) total[i / 32] = s;
}
"""


@pytest.mark.parametrize("n", [1, 31, 32, 33, 100, 256])
def test_simd_prefix_both_ways_against_numpy(both_ways, n):
    x = np.random.default_rng(n).integers(-3, 4, size=n).astype(np.float32)  # exact sums in any order
    groups = -(-n // 32)
    out, total = both_ways(SRC, "prefix", (x, np.zeros(n, np.float32), np.zeros(groups, np.float32), np.uint32(n)),
                           written=(1, 2), grid=groups * 32, threadgroup=32)
    for g in range(groups):
        part = x[g * 32:(g + 1) * 32]
        np.testing.assert_array_equal(out[g * 32:(g + 1) * 32], np.cumsum(part) - part)
        assert total[g] == part.sum()


def test_compile_mode_names_the_modes():
    with pytest.raises(ValueError, match="mode must be one of"):
        msl_kernels.compile_mode(SRC, "lockstep")


def test_shared_kernels_compile_in_both_modes(mode):
    lib = msl_kernels.compile_mode(msl_kernels.source("spin.metal"), mode)
    a = np.ones(8, np.int32)  # spin returns at once when a[0] != 0, writing nothing
    lib.spin(a, grid=4)
    np.testing.assert_array_equal(a, np.ones(8, np.int32))


@pytest.mark.parametrize("name", sorted(os.listdir(msl_kernels.KERNELS)))
def test_every_shared_kernel_file_compiles(name):
    # The files are fragments (the includes are the user's): each compiles after the usual ones and
    # defines the kernels it declares (scripts/bench_gpu_patterns.py uses some that no test runs whole).
    text = msl_kernels.source(name)
    lib = msl_kernels.compile_mode("#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\n"
                                   "using namespace metal;\n" + text, "default")
    declared = re.findall(r"kernel\s+void\s+(\w+)", text)
    assert declared and sorted(lib.functions) == sorted(declared)
