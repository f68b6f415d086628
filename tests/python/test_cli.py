"""python -m pymetal: info, compile, cache, bench."""

import os
import subprocess
import sys

import pytest

import pymetal as pm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GOOD = """#include <metal_stdlib>
using namespace metal;
#ifndef SCALE
#error SCALE is not defined
#endif
kernel void scale(device const float* x [[buffer(0)]], device float* y [[buffer(2)]],
                  uint i [[thread_position_in_grid]]) {
    y[i] = SCALE * x[i];
}
kernel void fill(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = i; }
"""

BAD = """#include <metal_stdlib>
using namespace metal;
kernel void broken(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    y[i] = undefined_name;
}
"""


def cli(*args, env=None):
    full = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {}))
    return subprocess.run([sys.executable, "-m", "pymetal", *args], capture_output=True, text=True,
                          env=full, timeout=600)


def fields(text):
    return {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def test_info(dev):
    out = cli("info")
    assert out.returncode == 0, out.stderr
    f = fields(out.stdout)
    assert f["backend"] == dev.backend and f["device"] == dev.name
    assert f["self-check"] == "ok"
    assert f["pymetal"].startswith(pm.__version__)
    assert os.path.samefile(f["libPyMetal"], pm.library_path())
    assert "files" in f["kernel cache"]


def test_compile_lists_kernels_and_their_buffers(dev, tmp_path):
    src = tmp_path / "good.metal"
    src.write_text(GOOD)
    out = cli("compile", str(src), "-D", "SCALE=3")
    assert out.returncode == 0, out.stderr
    assert "ok, 2 kernels" in out.stdout
    lines = out.stdout.splitlines()
    scale = next(line for line in lines if line.strip().startswith("scale("))
    assert "buffer(0)" in scale and "buffer(2)" in scale and "buffer(1)" not in scale, scale
    assert any(line.strip().startswith("fill(") for line in lines)
    assert "execution width" in out.stdout


def test_compile_reports_diagnostics_at_the_files_lines(dev, tmp_path):
    good = tmp_path / "good.metal"
    good.write_text(GOOD)
    out = cli("compile", str(good))  # no -D SCALE: the file's own #error
    assert out.returncode == 1
    assert "SCALE is not defined" in out.stderr and "good.metal:4" in out.stderr, out.stderr
    bad = tmp_path / "bad.metal"
    bad.write_text(BAD)
    out = cli("compile", str(bad))
    assert out.returncode == 1
    assert "bad.metal:4" in out.stderr and "undefined_name" in out.stderr, out.stderr


def test_compile_include_dirs(dev, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.h").write_text("#define SCALE 5\n")
    src = tmp_path / "main.metal"
    src.write_text('#include "scale.h"\n' + GOOD)
    out = cli("compile", str(src), "-I", str(inc))
    assert out.returncode == 0, out.stderr
    assert "ok, 2 kernels" in out.stdout


def test_compile_missing_file(tmp_path):
    out = cli("compile", str(tmp_path / "nope.metal"))
    assert out.returncode == 2 and "no such file" in out.stderr


@pytest.mark.cpu_backend
def test_cache_info_and_clear(dev, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    src = tmp_path / "good.metal"
    src.write_text(GOOD)
    assert cli("compile", str(src), "-D", "SCALE=2", env=env).returncode == 0  # fills the cache
    info = cli("cache", "info", env=env)
    assert info.returncode == 0, info.stderr
    assert str(tmp_path / "cache") in info.stdout
    files = int(info.stdout.split(":")[-1].split()[0])
    assert files > 0
    cleared = cli("cache", "clear", env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert " 0 files" in cli("cache", "info", env=env).stdout


def test_bench_quick_and_plots(dev, tmp_path):
    out = cli("bench", "--quick", "--plot", str(tmp_path / "plots"))
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.split()[:1] in (["add"], ["exp"], ["sum"], ["matmul"])]
    assert len(rows) == 12 and all(float(r[-1]) > 0 for r in rows)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "plots need matplotlib" in out.stdout
    else:
        assert sorted(os.listdir(tmp_path / "plots")) == ["bench_add.png", "bench_exp.png", "bench_matmul.png", "bench_sum.png"]


def test_bad_command_line():
    out = cli("frobnicate")
    assert out.returncode == 2 and "invalid choice" in out.stderr
