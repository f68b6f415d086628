"""The C ABI from C: include/pymetal.h compiles, matches libPyMetal, and bad
input comes back as error statuses with messages (never a crash)."""
import pathlib
import shutil
import subprocess

import pytest

import pymetal as pm

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_c_program_against_the_header(tmp_path):
    compiler = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("a C compiler is needed for this test (cc)")
    library = pathlib.Path(pm.library_path())
    program = tmp_path / "abi_check"
    subprocess.run([compiler, "-std=c11", "-Wall", "-Werror", "-I", str(ROOT / "Sources/PyMetal/include"),
                    str(ROOT / "tests/c/abi_check.c"), str(library), f"-Wl,-rpath,{library.parent}",
                    "-o", str(program)], check=True)
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "abi_check ok" in result.stdout
