"""Kernel functions and calling them.

``fn(*args, grid=..., threadgroup=..., threadgroup_memory=..., raw=False)``
binds the positional arguments to the kernel's [[buffer(n)]] parameters in
order of n, checked against the kernel's signature (``fn.arguments``, see
_signature.py), and encodes one dispatch on the device's default stream:

- pymetal Arrays are bound directly. If every argument is a pymetal Array or a
  scalar, the call returns at once (asynchronous); reading an array later waits
  for the work that used it. An Array that wraps memory pymetal does not own
  (``pm.asarray`` of an aligned ndarray, an imported DLPack tensor) or that has
  live NumPy views (``.numpy()``) makes the call synchronous, so that the
  owner or the view sees the results when it returns, and the work does not
  see a later host write.
- NumPy arrays and writeable buffer-protocol objects (bytearray, memoryview,
  array.array): a view of pymetal memory is bound as its buffer and offset;
  other writeable arrays of WRAP_MIN bytes or more are used in place (the
  pages around them are wrapped, see _HostArgs); smaller ones and read-only
  ones are copied into a staging buffer, and back when the kernel may write
  that parameter. Such calls are synchronous: when they return, the arrays
  hold the results. A read-only array for a parameter the kernel may write is
  refused (its results would be lost).
- Scalars and bytes are copied (setBytes) as the declared type.

The hot path avoids allocation: pm_arg records are packed with struct into a
per-thread scratch buffer, launch configurations (grid, threadgroup) are cached
per function, staging buffers are reused per thread and argument position,
and each parameter remembers the dtypes it accepted.
"""

from __future__ import annotations

import ctypes
import operator
import struct
import threading
import weakref

import numpy as np

from . import native as _native
from .buffer import Buffer
from .signature import Argument
from ..arrays.array import Array, owner_of
from ..dtypes import SUPPORTED, check_dtype

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .library import Library

__all__ = ["Function", "Argument"]

_ARG = struct.Struct(_native.struct_format(_native.PmArg))
_ARG_SIZE = _ARG.size
_ALIGN = _native.PM_BYTES_ALIGNMENT
_pack_arg = _ARG.pack_into
_pack_2args = struct.Struct("<" + _ARG.format[1:] * 2).pack_into
_pack_3args = struct.Struct("<" + _ARG.format[1:] * 3).pack_into
_LAUNCH_CONFIG = struct.Struct(_native.struct_format(_native.PmLaunchConfig))
_U32_MAX = 0xFFFFFFFF
_BUFFER, _BYTES, _THREADGROUP = _native.PM_ARG_BUFFER, _native.PM_ARG_BYTES, _native.PM_ARG_THREADGROUP_MEMORY

_c_char = ctypes.c_char
_addressof = ctypes.addressof
_memmove = ctypes.memmove
_ndarray = np.ndarray
_wrap: Any = None
_release_buffer: Any = None


def _bind_native():
    global _wrap, _release_buffer
    lib = _native.lib()
    _wrap = lib.pm_buffer_wrap
    _release_buffer = lib.pm_buffer_release


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


_tls = threading.local()


def _scratch():
    s = _Scratch()
    _tls.scratch = s
    return s


class _HostArgs:
    """The NumPy arguments of one call: binds them, copies results back, and
    releases what was wrapped.

    In place. A writeable array is used without copying, whatever its
    alignment: the whole pages that enclose it are wrapped (pm_buffer_wrap,
    Metal's makeBuffer(bytesNoCopy:length:options:deallocator:)) and it is
    bound at its offset in them. NumPy's big arrays start 16 bytes past a page
    boundary (glibc's mmap'd chunks), so requiring page-aligned arrays meant
    copying nearly always. Metal requires a page-aligned pointer and a length
    that makes a page-aligned region of memory the process has mapped; it does
    not require the region to be one allocation, and the pages that hold any
    byte of the array are mapped (on a Mac, Metal's page is the VM page).
    PyTorch's MPS backend (Apple's code) wraps the enclosing pages of ordinary
    malloc'd CPU tensors the same way, for reads and writes. The kernel only
    touches the array's own bytes, so whatever else shares those pages is
    neither read nor written; the call is synchronous, so the wrapper is
    released (pm_buffer_release) before the call returns.

    Copied. Arrays under WRAP_MIN bytes are copied, in and out, since wrapping
    costs a kernel call on a Mac and a copy of a few KiB is cheaper. So are
    read-only arrays (writeable=False): their memory may be a read-only
    mapping, which Metal documents nothing about wrapping, and a copy keeps
    them unchanged even if a kernel writes the buffer. So are arrays NumPy
    marks unaligned: Metal wants a buffer offset aligned to the type the kernel
    reads. A copy goes back only if the array is writeable and the kernel may
    write that parameter (its signature): not `device const T*`.
    Writeable arrays that overlap another argument's memory are used in place
    (and any such array already copied in this call is moved in place), so
    that the kernel sees one memory and no copy-back overwrites another
    argument's results. The same memory passed twice is bound to one buffer.
    """

    WRAP_MIN = 1 << 16

    __slots__ = ("fn", "s", "wrapped", "staged")

    def __init__(self, fn, scratch):
        self.fn = fn
        self.s = scratch
        self.wrapped = []  # (first page, end of last page, handle)
        self.staged = []   # (ptr, nbytes, staging Buffer, writeable, position, aligned) per copied argument

    def bind(self, a, i, p):
        """Binds NumPy array a, argument i, to parameter p."""
        fn = self.fn
        if not a.flags.c_contiguous:
            raise ValueError(
                "argument %d of %s(): the NumPy array is not C-contiguous "
                "(strides %r); pass np.ascontiguousarray(a)" % (i, fn._name, a.strides))
        nb = a.nbytes
        if nb == 0:
            _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, p.index, fn._device.empty_buffer.handle, 0, 0, 0)
            return
        try:
            ptr = _addressof(_c_char.from_buffer(a))
            writable = True
        except TypeError:
            ptr = a.__array_interface__["data"][0]
            writable = False
        if a.base is not None:
            owned = owner_of(a, ptr)
            if owned is not None:  # NumPy view of pymetal memory
                _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, p.index, owned[0].handle, owned[1], 0, 0)
                return
        if not writable and p.writable:
            raise ValueError(
                "argument %d of %s(): the array is read-only, but the kernel may write %r; its results would "
                "be lost: pass a writeable copy (a.copy()), or declare the parameter const" % (i, fn._name, p))
        aligned = a.flags.aligned
        if writable and aligned and (nb >= self.WRAP_MIN or self._overlaps(ptr, nb)):
            if self._in_place(ptr, nb, i, p.index):
                return
        self._copy(ptr, nb, i, p.index, writable and p.writable, aligned)

    def _overlaps(self, ptr, nb):
        """Whether [ptr, ptr + nb) meets wrapped pages or another writeable copied array."""
        if not (self.staged or self.wrapped):
            return False
        end = ptr + nb
        for w in self.wrapped:
            if ptr < w[1] and w[0] < end:
                return True
        for st in self.staged:
            if st[3] and ptr < st[0] + st[1] and st[0] < end and (st[0] != ptr or st[1] != nb):
                return True
        return False

    def _in_place(self, ptr, nb, i, index):
        """Binds argument i to the wrapped pages around [ptr, ptr + nb); False if Metal refuses."""
        end = ptr + nb
        for w in self.wrapped:
            if w[0] <= ptr and end <= w[1]:
                break
        else:
            dev = self.fn._device
            page = dev.page_size
            first = ptr - ptr % page
            last = end + (-end) % page
            if _wrap(self.s.handle_ref, dev.handle, first, last - first):
                return False  # Metal would not wrap this memory: copy it
            w = (first, last, self.s.handle.value)
            self.wrapped.append(w)
            # Writeable arrays copied earlier that share these pages move in place too.
            moved = [st for st in self.staged if st[3] and st[5] and st[0] < last and first < st[0] + st[1]]
            for st in moved:
                self.staged.remove(st)
            for ptr_, nb_, _, _, p, _, index_ in moved:
                if not self._in_place(ptr_, nb_, p, index_):
                    self._copy(ptr_, nb_, p, index_, True, True)
        _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, index, w[2], ptr - w[0], 0, 0)
        return True

    def _copy(self, ptr, nb, i, index, back, aligned):
        """Binds argument i to a staging copy of [ptr, ptr + nb); `back`: copy the results back."""
        for st in self.staged:
            if st[0] == ptr and st[1] == nb and st[3] == back:
                b = st[2]  # the same memory again: one buffer
                break
        else:
            b = self.s.staging[i]
            if b is None or b.length < nb:
                b = self.s.stage(self.fn._device, i, nb)
            _memmove(b.ptr, ptr, nb)
            b.clear_error()  # new contents
        self.staged.append((ptr, nb, b, back, i, aligned, index))
        _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, index, b.handle, 0, 0, 0)

    def copy_back(self):
        """After the kernel has completed: copied arrays the kernel may have written, once each."""
        done = []
        for ptr, nb, b, back, _, _, _ in self.staged:
            if back and b not in done:
                _memmove(ptr, b.ptr, nb)
                done.append(b)

    def check(self):
        """After the kernel has completed: raises the error of failed work (a
        poisoned input's) that the results the call delivers hold."""
        for st in self.staged:
            if st[3]:
                st[2].check()
        for w in self.wrapped:
            st = _native._lib.pm_buffer_error(w[2])
            if st:
                raise _native.error(st)

    def release(self):
        for w in self.wrapped:
            _release_buffer(w[2])
        self.s.temporary.clear()


def _release_kernel(release_fn, handle, library_owner):
    # library_owner keeps the library handle alive until the kernel is released.
    release_fn(handle)


def _dims(value, what):
    """int or 1-3 ints -> (x, y, z), ndim."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("%s= must be an int or a tuple of 1 to 3 ints, not %r" % (what, value))
    if isinstance(value, (int, np.integer)):
        dims = (int(value),)
    elif isinstance(value, (tuple, list)):
        try:
            dims = tuple(operator.index(v) for v in value)
        except TypeError:
            raise TypeError("%s= must be an int or a tuple of 1 to 3 ints, not %r" % (what, value)) from None
        if not 1 <= len(dims) <= 3:
            raise ValueError("%s= must have 1 to 3 dimensions, got %r" % (what, value))
    else:
        raise TypeError("%s= must be an int or a tuple of 1 to 3 ints, not %r" % (what, value))
    for d in dims:
        if d < 1:
            hint = (" (a kernel needs at least one thread: skip the call for empty data)"
                    if what in ("grid", "groups") else "")
            raise ValueError("%s=%r: every dimension must be >= 1%s" % (what, value, hint))
        if d > _U32_MAX:
            raise ValueError("%s=%r: dimensions must be < 2**32" % (what, value))
    return dims + (1,) * (3 - len(dims)), len(dims)


class _Wait:
    """What a call on memory pymetal does not own completes: a wait, nothing to copy."""

    @staticmethod
    def check():
        pass

    @staticmethod
    def copy_back():
        pass

    @staticmethod
    def release():
        pass


_WAIT = _Wait()


def _exact_ints(value):
    """Whether a cached launch configuration may serve `value`: ints compare
    equal to floats (grid=(8.0,) would hit the entry of grid=(8,))."""
    t = type(value)
    return t is int or value is None or (t is tuple and all(type(v) is int for v in value))


class Function:
    """A compute kernel of a Library, ready to call. Get one with lib.function(name).

    Calling it binds the arguments to the kernel's ``[[buffer(n)]]`` parameters in
    order of n and dispatches it: see :meth:`__call__`.

    (`own`: one of the array library's kernels, which it binds itself: strided
    views and scratch memory of any dtype; not for kernels users call.)

    Examples:
        >>> fn = pm.shaders().add_float32
        >>> fn.arguments
        (a: device const float*, b: device const float*, out: device float*)
    """

    def __init__(self, library: Library, name: str, own: bool = False, constants: str | None = None) -> None:
        lib = _native.lib()
        self._library = library
        self._device = library.device
        self._name = name
        if constants:  # function constant values, as pm_kernel_new_specialized takes them (library.py)
            self._handle = _native.out_u64(lib.pm_kernel_new_specialized, library._owner.handle, name.encode(),
                                           constants.encode())
        else:
            self._handle = _native.out_u64(lib.pm_kernel_new, library._owner.handle, name.encode())
        f = weakref.finalize(self, _release_kernel, lib.pm_kernel_release, self._handle, library._owner)
        f.atexit = False
        try:
            self._max_threads = _native.out_i64(lib.pm_kernel_max_threads, self._handle)
            self._width = _native.out_i64(lib.pm_kernel_execution_width, self._handle)
            self._static_tg = _native.out_i64(lib.pm_kernel_static_threadgroup_memory, self._handle)
            self._arguments = tuple(self._read_arguments(lib))
        except BaseException:
            f()
            raise
        # Positional arguments bind to the [[buffer(n)]] parameters in order of n.
        self._params = tuple(sorted((a for a in self._arguments if a.binding == "buffer"), key=lambda a: a.index))
        # pm_dispatch_launch (a launch configuration record, the pm_arg records,
        # their count) without ctypes argtypes: ctypes costs per argument converted.
        self._dispatch = lib["pm_dispatch_launch"]
        self._dispatch.restype = ctypes.c_int32
        if _wrap is None:
            _bind_native()
        # The array library's kernels take strided views (their strides travel in a
        # parameter) and scratch memory of any dtype.
        self._own = own
        self._launch: dict = {}  # (grid, groups, threadgroup) -> its pm_launch_config record
        self._sized: dict = {}   # n -> the record of n threads in groups of up to 256 (_run_arrays)
        self.__doc__ = "%s\n\nRuns kernel %r; see pymetal.Function." % (self._signature_text(), name)

    def _read_arguments(self, lib):
        info = _native.PmArgumentInfo()
        count = _native.out_i64(lib.pm_kernel_argument_count, self._handle)
        for i in range(count):
            _native.check(lib.pm_kernel_argument(ctypes.byref(info), self._handle, i))
            yield Argument(info)

    # ---- metadata -----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The kernel function's name.

        Examples:
            >>> pm.shaders().add_float32.name
            'add_float32'
        """
        return self._name

    @property
    def library(self) -> Library:
        """The Library the kernel comes from.

        Examples:
            >>> pm.shaders().add_float32.library is pm.shaders()
            True
        """
        return self._library

    @property
    def arguments(self) -> tuple[Argument, ...]:
        """The kernel's [[buffer(n)]] and [[threadgroup(n)]] parameters (pymetal.Argument).

        Examples:
            >>> [a.name for a in pm.shaders().add_float32.arguments]
            ['a', 'b', 'out']
        """
        return self._arguments

    @property
    def max_threads_per_threadgroup(self) -> int:
        """The most threads a threadgroup of this kernel may have (device and kernel limits).

        Examples:
            >>> pm.shaders().add_float32.max_threads_per_threadgroup >= 256
            True
        """
        return self._max_threads

    @property
    def execution_width(self) -> int:
        """SIMD-group width (32 on Apple GPUs and on the CPU backend).

        Examples:
            >>> pm.shaders().add_float32.execution_width
            32
        """
        return self._width

    @property
    def static_threadgroup_memory(self) -> int:
        """Bytes of threadgroup memory the kernel declares itself.

        Examples:
            >>> pm.shaders().add_float32.static_threadgroup_memory
            0
        """
        return self._static_tg

    def _signature_text(self):
        return "%s(%s)" % (self._name, ", ".join(repr(a) for a in self._arguments))

    def __repr__(self) -> str:
        return "<pymetal.Function %s max_threads_per_threadgroup=%d execution_width=%d>" % (
            self._signature_text(), self._max_threads, self._width)

    # ---- launch configuration ------------------------------------------------------
    def default_threadgroup(self, grid: int | tuple[int, ...], by_groups: bool = False) -> tuple[int, int, int]:
        """The threadgroup size used when a call gives no threadgroup=.

        The engine's choice: up to 256 threads, 32 x 8 for 2-D grids, clipped to
        small grids (see pm_kernel_default_threadgroup).

        Examples:
            >>> fn = pm.shaders().add_float32
            >>> fn.default_threadgroup(10000), fn.default_threadgroup(10)
            ((256, 1, 1), (10, 1, 1))
        """
        size, _ = _dims(grid, "groups" if by_groups else "grid")
        size_arr = (ctypes.c_uint32 * 3)(*size)
        out = (ctypes.c_uint32 * 3)()
        st = _native.lib().pm_kernel_default_threadgroup(out, self._handle, size_arr, int(by_groups))
        if st:
            raise _native.error(st)
        return tuple(out)

    def _launch_config(self, grid, groups, threadgroup):
        """The pm_launch_config record of a call's grid= / groups= / threadgroup= (validated; cached)."""
        if grid is None and groups is None:
            raise TypeError(
                "%s(): pass grid= (number of threads, like dispatchThreads) or "
                "groups= (number of threadgroups, like dispatchThreadgroups)" % self._name)
        if grid is not None and groups is not None:
            raise TypeError("%s(): pass either grid= or groups=, not both" % self._name)
        by_groups = grid is None
        size, _ = _dims(groups if by_groups else grid, "groups" if by_groups else "grid")
        if threadgroup is None:
            tg = self.default_threadgroup(groups if by_groups else grid, by_groups)
        else:
            tg, _ = _dims(threadgroup, "threadgroup")
            n = tg[0] * tg[1] * tg[2]
            if n > self._max_threads:
                raise ValueError(
                    "threadgroup=%r has %d threads, more than the %d threads per "
                    "threadgroup kernel %r allows (see Function.max_threads_per_threadgroup)"
                    % (threadgroup, n, self._max_threads, self._name))
        cfg = ctypes.create_string_buffer(_LAUNCH_CONFIG.size)
        _LAUNCH_CONFIG.pack_into(cfg, 0, self._device.stream, self._handle, *size, *tg, int(by_groups), 0)
        try:
            if len(self._launch) >= 512:
                self._launch.clear()
            if _exact_ints(grid) and _exact_ints(groups) and _exact_ints(threadgroup):
                self._launch[(grid, groups, threadgroup)] = cfg
        except TypeError:  # unhashable (a list): not cached
            pass
        return cfg

    def _launch_for(self, grid, groups, threadgroup):
        try:
            cfg = self._launch[(grid, groups, threadgroup)]
        except (KeyError, TypeError):
            return self._launch_config(grid, groups, threadgroup)
        if (type(grid) is int or grid is None) and threadgroup is None and groups is None:
            return cfg  # the common call: grid=n
        if _exact_ints(grid) and _exact_ints(groups) and _exact_ints(threadgroup):
            return cfg
        return self._launch_config(grid, groups, threadgroup)  # raises for what is not ints

    # ---- calling ---------------------------------------------------------------------
    def __call__(self, *args: Any, grid: int | tuple[int, ...] | None = None,
                 groups: int | tuple[int, ...] | None = None, threadgroup: int | tuple[int, ...] | None = None,
                 threadgroup_memory: Any = None, raw: bool = False) -> None:
        """Runs the kernel: binds each argument by its declared kind and encodes the dispatch.

        Args:
            args: one per [[buffer(n)]] parameter, in order of n: pymetal Arrays (bound
                without a copy), NumPy arrays, Python or NumPy scalars for by-value
                parameters, bytes for structs.
            grid: the number of threads, like dispatchThreads (1 to 3 dimensions).
            groups: the number of threadgroups instead, like dispatchThreadgroups.
            threadgroup: threads per threadgroup (default: default_threadgroup()).
            threadgroup_memory: bytes of each [[threadgroup(n)]] parameter (an int, or one per index).
            raw: bind arrays whatever their dtype (their bytes).

        With pymetal arrays the call returns at once (the work is asynchronous, in
        order); with NumPy arguments and foreign memory it completes before returning.

        Examples:
            >>> a, b = pm.asarray([1.0, 2.0, 3.0]), pm.asarray([10.0, 20.0, 30.0])
            >>> out = pm.empty(3)
            >>> pm.shaders().add_float32(a, b, out, grid=3)
            >>> out
            Array([11., 22., 33.], dtype=float32)
        """
        if len(args) != len(self._params):
            raise self._count_error(args)
        try:
            s = _tls.scratch
        except AttributeError:
            s = _scratch()
        host = self._bind(args, s, raw or self._own)
        try:
            if host is not None:
                # A command buffer of its own: this thread's earlier work, if it
                # fails, does not stop this call's (failed work stops the rest of its batch).
                self._device._commit()
            count = len(args)
            if threadgroup_memory is not None:
                count = self._threadgroup_memory(threadgroup_memory, s.args, count)
            st = self._dispatch(self._launch_for(grid, groups, threadgroup), s.args, count)
            if st:
                raise _native.error(st)
            self._complete(args, host)
        finally:
            if host is not None:
                host.release()

    def _count_error(self, args):
        names = ", ".join(a.name or "[[buffer(%d)]]" % a.index for a in self._params)
        return TypeError("%s() takes %d argument%s (%s), %d given; the kernel is %s" % (
            self._name, len(self._params), "" if len(self._params) == 1 else "s", names, len(args),
            self._signature_text()))

    def _bind(self, args, s, raw):
        """Packs one pm_arg per argument, checked against its parameter; returns
        what the call must complete: None (asynchronous), the NumPy arguments
        (_HostArgs), or _WAIT (memory pymetal does not own)."""
        abuf = s.args
        data = s.data
        doff = 0
        host = None
        params = self._params
        for i in range(len(args)):
            a = args[i]
            p = params[i]
            t = type(a)
            if t is Array:
                dt = a._dtype
                if dt is not p.dtype and dt not in p._ok and not (raw or p.accepts(dt)):
                    raise self._dtype_error(i, p, dt)
                if a._ro and p.writable:
                    raise ValueError(
                        "argument %d of %s(): assignment destination is read-only: the kernel may write %r; "
                        "pass a writeable copy (x.copy()), or declare the parameter const" % (i, self._name, p))
                if not a._cc and not self._own:
                    raise ValueError(
                        "argument %d of %s(): the pymetal array is a non-contiguous view (strides %r); "
                        "a kernel sees a buffer: pass x.copy() or pm.ascontiguousarray(x)" % (i, self._name, a._strides))
                b = a._buf
                if b.views and host is None:
                    host = _WAIT
                _pack_arg(abuf, i * _ARG_SIZE, _BUFFER, p.index, b.handle, a._offset, 0, 0)
            elif t is float or t is int:
                pack = p.pack
                if pack is None:
                    doff = self._other_arg(a, i, p, s, doff)
                    continue
                try:
                    pack(data, doff, a)
                except (struct.error, OverflowError):
                    raise self._scalar_error(a, i, p) from None
                _pack_arg(abuf, i * _ARG_SIZE, _BYTES, p.index, 0, 0, s.data_addr + doff, p.size)
                doff += _ALIGN
            elif t is _ndarray or isinstance(a, _ndarray):
                if host is None or host is _WAIT:
                    host = _HostArgs(self, s)
                self._bind_ndarray(host, a, i, p, raw)
            else:
                doff = self._other_arg(a, i, p, s, doff, raw)
                if isinstance(a, Array):
                    if a._buf.views and host is None:
                        host = _WAIT
                elif doff < 0:  # a buffer-protocol object, bound as an array
                    if host is None or host is _WAIT:
                        host = _HostArgs(self, s)
                    doff = ~doff
                    self._bind_ndarray(host, np.asarray(memoryview(a)), i, p, raw)
        return host

    def _bind_ndarray(self, host, a, i, p, raw):
        dt = a.dtype
        if dt not in p._ok:
            if dt not in SUPPORTED:
                check_dtype(dt, "argument %d of %s()" % (i, self._name))
            if not (raw or p.accepts(dt)):
                raise self._dtype_error(i, p, dt)
        host.bind(a, i, p)

    def _complete(self, args, host):
        """After encoding: a synchronous call waits, raises its own work's error
        (not an older one of this thread's) and copies results back; an
        asynchronous one stamps its arrays with the dispatch's epoch."""
        dev = self._device
        if host is not None:
            dev._finish()
            if dev.poisoned.value:  # results computed from a poisoned input are that input's error
                host.check()
                for a, p in zip(args, self._params):
                    if p.writable and isinstance(a, Array):
                        a._buf.check()
            host.copy_back()
        else:
            epoch = dev.next_epoch()
            for a in args:
                if isinstance(a, Array):
                    a._buf.epoch = epoch

    def _run_arrays(self, n, a, b, c=None):
        """The array library's hot path, for its own unary (a -> b) and binary
        (a, b -> c) kernels: binds contiguous Arrays of the dtypes the kernel was
        instantiated for to [[buffer(0)]], [[buffer(1)]], ... and dispatches n
        threads in groups of up to 256, with no other argument kinds (one ctypes
        call; the launch configuration is cached per size). Foreign memory
        completes before the call returns, as in __call__. Positional arrays, no
        tuple and no loop: this runs once per small op."""
        cfg = self._sized.get(n)
        if cfg is None:
            if len(self._sized) >= 512:
                self._sized.clear()
            cfg = self._sized[n] = self._launch_config(n, None, n if n < 256 else 256)
        try:
            s = _tls.scratch
        except AttributeError:
            s = _scratch()
        abuf = s.args
        ab, bb = a._buf, b._buf
        if c is None:
            _pack_2args(abuf, 0, _BUFFER, 0, ab.handle, a._offset, 0, 0, _BUFFER, 1, bb.handle, b._offset, 0, 0)
            st = self._dispatch(cfg, abuf, 2)
            if st:
                raise _native.error(st)
            dev = self._device
            ab.epoch = bb.epoch = dev.next_epoch()
            if dev.host_shared and (ab.views or bb.views):
                self._finish(bb)  # memory the host sees (views, foreign): results on return
            return
        cb = c._buf
        _pack_3args(abuf, 0, _BUFFER, 0, ab.handle, a._offset, 0, 0, _BUFFER, 1, bb.handle, b._offset, 0, 0,
                    _BUFFER, 2, cb.handle, c._offset, 0, 0)
        st = self._dispatch(cfg, abuf, 3)
        if st:
            raise _native.error(st)
        dev = self._device
        ab.epoch = bb.epoch = cb.epoch = dev.next_epoch()
        if dev.host_shared and (ab.views or bb.views or cb.views):
            self._finish(cb)

    def _finish(self, out):
        """Completes a call of _run_arrays on memory the host sees: its own
        error, or that of a poisoned input its output inherited, is raised now."""
        self._device._finish()
        out.check()

    def _other_arg(self, a, i, p, s, doff, raw=False):
        """Binds the less common argument kinds; returns the new data offset, or
        ~offset when `a` is a buffer-protocol object to bind as an array."""
        if isinstance(a, Array):  # a subclass
            if not (raw or p.accepts(a._dtype)):
                raise self._dtype_error(i, p, a._dtype)
            _pack_arg(s.args, i * _ARG_SIZE, _BUFFER, p.index, a._buf.handle, a._offset, 0, 0)
            return doff
        if isinstance(a, (bytes, bytearray, memoryview)) or _is_buffer(a):
            if not p.by_value or (p.writable and not isinstance(a, bytes)):
                if isinstance(a, bytes):
                    raise TypeError(
                        "argument %d of %s(): bytes are passed by value, but %r is an array the kernel "
                        "%s: pass a NumPy or pymetal array (or a bytearray, whose results come back)"
                        % (i, self._name, p, "may write" if p.writable else "reads"))
                return ~doff  # writeable memory: a buffer whose results come back
            b = memoryview(a).cast("B")
            n = b.nbytes
            if n != p.size:
                raise TypeError("argument %d of %s(): %d bytes for %r, which takes %d bytes"
                                % (i, self._name, n, p, p.size))
            s.datamv[doff:doff + n] = b
        elif not p.by_value:
            raise TypeError(
                "argument %d of %s(): %r takes an array (a buffer), not %s: pass a NumPy or pymetal array"
                % (i, self._name, p, type(a).__name__))
        else:
            n = self._scalar(a, i, p, s.data, doff)
        _pack_arg(s.args, i * _ARG_SIZE, _BYTES, p.index, 0, 0, s.data_addr + doff, n)
        return doff + (n + _ALIGN - 1) // _ALIGN * _ALIGN

    def _scalar(self, a, i, p, data, doff):
        """Packs scalar a as the value of parameter p; returns its size."""
        if isinstance(a, np.generic):
            if a.dtype == p.dtype and p.lanes == 1 or (a.dtype.kind in "Vc" and p.dtype is None):
                # A NumPy scalar of the declared type, or a struct (a structured or complex scalar,
                # e.g. complex64 for Shaders/complex.h's cfloat): its bytes, whose size is checked.
                b = a.tobytes()
                if len(b) != p.size:
                    raise TypeError("argument %d of %s(): %s of %d bytes for %r, which takes %d bytes"
                                    % (i, self._name, a.dtype, len(b), p, p.size))
                data[doff:doff + len(b)] = b
                return len(b)
            if a.dtype.kind not in "biuf":
                raise self._scalar_error(a, i, p)
            a = a.item()
        if not isinstance(a, (bool, int, float)):
            raise TypeError(
                "argument %d of %s(): cannot pass %s to %r; pass a Python or NumPy scalar, bytes, or an array"
                % (i, self._name, type(a).__name__, p))
        if p.dtype is None or p.lanes != 1 or p.dtype.kind == "V":
            raise self._scalar_error(a, i, p)
        if p.dtype.kind == "b":
            if not (isinstance(a, bool) or (isinstance(a, int) and a in (0, 1))):
                raise self._scalar_error(a, i, p)
            data[doff] = 1 if a else 0
            return 1
        if p.pack is None:  # bfloat
            raise self._scalar_error(a, i, p)
        try:
            p.pack(data, doff, a)
        except (struct.error, OverflowError):
            raise self._scalar_error(a, i, p) from None
        return p.size

    def _scalar_error(self, a, i, p):
        """The exception for scalar a that parameter p cannot take."""
        what = "argument %d of %s(): %r for %r" % (i, self._name, a, p)
        dt = p.dtype
        if not p.by_value:
            return TypeError("%s: the parameter takes an array (a buffer), not a scalar; pass a NumPy or "
                             "pymetal array (a scalar's copy would lose the kernel's writes)" % what)
        if dt is None or p.lanes != 1:
            return TypeError("%s: pass a value of %d bytes (a NumPy structured scalar, bytes) or an array"
                             % (what, p.size))
        if isinstance(a, float) and dt.kind in "iub":
            return TypeError("%s: a float for an integer parameter; pass int(x) if you mean to truncate" % what)
        if dt.kind == "b":
            return TypeError("%s: pass True or False" % what)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return OverflowError("%s: out of range for %s (%d to %d)" % (what, p.type_name, info.min, info.max))
        if dt.kind == "f":
            return OverflowError("%s: out of range for %s (largest %g)" % (what, p.type_name, np.finfo(dt).max))
        return TypeError("%s: not a value of %s" % (what, p.type_name))

    def _dtype_error(self, i, p, dtype):
        return TypeError(
            "argument %d of %s(): a %s array for %r, whose elements are %s: pass an array of %s (a.astype(...)), "
            "or raw=True to bind the array's bytes as they are" % (
                i, self._name, dtype, p, p.type_name, p.dtype if p.dtype is not None else "any type"))

    def _threadgroup_memory(self, spec, abuf, first):
        """Packs [[threadgroup(i)]] lengths after the buffer arguments."""
        if isinstance(spec, dict):
            items = list(spec.items())
        elif isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
            items = [(0, spec)]
        else:
            try:
                items = list(enumerate(spec))
            except TypeError:
                raise TypeError(
                    "threadgroup_memory= must be a byte count (for [[threadgroup(0)]]) or "
                    "a sequence of byte counts by index, not %r" % (spec,)) from None
        count = first
        limit = self._device.max_threadgroup_memory
        for index, nbytes in items:
            try:
                index = operator.index(index)
                nbytes = operator.index(nbytes)
            except TypeError:
                raise TypeError("threadgroup_memory=%r: byte counts must be ints" % (spec,)) from None
            if not 0 <= index < _native.PM_MAX_BINDINGS:
                raise ValueError("threadgroup_memory=%r: index %d is outside 0..%d"
                                 % (spec, index, _native.PM_MAX_BINDINGS - 1))
            if not 0 <= nbytes <= limit:
                raise ValueError("threadgroup_memory=%r: %d bytes is outside 0..%d (the device's threadgroup memory)"
                                 % (spec, nbytes, limit))
            if nbytes == 0:
                continue
            _pack_arg(abuf, count * _ARG_SIZE, _THREADGROUP, index, 0, 0, 0, (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN)
            count += 1
        return count


def _is_buffer(a):
    """Whether a supports the buffer protocol (array.array, ctypes arrays, ...)."""
    try:
        memoryview(a)
    except TypeError:
        return False
    return not isinstance(a, (str, np.generic))
