"""Binding a kernel call's arguments: one pm_arg record per argument, checked
against its parameter (fn.arguments, see signature.py).

- Arrays of the array library (bindable.py) are bound by their buffer and
  offset; the call stays asynchronous unless their memory has host views.
- NumPy arrays and writeable buffer-protocol objects go through _HostArgs
  (host_args.py); the call is then synchronous.
- Scalars and bytes are copied (setBytes) as the declared type.
"""

from __future__ import annotations

import operator
import struct

import numpy as np

from . import bindable
from . import native as _native
from .host_args import _WAIT, _HostArgs
from .scratch import _ALIGN, _ARG_SIZE, _BUFFER, _BYTES, _EMPTY, _THREADGROUP, _pack_arg
from ..dtypes import SUPPORTED, check_dtype

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ndarray = np.ndarray
Array: Any = None  # the array library's class (bindable.py)
bindable.listen(globals())


def count_error(fn, args):
    names = ", ".join(a.name or "[[buffer(%d)]]" % a.index for a in fn._params)
    return TypeError("%s() takes %d argument%s (%s), %d given; the kernel is %s" % (
        fn._name, len(fn._params), "" if len(fn._params) == 1 else "s", names, len(args),
        fn._signature_text()))


def bind(fn, args, s, raw):
    """Packs one pm_arg per argument, checked against its parameter; returns
    what the call must complete: None (asynchronous), the NumPy arguments
    (_HostArgs), or _WAIT (memory pymetal does not own)."""
    abuf = s.args
    data = s.data
    doff = 0
    host = None
    params = fn._params
    for i in range(len(args)):
        a = args[i]
        p = params[i]
        t = type(a)
        if t is Array:
            dt = a._dtype
            if dt is not p.dtype and dt not in p._ok and not (raw or p.accepts(dt)):
                raise dtype_error(fn, i, p, dt)
            if a._ro and p.writable:
                raise ValueError(
                    "argument %d of %s(): assignment destination is read-only: the kernel may write %r; "
                    "pass a writeable copy (x.copy()), or declare the parameter const" % (i, fn._name, p))
            if not a._cc and not fn._own:
                raise ValueError(
                    "argument %d of %s(): the pymetal array is a non-contiguous view (strides %r); "
                    "a kernel sees a buffer: pass x.copy() or pm.ascontiguousarray(x)" % (i, fn._name, a._strides))
            b = a._buf
            if b.views and host is None:
                host = _WAIT
            # the array's exact bytes: the CPU backend's validation checks accesses against them
            _pack_arg(abuf, i * _ARG_SIZE, _BUFFER, p.index, b.handle, a._offset, 0, a._size * dt.itemsize or _EMPTY)
        elif t is float or t is int:
            pack = p.pack
            if pack is None:
                doff = _other_arg(fn, a, i, p, s, doff)
                continue
            try:
                pack(data, doff, a)
            except (struct.error, OverflowError):
                raise _scalar_error(fn, a, i, p) from None
            _pack_arg(abuf, i * _ARG_SIZE, _BYTES, p.index, 0, 0, s.data_addr + doff, p.size)
            doff += _ALIGN
        elif t is _ndarray or isinstance(a, _ndarray):
            if host is None or host is _WAIT:
                host = _HostArgs(fn, s)
            _bind_ndarray(fn, host, a, i, p, raw)
        else:
            doff = _other_arg(fn, a, i, p, s, doff, raw)
            if isinstance(a, Array):
                if a._buf.views and host is None:
                    host = _WAIT
            elif doff < 0:  # a buffer-protocol object, bound as an array
                if host is None or host is _WAIT:
                    host = _HostArgs(fn, s)
                doff = ~doff
                _bind_ndarray(fn, host, np.asarray(memoryview(a)), i, p, raw)
    return host

def _bind_ndarray(fn, host, a, i, p, raw):
    dt = a.dtype
    if dt not in p._ok:
        if dt not in SUPPORTED:
            check_dtype(dt, "argument %d of %s()" % (i, fn._name))
        if not (raw or p.accepts(dt)):
            raise dtype_error(fn, i, p, dt)
    host.bind(a, i, p)


def _other_arg(fn, a, i, p, s, doff, raw=False):
    """Binds the less common argument kinds; returns the new data offset, or
    ~offset when `a` is a buffer-protocol object to bind as an array."""
    if isinstance(a, Array):  # a subclass
        if not (raw or p.accepts(a._dtype)):
            raise dtype_error(fn, i, p, a._dtype)
        _pack_arg(s.args, i * _ARG_SIZE, _BUFFER, p.index, a._buf.handle, a._offset, 0, a.nbytes or _EMPTY)
        return doff
    if isinstance(a, (bytes, bytearray, memoryview)) or _is_buffer(a):
        if not p.by_value or (p.writable and not isinstance(a, bytes)):
            if isinstance(a, bytes):
                raise TypeError(
                    "argument %d of %s(): bytes are passed by value, but %r is an array the kernel "
                    "%s: pass a NumPy or pymetal array (or a bytearray, whose results come back)"
                    % (i, fn._name, p, "may write" if p.writable else "reads"))
            return ~doff  # writeable memory: a buffer whose results come back
        b = memoryview(a).cast("B")
        n = b.nbytes
        if n != p.size:
            raise TypeError("argument %d of %s(): %d bytes for %r, which takes %d bytes"
                            % (i, fn._name, n, p, p.size))
        s.datamv[doff:doff + n] = b
    elif not p.by_value:
        raise TypeError(
            "argument %d of %s(): %r takes an array (a buffer), not %s: pass a NumPy or pymetal array"
            % (i, fn._name, p, type(a).__name__))
    else:
        n = _scalar(fn, a, i, p, s.data, doff)
    _pack_arg(s.args, i * _ARG_SIZE, _BYTES, p.index, 0, 0, s.data_addr + doff, n)
    return doff + (n + _ALIGN - 1) // _ALIGN * _ALIGN

def _scalar(fn, a, i, p, data, doff):
    """Packs scalar a as the value of parameter p; returns its size."""
    if isinstance(a, np.generic):
        if a.dtype == p.dtype and p.lanes == 1 or (a.dtype.kind in "Vc" and p.dtype is None):
            # A NumPy scalar of the declared type, or a struct (a structured or complex scalar,
            # e.g. complex64 for Shaders/complex.h's cfloat): its bytes, whose size is checked.
            b = a.tobytes()
            if len(b) != p.size:
                raise TypeError("argument %d of %s(): %s of %d bytes for %r, which takes %d bytes"
                                % (i, fn._name, a.dtype, len(b), p, p.size))
            data[doff:doff + len(b)] = b
            return len(b)
        if a.dtype.kind not in "biuf":
            raise _scalar_error(fn, a, i, p)
        a = a.item()
    if not isinstance(a, (bool, int, float)):
        raise TypeError(
            "argument %d of %s(): cannot pass %s to %r; pass a Python or NumPy scalar, bytes, or an array"
            % (i, fn._name, type(a).__name__, p))
    if p.dtype is None or p.lanes != 1 or p.dtype.kind == "V":
        raise _scalar_error(fn, a, i, p)
    if p.dtype.kind == "b":
        if not (isinstance(a, bool) or (isinstance(a, int) and a in (0, 1))):
            raise _scalar_error(fn, a, i, p)
        data[doff] = 1 if a else 0
        return 1
    if p.pack is None:  # bfloat
        raise _scalar_error(fn, a, i, p)
    try:
        p.pack(data, doff, a)
    except (struct.error, OverflowError):
        raise _scalar_error(fn, a, i, p) from None
    return p.size

def _scalar_error(fn, a, i, p):
    """The exception for scalar a that parameter p cannot take."""
    what = "argument %d of %s(): %r for %r" % (i, fn._name, a, p)
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

def dtype_error(fn, i, p, dtype):
    return TypeError(
        "argument %d of %s(): a %s array for %r, whose elements are %s: pass an array of %s (a.astype(...)), "
        "or raw=True to bind the array's bytes as they are" % (
            i, fn._name, dtype, p, p.type_name, p.dtype if p.dtype is not None else "any type"))

def threadgroup_memory(fn, spec, abuf, first):
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
    limit = fn._device.max_threadgroup_memory
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
