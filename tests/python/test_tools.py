"""The Swift command-line tools: pymetal-info runs on libPyMetal, loaded at run time."""

import os
import shutil
import subprocess

import pytest

import pymetal as pm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INFO = os.path.join(ROOT, ".build", "release", "pymetal-info")


@pytest.fixture(scope="module")
def info(dev):
    if not os.path.isfile(INFO):
        if os.environ.get("PYMETAL_REQUIRE_LIBRARY"):
            pytest.fail("%s is not built (swift build -c release)" % INFO)
        pytest.skip("pymetal-info is not built")
    return INFO


def run(info, **env):
    return subprocess.run([info], capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))


def test_info_self_check_through_the_release_library(info):
    out = run(info)
    assert out.returncode == 0, out.stderr
    fields = dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)
    assert fields["self-check axpy"].strip().startswith("ok")
    assert fields["backend"].strip() == pm.device().backend
    assert int(fields["shader library"].split()[0]) > 100
    # The library next to the tool: the one `swift build -c release` made.
    assert os.path.samefile(fields["library"].strip(), os.path.join(os.path.dirname(info), os.path.basename(pm.library_path())))


def test_info_loads_whichever_library_it_is_given(info, tmp_path):
    # A copy elsewhere is the one that runs: nothing of pymetal is linked into the tool.
    copy = tmp_path / os.path.basename(pm.library_path())
    shutil.copy2(os.path.join(os.path.dirname(info), copy.name), copy)
    out = run(info, PYMETAL_LIBRARY=str(copy))
    assert out.returncode == 0, out.stderr
    assert "library:           %s\n" % copy in out.stdout
    missing = run(info, PYMETAL_LIBRARY=str(tmp_path / "nothing.so"))
    assert missing.returncode == 1
    assert "cannot load" in missing.stderr and "nothing.so" in missing.stderr


def test_info_binary_has_no_pymetal_code(info):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    symbols = subprocess.run([nm, info], capture_output=True, text=True, check=True).stdout
    defined = [line for line in symbols.splitlines() if line.split()[-1].startswith("pm_") and " U " not in line]
    assert defined == [], defined
