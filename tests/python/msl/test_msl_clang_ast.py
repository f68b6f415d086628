"""Kernel signatures read from clang's AST (issue 26, item 3; Sources/MetalCPU/Compiler/ClangAST.swift).

The launcher's bindings (parameter names, types as clang resolved them, buffer indices, positions,
optional buffers) come from clang's parse of the front end's text, not from its tokens: names are
the definition's (also for an explicit instantiation that names no parameters), types go through
template arguments, aliases and typedefs. Each kernel also runs and is checked against NumPy.
PYMETAL_CLANG_AST=0 is the front end's own reading (the fallback): the kernels run the same.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"
SIZES = [1, 7, 33, 1000]

SOURCE = HEADER + r"""
struct Pair { float a; float b; };
template <typename T> using dptr = device T*;
typedef device const Pair* pair_cptr;

// a template over a struct type: its arguments' type is the struct's name, not `T`
template <typename T>
kernel void pair_sum(device const T* in [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    out[i] = in[i].a + in[i].b;
}
template [[host_name("pair_sum_pair")]] kernel void pair_sum<Pair>(device const Pair*, device float*, uint);

// an alias template and a typedef that hides the pointer
kernel void pair_diff(pair_cptr in [[buffer(0)]], dptr<float> out [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    out[i] = in[i].a - in[i].b;
}

// an explicit instantiation that names no parameters (as MLX's): the names are the definition's
template <typename T>
kernel void axpy(device const T* x [[buffer(0)]], device T* y [[buffer(1)]], constant T& alpha [[buffer(2)]],
                 uint gid [[thread_position_in_grid]]) {
    y[gid] = alpha * x[gid] + y[gid];
}
template [[host_name("axpy_f32")]] kernel void axpy<float>(device const float*, device float*, constant float&,
                                                           uint [[thread_position_in_grid]]);
template [[host_name("axpy_i32")]] kernel void axpy<int>(device const int*, device int*, constant int&,
                                                         uint [[thread_position_in_grid]]);

// buffer indices out of parameter order, and an instantiation that repeats only the position attribute: the
// bindings are the definition's (the token reading took the instantiation's list: buffers 0 and 1 in order)
template <typename T>
kernel void offset(device T* out [[buffer(1)]], device const T* in [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = in[i] + T(1);
}
template [[host_name("offset_f32")]] kernel void offset<float>(device float*, device const float*,
                                                               uint [[thread_position_in_grid]]);

// a plain function template made a kernel by an instantiation that repeats the attributes (clang keeps no
// attributes of an instantiation's parameters: the AST text declares a specialization instead)
typedef device Pair* pair_ptr;
template <typename T> void scale_pairs(pair_ptr p, constant T& s, uint i) { p[i].a *= s; p[i].b *= s; }
template [[host_name("scale_pairs_f")]] [[kernel]] void scale_pairs<float>(pair_ptr pairs [[buffer(1)]],
                                                                          constant float& by [[buffer(0)]],
                                                                          uint i [[thread_position_in_grid]]);

// nested template arguments (`>>`), unattributed parameters taking the next buffer index, positions
// between them, and a parameter with no name
template <typename T> struct Box { T v; };
kernel void boxes(device const Box<Box<int>>* in, device int* out, uint i [[thread_position_in_grid]],
                  constant int& scale, const uint [[threads_per_grid]]) {
    out[i] = in[i].v.v * scale;
}

// a reference to a constant array, and a threadgroup buffer
kernel void weights(constant float (&w)[4] [[buffer(0)]], device float* out [[buffer(1)]],
                    threadgroup float* tile [[threadgroup(0)]], uint i [[thread_position_in_grid]],
                    uint l [[thread_position_in_threadgroup]]) {
    tile[l] = w[i % 4];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = tile[l] * 2;
}
"""


@pytest.fixture(scope="module")
def lib():
    return pm.compile(SOURCE)


def _args(fn):
    return [(a.name, a.binding, a.index) for a in fn.arguments]


def test_struct_template_argument_names_the_struct(lib):
    fn = lib.function("pair_sum_pair")
    assert _args(fn) == [("in", "buffer", 0), ("out", "buffer", 1)]
    assert fn.arguments[0].type_name == "Pair"  # the token reading said `T`
    for n in SIZES:
        pairs = np.random.default_rng(n).random((n, 2), dtype=np.float32)
        out = np.zeros(n, np.float32)
        fn(pairs, out, grid=n)
        np.testing.assert_allclose(out, pairs[:, 0] + pairs[:, 1], rtol=1e-6)


def test_alias_and_typedef_pointer_types(lib):
    fn = lib.function("pair_diff")
    assert _args(fn) == [("in", "buffer", 0), ("out", "buffer", 1)]
    assert fn.arguments[0].type_name == "Pair"  # through the typedef (the tokens said `pair_cptr`)
    assert fn.arguments[0].form == "pointer" and not fn.arguments[0].writable
    assert fn.arguments[1].form == "pointer" and fn.arguments[1].writable
    for n in SIZES:
        pairs = np.random.default_rng(n).random((n, 2), dtype=np.float32)
        out = np.zeros(n, np.float32)
        fn(pairs, out, grid=n)
        np.testing.assert_allclose(out, pairs[:, 0] - pairs[:, 1], rtol=1e-6)


@pytest.mark.parametrize("name,dtype", [("axpy_f32", np.float32), ("axpy_i32", np.int32)])
def test_instantiation_without_names_takes_the_definitions(lib, name, dtype):
    fn = lib.function(name)
    assert _args(fn) == [("x", "buffer", 0), ("y", "buffer", 1), ("alpha", "buffer", 2)]
    for n in SIZES:
        x = np.arange(n, dtype=dtype)
        y = np.full(n, 3, dtype=dtype)
        want = dtype(2) * x + y
        fn(x, y, dtype(2), grid=n)
        np.testing.assert_array_equal(y, want)


def test_instantiation_binds_the_definitions_indices(lib):
    fn = lib.function("offset_f32")
    assert _args(fn) == [("out", "buffer", 1), ("in", "buffer", 0)]
    for n in SIZES:
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        fn(x, out, grid=n)  # by buffer index: in is buffer 0
        np.testing.assert_array_equal(out, x + 1)


def test_plain_template_made_a_kernel_by_its_instantiation(lib):
    fn = lib.function("scale_pairs_f")
    assert _args(fn) == [("pairs", "buffer", 1), ("by", "buffer", 0)]
    assert fn.arguments[0].type_name == "Pair" and fn.arguments[0].form == "pointer"  # tokens: `pair_ptr`
    for n in SIZES:
        pairs = np.random.default_rng(n).random((n, 2), dtype=np.float32)
        want = pairs * 3
        fn(np.float32(3), pairs, grid=n)
        np.testing.assert_allclose(pairs, want, rtol=1e-6)


def test_nested_templates_unnamed_and_unattributed_parameters(lib):
    fn = lib.function("boxes")
    # Metal's rule: an unattributed parameter takes the buffer index after the previous one's
    assert _args(fn) == [("in", "buffer", 0), ("out", "buffer", 1), ("scale", "buffer", 2)]
    assert fn.arguments[0].type_name == "Box<Box<int>>"
    for n in SIZES:
        boxes = np.arange(n, dtype=np.int32) - 5
        out = np.zeros(n, np.int32)
        fn(boxes, out, np.int32(-3), grid=n)
        np.testing.assert_array_equal(out, boxes * -3)


def test_array_reference_and_threadgroup_parameters(lib):
    fn = lib.function("weights")
    assert _args(fn)[:2] == [("w", "buffer", 0), ("out", "buffer", 1)]  # the tokens found no name for `w`
    assert fn.arguments[0].type_name == "float"
    assert fn.arguments[2].name == "tile" and fn.arguments[2].binding == "threadgroup"
    w = np.array([1, 2, 3, 4], np.float32)
    for n in SIZES:
        out = np.zeros(n, np.float32)
        group = min(n, 32)
        fn(w, out, grid=n, threadgroup=group, threadgroup_memory=group * 4)
        np.testing.assert_array_equal(out, np.tile(w, n // 4 + 1)[:n] * 2)


PROBE = r"""
import sys, numpy as np, pymetal as pm
sys.path.insert(0, %r)
import test_msl_clang_ast as t
lib = pm.compile(t.SOURCE)
print(lib.function(sys.argv[1]).arguments[0].type_name)
x = np.arange(10, dtype=np.float32); y = np.ones(10, np.float32)
lib.function("axpy_f32")(x, y, np.float32(2), grid=10)
print(y.tolist() == (2 * np.arange(10) + 1).tolist())
"""


def test_token_reading_is_the_fallback(tmp_path):
    """PYMETAL_CLANG_AST=0: the front end's own reading (what runs when clang's AST is unavailable); the two
    readings do not share cached libraries."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    for setting, type_name in [("0", "T"), ("1", "Pair"), ("0", "T")]:
        env = dict(os.environ, PYMETAL_CLANG_AST=setting, XDG_CACHE_HOME=str(tmp_path))
        out = subprocess.run([sys.executable, "-c", PROBE % os.path.dirname(os.path.abspath(__file__)),
                              "pair_sum_pair"], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [type_name, "True"], setting


def test_errors_are_reported_as_before():
    """A source clang refuses: the AST is unavailable, and the compile reports every error with its line."""
    source = HEADER + """
kernel void bad(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    o[i] = undefined_a;
}
kernel void bad2(device Missing* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 0; }
"""
    with pytest.raises(pm.CompileError) as info:
        pm.compile(source)
    message = str(info.value)
    assert "undefined_a" in message and "Missing" in message
    assert "program_source:5:" in message and "program_source:7:" in message


def test_optional_buffer_absent_as_the_ast_reads_it():
    source = HEADER + """
constant bool has_b [[function_constant(0)]];
template <typename T>
kernel void opt(device T* o [[buffer(0)]], device const T* b [[buffer(1), function_constant(has_b)]],
                uint i [[thread_position_in_grid]]) { o[i] = has_b ? b[i] : T(7); }
template [[host_name("opt_f")]] kernel void opt<float>(device float*, device const float*, uint);
"""
    lib = pm.compile(source)
    absent = lib.function("opt_f", constants={"has_b": False})
    assert _args(absent) == [("o", "buffer", 0)]
    present = lib.function("opt_f", constants={"has_b": True})
    assert _args(present) == [("o", "buffer", 0), ("b", "buffer", 1)]
    for n in SIZES:
        o = np.zeros(n, np.float32)
        absent(o, grid=n)
        np.testing.assert_array_equal(o, 7)
        b = np.arange(n, dtype=np.float32)
        present(o, b, grid=n)
        np.testing.assert_array_equal(o, b)


VALIDATION_PROBE = r"""
import numpy as np, pymetal as pm
src = '''#include <metal_stdlib>
using namespace metal;
typedef device float* fptr;
template <typename T>
kernel void k(device const T* a [[buffer(1)]], fptr out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = a[i] * 2; }
template [[host_name("k_f")]] kernel decltype(k<float>) k<float>;
'''
fn = pm.compile(src).function("k_f")
print([(a.name, a.index) for a in fn.arguments])
a = np.arange(5, dtype=np.float32); o = np.zeros(5, np.float32)
fn(o, a, grid=5)
print(o.tolist() == (2 * a).tolist())
try:
    fn(o, a[:2], grid=5)
except pm.KernelError as e:
    print("`a`" in str(e))
"""


def test_validation_builds_read_the_declared_parameters(tmp_path):
    """PYMETAL_VALIDATION=1 checks pointer parameters through a wrapper type (checkedPointer): the AST is read
    from the parameters as declared, and the checks name them."""
    env = dict(os.environ, PYMETAL_VALIDATION="1", XDG_CACHE_HOME=str(tmp_path))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    out = subprocess.run([sys.executable, "-c", VALIDATION_PROBE], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["[('a', 1), ('out', 0)]", "True", "True"]
