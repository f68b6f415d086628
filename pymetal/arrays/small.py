"""Small arrays computed by the host, over the same shared memory.

A kernel dispatch costs a fixed few microseconds on the CPU backend (encoding,
a command buffer, the wait) and tens of microseconds on an Apple GPU (a command
buffer round trip), while NumPy adds 1,000 float32 in well under a
microsecond. So the array library computes small results on the host, with
NumPy on views of the arrays' memory, under one rule (``host_ready``):

    the result (for a sum: its input) has at most LIMIT elements, AND no
    pending device work uses the inputs or the result's memory (their epochs
    are synced), AND no buffer of the device is poisoned.

(The result's memory is fresh from the allocator, or an out= / in-place
target: either way the rule checks that nothing queued still uses it.)

Then nothing queued can write the inputs or read the result, so computing it
now is what the in-order stream would have computed; nothing is queued, and
the result is ready when the call returns. Otherwise the kernel runs, as
before: small work behind pending work stays in order on the stream, and
failed work's errors propagate through the kernels (the fault model).

Only ops whose host results are bit-identical to the kernels' take the path
(``ufunc``): + - * / and the comparisons on float32 (IEEE operations, one
rounding each), + - * and the comparisons on int32/int64 (wrapping), negative
and abs, in any layout, with broadcasting, scalars and out=; copies within a
dtype; and ``sum`` of int32/int64 (exact int64 sums, so any order gives the
same bits). Float sums, transcendental functions, integer division, shifts and
the other dtypes always run their kernels (see sum_rows).

``PYMETAL_HOST_SMALL``: the largest result, in elements, computed this way
(default: 1M on the CPU backend, 65536 on a GPU); 0 turns it off. Tests set ``LIMIT``.
On the CPU backend the kernels run on the same cores as NumPy, and a dispatch
wakes workers and waits for them: measured (2 cores, loaded), the host path is
as fast as the kernels or faster up to 1-2M elements for every op class it
takes (add, a chain of four ops, negative, integer sum: kernels 1.1-4x slower
at 64K-1M), and the kernels win from 2-4M (two cores on memory-bound work). On
a GPU a command buffer costs tens of microseconds but large work is far faster
there: 64K keeps the GPU for everything past the round trip's worth.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

import numpy as np


DEFAULT = 65536 if sys.platform == "darwin" else 1 << 20  # Metal on macOS, else the CPU backend (see above)


def _limit():
    text = os.environ.get("PYMETAL_HOST_SMALL", str(DEFAULT)).strip()
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError("PYMETAL_HOST_SMALL=%r: give the largest number of elements to compute on the host "
                         "(an integer >= 0; 0 turns the host path off)" % text)
    return value


LIMIT = _limit()

_F32, _I32, _I64 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)
_EXACT = {  # op -> dtypes whose NumPy ufunc is bit-identical to the kernel (see the module's doc)
    "add": (_F32, _I32, _I64), "subtract": (_F32, _I32, _I64), "multiply": (_F32, _I32, _I64),
    "divide": (_F32,), "negative": (_F32, _I32, _I64), "abs": (_F32, _I32, _I64),
    "equal": (_F32, _I32, _I64), "not_equal": (_F32, _I32, _I64), "less": (_F32, _I32, _I64),
    "less_equal": (_F32, _I32, _I64), "greater": (_F32, _I32, _I64), "greater_equal": (_F32, _I32, _I64),
}


# The kernels raise no floating-point warnings (1 / 0 is inf, quietly): neither may the host.
# np.errstate costs several times a small op; this is the context variable it sets (NumPy 2).
_errors: Any
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _errors  # type: ignore[import-not-found,no-redef]
    with np.errstate(all="ignore"):
        _QUIET = _errors.get()
except (ImportError, AttributeError, LookupError):  # another NumPy: no host path (see host_ready)
    _errors = None


def ufunc(name, dt):
    """The NumPy ufunc that computes op `name` on dt exactly as its kernel, else None."""
    return getattr(np, name) if _errors is not None and dt in _EXACT.get(name, ()) else None


class _Memory:
    """An address range as NumPy sees it, without a reference to its Buffer (see _view)."""

    __slots__ = ("__array_interface__",)

    def __init__(self, addr, shape, dt, strides):
        self.__array_interface__ = {"data": (addr, False), "shape": shape, "typestr": dt.str, "strides": strides,
                                    "version": 3}


_VIEWS: dict = {}  # (address, shape, dtype, strides) -> ndarray over that memory


def _view(a):
    """A NumPy view of Array a (any layout), for use while a lives (during one op).

    Cached by address: the caching allocator hands the same memory to the next
    op's result, and building a view costs more than the ops here. A cached view
    does not keep memory alive, so it is only ever used for an Array that does."""
    v = a._np
    if v is not None:
        return v
    return _address_view(a)


def _address_view(a):
    """_view(a) from the cache by address only (never a._np, whose base keeps a's Buffer)."""
    key = (a._buf.ptr + a._offset, a._shape, a._dtype, a._strides)
    v = _VIEWS.get(key)
    if v is None:
        if len(_VIEWS) >= 4096:
            _VIEWS.clear()
        v = _VIEWS[key] = np.asarray(_Memory(key[0], a._shape, a._dtype, a._strides))
    return v


def host_ready(res, a, b=None):
    """The rule: res (a fresh result, or out=) of at most LIMIT elements may be
    computed now, on the host, from Arrays a and b: no pending work uses any of them."""
    buf = res._buf
    dev = buf.device
    synced = dev.synced
    return (res._size <= LIMIT and buf.epoch <= synced and a._buf.epoch <= synced
            and (b is None or b._buf.epoch <= synced) and not dev.poisoned.value)


_TRIPLES: dict = {}  # (addresses of a, b, res; shape; dtypes) -> their views, for binary


def binary(fn, a, b, res):
    """res = fn(a, b) on the host if the rule allows (a, b: contiguous Arrays of
    res's shape); whether it did."""
    # host_ready(res, a, b), inlined: this runs once per small op
    buf, ab, bb = res._buf, a._buf, b._buf
    dev = buf.device
    synced = dev.synced
    if res._size > LIMIT or buf.epoch > synced or ab.epoch > synced or bb.epoch > synced or dev.poisoned.value:
        return False
    # The three views in one look-up (a loop's operands and results cycle
    # through a few addresses of the allocator)
    key = (ab.ptr + a._offset, bb.ptr + b._offset, buf.ptr + res._offset, res._shape, a._dtype, b._dtype,
           res._dtype)
    views = _TRIPLES.get(key)
    if views is None:
        if len(_TRIPLES) >= 4096:
            _TRIPLES.clear()
        views = _TRIPLES[key] = (_address_view(a), _address_view(b), _address_view(res))  # (keep no Buffer)
    token = _errors.set(_QUIET)
    try:
        fn(views[0], views[1], views[2])  # (out positional: NumPy parses no keyword)
    finally:
        _errors.reset(token)
    return True


def binary_scalar(fn, a, value, res):
    """res = fn(a, value), value a NumPy scalar of a's dtype; whether it did."""
    if not host_ready(res, a):
        return False
    token = _errors.set(_QUIET)
    try:
        fn(_view(a), value, _view(res))
    finally:
        _errors.reset(token)
    return True


def binary_any(fn, x, y, res):
    """The general path's res = fn(x, y): x and y are Arrays of any layout that
    broadcast to res's shape, or NumPy scalars of the compute dtype (what the
    kernel would be passed); res may be an out= array. Whether it did."""
    arrays = [v for v in (x, y) if not isinstance(v, np.generic)]
    if not host_ready(res, *arrays):
        return False
    token = _errors.set(_QUIET)
    try:
        fn(x if isinstance(x, np.generic) else _view(x), y if isinstance(y, np.generic) else _view(y),
           _view(res))
    finally:
        _errors.reset(token)
    return True


def copy(src, out):
    """out[...] = src, both Arrays of one dtype and shape (any layout): a copy of the
    bytes, the same on any path. Whether it did."""
    if src._dtype != out._dtype or src._dtype.kind == "V" or not host_ready(out, src):
        return False  # "V": a dtype NumPy cannot rebuild from its typestr (bfloat16)
    np.copyto(_view(out), _view(src))
    return True


def copy_element(src, out):
    """out = src, both one-element Arrays of one dtype: their bytes moved on the host
    (x[i, j] makes this copy, often in Python loops); whether it did."""
    if not host_ready(out, src):
        return False
    ctypes.memmove(out._buf.ptr + out._offset, src._buf.ptr + src._offset, src._dtype.itemsize)
    return True


def unary(fn, x, res):
    """res = fn(x), x and res Arrays of one shape, any layout; whether it did."""
    if not host_ready(res, x):
        return False
    token = _errors.set(_QUIET)
    try:
        fn(_view(x), _view(res))
    finally:
        _errors.reset(token)
    return True


def sum_rows(src, outer, n, acc):
    """The row sums of contiguous integer src seen as (outer, n), as an (outer, 1, 1)
    int64 Array, or None when the kernels must run. Float sums always run their
    kernels: NumPy's order (pairwise) is not the kernels' (16 lanes per chunk, then
    the chunks), and rebuilding theirs from NumPy calls costs more than the kernels."""
    from .construct import _new
    if outer * n > LIMIT or acc != _I64 or src._dtype not in (_I32, _I64):
        return None
    res = _new((outer, 1, 1), acc, src._buf.device)
    if not host_ready(res, src):
        return None
    # Wrapping int64 sums: every order gives the same bits.
    np.add.reduce(_view(src).reshape(outer, n), axis=1, dtype=_I64, out=_view(res).reshape(outer))
    return res
