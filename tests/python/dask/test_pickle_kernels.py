"""Kernels (pm.Library, pm.Function) pickle, so a Dask graph or a process pool can carry a
custom kernel to other processes: the pickle holds what made the library (its MSL source with
the #includes expanded and the options, or a library file's path) and the receiver compiles it
again. (They raised "ctypes objects containing pointers cannot be pickled".)"""

import multiprocessing
import pickle

import numpy as np
import pytest

import pymetal as pm

SOURCE = """
#include <metal_stdlib>
using namespace metal;
#include "scale.h"
constant float shift [[function_constant(0)]];  // (not `bias`: metal::bias, a sampling option, is in scope)
kernel void scaled(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) { y[i] = SCALE * x[i] + OFFSET; }
kernel void biased(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) { y[i] = x[i] + shift; }
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("inc")
    (d / "scale.h").write_text("#define SCALE 3.0f\n")
    return pm.compile(SOURCE, include_dirs=[str(d)], defines={"OFFSET": "0.5f"})


def _run(fn, n):
    x = pm.arange(n, dtype=pm.float32)
    y = pm.empty(n, pm.float32)
    if n:
        fn(x, y, grid=n)
    return y.numpy()


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_library_and_function_round_trip(lib, n, tmp_path):
    lib2 = pickle.loads(pickle.dumps(lib))
    assert lib2 is not lib and lib2.functions == lib.functions
    x = np.arange(n, dtype=np.float32)
    # the defines and the #include travel with it (the include folder is gone here)
    np.testing.assert_array_equal(_run(lib2.scaled, n), 3.0 * x + 0.5)
    f = pickle.loads(pickle.dumps(lib.scaled, protocol=5))
    assert f.name == "scaled" and repr(f) == repr(lib.scaled)
    np.testing.assert_array_equal(_run(f, n), 3.0 * x + 0.5)
    # a specialised function keeps its constant values
    g = pickle.loads(pickle.dumps(lib.function("biased", constants={"shift": 2.0})))
    np.testing.assert_array_equal(_run(g, n), x + 2.0)


def test_shaders_and_library_files(tmp_path):
    assert pickle.loads(pickle.dumps(pm.shaders())) is pm.shaders()
    f = pickle.loads(pickle.dumps(pm.shaders().add_float32))
    a, b, out = pm.asarray([1.0, 2.0]), pm.asarray([3.0, 4.0]), pm.empty(2)
    f(a, b, out, grid=2)
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    path = tmp_path / "twice.metal"
    path.write_text("kernel void twice(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]])"
                    " { x[i] *= 2.0f; }")
    twice = pickle.loads(pickle.dumps(pm.load(str(path)).twice))
    x = pm.asarray([1.0, 5.0])
    twice(x, grid=2)
    np.testing.assert_array_equal(x.numpy(), [2.0, 10.0])


def test_library_from_a_handle_says_why_it_cannot_pickle(lib):
    from pymetal.runtime.library import Library
    other = Library.__new__(Library)
    other.__dict__.update(lib.__dict__, _recipe=None, _origin=None)
    with pytest.raises(TypeError, match="cannot be pickled.*pm.compile"):
        pickle.dumps(other)


def _apply(fn, values):
    x = pm.asarray(values)
    y = pm.empty(x.shape, pm.float32)
    fn(x, y, grid=x.size)
    return y


def test_kernel_runs_in_a_spawned_process(lib):
    # A fresh interpreter (spawn: it gets this process's sys.path) unpickles the function,
    # compiles it and runs it on its own device.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        y = pool.apply(_apply, (lib.scaled, np.arange(5, dtype=np.float32)))
    assert type(y) is pm.Array
    np.testing.assert_array_equal(y.numpy(), 3.0 * np.arange(5, dtype=np.float32) + 0.5)
