"""The disk cache of compiled kernels and the limits on clang++ (CPU backend).

Each test runs pymetal in a subprocess with its own XDG_CACHE_HOME (copied
from a template that already holds the headers' precompiled header, so a
compile there costs one clang run, not four), since a damaged cache or a
runaway compile must not take the test process down.
"""

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

import pymetal as pm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# A kernel whose result names it: x[i] = 2 * x[i] + TAG.
PROLOGUE = textwrap.dedent("""
    import os, sys, numpy as np, pymetal as pm
    def source(tag):
        return ("kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) "
                "{ x[i] = 2 * x[i] + %d; }" % tag)
    def check(tag):
        lib = pm.compile(source(tag))
        x = np.arange(1000, dtype=np.float32)
        lib.k(x, grid=1000)
        assert np.array_equal(x, 2 * np.arange(1000, dtype=np.float32) + tag), tag
    def entries():
        folder = pm.kernel_cache_info()["path"]
        return sorted(n for n in os.listdir(folder) if n.endswith(".so"))
""")


@pytest.fixture(scope="module")
def template(dev, tmp_path_factory):
    if dev.backend != "cpu":
        pytest.skip("the CPU backend's compile cache")
    base = tmp_path_factory.mktemp("cache-template")
    done = _python(base, "check(0)")
    assert done.returncode == 0, done.stderr
    return base


@pytest.fixture
def cache(template, tmp_path):
    """A cache home of this test's own, holding the precompiled header (and tag 0's library)."""
    home = tmp_path / "home"
    shutil.copytree(template, home, symlinks=True)
    return home


# Settings of the environment the tests set themselves (or expect at their defaults).
OURS = ("PYMETAL_CACHE_MAX", "PYMETAL_COMPILE_TIMEOUT", "PYMETAL_COMPILE_MEMORY")


def _python(home, body, env=None, timeout=300, **kwargs):
    environment = {k: v for k, v in os.environ.items() if k not in OURS}
    environment.update(PYMETAL_REQUIRE_LIBRARY="1", XDG_CACHE_HOME=str(home))
    environment.update(env or {})
    return subprocess.run([sys.executable, "-c", PROLOGUE + textwrap.dedent(body)], env=environment, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, **kwargs)


def _run(home, body, env=None):
    done = _python(home, body, env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _folder(home):
    return home / "pymetal" / "kernels"


def _library(home, tag=0):
    """The cache file of tag's library (found as the one a compile of it adds)."""
    before = set(os.listdir(_folder(home)))
    _run(home, "check(%d)" % tag)
    added = [n for n in set(os.listdir(_folder(home))) - before if n.endswith(".so")]
    assert len(added) == 1, added
    return _folder(home) / added[0]


def _clangs_mentioning(text):
    """Processes whose command line contains `text` (clang++ runs in a work folder of the cache)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


# ---- where the cache is, and who may write it ------------------------------------


def test_cache_is_private_and_reported(cache):
    info = eval(_run(cache, "check(1); print(pm.kernel_cache_info())"))
    assert info["path"] == str(_folder(cache))
    assert info["persistent"] is True
    assert info["entries"] == 2  # tags 0 and 1
    assert info["bytes"] >= sum(p.stat().st_size for p in _folder(cache).iterdir() if p.is_file())
    assert info["max_bytes"] == 1 << 30
    for folder in (cache / "pymetal", _folder(cache)):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_new_cache_folders_are_0700_even_under_umask_0(tmp_path):
    home = tmp_path / "fresh"
    _run(home, "os.umask(0); print(pm.kernel_cache_info())")
    for folder in (home, home / "pymetal", _folder(home)):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_a_readable_cache_of_ours_is_tightened(cache):
    os.chmod(_folder(cache), 0o755)
    _run(cache, "check(0)")
    assert stat.S_IMODE(_folder(cache).stat().st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_cache_others_can_write_is_refused(cache, mode):
    os.chmod(_folder(cache), mode)
    before = sorted(os.listdir(_folder(cache)))
    done = _python(cache, """
        check(7)
        check(7)
        info = pm.kernel_cache_info()
        assert info["persistent"] is False and not info["path"].startswith(os.environ["XDG_CACHE_HOME"]), info
        assert os.stat(info["path"]).st_mode & 0o777 == 0o700
        print(info["path"])
    """)
    assert done.returncode == 0, done.stderr
    assert "can be written by other users" in done.stderr and str(_folder(cache)) in done.stderr
    assert sorted(os.listdir(_folder(cache))) == before, "nothing is written to a refused cache"
    assert not os.path.exists(done.stdout.strip()), "the private folder is removed at exit"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_cache_of_another_user_is_refused(cache):
    os.chown(_folder(cache), 65534, 65534)
    done = _python(cache, "check(0); assert not pm.kernel_cache_info()['persistent']")
    assert done.returncode == 0, done.stderr
    assert "belongs to user 65534" in done.stderr


def test_a_symlinked_cache_folder_is_refused(cache, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    os.rename(_folder(cache), elsewhere)
    os.symlink(elsewhere, _folder(cache))
    done = _python(cache, "check(0); assert not pm.kernel_cache_info()['persistent']")
    assert done.returncode == 0, done.stderr
    assert "is not a folder" in done.stderr


def test_without_a_usable_home_the_cache_is_private_to_the_process(template, tmp_path):
    """No shared /tmp fallback: a folder of this process's own (0700, removed at exit)."""
    home = tmp_path / "not-a-folder"
    home.write_text("")
    private = tmp_path / "tmp"
    private.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env.update(PYMETAL_REQUIRE_LIBRARY="1", HOME=str(home), TMPDIR=str(private))
    body = PROLOGUE + textwrap.dedent("""
        check(0)
        check(0)
        info = pm.kernel_cache_info()
        assert os.stat(info["path"]).st_mode & 0o777 == 0o700
        print(info["path"], info["persistent"], info["entries"])
    """)
    done = subprocess.run([sys.executable, "-c", body], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "not cached on disk: cannot make %s/.cache" % home in done.stderr
    path, persistent, entries = done.stdout.split()
    assert persistent == "False" and entries == "1" and path.startswith(str(private) + "/pymetal-")
    assert not [n for n in os.listdir(private) if n.startswith("pymetal-")], "removed at exit"


def test_bad_cache_max_is_a_clear_error(cache):
    done = _python(cache, "check(99)", env={"PYMETAL_CACHE_MAX": "lots"})
    assert done.returncode != 0
    assert "CompileError" in done.stderr and "PYMETAL_CACHE_MAX=lots" in done.stderr
    done = _python(cache, "pm.kernel_cache_info()", env={"PYMETAL_CACHE_MAX": "-5G"})
    assert "PYMETAL_CACHE_MAX=-5G" in done.stderr


# ---- entries: checked before loading ------------------------------------------------

PLANTED_C = """
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen("%s", "w");
    if (f) { fputs("planted code ran", f); fclose(f); }
}
"""


def _damage_and_recompile(home, entry, damage, tag=3):
    """Damages tag's cache entry, then checks a new process compiles tag
    correctly and leaves a sound entry of the original size in its place."""
    size = entry.stat().st_size
    damage(entry)
    _run(home, "check(%d)" % tag)
    assert entry.is_file() and not entry.is_symlink()
    assert entry.stat().st_size == size
    _run(home, "check(%d)" % tag)  # and the rewritten entry is used


def test_truncated_entry_is_deleted_and_recompiled(cache):
    entry = _library(cache, 3)
    _damage_and_recompile(cache, entry, lambda p: os.truncate(p, p.stat().st_size // 2))


def test_empty_entry_is_deleted_and_recompiled(cache):
    entry = _library(cache, 3)
    _damage_and_recompile(cache, entry, lambda p: os.truncate(p, 0))


def test_corrupt_entry_is_deleted_and_recompiled(cache):
    entry = _library(cache, 3)

    def corrupt(p):
        data = bytearray(p.read_bytes())
        for i in range(len(data) // 3, len(data) // 3 + 64):
            data[i] ^= 0x5A
        p.write_bytes(bytes(data))

    _damage_and_recompile(cache, entry, corrupt)


def test_planted_library_is_never_loaded(cache, tmp_path):
    """Another shared object put in place of an entry (same name) is deleted, not loaded."""
    entry = _library(cache, 3)
    marker = tmp_path / "marker"
    source = tmp_path / "planted.c"
    source.write_text(PLANTED_C % marker)
    planted = tmp_path / "planted.so"
    clang = os.environ.get("PYMETAL_CLANG") or shutil.which("clang") or "/opt/swift/usr/bin/clang"
    subprocess.run([clang, "-shared", "-fPIC", str(source), "-o", str(planted)], check=True, timeout=120)
    _damage_and_recompile(cache, entry, lambda p: shutil.copyfile(planted, p))
    assert not marker.exists(), "the planted library's constructor ran"


def test_symlinked_entry_is_refused(cache, tmp_path):
    """Even a link to a sound copy of the entry is not followed (and its target is left alone)."""
    entry = _library(cache, 3)
    target = tmp_path / "copy.so"
    shutil.copyfile(entry, target)
    original = target.read_bytes()

    def link(p):
        os.unlink(p)
        os.symlink(target, p)

    _damage_and_recompile(cache, entry, link)
    assert target.read_bytes() == original


def test_damaged_precompiled_header_is_rebuilt(cache):
    pch = next(p for p in _folder(cache).iterdir() if p.suffix == ".pch")
    os.truncate(pch, 100)
    _run(cache, "check(5)")
    _run(cache, "check(6)")
    assert pch.stat().st_size > 100


# ---- size bound, eviction, leftovers ------------------------------------------------


def test_least_recently_used_entries_are_evicted(cache):
    info = eval(_run(cache, "print(pm.kernel_cache_info())"))
    size = max(p.stat().st_size for p in _folder(cache).iterdir() if p.suffix == ".so")
    limit = info["bytes"] + 2 * size + size // 2  # room for about two libraries more
    out = _run(cache, """
        names = {}
        for tag in (1, 2, 0, 3, 4):   # tag 0 is used again before 3 and 4 are added
            before = set(entries())
            check(tag)
            names.update({n: tag for n in set(entries()) - before})
        info = pm.kernel_cache_info()
        print(sorted(names[n] if n in names else 0 for n in entries()), info["bytes"] <= info["max_bytes"])
    """, env={"PYMETAL_CACHE_MAX": str(limit)})
    assert out.split("]")[0] + "]" == "[0, 3, 4]", out
    assert out.strip().endswith("True")


def test_cache_max_takes_suffixes(cache):
    for text, value in (("2G", 2 << 30), ("500M", 500 << 20), ("64k", 64 << 10), ("1.5GiB", 3 << 29), ("123", 123)):
        info = eval(_run(cache, "print(pm.kernel_cache_info())", env={"PYMETAL_CACHE_MAX": text}))
        assert info["max_bytes"] == value, text


def test_clear_kernel_cache(cache):
    out = _run(cache, """
        check(1)
        print(pm.clear_kernel_cache(), pm.kernel_cache_info()["entries"], entries())
        check(1)   # compiled again
        print(len(entries()))
    """)
    assert out.split() == ["2", "0", "[]", "1"]
    assert pm.clear_cache is not pm.clear_kernel_cache and pm.cache_info is not pm.kernel_cache_info


def test_leftovers_of_killed_compiles_are_removed(cache):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = _folder(cache) / ("tmp-%s-%s" % (gone.stdout.strip(), uuid.uuid4()))
    old = _folder(cache) / ("tmp-%s" % uuid.uuid4())          # an earlier version's, an hour old
    stale = _folder(cache) / ("tmp-%d-%s" % (os.getpid(), uuid.uuid4()))  # a live process's, two hours old
    live = _folder(cache) / ("tmp-%d-%s" % (os.getpid(), uuid.uuid4()))   # a live process's compile
    for folder in (dead, old, stale, live):
        folder.mkdir()
        (folder / "library.so").write_bytes(b"x" * 100)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    _run(cache, "check(8)")  # a compile cleans up
    assert not dead.exists() and not old.exists() and not stale.exists()
    assert live.exists()


# ---- unloading ----------------------------------------------------------------------


def test_released_libraries_are_unloaded(cache):
    """Compiling, running (on the pool's threads, as loops and as fibers) and
    dropping many distinct kernels keeps the mappings bounded."""
    out = _run(cache, """
        import gc
        def maps():
            with open("/proc/self/maps") as f:
                return f.read()
        x = np.zeros(1 << 16, np.float32)
        def once(tag):
            lib = pm.compile(source(tag) + '''
                kernel void b(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]],
                              uint l [[thread_position_in_threadgroup]]) {
                    threadgroup float t[256];
                    t[l] = x[i];
                    threadgroup_barrier(mem_flags::mem_threadgroup);
                    x[i] = t[255 - l] + %d;
                }''' % tag)
            lib.k(x, grid=x.size)
            lib.b(x, grid=x.size, threadgroup=256)
            pm.synchronize()
            return pm.kernel_cache_info()["path"]
        folder = once(1000)
        gc.collect()
        start = maps().count("\\n")
        for tag in range(1001, 1025):
            once(tag)
            gc.collect()
        text = maps()
        print(text.count("\\n") - start, text.count(folder))
    """)
    grown, mapped = map(int, out.split())
    # Before: each library stayed mapped (5 mappings) with its per-thread state (thousands with fibers).
    assert grown < 30, out
    assert mapped <= 10, out  # at most the last library's segments


def test_threads_that_come_and_go_do_not_pile_up_kernel_state(cache):
    """A library's per-thread runtime state (freed when it is unloaded) is
    reused by later threads once its thread has exited."""
    out = _run(cache, """
        import threading, time
        lib = pm.compile(
            "kernel void b(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]],"
            "              uint l [[thread_position_in_threadgroup]]) {"
            "    threadgroup float t[256];"
            "    t[l] = x[i];"
            "    threadgroup_barrier(mem_flags::mem_threadgroup);"
            "    x[i] = t[255 - l];"
            "}")
        def run():
            x = np.arange(256, dtype=np.float32)
            lib.b(x, grid=256, threadgroup=256)   # small: runs on the calling thread, as fibers
            assert np.array_equal(x, np.arange(256, dtype=np.float32)[::-1])
        def maps():
            with open("/proc/self/maps") as f:
                return len(f.readlines())
        for _ in range(3):
            t = threading.Thread(target=run); t.start(); t.join()
        start = maps()
        for _ in range(30):
            t = threading.Thread(target=run); t.start(); t.join()
            time.sleep(0.01)  # join returns a moment before the OS thread is gone
        print(maps() - start)
    """)
    # One worker with 256 fiber stacks is ~500 mappings (a guard page each); without
    # reuse, 30 threads left ~15,000. A thread that is slow to exit may cost one more.
    assert int(out) < 2500, out


# ---- clang++: time and memory limits, interruption, no orphans ---------------------


def test_include_of_a_fifo_times_out(cache, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    done = _python(cache, """
        try:
            pm.compile('#include "%s"\\nkernel void k(device float* x [[buffer(0)]]) {}')
        except pm.CompileError as e:
            print("CompileError:", e)
        check(0)   # and the next compile works
    """ % fifo, env={"PYMETAL_COMPILE_TIMEOUT": "2"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "PYMETAL_COMPILE_TIMEOUT" in done.stdout and "clang++ was stopped" in done.stdout, done.stdout
    assert time.monotonic() - start < 60
    assert _clangs_mentioning(str(cache)) == []


def test_macro_bomb_hits_the_memory_limit(cache, tmp_path):
    bomb = ("#define D(x) x x\\n#define E(x) D(D(D(D(D(x)))))\\n"
            "kernel void k(device int* x [[buffer(0)]]) { E(E(E(E(E(E(1)))))); }")
    start, wall = time.monotonic(), time.time()  # file times are wall-clock times
    done = _python(cache, """
        try:
            pm.compile("%s")
        except pm.CompileError as e:
            print("CompileError:", e)
        check(0)
    """ % bomb, env={"PYMETAL_COMPILE_MEMORY": "400M", "PYMETAL_COMPILE_TIMEOUT": "100", "TMPDIR": str(tmp_path)},
               timeout=200)
    assert done.returncode == 0, done.stderr
    assert "CompileError" in done.stdout and "PYMETAL_COMPILE_MEMORY" in done.stdout, done.stdout
    assert time.monotonic() - start < 60
    assert not any(n.startswith("clang") for n in os.listdir("/tmp") if n.endswith((".cpp", ".sh")) and
                   os.path.getmtime("/tmp/" + n) > wall), "clang wrote a crash report"


def test_bad_compile_limits_are_clear_errors(cache):
    for name, value in (("PYMETAL_COMPILE_TIMEOUT", "soon"), ("PYMETAL_COMPILE_TIMEOUT", "0"),
                        ("PYMETAL_COMPILE_MEMORY", "much")):
        done = _python(cache, "check(77)", env={name: value})
        assert done.returncode != 0 and "%s=%s" % (name, value) in done.stderr, done.stderr


def _compile_blocked_on_fifo(home, fifo, after=""):
    """Starts a process whose compile blocks on `fifo`; returns it once clang++ runs."""
    body = PROLOGUE + textwrap.dedent("""
        print("start", flush=True)
        try:
            pm.compile('#include "%s"\\nkernel void k(device float* x [[buffer(0)]]) {}')
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
    """ % fifo) + textwrap.dedent(after)
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env.update(PYMETAL_REQUIRE_LIBRARY="1", XDG_CACHE_HOME=str(home), PYMETAL_COMPILE_TIMEOUT="600")
    proc = subprocess.Popen([sys.executable, "-c", body], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "start"
    deadline = time.monotonic() + 60
    while not _clangs_mentioning(str(home)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _clangs_mentioning(str(home)), "clang++ did not start"
    return proc


def _gone(home, seconds=10):
    deadline = time.monotonic() + seconds
    while _clangs_mentioning(str(home)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _clangs_mentioning(str(home)) == []


def test_ctrl_c_stops_a_compile(cache, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = _compile_blocked_on_fifo(cache, fifo, after="check(0); print('next compile ok')")
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split("\n")[:2] == ["KeyboardInterrupt", "next compile ok"], out
    assert time.monotonic() - start < 10
    assert _gone(cache)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_no_orphan_clang_when_python_is_killed(cache, tmp_path, sig):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = _compile_blocked_on_fifo(cache, fifo)
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == -sig
    assert _gone(cache), "clang++ outlived the process that ran it"
    _run(cache, "check(9)")  # the killed compile's work folder is cleaned up by the next one
    assert [n for n in os.listdir(_folder(cache)) if n.startswith("tmp-")] == []


def test_other_signals_do_not_stop_a_compile_and_reach_their_wakeup_fd(cache):
    """Only SIGINT stops clang++; another signal's handler runs after the compile,
    and a wakeup fd set before (asyncio's) still gets its byte."""
    out = _run(cache, """
        import signal, socket, threading
        seen = []
        signal.signal(signal.SIGUSR1, lambda *a: seen.append("handler"))
        theirs, ours = socket.socketpair()
        theirs.setblocking(False)
        ours.setblocking(False)
        signal.set_wakeup_fd(ours.fileno())
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        check(12)   # a cold compile: clang++ runs for longer than the timer
        assert signal.set_wakeup_fd(-1) == ours.fileno(), "restored"
        print(seen, list(theirs.recv(100)))
    """)
    assert out.splitlines()[0] == "['handler'] [%d]" % signal.SIGUSR1, out


def test_compiles_in_other_threads(cache):
    _run(cache, """
        import threading
        errors = []
        def work(tag):
            try:
                check(tag)
            except BaseException as e:
                errors.append(e)
        threads = [threading.Thread(target=work, args=(t,)) for t in (20, 21, 20)]
        for t in threads: t.start()
        for t in threads: t.join()
        assert not errors, errors
    """)
