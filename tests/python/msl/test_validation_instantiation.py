"""Explicit instantiations that write out their parameter types, with and without validation.

A validation build (PYMETAL_VALIDATION=1) gives kernels checked pointers in place of the pointer
parameters; an explicit instantiation that spells the parameters' types must still name the
template it instantiates, and bind the buffers the template declares. Templates with several
parameters, device / constant / threadgroup pointers and references, in both execution modes
(a small library is compiled whole, a large one kernel by kernel: both are covered).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from msl_kernels import MODES, compile_mode

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

template <typename T>
[[kernel]] void scale(device T* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = a[i] * T(2); }
template [[host_name("scale_f")]] [[kernel]] void scale<float>(device float* a [[buffer(0)]],
                                                               uint i [[thread_position_in_grid]]);
template [[host_name("scale_i")]] [[kernel]] void scale<int>(device int* a [[buffer(0)]],
                                                             uint i [[thread_position_in_grid]]);

// an instantiation that names no template arguments (MLX's conv.metal): deduced from its parameter types
template <typename T, typename U>
[[kernel]] void convert(const device T* a [[buffer(0)]], device U* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    b[i] = U(a[i]) + U(1);
}
template [[host_name("convert_fi")]] [[kernel]] void convert(const device float* a [[buffer(0)]],
                                                             device int* b [[buffer(1)]],
                                                             uint i [[thread_position_in_grid]]);

// several template parameters, a threadgroup pointer, a constant reference, a barrier
template <typename T, int N>
[[kernel]] void mirror(const device T* a [[buffer(0)]], device T* b [[buffer(1)]], constant uint& n [[buffer(2)]],
                       threadgroup T* sh [[threadgroup(0)]], uint i [[thread_position_in_grid]],
                       uint t [[thread_position_in_threadgroup]], uint tpg [[threads_per_threadgroup]]) {
    sh[t] = i < n ? a[i] * T(N) : T(0);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i < n) b[i] = sh[tpg - 1 - t];
}
template [[host_name("mirror_f3")]] [[kernel]] void mirror<float, 3>(
    const device float* a [[buffer(0)]], device float* b [[buffer(1)]], constant uint& n [[buffer(2)]],
    threadgroup float* sh [[threadgroup(0)]], uint i [[thread_position_in_grid]],
    uint t [[thread_position_in_threadgroup]], uint tpg [[threads_per_threadgroup]]);
template [[host_name("mirror_i5")]] [[kernel]] void mirror<int, 5>(
    const device int* a [[buffer(0)]], device int* b [[buffer(1)]], constant uint& n [[buffer(2)]],
    threadgroup int* sh [[threadgroup(0)]], uint i [[thread_position_in_grid]],
    uint t [[thread_position_in_threadgroup]], uint tpg [[threads_per_threadgroup]]);

// references: a device scalar written by one thread, a threadgroup scalar, a constant pointer
template <typename T>
[[kernel]] void refs(device T& total [[buffer(0)]], const constant T* c [[buffer(1)]], device T* out [[buffer(2)]],
                     threadgroup T& shared_one [[threadgroup(0)]], uint t [[thread_position_in_threadgroup]]) {
    if (t == 0) shared_one = c[0] + c[1];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = shared_one + T(t);
    if (t == 0) total = shared_one;
}
template [[host_name("refs_f")]] [[kernel]] void refs<float>(
    device float& total [[buffer(0)]], const constant float* c [[buffer(1)]], device float* out [[buffer(2)]],
    threadgroup float& shared_one [[threadgroup(0)]], uint t [[thread_position_in_threadgroup]]);
"""

# more than MSLCompiler.lazyThreshold (16) kernels: the library is checked whole and compiled
# kernel by kernel (LazyLibrary.swift)
LAZY_SOURCE = SOURCE + "\n".join(
    'template [[host_name("mirror_f%d")]] [[kernel]] void mirror<float, %d>(const device float* a [[buffer(0)]], '
    "device float* b [[buffer(1)]], constant uint& n [[buffer(2)]], threadgroup float* sh [[threadgroup(0)]], "
    "uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]], "
    "uint tpg [[threads_per_threadgroup]]);" % (k, k) for k in range(6, 22))


def check_library(lib):
    """Runs every kind of kernel of SOURCE against NumPy (also used in the validation child)."""
    for n in (1, 7, 64):
        a = np.arange(n, dtype=np.float32) - 3
        lib.scale_f(a, grid=n)
        np.testing.assert_array_equal(a, (np.arange(n, dtype=np.float32) - 3) * 2)
        ai = np.arange(n, dtype=np.int32)
        lib.scale_i(ai, grid=n)
        np.testing.assert_array_equal(ai, np.arange(n, dtype=np.int32) * 2)
        b = np.zeros(n, np.int32)
        lib.convert_fi(a, b, grid=n)
        np.testing.assert_array_equal(b, a.astype(np.int32) + 1)
    for n, tpg in ((1, 1), (5, 8), (32, 32), (40, 64)):
        for name, dtype, k in (("mirror_f3", np.float32, 3), ("mirror_i5", np.int32, 5)):
            a = (np.arange(n) + 1).astype(dtype)
            b = np.full(n, -1, dtype)
            lib.function(name)(a, b, np.uint32(n), grid=tpg, threadgroup=tpg, threadgroup_memory={0: 4 * tpg})
            padded = np.zeros(tpg, dtype)
            padded[:n] = a * k
            np.testing.assert_array_equal(b, padded[::-1][:n])
    total = np.zeros(1, np.float32)
    out = np.zeros(16, np.float32)
    lib.refs_f(total, np.array([1.5, 2.0], np.float32), out, grid=16, threadgroup=16, threadgroup_memory={0: 4})
    assert total[0] == 3.5
    np.testing.assert_array_equal(out, 3.5 + np.arange(16, dtype=np.float32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lazy", [False, True], ids=["whole", "lazy"])
def test_written_out_instantiations(dev, mode, lazy):
    lib = compile_mode(LAZY_SOURCE if lazy else SOURCE, mode)
    check_library(lib)
    if lazy:
        a = np.arange(8, dtype=np.float32)
        b = np.zeros(8, np.float32)
        lib.mirror_f21(a, b, np.uint32(8), grid=8, threadgroup=8, threadgroup_memory={0: 32})
        np.testing.assert_array_equal(b, (a * 21)[::-1])


CHILD = r"""
import sys
sys.path[:0] = [{tests!r}, {here!r}]
from msl_kernels import compile_mode
from test_validation_instantiation import SOURCE, LAZY_SOURCE, check_library
for src in (SOURCE, LAZY_SOURCE):
    for mode in ("default", "fibers"):
        check_library(compile_mode(src, mode))
        print("OK", mode, len(src))
"""


def test_written_out_instantiations_under_validation(dev):
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)
    repo = os.path.dirname(os.path.dirname(tests))
    env = dict(os.environ, PYMETAL_VALIDATION="1", PYTHONPATH=repo)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD.format(tests=tests, here=here))], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert proc.stdout.count("OK") == 4, proc.stdout
