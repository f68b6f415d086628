"""More of NumPy's main namespace on pymetal arrays (issue 23): index tricks (mgrid, ogrid,
r_, c_, ix_), splits, type tests, in-place writes (put, putmask, place, copyto), choose,
compress, vander, windows, apply_along_axis, vectorize, packbits and others.

Computations over arrays compose pymetal's kernels (indexing, where, elementwise ops);
metadata helpers (s_, isscalar, issubdtype, promote_types, ndindex, binary_repr, ...) are
NumPy's own. float64 is not a device type: where NumPy returns float64 (windows, vander
of float32), these return float32.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from ... import dtypes as _dt
from ..array import Array
from ..construct import asarray as _asarray
from ..creation import arange, zeros, ones
from ..layout import normalize_axis
from ..overlap import may_overlap
from ..small import _view as _small_view
from ..sorting import nonzero
from ..linear_algebra import matmul
from .creation import linspace, meshgrid
from .functions import where, diag_indices, flatnonzero
from .reduce import into, sort, sum as _sum, min as _min, max as _max, all as _all
from .shapes import array_split, concatenate, take, resize, atleast_1d, reshape, ravel, copy as _copy
from ..namespace_extras import isin
from ..sorting import searchsorted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..._typing import ArrayLike, DTypeLike

_A = _ew.as_array

# NumPy's own (metadata and Python-level helpers: nothing to compute on the device)
s_ = np.s_
ndindex = np.ndindex
isscalar = np.isscalar
issubdtype = np.issubdtype
iterable = np.iterable
promote_types = np.promote_types
binary_repr = np.binary_repr
base_repr = np.base_repr
index_exp = np.index_exp
mintypecode, typename = np.mintypecode, np.typename
typecodes, sctypeDict, ScalarType, little_endian = np.typecodes, np.sctypeDict, np.ScalarType, np.little_endian
True_, False_ = np.True_, np.False_


# ---- index tricks ----------------------------------------------------------------------------

def _slice_range(s):
    """The 1-D array a slice of mgrid / r_ stands for: arange, or linspace for a complex step."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    if any(isinstance(v, float) for v in (start, s.stop, step)):
        return arange(start, s.stop, step, dtype=_dt.float32)
    return arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_range(key)
        if not all(isinstance(k, slice) for k in key):
            raise TypeError("mgrid/ogrid take slices (mgrid[0:2, 0:3:4j]), got %r" % (key,))
        axes = [_slice_range(s) for s in key]
        if not axes:
            return _A(np.zeros((0,), np.int64)) if not self.sparse else ()
        dt = _dt.float32 if any(a._dtype.kind == "f" for a in axes) else axes[0]._dtype
        axes = [_ew.astype(a, dt) for a in axes]
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return tuple(grids) if self.sparse else _m.stack(grids)


mgrid = _Grid(False)
mgrid.__doc__ = """NumPy's mgrid: mgrid[0:2, 0:3] is the dense grid of the slices (one kernel-built
array per axis, stacked); a complex step (0:1:5j) means that many points, end included.

Examples:
    >>> pm.mgrid[0:2, 0:3][1]
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int64)
"""
ogrid = _Grid(True)


class _Concat:
    """r_ and c_: concatenate slices, scalars and arrays along an axis (NumPy's AxisConcatenator,
    without its matrix directives)."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if key and isinstance(key[0], str):
            try:
                spec = [int(v) for v in key[0].split(",")]
            except ValueError:
                raise ValueError("r_/c_: only the integer directive 'axis[,ndmin[,trans1d]]' is supported, "
                                 "got %r" % key[0]) from None
            axis, ndmin, trans1d = (spec + [ndmin, trans1d][len(spec) - 1:])[:3]
            key = key[1:]
        parts = []
        for item in key:
            x = _slice_range(item) if isinstance(item, slice) else _A(item)
            if x.ndim < ndmin:
                # NumPy's rule: ones prepended up to ndmin, then x's own axes moved to trans1d
                k2 = ndmin - x.ndim
                k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                x = _m.reshape(x, (1,) * k2 + x.shape)
                if trans1d != -1:
                    ax = list(range(ndmin))
                    x = _m.permute_dims(x, tuple(ax[:k1] + ax[k2:] + ax[k1:k2]))
            parts.append(x)
        if not parts:
            return _A(np.zeros((0,), np.float32))
        parts = [atleast_1d(p) for p in parts]
        return concatenate(parts, axis=axis)


r_ = _Concat(0, 1, -1)
c_ = _Concat(-1, 2, 0)


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Open mesh of 1-D index arrays, as np.ix_: x[pm.ix_(rows, cols)] is the cross product
    of rows and columns. Boolean arrays stand for their nonzero positions.

    Examples:
        >>> i, j = pm.ix_(pm.asarray([0, 2]), pm.asarray([1, 3, 4]))
        >>> i.shape, j.shape
        ((2, 1), (1, 3))
    """
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        x = _A(a) if not (isinstance(a, (list, tuple)) and len(a) == 0) else _A(np.zeros(0, np.int64))
        if x.ndim != 1:
            raise ValueError("ix_: cross index must be 1 dimensional, got an array of shape %r" % (x.shape,))
        if x._dtype == _dt.bool_:
            x = nonzero(x)[0]
        out.append(_m.reshape(x, (1,) * k + (x.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)


# ---- splits ----------------------------------------------------------------------------------

def _split(ary, indices_or_sections, axis, name, min_ndim):
    x = _A(ary)
    if x.ndim < min_ndim:
        raise ValueError("%s only works on arrays of %d or more dimensions, got %d" % (name, min_ndim, x.ndim))
    if isinstance(indices_or_sections, int) and indices_or_sections and x.shape[axis] % indices_or_sections:
        raise ValueError("array split does not result in an equal division: %d along axis %d into %d"
                         % (x.shape[axis], axis, indices_or_sections))
    return array_split(x, indices_or_sections, axis=axis)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along the second axis (the first for 1-D arrays), as np.hsplit: equal sections or at indices.

    Examples:
        >>> [a.tolist() for a in pm.hsplit(pm.arange(6), 3)]
        [[0, 1], [2, 3], [4, 5]]
    """
    x = _A(ary)
    return _split(x, indices_or_sections, 1 if x.ndim > 1 else 0, "hsplit", 1)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along the first axis of an array of 2 or more dimensions, as np.vsplit.

    Examples:
        >>> [a.shape for a in pm.vsplit(pm.ones((4, 2)), 2)]
        [(2, 2), (2, 2)]
    """
    return _split(ary, indices_or_sections, 0, "vsplit", 2)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along the third axis of an array of 3 or more dimensions, as np.dsplit.

    Examples:
        >>> [a.shape for a in pm.dsplit(pm.ones((1, 2, 4)), [1])]
        [(1, 2, 1), (1, 2, 3)]
    """
    return _split(ary, indices_or_sections, 2, "dsplit", 3)


# ---- type tests ------------------------------------------------------------------------------

def isposinf(x: ArrayLike, out: Array | None = None) -> Array:
    """x == +inf elementwise, as np.isposinf (complex input is refused, as NumPy does).

    Examples:
        >>> pm.isposinf(pm.asarray([1.0, float("inf"), -float("inf")]))
        Array([False,  True, False], dtype=bool)
    """
    return into(_inf(x, "isposinf", False), out)


def isneginf(x: ArrayLike, out: Array | None = None) -> Array:
    """x == -inf elementwise, as np.isneginf.

    Examples:
        >>> pm.isneginf(pm.asarray([1.0, float("inf"), -float("inf")]))
        Array([False, False,  True], dtype=bool)
    """
    return into(_inf(x, "isneginf", True), out)


def _inf(x, name, negative):
    x = _A(x)
    if x._dtype.kind == "c":
        raise TypeError("%s is not defined for complex numbers; use pm.isinf(pm.real(x))" % name)
    return _ew.logical_and(_ew.isinf(x), _ew.signbit(x) if negative else _ew.logical_not(_ew.signbit(x)))


def iscomplex(x: ArrayLike) -> Array:
    """Whether each element has a nonzero imaginary part, as np.iscomplex (False for real dtypes).

    Examples:
        >>> pm.iscomplex(pm.asarray([1 + 1j, 2 + 0j]))
        Array([ True, False], dtype=bool)
    """
    x = _A(x)
    if x._dtype.kind != "c":
        return zeros(x.shape, dtype=_dt.bool_)
    return _ew.not_equal(_ew.imag(x), 0)


def isreal(x: ArrayLike) -> Array:
    """Whether each element has a zero imaginary part, as np.isreal.

    Examples:
        >>> pm.isreal(pm.asarray([1 + 1j, 2 + 0j]))
        Array([False,  True], dtype=bool)
    """
    return _ew.logical_not(iscomplex(x))


def iscomplexobj(x: Any) -> bool:
    """Whether x is of a complex dtype (whatever its values), as np.iscomplexobj.

    Examples:
        >>> pm.iscomplexobj(pm.asarray([1.0])), pm.iscomplexobj(pm.asarray([1j]))
        (False, True)
    """
    dt = getattr(x, "dtype", None)
    return bool(np.issubdtype(dt if isinstance(dt, np.dtype) else np.asarray(x).dtype, np.complexfloating))


def isrealobj(x: Any) -> bool:
    """Not iscomplexobj(x), as np.isrealobj.

    Examples:
        >>> pm.isrealobj(pm.asarray([1.0]))
        True
    """
    return not iscomplexobj(x)


def common_type(*arrays: Any) -> type:
    """The scalar type of NumPy's common floating type of the arrays, as np.common_type
    (NumPy's rule: integers count as float64).

    Examples:
        >>> pm.common_type(pm.asarray([1.0], dtype=pm.float32))
        <class 'numpy.float32'>
    """
    return np.common_type(*[np.empty(0, a.dtype) if isinstance(a, Array) else a for a in arrays])


def min_scalar_type(a: Any, /) -> np.dtype:
    """The smallest dtype holding `a`, as np.min_scalar_type (an array's own dtype for arrays).

    Examples:
        >>> pm.min_scalar_type(10)
        dtype('uint8')
    """
    return a.dtype if isinstance(a, Array) and a.ndim else np.min_scalar_type(a.item() if isinstance(a, Array) else a)


def may_share_memory(a: Any, b: Any, /, max_work: int | None = None) -> bool:
    """Whether two pymetal arrays may share memory (by their address ranges), as np.may_share_memory.

    Examples:
        >>> x = pm.arange(10)
        >>> pm.may_share_memory(x[:5], x[3:]), pm.may_share_memory(x, pm.arange(10))
        (True, False)
    """
    if isinstance(a, Array) and isinstance(b, Array):
        return bool(may_overlap(a, b))
    # A pymetal array and a NumPy one: NumPy's test on the pymetal array's zero-copy view of its
    # memory (passing the pymetal array would dispatch back here, forever)
    view = lambda x: x.numpy() if isinstance(x, Array) else x  # noqa: E731
    return bool(np.may_share_memory(view(a), view(b)))


def shares_memory(a: Any, b: Any, /, max_work: int | None = None) -> bool:
    """Whether two arrays share memory, exactly, as np.shares_memory: NumPy's solver on views of
    the same addresses (interleaved strided views such as x[::2] and x[1::2] share none).

    Examples:
        >>> x = pm.arange(10)
        >>> pm.shares_memory(x[:5], x[5:]), pm.shares_memory(x[::2], x[1::2]), pm.shares_memory(x[::2], x[4:])
        (False, False, True)
    """
    if not may_share_memory(a, b):
        return False
    # only the addresses matter: views of the memory without waiting for the device's work on it
    view = lambda x: _small_view(x) if isinstance(x, Array) else x  # noqa: E731
    return bool(np.shares_memory(view(a), view(b), max_work=max_work))  # type: ignore[arg-type]  # (NumPy's stub: -1 or 0)


# ---- selection and in-place writes -----------------------------------------------------------

def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None) -> Array:
    """Differences of consecutive elements of the flattened array, with values before and after,
    as np.ediff1d (the result has ary's dtype).

    Examples:
        >>> pm.ediff1d(pm.asarray([1, 2, 4, 7]), to_begin=0)
        Array([0, 1, 2, 3], dtype=int64)
    """
    x = ravel(_A(ary))
    parts = [_ew.subtract(x[1:], x[:-1])]
    for v, before in ((to_begin, True), (to_end, False)):
        if v is None:
            continue
        v = ravel(_A(v))
        if not np.can_cast(v._dtype, x._dtype, "same_kind"):
            raise TypeError("ediff1d: dtype of to_%s (%s) must be compatible with the input's (%s)"
                            % ("begin" if before else "end", v._dtype, x._dtype))
        v = _ew.astype(v, x._dtype)
        parts = [v] + parts if before else parts + [v]
    return _m.concat([_ew.astype(p, x._dtype) for p in parts])


def extract(condition: ArrayLike, arr: ArrayLike) -> Array:
    """The elements of the flattened arr where the flattened condition is nonzero, as np.extract.

    Examples:
        >>> pm.extract(pm.asarray([[True, False], [False, True]]), pm.asarray([[1, 2], [3, 4]]))
        Array([1, 4], dtype=int64)
    """
    return take(ravel(_A(arr)), flatnonzero(condition))


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, out: Array | None = None) -> Array:
    """The slices of a along axis where the 1-D condition is True, as np.compress (the flattened
    array for axis=None; a shorter condition leaves out the rest).

    Examples:
        >>> pm.compress(pm.asarray([False, True]), pm.asarray([[1, 2], [3, 4]]), axis=0)
        Array([[3, 4]], dtype=int64)
    """
    c = _A(condition)
    if c.ndim != 1:
        raise ValueError("compress: condition must be a 1-d array, got shape %r" % (c.shape,))
    x = _A(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, x.ndim)
    idx = flatnonzero(c)
    if idx.shape[0] and int(idx[-1]) >= x.shape[axis]:
        raise IndexError("compress: condition has a True at %d, out of bounds for axis %d of size %d"
                         % (int(idx[-1]), axis, x.shape[axis]))
    return into(take(x, idx, axis=axis), out)


def _cycled(values, n, dtype):
    """values flattened and repeated to n elements (NumPy's rule for put, place, putmask)."""
    v = ravel(_A(values))
    return _ew.astype(resize(v, (n,)), dtype) if n else _ew.astype(v[:0], dtype)


def _target(a, name):
    if not isinstance(a, Array):
        raise TypeError("%s: the target must be a pymetal Array (it is written in place), got %s"
                        % (name, type(a).__name__))
    return a


def put(a: Array, ind: ArrayLike, v: ArrayLike, mode: str = "raise") -> None:
    """a.flat[ind] = v in place, values cycled, as np.put (mode 'raise', 'wrap' or 'clip').

    Examples:
        >>> x = pm.zeros(5, dtype=pm.int32)
        >>> pm.put(x, [0, 2], [7, 8])
        >>> x
        Array([7, 0, 8, 0, 0], dtype=int32)
    """
    a = _target(a, "put")
    i = ravel(_ew.astype(_A(ind), _dt.int64))
    n = a.size
    if mode == "wrap":
        i = _ew.remainder(i, n) if n else i
    elif mode == "clip":
        i = _ew.clip(i, 0, n - 1) if n else i
    elif mode != "raise":
        raise ValueError("put: mode must be 'raise', 'wrap' or 'clip', got %r" % (mode,))
    if not i.shape[0]:
        return
    if not n or mode == "raise" and (int(_min(i)) < -n or int(_max(i)) >= n):
        raise IndexError("put: index out of bounds for an array of size %d" % n)
    if mode == "raise":
        i = where(_ew.less(i, 0), _ew.add(i, n), i)
    vals = _A(v)
    if not vals.size:
        return
    a[tuple(_unravel(i, a.shape))] = _cycled(vals, i.shape[0], a.dtype)


def _unravel(i, shape):
    out = []
    for d in reversed(shape):
        out.append(_ew.remainder(i, d))
        i = _ew.floor_divide(i, d)
    return out[::-1]


def putmask(a: Array, mask: ArrayLike, values: ArrayLike) -> None:
    """a[k] = values[k] where mask[k], in place, values cycled over a's flat positions, as np.putmask.

    Examples:
        >>> x = pm.arange(4)
        >>> pm.putmask(x, x > 1, pm.asarray([10, 20]))
        >>> x
        Array([ 0,  1, 10, 20], dtype=int64)
    """
    a = _target(a, "putmask")
    m = _A(mask)
    if m.shape != a.shape:
        raise ValueError("putmask: mask and data must be the same size, got %r and %r" % (m.shape, a.shape))
    v = _A(values)
    if not a.size:
        return
    if not v.size:
        raise ValueError("putmask: cannot put from an empty array of values")
    a[...] = where(m, reshape(_cycled(v, a.size, a.dtype), a.shape), a)


def place(arr: Array, mask: ArrayLike, vals: ArrayLike) -> None:
    """arr[mask] = the first N of vals (cycled), N the number of True in mask, in place, as np.place.

    Examples:
        >>> x = pm.arange(5)
        >>> pm.place(x, x > 2, [9])
        >>> x
        Array([0, 1, 2, 9, 9], dtype=int64)
    """
    a = _target(arr, "place")
    m = _ew.astype(_A(mask), _dt.bool_)
    if m.size != a.size:
        raise ValueError("place: mask and data must be the same size, got %d and %d" % (m.size, a.size))
    m = reshape(m, a.shape)
    n = int(_sum(m))
    v = _A(vals)
    if n and not v.size:
        raise ValueError("place: cannot insert from an empty array")
    if n:
        a[m] = _cycled(v, n, a.dtype)


_wherefn = where  # copyto's parameter `where` hides the function


def copyto(dst: Array, src: ArrayLike, casting: str = "same_kind", where: ArrayLike = True) -> None:
    """dst[...] = src (broadcast) where `where`, in place, with NumPy's casting check, as np.copyto.

    Examples:
        >>> x = pm.zeros(3)
        >>> pm.copyto(x, pm.asarray([1.0, 2.0, 3.0]), where=pm.asarray([True, False, True]))
        >>> x
        Array([1., 0., 3.], dtype=float32)
    """
    d = _target(dst, "copyto")
    s = _A(src)
    # NumPy's own casting check (its errors, its rule for Python scalars, its check of `casting`) on 0-d arrays
    np.copyto(np.empty((), d.dtype), src if isinstance(src, (bool, int, float, complex)) else np.empty((), s.dtype),
              casting=casting)  # type: ignore[arg-type]
    if isinstance(src, (bool, int, float, complex)):
        s = _ew.astype(s, d.dtype)
    if where is True:
        d[...] = s
    else:
        d[...] = _ew.astype(_wherefn(_A(where), s, d), d.dtype)



def choose(a: ArrayLike, choices: Any, out: Array | None = None, mode: str = "raise") -> Array:
    """Elementwise choices[a], as np.choose: a's values pick among the (broadcast) choices; mode
    'raise' refuses values outside [0, n), 'wrap' takes them modulo n, 'clip' clips them.

    Examples:
        >>> pm.choose(pm.asarray([0, 1, 0]), [pm.asarray([1, 2, 3]), pm.asarray([10, 20, 30])])
        Array([ 1, 20,  3], dtype=int64)
    """
    idx = _A(a)
    raw = list(choices)
    cs = [_A(c) for c in raw]
    n = len(cs)
    if not n:
        raise ValueError("choose: needs at least one choice")
    if idx._dtype.kind not in "biu":
        raise TypeError("choose: the index array must be of an integer dtype, got %s" % idx.dtype)
    if mode == "wrap":
        idx = _ew.remainder(idx, n)
    elif mode == "clip":
        idx = _ew.clip(idx, 0, n - 1)
    elif mode != "raise":
        raise ValueError("choose: mode must be 'raise', 'wrap' or 'clip', got %r" % (mode,))
    elif idx.size and (int(_min(idx)) < 0 or int(_max(idx)) >= n):
        raise ValueError("choose: invalid entry in choice array (values must be in [0, %d))" % n)
    # NumPy 2's promotion, Python scalars weak (pm.choose(i, [x, 0]) keeps x's dtype)
    dt = _dt.result_type(*[r if isinstance(r, (bool, int, float, complex)) else c.dtype for r, c in zip(raw, cs)])
    res = _ew.astype(_m.broadcast_to(cs[0], np.broadcast_shapes(idx.shape, *[c.shape for c in cs])), dt)
    for k in range(1, n):
        res = where(_ew.equal(idx, k), cs[k], res)
    return into(_ew.astype(res, dt) if res.dtype != dt else res, out)


def trim_zeros(filt: ArrayLike, trim: str = "fb") -> Array:
    """The 1-D array without its leading ('f') and/or trailing ('b') zeros, as np.trim_zeros.

    Examples:
        >>> pm.trim_zeros(pm.asarray([0, 0, 1, 2, 0]))
        Array([1, 2], dtype=int64)
    """
    x = _A(filt)
    if x.ndim != 1:
        raise ValueError("trim_zeros: needs a 1-D array, got shape %r" % (x.shape,))
    t = trim.lower()
    if not set(t) <= {"f", "b"}:
        raise ValueError("trim_zeros: trim must contain only 'f' and 'b', got %r" % (trim,))
    nz = flatnonzero(x)
    if not nz.shape[0]:
        return x[:0]
    first = int(nz[0]) if "f" in t else 0
    last = int(nz[-1]) + 1 if "b" in t else x.shape[0]
    return x[first:last]


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of a 1-D array (columns x**(N-1) ... x**0, or increasing), as np.vander.
    NumPy's dtype (x's promoted with int64; float32 for its float64).

    Examples:
        >>> pm.vander(pm.asarray([1, 2, 3]), 3)
        Array([[1, 1, 1],
               [4, 2, 1],
               [9, 3, 1]], dtype=int64)
    """
    v = _A(x)
    if v.ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array or sequence, got shape %r" % (v.shape,))
    n = v.shape[0] if N is None else N
    if n < 0:
        raise ValueError("vander: N must be non-negative, got %d" % n)
    dt = np.promote_types(v.dtype, np.int64)
    dt = {np.dtype(np.float64): _dt.float32, np.dtype(np.complex128): _dt.complex64}.get(dt, dt)
    powers = arange(n, dtype=_dt.int64)
    if not increasing:
        powers = _ew.subtract(n - 1, powers)
    base = _ew.astype(v, dt)
    return _ew.pow(_m.reshape(base, (v.shape[0], 1)), _ew.astype(powers, dt))


def sort_complex(a: ArrayLike) -> Array:
    """Sorted by real part, then imaginary part, as np.sort_complex; real input is returned as
    complex64 (NumPy's complex128 is not a device type).

    Examples:
        >>> pm.sort_complex(pm.asarray([3.0, 1.0, 2.0]))
        Array([1.+0.j, 2.+0.j, 3.+0.j], dtype=complex64)
    """
    x = _A(a)
    return sort(x if x._dtype.kind == "c" else _ew.astype(x, _dt.complex64))


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """The view with `axis` rolled back to before position `start`, as np.rollaxis (prefer moveaxis).

    Examples:
        >>> pm.rollaxis(pm.ones((3, 4, 5)), 2).shape
        (5, 3, 4)
    """
    x = _A(a)
    n = x.ndim
    axis = normalize_axis(axis, n)
    if not -n <= start <= n:
        raise np.exceptions.AxisError("rollaxis: start %d is out of bounds for an array of %d dimensions"
                                      % (start, n))
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return x[...]
    return _m.moveaxis(x, axis, start)


# ---- calling the user's functions ------------------------------------------------------------

def apply_along_axis(func1d: Callable, axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Array:
    """func1d(1-D slice, *args, **kwargs) for every 1-D slice of arr along axis, results stacked
    where that axis was, as np.apply_along_axis. func1d gets pymetal arrays.

    Examples:
        >>> pm.apply_along_axis(pm.sum, 1, pm.asarray([[1, 2], [3, 4]]))
        Array([3, 7], dtype=int64)
    """
    x = _A(arr)
    axis = normalize_axis(axis, x.ndim)
    inner = _m.moveaxis(x, axis, -1)
    outer = inner.shape[:-1]
    if 0 in outer:
        raise ValueError("apply_along_axis: cannot apply when any iteration dimension is 0")
    res = [_A(func1d(inner[ind], *args, **kwargs)) for ind in np.ndindex(outer)]
    stacked = _m.reshape(_m.stack(res), outer + res[0].shape)
    k = res[0].ndim
    m = len(outer)
    perm = tuple(range(axis)) + tuple(range(m, m + k)) + tuple(range(axis, m))
    return _m.permute_dims(stacked, perm)


class vectorize:
    """NumPy's vectorize over pymetal arrays: pyfunc is called on each element (Python scalars,
    as np.vectorize does, on the host), the results are pymetal arrays.

    Examples:
        >>> f = pm.vectorize(lambda a, b: a - b if a > b else a + b)
        >>> f(pm.asarray([1, 4]), 2)
        Array([3, 2], dtype=int64)
    """

    def __init__(self, pyfunc: Callable, otypes: Any = None, doc: str | None = None, excluded: Any = None,
                 cache: bool = False, signature: str | None = None) -> None:
        self._np = np.vectorize(pyfunc, otypes=otypes, doc=doc, excluded=excluded, cache=cache, signature=signature)
        self.__doc__ = self._np.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """f(*arrays): the function over the broadcast elements.

        Examples:
            >>> pm.vectorize(abs)(pm.asarray([-1, 2]))
            Array([1, 2], dtype=int64)
        """
        host = lambda v: v.numpy() if isinstance(v, Array) else v  # noqa: E731
        r = self._np(*[host(v) for v in args], **{k: host(v) for k, v in kwargs.items()})
        return tuple(_to_device(v) for v in r) if isinstance(r, tuple) else _to_device(r)


def broadcast(*arrays: Any) -> Any:
    """NumPy's broadcast object of the arrays' values: .shape, .ndim, .size, .numiter, and
    iteration over tuples of the broadcast elements (on the host, as NumPy scalars).

    Examples:
        >>> b = pm.broadcast(pm.ones((3, 1)), pm.arange(4))
        >>> b.shape, b.size
        ((3, 4), 12)
    """
    return np.broadcast(*[a.numpy() if isinstance(a, Array) else a for a in arrays])


def frompyfunc(func: Callable, nin: int, nout: int, *, identity: Any = None) -> Callable:
    """NumPy's frompyfunc: func called on each element (Python scalars, on the host). pymetal has
    no object arrays, so the results are arrays of numbers (their dtype inferred from the values,
    float32 for Python floats): func must return numbers. The ufunc methods (.reduce, .at, ...)
    are not there: use the NumPy ufunc (numpy.frompyfunc) on x.numpy().

    Examples:
        >>> pm.frompyfunc(lambda a, b: a * b, 2, 1)(pm.arange(3), 2)
        Array([0, 2, 4], dtype=int64)
    """
    uf = np.frompyfunc(func, nin, nout, identity=identity)  # NumPy checks nin and nout
    host = lambda v: v.numpy() if isinstance(v, Array) else v  # noqa: E731

    def numbers(r):
        a = np.array(np.asarray(r, dtype=object).tolist())  # NumPy's object result as numbers
        if a.dtype.kind not in "biufc":
            raise TypeError("frompyfunc: %s returned %s values; pymetal arrays hold numbers (no object arrays): "
                            "call numpy.frompyfunc on NumPy arrays (x.numpy())" % (getattr(func, "__name__", "func"), a.dtype))
        return _to_device(a)

    def call(*args: Any, **kwargs: Any) -> Any:
        r = uf(*[host(v) for v in args], **{k: host(v) for k, v in kwargs.items()})
        return tuple(numbers(v) for v in r) if nout > 1 else numbers(r)
    call.__name__ = call.__qualname__ = uf.__name__
    call.__doc__ = uf.__doc__
    return call


def _to_device(r):
    r = np.asarray(r)
    if r.dtype == np.float64:
        r = r.astype(np.float32)
    elif r.dtype == np.complex128:
        r = r.astype(np.complex64)
    return _asarray(r)


def fromfunction(function: Callable, shape: Any, *, dtype: DTypeLike = float, like: Any = None, **kwargs: Any) -> Any:
    """function(*index grids), as np.fromfunction: the function gets one pymetal array of
    coordinates per axis (of dtype; float32 for float) and its result is returned.

    Examples:
        >>> pm.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int)
        Array([[ 0,  1,  2],
               [10, 11, 12]], dtype=int64)
    """
    from .creation import indices
    dt = _dt.float32 if dtype is float else dtype
    grids = indices(tuple(shape), dtype=dt)
    return function(*[grids[k] for k in range(len(tuple(shape)))], **kwargs)


# ---- construction ----------------------------------------------------------------------------

def frombuffer(buffer: Any, dtype: DTypeLike = float, count: int = -1, offset: int = 0, *, like: Any = None) -> Array:
    """A pymetal array of the buffer's bytes interpreted as dtype (copied to device memory), as
    np.frombuffer. The default dtype=float reads the bytes as NumPy does (float64) and gives
    their values as float32, pymetal's float.

    Examples:
        >>> pm.frombuffer(bytes([1, 2, 3]), dtype=pm.uint8)
        Array([1, 2, 3], dtype=uint8)
    """
    host = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return _asarray(host.astype(_dt.float32) if dtype is float else host.copy())


def fromiter(iter: Any, dtype: DTypeLike, count: int = -1, *, like: Any = None) -> Array:
    """A 1-D pymetal array of the iterable's values, as np.fromiter.

    Examples:
        >>> pm.fromiter((i * i for i in range(4)), dtype=pm.int32)
        Array([0, 1, 4, 9], dtype=int32)
    """
    dt = _dt.float32 if dtype is float else dtype
    return _asarray(np.fromiter(iter, dtype=dt, count=count))


def asanyarray(a: Any, dtype: DTypeLike = None, order: str | None = None, *, like: Any = None) -> Array:
    """pm.asarray (pymetal has no array subclasses), as np.asanyarray.

    Examples:
        >>> pm.asanyarray([1, 2])
        Array([1, 2], dtype=int64)
    """
    return _asarray(a, dtype=dtype)


def asarray_chkfinite(a: Any, dtype: DTypeLike = None, order: str | None = None) -> Array:
    """pm.asarray, raising ValueError if the array holds infs or NaNs, as np.asarray_chkfinite.

    Examples:
        >>> pm.asarray_chkfinite([1.0, 2.0])
        Array([1., 2.], dtype=float32)
    """
    x = _asarray(a, dtype=dtype)
    if x._dtype.kind in "fc" and x.size and not bool(_all(_ew.isfinite(x))):
        raise ValueError("array must not contain infs or NaNs")
    return x


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """The indices of the main diagonal of an n-d array with all dimensions equal, as np.diag_indices_from.

    Examples:
        >>> pm.diag_indices_from(pm.ones((2, 2)))
        (Array([0, 1], dtype=int64), Array([0, 1], dtype=int64))
    """
    x = _A(arr)
    if x.ndim < 2:
        raise ValueError("diag_indices_from: input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("diag_indices_from: all dimensions of input must be of equal length, got %r" % (x.shape,))
    return diag_indices(x.shape[0], x.ndim)


def mask_indices(n: int, mask_func: Callable, k: int = 0) -> tuple[Array, ...]:
    """The indices where mask_func(ones((n, n)), k) is nonzero, as np.mask_indices (pm.triu, pm.tril).

    Examples:
        >>> pm.mask_indices(2, pm.triu)
        (Array([0, 0, 1], dtype=int64), Array([0, 1, 1], dtype=int64))
    """
    m = mask_func(ones((n, n), dtype=_dt.int64), k)
    return tuple(nonzero(_ew.not_equal(_A(m), 0)))


# ---- windows ---------------------------------------------------------------------------------

def _window(M, name):
    """M as an int (NumPy accepts integral floats), and the window of M < 2 points, if it is that."""
    if not isinstance(M, (int, np.integer)) and not float(M).is_integer():
        raise TypeError("%s: M must be an integer, got %r" % (name, M))
    M = int(M)
    return M, (zeros((0,), dtype=_dt.float32) if M < 1 else ones((1,), dtype=_dt.float32) if M == 1 else None)


def _cosine_window(M, coefs, name):
    """sum_j coefs[j] cos(2 pi j n / (M - 1)) over n = 0..M-1 (NumPy's generalized cosine windows)."""
    M, small = _window(M, name)
    if small is not None:
        return small
    t = _ew.multiply(arange(M, dtype=_dt.float32), 2 * np.pi / (M - 1))
    w = _ew.multiply(_ew.cos(t), coefs[1])
    for j in range(2, len(coefs)):
        w = _ew.add(w, _ew.multiply(_ew.cos(_ew.multiply(t, float(j))), coefs[j]))
    return _ew.add(w, coefs[0])


def hamming(M: int) -> Array:
    """The Hamming window of M points, 0.54 - 0.46 cos(2 pi n / (M - 1)), as np.hamming (float32).

    Examples:
        >>> pm.hamming(3).round(2)
        Array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _cosine_window(M, (0.54, -0.46), "hamming")


def hanning(M: int) -> Array:
    """The Hann window of M points, 0.5 - 0.5 cos(2 pi n / (M - 1)), as np.hanning (float32).

    Examples:
        >>> pm.hanning(3)
        Array([0., 1., 0.], dtype=float32)
    """
    return _cosine_window(M, (0.5, -0.5), "hanning")


def blackman(M: int) -> Array:
    """The Blackman window of M points, as np.blackman (float32).

    Examples:
        >>> pm.blackman(3).shape
        (3,)
    """
    return _cosine_window(M, (0.42, -0.5, 0.08), "blackman")


def bartlett(M: int) -> Array:
    """The triangular Bartlett window of M points, as np.bartlett (float32).

    Examples:
        >>> pm.bartlett(5)
        Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    M, small = _window(M, "bartlett")
    if small is not None:
        return small
    n = arange(M, dtype=_dt.float32)
    half = (M - 1) / 2.0
    # 1 - |n - (M-1)/2| / ((M-1)/2): NumPy's two halves in one expression
    return _ew.subtract(1.0, _ew.divide(_ew.abs(_ew.subtract(n, half)), half))


# ---- vectors and matrices, bits --------------------------------------------------------------

def matvec(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """Matrix-vector products over the last axes (stacks broadcast), as np.matvec.

    Examples:
        >>> pm.matvec(pm.asarray([[1, 2], [3, 4]]), pm.asarray([1, 1]))
        Array([3, 7], dtype=int64)
    """
    a, v = _A(x1), _A(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("matvec: needs a matrix (ndim >= 2) and a vector (ndim >= 1), got %d and %d dimensions"
                         % (a.ndim, v.ndim))
    return into(matmul(a, _m.expand_dims(v, axis=-1))[..., 0], out)


def vecmat(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """Vector-matrix products over the last axes (the vector conjugated), as np.vecmat.

    Examples:
        >>> pm.vecmat(pm.asarray([1, 1]), pm.asarray([[1, 2], [3, 4]]))
        Array([4, 6], dtype=int64)
    """
    v, a = _A(x1), _A(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("vecmat: needs a vector (ndim >= 1) and a matrix (ndim >= 2), got %d and %d dimensions"
                         % (v.ndim, a.ndim))
    if v._dtype.kind == "c":
        v = _ew.conj(v)
    return into(matmul(_m.expand_dims(v, axis=-2), a)[..., 0, :], out)


def _bits_layout(x, axis, bitorder, name):
    """x with the bit axis last (flattened for axis=None), that axis, and each bit's shift in a byte."""
    if bitorder not in ("big", "little"):
        raise ValueError("%s: bitorder must be 'big' or 'little', got %r" % (name, bitorder))
    if axis is None:
        x, axis = ravel(x), 0
    axis = normalize_axis(axis, x.ndim)
    shifts = arange(7, -1, -1, dtype=_dt.uint8) if bitorder == "big" else arange(8, dtype=_dt.uint8)
    return _m.moveaxis(x, axis, -1), axis, shifts


def packbits(a: ArrayLike, /, axis: int | None = None, bitorder: str = "big") -> Array:
    """The nonzero-ness of a's elements packed 8 to a uint8 along axis (flattened for None),
    zero-padded, as np.packbits.

    Examples:
        >>> pm.packbits(pm.asarray([1, 0, 1, 0, 0, 0, 0, 1]))
        Array([161], dtype=uint8)
    """
    x = _A(a)
    if x._dtype.kind not in "biu":
        raise TypeError("packbits: expected an input array of integer or boolean data type, got %s" % x.dtype)
    x, axis, shifts = _bits_layout(_ew.astype(_ew.not_equal(x, 0), _dt.uint8), axis, bitorder, "packbits")
    n = x.shape[-1]
    pad = -n % 8
    if pad:
        x = _m.concat([x, zeros(x.shape[:-1] + (pad,), dtype=_dt.uint8)], axis=-1)
    x = _m.reshape(x, x.shape[:-1] + ((n + pad) // 8, 8))
    packed = _sum(_ew.bitwise_left_shift(x, shifts), axis=-1, dtype=_dt.uint8)
    return _m.moveaxis(packed, -1, axis)


def unpackbits(a: ArrayLike, /, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Array:
    """The bits of a uint8 array as 0/1 uint8 elements along axis (flattened for None), as np.unpackbits;
    count keeps that many (negative: drops that many).

    Examples:
        >>> pm.unpackbits(pm.asarray([161], dtype=pm.uint8))
        Array([1, 0, 1, 0, 0, 0, 0, 1], dtype=uint8)
    """
    x = _A(a)
    if x._dtype != _dt.uint8:
        raise TypeError("unpackbits: expected an input array of unsigned byte data type, got %s" % x.dtype)
    x, axis, shifts = _bits_layout(x, axis, bitorder, "unpackbits")
    bits = _ew.bitwise_and(_ew.bitwise_right_shift(_m.expand_dims(x, axis=-1), shifts), 1)
    bits = _ew.astype(bits, _dt.uint8)
    bits = _m.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        if count < -total:
            raise ValueError("unpackbits: -count (%d) larger than the number of bits (%d)" % (-count, total))
        keep = count if count >= 0 else total + count
        if keep > total:
            bits = _m.concat([bits, zeros(bits.shape[:-1] + (keep - total,), dtype=_dt.uint8)], axis=-1)
        bits = bits[..., :keep]
    return _m.moveaxis(bits, -1, axis)


# ---- special functions, bits -----------------------------------------------------------------

def _chbevl(x, coefs):
    """Clenshaw's sum of a Chebyshev series at x (Cephes' chbevl, as NumPy's i0 uses)."""
    b0 = b1 = b2 = _ew.multiply(x, 0.0)
    for c in coefs:
        b2, b1 = b1, b0
        b0 = _ew.add(_ew.subtract(_ew.multiply(x, b1), b2), float(c))
    return _ew.multiply(_ew.subtract(b0, b2), 0.5)


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind, order 0, elementwise, as np.i0 (NumPy's
    Chebyshev series, in float32).

    Examples:
        >>> pm.i0(pm.asarray([0.0, 1.0])).round(4)
        Array([1.    , 1.2661], dtype=float32)
    """
    from numpy.lib import _function_base_impl as _npf  # NumPy's coefficient tables (Cephes)
    v = _A(x)
    if v._dtype.kind == "c":
        raise TypeError("i0 is not supported for complex values")
    v = _ew.abs(_ew.astype(v, _dt.float32) if v._dtype.kind != "f" else v)
    small = _ew.multiply(_ew.exp(v), _chbevl(_ew.subtract(_ew.multiply(v, 0.5), 2.0), getattr(_npf, "_i0A")))
    big = _ew.divide(_ew.multiply(_ew.exp(v), _chbevl(_ew.subtract(_ew.divide(32.0, v), 2.0), getattr(_npf, "_i0B"))),
                     _ew.sqrt(v))
    return where(_ew.less_equal(v, 8.0), small, big)


def kaiser(M: int, beta: float) -> Array:
    """The Kaiser window of M points with shape parameter beta, as np.kaiser (float32).

    Examples:
        >>> pm.kaiser(3, 0.0)
        Array([1., 1., 1.], dtype=float32)
    """
    M, small = _window(M, "kaiser")
    if small is not None:
        return small
    alpha = (M - 1) / 2.0
    r = _ew.divide(_ew.subtract(arange(M, dtype=_dt.float32), alpha), alpha)
    arg = _ew.multiply(_ew.sqrt(_ew.clip(_ew.subtract(1.0, _ew.multiply(r, r)), 0.0, None)), float(beta))
    # the same float32 series for the peak as for the points: the middle point is exactly 1
    return _ew.divide(i0(arg), i0(_asarray([float(beta)], dtype=_dt.float32)))


def frexp(x: ArrayLike, out1: Array | None = None, out2: Array | None = None, /) -> tuple[Array, Array]:
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1, as np.frexp;
    zeros, infinities and NaNs give (x, 0). The exponent is int32.

    Examples:
        >>> m, e = pm.frexp(pm.asarray([8.0, 0.75]))
        >>> m, e
        (Array([0.5 , 0.75], dtype=float32), Array([4, 0], dtype=int32))
    """
    from .ufuncs import ldexp
    v = _A(x)
    if v._dtype.kind not in "f":
        v = _ew.astype(v, _dt.float32)
    a = _ew.abs(v)
    plain = _ew.logical_and(_ew.isfinite(v), _ew.not_equal(v, 0))
    safe = where(plain, a, 1.0)
    e = _ew.astype(_ew.add(_ew.floor(_ew.log2(_ew.astype(safe, _dt.float32))), 1.0), _dt.int32)
    # scaled by 2**-e in two halves: 2**-e itself leaves float32's range for |x| near its limits
    half = _ew.floor_divide(e, 2)
    m = ldexp(ldexp(where(plain, v, 1.0), _ew.negative(half)), _ew.subtract(half, e))
    # log2 rounds near powers of two: one step of correction puts |m| in [0.5, 1)
    am = _ew.abs(m)
    up, down = _ew.greater_equal(am, 1.0), _ew.less(am, 0.5)
    e = _ew.add(e, _ew.subtract(_ew.astype(up, _dt.int32), _ew.astype(down, _dt.int32)))
    m = where(up, _ew.multiply(m, 0.5), where(down, _ew.multiply(m, 2.0), m))
    m = _ew.astype(where(plain, m, v), v._dtype)
    return into(m, out1), into(_ew.astype(where(plain, e, 0), _dt.int32), out2)


def bitwise_count(x: ArrayLike, /, out: Array | None = None) -> Array:
    """The number of 1 bits in the absolute value of each integer, as np.bitwise_count (uint8).

    Examples:
        >>> pm.bitwise_count(pm.asarray([0, 7, -8, 255]))
        Array([0, 3, 1, 8], dtype=uint8)
    """
    v = _A(x)
    if v._dtype.kind not in "biu":
        raise TypeError("bitwise_count: needs an integer or boolean array, got %s" % v.dtype)
    if v._dtype.kind == "i":
        # NumPy counts the bits of |x|; |minimum| wraps to itself, read as the unsigned type of its size
        v = _ew.astype(_ew.abs(v), np.dtype("u%d" % v._dtype.itemsize))
    u = _ew.astype(v, _dt.uint64)
    # the classic SWAR population count on 64-bit words
    u = _ew.subtract(u, _ew.bitwise_and(_ew.bitwise_right_shift(u, 1), 0x5555555555555555))
    u = _ew.add(_ew.bitwise_and(u, 0x3333333333333333), _ew.bitwise_and(_ew.bitwise_right_shift(u, 2), 0x3333333333333333))
    u = _ew.bitwise_and(_ew.add(u, _ew.bitwise_right_shift(u, 4)), 0x0F0F0F0F0F0F0F0F)
    u = _ew.bitwise_right_shift(_ew.multiply(u, 0x0101010101010101), 56)
    return into(_ew.astype(u, _dt.uint8), out)


# ---- more construction and layout ------------------------------------------------------------

def _is_f_contiguous(x):
    step = x._dtype.itemsize
    for n, s in zip(x._shape, x._strides):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def isfortran(a: Array) -> bool:
    """Whether a is Fortran-contiguous and not C-contiguous, as np.isfortran.

    Examples:
        >>> x = pm.ones((2, 3))
        >>> pm.isfortran(x), pm.isfortran(x.T)
        (False, True)
    """
    x = _A(a)
    return _is_f_contiguous(x) and not x.is_contiguous


def asfortranarray(a: Any, dtype: DTypeLike = None, *, like: Any = None) -> Array:
    """An array (ndim >= 1) laid out in Fortran order (a copy unless it is already), as np.asfortranarray.

    Examples:
        >>> pm.asfortranarray(pm.ones((2, 3))).T.is_contiguous
        True
    """
    x = atleast_1d(_asarray(a, dtype=dtype))
    if _is_f_contiguous(x):
        return x
    t = _m.permute_dims(x, tuple(range(x.ndim))[::-1])
    return _m.permute_dims(_copy(t), tuple(range(x.ndim))[::-1])


def require(a: Any, dtype: DTypeLike = None, requirements: Any = None, *, like: Any = None) -> Array:
    """a as a pymetal array of dtype meeting the requirements ('C', 'F', 'A', 'W', 'O', 'E' and their
    long names), copying only when needed, as np.require.

    Examples:
        >>> pm.require(pm.ones((2, 3)).T, requirements="C").is_contiguous
        True
    """
    names = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
             "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O", "OWNDATA": "O",
             "E": "E", "ENSUREARRAY": "E"}
    reqs = set()
    for r in ([requirements] if isinstance(requirements, str) else requirements or ()):
        if r.upper() not in names:
            raise KeyError("require: unknown requirement %r (use C, F, A, W, O or E)" % (r,))
        reqs.add(names[r.upper()])
    if {"C", "F"} <= reqs:
        raise ValueError("require: cannot specify both 'C' and 'F' order")
    x = _asarray(a, dtype=dtype)
    fresh = x is not a
    if ("W" in reqs and x._ro) or ("O" in reqs and not fresh) or ("C" in reqs and not x.is_contiguous):
        x, fresh = _copy(x), True
    return asfortranarray(x) if "F" in reqs else x


def apply_over_axes(func: Callable, a: ArrayLike, axes: Any) -> Array:
    """func(a, axis) applied for each axis in turn, keeping a's number of dimensions (a reduced
    axis is kept with size 1), as np.apply_over_axes.

    Examples:
        >>> pm.apply_over_axes(pm.sum, pm.ones((2, 3)), [0, 1])
        Array([[6.]], dtype=float32)
    """
    x = _A(a)
    for axis in ([axes] if isinstance(axes, int) else axes):
        axis = axis + x.ndim if axis < 0 else axis
        res = _A(func(x, axis))
        if res.ndim == x.ndim - 1:
            res = _m.expand_dims(res, axis=axis)
        elif res.ndim != x.ndim:
            raise ValueError("apply_over_axes: function is not returning an array of the correct shape")
        x = res
    return x


def in1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, invert: bool = False, *,
         kind: str | None = None) -> Array:
    """Whether each element of the flattened ar1 is in ar2 (NumPy's in1d, removed in NumPy 2.4:
    pm.isin(ravel(ar1), ar2)).

    Examples:
        >>> pm.in1d(pm.asarray([[1, 2], [3, 4]]), pm.asarray([2, 4]))
        Array([False,  True, False,  True], dtype=bool)
    """
    return isin(ravel(_A(ar1)), ar2, invert=invert)


def piecewise(x: ArrayLike, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Array:
    """x's shape and dtype filled piece by piece, as np.piecewise: where condlist[k], funclist[k]
    (a value, or a function called on x[condlist[k]]); one extra function is the "otherwise"
    piece. Later pieces win where conditions overlap; elsewhere 0.

    Examples:
        >>> x = pm.asarray([-2.0, 0.5, 3.0])
        >>> pm.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2])
        Array([2., 1., 6.], dtype=float32)
    """
    v = _A(x)
    # NumPy's rule: one condition unless condlist is a sequence of arrays (or lists), so a 2-D
    # boolean array is a list of row conditions, as NumPy reads it
    if v.ndim and (not isinstance(condlist, (list, tuple, Array, np.ndarray)) or
                   (condlist.ndim <= 1 if isinstance(condlist, (Array, np.ndarray)) else
                    not isinstance(condlist[0], (list, Array, np.ndarray)))):
        condlist = [condlist]
    elif not v.ndim and not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    conds = [_m.broadcast_to(_ew.astype(_A(c), _dt.bool_), v.shape) for c in condlist]
    if len(conds) == len(funclist) - 1:
        rest = conds[0]
        for c in conds[1:]:
            rest = _ew.logical_or(rest, c)
        conds.append(_ew.logical_not(rest))
    elif len(conds) != len(funclist):
        raise ValueError("piecewise: with %d condition(s), either %d or %d functions are expected, got %d"
                         % (len(conds), len(conds), len(conds) + 1, len(funclist)))
    y = zeros(v.shape, dtype=v.dtype)
    for cond, func in zip(conds, funclist):
        if not callable(func):
            y = _ew.astype(where(cond, func, y), v.dtype)
        elif int(_sum(cond)):
            y[cond] = _ew.astype(_A(func(v[cond], *args, **kw)), v.dtype)
    return y


# ---- multidimensional histograms -------------------------------------------------------------

def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: bool | None = None,
                weights: ArrayLike | None = None) -> tuple[Array, list[Array]]:
    """(counts, per-dimension edges) of N points in D dimensions (an (N, D) array, or a sequence
    of D arrays), as np.histogramdd: bins an int, D ints or D edge arrays; the last bin of each
    dimension includes its right edge. Counts are float32 (NumPy's float64), edges float32.

    Examples:
        >>> h, (ex, ey) = pm.histogramdd(pm.asarray([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
        >>> h
        Array([[1., 0.],
               [1., 1.]], dtype=float32)
    """
    from .stats import histogram, _segment_sums
    from .functions import ravel_multi_index
    if isinstance(sample, (list, tuple)):
        pts = _m.stack([ravel(_A(s)) for s in sample], axis=1)
    else:
        pts = atleast_2d_points(_A(sample))
    n, d = pts.shape
    if isinstance(bins, (int, np.integer)):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError("histogramdd: the dimension of bins (%d) must equal the dimension of the sample (%d)"
                         % (len(bins), d))
    ranges = [None] * d if range is None else list(range)
    if len(ranges) != d:
        raise ValueError("histogramdd: range needs one (min, max) per dimension (%d), got %d" % (d, len(ranges)))
    keep, idx, edges = None, [], []
    for k in builtins.range(d):
        col = _ew.astype(pts[:, k], _dt.float32) if pts._dtype.kind != "f" else pts[:, k]
        b = bins[k] if isinstance(bins[k], (int, np.integer)) else _A(bins[k])
        e = histogram(col, b, range=ranges[k])[1]  # the edges (and their checks), as np.histogram's
        nb = e.shape[0] - 1
        inside = _ew.logical_and(_ew.greater_equal(col, e[0]), _ew.less_equal(col, e[nb]))
        keep = inside if keep is None else _ew.logical_and(keep, inside)
        idx.append(_ew.clip(_ew.subtract(searchsorted(e, col, side="right"), 1), 0, nb - 1))
        edges.append(e)
    shape = tuple(e.shape[0] - 1 for e in edges)
    total = int(np.prod(shape))
    w = None if weights is None else _ew.astype(ravel(_A(weights)), _dt.float32)
    if w is not None and w.shape[0] != n:
        raise ValueError("histogramdd: weights must have one value per sample point (%d), got %d" % (n, w.shape[0]))
    flat = ravel_multi_index(tuple(idx), shape) if n else zeros((0,), dtype=_dt.int64)
    counts = _ew.astype(_segment_sums(flat, w, total, keep), _dt.float32)
    hist = reshape(counts, shape)
    if density:
        hist = _ew.divide(hist, _sum(hist))
        for k, e in enumerate(edges):
            widths = _ew.subtract(e[1:], e[:-1])
            hist = _ew.divide(hist, _m.reshape(widths, tuple(-1 if j == k else 1 for j in builtins.range(d))))
    return hist, edges


def atleast_2d_points(x):
    """An (N,) sample as N points in 1 dimension; (N, D) as given."""
    if x.ndim == 1:
        return _m.reshape(x, (x.shape[0], 1))
    if x.ndim != 2:
        raise ValueError("histogramdd: the sample must be an (N, D) array or a sequence of D arrays, got shape %r"
                         % (x.shape,))
    return x


def histogram2d(x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Any = None, density: bool | None = None,
                weights: ArrayLike | None = None) -> tuple[Array, Array, Array]:
    """(counts, x edges, y edges) of the points (x[i], y[i]), as np.histogram2d (histogramdd in 2-D).

    Examples:
        >>> h, ex, ey = pm.histogram2d(pm.asarray([0.0, 1.0]), pm.asarray([0.0, 1.0]), bins=2)
        >>> h
        Array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    xs, ys = _A(x), _A(y)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError("histogram2d: x and y must be 1-D arrays of the same length, got %r and %r"
                         % (xs.shape, ys.shape))
    if not isinstance(bins, (int, np.integer)) and len(bins) != 2:
        bins = [bins, bins]  # one array of edges for both
    hist, (ex, ey) = histogramdd([xs, ys], bins, range, density, weights)
    return hist, ex, ey
