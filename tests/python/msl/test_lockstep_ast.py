"""Lockstep's reading of kernel bodies from clang's AST (Sources/MetalCPU/Compiler/LockstepAST.swift),
and the mode of each instantiation of overloaded kernel templates, against NumPy.

How a test knows the mode a kernel ran in: a simdgroup whose lanes call different SIMD-group
functions (`if (lane < 16) simd_sum(..) else simd_max(..)`) runs under lockstep (each branch
with the mask of its lanes, MSL's active lanes) and is refused by fibers ("divergent control
flow"); a private array larger than a fiber's stack (128 KiB) runs in loop mode (a kernel
that meets no other thread) and overruns a fiber's stack.
"""

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"

# ---------------------------------------------------------------------------
# Overloaded kernel templates: each instantiation takes the mode of its own template's body
# ---------------------------------------------------------------------------

# The last overload meets other threads (simd_sum); the first is a plain kernel whose 256 KiB private
# array only fits a loop-mode thread's stack. Before, every instantiation of the name took the mode of
# the last template's body: the first one ran on fibers and overran their stack.
OVERLOADS = HEADER + r"""
template <typename T, int N>
[[kernel]] void pick(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    volatile T big[65536];                     // 256 KiB for float: more than a fiber's stack
    big[(i * 977) % 65536] = x[i] * T(N);
    y[i] = big[(i * 977) % 65536];
}
template <typename T, int N, bool sum>
[[kernel]] void pick(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    y[i] = sum ? simd_sum(x[i]) * T(N) : x[i];
}
template [[host_name("plain")]] [[kernel]] decltype(pick<float, 3>) pick<float, 3>;
template [[host_name("summed")]] [[kernel]] decltype(pick<float, 2, true>) pick<float, 2, true>;
"""


@pytest.mark.parametrize("n", [1, 31, 64, 100])
def test_overloads_take_their_own_mode(dev, n):
    lib = pm.compile(OVERLOADS)
    x = np.arange(n, dtype=np.float32) - 7
    y = np.zeros_like(x)
    lib.plain(x, y, grid=n, threadgroup=32)           # loop mode: the big array fits
    np.testing.assert_array_equal(y, x * 3)
    lib.summed(x, y, grid=n, threadgroup=32)
    pad = np.zeros(-n % 32, np.float32)
    sums = np.repeat(np.concatenate([x, pad]).reshape(-1, 32).sum(1), 32)[:n]
    np.testing.assert_array_equal(y, sums * 2)
