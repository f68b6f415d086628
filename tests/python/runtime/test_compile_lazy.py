"""Big kernel libraries compiled kernel by kernel (issue 26, item 2; CPU backend).

pm.compile of a library with more than 16 kernels checks the whole source
(every error is reported there) and compiles each kernel alone when it is first
asked for, cached per kernel. The library is big_msl.py's MLX-style scan file:
one template instantiated 384 times.
"""

import os
import subprocess
import sys
import textwrap
import threading
import uuid

import numpy as np
import pytest

import pymetal as pm

import big_msl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def big(dev):
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile (Metal compiles the library whole)")
    return pm.compile(big_msl.source())


def test_the_library_lists_every_kernel(big):
    names = [big_msl.kernel_name(*c) for c in big_msl.combinations()]
    assert len(names) == 384
    assert sorted(big.functions) == sorted(names)
    assert all(name in big for name in names[::37])


# every op and every type, inclusive and exclusive, forward and reverse, each N_READS
CASES = [("sum", "float", True, False, 4), ("prod", "half", False, True, 1), ("max", "int", True, True, 2),
         ("min", "uint", False, False, 4), ("sum", "short", False, True, 2), ("max", "ushort", True, False, 1),
         ("min", "char", True, True, 4), ("prod", "uchar", True, False, 2)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: big_msl.kernel_name(*c))
def test_requested_kernels_match_numpy(big, case):
    for n in (1, 2, 31, 131, 300):  # one element, odd sizes, several chunks of the threadgroup
        got, want = big_msl.run(big, *case, n=n)
        np.testing.assert_array_equal(got, want, err_msg="n=%d" % n)


def test_an_error_in_a_kernel_never_requested_fails_the_compile(dev):
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile")
    # Two errors: one only an instantiation shows (a type Sum cannot add), one in a plain helper.
    extra = textwrap.dedent("""
        struct Opaque { int v; };
        instantiate_scan("scan_sum_opaque", Opaque, Sum, true, false, 1)
        float helper(float x) { return x + undefined_name; }
    """)
    with pytest.raises(pm.CompileError) as caught:
        pm.compile(big_msl.source(extra) + "// %s\n" % uuid.uuid4())
    message = str(caught.value)
    assert "undefined_name" in message, message
    assert "Opaque" in message, message


def test_unknown_function_names(big):
    with pytest.raises(pm.FunctionNotFoundError, match="scan_sum_double"):
        big.function("scan_sum_double_inclusive_forward_1")
    assert "scan_sum_double_inclusive_forward_1" not in big
    with pytest.raises(pm.FunctionNotFoundError):
        big.function("scan")  # the template's own name is no kernel


def test_concurrent_requests_compile_in_parallel_and_agree(dev):
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile")
    lib = pm.compile(big_msl.source() + "// %s\n" % uuid.uuid4())  # kernels compiled by no one before
    cases = [("sum", "int", True, False, 1), ("max", "float", False, False, 2), ("min", "short", True, True, 4),
             ("sum", "int", True, False, 1)]  # twice the same kernel, from two threads
    failures = []

    def request(case):
        try:
            got, want = big_msl.run(lib, *case, n=77)
            if not np.array_equal(got, want):
                failures.append((case, got, want))
        except Exception as error:  # reported below, with the case
            failures.append((case, error))

    threads = [threading.Thread(target=request, args=(case,)) for case in cases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures


CONSTANTS = """
constant bool use_offset [[function_constant(0)]];
constant int offset [[function_constant(1)]];
kernel void add_offset(device int* x [[buffer(0)]],
                       device const int* extra [[buffer(1), function_constant(use_offset)]],
                       uint i [[thread_position_in_grid]]) {
  x[i] += use_offset ? offset + extra[i] : -1;
}
"""


def test_function_constants_specialise_one_kernel_of_a_big_library(dev):
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile")
    lib = pm.compile(big_msl.source(CONSTANTS) + "// %s\n" % uuid.uuid4())
    x = np.arange(7, dtype=np.int32)
    extra = np.full(7, 100, np.int32)
    lib.function("add_offset", constants={"use_offset": True, "offset": 5})(x, extra, grid=7)
    np.testing.assert_array_equal(x, np.arange(7) + 105)
    y = np.arange(7, dtype=np.int32)
    lib.function("add_offset", constants={"use_offset": False, "offset": 5})(y, grid=7)  # no buffer 1 then
    np.testing.assert_array_equal(y, np.arange(7) - 1)
    with pytest.raises(pm.CompileError, match="function constants without a value"):
        lib.function("add_offset")
    got, want = big_msl.run(lib, "sum", "float", True, False, 1, n=40)  # the scans still work beside it
    np.testing.assert_array_equal(got, want)


PROBE = textwrap.dedent("""
    import sys
    sys.path.insert(0, %r)
    import numpy as np, pymetal as pm, big_msl
    lib = pm.compile(big_msl.source() + sys.argv[1])
    got, want = big_msl.run(lib, *eval(sys.argv[2]), n=50)
    assert np.array_equal(got, want), (got, want)
    print("ok")
""" % os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/python: big_msl


def test_each_kernel_is_cached_on_its_own_for_later_processes(clang_runs):
    tag = "// %s\n" % uuid.uuid4()

    def run(case):
        before = len(clang_runs.lines())
        done = subprocess.run([sys.executable, "-c", PROBE, tag, repr(case)], env=clang_runs.env, cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok"
        return clang_runs.lines()[before:]

    first = run(("sum", "float", True, False, 1))
    # preprocess, the headers' PCH and its object, the kernels' signatures (clang's AST), the whole-file check,
    # the kernel
    assert len(first) == 6, first
    assert sum("-ast-dump" in line for line in first) == 1, first
    assert sum("-fsyntax-only" in line and "-ast-dump" not in line for line in first) == 1, first
    folder = clang_runs.cache / "pymetal" / "kernels"
    assert len([n for n in os.listdir(folder) if n.endswith(".lib")]) == 1
    assert len([n for n in os.listdir(folder) if n.endswith(".so")]) == 1
    assert run(("sum", "float", True, False, 1)) == [], "clang ran again for a cached kernel"
    other = run(("min", "char", False, True, 2))
    # another kernel: the source through the front end again (preprocess) and that kernel; no check, and no
    # AST dump: the kernels' signatures come from the plan the first process wrote (PlanBindings.swift)
    assert len(other) == 2 and not any("-fsyntax-only" in line for line in other), other
    assert not any("-ast-dump" in line for line in other), other
    assert len([n for n in os.listdir(folder) if n.endswith(".so")]) == 2


def test_the_cli_lists_every_kernel_of_a_lazily_compiled_file(dev, tmp_path):
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile")
    path = tmp_path / "scan20.metal"
    path.write_text(big_msl.source(kernels=20) + "// %s\n" % uuid.uuid4())  # above the threshold of 16
    done = subprocess.run([sys.executable, "-m", "pymetal", "compile", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "%s: ok, 20 kernels" % path, lines
    listed = [line.split("(")[0].strip() for line in lines[1:] if not line.startswith("      ")]
    assert sorted(listed) == sorted(big_msl.kernel_name(*c) for c in big_msl.combinations()[:20])
    assert "[[buffer(2)]]" in done.stdout


def test_a_kernel_that_other_code_names_still_compiles(dev):
    """Leaving the other kernels out fails when the source names one of them: the kernel is then
    compiled with the whole unit (and its launcher alone)."""
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile")
    kernels = "\n".join("kernel void k%d(device int* x [[buffer(0)]], uint i [[thread_position_in_grid]]) "
                        "{ x[i] = %d; }" % (n, n) for n in range(17))
    source = ("#include <metal_stdlib>\nusing namespace metal;\n" + kernels + "\n"
              "using first_kernel = decltype(&k0);\n"
              "kernel void named(device int* x [[buffer(0)]], uint i [[thread_position_in_grid]]) "
              "{ first_kernel f = &k0; x[i] = f == nullptr ? -1 : 99; }\n// %s\n" % uuid.uuid4())
    lib = pm.compile(source)
    assert len(lib.functions) == 18
    for name, value in (("named", 99), ("k3", 3), ("k16", 16)):
        x = np.zeros(5, np.int32)
        lib.function(name)(x, grid=5)
        np.testing.assert_array_equal(x, value, err_msg=name)


def test_lazy_kernels_take_their_signatures_from_clangs_ast(dev):
    """A library of 18 instantiations that name no parameters (as MLX's do): each kernel, compiled alone when
    asked for, binds and names its parameters as the template's definition declares them (ClangAST.swift)."""
    if dev.backend != "cpu":
        pytest.skip("MetalCPU's lazy compile")
    types = {"float": np.float32, "int": np.int32, "uint": np.uint32, "short": np.int16, "ushort": np.uint16,
             "char": np.int8}
    lines = ["#include <metal_stdlib>", "using namespace metal;", "// %s" % uuid.uuid4(),
             "template <typename T, int N>",
             "kernel void fill(device T* out [[buffer(1)]], constant T& value [[buffer(0)]],",
             "                 uint i [[thread_position_in_grid]]) { out[i] = value + T(N); }"]
    for t in types:
        for n in range(3):
            lines.append('template [[host_name("fill_%s_%d")]] kernel void fill<%s, %d>(device %s*, constant %s&, '
                         'uint [[thread_position_in_grid]]);' % (t, n, t, n, t, t))
    lib = pm.compile("\n".join(lines))
    assert len(lib.functions) == 18
    for t, n in [("float", 2), ("short", 0), ("char", 1), ("uint", 2)]:
        fn = lib.function("fill_%s_%d" % (t, n))
        assert [(a.name, a.index) for a in fn.arguments] == [("out", 1), ("value", 0)]
        for size in (1, 7, 100):
            out = np.zeros(size, types[t])
            fn(types[t](5), out, grid=size)  # by buffer index: value is buffer 0
            np.testing.assert_array_equal(out, np.full(size, 5 + n, types[t]))


# A lazy library whose kernels have the kinds of binding the plan keeps (PlanBindings.swift): device and
# constant buffers of scalars and vectors, a reference, a threadgroup pointer, position attributes of
# several types. (A compile with function constant values reads the AST again: the bindings depend on them.)
BINDINGS_SRC = "#include <metal_stdlib>\nusing namespace metal;\n" + r"""
template <typename T, int K>
[[kernel]] void mix(const device vec<T, 2>* a [[buffer(0)]], device T* out [[buffer(1)]],
                    constant uint& n [[buffer(2)]], const constant T* bias [[buffer(3)]],
                    threadgroup T* sh [[threadgroup(0)]], uint i [[thread_position_in_grid]],
                    ushort t [[thread_position_in_threadgroup]], uint2 tpg [[threads_per_threadgroup]]) {
    sh[t] = i < n ? a[i].x * T(K) + a[i].y : T(0);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i < n) out[i] = sh[tpg.x - 1 - t] + bias[0];
}
""" + "\n".join('template [[host_name("mix_%s_%d")]] [[kernel]] decltype(mix<%s, %d>) mix<%s, %d>;' % (t, k, t, k, t, k)
                for t in ("float", "int") for k in range(1, 10))

BINDINGS_PROBE = textwrap.dedent("""
    import sys
    import numpy as np, pymetal as pm
    lib = pm.compile(sys.argv[1])
    fn = lib.function(sys.argv[2])
    assert [a.name for a in fn.arguments][:4] == ["a", "out", "n", "bias"], fn.arguments
    k = int(sys.argv[2][-1]); dtype = np.float32 if "float" in sys.argv[2] else np.int32
    n = 7
    a = np.arange(2 * n).astype(dtype).reshape(n, 2)
    out = np.zeros(n, dtype)
    fn(a, out, np.uint32(n), np.array([100], dtype), grid=8, threadgroup=8, threadgroup_memory={0: 32})
    vals = np.zeros(8, dtype); vals[:n] = a[:, 0] * k + a[:, 1]
    assert np.array_equal(out, vals[::-1][:n] + 100), out
    print("ok")
""")


def test_a_later_process_takes_the_bindings_from_the_plan(clang_runs):
    def run(name):
        before = len(clang_runs.lines())
        done = subprocess.run([sys.executable, "-c", BINDINGS_PROBE, BINDINGS_SRC, name], env=clang_runs.env,
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok"
        return clang_runs.lines()[before:]

    first = run("mix_float_3")
    assert sum("-ast-dump" in line for line in first) == 1, first
    for name in ("mix_int_7", "mix_float_9"):
        other = run(name)
        assert other and not any("-ast-dump" in line for line in other), other
    assert run("mix_int_7") == []
