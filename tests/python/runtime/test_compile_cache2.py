"""The compile cache, round 2 (issue 21): files clang reads itself, a cache
that cannot be written, a concurrent clear, the size settings, a compiler that
is not clang++, the precompiled header under a small limit, a folder in place
of an entry, and a crashing clang++.

As in test_kernel_cache.py, pymetal runs in subprocesses with their own
XDG_CACHE_HOME (copied from a template that holds the precompiled header).
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pymetal as pm
from pymetal.runtime import buffer as _buffer

from test_kernel_cache import OURS, PROLOGUE, ROOT, _folder, _library, _python, _run, cache, template  # noqa: F401

# A kernel whose result comes from a header: x[0] = VALUE.
HEADER_KERNEL = "kernel void h(device float* x [[buffer(0)]]) { x[0] = VALUE; }"


def _value(home, include, env=None, body=""):
    """Compiles `#include <include>` + HEADER_KERNEL in a new process; returns x[0]."""
    out = _run(home, """
        src = %r
        %s
        lib = pm.compile(src)
        x = np.zeros(1, np.float32)
        lib.h(x, grid=1)
        print(x[0])
    """ % ("#include %s\n%s" % (include, HEADER_KERNEL), body), env)
    return float(out.split()[-1])


def _entries(home):
    """{name: inode} of the cache's libraries (a compile replaces an entry: a new inode)."""
    return {n: os.stat(_folder(home) / n).st_ino for n in os.listdir(_folder(home)) if n.endswith(".so")}


# ---- 4. headers clang reads itself ----------------------------------------------------


def test_an_absolute_include_that_changes_is_compiled_again(cache, tmp_path):
    header = tmp_path / "value.h"
    header.write_text("#define VALUE 1.0f\n")
    include = '"%s"' % header
    assert _value(cache, include) == 1.0
    header.write_text("#define VALUE 2.0f\n")  # same size: only the content differs
    assert _value(cache, include) == 2.0, "a later process got the kernel of the old header"
    entries = _entries(cache)
    assert _value(cache, include) == 2.0
    assert _entries(cache) == entries, "an unchanged header is a cache hit"
    os.utime(header, (1, 1))  # touched, same content: still a hit
    assert _value(cache, include) == 2.0
    assert _entries(cache) == entries
    header.unlink()
    done = _python(cache, "pm.compile(%r)" % ("#include %s\n%s" % (include, HEADER_KERNEL)))
    assert done.returncode != 0 and "CompileError" in done.stderr and "not found" in done.stderr, done.stderr


def test_an_angle_include_found_on_a_system_path_that_changes_is_compiled_again(cache, tmp_path):
    """<...> found through CPLUS_INCLUDE_PATH: pymetal does not inline it, clang reads it."""
    folder = tmp_path / "inc"
    folder.mkdir()
    (folder / "pm_value.h").write_text('#include "pm_value_inner.h"\n')
    inner = folder / "pm_value_inner.h"
    inner.write_text("#define VALUE 3.0f\n")
    env = {"CPLUS_INCLUDE_PATH": str(folder)}
    assert _value(cache, "<pm_value.h>", env) == 3.0
    inner.write_text("#define VALUE 4.0f\n")  # a header included by the included one
    assert _value(cache, "<pm_value.h>", env) == 4.0


def test_a_header_changed_within_a_process_is_compiled_again(cache, tmp_path):
    header = tmp_path / "value.h"
    header.write_text("#define VALUE 5.0f\n")
    out = _run(cache, """
        src = %r
        def value():
            x = np.zeros(1, np.float32)
            pm.compile(src).h(x, grid=1)
            return x[0]
        first = value()
        with open(%r, "w") as f:
            f.write("#define VALUE 6.0f\\n")
        print(first, value())
    """ % ('#include "%s"\n%s' % (header, HEADER_KERNEL), str(header)))
    assert out.split() == ["5.0", "6.0"]


def test_an_include_of_a_path_with_a_space_is_tracked(cache, tmp_path):
    folder = tmp_path / "a folder"
    folder.mkdir()
    header = folder / "value #1.h"
    header.write_text("#define VALUE 7.0f\n")
    include = '"%s"' % header
    assert _value(cache, include) == 7.0
    header.write_text("#define VALUE 8.0f\n")
    assert _value(cache, include) == 8.0


# ---- 9. a cache that cannot be written -----------------------------------------------


def _unshare_works():
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


needs_mounts = pytest.mark.skipif(not _unshare_works(), reason="needs unshare -rm to mount a small or read-only tmpfs")


def _on_small_disk(home, body, size, read_only=False):
    """Runs `body` with XDG_CACHE_HOME on a tmpfs of `size` (read-only: after `home` is copied onto it)."""
    disk = home.parent / "disk"
    disk.mkdir()
    setup = "mount -t tmpfs -o size=%s,mode=700 tmpfs %s" % (size, disk)
    if read_only:
        setup += " && cp -a %s/. %s && mount -o remount,ro %s" % (home, disk, disk)
    environment = {k: v for k, v in os.environ.items() if k not in OURS}
    private = home.parent / "tmp"
    private.mkdir()
    environment.update(PYMETAL_REQUIRE_LIBRARY="1", XDG_CACHE_HOME=str(disk), TMPDIR=str(private))
    script = '%s && exec "$0" -c "$1"' % setup
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, sys.executable, PROLOGUE + textwrap.dedent(body)],
                          env=environment, cwd=ROOT, capture_output=True, text=True, timeout=300)


FALLBACK = """
    check(31)
    check(32)
    check(31)
    info = pm.kernel_cache_info()
    assert info["persistent"] is False and info["entries"] == 2, info
    print(info["path"])
"""


@needs_mounts
@pytest.mark.parametrize("size", ["16k", "1m"])
def test_a_full_disk_falls_back_to_a_private_folder(cache, size):
    done = _on_small_disk(cache, FALLBACK, size)
    assert done.returncode == 0, done.stderr
    assert "No space left on device" in done.stderr and "kept in /" in done.stderr, done.stderr
    assert "CocoaError" not in done.stderr and done.stderr.count("not cached on disk") == 1, done.stderr
    assert not os.path.exists(done.stdout.strip()), "the private folder is removed at exit"


@needs_mounts
def test_a_read_only_cache_falls_back_to_a_private_folder(cache):
    done = _on_small_disk(cache, """
        check(0)   # in the read-only cache: still used
        assert pm.kernel_cache_info()["persistent"] is True
    """ + FALLBACK, "20m", read_only=True)
    assert done.returncode == 0, done.stderr
    assert "Read-only file system" in done.stderr and "CocoaError" not in done.stderr, done.stderr


# ---- 9. a concurrent clear -------------------------------------------------------------


def test_compiles_survive_a_concurrent_clear(cache):
    out = _run(cache, """
        import threading, time
        stop = threading.Event()
        def clear():
            while not stop.is_set():
                pm.clear_kernel_cache()
        clearer = threading.Thread(target=clear)
        clearer.start()
        errors, done = [], 0
        constant = "constant float c [[function_constant(0)]];\\n"
        special = constant + "kernel void s(device float* x [[buffer(0)]]) { x[0] = c; }"
        try:
            end = time.monotonic() + 8
            while time.monotonic() < end or done < 4:
                try:
                    check(40 + done % 2)
                    x = np.zeros(1, np.float32)
                    pm.compile(special).function("s", constants={"c": float(done % 2)})(x, grid=1)
                    assert x[0] == done % 2
                except pm.CompileError as e:
                    errors.append(str(e)[:300])
                done += 1
        finally:
            stop.set()
            clearer.join()
        print(done, errors)
    """)
    done, errors = out.split(" ", 1)
    assert errors.strip() == "[]", out
    assert int(done) >= 4


# ---- 9. the size settings: one grammar -------------------------------------------------

SIZES = [("123", 123), ("2G", 2 << 30), ("500M", 500 << 20), ("64k", 64 << 10), ("1.5GiB", 3 << 29),
         (" 1 KB ", 1024), ("0", 0), ("1e3", 1000), ("7T", 7 << 40), ("0.5k", 512)]
BAD_SIZES = ["lots", "-5G", "1_000", "G", "B", "1X", "inf", "nan", "0x10", "+5", "1.2.3", "9999999T"]


@pytest.mark.parametrize("text,value", SIZES)
def test_cache_limit_takes_the_forms_cache_max_takes(monkeypatch, text, value):
    monkeypatch.setenv("PYMETAL_CACHE_LIMIT", text)
    assert _buffer._byte_size("PYMETAL_CACHE_LIMIT", 1) == value
    assert _buffer._Pool().limit == value


@pytest.mark.parametrize("text", BAD_SIZES)
def test_bad_cache_limit_is_a_clear_error(monkeypatch, text):
    monkeypatch.setenv("PYMETAL_CACHE_LIMIT", text)
    with pytest.raises(ValueError, match=r"PYMETAL_CACHE_LIMIT=.*expected a size in bytes.*K, M, G or T.*500M"):
        _buffer._Pool()


def test_cache_limit_default(monkeypatch):
    monkeypatch.delenv("PYMETAL_CACHE_LIMIT", raising=False)
    assert _buffer._Pool().limit == 1 << 30
    monkeypatch.setenv("PYMETAL_CACHE_LIMIT", "")
    assert _buffer._Pool().limit == 1 << 30


def test_both_size_settings_read_alike(cache):
    """PYMETAL_CACHE_MAX (read by MetalCPU) and PYMETAL_CACHE_LIMIT (by Python) agree on every form."""
    for text, value in SIZES:
        out = _run(cache, "print(pm.kernel_cache_info()['max_bytes'], pm.cache_info()['limit'])",
                   env={"PYMETAL_CACHE_MAX": text, "PYMETAL_CACHE_LIMIT": text})
        assert out.split() == [str(value)] * 2, text
    for text in BAD_SIZES:
        done = _python(cache, "pm.kernel_cache_info()", env={"PYMETAL_CACHE_MAX": text})
        assert "PYMETAL_CACHE_MAX=%s: expected a size in bytes" % text in done.stderr, text
        done = _python(cache, "", env={"PYMETAL_CACHE_LIMIT": text})
        assert done.returncode != 0 and "PYMETAL_CACHE_LIMIT=%s: expected a size in bytes" % text in done.stderr, text


# ---- 9. a compiler that is not clang++, or crashes -------------------------------------


def _fake_clang(tmp_path, script):
    path = tmp_path / "fake-clang"
    path.write_text("#!/bin/sh\n" + textwrap.dedent(script))
    path.chmod(0o755)
    return str(path)


def _compile_error(home, clang, tmp_path):
    done = _python(home, """
        try:
            check(50)
        except pm.CompileError as e:
            print(e)
        else:
            print("compiled")
    """, env={"PYMETAL_CLANG": clang, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("clang", ["/bin/true", "script"])
def test_a_compiler_that_writes_nothing_is_a_clear_error(cache, tmp_path, clang):
    if clang == "script":
        clang = _fake_clang(tmp_path, "echo 'I am not clang'\nexit 0\n")
    out = _compile_error(cache, clang, tmp_path)
    assert "the compiler %s (PYMETAL_CLANG) succeeded but wrote no" % clang in out, out
    assert "set PYMETAL_CLANG to a clang++" in out and "CocoaError" not in out, out


def test_a_clang_crash_is_a_short_error_naming_the_full_dump(cache, tmp_path):
    clang = _fake_clang(tmp_path, """
        echo "fatal error: something went wrong inside"
        echo "PLEASE submit a bug report to https://example.invalid and include the crash backtrace."
        echo "Stack dump:"
        i=0
        while [ $i -lt 2000 ]; do echo "#$i 0x00000000deadbeef llvm::SomeFunction(with, long, arguments) + 42"; i=$((i+1)); done
        echo "clang++: error: clang frontend command failed due to signal 11"
        echo "clang version 99"
        kill -SEGV $$
    """)
    out = _compile_error(cache, clang, tmp_path)
    assert "something went wrong inside" in out and "failed due to signal 11" in out, out
    assert "Stack dump" not in out and "SomeFunction" not in out and "clang version" not in out, out
    assert len(out) < 2000, len(out)
    dump = [n for n in os.listdir(tmp_path) if n.startswith("pymetal-clang-")]
    assert len(dump) == 1 and str(tmp_path / dump[0]) in out, (dump, out)
    text = (tmp_path / dump[0]).read_text()
    assert "Stack dump:" in text and "#1999 " in text


# ---- 9. the precompiled header and a small limit; a folder in an entry's place ---------


def test_a_small_cache_max_keeps_the_precompiled_header(cache):
    pch = [n for n in os.listdir(_folder(cache)) if n.endswith(".pch")]
    assert len(pch) == 1
    inode = os.stat(_folder(cache) / pch[0]).st_ino
    _run(cache, "check(60)\ncheck(61)", env={"PYMETAL_CACHE_MAX": "1M"})
    _run(cache, "check(62)", env={"PYMETAL_CACHE_MAX": "1M"})
    assert os.stat(_folder(cache) / pch[0]).st_ino == inode, "the precompiled header was built again"
    libraries = [n for n in os.listdir(_folder(cache)) if n.endswith(".so")]
    assert len(libraries) == 1, "only the newest library is kept under the limit"


def test_a_folder_in_place_of_an_entry_is_replaced(cache):
    entry = _library(cache, 70)
    os.unlink(entry)
    entry.mkdir()
    (entry / "something").write_text("x")
    _run(cache, "check(70)")
    assert entry.is_file()
    _run(cache, "check(70)")


def test_a_folder_in_place_of_the_precompiled_header_is_replaced(cache):
    pch = next(p for p in _folder(cache).iterdir() if p.suffix == ".pch")
    size = pch.stat().st_size
    pch.unlink()
    pch.mkdir()
    _run(cache, "check(71)")
    assert pch.is_file() and pch.stat().st_size > size // 2
