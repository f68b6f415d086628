"""NumPy and buffer-protocol arguments of a kernel call: bound in place or
through a staging copy, results copied back, wrappers released (_HostArgs).
Such calls are synchronous: when they return, the arrays hold the results."""

from __future__ import annotations

import ctypes
from typing import NamedTuple

from . import bindable
from . import native as _native
from .buffer import Buffer
from .scratch import _ARG_SIZE, _BUFFER, _EMPTY, _pack_arg

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_c_char = ctypes.c_char
_addressof = ctypes.addressof
_memmove = ctypes.memmove
_wrap: Any = None
_release_buffer: Any = None


def _bind_native():
    global _wrap, _release_buffer
    lib = _native.lib()
    _wrap = lib.pm_buffer_wrap
    _release_buffer = lib.pm_buffer_release


class _Wrapped(NamedTuple):
    """Pages wrapped in place (pm_buffer_wrap) for one call."""
    first: int   # address of the first page
    end: int     # end of the last page
    handle: int  # the wrapping buffer


class _Staged(NamedTuple):
    """An argument bound through a staging copy."""
    ptr: int         # the array's memory
    nbytes: int
    buffer: Buffer   # the staging buffer
    back: bool       # copy the results back (writeable, and the kernel may write it)
    position: int    # the argument's position in the call
    aligned: bool    # NumPy's aligned flag (an unaligned array is never wrapped)
    binding: int     # the [[buffer(n)]] index it is bound to


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
        self.wrapped: list[_Wrapped] = []
        self.staged: list[_Staged] = []  # one per copied argument

    def bind(self, a, i, p):
        """Binds NumPy array a, argument i, to parameter p."""
        fn = self.fn
        if not a.flags.c_contiguous:
            raise ValueError(
                "argument %d of %s(): the NumPy array is not C-contiguous "
                "(strides %r); pass np.ascontiguousarray(a)" % (i, fn._name, a.strides))
        nb = a.nbytes
        if nb == 0:
            _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, p.index, fn._device.empty_buffer.handle, 0, 0, _EMPTY)
            return
        try:
            ptr = _addressof(_c_char.from_buffer(a))
            writable = True
        except TypeError:
            ptr = a.__array_interface__["data"][0]
            writable = False
        if a.base is not None:
            owned = bindable.owner_of(a, ptr)
            if owned is not None:  # NumPy view of pymetal memory
                _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, p.index, owned[0].handle, owned[1], 0, nb)
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
            if ptr < w.end and w.first < end:
                return True
        for st in self.staged:
            if st.back and ptr < st.ptr + st.nbytes and st.ptr < end and (st.ptr != ptr or st.nbytes != nb):
                return True
        return False

    def _in_place(self, ptr, nb, i, index):
        """Binds argument i to the wrapped pages around [ptr, ptr + nb); False if Metal refuses."""
        end = ptr + nb
        for w in self.wrapped:
            if w.first <= ptr and end <= w.end:
                break
        else:
            dev = self.fn._device
            page = dev.page_size
            first = ptr - ptr % page
            last = end + (-end) % page
            if _wrap(self.s.handle_ref, dev.handle, first, last - first):
                return False  # Metal would not wrap this memory: copy it
            w = _Wrapped(first, last, self.s.handle.value)
            self.wrapped.append(w)
            # Writeable arrays copied earlier that share these pages move in place too.
            moved = [st for st in self.staged if st.back and st.aligned and st.ptr < last and first < st.ptr + st.nbytes]
            for st in moved:
                self.staged.remove(st)
            for st in moved:
                if not self._in_place(st.ptr, st.nbytes, st.position, st.binding):
                    self._copy(st.ptr, st.nbytes, st.position, st.binding, True, True)
        _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, index, w.handle, ptr - w.first, 0, nb)
        return True

    def _copy(self, ptr, nb, i, index, back, aligned):
        """Binds argument i to a staging copy of [ptr, ptr + nb); `back`: copy the results back."""
        for st in self.staged:
            if st.ptr == ptr and st.nbytes == nb and st.back == back:
                b = st.buffer  # the same memory again: one buffer
                break
        else:
            b = self.s.staging[i]
            if b is None or b.length < nb:
                b = self.s.stage(self.fn._device, i, nb)
            _memmove(b.ptr, ptr, nb)
            b.clear_error()  # new contents
        self.staged.append(_Staged(ptr, nb, b, back, i, aligned, index))
        _pack_arg(self.s.args, i * _ARG_SIZE, _BUFFER, index, b.handle, 0, 0, nb)

    def copy_back(self):
        """After the kernel has completed: copied arrays the kernel may have written, once each."""
        done = []
        for st in self.staged:
            if st.back and st.buffer not in done:
                _memmove(st.ptr, st.buffer.ptr, st.nbytes)
                done.append(st.buffer)

    def check(self):
        """After the kernel has completed: raises the error of failed work (a
        poisoned input's) that the results the call delivers hold."""
        for st in self.staged:
            if st.back:
                st.buffer.check()
        for w in self.wrapped:
            err = _native._lib.pm_buffer_error(w.handle)
            if err:
                raise _native.error(err)

    def release(self):
        for w in self.wrapped:
            _release_buffer(w.handle)
        self.s.temporary.clear()


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
