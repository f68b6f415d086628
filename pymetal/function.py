"""Kernel functions and calling them.

``fn(*args, grid=..., threadgroup=..., threadgroup_memory=...)`` binds the
positional arguments to [[buffer(0)]], [[buffer(1)]], ... and encodes one
dispatch on the device's default stream:

- pymetal Arrays are bound directly. If every argument is a pymetal Array or a
  scalar, the call returns at once (asynchronous); reading an array later waits
  for the work that used it.
- NumPy arrays: a view of pymetal memory is bound as its buffer and offset;
  other writeable arrays of WRAP_MIN bytes or more are used in place (the
  pages around them are wrapped, see _HostArgs); smaller ones and read-only
  ones are copied into a staging buffer, and back only when writeable and the
  kernel may write that buffer index (not `device const T*`, `constant T&`).
  Calls with NumPy arrays are synchronous: when they return, the arrays hold
  the results.
- Scalars are copied as bytes (setBytes): NumPy scalars and structured scalars
  with their own type, Python float -> float32, int -> int32 (or uint32 when
  it only fits that), bool -> MSL bool; ``bytes`` as they are.

The hot path avoids allocation: pm_arg records are packed with struct into a
per-thread scratch buffer, launch configurations (grid, threadgroup) are cached
per function, and staging buffers are reused per thread and argument position.
"""

import ctypes
import operator
import struct
import threading
import weakref

import numpy as np

from . import _native
from .array import Array, owner_of
from ._buffer import Buffer
from .dtypes import SUPPORTED, check_dtype

__all__ = ["Function"]

MAX_BUFFER_ARGS = 31      # [[buffer(0)]] .. [[buffer(30)]]
MAX_BYTES = 4096          # setBytes limit
_ARG_SIZE = 40            # sizeof(pm_arg)
_U32_MAX = 0xFFFFFFFF

_pack_arg = struct.Struct("<iiQQQQ").pack_into
_pack_3args = struct.Struct("<" + "iiQQQQ" * 3).pack_into
_LAUNCH_CONFIG = struct.Struct("<QQ3I3Iii")  # pm_launch_config: stream, kernel, size, threadgroup, by_groups
_F32 = struct.Struct("<f")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")

_SCALAR_STRUCTS = {
    np.float32: _F32,
    np.float16: struct.Struct("<e"),
    np.int8: struct.Struct("<b"),
    np.uint8: struct.Struct("<B"),
    np.int16: struct.Struct("<h"),
    np.uint16: struct.Struct("<H"),
    np.int32: _I32,
    np.uint32: _U32,
    np.int64: struct.Struct("<q"),
    np.uint64: struct.Struct("<Q"),
    np.bool_: struct.Struct("<?"),
}
# np.intc / np.longlong etc. alias the classes above on every platform NumPy
# supports; other generic types take the slow path (tobytes).

_c_char = ctypes.c_char
_addressof = ctypes.addressof
_memmove = ctypes.memmove
_ndarray = np.ndarray
_wrap = None
_release_buffer = None


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

    def __init__(self):
        self.staging = [None] * MAX_BUFFER_ARGS
        self.staging_bytes = 0
        self.temporary = []
        self.args = ctypes.create_string_buffer(_ARG_SIZE * 2 * (MAX_BUFFER_ARGS + 1))
        self.data = ctypes.create_string_buffer(MAX_BYTES * MAX_BUFFER_ARGS)
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
    write its buffer index (pm_kernel_buffer_access): not `device const T*`.
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

    def bind(self, a, i):
        """Binds NumPy array a to [[buffer(i)]]."""
        fn = self.fn
        if not a.flags.c_contiguous:
            raise ValueError(
                "argument %d of %s(): the NumPy array is not C-contiguous "
                "(strides %r); pass np.ascontiguousarray(a)" % (i, fn._name, a.strides))
        if a.dtype not in SUPPORTED:
            check_dtype(a.dtype, "argument %d of %s()" % (i, fn._name))
        nb = a.nbytes
        if nb == 0:
            _pack_arg(self.s.args, i * 40, 0, i, fn._device.empty_buffer.handle, 0, 0, 0)
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
                _pack_arg(self.s.args, i * 40, 0, i, owned[0].handle, owned[1], 0, 0)
                return
        aligned = a.flags.aligned
        if writable and aligned and (nb >= self.WRAP_MIN or self._overlaps(ptr, nb)):
            if self._in_place(ptr, nb, i):
                return
        self._copy(ptr, nb, i, writable, aligned)

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

    def _in_place(self, ptr, nb, i):
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
            for ptr_, nb_, _, _, p, _ in moved:
                if not self._in_place(ptr_, nb_, p):
                    self._copy(ptr_, nb_, p, True, True)
        _pack_arg(self.s.args, i * 40, 0, i, w[2], ptr - w[0], 0, 0)
        return True

    def _copy(self, ptr, nb, i, writable, aligned):
        """Binds argument i to a staging copy of [ptr, ptr + nb)."""
        for st in self.staged:
            if st[0] == ptr and st[1] == nb and st[3] == writable:
                b = st[2]  # the same memory again: one buffer
                break
        else:
            b = self.s.staging[i]
            if b is None or b.length < nb:
                b = self.s.stage(self.fn._device, i, nb)
            _memmove(b.ptr, ptr, nb)
        self.staged.append((ptr, nb, b, writable, i, aligned))
        _pack_arg(self.s.args, i * 40, 0, i, b.handle, 0, 0, 0)

    def copy_back(self):
        """After the kernel has completed: copied arrays the kernel may have written, once each."""
        done = []
        for ptr, nb, b, writable, i, _ in self.staged:
            if writable and b not in done and self.fn._may_write(i):
                _memmove(ptr, b.ptr, nb)
                done.append(b)

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


class Function:
    """A compute kernel of a Library, ready to call. Get one with lib.function(name)."""

    def __init__(self, library, name, constants=None):
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
        except BaseException:
            f()
            raise
        # pm_dispatch_launch (a launch configuration record, the pm_arg records,
        # their count) without ctypes argtypes: ctypes costs per argument converted.
        self._dispatch = lib["pm_dispatch_launch"]
        self._dispatch.restype = ctypes.c_int32
        if _wrap is None:
            _bind_native()
        # pymetal's own array kernels take strided views (their strides travel in a parameter).
        self._strided_ok = False
        self._launch = {}  # (grid, groups, threadgroup) -> its pm_launch_config record
        self._sized = {}   # n -> the record of n threads in groups of up to 256 (_run_arrays)
        self._access = None  # pm_access per buffer index, read when first needed

    # ---- metadata -----------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def library(self):
        return self._library

    @property
    def max_threads_per_threadgroup(self):
        return self._max_threads

    @property
    def execution_width(self):
        """SIMD-group width (32 on Apple GPUs)."""
        return self._width

    @property
    def static_threadgroup_memory(self):
        """Bytes of threadgroup memory the kernel declares itself."""
        return self._static_tg

    def __repr__(self):
        return "<pymetal.Function %r max_threads_per_threadgroup=%d execution_width=%d>" % (
            self._name, self._max_threads, self._width)

    def _may_write(self, index):
        """Whether the kernel may write [[buffer(index)]] (not `device const T*` ...)."""
        access = self._access
        if access is None:
            query = _native.lib().pm_kernel_buffer_access
            access = self._access = tuple(
                _native.out_i32(query, self._handle, j) for j in range(MAX_BUFFER_ARGS))
        return access[index] == _native.PM_ACCESS_READ_WRITE

    # ---- launch configuration ------------------------------------------------------
    def default_threadgroup(self, grid, by_groups=False):
        """The threadgroup size used when a call gives no threadgroup= (the
        engine's choice: up to 256 threads, 32 x 8 for 2-D grids, clipped to
        small grids; see pm_kernel_default_threadgroup)."""
        size, _ = _dims(grid, "groups" if by_groups else "grid")
        size_arr = (ctypes.c_uint32 * 3)(*size)
        out = (ctypes.c_uint32 * 3)()
        st = _native.lib().pm_kernel_default_threadgroup(out, self._handle, size_arr, int(by_groups))
        if st:
            raise _native.error(st)
        return tuple(out)

    def _launch_config(self, grid, groups, threadgroup):
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
            self._launch[(type(grid), grid, groups, type(threadgroup), threadgroup)] = cfg
        except TypeError:  # unhashable (a list): not cached
            pass
        return cfg

    # ---- calling ---------------------------------------------------------------------
    def __call__(self, *args, grid=None, groups=None, threadgroup=None, threadgroup_memory=None):
        """Runs the kernel; see the module docstring for argument binding."""
        nargs = len(args)
        if nargs > MAX_BUFFER_ARGS:
            raise ValueError("%s(): at most %d arguments ([[buffer(0)]]..[[buffer(30)]]), got %d"
                             % (self._name, MAX_BUFFER_ARGS, nargs))
        try:
            s = _tls.scratch
        except AttributeError:
            s = _scratch()
        abuf = s.args
        data = s.data
        doff = 0
        dev = self._device
        host = None  # the NumPy arguments, if any: the call is then synchronous
        try:
            for i in range(nargs):
                a = args[i]
                t = type(a)
                if t is Array:
                    if not a._cc and not self._strided_ok:
                        raise ValueError(
                            "argument %d of %s(): the pymetal array is a non-contiguous view (strides %r); "
                            "a kernel sees a buffer: pass x.copy() or pm.ascontiguousarray(x)" % (i, self._name, a._strides))
                    _pack_arg(abuf, i * 40, 0, i, a._buf.handle, a._offset, 0, 0)
                elif t is _ndarray or isinstance(a, _ndarray):
                    if host is None:
                        host = _HostArgs(self, s)
                    host.bind(a, i)
                elif t is float:
                    _F32.pack_into(data, doff, a)
                    _pack_arg(abuf, i * 40, 1, i, 0, 0, s.data_addr + doff, 4)
                    doff += 16
                elif t is int:
                    if -0x80000000 <= a <= 0x7FFFFFFF:
                        _I32.pack_into(data, doff, a)
                    elif 0 <= a <= _U32_MAX:
                        _U32.pack_into(data, doff, a)
                    else:
                        raise ValueError(
                            "argument %d of %s(): the Python int %d does not fit in 32 bits "
                            "(MSL int or uint); pass a NumPy scalar of the parameter's type, "
                            "e.g. np.int64(x) or np.uint64(x) for long / ulong"
                            % (i, self._name, a))
                    _pack_arg(abuf, i * 40, 1, i, 0, 0, s.data_addr + doff, 4)
                    doff += 16
                else:
                    doff = self._other_arg(a, i, s, doff)
            count = nargs
            if threadgroup_memory is not None:
                count = self._threadgroup_memory(threadgroup_memory, abuf, nargs)
            try:
                # type(grid) keeps grid=4.0 from hitting the entry of grid=4
                cfg = self._launch[(type(grid), grid, groups, type(threadgroup), threadgroup)]
            except (KeyError, TypeError):
                cfg = self._launch_config(grid, groups, threadgroup)
            st = self._dispatch(cfg, s.args, count)
            if st:
                raise _native.error(st)
            if host is not None:
                dev.synchronize()
                host.copy_back()
            else:
                epoch = dev.next_epoch()
                for a in args:
                    if isinstance(a, Array):
                        a._buf.epoch = epoch
        finally:
            if host is not None:
                host.release()
        return None

    def _run_arrays(self, arrays, n):
        """The array library's hot path: binds contiguous Arrays to [[buffer(0)]],
        [[buffer(1)]], ... and dispatches n threads in groups of up to 256, with no
        other argument kinds (one ctypes call; the launch configuration is cached
        per size)."""
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
        if len(arrays) == 3:  # binary ops: three records in one pack
            a, b, c = arrays
            _pack_3args(abuf, 0, 0, 0, a._buf.handle, a._offset, 0, 0, 0, 1, b._buf.handle, b._offset, 0, 0,
                        0, 2, c._buf.handle, c._offset, 0, 0)
        else:
            for i, a in enumerate(arrays):
                _pack_arg(abuf, i * 40, 0, i, a._buf.handle, a._offset, 0, 0)
        st = self._dispatch(cfg, abuf, len(arrays))
        if st:
            raise _native.error(st)
        epoch = self._device.next_epoch()
        for a in arrays:
            a._buf.epoch = epoch

    def _other_arg(self, a, i, s, doff):
        """Binds the less common argument kinds; returns the new data offset."""
        if isinstance(a, Array):  # a subclass
            _pack_arg(s.args, i * 40, 0, i, a._buf.handle, a._offset, 0, 0)
            return doff
        if isinstance(a, np.generic):
            st = _SCALAR_STRUCTS.get(type(a))
            if st is not None:
                st.pack_into(s.data, doff, a)
                n = st.size
            else:
                check_dtype(a.dtype, "argument %d of %s()" % (i, self._name))
                b = a.tobytes()
                n = len(b)
                self._check_bytes(n, i)
                s.datamv[doff:doff + n] = b
        elif isinstance(a, bool):
            s.datamv[doff] = 1 if a else 0
            n = 1
        elif isinstance(a, float):
            _F32.pack_into(s.data, doff, a)
            n = 4
        elif isinstance(a, int):  # an int subclass (not bool): as a plain int
            return self._other_arg_int(int(a), i, s, doff)
        elif isinstance(a, (bytes, bytearray, memoryview)):
            b = bytes(a)
            n = len(b)
            self._check_bytes(n, i)
            if n == 0:
                raise ValueError("argument %d of %s(): empty bytes" % (i, self._name))
            s.datamv[doff:doff + n] = b
        else:
            raise TypeError(
                "argument %d of %s(): cannot pass %s to a kernel; pass a pymetal or "
                "NumPy array (a buffer), a NumPy scalar, a Python int / float / bool, "
                "or bytes" % (i, self._name, type(a).__name__))
        _pack_arg(s.args, i * 40, 1, i, 0, 0, s.data_addr + doff, n)
        return doff + ((n + 15) & ~15)

    def _other_arg_int(self, a, i, s, doff):
        if -0x80000000 <= a <= 0x7FFFFFFF:
            _I32.pack_into(s.data, doff, a)
        elif 0 <= a <= _U32_MAX:
            _U32.pack_into(s.data, doff, a)
        else:
            raise ValueError(
                "argument %d of %s(): the Python int %d does not fit in 32 bits; pass "
                "np.int64(x) or np.uint64(x) for long / ulong" % (i, self._name, a))
        _pack_arg(s.args, i * 40, 1, i, 0, 0, s.data_addr + doff, 4)
        return doff + 16

    def _check_bytes(self, n, i):
        if n > MAX_BYTES:
            raise ValueError(
                "argument %d of %s(): %d bytes is more than the %d bytes a kernel "
                "argument may be passed by value; pass it in an array (a buffer)"
                % (i, self._name, n, MAX_BYTES))

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
        for index, nbytes in items:
            try:
                index = operator.index(index)
                nbytes = operator.index(nbytes)
            except TypeError:
                raise TypeError("threadgroup_memory=%r: byte counts must be ints" % (spec,)) from None
            if nbytes < 0 or not 0 <= index <= 30:
                raise ValueError("threadgroup_memory=%r: bad index or negative size" % (spec,))
            if nbytes == 0:
                continue
            _pack_arg(abuf, count * 40, 2, index, 0, 0, 0, (nbytes + 15) & ~15)
            count += 1
        return count
