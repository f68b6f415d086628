"""The seam between the engine and the array library: the array type a kernel
call binds without a copy.

runtime/ imports nothing from arrays/. The array library registers its array
class here when it is imported (pymetal/arrays/array.py); a Function then binds
objects of that class (and subclasses) by their buffer and offset: it reads
``_buf``, ``_offset``, ``_dtype``, ``_ro`` (read-only), ``_cc`` (C-contiguous) and
``_strides``. ``owner_of(ndarray, ptr)`` says whether a NumPy array is a view
of such memory: (Buffer, offset) to bind it in place, else None.

Until then nothing is an array of the library: custom kernels take NumPy
arrays, buffer-protocol objects and scalars.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _NoArrays:
    """Matches no argument (no array library registered)."""


array_type: Any = _NoArrays  # Any: its objects' private attributes are read by the engine


def owner_of(a, ptr):
    return None


_listeners: list = []


def listen(namespace):
    """Sets namespace["Array"] (a module's globals()) to the array type now and at each register():
    the call path keeps the type as a module global (no attribute lookup per kernel call)."""
    def set_type(cls):
        namespace["Array"] = cls

    _listeners.append(set_type)
    set_type(array_type)


def register(cls, owner):
    """Binds objects of `cls` as device arrays; `owner(ndarray, ptr)` finds the
    pymetal memory under a NumPy view (see the module's docstring)."""
    global array_type, owner_of
    array_type = cls
    owner_of = owner
    for set_type in _listeners:
        set_type(cls)
