"""The Python Array API standard's namespace pieces that are not elementwise
ops, reductions or manipulations: ``__array_namespace_info__``, the set
functions ``unique_all / unique_counts / unique_inverse``, ``isin``, ``diff``,
``broadcast_shapes`` and ``real / imag / conj`` for every numeric dtype.

Devices: the one Metal device (on Linux the same API runs the kernels on the
CPU). Apple GPUs have no double precision, so the device's data types are
bool, the integers, float32 and complex64 (the standard lets a device leave out
float64 and complex128); pymetal's float16 and bfloat16 are extensions, not
listed either. The default floating type is float32, the default integer and
index type int64.
"""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes as _dt
from . import elementwise as _ew
from .construct import _new
from .layout import normalize_axis
from ..runtime.device import Device, device as _default_device
from .indexing import take
from .manipulation import concat
from .sorting import _compact, argsort, cumulative_sum, searchsorted, sort

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .array import Array
    from .._typing import ArrayLike, DTypeLike, Scalar

from .. import __array_api_version__ as API_VERSION  # noqa: E402
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _check_device(device):
    if device is not None and not (isinstance(device, Device) and device == _default_device()):
        raise ValueError("device=%r: pymetal has one device, %r" % (device, _default_device()))


_STANDARD_DTYPES = {
    "bool": _dt.bool_, "int8": _dt.int8, "int16": _dt.int16, "int32": _dt.int32, "int64": _dt.int64,
    "uint8": _dt.uint8, "uint16": _dt.uint16, "uint32": _dt.uint32, "uint64": _dt.uint64,
    "float32": _dt.float32, "complex64": _dt.complex64,
}


class Info:
    """What ``pm.__array_namespace_info__()`` returns (the standard's inspection API).

    Examples:
        >>> info = pm.__array_namespace_info__()
        >>> info.default_dtypes()["real floating"]
        dtype('float32')
    """

    def capabilities(self) -> dict[str, Any]:
        """What the namespace supports: boolean indexing, data-dependent shapes, max dimensions.

        Examples:
            >>> pm.__array_namespace_info__().capabilities()["boolean indexing"]
            True
        """
        # "max dimensions": arrays of any rank work when contiguous; 8 is the
        # most a strided kernel takes after merging contiguous dimensions.
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 8}

    def default_device(self) -> Device:
        """The default device (pm.device()).

        Examples:
            >>> pm.__array_namespace_info__().default_device() is pm.device()
            True
        """
        return _default_device()

    def devices(self) -> list[Device]:
        """The devices arrays can live on: the one pymetal device.

        Examples:
            >>> len(pm.__array_namespace_info__().devices())
            1
        """
        return [_default_device()]

    def default_dtypes(self, *, device: Device | None = None) -> dict[str, Any]:
        """The default dtypes: real and complex floating, integral and indexing.

        Examples:
            >>> pm.__array_namespace_info__().default_dtypes()["integral"]
            dtype('int64')
        """
        _check_device(device)
        return {"real floating": _dt.float32, "complex floating": _dt.complex64,
                "integral": _dt.int64, "indexing": _dt.int64}

    def dtypes(self, *, device: Device | None = None, kind: str | tuple[str, ...] | None = None) -> dict[str, Any]:
        """The standard's dtypes the device supports, by name (those of `kind` when given).

        Examples:
            >>> sorted(pm.__array_namespace_info__().dtypes(kind="real floating"))
            ['float32']
        """
        _check_device(device)
        return {name: dt for name, dt in _STANDARD_DTYPES.items() if kind is None or _dt.isdtype(dt, kind)}


def __array_namespace_info__() -> Info:
    """The Array API inspection namespace: capabilities, devices and data types.

    Examples:
        >>> pm.__array_namespace_info__().capabilities()["max dimensions"]
        8
    """
    return Info()


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that arrays of the given shapes broadcast to.

    Examples:
        >>> pm.broadcast_shapes((2, 1), (3,))
        (2, 3)
    """
    if not shapes:
        return ()
    return _ew.broadcast_shapes(*(tuple(s) for s in shapes))


# ---- complex parts, for any numeric array -------------------------------------------------------

def _numeric(name, x):
    x = _ew.as_array(x)
    if _dt.kind(x._dtype) == "b":
        raise TypeError("%s() needs a numeric array, not bool" % name)
    return x


def real(x: ArrayLike, /) -> Array:
    """The real part (float32 for complex64); a copy of a real array.

    Examples:
        >>> pm.real(pm.asarray([1 + 2j, 3 - 1j]))
        Array([1., 3.], dtype=float32)
    """
    x = _numeric("real", x)
    return _ew.unary("real", x) if _dt.kind(x._dtype) == "c" else _ew.ascontiguous(x, force=True)


def imag(x: ArrayLike, /) -> Array:
    """The imaginary part (float32 for complex64); zeros for a real array.

    Examples:
        >>> pm.imag(pm.asarray([1 + 2j, 3 - 1j]))
        Array([ 2., -1.], dtype=float32)
    """
    x = _numeric("imag", x)
    if _dt.kind(x._dtype) == "c":
        return _ew.unary("imag", x)
    return _ew.fill(_new(x._shape, x._dtype, x._buf.device), 0)


def complex_from_parts(re: Array, im: Array) -> Array:
    """complex64 with real part re and imaginary part im (real arrays, im broadcast to
    re's shape), each copied into its half of the result's elements. Not re + im * 1j:
    an infinite imaginary part times 1j is inf * (0 + 1j) = NaN + inf j, which would
    make the real part NaN."""
    out = _new(re._shape, _dt.complex64, re._buf.device)
    half = _dt.float32.itemsize  # the imaginary part follows the real part in each element
    for part, offset in ((re, 0), (im, half)):
        _ew.copy_into(part, out._view(out._offset + offset, out._shape, out._strides, _dt.float32))
    return out


def conj(x: ArrayLike, /) -> Array:
    """The complex conjugate; a copy of a real array.

    Examples:
        >>> pm.conj(pm.asarray([1 + 2j]))
        Array([1.-2.j], dtype=complex64)
    """
    return _ew.unary("conj", _numeric("conj", x))


# ---- set functions -----------------------------------------------------------------------------

UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")


def _unique(x):
    """(values, first indices, inverse indices in x's shape, counts), all on the device:
    a stable argsort, the starts of runs of equal values (each NaN starts its own
    run, as the standard says), compaction of the starts, the run number of every
    sorted element scattered back to its original place. One host read: the count."""
    from .creation import arange  # at call time: creation imports this module

    x = _ew.as_array(x)
    dev = x._buf.device
    flat = _ew.ascontiguous(x).reshape(-1)
    n = flat._size
    if n == 0:
        empty = _new((0,), _dt.int64, dev)
        return _new((0,), x._dtype, dev), empty, _new(x._shape, _dt.int64, dev), empty
    if _dt.kind(flat._dtype) == "c":
        # complex numbers have no order; any order of the distinct values is allowed, so
        # sort by (real, imaginary): a stable sort by the imaginary parts, then by the real parts
        order = argsort(_ew.unary("imag", flat), stable=True)
        order = take(order, argsort(take(_ew.unary("real", flat), order), stable=True))
    else:
        order = argsort(flat, stable=True)
    v = take(flat, order)
    first = _ew.fill(_new((1,), _dt.bool_, dev), True)
    starts = concat([first, _ew.binary("not_equal", v[1:], v[:-1])]) if n > 1 else first
    values = _compact(v, starts)
    indices = _compact(order, starts)
    run = _ew.binary("subtract", cumulative_sum(starts, axis=0, dtype=_dt.int64), 1)
    inverse = _new((n,), _dt.int64, dev)
    inverse[order] = run
    start_pos = _compact(arange(n, dtype=_dt.int64, device=dev), starts)
    ends = concat([start_pos[1:], _ew.fill(_new((1,), _dt.int64, dev), n)])
    counts = _ew.binary("subtract", ends, start_pos)
    return values, indices, inverse.reshape(x._shape), counts


def unique_all(x: ArrayLike, /) -> UniqueAllResult:
    """Distinct values, the index of each one's first occurrence, the inverse indices and the counts.

    Values are sorted (complex: by real, then imaginary part); the inverse indices
    have x's shape. A named tuple (values, indices, inverse_indices, counts).

    Examples:
        >>> r = pm.unique_all(pm.asarray([3, 1, 3, 2]))
        >>> r.values, r.indices, r.inverse_indices, r.counts
        (Array([1, 2, 3], dtype=int64), Array([1, 3, 0], dtype=int64),
         Array([2, 0, 2, 1], dtype=int64), Array([1, 1, 2], dtype=int64))
    """
    return UniqueAllResult(*_unique(x))


def unique_counts(x: ArrayLike, /) -> UniqueCountsResult:
    """Distinct values (sorted) and how often each occurs: a named tuple (values, counts).

    Examples:
        >>> values, counts = pm.unique_counts(pm.asarray([5, 5, 7]))
        >>> values, counts
        (Array([5, 7], dtype=int64), Array([2, 1], dtype=int64))
    """
    values, _, _, counts = _unique(x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: ArrayLike, /) -> UniqueInverseResult:
    """Distinct values (sorted) and, for each element of x, the index of its value.

    A named tuple (values, inverse_indices).

    Examples:
        >>> pm.unique_inverse(pm.asarray([5, 5, 7])).inverse_indices
        Array([0, 0, 1], dtype=int64)
    """
    values, _, inverse, _ = _unique(x)
    return UniqueInverseResult(values, inverse)


def isin(x1: ArrayLike, x2: ArrayLike, /, *, invert: bool = False) -> Array:
    """Whether each element of x1 occurs in x2 (binary search over sorted x2).

    Examples:
        >>> pm.isin(pm.asarray([1, 2, 3, 4]), pm.asarray([2, 4]))
        Array([False,  True, False,  True], dtype=bool)
    """

    a = _ew.as_array(x1) if not _ew.is_scalar(x1) else None
    b = _ew.as_array(x2) if not _ew.is_scalar(x2) else None
    if a is None or b is None:
        raise TypeError("isin() needs arrays (a Python scalar can be wrapped with pm.asarray)")
    dt = _dt.promote_types(a._dtype, b._dtype)
    a = a if a._dtype == dt else _ew.astype(a, dt)
    b = b if b._dtype == dt else _ew.astype(b, dt)
    dev = a._buf.device
    if b._size == 0 or a._size == 0:
        return _ew.fill(_new(a._shape, _dt.bool_, dev), bool(invert))
    s = sort(b.reshape(-1))
    pos = searchsorted(s, a.reshape(-1))
    pos = _ew.clip(pos, 0, s._size - 1)
    found = _ew.binary("equal", take(s, pos), a.reshape(-1)).reshape(a._shape)
    return _ew.unary("logical_not", found) if invert else found


# ---- utility ------------------------------------------------------------------------------------

def diff(x: ArrayLike, /, *, axis: int = -1, n: int = 1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """The n-th discrete difference along axis (prepend/append concatenated first).

    Examples:
        >>> pm.diff(pm.asarray([1, 4, 9, 16]))
        Array([3, 5, 7], dtype=int64)
        >>> pm.diff(pm.asarray([1, 4, 9, 16]), n=2)
        Array([2, 2], dtype=int64)
    """

    x = _ew.as_array(x)
    if x.ndim == 0:
        raise ValueError("diff needs an array of at least one dimension")
    if n < 0:
        raise ValueError("diff: n must be >= 0, not %d" % n)
    axis = normalize_axis(axis, x.ndim)
    if n == 0:  # NumPy: the input itself, prepend/append not added (Dask's diff relies on it)
        return _ew.ascontiguous(x, force=True)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat([_ew.as_array(p) for p in parts], axis=axis)
    lo = tuple(slice(None) if i != axis else slice(1, None) for i in range(x.ndim))
    hi = tuple(slice(None) if i != axis else slice(None, -1) for i in range(x.ndim))
    op = "not_equal" if x._dtype == _dt.bool_ else "subtract"
    for _ in range(n):
        if x._shape[axis] == 0:
            break
        x = _ew.binary(op, x[lo], x[hi])
    return x
