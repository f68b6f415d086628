"""The device, library loading and the ABI check."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pymetal as pm
from pymetal.runtime import native as _native

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_device_properties(dev):
    assert dev is pm.device()
    assert isinstance(dev.name, str) and dev.name
    assert dev.backend in ("metal", "cpu")
    if sys.platform.startswith("linux"):
        assert dev.backend == "cpu"
    assert isinstance(dev.unified_memory, bool)
    assert dev.max_threads_per_threadgroup >= 256
    assert dev.max_buffer_length > 0
    assert dev.recommended_working_set > 0
    assert dev.page_size >= 4096 and dev.page_size & (dev.page_size - 1) == 0
    assert dev.name in repr(dev)


def test_synchronize_without_work(dev):
    pm.synchronize()
    dev.synchronize()
    pm.synchronize()


def test_library_path(dev):
    path = pm.library_path()
    assert os.path.isfile(path)
    assert os.path.basename(path).startswith("libPyMetal")
    assert pm.ABI_VERSION == 3


def test_errors_hierarchy():
    assert issubclass(pm.Error, Exception)
    assert issubclass(pm.CompileError, pm.Error)
    assert issubclass(pm.KernelError, pm.Error)
    assert issubclass(pm.LibraryError, pm.Error)
    assert issubclass(pm.LibraryError, ImportError)
    assert issubclass(pm.FunctionNotFoundError, pm.NotFoundError)
    assert issubclass(pm.FunctionNotFoundError, AttributeError)
    assert issubclass(pm.OutOfMemoryError, MemoryError)


def _run(code, env_update):
    env = dict(os.environ)
    env.update(env_update)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


def _device_error(library):
    """What pm.device() raises (a pm.LibraryError, which is an ImportError) in a child process
    whose PYMETAL_LIBRARY is `library`."""
    r = _run(
        """
        import pymetal as pm
        try:
            pm.device()
        except pm.LibraryError as e:
            assert isinstance(e, ImportError) and isinstance(e, pm.Error)
            print("ERR", e)
        """,
        {"PYMETAL_LIBRARY": str(library)},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR "), r.stdout
    return r.stdout


def test_import_never_needs_the_library(tmp_path):
    out = _device_error(tmp_path / "missing" / "libPyMetal.so")
    assert "PYMETAL_LIBRARY" in out
    assert "swift build -c release --product PyMetal" in out


def test_not_a_pymetal_library(tmp_path):
    bogus = tmp_path / "libPyMetal.so"
    bogus.write_bytes(b"not a shared library")
    assert "ERR cannot load libPyMetal" in _device_error(bogus)


def test_candidate_paths_order():
    paths = _native.candidate_paths()
    pkg = os.path.join(ROOT, "pymetal")
    dirs = []
    for p in paths:
        d = os.path.dirname(p)
        if d not in dirs:
            dirs.append(d)
    assert dirs == [
        os.path.join(pkg, "lib"),
        os.path.join(ROOT, ".build", "release"),
        os.path.join(ROOT, ".build", "debug"),
    ]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_abi_mismatch_is_refused(tmp_path):
    src = tmp_path / "fake.c"
    src.write_text("int pm_abi_version(void) { return 999; }\n")
    lib = tmp_path / ("libPyMetal.dylib" if sys.platform == "darwin" else "libPyMetal.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    out = _device_error(lib)
    assert "ABI version 999" in out
    assert "expects version %d" % pm.ABI_VERSION in out
