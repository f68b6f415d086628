"""The memory a kernel call packs into: the pm_arg and pm_launch_config record
formats, and per-thread scratch (pm_arg records, setBytes data, staging buffers).

The hot path avoids allocation: records are packed with struct into a per-thread
scratch buffer, and staging buffers are reused per thread and argument position.
"""

from __future__ import annotations

import ctypes
import struct
import threading

from . import native as _native
from .buffer import Buffer

_ARG = struct.Struct(_native.struct_format(_native.PmArg))
_ARG_SIZE = _ARG.size
_ALIGN = _native.PM_BYTES_ALIGNMENT
_pack_arg = _ARG.pack_into
_pack_2args = struct.Struct("<" + _ARG.format[1:] * 2).pack_into
_pack_3args = struct.Struct("<" + _ARG.format[1:] * 3).pack_into
_LAUNCH_CONFIG = struct.Struct(_native.struct_format(_native.PmLaunchConfig))
_BUFFER, _BYTES, _THREADGROUP = _native.PM_ARG_BUFFER, _native.PM_ARG_BYTES, _native.PM_ARG_THREADGROUP_MEMORY
_EMPTY = _native.PM_ARG_LENGTH_EMPTY  # the length of an empty array's binding (0 would mean the whole buffer)

_addressof = ctypes.addressof


class _Scratch:
    """Per-thread memory for pm_arg records, setBytes data and staging buffers.

    Staging buffers (for NumPy arguments that are copied) are kept per
    argument position and reused by the next synchronous call on this thread,
    which cannot start before the previous one has completed: big arrays are
    not reallocated and page-faulted on every call. What is kept is bounded by
    STAGING_KEEP bytes per thread; a buffer beyond that serves one call only.
    """

    STAGING_KEEP = 256 << 20

    __slots__ = ("args", "data", "data_addr", "datamv", "staging", "staging_bytes", "temporary", "handle",
                 "handle_ref")
    staging_bytes: int  # declared for type checkers (set in __init__, used in stage above it)

    def stage(self, device, i, nbytes):
        """A new staging buffer of at least nbytes for argument i."""
        b = self.staging[i]
        size = max(device.page_size, 1 << (nbytes - 1).bit_length())
        kept = self.staging_bytes - (b.length if b is not None else 0)
        if kept + size > self.STAGING_KEEP:
            b = Buffer.new(device, nbytes)
            self.temporary.append(b)
        else:
            self.staging[i] = None  # freed before its replacement is allocated
            self.staging[i] = b = Buffer.new(device, size)
            self.staging_bytes = kept + size
        b.host_ready()  # memory from the array allocator may still be read by queued kernels
        return b

    def __init__(self) -> None:
        self.staging: list = [None] * _native.PM_MAX_BINDINGS
        self.staging_bytes = 0
        self.temporary: list = []
        self.args = ctypes.create_string_buffer(_ARG_SIZE * _native.PM_MAX_ARGS)
        self.data = ctypes.create_string_buffer(_native.PM_MAX_BYTES * _native.PM_MAX_BINDINGS)
        self.data_addr = _addressof(self.data)
        self.datamv = memoryview(self.data).cast("B")
        self.handle = ctypes.c_uint64()
        self.handle_ref = ctypes.byref(self.handle)


class _Local(threading.local):
    """Per-thread state: each thread gets its scratch on first use (threading.local
    runs __init__ in every thread), so the hot paths read _tls.scratch unguarded."""

    def __init__(self) -> None:
        self.scratch = _Scratch()


_tls = _Local()
