"""Whether two arrays' memory may overlap: an elementwise write or a copy whose
source overlaps its destination differently goes through a temporary."""

from __future__ import annotations

from .array import Array
from .layout import _extent


def memory_span(a):
    """[first, last + 1) host addresses of the bytes array `a` may touch."""
    lo, hi = _extent(a._shape, a._strides, a._dtype.itemsize)
    start = a._buf.ptr + a._offset
    return start + lo, start + hi


def may_overlap(a, b):
    """Whether Arrays a and b may share memory. Judged by host address ranges, so two
    Buffers over the same memory (two pm.asarray wraps of one ndarray) are seen to overlap."""
    if not a._size or not b._size:
        return False
    if a._buf is not b._buf and not (a._buf.foreign or b._buf.foreign):
        return False  # pymetal's own allocations never share memory (cheap: this runs on every copy)
    a0, a1 = memory_span(a)
    b0, b1 = memory_span(b)
    return a0 < b1 and b0 < a1


def overlaps_differently(dst, src):
    """Whether an elementwise write of dst from src could read an element already
    written: they may share memory and src is not dst element for element (then
    the source is copied to a temporary first, as NumPy does)."""
    if not isinstance(src, Array) or not may_overlap(dst, src):
        return False
    return not (dst._buf.ptr + dst._offset == src._buf.ptr + src._offset and dst._shape == src._shape
                and dst._strides == src._strides and dst._dtype.itemsize == src._dtype.itemsize)
