"""The device and its default stream.

pymetal uses one default pm_stream per device, shared by all Python threads
(the engine locks it). One stream keeps ordering simple: work is executed in
the order it was submitted, so an array written by one kernel is safely read by
the next, from any thread. Every synchronisation waits for the work of all
threads submitted so far, which costs little since kernels are short.

Asynchronous work is tracked with an epoch counter: a dispatch stamps the
pymetal arrays it used with a number drawn after pm_dispatch returned; a
synchronisation draws a number before it starts and, when done, records it as
``synced``. An array whose stamp is not above ``synced`` has no pending work,
so reading it needs no call into the engine.

Kernel errors belong to the arrays: failed work poisons the buffers it may
have written (engine: pm_buffer_error), and reading one raises its KernelError,
on any thread, every time, until it is rewritten; ``poisoned`` (a word the
engine keeps) counts the poisoned buffers, so that reads ask only when one
exists. ``synchronize()`` also reports this thread's failed work, once.
"""


from __future__ import annotations

import atexit
import ctypes
import itertools
import os
import sys
import threading

from . import native as _native
from . import kernel_log as _kernel_log
from .buffer import Buffer, _pool

__all__ = ["Device", "device", "synchronize", "set_kernel_timeout", "kernel_timeout"]

# Runs Python's pending signal handlers now (raising KeyboardInterrupt after a
# Ctrl-C): a wait that Ctrl-C cut short reports the interrupt, not the kernel
# error it caused (PyDLL: called with the GIL, the error it sets is raised).
_check_signals = ctypes.pythonapi.PyErr_CheckSignals
_check_signals.restype = ctypes.c_int
_check_signals.argtypes = []


TYPE_CHECKING = False
if TYPE_CHECKING:
    from .library import Library


class Device:
    """A Metal device (the GPU on macOS; the CPU backend on Linux).

    Get the default one with :func:`pymetal.device`; arrays and libraries belong to it.

    Examples:
        >>> d = pm.device()
        >>> d.backend in ("metal", "cpu"), d.unified_memory
        (True, True)
    """

    _shaders: Library  # pymetal's shader library, set by pm.shaders() on first use

    def __init__(self, handle: int) -> None:
        lib = _native.lib()
        self.handle = handle
        self._name = _native.out_str(lib.pm_device_name, handle)
        self._backend = _native.out_str(lib.pm_device_backend, handle)
        self._unified = bool(_native.out_i32(lib.pm_device_unified_memory, handle))
        self._max_threads = _native.out_i64(lib.pm_device_max_threads_per_threadgroup, handle)
        self._max_buffer = _native.out_i64(lib.pm_device_max_buffer_length, handle)
        self._working_set = _native.out_i64(lib.pm_device_recommended_working_set, handle)
        self.page_size = _native.out_i64(lib.pm_device_page_size, handle)
        self.max_threadgroup_memory = _native.out_i64(lib.pm_device_max_threadgroup_memory, handle)
        # Live ForeignBuffers and NumPy views handed out (buffer.py): kernel calls
        # look at their arrays' Buffer.views only when this is not 0.
        self.host_shared = 0
        self.stream = _native.out_u64(lib.pm_stream_new, handle)
        # Called on every synchronisation: without argtypes, with a ready-made
        # ctypes handle (argtypes conversion costs more than the call).
        self._sync_fn, self._wait_fn, self._finish_fn, self._commit_fn = (
            lib["pm_stream_synchronize"], lib["pm_stream_wait"], lib["pm_stream_finish"], lib["pm_stream_commit"])
        for fn in (self._sync_fn, self._wait_fn, self._finish_fn, self._commit_fn):
            fn.restype = ctypes.c_int32
        self._c_stream = ctypes.c_uint64(self.stream)
        count = ctypes.POINTER(ctypes.c_int64)()
        _native.check(lib.pm_buffer_error_count(ctypes.byref(count)))
        self.poisoned = count.contents  # .value: how many live buffers failed work may have written
        self._counter = itertools.count(1)
        self.next_epoch = self._counter.__next__
        self.synced = 0
        # Bound to size-0 NumPy arguments (a kernel must not touch it).
        self.empty_buffer = Buffer.new(self, 0)

    # ---- properties ----------------------------------------------------------
    @property
    def name(self) -> str:
        """The device's name (the GPU's, or the CPU's with "MSL on N cores").

        Examples:
            >>> isinstance(pm.device().name, str)
            True
        """
        return self._name

    @property
    def backend(self) -> str:
        """"metal" (Apple GPU) or "cpu" (MSL kernels on the CPU, Linux).

        Examples:
            >>> pm.device().backend in ("metal", "cpu")
            True
        """
        return self._backend

    @property
    def unified_memory(self) -> bool:
        """Whether the CPU and the device share memory (Apple Silicon and the CPU backend: True).

        Examples:
            >>> pm.device().unified_memory
            True
        """
        return self._unified

    @property
    def max_threads_per_threadgroup(self) -> int:
        """The most threads one threadgroup may have on this device.

        Examples:
            >>> pm.device().max_threads_per_threadgroup >= 256
            True
        """
        return self._max_threads

    @property
    def max_buffer_length(self) -> int:
        """The largest buffer (array) in bytes the device can allocate.

        Examples:
            >>> pm.device().max_buffer_length > 2**20
            True
        """
        return self._max_buffer

    @property
    def recommended_working_set(self) -> int:
        """Bytes of memory the device can use without hurting performance (Metal's recommendedMaxWorkingSetSize).

        Examples:
            >>> pm.device().recommended_working_set > 0
            True
        """
        return self._working_set

    def __repr__(self) -> str:
        return "<pymetal.Device %r backend=%r unified_memory=%r>" % (
            self._name, self._backend, self._unified)

    # ---- synchronisation -----------------------------------------------------
    def synchronize(self) -> None:
        """Waits for all submitted work; raises KernelError if a kernel failed.

        Examples:
            >>> y = pm.arange(1000) * 2      # runs asynchronously
            >>> pm.device().synchronize()    # now it is done
            >>> int(y[-1])
            1998
        """
        self._sync(self._sync_fn)

    def _wait(self) -> None:
        """Waits for all submitted work without reporting failures: afterwards
        each array's error (Buffer.check) is known (internal; host reads)."""
        self._sync(self._wait_fn)

    def _finish(self) -> None:
        """Waits for all submitted work; raises KernelError only if this thread's
        latest dispatch failed (internal: a synchronous call's own work)."""
        self._sync(self._finish_fn)

    def _commit(self) -> None:
        """Starts the work encoded so far (internal: before a synchronous call)."""
        self._commit_fn(self._c_stream)

    def _sync(self, fn):
        epoch = self.next_epoch()
        try:
            st = fn(self._c_stream)
            if st:
                _check_signals()
                raise _native.error(st)
        finally:
            if epoch > self.synced:
                self.synced = epoch
            if _kernel_log.active:  # os_log messages of the work waited for (kernel_log.py)
                _kernel_log.drain()

    def gpu_time(self) -> float:
        """Seconds the last completed command buffer ran on the device.

        Examples:
            >>> _ = pm.sum(pm.ones(1000)).item()
            >>> pm.device().gpu_time() >= 0.0
            True
        """
        return _native.out_f64(_native.lib().pm_stream_gpu_time, self.stream)


_default = None
_lock = threading.Lock()


# Python locks of pymetal's modules: one that another thread held at fork()
# stays held in the child, which lacks that thread; the child gets new ones.
# Layers above add theirs with renew_lock_after_fork (runtime/ names none of them).
_FORK_LOCKS = [("pymetal.runtime.device", "_lock"), ("pymetal.runtime.buffer", "_views_lock"),
               ("pymetal.runtime.library", "_shaders_lock")]


def renew_lock_after_fork(module, name):
    """A fork()ed child replaces the lock `name` of module `module` (a dotted name) with a new one."""
    _FORK_LOCKS.append((module, name))


def _after_fork_in_child():
    for module, name in _FORK_LOCKS:
        m = sys.modules.get(module)
        if m is not None:
            setattr(m, name, threading.Lock())
    _pool.lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def device() -> Device:
    """The default device (created on first use; loads libPyMetal).

    Examples:
        >>> pm.device() is pm.device()
        True
    """
    global _default
    d = _default
    if d is None:
        with _lock:
            if _default is None:
                lib = _native.lib()
                _default = Device(_native.out_u64(lib.pm_device_default))
            d = _default
    return d


@atexit.register
def _finish_pending_work():
    # Asynchronous kernels must be done before the interpreter tears down the
    # objects whose memory they may be writing (errors no longer matter). They
    # are stopped rather than waited for (nothing can read their results any
    # more), so that exit never hangs on a kernel that does not end.
    d = _default
    if d is not None:
        try:
            lib = _native.lib()
            lib.pm_stream_commit(d.stream)
            lib.pm_cancel_all()
            d._sync_fn(d._c_stream)
        except Exception:
            pass


def set_kernel_timeout(seconds: float) -> None:
    """Sets how long one kernel (dispatch) may run, in seconds (``0``: no limit).

    A dispatch that runs longer is stopped and its command buffer fails with
    :class:`KernelError` ("timed out"), as a GPU's watchdog stops one. The
    initial value is ``PYMETAL_KERNEL_TIMEOUT`` from the environment, else 30.
    CPU backend only (on Metal the system's watchdog applies: UnsupportedError).

    Examples:
        >>> old = pm.kernel_timeout()
        >>> if pm.device().backend == "cpu":
        ...     pm.set_kernel_timeout(60)
        ...     assert pm.kernel_timeout() == 60.0
        ...     pm.set_kernel_timeout(old)
    """
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise TypeError("set_kernel_timeout(seconds): a number, not %r" % (seconds,)) from None
    st = _native.lib().pm_set_kernel_timeout(seconds)
    if st:
        raise _native.error(st)


def kernel_timeout() -> float:
    """The time limit per command buffer in seconds (0: none; see set_kernel_timeout).

    Examples:
        >>> pm.kernel_timeout() >= 0.0
        True
    """
    return _native.out_f64(_native.lib().pm_kernel_timeout)


def resolve(device_: Device | None) -> Device:
    """device= of an API call: None for the default device, else a Device (TypeError otherwise)."""
    if device_ is None:
        return device()
    if not isinstance(device_, Device):
        raise TypeError("device= must be a pymetal Device (pm.device()), not %r" % (device_,))
    return device_


def synchronize(device_: Device | None = None) -> None:
    """Waits until all work submitted to the device (the default one) has completed.

    Raises KernelError if a kernel failed.

    Examples:
        >>> x = pm.ones(4) + 1
        >>> pm.synchronize()
        >>> x.numpy()
        array([2., 2., 2., 2.], dtype=float32)
    """
    (device_ or device()).synchronize()
