"""The disk cache of compiled kernels, and compiles that Ctrl-C can stop.

On Linux, kernels compiled from MSL are kept in ``$XDG_CACHE_HOME/pymetal/kernels``
(else ``~/.cache/pymetal/kernels``), at most ``PYMETAL_CACHE_MAX`` bytes (least
recently used first out). On macOS Metal caches compiled shaders itself, and
``kernel_cache_info()["path"]`` is None. Distinct from the array allocator's
``pymetal.cache_info()`` / ``pymetal.clear_cache()``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import threading

from . import native as _native

__all__ = ["kernel_cache_info", "clear_kernel_cache"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")


def kernel_cache_info() -> dict[str, Any]:
    """The compiled-kernel cache on disk, as a dict.

    ``path`` (None where Metal caches kernels itself), ``persistent`` (False when
    the disk cache was refused, for example because another user can write it:
    kernels are then kept for this process only), ``entries`` (kernel
    libraries), ``bytes`` (everything in it) and ``max_bytes``.

    Examples:
        >>> sorted(pm.kernel_cache_info())
        ['bytes', 'entries', 'max_bytes', 'path', 'persistent']
    """
    lib = _native.lib()
    path, entries, size, limit, persistent = (ctypes.c_char_p(), ctypes.c_int64(), ctypes.c_int64(),
                                              ctypes.c_int64(), ctypes.c_int32())
    _native.check(lib.pm_kernel_cache_info(ctypes.byref(path), ctypes.byref(entries), ctypes.byref(size),
                                           ctypes.byref(limit), ctypes.byref(persistent)))
    return {
        "path": path.value.decode() if path.value is not None else None,
        "persistent": bool(persistent.value),
        "entries": entries.value,
        "bytes": size.value,
        "max_bytes": limit.value,
    }


def clear_kernel_cache() -> int:
    """Deletes the cached kernel libraries (kernels in use stay usable); returns how many.

    The next use of a kernel compiles it again.

    Examples:
        >>> import os, tempfile
        >>> saved = os.environ.get("XDG_CACHE_HOME")
        >>> os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()  # a cache of its own for this example
        >>> lib = pm.compile("kernel void k(device float* x [[buffer(0)]]) { x[0] = 1.0f; }")
        >>> if pm.device().backend == "cpu":  # (Metal caches kernels itself: no path)
        ...     assert pm.kernel_cache_info()["entries"] == 1
        ...     assert pm.clear_kernel_cache() == 1
        ...     assert pm.kernel_cache_info()["entries"] == 0
        >>> if saved is None:
        ...     del os.environ["XDG_CACHE_HOME"]
        ... else:
        ...     os.environ["XDG_CACHE_HOME"] = saved
    """
    return _native.out_i64(_native.lib().pm_kernel_cache_clear)


def interruptible(call: Callable[[], T]) -> T:
    """Runs `call()` (a compile) so that Ctrl-C stops it promptly. Python only
    notes a SIGINT while the main thread is in C; during the call its wakeup
    socket (signal.set_wakeup_fd) is one the compiler watches, so clang++ is
    stopped, the call returns, and the KeyboardInterrupt is raised. Bytes of
    signals that arrive meanwhile go on to the wakeup fd set before, if any."""
    if threading.current_thread() is not threading.main_thread():
        return call()  # only the main thread handles signals
    ours, theirs = socket.socketpair()
    try:
        ours.setblocking(False)
        theirs.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(theirs.fileno(), warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter
            return call()
        lib = _native.lib()
        lib.pm_compile_interrupt_socket(ours.fileno())
        try:
            return call()
        finally:
            lib.pm_compile_interrupt_socket(-1)
            signal.set_wakeup_fd(previous)
            try:
                seen = ours.recv(4096)
            except BlockingIOError:
                seen = b""
            if seen and previous != -1:
                try:
                    os.write(previous, seen)
                except OSError:
                    pass
    finally:
        ours.close()
        theirs.close()
