"""The stream/error/host-coherence model (issues 20.2, 21.2, 21.3).

Host views: a NumPy view of a pymetal array (``.numpy()``) never shows stale
data, and queued work never sees a later write through it: a kernel call that
uses an array with live views completes before it returns.

Kernel errors belong to the arrays the failed work may have written: reading
one raises that KernelError, on any thread, every time, until it is rewritten;
work that reads a poisoned array passes the error to what it writes.

A synchronous call (NumPy arguments) delivers its own results, or raises its
own failure, whatever this thread's earlier asynchronous work did.
"""

import threading

import numpy as np
import pytest

import pymetal as pm

DTYPES = [np.float32, np.int32, np.int64, np.uint8]
SIZES = [0, 1, 7, 1000]

SRC = r'''
kernel void fill(device const float *flag [[buffer(0)]], device float *out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    if (flag[0] != 0 && i == 0) __builtin_trap();   // fails when flag[0] != 0
    out[i] = 5;
}
kernel void inc(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] += 1; }
'''


@pytest.fixture(scope="module")
def lib(dev):
    return pm.compile(SRC)


@pytest.fixture
def faults(dev, lib):
    """For tests that make kernels fail (a trap stops a CPU command buffer; Metal has no such trap).
    Afterwards no failure of this thread is left unreported (each test reports its own)."""
    if dev.backend != "cpu":
        pytest.skip("__builtin_trap fails a command buffer on the CPU backend only")
    pm.synchronize()
    yield lib
    pm.synchronize()


def _values(n, dtype):
    return (np.arange(n) % 100).astype(dtype)


# ---- host views -------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_view_shows_work_queued_after_it(dev, dtype, n):
    x = pm.asarray(_values(n, dtype))
    v = x.numpy()
    x += 1
    np.testing.assert_array_equal(v, _values(n, dtype) + dtype(1))  # no synchronisation in between
    w = v[1:]  # a view of the view keeps the array's views counted
    del v
    x *= 2
    np.testing.assert_array_equal(w, ((_values(n, dtype) + dtype(1)) * dtype(2))[1:])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_queued_work_does_not_see_later_host_write(dev, dtype, n):
    x = pm.asarray(_values(n, dtype))
    v = x.numpy()
    y = x + 1
    z = pm.sum(x)
    v[:] = 7
    np.testing.assert_array_equal(y.numpy(), _values(n, dtype) + dtype(1))
    assert z.item() == _values(n, dtype).sum(dtype=z.numpy().dtype)


def test_view_of_a_slice_and_custom_kernel(dev, lib):
    x = pm.zeros(10)
    v = x[2:5].numpy()  # the whole buffer is the view's memory
    lib.inc(x, grid=10)
    np.testing.assert_array_equal(v, [1, 1, 1])
    a = np.asarray(x)  # __array__ hands out a view too
    lib.inc(x, grid=10)
    np.testing.assert_array_equal(a, np.full(10, 2, np.float32))


def test_views_are_counted_and_cost_nothing_once_gone(dev):
    x = pm.arange(8.0)
    base = dev.host_shared
    v = x.numpy()
    w = v.reshape(2, 4)[:, 1:]
    assert x._buf.views == 1 and dev.host_shared == base + 1
    del v
    assert x._buf.views == 1  # w still views the memory
    del w
    assert x._buf.views == 0 and dev.host_shared == base
    # Reads that hand out no view count none.
    repr(x), str(x), x.tolist(), x[3].item(), float(x[3]), x.sum().item()
    assert x._buf.views == 0 and dev.host_shared == base
    np.testing.assert_array_equal((x + 1).numpy(), np.arange(8.0, dtype=np.float32) + 1)


# ---- kernel errors belong to the arrays --------------------------------------------------

def _reads(a):
    """Every way the host reads an array."""
    return [a.numpy, lambda: np.asarray(a), lambda: a.tolist(), lambda: a[0].item(), lambda: repr(a),
            lambda: str(a), lambda: float(a[0]), lambda: np.from_dlpack(a)]


def _raises_kernel_error(a, times=2):
    for read in _reads(a):
        for _ in range(times):
            with pytest.raises(pm.KernelError, match="trap"):
                read()


def test_failed_work_poisons_what_it_may_write(faults):
    lib = faults
    before = pm.arange(8.0) * 3           # same batch, before the failure: ran
    flag = pm.ones(1)
    out = pm.full(8, -1.0)
    lib.fill(flag, out, grid=8)            # fails
    after = out * 2                        # same batch, after it: did not run
    other = pm.arange(8.0) + 1             # same batch, after it: did not run
    with pytest.raises(pm.KernelError, match="trap"):
        pm.synchronize()                   # the thread's report, once
    pm.synchronize()
    _raises_kernel_error(out)
    _raises_kernel_error(after)
    _raises_kernel_error(other)
    # What the failed dispatch only read, and work before it, are fine.
    np.testing.assert_array_equal(flag.numpy(), [1])
    np.testing.assert_array_equal(before.numpy(), np.arange(8.0) * 3)
    # Work that reads a poisoned array passes the error on, whenever it runs.
    derived = pm.sqrt(out) + 1
    _raises_kernel_error(derived, times=1)
    # A rewrite clears it; then derived work is fine again.
    lib.fill(pm.zeros(1), out, grid=8)
    np.testing.assert_array_equal(out.numpy(), np.full(8, 5, np.float32))
    np.testing.assert_array_equal((out + 1).numpy(), np.full(8, 6, np.float32))
    pm.synchronize()  # nothing else failed


def test_error_survives_reading_and_is_not_garbage_after_catching(faults):
    """Tried as a new user would: catch the KernelError, then read what was queued after it."""
    lib = faults
    out = pm.full(5, -1.0)
    lib.fill(pm.ones(1), out, grid=5)
    queued = [out + k for k in range(3)]
    with pytest.raises(pm.KernelError):
        out.numpy()
    for q in queued:
        with pytest.raises(pm.KernelError):
            q.numpy()
    with pytest.raises(pm.KernelError):
        pm.synchronize()


@pytest.mark.parametrize("batch", [1, 2, 70])  # 70: past a batch (64 dispatches): two command buffers
def test_error_reaches_the_thread_that_reads(faults, batch):
    lib = faults
    for _ in range(10):
        box = {}

        def producer():
            o = pm.full(8, -1.0)
            for _ in range(batch - 1):
                o += 0
            lib.fill(pm.ones(1), o, grid=8)
            box["o"] = o
            box["p"] = o * 2           # queued after the failure by the producer

        t = threading.Thread(target=producer)
        t.start()
        t.join()
        for key in ("o", "p"):
            for _ in range(3):
                with pytest.raises(pm.KernelError, match="trap"):
                    box[key].numpy()
        box["q"] = box["o"] + 1        # the consumer's own work on it inherits the error
        with pytest.raises(pm.KernelError, match="trap"):
            box["q"].numpy()
    pm.synchronize()  # the producers' failures are theirs, not this thread's


def test_poisoned_memory_reused_by_the_allocator_is_clean(faults):
    lib = faults
    out = pm.full(4096, -1.0)
    lib.fill(pm.ones(1), out, grid=4096)
    with pytest.raises(pm.KernelError):
        pm.synchronize()
    del out
    fresh = pm.asarray(np.arange(4096, dtype=np.float32))  # same size class: the same memory
    np.testing.assert_array_equal(fresh.numpy(), np.arange(4096, dtype=np.float32))
    np.testing.assert_array_equal(pm.zeros(4096).numpy(), np.zeros(4096, np.float32))


def test_synchronous_call_with_poisoned_input_raises(faults):
    lib = faults
    bad = pm.full(1, -1.0)
    lib.fill(pm.ones(1), bad, grid=1)   # bad is poisoned (its value is not what was meant)
    with pytest.raises(pm.KernelError):
        pm.synchronize()
    small = np.zeros(1, np.float32)
    with pytest.raises(pm.KernelError, match="trap"):
        pm.shaders().add_float32(bad, bad, small, grid=1)  # its results come from a poisoned input
    view = pm.zeros(4)
    v = view.numpy()
    with pytest.raises(pm.KernelError, match="trap"):
        view += bad                         # a viewed array: the call completes and reports it
    del v


# ---- synchronous calls deliver their own results -----------------------------------------

@pytest.mark.parametrize("committed", [False, True])
@pytest.mark.parametrize("n", [1, 7, 1000, 70000])  # 70000 floats: used in place, not copied
def test_synchronous_call_after_async_failure(faults, committed, n):
    lib = faults
    failed = pm.full(8, -1.0)
    lib.fill(pm.ones(1), failed, grid=8)  # fails, unreported
    if committed:
        pm.device()._wait()                 # ran and failed before the call
    small = np.zeros(n, np.float32)
    lib.fill(np.zeros(1, np.float32), small, grid=n)  # succeeds: its results arrive
    np.testing.assert_array_equal(small, np.full(n, 5, np.float32))
    # Its own failure is its own.
    with pytest.raises(pm.KernelError, match="trap"):
        lib.fill(np.ones(1, np.float32), small, grid=n)
    # The older failure is still reported, to this thread once, and by its array.
    with pytest.raises(pm.KernelError, match="trap"):
        pm.synchronize()
    with pytest.raises(pm.KernelError, match="trap"):
        failed.numpy()


def test_unreported_failures_are_not_taken_for_a_later_calls(faults):
    """A failure read through its array stays unreported to the thread; a later synchronous call
    (whose command buffer may reuse a freed one's memory) is not blamed for it."""
    lib = faults
    for _ in range(20):
        out = pm.full(8, -1.0)
        lib.fill(pm.ones(1), out, grid=8)
        with pytest.raises(pm.KernelError):
            out.numpy()
        del out
        small = np.zeros(8, np.float32)
        lib.fill(np.zeros(1, np.float32), small, grid=8)
        np.testing.assert_array_equal(small, np.full(8, 5, np.float32))
    with pytest.raises(pm.KernelError, match="and 19 more"):
        pm.synchronize()
