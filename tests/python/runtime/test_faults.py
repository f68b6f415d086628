"""Faults in kernels are contained (issue 10): each fault fails its command
buffer with KernelError, the process survives and the next kernel runs.

Each case runs in a child process (a regression could crash or hang it); the
child checks the exception, then runs a correct kernel and checks its result.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import pymetal as pm

import msl_kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Shared by the children: the faulting kernels and a correct one to run after.
KERNELS = r'''
kernel void add_one(device const int *a [[buffer(0)]], device int *b [[buffer(1)]],
                    uint i [[thread_position_in_grid]]) { b[i] = a[i] + 1; }
kernel void null_write(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    device int *p = (device int *)(size_t)a[0];   // a[0] == 0: a null pointer the compiler cannot see
    p[i] = 1;
}
kernel void far_write(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a[(long)i + (1l << 40)] = 1;
}
kernel void negative_read(device int *a [[buffer(0)]], device int *b [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    b[i] = a[(long)i - (1l << 40)];
}
kernel void trap(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    if (a[i] == 0) __builtin_trap();
}
int depth(device int *a, int n) { volatile int pad[64]; pad[n & 63] = n; return n ? depth(a, n - 1) + pad[0] : a[0]; }
kernel void recurse(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    a[i] = depth(a, 1 << 30);
}
kernel void big_local(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]],
                      uint t [[thread_index_in_threadgroup]]) {
    volatile int local[262144];               // 1 MiB in a kernel with a barrier (fibers)
    local[i * 1000 % 262144] = i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    a[i] = local[i * 1000 % 262144] + t;
}
''' + msl_kernels.source("spin.metal")

PRELUDE = '''
import sys, time, numpy as np, pymetal as pm
lib = pm.compile(%r)
def after():
    a = np.arange(1000, dtype=np.int32)
    b = np.zeros_like(a)
    lib.add_one(a, b, grid=a.size)
    assert (b == a + 1).all(), b
    print("NEXT-OK", flush=True)
def expect(fn, *words):
    t = time.monotonic()
    try:
        fn()
    except pm.KernelError as e:
        msg = str(e)
        assert all(w in msg for w in words), msg
        print("KERNEL-ERROR", round(time.monotonic() - t, 3), msg, flush=True)
    else:
        raise AssertionError("no KernelError")
''' % KERNELS


def run_child(body, env=None, timeout=120):
    e = dict(os.environ, PYMETAL_REQUIRE_LIBRARY="1")
    e.update(env or {})
    code = PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=e, capture_output=True, text=True,
                          timeout=timeout)


def check(proc):
    assert proc.returncode == 0, "child failed (%d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert "NEXT-OK" in proc.stdout, proc.stdout
    return proc.stdout


@pytest.fixture(scope="module", autouse=True)
def warm(dev):
    pm.compile(KERNELS)  # compiled once; the children load it from the disk cache


FAULTS = {
    "null": ("lib.null_write(np.zeros(64, np.int32), grid=64)", ["null_write", "invalid memory access", "null"]),
    "far": ("lib.far_write(np.zeros(64, np.int32), grid=64)", ["far_write", "invalid memory access"]),
    "negative": ("lib.negative_read(np.zeros(64, np.int32), np.zeros(64, np.int32), grid=64)",
                 ["negative_read", "invalid memory access"]),
    "trap": ("lib.trap(np.zeros(64, np.int32), grid=64)", ["trap", "trap"]),
    "recursion": ("lib.recurse(np.zeros(64, np.int32), grid=64)", ["recurse", "stack overflow"]),
    "big_local": ("lib.big_local(np.zeros(64, np.int32), grid=64, threadgroup=32)", ["big_local", "stack overflow"]),
    # the pool's worker threads too (many groups, split over every core)
    "far_pool": ("lib.far_write(np.zeros(1 << 20, np.int32), grid=1 << 20)", ["far_write", "invalid memory access"]),
    # an Array (asynchronous dispatch), reported when read
    "async": ("x = pm.zeros(64, np.int32); lib.far_write(x, grid=64); x.numpy()", ["far_write", "invalid memory"]),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_fails_command_buffer_and_process_survives(name):
    call, words = FAULTS[name]
    out = check(run_child("""
        expect(lambda: exec(%r), *%r)
        after()
        expect(lambda: exec(%r), *%r)   # a second time, on the same threads
        after()
    """ % (call, words, call, words)))
    assert out.count("KERNEL-ERROR") == 2


def test_fault_outside_kernels_keeps_default_behaviour():
    # A segfault in ordinary code (here ctypes) still kills the process once pymetal's handlers are
    # installed. (Swift's crash reporter, which would run next, is turned off: it is slow, and its
    # helper process keeps the pipes open.)
    proc = run_child("""
        after()
        import ctypes
        ctypes.string_at(1)
    """, env={"SWIFT_BACKTRACE": "enable=no"})
    assert proc.returncode == -signal.SIGSEGV, (proc.returncode, proc.stderr[-2000:])


def _division_reference(a, b, bits, signed):
    """arm64's results: x / 0 = 0, x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0."""
    q = np.zeros(a.size, dtype=object)
    r = np.zeros(a.size, dtype=object)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        if y == 0:
            q[i], r[i] = 0, x
        else:
            t = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
            q[i], r[i] = t, x - t * y
    wrap = lambda v: ((v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))) if signed else v % (1 << bits)
    return (np.array([wrap(v) for v in q], dtype=a.dtype), np.array([wrap(v) for v in r], dtype=a.dtype))


@pytest.mark.parametrize("ty,dtype", [("int", np.int32), ("uint", np.uint32), ("long", np.int64),
                                      ("ulong", np.uint64), ("short", np.int16), ("char", np.int8)])
def test_integer_division_has_defined_results(dev, rng, ty, dtype):
    src = """
    kernel void d(device const %(t)s *a [[buffer(0)]], device const %(t)s *b [[buffer(1)]],
                  device %(t)s *q [[buffer(2)]], device %(t)s *r [[buffer(3)]], uint i [[thread_position_in_grid]]) {
        q[i] = a[i] / b[i];
        r[i] = a[i] %% b[i];
    }
    kernel void d4(device const %(t)s4 *a [[buffer(0)]], device const %(t)s4 *b [[buffer(1)]],
                   device %(t)s4 *q [[buffer(2)]], device %(t)s4 *r [[buffer(3)]], uint i [[thread_position_in_grid]]) {
        q[i] = a[i] / b[i];
        r[i] = a[i] %% b[i];
    }
    """ % {"t": ty}
    lib = pm.compile(src)
    info = np.iinfo(dtype)
    for n in (1, 7, 64, 1001):
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        b = rng.integers(-3 if info.min else 0, 3, n).astype(dtype)  # many zeros
        a[::5] = info.min
        if info.min:
            b[::5] = -1
        a[1::9] = 0
        for kernel, m in ((lib.d, n), (lib.d4, n // 4)):
            if m == 0:
                continue
            q = np.zeros(4 * m if kernel is lib.d4 else m, dtype)
            r = np.zeros_like(q)
            kernel(a[:q.size], b[:q.size], q, r, grid=m)
            eq, er = _division_reference(a[:q.size], b[:q.size], np.dtype(dtype).itemsize * 8, bool(info.min))
            np.testing.assert_array_equal(q, eq)
            np.testing.assert_array_equal(r, er)


def test_timeout_stops_command_buffer():
    out = check(run_child("""
        assert pm.kernel_timeout() == 0.5
        expect(lambda: lib.spin(np.zeros(64, np.int32), grid=63), "spin", "timed out", "0.5 s")
        after()
        pm.set_kernel_timeout(0.3)
        x = pm.zeros(1 << 16, np.int32)
        lib.spin(x, grid=(1 << 16) - 1)    # many groups: every worker thread spins
        expect(lambda: x.numpy(), "spin", "timed out")
        after()
        big = np.zeros(1 << 20, np.int32)   # a 2^40-thread grid of a correct kernel: hours of work
        expect(lambda: lib.add_one(big, big, grid=(1 << 20, 1 << 20)), "add_one", "timed out")
        after()
        pm.set_kernel_timeout(0)
        assert pm.kernel_timeout() == 0
        for bad in (-1, float("nan"), float("inf")):
            try:
                pm.set_kernel_timeout(bad)
            except ValueError:
                pass
            else:
                raise AssertionError(bad)
    """, env={"PYMETAL_KERNEL_TIMEOUT": "0.5"}))
    times = [float(line.split()[1]) for line in out.splitlines() if line.startswith("KERNEL-ERROR")]
    assert len(times) == 3 and 0.4 < times[0] < 10 and times[1] < 10 and times[2] < 10, out


def test_timeout_is_per_dispatch():
    # The engine batches queued dispatches into command buffers: thirty queued kernels of
    # about 0.2 s each (6 s together) are not stopped by a 2 s limit; one of 8 s is.
    out = check(run_child("""
        loop = pm.compile(
            "kernel void loop(device float *a [[buffer(0)]], constant long &n [[buffer(1)]],"
            "                 uint i [[thread_position_in_grid]]) {"
            "    float v = a[i];"
            "    for (long k = 0; k < n; k++) v = v * 0.999999f + 1e-7f;"
            "    a[i] = v;"
            "}").loop
        x = pm.zeros(1, pm.float32)
        n = 1 << 20
        while True:  # calibrate: n iterations take about 0.2 s here
            t = time.monotonic(); loop(x, np.int64(n), grid=1); x.numpy(); t = time.monotonic() - t
            if t > 0.1:
                break
            n *= 2
        n = int(n * 0.2 / t)
        pm.set_kernel_timeout(2.0)
        t = time.monotonic()
        for _ in range(30):
            loop(x, np.int64(n), grid=1)
        x.numpy()
        print("QUEUED", round(time.monotonic() - t, 2), flush=True)
        expect(lambda: (loop(x, np.int64(n * 40), grid=1), x.numpy()), "loop", "timed out", "2 s")
        pm.set_kernel_timeout(30)
        after()
    """, env={"PYMETAL_KERNEL_TIMEOUT": "30"}, timeout=200))
    queued = [float(line.split()[1]) for line in out.splitlines() if line.startswith("QUEUED")]
    assert queued and queued[0] > 2.0, out  # longer than the limit altogether, and not stopped


def test_default_timeout_is_set():
    assert pm.kernel_timeout() == float(os.environ.get("PYMETAL_KERNEL_TIMEOUT", 30))


@pytest.mark.parametrize("mode", ["sync", "async", "pool"])
def test_ctrl_c_stops_waited_work(mode):
    call = {
        "sync": "lib.spin(np.zeros(64, np.int32), grid=63)",
        "async": "x = pm.zeros(64, np.int32); lib.spin(x, grid=63); x.numpy()",
        "pool": "x = pm.zeros(1 << 16, np.int32); lib.spin(x, grid=(1 << 16) - 1); x.numpy()",
    }[mode]
    # (not through exec(): a KeyboardInterrupt out of exec'd code makes Python exit by SIGINT later)
    code = PRELUDE + textwrap.dedent("""
        after()
        print("WAITING", flush=True)
        t = time.monotonic()
        try:
            %s
        except KeyboardInterrupt:
            print("INTERRUPTED", round(time.monotonic() - t, 3), flush=True)
        after()
    """ % call)
    env = dict(os.environ, PYMETAL_REQUIRE_LIBRARY="1", PYMETAL_KERNEL_TIMEOUT="60")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while True:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line)
            if line.startswith("WAITING"):
                break
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    out = "".join(lines) + out
    assert proc.returncode == 0, (out, err[-3000:])
    assert "INTERRUPTED" in out and out.count("NEXT-OK") == 2, out
    assert elapsed < 10, elapsed


def test_exit_does_not_wait_for_running_kernels():
    t = time.monotonic()
    proc = run_child("""
        after()
        x = pm.zeros(64, np.int32)
        lib.spin(x, grid=63)
        pm.device().stream  # dispatched, never read: exit must not hang on it
    """, env={"PYMETAL_KERNEL_TIMEOUT": "60"}, timeout=50)
    check(proc)
    assert time.monotonic() - t < 30


# ---- limits --------------------------------------------------------------------


def test_threadgroup_memory_sized_in_64_bits(dev):
    lib = pm.compile("""
    kernel void huge(device char *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
        threadgroup char t[(1ull << 32) + 16];
        t[i] = 1;
        out[i] = t[i];
    }
    kernel void over(device char *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
        threadgroup float t[8193];
        t[i] = 1;
        out[i] = t[i];
    }
    """)
    with pytest.raises(pm.Error, match="over 4 GiB.*limit is 32768"):
        lib.huge(np.zeros(4, np.int8), grid=4)
    with pytest.raises(pm.Error, match="32784 bytes.*limit is 32768"):
        lib.over(np.zeros(4, np.int8), grid=4)


def test_array_sizes_are_constant_expressions(dev):
    lib = pm.compile("""
    constant int K = 3;
    kernel void k(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]],
                  uint t [[thread_index_in_threadgroup]]) {
        threadgroup float a[1 << 5];
        threadgroup float b[(64 >> 1) + K * 2 - 6], c[sizeof(float4) * 2];
        a[t] = i;
        b[t] = 2 * i;
        c[t] = 3 * i;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out[i] = a[31 - t] + b[31 - t] + c[31 - t];
    }
    """)
    out = np.zeros(64, np.float32)
    lib.k(out, grid=64, threadgroup=32)
    i = np.arange(64)
    expect = 6 * ((i // 32) * 32 + 31 - i % 32)
    np.testing.assert_array_equal(out, expect)
    assert lib.k.static_threadgroup_memory == (32 + 32 + 32) * 4


# ---- shader validation ------------------------------------------------------------
# Accesses are checked against the bound buffer's length, as Metal's shader
# validation does; the arrays here fill their buffers exactly (16 KiB, a page).
# (VALIDATED starts with a newline: its first kernel is on line 2.)

VALIDATED = r'''
kernel void read_next(device const float *a [[buffer(0)]], device float *b [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    b[i] = a[i + 1];
}
kernel void write_next(device float *b [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    b[i + 1] = 1.0f;
}
kernel void read_before(device const float *a [[buffer(0)]], device float *b [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    b[i] = 0;
    b[i] = (a + 1)[(int)i - 2];
}
kernel void constant_next(constant float *c [[buffer(0)]], device float *b [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    b[i] = c[i + 1];
}
kernel void tg_array_next(device float *b [[buffer(0)]], uint i [[thread_position_in_grid]],
                          uint t [[thread_index_in_threadgroup]]) {
    threadgroup float s[32];
    s[t] = i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    b[i] = s[t + 1];
}
kernel void tg_param_write(device float *b [[buffer(0)]], threadgroup float *s [[threadgroup(0)]],
                           uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]]) {
    s[t + 1] = i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    b[i] = s[t];
}
kernel void correct(device const float *a [[buffer(0)]], device float *b [[buffer(1)]],
                    constant float *c [[buffer(2)]], uint i [[thread_position_in_grid]],
                    uint t [[thread_index_in_threadgroup]]) {
    threadgroup float s[32];
    s[t] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    device const float *p = a + 1;
    b[i] = s[31 - t] + p[(int)i - 1] + *c + c[i];
}
'''

N = 4096  # float32: one 16 KiB page


@pytest.fixture(scope="module")
def vlib(dev):
    return pm.compile(VALIDATED, macros={"PM_VALIDATION": 1})


def _pages(n=N):
    a = pm.zeros(n, np.float32)
    assert a._buf.length == 4 * n  # the array fills its buffer
    return a


@pytest.mark.parametrize("name,args,words", [
    ("read_next", lambda: (_pages(), _pages()), ["line 4 of", "element 4096 of `a` [[buffer(0)]]",
                                                  "4096 elements of 4", "(4095,0,0)"]),
    ("write_next", lambda: (_pages(),), ["line 7 of", "element 4096 of `b` [[buffer(0)]]", "(4095,0,0)"]),
    ("read_before", lambda: (_pages(), _pages()), ["line 12 of", "element -1 of `a` [[buffer(0)]]", "(0,0,0)"]),
    ("constant_next", lambda: (_pages(), _pages()), ["line 16 of", "element 4096 of `c` [[buffer(0)]]"]),
    ("tg_array_next", lambda: (_pages(),), ["line 23 of", "element 32 of the threadgroup array `s` declared at line 20",
                                           "32 elements", "(31,0,0)"]),
    ("tg_param_write", lambda: (_pages(),), ["line 27 of", "element 32 of `s` [[threadgroup(0)]]", "32 elements",
                                            "(31,0,0)"]),
])
def test_validation_reports_off_by_one(vlib, name, args, words):
    kw = {"threadgroup": 32}
    if name == "tg_param_write":
        kw["threadgroup_memory"] = {0: 32 * 4}
    with pytest.raises(pm.KernelError) as e:
        getattr(vlib, name)(*args(), grid=N, **kw)
        pm.synchronize()
    msg = str(e.value)
    assert name in msg and "validation: out of bounds" in msg
    for w in words:
        if w == "(31,0,0)":  # the last thread of whichever group failed first (groups run in parallel)
            m = re.search(r"position \((\d+),0,0\) in the grid", msg)
            assert m and int(m.group(1)) % 32 == 31, msg
        else:
            assert w in msg, (w, msg)


def test_validation_leaves_correct_kernels_alone(vlib, rng):
    # s[31 - t] in a partial group reads an element no thread wrote: reported (test_sanitizer.py)
    with pytest.raises(pm.KernelError, match="uninitialized"):
        vlib.correct(np.ones(31, np.float32), np.zeros(31, np.float32), np.ones(31, np.float32), grid=31,
                     threadgroup=32)
    for n in (32, 1024, N):
        a = rng.standard_normal(n).astype(np.float32)
        c = rng.standard_normal(n).astype(np.float32)
        b = np.zeros(n, np.float32)
        vlib.correct(a, b, c, grid=n, threadgroup=32)
        # s[31 - t] reads the mirrored thread of the same (full) group
        i = np.arange(n)
        mirror = (i // 32) * 32 + 31 - i % 32
        full = mirror < n
        expect = np.where(full, a[np.minimum(mirror, n - 1)], 0) + a + c[0] + c
        np.testing.assert_allclose(b[full], expect[full], rtol=1e-6)


def test_validation_from_the_environment():
    # PYMETAL_VALIDATION=1 turns it on for every compile (a new process: it is read once)
    out = check(run_child("""
        v = pm.compile(%r)
        a = pm.zeros(%d, np.float32)
        expect(lambda: (v.write_next(a, grid=%d), pm.synchronize()), "write_next", "element %d")
        after()
    """ % (VALIDATED, N, N, N), env={"PYMETAL_VALIDATION": "1"}))
    assert "KERNEL-ERROR" in out
