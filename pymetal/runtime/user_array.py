"""Host reads of pymetal memory as NumPy arrays, counted in their Buffer's ``views``
(the read's hot path: ``Array.numpy()`` and ``np.asarray(x)``). Apart from buffer.py
so that making a device does not import NumPy."""

from __future__ import annotations

import numpy as np

from .buffer import Buffer, count_view, uncount_view

__all__ = ["UserBase", "user_array"]


class UserBase(np.ndarray):
    """The base of the NumPy arrays ``Array.numpy()`` and ``np.asarray(x)`` give,
    one per call: like a counted View, it counts in its Buffer's ``views``, and
    keeps the Buffer alive, while any NumPy array derived from it lives.

    A View would have NumPy parse an ``__array_interface__`` on every read (most
    of a small read's cost); this is a view of a template ndarray cached by
    address, and the user's array a plain-ndarray view of it. NumPy's base
    collapsing stops at an ndarray of another type, so every array derived from
    the user's keeps this one (and not just the template) as a ``.base``.
    Arrays NumPy makes of this type (a ufunc of ``x.base``) have no ``buffer``
    and count nothing."""

    __slots__ = ("buffer",)
    buffer: Buffer

    def __del__(self):
        b = getattr(self, "buffer", None)
        if b is not None:
            uncount_view(b)


class _Template(np.ndarray):
    """A cached uncounted ndarray over an address (its type stops NumPy's base collapsing at UserBase)."""

    __slots__ = ()


class _Interface:
    __slots__ = ("__array_interface__",)
    __array_interface__: dict


_TEMPLATES: dict = {}  # (address, shape, dtype, strides) -> _Template over that memory
_plain_view = np.ndarray.view


def user_array(buffer, offset, shape, dtype, strides):
    """A NumPy array over the memory for the user, counted (see UserBase): the read's
    hot path. Templates are cached by address, keeping no Buffer: the caching allocator
    hands the same memory to the next op's result. dtype: one NumPy rebuilds from its
    typestr (not bfloat16's)."""
    key = (buffer.ptr + offset, shape, dtype, strides)
    t = _TEMPLATES.get(key)
    if t is None:
        if len(_TEMPLATES) >= 4096:
            _TEMPLATES.clear()
        m = _Interface()
        m.__array_interface__ = {"data": (key[0], False), "shape": shape, "typestr": dtype.str,
                                 "strides": strides, "version": 3}
        t = _TEMPLATES[key] = _plain_view(np.asarray(m), _Template)
    base = _plain_view(t, UserBase)
    count_view(buffer)
    base.buffer = buffer  # (after the count: only a counted base uncounts itself)
    return _plain_view(base, np.ndarray)
