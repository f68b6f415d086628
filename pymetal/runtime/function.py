"""Kernel functions and calling them.

``fn(*args, grid=..., threadgroup=..., threadgroup_memory=..., raw=False)``
binds the positional arguments to the kernel's [[buffer(n)]] parameters in
order of n, checked against the kernel's signature (``fn.arguments``, see
signature.py), and encodes one dispatch on the device's default stream:

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
per-thread scratch buffer (scratch.py), launch configurations (grid,
threadgroup) are cached per function, staging buffers are reused per thread
and argument position, and each parameter remembers the dtypes it accepted.

This module: the Function (metadata, launch configurations, the call and its
completion, the array library's two-/three-array fast path). Binding the
arguments: arguments.py; NumPy arguments: host_args.py.
"""

from __future__ import annotations

import ctypes
import operator
import weakref

import numpy as np

from . import bindable, host_args
from . import native as _native
from .arguments import bind, count_error, threadgroup_memory as threadgroup_memory_args
from .scratch import _BUFFER, _BYTES, _EMPTY, _LAUNCH_CONFIG, _pack_2args, _pack_3args, _tls
from .signature import Argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .library import Library

__all__ = ["Function", "Argument"]

Array: Any = None  # the array library's class (bindable.py)
bindable.listen(globals())

_U32_MAX = 0xFFFFFFFF


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
        self._constants_text = constants
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
        if host_args._wrap is None:
            host_args._bind_native()
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

    def __reduce__(self) -> tuple:
        # Its library (which pickles what made it) and name: the receiver makes the pipeline again.
        return _unpickle, (self._library, self._name, self._constants_text)

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
            raise count_error(self, args)
        s = _tls.scratch
        host = bind(self, args, s, raw or self._own)
        try:
            if host is not None:
                # A command buffer of its own: this thread's earlier work, if it
                # fails, does not stop this call's (failed work stops the rest of its batch).
                self._device._commit()
            count = len(args)
            if threadgroup_memory is not None:
                count = threadgroup_memory_args(self, threadgroup_memory, s.args, count)
            st = self._dispatch(self._launch_for(grid, groups, threadgroup), s.args, count)
            if st:
                raise _native.error(st)
            self._complete(args, host)
        finally:
            if host is not None:
                host.release()

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
        s = _tls.scratch
        abuf = s.args
        ab, bb = a._buf, b._buf
        if c is None:
            _pack_2args(abuf, 0, _BUFFER, 0, ab.handle, a._offset, 0, 0, _BUFFER, 1, bb.handle, b._offset, 0, 0)
            st = self._dispatch(cfg, abuf, 2)
            if st:
                raise _native.error(st)
            self._stamp2(ab, bb)
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

    def _run_reduce(self, cfg, a, b, data):
        """The array library's hot path for its one-pass reductions: contiguous Array a
        (read) at [[buffer(0)]], Array b (written) at [[buffer(1)]] and the bytes `data`
        at [[buffer(2)]], of the dtypes and size the kernel was looked up for, with a
        launch configuration from _launch_for (`cfg`): what __call__ does for these
        arguments, without checking them again on every call (one ctypes call)."""
        s = _tls.scratch
        abuf = s.args
        ab, bb = a._buf, b._buf
        n = len(data)
        s.datamv[:n] = data
        _pack_3args(abuf, 0, _BUFFER, 0, ab.handle, a._offset, 0, a._size * a._dtype.itemsize or _EMPTY,
                    _BUFFER, 1, bb.handle, b._offset, 0, b._size * b._dtype.itemsize or _EMPTY,
                    _BYTES, 2, 0, 0, s.data_addr, n)
        st = self._dispatch(cfg, abuf, 3)
        if st:
            raise _native.error(st)
        self._stamp2(ab, bb)

    def _stamp2(self, ab, bb):
        """After an asynchronous dispatch that read Buffer ab and wrote bb: stamps them
        with its epoch; memory the host sees (views, foreign) has its results on return."""
        dev = self._device
        ab.epoch = bb.epoch = dev.next_epoch()
        if dev.host_shared and (ab.views or bb.views):
            self._finish(bb)

    def _finish(self, out):
        """Completes a call of _run_arrays on memory the host sees: its own
        error, or that of a poisoned input its output inherited, is raised now."""
        self._device._finish()
        out.check()


def _unpickle(library, name, constants):
    """A pickled Function (Function.__reduce__), from its library's cache of functions."""
    if not constants:
        return library.function(name)
    key = (name, constants)
    fn = library._functions.get(key)
    return fn if fn is not None else library._functions.setdefault(key, Function(library, name, constants=constants))
