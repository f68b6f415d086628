"""Shader logging: the messages of kernels' ``os_log`` calls as records of
Python's ``logging`` module, logger ``"pymetal.kernel"``.

A kernel that includes ``<metal_logging>`` and calls
``os_log_default.log("i=%d v=%f", i, v)`` (or ``log_info`` / ``log_debug`` /
``log_error`` / ``log_fault`` of an ``os_log(subsystem, category)`` object)
logs when its library was compiled with ``pm.compile(source, logging=True)``.
Each message is one record, printf-formatted, with ``record.subsystem`` and
``record.category``; a thread's messages come in the order it logged them.
Records are emitted when pymetal waits for the work (pm.synchronize(), a
synchronous call, reading an array). The messages travel through Metal's
shader-logging API on every backend (macOS 15 on a Mac: MTLCompileOptions
.enableLogging, a log state on each stream's command queue; MetalCPU on Linux
implements the same): a command buffer keeps at most 1 MB of messages (more are
dropped, as Metal does), and at most 65536 records wait for Python at a time
(older ones are dropped and the next record says how many).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from typing import Any

from . import native as _native

__all__ = ["logger"]

logger = logging.getLogger("pymetal.kernel")

# MTLLogLevel: undefined, debug, info, notice (os_log's default: .log()), error, fault
_LEVELS = (logging.INFO, logging.DEBUG, logging.INFO, logging.INFO, logging.ERROR, logging.CRITICAL)
active = False  # a library was compiled with logging=True: synchronisations drain the queue
_next: Any = None  # the C ABI's pm_kernel_log_next, once logging is on
_bufs: Any = None
_drain_lock = threading.Lock()  # the buffers are shared: one thread drains at a time (and records keep their order)


def enable() -> None:
    """Called once pm.compile(..., logging=True) has made a library with logging."""
    global active, _next, _bufs
    if _next is None:
        fn = _native.lib().pm_kernel_log_next
        fn.restype = ctypes.c_int32
        fn.argtypes = [ctypes.POINTER(ctypes.c_uint32), ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                       ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
        _bufs = (ctypes.c_uint32(), ctypes.create_string_buffer(256), ctypes.create_string_buffer(256),
                 ctypes.create_string_buffer(1200))
        _next = fn
    active = True


def drain() -> None:
    """Emits every queued kernel message (oldest first) to the "pymetal.kernel" logger."""
    level, sub, cat, msg = _bufs
    ref = ctypes.byref(level)
    with _drain_lock:
        while _next(ref, sub, 256, cat, 256, msg, 1200):
            logger.log(_LEVELS[min(level.value, 5)], "%s", msg.value.decode("utf-8", "replace"),
                       extra={"subsystem": sub.value.decode("utf-8", "replace"),
                              "category": cat.value.decode("utf-8", "replace")})
