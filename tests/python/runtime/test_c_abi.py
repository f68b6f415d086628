"""The C ABI from C: include/pymetal.h compiles, matches libPyMetal, and bad
input comes back as error statuses with messages (never a crash)."""
import pathlib
import shutil
import subprocess

import pytest

import pymetal as pm

ROOT = pathlib.Path(__file__).resolve().parents[3]
HEADER_DIR = ROOT / "Sources/CPyMetal/include"


def _compiler():
    compiler = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("a C compiler is needed for this test (cc)")
    return compiler


def test_c_program_against_the_header(tmp_path):
    compiler = _compiler()
    library = pathlib.Path(pm.library_path())
    program = tmp_path / "abi_check"
    subprocess.run([compiler, "-std=c11", "-Wall", "-Werror", "-I", str(HEADER_DIR),
                    str(ROOT / "tests/c/abi_check.c"), str(library), f"-Wl,-rpath,{library.parent}",
                    "-o", str(program)], check=True)
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "abi_check ok" in result.stdout


def test_python_records_match_the_header(tmp_path):
    """_native's ctypes Structures and constants against pymetal.h, from a C
    program that prints the header's sizes, offsets and values."""
    from pymetal.runtime import native as N

    structs = {"pm_arg": N.PmArg, "pm_launch_config": N.PmLaunchConfig, "pm_argument_info": N.PmArgumentInfo}
    constants = ["PM_ABI_VERSION", "PM_MAX_BINDINGS", "PM_MAX_ARGS", "PM_MAX_BYTES", "PM_BYTES_ALIGNMENT",
                 "PM_ARG_BUFFER", "PM_ARG_BYTES", "PM_ARG_THREADGROUP_MEMORY", "PM_ACCESS_UNUSED",
                 "PM_ACCESS_READ_ONLY", "PM_ACCESS_READ_WRITE", "PM_BINDING_BUFFER", "PM_BINDING_THREADGROUP",
                 "PM_FORM_UNKNOWN", "PM_FORM_POINTER", "PM_FORM_REFERENCE", "PM_FORM_VALUE", "PM_SCALAR_OTHER",
                 "PM_SCALAR_BOOL", "PM_SCALAR_INT", "PM_SCALAR_UINT", "PM_SCALAR_FLOAT", "PM_SCALAR_BFLOAT"]
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "pymetal.h"', "int main(void) {"]
    for name, st in structs.items():
        lines.append('printf("%s size %%zu\\n", sizeof(%s));' % (name, name))
        for field, _ in st._fields_:
            lines.append('printf("%s.%s offset %%zu size %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                         % (name, field, name, field, name, field))
    for c in constants:
        lines.append('printf("%s %%lld\\n", (long long)%s);' % (c, c))
    for i, space in enumerate(N.SPACES):
        if space:
            lines.append('printf("space %s %%d\\n", (int)PM_SPACE_%s);' % (space, space.upper()))
    lines.append("return 0; }")
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines) + "\n")
    program = tmp_path / "layout"
    subprocess.run([_compiler(), "-std=c11", "-Wall", "-Werror", "-I", str(HEADER_DIR), str(source), "-o", str(program)],
                   check=True)
    out = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.splitlines()
    expected = []
    import ctypes
    for name, st in structs.items():
        expected.append("%s size %d" % (name, ctypes.sizeof(st)))
        for field, ctype in st._fields_:
            expected.append("%s.%s offset %d size %d" % (name, field, getattr(st, field).offset, ctypes.sizeof(ctype)))
    expected += ["%s %d" % (c, N.ABI_VERSION if c == "PM_ABI_VERSION" else getattr(N, c)) for c in constants]
    expected += ["space %s %d" % (space, i) for i, space in enumerate(N.SPACES) if space]
    assert out == expected


def test_fuzz_the_c_abi_without_a_crash():
    """A bounded run of scripts/fuzz_abi.py (random, stale and wrong-kind handles,
    NULLs, extreme sizes, malformed strings, random dispatch shapes) in a
    subprocess: a crash would kill it. `make fuzz` runs a long one."""
    import sys
    for seed in (1, 2, 3):
        result = subprocess.run([sys.executable, str(ROOT / "scripts/fuzz_abi.py"), "--calls", "4000", "--seed", str(seed)],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (seed, result.returncode, result.stdout[-2000:], result.stderr[-2000:])
        assert "fuzz ok" in result.stdout and "dispatch" in result.stdout, result.stdout
