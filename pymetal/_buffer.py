"""Owners of libPyMetal buffer handles, and the base object of NumPy views.

A ``Buffer`` owns one pm_buffer handle and releases it when the Buffer is
garbage-collected (weakref.finalize). The engine keeps the memory alive for
GPU work still pending, so dropping a Buffer never has to wait — except for
buffers that wrap caller memory, where pm_buffer_release waits for pending work
that uses it; the finalizer keeps the wrapped object (``keep``) alive until the
release has returned.
"""

import weakref

from . import _native


def _release(release_fn, handle, keep):
    # keep: the object whose memory a wrapped buffer uses; dropped after release.
    release_fn(handle)


class Buffer:
    """One pm_buffer: handle, host address and length in bytes."""

    __slots__ = ("handle", "ptr", "length", "device", "epoch", "__weakref__")

    def __init__(self, device, handle, keep=None):
        lib = _native.lib()
        self.handle = handle
        self.device = device
        # Stamp of the last asynchronous dispatch that used this buffer (see device.py).
        self.epoch = 0
        try:
            self.ptr = _native.out_ptr(lib.pm_buffer_contents, handle)
            self.length = _native.out_u64(lib.pm_buffer_length, handle)
        except BaseException:
            lib.pm_buffer_release(handle)
            raise
        f = weakref.finalize(self, _release, lib.pm_buffer_release, handle, keep)
        f.atexit = False  # the process is going away; nothing to release

    @classmethod
    def new(cls, device, nbytes):
        lib = _native.lib()
        handle = _native.out_u64(lib.pm_buffer_new, device.handle, nbytes)
        return cls(device, handle)

    @classmethod
    def wrap(cls, device, ptr, nbytes, keep):
        """Wraps page-aligned memory at ptr (nbytes is rounded up to a page)."""
        lib = _native.lib()
        page = device.page_size
        length = (nbytes + page - 1) // page * page
        handle = _native.out_u64(lib.pm_buffer_wrap, device.handle, ptr, length)
        return cls(device, handle, keep)


class View:
    """The base object of NumPy views of pymetal memory.

    NumPy reads ``__array_interface__`` once and keeps this object as the
    array's ``.base``: it keeps the Buffer alive as long as any view exists, and
    lets pymetal recognise its own memory in NumPy arrays (walk ``.base``).
    """

    __slots__ = ("__array_interface__", "buffer")

    def __init__(self, buffer, offset, nbytes):
        self.buffer = buffer
        self.__array_interface__ = {
            "data": (buffer.ptr + offset, False),
            "shape": (nbytes,),
            "typestr": "|u1",
            "version": 3,
        }
