"""Compiling MSL, loading libraries, looking up functions."""

import os
import re

import numpy as np
import pytest

import pymetal as pm

BAD_SRC = """#include <metal_stdlib>
using namespace metal;
kernel void bad(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = undefined_name; }
"""

MACRO_SRC = """#include <metal_stdlib>
using namespace metal;
kernel void fill_n(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
#ifdef NEGATE
    out[i] = -(FILL_VALUE);
#else
    out[i] = FILL_VALUE;
#endif
}
"""


def test_functions_listed(basic_lib):
    names = basic_lib.functions
    for n in ("add", "saxpy", "scale", "iota", "affine", "index2d", "group_ids"):
        assert n in names
    assert "add" in basic_lib
    assert "add" in dir(basic_lib)
    assert "add" in repr(basic_lib)


def test_function_lookup_is_cached(basic_lib):
    f = basic_lib.function("add")
    assert basic_lib.add is f
    assert basic_lib["add"] is f
    assert f.name == "add"
    assert f.library is basic_lib
    assert "add" in repr(f)


def test_function_properties(dev, basic_lib):
    f = basic_lib.add
    assert 1 <= f.max_threads_per_threadgroup <= dev.max_threads_per_threadgroup
    assert f.execution_width >= 1
    assert f.static_threadgroup_memory == 0


def test_unknown_function(basic_lib):
    with pytest.raises(pm.NotFoundError) as e:
        basic_lib.function("no_such_kernel")
    msg = str(e.value)
    assert "no_such_kernel" in msg
    assert "add" in msg and "saxpy" in msg  # lists what exists
    with pytest.raises(AttributeError, match="no_such_kernel"):
        basic_lib.no_such_kernel
    assert not hasattr(basic_lib, "no_such_kernel")
    with pytest.raises(AttributeError):
        basic_lib._private


def test_compile_error_has_diagnostics(dev):
    with pytest.raises(pm.CompileError) as e:
        pm.compile(BAD_SRC)
    err = e.value
    assert isinstance(err, pm.Error)
    assert "undefined_name" in str(err)
    assert "undefined_name" in err.diagnostics
    assert re.search(r"\b3:\d+", err.diagnostics), err.diagnostics  # line 3, some column


def test_compile_rejects_non_string(dev):
    with pytest.raises(TypeError):
        pm.compile(42)


def test_compile_accepts_bytes(dev, basic_lib):
    from conftest import BASIC_SRC

    lib = pm.compile(BASIC_SRC.encode())
    assert "add" in lib.functions


def test_macros(dev):
    lib4 = pm.compile(MACRO_SRC, macros={"FILL_VALUE": 4})
    out = np.zeros(8, np.int32)
    lib4.fill_n(out, grid=8)
    np.testing.assert_array_equal(out, 4)
    lib7 = pm.compile(MACRO_SRC, macros=["FILL_VALUE=7", "NEGATE"])
    lib7.fill_n(out, grid=8)
    np.testing.assert_array_equal(out, -7)
    with pytest.raises(ValueError):
        pm.compile(MACRO_SRC, macros={"not a name": 1})
    with pytest.raises(ValueError):
        pm.compile(MACRO_SRC, macros={"FILL_VALUE": "1\n#define X"})


def test_macro_with_a_common_name(dev):
    # Macros apply to the user's source; a short name such as N must not break
    # the standard library headers.
    src = MACRO_SRC.replace("FILL_VALUE", "N")
    lib = pm.compile(src, macros={"N": 4})
    out = np.zeros(8, np.int32)
    lib.fill_n(out, grid=8)
    np.testing.assert_array_equal(out, 4)


def test_fast_math_flag(dev, rng):
    from conftest import BASIC_SRC

    lib = pm.compile(BASIC_SRC, fast_math=True)
    a = rng.standard_normal(100).astype(np.float32)
    out = np.empty_like(a)
    lib.add(a, a, out, grid=100)
    np.testing.assert_allclose(out, a + a, rtol=1e-6)


def test_load_metal_file(dev, tmp_path):
    from conftest import BASIC_SRC

    path = tmp_path / "kernels.metal"
    path.write_text(BASIC_SRC)
    lib = pm.load(path)
    assert "add" in lib.functions
    a = np.arange(10, dtype=np.float32)
    out = np.zeros_like(a)
    lib.add(a, a, out, grid=10)
    np.testing.assert_array_equal(out, 2 * a)
    lib2 = pm.load(str(path))
    assert "iota" in lib2.functions


def test_load_metal_file_diagnostics_name_the_file(dev, tmp_path):
    path = tmp_path / "broken_kernel.metal"
    path.write_text(BAD_SRC)
    with pytest.raises(pm.CompileError) as e:
        pm.load(path)
    assert "broken_kernel.metal" in e.value.diagnostics
    assert re.search(r"broken_kernel\.metal:3:\d+", e.value.diagnostics), e.value.diagnostics


def test_load_missing_file(dev, tmp_path):
    with pytest.raises(FileNotFoundError):
        pm.load(tmp_path / "nope.metal")
    with pytest.raises(FileNotFoundError):
        pm.load(tmp_path / "nope.metallib")


def test_load_garbage_library_is_an_error(dev, tmp_path):
    path = tmp_path / "garbage.metallib"
    path.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(pm.Error):
        pm.load(path)


def test_library_release_on_gc(dev):
    import gc

    lib = pm.compile(MACRO_SRC, macros={"FILL_VALUE": 1})
    f = lib.fill_n
    handle = lib._owner.handle
    del lib
    gc.collect()
    out = np.zeros(4, np.int32)
    f(out, grid=4)  # still usable
    np.testing.assert_array_equal(out, 1)
    del f
    gc.collect()
    from ctypes import byref, c_int64

    from pymetal.runtime import native as _native

    # The library handle has been released: using it is an error, not a crash.
    st = _native.lib().pm_library_function_count(byref(c_int64()), handle)
    assert st != 0


def _metallib_tool():
    import os
    import shutil

    tool = os.path.join(os.path.dirname(pm.library_path()), "pymetal-metallib")
    if os.path.isfile(tool):
        return tool
    return shutil.which("pymetal-metallib")


def test_load_prebuilt_library(dev, tmp_path):
    import subprocess

    from conftest import BASIC_SRC

    tool = _metallib_tool()
    if tool is None:
        pytest.skip("pymetal-metallib is not built")
    src = tmp_path / "src"
    src.mkdir()
    (src / "basic.metal").write_text(BASIC_SRC)
    out = tmp_path / "basic.metallib"
    subprocess.run([tool, str(src), str(out)], check=True, capture_output=True, timeout=300)
    lib = pm.load(out)
    assert "add" in lib.functions and "saxpy" in lib.functions
    assert str(out) in repr(lib)
    a = np.arange(100, dtype=np.float32)
    o = np.zeros_like(a)
    lib.add(a, a, o, grid=100)
    np.testing.assert_array_equal(o, 2 * a)
    with pytest.raises(ValueError):
        pm.load(out, macros={"X": 1})


def test_shader_library(dev):
    try:
        lib = pm.shaders()
    except pm.Error as e:
        pytest.skip("no shader library: %s" % e)
    assert lib is pm.shaders()
    assert isinstance(lib, pm.Library)
    assert len(lib.functions) > 0
    name = lib.functions[0]
    assert lib.function(name).max_threads_per_threadgroup >= 1


CACHE_PROBE = """
import sys, numpy as np, pymetal as pm
lib = pm.compile(sys.stdin.read())
out = np.zeros(5, np.int32)
lib.fill_n(out, grid=5)
print(out.tolist())
"""


def test_compile_cache_hits_in_a_fresh_process(clang_runs):
    """A second process compiling the same source loads it from the disk cache: clang does not run."""
    import subprocess
    import sys
    import uuid

    source = MACRO_SRC.replace("FILL_VALUE", "41 + 1") + "// %s\n" % uuid.uuid4()

    def run():
        done = subprocess.run([sys.executable, "-c", CACHE_PROBE], input=source, env=clang_runs.env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "[42, 42, 42, 42, 42]"
        return len(clang_runs.lines())

    # preprocess, the headers' PCH and its object, the kernels' signatures (clang's AST), compile
    assert run() == 5, clang_runs.lines()
    assert run() == 5, "clang ran again for a cached library"
