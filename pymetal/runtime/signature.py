"""A kernel's signature, and what each parameter accepts.

Every Function knows its [[buffer(n)]] and [[threadgroup(n)]] parameters from
the engine (Metal's pipeline reflection on a Mac, MetalCPU's front end and the
C++ types of the parameters on Linux): name, address space, element type,
pointer / reference / value, and whether the kernel may write through it.
Calls are checked against it (arguments.py):

- arrays (pymetal, NumPy, writeable buffer-protocol objects) bind to pointers
  and references whose element type is the array's dtype; raw-byte pointees
  (``uchar``, ``char``, ``void``, structs) take any dtype, and ``raw=True``
  lifts the check for a whole call;
- Python and NumPy scalars bind to references and values, converted to the
  declared type with range checks (``2`` for ``float&`` is ``2.0f``; ``2.5``
  for ``int&`` is a TypeError; ``1 << 40`` for ``int&`` an OverflowError);
- ``bytes`` bind to references and values of exactly their size.
"""

from __future__ import annotations

import struct

import numpy as np

from . import native as N
from ..dtypes import bfloat16

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Argument"]

# Lane kind and size -> the NumPy dtype of one lane; and the struct code of a scalar.
_LANE_DTYPES = {
    (N.PM_SCALAR_BOOL, 1): np.dtype(np.bool_),
    (N.PM_SCALAR_INT, 1): np.dtype(np.int8), (N.PM_SCALAR_UINT, 1): np.dtype(np.uint8),
    (N.PM_SCALAR_INT, 2): np.dtype(np.int16), (N.PM_SCALAR_UINT, 2): np.dtype(np.uint16),
    (N.PM_SCALAR_INT, 4): np.dtype(np.int32), (N.PM_SCALAR_UINT, 4): np.dtype(np.uint32),
    (N.PM_SCALAR_INT, 8): np.dtype(np.int64), (N.PM_SCALAR_UINT, 8): np.dtype(np.uint64),
    (N.PM_SCALAR_FLOAT, 2): np.dtype(np.float16), (N.PM_SCALAR_FLOAT, 4): np.dtype(np.float32),
}
_STRUCT_CODES = {"?": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I",
                 "i8": "q", "u8": "Q", "f2": "e", "f4": "f"}


class Argument:
    """One parameter of a kernel (``fn.arguments``): ``x: device const float*``.

    name, binding ("buffer" | "threadgroup"), index ([[buffer(index)]]), space
    ("device", "constant", "threadgroup", or "" when not reported), form
    ("pointer", "reference", "value", or "buffer" when Metal does not say),
    writable (the kernel may write through it), type_name ("float4", a struct's
    name, ...), dtype (NumPy dtype of one lane, None for raw bytes), lanes,
    size (bytes of one element; 0 when unknown).

    Examples:
        >>> out = pm.shaders().add_float32.arguments[2]
        >>> out.name, out.index, out.writable, out.dtype
        ('out', 2, True, dtype('float32'))
    """

    __slots__ = ("name", "binding", "index", "space", "form", "writable", "type_name", "dtype", "lanes", "size",
                 "raw", "by_value", "pack", "_ok")

    def __init__(self, info: Any) -> None:
        self.name = (info.name or b"").decode()
        self.binding = "threadgroup" if info.binding == N.PM_BINDING_THREADGROUP else "buffer"
        self.index = info.index
        self.space = N.SPACES[info.space] if 0 <= info.space < len(N.SPACES) else ""
        self.form = {N.PM_FORM_POINTER: "pointer", N.PM_FORM_REFERENCE: "reference",
                     N.PM_FORM_VALUE: "value"}.get(info.form, "buffer")
        self.writable = info.access != N.PM_ACCESS_READ_ONLY
        self.type_name = (info.type_name or b"").decode() or "?"
        self.lanes = info.lanes
        self.size = info.size
        if info.scalar == N.PM_SCALAR_BFLOAT:
            self.dtype = bfloat16
        else:
            self.dtype = _LANE_DTYPES.get((info.scalar, info.scalar_size))
        # Raw bytes: void, structs, char / uchar (bytes by convention) take any dtype.
        self.raw = self.dtype is None or (self.dtype.itemsize == 1 and self.lanes == 1 and self.dtype.kind in "iu")
        # One value, not an array: a reference or value (on a Mac, where the form is
        # unknown, a read-only buffer: a writeable one needs an array to get results back).
        self.by_value = self.form in ("reference", "value") or (self.form == "buffer" and not self.writable)
        self.pack = None  # struct.pack_into for a Python scalar of a one-lane numeric value
        if self.by_value and self.lanes == 1 and self.dtype is not None and self.dtype != bfloat16:
            code = _STRUCT_CODES.get("?" if self.dtype.kind == "b" else self.dtype.str[1:])
            if code and code != "?":  # bool takes the slow path: only bools and 0 / 1
                self.pack = struct.Struct("<" + code).pack_into
        self._ok: set = set()  # dtypes seen accepted (the cache that keeps checks cheap)

    @property
    def declaration(self) -> str:
        """The parameter's type as MSL would spell it: ``device const float*``.

        Examples:
            >>> pm.shaders().add_float32.arguments[0].declaration
            'device const float*'
        """
        const = "const " if not self.writable and self.space != "constant" and self.binding == "buffer" else ""
        suffix = {"pointer": "*", "reference": "&"}.get(self.form, "")
        if self.binding == "threadgroup":
            suffix = "*"
        space = self.space + " " if self.space else ""
        return space + const + self.type_name + suffix

    def __repr__(self) -> str:
        return "%s: %s" % (self.name or "[[%s(%d)]]" % (self.binding, self.index), self.declaration)

    def accepts(self, dtype: np.dtype) -> bool:
        """Whether an array of dtype may be bound here (memoised per dtype).

        Examples:
            >>> arg = pm.shaders().add_float32.arguments[0]
            >>> arg.accepts(pm.float32), arg.accepts(pm.int32)
            (True, False)
        """
        if dtype in self._ok:
            return True
        ok = self.raw or dtype == self.dtype or (
            self.dtype == bfloat16 and dtype in (np.dtype(np.uint16), np.dtype(np.int16)))
        if ok:
            self._ok.add(dtype)
        return ok
