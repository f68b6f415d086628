"""Faults, round 2 (issue 21): crashes that looked like hangs, kernel threads
beyond a fixed table, damaged library files, FIFOs, memory limits of a cgroup,
overruns of kernel locals.

Cases that could crash or hang run in a child process with a timeout.
"""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pymetal as pm

import msl_kernels
from pymetal.runtime import native as _native

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def run_child(code, env=None, timeout=120):
    e = dict(os.environ, PYMETAL_REQUIRE_LIBRARY="1")
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=timeout)


def ok(proc):
    assert proc.returncode == 0, "child failed (%d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr[-3000:])
    return proc.stdout


# --- 6: a native crash is not held up by Swift's crash reporter -------------------------------------------------

@pytest.mark.parametrize("crash", ["ctypes.string_at(0)", "os.abort()"])
def test_native_crash_exits_promptly(crash):
    # Kernels have run (the pool's threads exist) when the process crashes outside kernel code; the parent
    # reads the pipes. Swift's swift-backtrace used to keep them open for 30 s or more.
    t = time.monotonic()
    proc = run_child("""
        import ctypes, os, numpy as np, pymetal as pm
        x = pm.arange(1 << 20, dtype=np.float32) + 1
        assert float(x.sum()) > 0
        assert "SWIFT_BACKTRACE" not in os.environ   # the user's environment is left as it was
        %s
    """ % crash, env={"SWIFT_BACKTRACE": None}, timeout=60)
    took = time.monotonic() - t
    assert proc.returncode < 0, (proc.returncode, proc.stderr[-2000:])
    assert took < 20, took
    assert len(proc.stderr) < 2000, proc.stderr   # no multi-page crash report


def test_user_swift_backtrace_setting_is_kept():
    proc = run_child("""
        import pymetal as pm, os
        pm.zeros(4).numpy()
        print(os.environ["SWIFT_BACKTRACE"])
    """, env={"SWIFT_BACKTRACE": "enable=no,color=no"})
    assert ok(proc).strip() == "enable=no,color=no"


# --- 7: no fixed limit on threads that ran kernels --------------------------------------------------------------

SPIN = msl_kernels.source("spin.metal") + r'''
kernel void add_one(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] += 1; }
'''


def test_timeout_reaches_every_pool_thread():
    # 300 threads per dispatch (299 pool workers and the caller) all spin; the 257th and later used to have no
    # guard slot, so the watchdog could not stop them and the dispatch never ended.
    proc = run_child("""
        import time, numpy as np, pymetal as pm
        lib = pm.compile(%r)
        pm.set_kernel_timeout(2)
        a = np.zeros(1 << 22, np.int32)
        t = time.monotonic()
        try:
            lib.spin(a, grid=a.size - 1)
        except pm.KernelError as e:
            assert "timed out" in str(e), e
        else:
            raise AssertionError("no KernelError")
        b = np.zeros(1 << 20, np.int32)
        lib.add_one(b, grid=b.size)
        assert (b == 1).all()
        print(round(time.monotonic() - t, 1))
    """ % SPIN, env={"PYMETAL_CPU_THREADS": "300"}, timeout=90)
    assert float(ok(proc)) < 60


def test_timeout_reaches_thread_after_300_others():
    # 300 live Python threads have run kernels (each holds a guard); an endless kernel on yet another thread
    # must still be stopped by its time limit. Twice: which thread runs a command buffer varies.
    proc = run_child("""
        import threading, time, numpy as np, pymetal as pm
        lib = pm.compile(%r)
        pm.set_kernel_timeout(2)
        N = 300
        ready, go = threading.Barrier(N + 1), threading.Event()
        def live():
            a = np.zeros(4, np.int32)
            for _ in range(3):
                lib.add_one(a, grid=4)
            ready.wait()
            go.wait()
        threads = [threading.Thread(target=live) for _ in range(N)]
        for t in threads:
            t.start()
        ready.wait()
        errors = []
        def endless():
            try:
                lib.spin(np.zeros(4, np.int32), grid=1)
            except pm.KernelError as e:
                errors.append(str(e))
        t0 = time.monotonic()
        for _ in range(2):
            t = threading.Thread(target=endless)
            t.start()
            t.join()
        go.set()
        for t in threads:
            t.join()
        assert len(errors) == 2 and all("timed out" in e for e in errors), errors
        print(round(time.monotonic() - t0, 1))
    """ % SPIN, timeout=90)
    assert float(ok(proc)) < 60


# --- 8, 9: damaged and special library files ---------------------------------------------------------------------

def _shader_library_path():
    path = os.path.join(ROOT, ".build", "shaders", "pymetal-cpu.metallib")
    if not os.path.isfile(path):
        pytest.skip("no built shader library")
    return path


def _elf_image(path):
    """The file's bytes without the compile cache's trailer (KernelCache.swift), which is not part of the ELF
    image: cutting into it leaves a library that loads and runs correctly."""
    data = open(path, "rb").read()
    if data[-16:-8] == b"pmcache1":  # the content hash
        return data[:-16]
    if data[-16:-8] == b"pmcache2":  # the files clang read, their length, the content hash
        listed = int.from_bytes(data[-24:-16], "little")
        return data[:-24 - listed]
    return data


@pytest.fixture(scope="module")
def built_library(tmp_path_factory):
    if pm.device().backend != "cpu":
        pytest.skip("MetalCPU's library files")
    # A real library file from pm.compile (found in the compile cache as the newest kernel library).
    pm.compile("kernel void faults2_mark(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) "
               "{ a[i] = 21; }")
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pymetal", "kernels")
    libs = [os.path.join(cache, f) for f in os.listdir(cache) if f.endswith(".so")] if os.path.isdir(cache) else []
    libs = sorted(libs, key=os.path.getmtime)[-50:]
    libs = [p for p in libs if b"faults2_mark" in open(p, "rb").read()]
    if not libs:
        pytest.skip("compiled library not found in the cache")
    data = _elf_image(max(libs, key=os.path.getmtime))
    copy = str(tmp_path_factory.mktemp("lib") / "good.so")
    with open(copy, "wb") as f:
        f.write(data)
    return copy


def _cuts(size):
    cuts = {0, 1, 4, 16, 63, 64, 65, 100, 4095, 4096, 4097, size - 1, size - 16, size - 4096}
    cuts |= {size * k // 23 for k in range(1, 23)}
    return sorted(c for c in cuts if 0 <= c < size)


def test_truncated_compiled_library_is_an_error(built_library, tmp_path):
    lib = pm.load(built_library)   # the whole file loads and runs
    a = np.zeros(5, np.int32)
    lib.faults2_mark(a, grid=5)
    assert (a == 21).all()
    data = _elf_image(built_library)
    paths = []
    for cut in _cuts(len(data)):
        path = str(tmp_path / ("cut%d.so" % cut))
        with open(path, "wb") as f:
            f.write(data[:cut])
        paths.append(path)
    # In a child: a regression would be SIGBUS.
    proc = run_child("""
        import pymetal as pm
        for path in %r:
            try:
                pm.load(path)
            except pm.Error as e:
                msg = str(e)
                assert path in msg and ("damaged" in msg or "not a kernel library" in msg), msg
            else:
                raise AssertionError("loaded " + path)
        print("ALL-REFUSED")
    """ % paths, timeout=120)
    assert "ALL-REFUSED" in ok(proc)


def test_truncated_shader_library_is_an_error(tmp_path):
    if pm.device().backend != "cpu":
        pytest.skip("MetalCPU's library files")
    data = _elf_image(_shader_library_path())
    for cut in (0, 100, len(data) // 7, len(data) // 2, len(data) * 9 // 10, len(data) - 1):
        path = str(tmp_path / ("shaders%d.metallib" % cut))
        with open(path, "wb") as f:
            f.write(data[:cut])
        proc = run_child("""
            import pymetal as pm
            try:
                pm.shaders()
            except pm.Error as e:
                print("ERROR", e)
        """, env={"PYMETAL_SHADER_LIBRARY": path}, timeout=60)
        out = ok(proc)
        assert "ERROR" in out and "shader library" in out and path in out, (cut, out)


def test_library_load_refuses_fifo(tmp_path):
    if pm.device().backend != "cpu":
        pytest.skip("MetalCPU's library files")
    fifo = str(tmp_path / "lib.fifo")
    os.mkfifo(fifo)
    # Through the C ABI (pm.load refuses anything but a file itself): dlopen of a FIFO blocked forever.
    proc = run_child("""
        import os, pymetal as pm
        from pymetal.runtime import native as _native
        try:
            _native.out_u64(_native.lib().pm_library_load, pm.device().handle, os.fsencode(%r))
        except pm.Error as e:
            print("ERROR", e)
    """ % fifo, timeout=30)
    out = ok(proc)
    assert "ERROR" in out and "not a regular file" in out, out


# --- 9: a cgroup's memory limit ---------------------------------------------------------------------------------

MEMORY_CHILD = """
import numpy as np, pymetal as pm
d = pm.device()
print("WS", d.recommended_working_set, d.max_buffer_length)
a = pm.empty(400 << 20, dtype=np.uint8)        # not touched: no real memory is used
try:
    b = pm.empty(400 << 20, dtype=np.uint8)    # both together are past the working set
except MemoryError as e:
    assert isinstance(e, pm.OutOfMemoryError), type(e)
    print("REFUSED", e)
del a
b = pm.empty(400 << 20, dtype=np.uint8)        # the memory of a freed array is available again
b[:10] = 7
assert int(b[:10].sum()) == 70
print("AFTER-OK")
"""


@pytest.mark.parametrize("layout", ["v2", "v1", "v1-hierarchical"])
def test_cgroup_memory_limit_bounds_buffers(tmp_path, layout):
    if pm.device().backend != "cpu":
        pytest.skip("MetalCPU's memory limits")
    limit = 1 << 30
    # PYMETAL_CGROUP_ROOT stands in for /sys/fs/cgroup. For v2 the process's own cgroup is looked up from
    # /proc/self/cgroup and every parent up to the root is read, so a limit at the root applies wherever the
    # process is; v1 falls back to the controller's mount when the process's folder is not there (a container).
    if layout == "v2":
        (tmp_path / "memory.max").write_text("%d\n" % limit)
    else:
        (tmp_path / "memory").mkdir()
        if layout == "v1":
            (tmp_path / "memory" / "memory.limit_in_bytes").write_text("%d\n" % limit)
        else:  # the limit is a parent's: memory.limit_in_bytes says none
            (tmp_path / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
            (tmp_path / "memory" / "memory.stat").write_text("cache 0\nhierarchical_memory_limit %d\n" % limit)
    with open("/proc/self/cgroup") as f:
        cgroups = f.read()
    if layout == "v2" and "0::" not in cgroups or layout != "v2" and ":memory:" not in cgroups:
        pytest.skip("this system has no cgroup %s memory controller for the process" % layout[:2])
    out = ok(run_child(MEMORY_CHILD, env={"PYMETAL_CGROUP_ROOT": str(tmp_path)}, timeout=60))
    ws, longest = map(int, out.split("WS ")[1].split()[:2])
    assert ws == limit // 4 * 3 and longest == limit // 2, out
    assert "REFUSED" in out and "working set" in out and "AFTER-OK" in out, out


def test_no_cgroup_limit_means_physical_memory(tmp_path):
    if pm.device().backend != "cpu":
        pytest.skip("MetalCPU's memory limits")
    (tmp_path / "memory.max").write_text("max\n")   # cgroup v2's "no limit"
    out = ok(run_child("import os, pymetal as pm; print(pm.device().recommended_working_set)",
                       env={"PYMETAL_CGROUP_ROOT": str(tmp_path)}, timeout=60))
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert int(out) == physical // 4 * 3, (out, physical)


# --- 5: kernel locals that overrun are contained -----------------------------------------------------------------

OVERRUN = r'''
kernel void ov_loop(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    volatile int local[16];
    for (int k = 0; k < a[0]; k++) local[k] = k + (int)i;     // a[0] elements: far past the 16
    a[i + 1] = local[i % 16];
}
kernel void ov_barrier(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    volatile int local[16];
    for (int k = 0; k < a[0]; k++) local[k] = k + (int)i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    a[i + 1] = local[i % 16];
}
kernel void ov_simd(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    volatile int local[16];
    for (int k = 0; k < a[0]; k++) local[k] = k + (int)i;
    a[i + 1] = simd_sum(local[i % 16]);
}
kernel void add_one(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] += 1; }
'''

# kernel, macros (PM_NO_LOCKSTEP: fibers for kernels with barriers / SIMD-group functions), elements written
OVERRUN_CASES = {
    "loop": ("ov_loop", None, 1000),
    "loop_far": ("ov_loop", None, 1 << 22),
    "loop_pool": ("ov_loop", None, 1000),       # many groups: the pool's threads too
    "fibers_barrier": ("ov_barrier", {"PM_NO_LOCKSTEP": 1}, 1000),
    "fibers_simd": ("ov_simd", {"PM_NO_LOCKSTEP": 1}, 1 << 20),
    "lockstep_barrier": ("ov_barrier", None, 1 << 20),
    "lockstep_simd": ("ov_simd", None, 1 << 20),
}


@pytest.mark.parametrize("case", sorted(OVERRUN_CASES))
def test_local_array_overrun_is_a_kernel_error(case):
    kernel, macros, n = OVERRUN_CASES[case]
    grid = 1 << 16 if case == "loop_pool" else 64
    proc = run_child("""
        import numpy as np, pymetal as pm
        lib = pm.compile(%r, macros=%r)
        for attempt in range(2):                 # twice: the same threads and stacks again
            a = np.zeros(%d + 1, np.int32)
            a[0] = %d
            try:
                lib.%s(a, grid=%d, threadgroup=32)
            except pm.KernelError as e:
                assert "stack overrun" in str(e) and "local array" in str(e), e
                print("KERNEL-ERROR", e)
            else:
                raise AssertionError("no KernelError")
            b = np.arange(1000, dtype=np.int32)
            lib.add_one(b, grid=b.size)
            assert (b == np.arange(1000) + 1).all()
            print("NEXT-OK")
    """ % (OVERRUN, macros, grid, n, kernel, grid), timeout=120)
    out = ok(proc)
    assert out.count("KERNEL-ERROR") == 2 and out.count("NEXT-OK") == 2, out


def test_kernels_keep_their_stack_size(dev):
    # Loop-mode kernels run on a stack of their own now: as much as a thread had before (8 MiB), so a
    # 4 MiB local array still works, and recursion that is too deep is still a stack overflow.
    lib = pm.compile(r'''
    kernel void big(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
        volatile int local[1 << 20];
        for (int k = 0; k < (1 << 20); k += 1024) local[k] = k + (int)i;
        a[i] = local[(i * 1024) % (1 << 20)];
    }''')
    a = np.zeros(8, np.int32)
    lib.big(a, grid=8)
    assert (a == np.arange(8) * 1024 + np.arange(8)).all()


def test_fiber_stacks_do_not_use_up_mappings():
    # Each kernel library's workers keep their fiber stacks; a 1,024-thread group needs 1,024 stacks, each with a
    # guard page. As PROT_NONE pages those were ~2,050 mappings per worker and library (vm.max_map_count is
    # 65,530); as guard regions (Linux 6.13+) they are none.
    if pm.device().backend != "cpu":
        pytest.skip("MetalCPU's fiber stacks")
    release = tuple(int(x) for x in os.uname().release.split(".")[:2] if x.isdigit())
    if release < (6, 13):
        pytest.skip("guard regions need Linux 6.13 (here %s)" % os.uname().release)
    proc = run_child(r'''
        import numpy as np, pymetal as pm
        def maps():
            with open("/proc/self/maps") as f:
                return sum(1 for _ in f)
        src = """kernel void tg(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]],
                                uint t [[thread_index_in_threadgroup]]) {
            threadgroup float s[1024];
            s[t] = a[i];
            threadgroup_barrier(mem_flags::mem_threadgroup);
            a[i] = s[1023 - t];
        }"""
        libs = [pm.compile(src + "// %d" % k, macros={"PM_NO_LOCKSTEP": 1}) for k in range(4)]
        a = np.arange(1024, dtype=np.float32)
        libs[0].tg(a, grid=1024, threadgroup=1024)   # the libraries are loaded and a worker exists
        before = maps()
        for lib in libs:
            lib.tg(a, grid=1024, threadgroup=1024)
        assert (a == np.arange(1024, dtype=np.float32)[::-1]).all()   # reversed five times
        print(maps() - before)
    ''', env={"PYMETAL_CPU_THREADS": "1"}, timeout=120)
    added = int(ok(proc))
    assert added < 100, added
