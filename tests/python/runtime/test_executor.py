"""The CPU backend's executor: a dispatch split over the cores (sizes around
the split thresholds, non-uniform last groups), asynchronous work followed by
synchronisation, several Python threads, errors inside a split dispatch, and
an idle process using no CPU."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import pymetal as pm

# MetalCPU splits a plain-loop dispatch from this many threads on, a fiber
# (barrier) dispatch from FIBER_SPLIT (Sources/MetalCPU/Dispatch.swift).
LOOP_SPLIT = 16384
FIBER_SPLIT = 1024

SOURCE = r"""
#include <metal_stdlib>
using namespace metal;

// Each thread writes its group's sum of (lid + 1), after two barriers, plus its index.
kernel void group_sums(device uint* out [[buffer(0)]],
                       uint lid [[thread_position_in_threadgroup]],
                       uint gid [[thread_position_in_grid]]) {
    threadgroup atomic_uint total;
    if (lid == 0) atomic_store_explicit(&total, 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&total, lid + 1, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = atomic_load_explicit(&total, memory_order_relaxed) * 100000u + gid;
}

// Group `bad`'s second simdgroup waits at another barrier than its first (a deadlock on a GPU).
kernel void diverge(device uint* out [[buffer(0)]], constant uint& bad [[buffer(1)]],
                    uint lid [[thread_position_in_threadgroup]], uint group [[threadgroup_position_in_grid]]) {
    if (group == bad && lid >= 32) { threadgroup_barrier(mem_flags::mem_none); out[group] = 2; return; }
    threadgroup_barrier(mem_flags::mem_none);
    out[group] = 1;
}
"""

DTYPES = [np.float32, np.float16, np.int32, np.uint32]
NAMES = {np.float32: "float32", np.float16: "float16", np.int32: "int32", np.uint32: "uint32"}


@pytest.fixture(scope="module")
def lib(dev):
    return pm.compile(SOURCE)


def _operands(rng, n, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    return rng.integers(0, 1000, n).astype(dtype), rng.integers(0, 1000, n).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 255, LOOP_SPLIT - 1, LOOP_SPLIT, LOOP_SPLIT + 1, 2 * LOOP_SPLIT + 7,
                               (1 << 16) - 1, 1 << 16, (1 << 16) + 1, (1 << 20) + 3])
def test_split_add_matches_numpy(dev, rng, n, dtype):
    add = getattr(pm.shaders(), "add_" + NAMES[dtype])
    a, b = _operands(rng, n, dtype)
    x, y, out = pm.asarray(a), pm.asarray(b), pm.full(n, 7, dtype)
    add(x, y, out, grid=n)  # asynchronous: pymetal arrays only
    np.testing.assert_array_equal(out.numpy(), a + b)
    # Explicit threadgroups that leave the last group short.
    for tg in (100, 1024):
        out2 = pm.zeros(n, dtype)
        add(x, y, out2, grid=n, threadgroup=min(tg, max(1, n)))
        np.testing.assert_array_equal(out2.numpy(), a + b)


@pytest.mark.parametrize("groups,size", [(FIBER_SPLIT // 64 - 1, 64), (FIBER_SPLIT // 64, 64),
                                         (FIBER_SPLIT // 64 + 1, 64), (333, 96), (1, 1024)])
def test_split_fiber_kernel(lib, groups, size):
    out = pm.zeros(groups * size, np.uint32)
    lib.group_sums(out, groups=groups, threadgroup=size)
    total = size * (size + 1) // 2
    expected = ((total * 100000 + np.arange(groups * size, dtype=np.uint64)) % 2**32).astype(np.uint32)  # MSL uint wraps
    np.testing.assert_array_equal(out.numpy(), expected)


def test_async_then_sync(dev, rng):
    add = pm.shaders().add_float32
    n = 3 * LOOP_SPLIT + 5
    a = rng.standard_normal(n).astype(np.float32)
    x, acc = pm.asarray(a), pm.zeros(n, np.float32)
    for _ in range(200):  # several batches of dispatches, each reading the last one's result
        add(acc, x, acc, grid=n)
    expected = np.zeros(n, np.float32)
    for _ in range(200):
        expected += a
    np.testing.assert_array_equal(acc.numpy(), expected)
    # Synchronous NumPy calls after asynchronous ones see their results.
    out = np.empty(n, np.float32)
    add(acc.numpy(), a, out, grid=n)
    np.testing.assert_array_equal(out, expected + a)


def test_many_threads_split_work(dev):
    add = pm.shaders().add_float32
    n = 5 * LOOP_SPLIT + 11
    errors = []

    def work(k):
        try:
            rng = np.random.default_rng(k)
            a = rng.standard_normal(n).astype(np.float32)
            x, acc = pm.asarray(a), pm.zeros(n, np.float32)
            expected = np.zeros(n, np.float32)
            for i in range(30):
                add(acc, x, acc, grid=n)
                expected += a
                if i % 7 == 3:
                    np.testing.assert_array_equal(acc.numpy(), expected)
            np.testing.assert_array_equal(acc.numpy(), expected)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors


@pytest.mark.cpu_backend
def test_error_inside_a_split_dispatch_is_reported(lib):
    groups = 64  # 64 x 64 threads: split over the cores
    out = pm.zeros(groups, np.uint32)
    lib.diverge(out, np.uint32(37), groups=groups, threadgroup=64)
    with pytest.raises(pm.KernelError, match="diverge"):
        pm.synchronize()
    # The stream goes on working afterwards.
    lib.diverge(out, np.uint32(groups), groups=groups, threadgroup=64)
    np.testing.assert_array_equal(out.numpy(), np.ones(groups, np.uint32))


IDLE_SCRIPT = textwrap.dedent("""
    import os, time
    import numpy as np
    import pymetal as pm

    def metalcpu_switches():
        total = threads = 0
        for task in os.listdir("/proc/self/task"):
            try:
                with open("/proc/self/task/%s/comm" % task) as f:
                    if not f.read().startswith("MetalCPU"):
                        continue
                with open("/proc/self/task/%s/status" % task) as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            total += int(line.split()[1])
                            threads += 1
            except OSError:
                pass
        return threads, total

    add = pm.shaders().add_float32
    n = 1 << 20
    x = pm.zeros(n, np.float32)
    add(x, x, x, grid=n); pm.synchronize()               # split over the pool
    add(np.ones(8, np.float32), np.ones(8, np.float32), np.empty(8, np.float32), grid=8)
    for _ in range(100):
        add(x, x, x, grid=1000)                          # asynchronous batches
    time.sleep(0.05)                                     # the background runner takes them
    pm.synchronize()
    time.sleep(0.05)                                     # spins and last ticks end
    threads, before = metalcpu_switches()
    t = time.process_time()
    time.sleep(0.5)
    used = time.process_time() - t
    print(threads, metalcpu_switches()[1] - before, used)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (the CPU backend's threads)")
def test_idle_process_uses_no_cpu(dev):
    if dev.backend != "cpu":
        pytest.skip("the CPU backend's threads")
    run = subprocess.run([sys.executable, "-c", IDLE_SCRIPT], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    threads, wakeups, used = run.stdout.split()
    assert int(threads) >= 2, "the pool's workers and the background runner are there: " + run.stdout
    assert int(wakeups) == 0, "a MetalCPU thread woke up while nothing was queued"
    assert float(used) < 0.02, "the process used %s s of CPU in 0.5 s of idling" % used


# ---- mid-size dispatches and sleeping workers -----------------------------------------------
# Below WAKE threads a split dispatch does not wake sleeping workers (it runs whole on the
# caller, or with workers still spinning after a previous job), and after a split that lost
# to the caller alone (a loaded machine) jobs run whole for a while (Sources/CMetalCPU/pool.c).
# Every way gives the same results: each size runs after the workers fell asleep and back to
# back behind a large split job (workers spinning).
LOOP_WAKE, FIBER_WAKE = 262144, 16384  # Dispatch.wakePicos over a kernel's cost per thread before it is timed


def _states():
    """What runs before each checked dispatch: workers asleep, or spinning behind a large job."""
    big = pm.zeros(4 * LOOP_WAKE, np.float32)

    def asleep():
        pm.synchronize()
        time.sleep(0.002)  # past the workers' spin (100 us): they sleep

    def spinning():
        pm.shaders().add_float32(big, big, big, grid=big.size)  # split, workers woken
        pm.synchronize()
    return {"asleep": asleep, "spinning": spinning}


@pytest.mark.parametrize("state", ["asleep", "spinning"])
@pytest.mark.parametrize("n", [LOOP_SPLIT - 1, LOOP_SPLIT, LOOP_SPLIT + 1, 65536 + 3, LOOP_WAKE - 1, LOOP_WAKE,
                               LOOP_WAKE + 1, (1 << 20) + 3])
def test_loop_kernel_around_the_wake_threshold(dev, n, state):
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = pm.asarray(a), pm.asarray(b)
    before = _states()[state]
    for _ in range(3):  # also after a split that may have switched splitting off (a loaded machine)
        out = pm.full(n, 7, np.float32)
        before()
        pm.shaders().add_float32(x, y, out, grid=n)
        np.testing.assert_array_equal(out.numpy(), a + b)


@pytest.mark.parametrize("state", ["asleep", "spinning"])
@pytest.mark.parametrize("groups", [FIBER_SPLIT // 64 + 1, FIBER_WAKE // 64 - 1, FIBER_WAKE // 64,
                                    FIBER_WAKE // 64 + 1])
def test_barrier_kernel_around_the_wake_threshold(lib, groups, state):
    size = 64
    before = _states()[state]
    expected = ((size * (size + 1) // 2 * 100000 + np.arange(groups * size, dtype=np.uint64)) % 2**32).astype(np.uint32)
    for _ in range(2):
        out = pm.zeros(groups * size, np.uint32)
        before()
        lib.group_sums(out, groups=groups, threadgroup=size)
        np.testing.assert_array_equal(out.numpy(), expected)
