"""Owners of libPyMetal buffer handles, the caching allocator, and the base
object of NumPy views.

A ``Buffer`` owns one pm_buffer handle. Buffers made by the array library come
from a caching allocator (``Buffer.new``): when the last Array using one is
garbage-collected its memory goes back to a free list by size class, so loops
that make temporaries do not allocate; the cache is bounded
(``PYMETAL_CACHE_LIMIT`` bytes, default 1 GiB) and ``pymetal.clear_cache()``
releases it. Reusing memory as a kernel's output is safe without waiting: all
array work runs in order on the device's stream. Host writes into a recycled
buffer first wait for work still pending on it (``host_ready``).

Kernel errors: failed work poisons the buffers it may have written (the
engine's pm_buffer_error, device.py); ``check`` raises a buffer's error and
``clear_error`` forgets it when the host rewrites the memory, both free when no
buffer is poisoned.

Host views: a kernel call that uses a buffer with ``views`` (live NumPy views
handed out by ``Array.numpy()``, whose base (``UserBase``) counts itself, or the owner of
a ForeignBuffer's memory) completes before it returns (function.py), so that a
view never shows stale data and queued work never sees a later host write.

Buffers that wrap caller memory are released (pm_buffer_release waits for
pending work that uses them); the finalizer keeps the wrapped object (``keep``)
alive until the release has returned.
"""

from __future__ import annotations

import os
import re
import threading
import weakref

from . import native as _native

__all__ = ["Buffer", "View", "clear_cache", "cache_info"]


_NUMBER = re.compile(r"[0-9]*\.?[0-9]*(E[+-]?[0-9]+)?")


def _byte_size(name, default):
    """The byte count in environment variable `name`, read as MetalCPU reads
    PYMETAL_CACHE_MAX (Toolchain.byteSize): a number with an optional K, M, G or T
    suffix in powers of 1024 and an optional B or iB; `default` if unset or empty."""
    text = os.environ.get(name, "")
    if not text:
        return default
    digits = text.strip().upper()
    digits = digits[:-2] if digits.endswith("IB") else digits[:-1] if digits.endswith("B") else digits
    scale = 1
    if digits and digits[-1] in "KMGT":
        scale = 1 << (10 * ("KMGT".index(digits[-1]) + 1))
        digits = digits[:-1]
    digits = digits.strip()
    value = float(digits) if digits and _NUMBER.fullmatch(digits) and any(c.isdigit() for c in digits) else -1.0
    if not 0 <= value * scale < 2.0**63:
        raise ValueError("%s=%s: expected a size in bytes: a number with an optional K, M, G or T suffix (powers of "
                         "1024) and an optional B, such as 1048576, 500M or 2G" % (name, text))
    return int(value * scale)


class _Pool:
    """Free pm_buffers by size class: {size: [(handle, ptr, epoch), ...]}."""

    def __init__(self):
        self.free = {}
        self.cached = 0
        self.limit = _byte_size("PYMETAL_CACHE_LIMIT", 1 << 30)
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def clear(self, release):
        with self.lock:
            items = []
            for lst in self.free.values():
                while lst:
                    try:
                        items.append(lst.pop()[0])
                    except IndexError:
                        break
            self.cached = 0
        for h in items:
            release(h)


_pool = _Pool()


def clear_cache() -> None:
    """Releases the memory the array allocator keeps for reuse.

    Examples:
        >>> pm.clear_cache()
        >>> pm.cache_info()["bytes"]
        0
    """
    _pool.clear(_native.lib().pm_buffer_release)


def cache_info() -> dict[str, int]:
    """The array allocator's cache: {'bytes': cached bytes, 'limit': ..., 'hits': ..., 'misses': ...}.

    Memory of arrays no longer used is kept (up to limit) for new arrays of a similar size.

    Examples:
        >>> sorted(pm.cache_info())
        ['bytes', 'hits', 'limit', 'misses']
    """
    return {"bytes": _pool.cached, "limit": _pool.limit, "hits": _pool.hits, "misses": _pool.misses}


def _release(release_fn, handle, keep):
    # keep: the object whose memory a wrapped buffer uses; dropped after release.
    release_fn(handle)


class Buffer:
    """One pm_buffer: handle, host address and length in bytes.

    ``epoch``: stamp of the last asynchronous dispatch that used it (device.py).
    ``pooled``: its size class, when it returns to the allocator on collection.
    ``views``: how many live host views the memory has (see the module's doc).
    """

    __slots__ = ("handle", "ptr", "length", "device", "epoch", "pooled", "views", "__weakref__")
    foreign = False  # memory pymetal does not own (ForeignBuffer)

    def __init__(self, device, handle, keep=None, ptr=None, length=None, pooled=0, epoch=0):
        self.handle = handle
        self.device = device
        self.epoch = epoch
        self.pooled = pooled
        self.views = 0
        if pooled:
            self.ptr = ptr
            self.length = length
            return
        lib = _native.lib()
        if ptr is None:
            try:
                ptr = _native.out_ptr(lib.pm_buffer_contents, handle)
                length = _native.out_u64(lib.pm_buffer_length, handle)
            except BaseException:
                lib.pm_buffer_release(handle)
                raise
        self.ptr = ptr
        self.length = length
        f = weakref.finalize(self, _release, lib.pm_buffer_release, handle, keep)
        f.atexit = False  # the process is going away; nothing to release

    def __reduce__(self):
        # Never copied or pickled on its own (a handle is only meaningful in this process):
        # an Array pickles its elements (Array.__reduce_ex__).
        raise TypeError("a pymetal Buffer cannot be pickled or copied; pickle or copy the pymetal Array "
                        "that uses it")

    def __del__(self):
        # Back to the allocator's free list (or released past its limit): this runs once per op.
        # getattr: an object that never finished __init__ has no slots set.
        size = getattr(self, "pooled", 0)
        if size and _pool is not None:
            try:
                pool = _pool
                if pool.cached + size <= pool.limit:
                    lst = pool.free.get(size)
                    if lst is None:
                        lst = pool.free.setdefault(size, [])
                    lst.append((self.handle, self.ptr, self.epoch))
                    pool.cached += size
                else:
                    _native._lib.pm_buffer_release(self.handle)
            except Exception:  # interpreter shutdown
                pass

    @staticmethod
    def size_class(nbytes, page, limit):
        """One page; powers of two up to 1 MiB; then whole MiBs; never past `limit`
        (Device.max_buffer_length), so that the largest buffer a device allows is allocated."""
        if nbytes <= page:
            size = page
        elif nbytes <= 1 << 20:
            size = 1 << (nbytes - 1).bit_length()
        else:
            size = (nbytes + (1 << 20) - 1) >> 20 << 20
        return min(size, max(nbytes, limit))

    @classmethod
    def new(cls, device, nbytes, size=0):
        """Memory for nbytes from the caching allocator (contents undefined);
        `size`: its size class, when the caller has it already."""
        size = size or cls.size_class(nbytes, device.page_size, device.max_buffer_length)
        lst = _pool.free.get(size)
        got = None
        if lst:  # the allocator's take(), inlined: this runs once per op
            try:
                got = lst.pop()
                _pool.cached -= size
                _pool.hits += 1
            except IndexError:
                pass
        else:
            _pool.misses += 1
        if got is not None:
            b = _new_buffer(cls)
            b.handle, b.ptr, b.epoch = got
            b.device, b.length, b.pooled, b.views = device, nbytes, size, 0
            if device.poisoned.value:
                b.clear_error()  # new contents: an error of the memory's last use is not this array's
            return b
        lib = _native.lib()
        _check_length(device, size)
        try:
            handle = _native.out_u64(lib.pm_buffer_new, device.handle, size)
        except MemoryError:  # over the device's memory budget: what the cache keeps goes first
            if not _pool.cached:
                raise
            clear_cache()
            handle = _native.out_u64(lib.pm_buffer_new, device.handle, size)
        try:
            ptr = _native.out_ptr(lib.pm_buffer_contents, handle)
        except BaseException:
            lib.pm_buffer_release(handle)
            raise
        return cls(device, handle, ptr=ptr, length=nbytes, pooled=size)

    @classmethod
    def wrap(cls, device, ptr, nbytes, keep):
        """Wraps page-aligned memory at ptr that `keep` owns (nbytes is rounded
        up to a page): a ForeignBuffer."""
        lib = _native.lib()
        page = device.page_size
        length = (nbytes + page - 1) // page * page
        _check_length(device, length)
        handle = _native.out_u64(lib.pm_buffer_wrap, device.handle, ptr, length)
        b = ForeignBuffer(device, handle, keep)
        b.views = 1  # its owner's, for its whole life
        with _views_lock:
            device.host_shared += 1
        weakref.finalize(b, _forget_foreign, device).atexit = False
        return b

    def host_ready(self):
        """Waits for pending device work on this memory before the host writes it."""
        if self.epoch > self.device.synced:
            self.device._wait()

    def check(self):
        """Raises the KernelError of failed work that may have written this memory (after its work was waited for)."""
        if self.device.poisoned.value:
            st = _native._lib.pm_buffer_error(self.handle)
            if st:
                raise _native.error(st)

    def clear_error(self):
        """The host rewrote the memory: it no longer holds failed work's results."""
        if self.device.poisoned.value:
            _native._lib.pm_buffer_clear_error(self.handle)


_new_buffer = object.__new__
_views_lock = threading.Lock()
_views_acquire, _views_release = _views_lock.acquire, _views_lock.release


def count_view(buffer):
    """One more user view of `buffer`'s memory (Buffer.views, Device.host_shared)."""
    _views_acquire()  # (not `with`: this runs once per read)
    try:
        buffer.views += 1
        buffer.device.host_shared += 1
    finally:
        _views_release()


def uncount_view(buffer):
    """A user view of `buffer`'s memory is gone (from __del__: quiet at interpreter shutdown)."""
    try:
        _views_acquire()
        try:
            buffer.views -= 1
            buffer.device.host_shared -= 1
        finally:
            _views_release()
    except Exception:  # interpreter shutdown
        pass



class ForeignBuffer(Buffer):
    """A Buffer over memory pymetal does not own (an aligned ndarray given to
    pm.asarray, a DLPack import). A kernel call that uses one completes before
    it returns (function.py), so that reading the memory through its owner,
    which pymetal cannot intercept, sees the results: its ``views`` is 1 (its
    owner's), counted in Device.host_shared while it lives."""

    __slots__ = ()
    foreign = True


def _forget_foreign(device):
    with _views_lock:
        device.host_shared -= 1


def _check_length(device, nbytes):
    """Refuses a length no buffer can have, before it reaches C (ctypes would wrap it modulo 2**64)."""
    if not 0 <= nbytes <= device.max_buffer_length:
        raise ValueError("cannot allocate %d bytes: a buffer holds at most %d bytes on %s "
                         "(Device.max_buffer_length)" % (nbytes, device.max_buffer_length, device.name))


class View:
    """The base object of NumPy views of pymetal memory.

    NumPy reads ``__array_interface__`` once and keeps this object as the
    array's ``.base``: it keeps the Buffer alive as long as any view exists, and
    lets pymetal recognise its own memory in NumPy arrays (walk ``.base``).
    A View made for the user (``counted``: ``Array.numpy()`` makes one per
    call) counts in its Buffer's ``views`` while any NumPy array derived from it
    lives (NumPy's views keep the first array over it, and so it, as ``.base``).
    """

    __slots__ = ("__array_interface__", "buffer", "counted")

    def __init__(self, buffer, offset, nbytes, counted=False, layout=None):
        self.buffer = buffer
        self.counted = counted
        if counted:
            count_view(buffer)
        # layout (shape, typestr, strides): the array itself, in one np.asarray (a read's hot path)
        shape, typestr, strides = layout or ((nbytes,), "|u1", None)
        self.__array_interface__ = {
            "data": (buffer.ptr + offset, False),
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "version": 3,
        }

    def __del__(self):
        if self.counted:
            uncount_view(self.buffer)
