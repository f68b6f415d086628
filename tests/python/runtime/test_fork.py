"""fork() while pymetal works (issue 21.1): the child is always usable.

Every lock is taken around the fork (the engine's ForkSafety, MetalCPU's
CPUFork, guard.c, pool.c, and the Python-side locks), so the child gets none
held; the threads that ran work are not in the child: the command buffer that
was running fails there ("running when the process forked") and poisons what
it may have written; committed work that had not started runs in the child.

Each scenario runs in a subprocess with a timeout, and each fork's child is
waited for with its own deadline (killed and counted as hung after it), so a
hang fails the test instead of stopping the suite.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import msl_kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

PRELUDE = r'''
import itertools, os, signal, sys, threading, time
import numpy as np
import pymetal as pm

SRC = """
kernel void slow(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                 constant int &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float acc = 0;
    for (int k = 0; k < n; k++) acc = acc * 0.999f + a[(i + k) % 64];
    out[i] = acc;
}
@SPIN@"""
lib = pm.compile(SRC)

def child_body():
    """What each child does: compute something right with pymetal, then exit."""
    x = pm.arange(1000.0)
    got = (x * 2 + 1).numpy()
    ok = np.array_equal(got, np.arange(1000.0, dtype=np.float32) * 2 + 1) and pm.sum(x).item() == 499500
    small = np.zeros(64, np.float32)
    lib.slow(np.ones(64, np.float32), small, np.int32(10), grid=64)   # a synchronous NumPy call
    return ok and bool(np.all(small > 0))

def fork_and_check(count, deadline=30.0, extra=None):
    """Forks `count` times; returns (ok, bad, hung)."""
    ok = bad = hung = 0
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            try:
                good = child_body() and (extra is None or extra())
                os._exit(0 if good else 3)
            except BaseException as e:
                print("child:", type(e).__name__, e, flush=True)
                os._exit(4)
        end = time.monotonic() + deadline
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                    ok += 1
                else:
                    bad += 1
                break
            if time.monotonic() > end:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                hung += 1
                break
            time.sleep(0.005)
        time.sleep(0.02)
    return ok, bad, hung

def fork_while(target, threads, forks):
    """fork_and_check(forks) while `threads` threads run target(stop)."""
    stop = threading.Event()
    ts = [threading.Thread(target=target, args=(stop,)) for _ in range(threads)]
    for t in ts:
        t.start()
    time.sleep(0.2)
    try:
        return fork_and_check(forks)
    finally:
        stop.set()
        for t in ts:
            t.join()
'''
PRELUDE = PRELUDE.replace("@SPIN@", msl_kernels.source("spin.metal"))  # tests/python/msl/kernels/


def _run(body, timeout=400):
    script = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("PYMETAL_KERNEL_TIMEOUT", "60")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.fixture(scope="module", autouse=True)
def _compiled(dev):
    if not hasattr(os, "fork"):
        pytest.skip("no fork() on this platform")
    _run("")  # compiles the kernels once; the children of the tests load them from the disk cache


def test_fork_while_another_thread_is_in_a_synchronous_call():
    out = _run('''
        def caller(stop):
            a, o = np.ones(64, np.float32), np.zeros(64, np.float32)
            while not stop.is_set():
                lib.slow(a, o, np.int32(100000), grid=64)
        print("RESULT", *fork_while(caller, threads=1, forks=5))
    ''')
    assert "RESULT 5 0 0" in out, out


def test_fork_while_async_work_runs():
    out = _run('''
        def worker(stop):
            a, o = pm.ones(64), pm.zeros(64)
            while not stop.is_set():
                lib.slow(a, o, np.int32(100000), grid=64)  # asynchronous: the background runner runs it
                time.sleep(0.005)
                o.numpy()
        print("RESULT", *fork_while(worker, threads=1, forks=5))
    ''')
    assert "RESULT 5 0 0" in out, out


def test_fork_with_four_threads_dispatching():
    out = _run('''
        def dispatcher(stop):
            x = pm.ones(1000)
            for k in itertools.count():
                if stop.is_set():
                    break
                x = x * 1.0 + 0.0
                if k % 10 == 0:
                    assert x.numpy()[0] == 1.0
        print("RESULT", *fork_while(dispatcher, threads=4, forks=20))
    ''')
    assert "RESULT 20 0 0" in out, out


def test_fork_while_another_thread_compiles():
    # The compile path's caches (the compiler's memo, the disk cache, the pipelines of a library) are
    # locked for a lookup or an insert; the child gets them unlocked, and compiles a new source itself.
    out = _run('''
        def compiler(stop):
            for k in itertools.count():
                if stop.is_set():
                    break
                src = "kernel void k%d(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = %d; }"
                l = pm.compile(src % (k, k) + " // %f" % time.time())
                a = np.zeros(4, np.float32)
                l.function("k%d" % k)(a, grid=4)
                assert a[0] == k
        def compiles_too():
            src = "kernel void c(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = 7; }"
            a = np.zeros(4, np.float32)
            pm.compile(src + " // child %d %f" % (os.getpid(), time.time())).c(a, grid=4)
            return bool(np.all(a == 7))
        stop = threading.Event()
        t = threading.Thread(target=compiler, args=(stop,))
        t.start()
        time.sleep(0.2)
        try:
            print("RESULT", *fork_and_check(6, deadline=120, extra=compiles_too))
        finally:
            stop.set()
            t.join()
    ''', timeout=900)
    assert "RESULT 6 0 0" in out, out


def test_work_running_at_fork_fails_in_the_child_and_poisons_its_output():
    out = _run('''
        pm.set_kernel_timeout(3)
        before = pm.arange(64.0) + 1
        before.numpy()
        a = pm.zeros(65, np.int32)
        lib.spin(a, grid=64)        # runs until the time limit, asynchronously
        pm.device()._commit()
        time.sleep(0.3)             # the background runner has started it
        def extra():
            try:
                a.numpy()
                return False
            except pm.KernelError as e:
                ok = "forked" in str(e)
            try:
                pm.synchronize()    # this thread's failed work, reported once
                return False
            except pm.KernelError as e:
                ok = ok and "forked" in str(e)
            pm.synchronize()
            return ok and np.array_equal(before.numpy(), np.arange(64.0, dtype=np.float32) + 1)
        print("RESULT", *fork_and_check(1, extra=extra))
        try:
            a.numpy()
        except pm.KernelError as e:
            print("PARENT", "timed out" in str(e))  # the parent's own copy of the work goes on
    ''')
    assert "RESULT 1 0 0" in out and "PARENT True" in out, out


def test_multiprocessing_fork_pool():
    out = _run('''
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        def square_sum(k):
            x = pm.arange(float(k))
            return float(pm.sum(x * x).item())

        x = pm.arange(100.0) * 2          # work of the parent before the pool forks
        stop = threading.Event()
        def busy():                        # and work under way while it forks
            y = pm.ones(1000)
            while not stop.is_set():
                y = y * 1.0
        t = threading.Thread(target=busy)
        t.start()
        want = [float(sum(i * i for i in range(k))) for k in range(1, 9)]
        good = True
        for _ in range(3):
            with mp.get_context("fork").Pool(2) as pool:
                good = good and pool.map_async(square_sum, range(1, 9), chunksize=1).get(timeout=60) == want
        print("POOL", good)
        with ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
            got = list(ex.map(square_sum, range(1, 9), timeout=60))
        print("EXECUTOR", got == want)
        stop.set()
        t.join()
        print("PARENT", x.numpy()[-1] == 198)
    ''')
    assert "POOL True" in out and "EXECUTOR True" in out and "PARENT True" in out, out
