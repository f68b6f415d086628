"""DLPack on pymetal arrays: ``__dlpack__``, ``__dlpack_device__`` and ``from_dlpack``.

pymetal memory is shared memory the CPU addresses directly (a Metal buffer in
shared storage mode, or MetalCPU's memory on Linux), so arrays are exported as
DLPack CPU tensors (``kDLCPU``, device 0): the pointer in the DLTensor is the
buffer's host address, which is what a CPU consumer needs. ``kDLMetal`` would
ask the consumer for an MTLBuffer handle instead, which NumPy and PyTorch's CPU
tensors cannot use.

Export goes through NumPy's own DLPack implementation on the zero-copy view of
the array (``Array.numpy()``, which first waits for pending work): the capsule
holds that view, whose ``.base`` chain holds the pymetal Buffer, so the memory
lives as long as any consumer holds it; versioned (DLPack 1.x) or unversioned
capsules follow ``max_version`` as NumPy implements them. NumPy's DLPack knows
no bfloat16, so a bfloat16 array is exported as its uint16 bits and the
tensor's type is then set to kDLBfloat. Arrays with negative strides are
exported as a copy (PyTorch refuses negative strides; ``copy=False`` raises).

Import reads the capsule with ctypes (DLPack 1.0 layouts; bfloat16 included),
takes the tensor over (the capsule is renamed "used_...") and gives it to a
small owner object that calls the producer's deleter when the last NumPy view
or pymetal buffer of the memory goes.
Import shares the producer's memory when pymetal can wrap it (C-contiguous,
writeable, page-aligned: the rule of no-copy Metal buffers) and copies
otherwise; ``copy=False`` then raises BufferError.
"""

from __future__ import annotations

import ctypes as C

import numpy as np

from .. import dtypes as _dt
from .array import Array
from .construct import _device, _from_numpy
from .layout import c_strides

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .array import Array
    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar

_KDLCPU = 1
_FLAG_READ_ONLY = 1
# DLDataTypeCode: kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool.
_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_BFLOAT = 4


class _Device(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class _DataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class _Tensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", _Device), ("ndim", C.c_int32), ("dtype", _DataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


_Deleter = C.CFUNCTYPE(None, C.c_void_p)


class _Managed(C.Structure):  # DLManagedTensor (unversioned)
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", C.c_void_p), ("deleter", _Deleter)]


class _Version(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class _ManagedVersioned(C.Structure):  # DLManagedTensorVersioned (DLPack 1.x)
    _fields_ = [("version", _Version), ("manager_ctx", C.c_void_p), ("deleter", _Deleter),
                ("flags", C.c_uint64), ("dl_tensor", _Tensor)]


# Capsule names: C strings that must outlive every capsule (PyCapsule keeps the pointer).
_NAMES = {n: C.create_string_buffer(n) for n in (b"dltensor", b"dltensor_versioned",
                                                  b"used_dltensor", b"used_dltensor_versioned")}


def _capi(name, restype, *argtypes):
    return C.PYFUNCTYPE(restype, *argtypes)((name, C.pythonapi))


_capsule_valid = _capi("PyCapsule_IsValid", C.c_int, C.py_object, C.c_void_p)
_capsule_pointer = _capi("PyCapsule_GetPointer", C.c_void_p, C.py_object, C.c_void_p)
_capsule_set_name = _capi("PyCapsule_SetName", C.c_int, C.py_object, C.c_void_p)


# ---- export -----------------------------------------------------------------------------

def _dlpack(self: Array, *, stream: Any = None, max_version: tuple[int, int] | None = None,
            dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
    """The array as a DLPack capsule (``Array.__dlpack__``): the same memory, seen by NumPy, PyTorch, ...

    pymetal memory is CPU-addressable, so the capsule names the CPU device;
    ``np.from_dlpack(x)`` is a zero-copy view.

    Examples:
        >>> x = pm.arange(3, dtype=pm.int32)
        >>> a = np.from_dlpack(x)
        >>> a[0] = 5
        >>> x
        Array([5, 1, 2], dtype=int32)
    """
    if stream is not None:
        raise ValueError("__dlpack__: pymetal exports CPU-addressable memory; stream must be None, not %r"
                         % (stream,))
    if dl_device is not None and tuple(dl_device) != (_KDLCPU, 0):
        raise BufferError("__dlpack__: pymetal arrays can be exported to the CPU (device (1, 0)) only, not %r"
                          % (dl_device,))
    x = self
    if x._size > 1 and any(s < 0 for s in x._strides):
        # Consumers differ on negative strides (PyTorch refuses them): export a copy.
        if copy is False:
            raise BufferError("__dlpack__(copy=False): the array has negative strides")
        x, copy = x.copy(), None
    a = x.numpy()  # waits for the work that produces the array; a view, no copy
    bf16 = a.dtype == _dt.bfloat16
    if bf16:  # NumPy's DLPack knows no bfloat16: export the bits as uint16, then retype the tensor
        a = a.view(np.uint16)
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
              if v is not None}
    try:
        cap = a.__dlpack__(**kwargs)  # type: ignore[arg-type]  # only the keywords given, each of its type
    except BufferError as e:
        raise BufferError("__dlpack__: %s arrays cannot be exported through DLPack (%s)" % (x._dtype, e)) from None
    if bf16:
        _tensor_of(cap)[0].dl_tensor.dtype.code = _BFLOAT
    return cap


def _dlpack_device(self: Array) -> tuple[int, int]:
    """The DLPack device of the array's memory (``Array.__dlpack_device__``): the CPU, (1, 0).

    Examples:
        >>> pm.zeros(2).__dlpack_device__()
        (1, 0)
    """
    return (_KDLCPU, 0)



# ---- import -------------------------------------------------------------------------------

class _Imported:
    """Owns a consumed DLPack tensor: calls the producer's deleter when collected.

    It is the base of the NumPy view of the tensor (``__array_interface__``), so it
    lives as long as any view of the memory or a pymetal buffer wrapping it."""

    __slots__ = ("managed", "address", "__array_interface__")

    def __init__(self, managed, address, lo, nbytes, readonly):
        self.managed = managed
        self.address = address
        self.__array_interface__ = {"data": (lo, readonly), "shape": (nbytes,), "typestr": "|u1", "version": 3}

    def __del__(self):
        if self.managed.deleter:
            self.managed.deleter(self.address)


def _np_dtype(t):
    code, bits, lanes = t.code, t.bits, t.lanes
    if lanes != 1:
        raise BufferError("from_dlpack: vector types (lanes=%d) are not supported" % lanes)
    if code == _BFLOAT and bits == 16 and _dt.bfloat16 is not None:
        return _dt.bfloat16
    kind = {v: k for k, v in _CODES.items()}.get(code)
    if kind is None:
        raise BufferError("from_dlpack: DLPack type code %d is not supported" % code)
    return np.dtype("?" if kind == "b" else "%s%d" % (kind, bits // 8))


def _tensor_of(cap):
    """(managed struct, its address, capsule name) of an unconsumed DLPack capsule."""
    for name, cls in ((b"dltensor_versioned", _ManagedVersioned), (b"dltensor", _Managed)):
        if _capsule_valid(cap, C.addressof(_NAMES[name])):
            address = _capsule_pointer(cap, C.addressof(_NAMES[name]))
            return cls.from_address(address), address, name
    raise BufferError("from_dlpack: __dlpack__() did not return an unconsumed DLPack capsule")


def _take_capsule(x):
    """(managed struct, its address, NumPy dtype) of x's tensor; the capsule is marked consumed."""
    try:
        cap = x.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer from before DLPack 1.0
        cap = x.__dlpack__()
    managed, address, name = _tensor_of(cap)
    if isinstance(managed, _ManagedVersioned) and managed.version.major != 1:
        raise BufferError("from_dlpack: DLPack version %d.x is not supported" % managed.version.major)
    dt = _np_dtype(managed.dl_tensor.dtype)  # before taking it over: a refused capsule frees itself
    _capsule_set_name(cap, C.addressof(_NAMES[b"used_" + name]))  # ours now: the producer will not free it
    return managed, address, dt


def _as_numpy(x):
    """A NumPy view of a DLPack producer's CPU memory, owning the consumed tensor."""
    dev = getattr(x, "__dlpack_device__", None)
    if dev is not None and int(dev()[0]) != _KDLCPU:
        raise BufferError("from_dlpack: %s lives on DLPack device %r; pymetal reads CPU memory"
                          % (type(x).__name__, tuple(dev())))
    managed, address, dt = _take_capsule(x)
    t = managed.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] * dt.itemsize for i in range(t.ndim)) if t.strides else c_strides(shape, dt.itemsize)
    data = (t.data or 0) + t.byte_offset
    readonly = isinstance(managed, _ManagedVersioned) and bool(managed.flags & _FLAG_READ_ONLY)
    if 0 in shape:  # nothing to view: done with the producer's tensor
        if managed.deleter:
            managed.deleter(address)
        return np.empty(shape, dt)
    lo = hi = 0
    for n, s in zip(shape, strides):
        lo, hi = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
    owner = _Imported(managed, address, data + lo, hi - lo + dt.itemsize, readonly)
    return np.ndarray(shape, dt, buffer=np.asarray(owner), offset=-lo, strides=strides)


def from_dlpack(x: Any, /, *, device: Device | None = None, copy: bool | None = None) -> Array:
    """A pymetal array of a DLPack producer's data (NumPy arrays, PyTorch CPU tensors, ...).

    Shares the producer's memory when it is C-contiguous, writeable and page-aligned;
    otherwise copies (copy=False then raises BufferError; copy=True always copies).

    Examples:
        >>> a = np.arange(4, dtype=np.int16)
        >>> pm.from_dlpack(a)
        Array([0, 1, 2, 3], dtype=int16)
    """
    dev = _device(device)
    if isinstance(x, Array):
        return x.copy() if copy else x
    if not hasattr(x, "__dlpack__"):
        raise TypeError("from_dlpack: %s does not implement __dlpack__" % type(x).__name__)
    # A NumPy array is used as itself: pymetal then recognises a view of its own memory.
    a = x if isinstance(x, np.ndarray) else _as_numpy(x)
    if a.size == 0:
        copy = copy or None  # nothing to share: an empty array is never a copy that matters
    try:
        return _from_numpy(a, dev, copy)
    except ValueError as e:
        if copy is False:
            raise BufferError("from_dlpack(copy=False): %s" % e) from None
        raise
