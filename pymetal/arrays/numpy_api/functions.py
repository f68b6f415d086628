"""NumPy's functions on pymetal arrays (issue 23): products, creation, shapes, logic,
indices and the NumPy names of the elementwise functions.

Each runs pymetal's kernels (composed from the Array API operations), with
NumPy's names, signatures and semantics; where a standard function of the same
name exists NumPy's extra arguments are additions (``pm.tril(x, 1)``). float64
is not a device type: creation functions give float32 where NumPy gives float64.
"""

from __future__ import annotations

import builtins
import operator
import re

import numpy as np

from .. import elementwise as _ew
from .. import manipulation as _m
from .. import reduce as _r
from ... import dtypes as _dt
from ..array import _READONLY_BASE, Array, check_writeable
from ..construct import _new, asarray
from ..layout import normalize_axis, normalize_shape
from .reduce import _bin, _with_dtype, into
from ..linear_algebra import matmul as _matmul, tensordot
from ..sorting import nonzero, _compact, sort, argsort as _argsort
from ..indexing import take as _take
from ..creation import tril as _tril, ones, triu as _triu, arange
from .stats import unique
from ..namespace_extras import isin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..._typing import ArrayLike, DTypeLike

_A = _ew.as_array


# ---- products ------------------------------------------------------------------------------

def matmul(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None, *, dtype: DTypeLike = None,
           casting: str = "same_kind", order: str = "K", subok: bool = True) -> Array:
    """The standard's matmul with NumPy's ufunc keywords: out= (written and returned), dtype=.

    Examples:
        >>> a = pm.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> out = pm.empty((2, 2))
        >>> pm.matmul(a, a, out=out) is out
        True
    """
    return into(_with_dtype(_matmul(x1, x2), dtype), out)


def dot(a: ArrayLike, b: ArrayLike, out: Array | None = None) -> Array:
    """NumPy's dot: a product for 0-d operands, matmul for 1-D and 2-D, and otherwise the sum
    over a's last axis and b's second-to-last.

    Examples:
        >>> pm.dot(pm.asarray([1, 2, 3]), pm.asarray([4, 5, 6]))
        Array(32, dtype=int64)
        >>> pm.asarray([[1.0, 2.0], [3.0, 4.0]]).dot(pm.asarray([1.0, 1.0]))
        Array([3., 7.], dtype=float32)
    """
    a, b = _A(a), _A(b)
    if a.ndim == 0 or b.ndim == 0:
        res = _bin("multiply", a, b)
    elif b.ndim <= 2:
        res = _matmul(a, b)
    else:
        res = tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    return into(res, out)


def vdot(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Dot product of the flattened arrays, the first conjugated.

    Examples:
        >>> pm.vdot(pm.asarray([[1, 2], [3, 4]]), pm.asarray([[1, 1], [1, 1]]))
        Array(10, dtype=int64)
    """
    a, b = _m.ravel(_A(a)), _m.ravel(_A(b))
    if a._size != b._size:
        raise ValueError("vdot: arrays of %d and %d elements" % (a._size, b._size))
    if _dt.kind(a._dtype) == "c":
        a = _ew.unary("conj", a)
    p = _bin("multiply", a, b)
    return _r.sum(p, dtype=p._dtype)  # the operands' type, as NumPy's (sum would widen integers)


def inner(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Sum of products over the last axes of a and b (a product for 0-d operands).

    Examples:
        >>> pm.inner(pm.asarray([[1, 2], [3, 4]]), pm.asarray([1, 10]))
        Array([21, 43], dtype=int64)
    """
    a, b = _A(a), _A(b)
    if a.ndim == 0 or b.ndim == 0:
        return _bin("multiply", a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a: ArrayLike, b: ArrayLike, out: Array | None = None) -> Array:
    """Outer product of the flattened arrays (NumPy's outer; 1-D arrays as the standard's).

    Examples:
        >>> pm.outer(pm.asarray([1, 2]), pm.asarray([[1, 10]]))
        Array([[ 1, 10],
               [ 2, 20]], dtype=int64)
    """
    a, b = _m.ravel(_A(a)), _m.ravel(_A(b))
    return into(_bin("multiply", a.reshape(-1, 1), b.reshape(1, -1)), out)


def kron(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Kronecker product: blocks a[i, j] * b.

    Examples:
        >>> pm.kron(pm.asarray([1, 10]), pm.asarray([1, 2, 3]))
        Array([ 1,  2,  3, 10, 20, 30], dtype=int64)
    """
    a, b = _A(a), _A(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a._shape)
    b = b.reshape((1,) * (nd - b.ndim) + b._shape)
    # a's dims interleaved with b's: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...)
    sa = tuple(d for n in a._shape for d in (n, 1))
    sb = tuple(d for n in b._shape for d in (1, n))
    p = _bin("multiply", a.reshape(sa), b.reshape(sb))
    return p.reshape(tuple(x * y for x, y in zip(a._shape, b._shape)))


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The offset-th diagonal over axis1 and axis2, last in the result: a read-only view, as
    NumPy's (writes raise; pm.linalg.diagonal's view is writeable).

    Examples:
        >>> pm.diagonal(pm.asarray([[1, 2, 3], [4, 5, 6]]), 1)
        Array([2, 6], dtype=int64)
    """
    from ...linalg import diagonal as _diag  # at call time: pm.linalg: an extension over arrays/, loaded with the namespace
    a = _A(a)
    if a.ndim < 2:
        raise ValueError("diagonal needs at least 2 dimensions, got shape %r" % (a._shape,))
    i, j = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    rest = [k for k in range(a.ndim) if k not in (i, j)]
    view = _diag(a.permute_dims(rest + [i, j]), offset=operator.index(offset))
    view._ro = _READONLY_BASE
    return view


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: DTypeLike = None,
          out: Array | None = None) -> Array:
    """Sum along the diagonal (NumPy's trace: axis1 and axis2 default to the first two).

    Examples:
        >>> pm.asarray([[1, 2], [3, 4]]).trace()
        Array(5, dtype=int64)
    """
    return into(_r.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype), out)


def diag(v: ArrayLike, k: int = 0) -> Array:
    """The k-th diagonal of a 2-D array (a view), or a 2-D array with 1-D v on its k-th diagonal.

    Examples:
        >>> pm.diag(pm.asarray([1, 2]))
        Array([[1, 0],
               [0, 2]], dtype=int64)
        >>> pm.diag(pm.asarray([[1, 2], [3, 4]]), 1)
        Array([2], dtype=int64)
    """
    v = _A(v)
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("diag: input must be 1-D or 2-D, got shape %r" % (v._shape,))
    n = v._size + builtins.abs(k)
    out = _ew.fill(_new((n, n), v._dtype, v._buf.device), 0)
    from ...linalg import diagonal as _diag  # at call time: pm.linalg: an extension over arrays/, loaded with the namespace
    _ew.copy_into(v, _diag(out, offset=k))
    return out


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A 2-D array with the flattened v on its k-th diagonal.

    Examples:
        >>> pm.diagflat(pm.asarray([[1, 2]]))
        Array([[1, 0],
               [0, 2]], dtype=int64)
    """
    return diag(_m.ravel(_A(v)), k)


_EINSUM_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(subscripts, operands):
    """([labels per operand], output labels) with '...' expanded to fresh labels."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
    else:
        ins, out = s, None
    terms = ins.split(",")
    if len(terms) != len(operands):
        raise ValueError("einsum: %d operands for %d subscript terms in %r" % (len(operands), len(terms), subscripts))
    if not re.fullmatch(r"[a-zA-Z.,\->]*", s):
        raise ValueError("einsum: subscripts may use letters, ',', '->' and '...': %r" % subscripts)
    used = set(s)
    spare = [c for c in _EINSUM_LETTERS if c not in used]
    nell = builtins.max([op.ndim - len(t.replace("...", "")) for t, op in zip(terms, operands) if "..." in t], default=0)
    ell = "".join(spare[:nell])
    labels = []
    for t, op in zip(terms, operands):
        if "..." in t:
            k = op.ndim - len(t.replace("...", ""))
            t = t.replace("...", ell[nell - k:] if k else "")
        if len(t) != op.ndim:
            raise ValueError("einsum: term %r has %d labels for an operand of %d dimensions" % (t, len(t), op.ndim))
        labels.append(t)
    if out is None:
        counts: dict[str, int] = {}
        for t in labels:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return labels, out


def _einsum_diag(x, t):
    """x with each repeated label of t taken once (a diagonal view), and its labels."""
    while True:
        dup = next((c for c in t if t.count(c) > 1), None)
        if dup is None:
            return x, t
        i = t.index(dup)
        j = t.index(dup, i + 1)
        x = diagonal(x, 0, i, j)
        t = "".join(c for k, c in enumerate(t) if k not in (i, j)) + dup


def _einsum_pair(a, ta, b, tb, keep):
    """Contraction of a and b over the labels not in `keep`, as one batched matmul."""
    sizes: dict[str, int] = {}
    for x, t in ((a, ta), (b, tb)):
        for c, n in zip(t, x._shape):
            if sizes.get(c, 1) != 1 and n not in (1, sizes[c]):
                raise ValueError("einsum: label %r has sizes %d and %d" % (c, sizes[c], n))
            sizes[c] = builtins.max(sizes.get(c, 1), n) if c in sizes else n
    batch = [c for c in ta if c in tb and c in keep]
    con = [c for c in ta if c in tb and c not in keep]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]

    def arrange(x, t, order):
        x = x.permute_dims([t.index(c) for c in order])
        return x.broadcast_to(tuple(sizes[c] for c in order))

    n = lambda cs: int(np.prod([sizes[c] for c in cs], dtype=np.int64))  # noqa: E731
    dt = _dt.result_type(a, b)
    if n(fa) == 1 and n(fb) == 1 and _dt.kind(dt) != "b":
        # a product summed per batch element ("ij,ij->i"): a batch of 1x1 matmuls would be a
        # launch's worth of work per element; a product and a row sum are two passes
        am = arrange(a, ta, batch + fa + con).reshape(n(batch), n(con))
        bm = arrange(b, tb, batch + con + fb).reshape(n(batch), n(con))
        r = _r.sum(_ew.binary("multiply", am, bm), axis=-1, dtype=dt)
        return r.reshape(tuple(sizes[c] for c in batch + fa + fb)), "".join(batch + fa + fb)
    am = _ew.ascontiguous(arrange(a, ta, batch + fa + con)).reshape(n(batch), n(fa), n(con))
    bm = _ew.ascontiguous(arrange(b, tb, batch + con + fb)).reshape(n(batch), n(con), n(fb))
    r = _matmul(am, bm).reshape(tuple(sizes[c] for c in batch + fa + fb))
    return r, "".join(batch + fa + fb)


def einsum_path(subscripts: str, *operands: ArrayLike, optimize: Any = "greedy") -> Any:
    """NumPy's einsum_path: the contraction order and its report. It depends only on the operands'
    shapes, so NumPy's runs on stand-ins of those shapes (broadcast 0-d arrays: no copy, no memory).
    pm.einsum takes the path as optimize= and contracts pairwise from the left whatever it says.

    Examples:
        >>> a = pm.ones((2, 3)); b = pm.ones((3, 4))
        >>> pm.einsum_path("ij,jk->ik", a, b)[0]
        ['einsum_path', (0, 1)]
    """
    if not isinstance(subscripts, str):
        raise TypeError("einsum_path: the first argument must be a subscripts string such as 'ij,jk->ik'")
    stand_ins = [np.broadcast_to(np.zeros((), x._dtype), x.shape) for x in map(_A, operands)]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize)


def einsum(subscripts: str, *operands: ArrayLike, out: Array | None = None, dtype: DTypeLike = None,
           optimize: Any = False) -> Array:
    """Einstein summation: NumPy's subscripts (implicit or '->' output, '...', repeated labels
    for diagonals), contracted pairwise from the left, each pair as one batched matmul kernel.

    Examples:
        >>> a = pm.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> pm.einsum("ij,jk->ik", a, a)
        Array([[ 7., 10.],
               [15., 22.]], dtype=float32)
        >>> pm.einsum("ii", a), pm.einsum("ij->j", a)
        (Array(5., dtype=float32), Array([4., 6.], dtype=float32))
    """
    if not isinstance(subscripts, str):
        raise TypeError("einsum: the first argument must be a subscripts string such as 'ij,jk->ik'")
    ops = [_A(x) for x in operands]
    labels, out_t = _einsum_parse(subscripts, ops)
    if len(set(out_t)) != len(out_t) or not set(out_t) <= set("".join(labels)):
        raise ValueError("einsum: output %r must name distinct labels of the inputs" % out_t)
    terms = [_einsum_diag(x, t) for x, t in zip(ops, labels)]
    x, t = terms[0]
    for k in range(1, len(terms)):
        later = out_t + "".join(tt for _, tt in terms[k + 1:])
        # labels of x that are in neither operand's future: summed out first
        y, ty = terms[k]
        x, t = _einsum_sum(x, t, later + ty)
        y, ty = _einsum_sum(y, ty, later + t)
        x, t = _einsum_pair(x, t, y, ty, later)
    x, t = _einsum_sum(x, t, out_t)
    res = x.permute_dims([t.index(c) for c in out_t]) if x.ndim else x
    res = _ew.ascontiguous(res, force=res is x or not res._cc)
    return into(_with_dtype(res, dtype), out)


def _einsum_sum(x, t, keep):
    axes = tuple(i for i, c in enumerate(t) if c not in keep)
    if not axes:
        return x, t
    dt = x._dtype
    return _r.sum(x, axis=axes, dtype=dt if _dt.kind(dt) != "b" else None), "".join(c for c in t if c in keep)


# ---- shapes ------------------------------------------------------------------------------------

def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """A view with two axes exchanged.

    Examples:
        >>> pm.swapaxes(pm.zeros((2, 3, 4)), 0, 2).shape
        (4, 3, 2)
    """
    a = _A(a)
    order = list(range(a.ndim))
    i, j = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    order[i], order[j] = j, i
    return a.permute_dims(order)


# ---- logic -------------------------------------------------------------------------------------

def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """Whether |a - b| <= atol + rtol * |b| elementwise (infinities equal to themselves).

    Examples:
        >>> pm.isclose(pm.asarray([1.0, 1.1, float("nan")]), 1.0)
        Array([ True, False, False], dtype=bool)
    """
    a, b = _A(a), _A(b)
    dt = _dt.promote_types(_dt.promote_types(a._dtype, b._dtype), _dt.float32)
    fa, fb = (x if x._dtype == dt else _ew.astype(x, dt) for x in (a, b))
    diff = _ew.unary("abs", _bin("subtract", fa, fb))
    tol = _bin("add", _bin("multiply", _ew.unary("abs", fb), float(rtol)), float(atol))
    close = _bin("logical_and", _bin("less_equal", diff, tol), _ew.unary("isfinite", fb))
    close = _bin("logical_or", close, _bin("logical_and", _bin("equal", fa, fb), _ew.unary("isinf", fb)))
    if equal_nan:
        close = _bin("logical_or", close, _bin("logical_and", _ew.unary("isnan", fa), _ew.unary("isnan", fb)))
    return close


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of a is close to b's (see isclose), a Python bool.

    Examples:
        >>> pm.allclose(pm.asarray([1.0, 2.0]), pm.asarray([1.0, 2.000001]))
        True
    """
    return bool(_r.all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> bool:
    """Whether a1 and a2 have the same shape and elements, a Python bool.

    Examples:
        >>> pm.array_equal(pm.asarray([1, 2]), [1, 2]), pm.array_equal(pm.asarray([1, 2]), [1])
        (True, False)
    """
    a, b = _A(a1), _A(a2)
    if a._shape != b._shape:
        return False
    eq = _bin("equal", a, b)
    if equal_nan and _dt.kind(a._dtype) in "fc" and _dt.kind(b._dtype) in "fc":
        eq = _bin("logical_or", eq, _bin("logical_and", _ew.unary("isnan", a), _ew.unary("isnan", b)))
    return bool(_r.all(eq))


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> bool:
    """Whether a1 and a2 broadcast to each other with equal elements, a Python bool.

    Examples:
        >>> pm.array_equiv(pm.asarray([[1, 2], [1, 2]]), [1, 2])
        True
    """
    a, b = _A(a1), _A(a2)
    try:
        _ew.broadcast_shapes(a._shape, b._shape)
    except ValueError:
        return False
    return bool(_r.all(_bin("equal", a, b)))


def where(condition: ArrayLike, x: Any = None, y: Any = None, /) -> Any:
    """Elements of x where condition is true, else of y; with only condition, its nonzero indices.

    Examples:
        >>> c = pm.asarray([True, False, True])
        >>> pm.where(c, 1, 0), pm.where(c)
        (Array([1, 0, 1], dtype=int64), (Array([0, 2], dtype=int64),))
    """
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return _ew.where(condition, x, y)


def argwhere(a: ArrayLike) -> Array:
    """Indices of the non-zero elements, one row per element (shape (N, a.ndim)).

    Examples:
        >>> pm.argwhere(pm.asarray([[0, 3], [4, 0]]))
        Array([[0, 1],
               [1, 0]], dtype=int64)
    """
    a = _A(a)
    if a.ndim == 0:
        return _new((int(bool(a)), 0), _dt.int64, a._buf.device)
    return _m.stack(list(nonzero(a)), axis=1)


def flatnonzero(a: ArrayLike) -> Array:
    """Indices of the non-zero elements of the flattened array.

    Examples:
        >>> pm.flatnonzero(pm.asarray([[0, 3], [4, 0]]))
        Array([1, 2], dtype=int64)
    """
    return nonzero(_m.ravel(_A(a)))[0]


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Array:
    """Elements of the first choice whose condition is true, else default (one where per choice).

    Examples:
        >>> x = pm.arange(5)
        >>> pm.select([x < 2, x > 3], [x, x * 10], -1)
        Array([ 0,  1, -1, -1, 40], dtype=int64)
    """
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    res = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        c = _A(c)
        if c._dtype != _dt.bool_:
            raise TypeError("select: conditions must be boolean arrays, not %s" % c._dtype)
        res = _ew.where(c, v, res)
    shape = _ew.broadcast_shapes(*[_A(c)._shape for c in condlist], *[_A(v)._shape for v in choicelist])
    return _A(res).broadcast_to(shape) if _A(res)._shape != shape else _A(res)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """NaN replaced by nan, +inf and -inf by posinf and neginf (default: the dtype's extremes).

    Examples:
        >>> pm.nan_to_num(pm.asarray([float("nan"), 1.0]))
        Array([0., 1.], dtype=float32)
    """
    x = _A(x)
    if _dt.kind(x._dtype) != "f":
        return _ew.ascontiguous(x, force=copy)
    fi = _dt.finfo(x._dtype)
    r = _ew.where(_ew.unary("isnan", x), nan, x)
    r = _ew.where(_bin("equal", r, float("inf")), fi.max if posinf is None else posinf, r)
    r = _ew.where(_bin("equal", r, float("-inf")), fi.min if neginf is None else neginf, r)
    r = r if r._dtype == x._dtype else _ew.astype(r, x._dtype)
    if not copy:
        _ew.copy_into(r, x)
        return x
    return r


# ---- indices ---------------------------------------------------------------------------------

def unravel_index(indices: ArrayLike, shape: Any, order: str = "C") -> tuple[Array, ...]:
    """The coordinates in an array of `shape` of flat indices (one array per dimension).

    Examples:
        >>> pm.unravel_index(pm.asarray([5, 7]), (3, 4))
        (Array([1, 1], dtype=int64), Array([1, 3], dtype=int64))
    """
    shape = normalize_shape(shape)
    idx = _A(indices)
    if _dt.kind(idx._dtype) not in "iu":
        raise TypeError("unravel_index: indices must be integers, not %s" % idx._dtype)
    size = int(np.prod(shape, dtype=np.int64))
    if idx._size and (bool(_r.any(_bin("less", idx, 0))) or bool(_r.any(_bin("greater_equal", idx, size)))):
        raise ValueError("unravel_index: an index is out of bounds for an array of size %d" % size)
    idx = _ew.astype(idx, _dt.int64) if idx._dtype != _dt.int64 else idx
    dims = list(enumerate(shape))
    out: list[Array | None] = [None] * len(shape)
    for i, d in (reversed(dims) if order == "C" else dims):
        out[i] = _bin("remainder", idx, d) if d else idx
        idx = _bin("floor_divide", idx, d) if d else idx
    return tuple(o for o in out if o is not None)  # every dimension's was set above


def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise", order: str = "C") -> Array:
    """Flat indices of coordinates (one array per dimension) in an array of shape dims.

    mode: "raise" (out-of-range coordinates raise ValueError), "wrap" or "clip".

    Examples:
        >>> pm.ravel_multi_index((pm.asarray([1, 2]), pm.asarray([3, 0])), (3, 4))
        Array([7, 8], dtype=int64)
    """
    if len(multi_index) != len(dims):
        raise ValueError("ravel_multi_index: %d index arrays for %d dimensions" % (len(multi_index), len(dims)))
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    strides = np.cumprod((1,) + tuple(dims[::-1]))[-2::-1] if order == "C" else np.cumprod((1,) + tuple(dims))[:-1]
    res: Array | None = None
    for idx, d, s, md in zip(multi_index, dims, strides, modes):
        i = _A(idx)
        if md == "raise":
            if i._size and (bool(_r.any(_bin("less", i, 0))) or bool(_r.any(_bin("greater_equal", i, d)))):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array (dimension of size %d)" % d)
        elif md == "wrap":
            i = _bin("remainder", i, d)
        elif md == "clip":
            i = _ew.clip(i, 0, d - 1)
        else:
            raise ValueError("ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', not %r" % (md,))
        term = _bin("multiply", _ew.astype(i, _dt.int64), int(s))
        res = term if res is None else _bin("add", res, term)
    if res is None:  # no dimensions: index 0, as NumPy's (was None)
        return asarray(0, dtype=_dt.int64)
    return res


# ---- diagonals and triangles by index --------------------------------------------------------------

def fill_diagonal(a: Array, val: Any, wrap: bool = False) -> None:
    """Writes val into the main diagonal of a in place (a strided view of it; an array val is
    repeated along the diagonal as NumPy's). wrap=True continues below a tall matrix's square.

    Examples:
        >>> x = pm.zeros((2, 3), pm.int64)
        >>> pm.fill_diagonal(x, 7)
        >>> x
        Array([[7, 0, 0],
               [0, 7, 0]], dtype=int64)
    """
    if not isinstance(a, Array):
        raise TypeError("fill_diagonal: a must be a pymetal Array (it is changed in place)")
    if a.ndim < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if a.ndim > 2 and len(set(a._shape)) != 1:
        raise ValueError("fill_diagonal: all dimensions of input must be of equal length")
    check_writeable(a)
    if a.ndim == 2 and wrap and a._shape[0] > a._shape[1] + 1 and a._cc:
        # NumPy's wrap: every (cols + 1)-th element of the flat array
        flat = a.reshape(-1)
        d = flat._view(flat._offset, (-(-a._size // (a._shape[1] + 1)),), (flat._strides[0] * (a._shape[1] + 1),))
    else:
        n = builtins.min(a._shape)
        d = a._view(a._offset, (n,), (builtins.sum(a._strides),))
    v = _A(val)
    if v.ndim and v._size != d._size:
        from .shapes import resize  # at call time: shapes imports this module
        v = resize(v, d._size)
    _ew.copy_into(v if v._dtype == a._dtype else _ew.astype(v, a._dtype), d)


def tri(N: int, M: int | None = None, k: int = 0, dtype: DTypeLike = float) -> Array:
    """Ones at and below the k-th diagonal, zeros above (float32 by default).

    Examples:
        >>> pm.tri(2, 3, dtype=int)
        Array([[1, 0, 0],
               [1, 1, 0]], dtype=int64)
    """
    return _tril(ones((N, N if M is None else M), _dt.check_dtype(dtype)), k=k)


def _matrix_shape(arr):
    a = _A(arr)
    if a.ndim != 2:
        raise ValueError("input array must be 2-d, got shape %r" % (a._shape,))
    return a._shape


def _tri_indices(n, m, k, lower):
    mask = ones((n, n if m is None else m), _dt.bool_)
    return nonzero((_tril if lower else _triu)(mask, k=k))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """(rows, cols) of the elements at and above the k-th diagonal of an n x m matrix.

    Examples:
        >>> pm.triu_indices(3, 1)
        (Array([0, 0, 1], dtype=int64), Array([1, 2, 2], dtype=int64))
    """
    return _tri_indices(n, m, k, False)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """(rows, cols) of the elements at and below the k-th diagonal of an n x m matrix.

    Examples:
        >>> pm.tril_indices(2)
        (Array([0, 1, 1], dtype=int64), Array([0, 0, 1], dtype=int64))
    """
    return _tri_indices(n, m, k, True)


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """triu_indices for the shape of the 2-D arr.

    Examples:
        >>> pm.triu_indices_from(pm.zeros((2, 2)))
        (Array([0, 0, 1], dtype=int64), Array([0, 1, 1], dtype=int64))
    """
    n, m = _matrix_shape(arr)
    return _tri_indices(n, m, k, False)


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """tril_indices for the shape of the 2-D arr.

    Examples:
        >>> pm.tril_indices_from(pm.zeros((2, 2)))
        (Array([0, 1, 1], dtype=int64), Array([0, 0, 1], dtype=int64))
    """
    n, m = _matrix_shape(arr)
    return _tri_indices(n, m, k, True)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """Indices of the main diagonal of an n x ... x n array (ndim copies of arange(n)).

    Examples:
        >>> pm.diag_indices(2)
        (Array([0, 1], dtype=int64), Array([0, 1], dtype=int64))
    """
    i = arange(n, dtype=_dt.int64)
    return (i,) * ndim


# ---- sets -----------------------------------------------------------------------------------------

def _unique1d(a):
    return unique(_A(a))


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, return_indices: bool = False) -> Any:
    """The sorted values in both arrays (a sort of both distinct sets and a neighbour test);
    return_indices: also where each first occurs in ar1 and in ar2 (flattened), as NumPy's.

    Examples:
        >>> pm.intersect1d(pm.asarray([1, 3, 4, 3]), pm.asarray([3, 1, 2, 1]))
        Array([1, 3], dtype=int64)
        >>> pm.intersect1d(pm.asarray([1, 3, 4, 3]), pm.asarray([3, 1, 2, 1]), return_indices=True)[1:]
        (Array([0, 1], dtype=int64), Array([1, 0], dtype=int64))
    """
    if not return_indices:
        both = sort(_m.concat([_unique1d(ar1), _unique1d(ar2)]))
        if both._size < 2:
            return both[:0]
        return _compact(both[:-1], _bin("equal", both[1:], both[:-1]))
    a1, a2 = _m.ravel(_A(ar1)), _m.ravel(_A(ar2))
    if assume_unique:
        u1, u2 = a1, a2
    else:
        u1, i1 = unique(a1, return_index=True)
        u2, i2 = unique(a2, return_index=True)
    both = _m.concat([u1, u2])
    order = _argsort(both, stable=True)  # an equal pair: ar1's value first (each set is distinct)
    s = _take(both, order)
    if s._size < 2:
        empty = order[:0]
        return s[:0], empty, empty
    pair = _bin("equal", s[1:], s[:-1])
    ind1 = _compact(order[:-1], pair)
    ind2 = _bin("subtract", _compact(order[1:], pair), u1._size)
    if not assume_unique:
        ind1, ind2 = _take(i1, ind1), _take(i2, ind2)
    return _compact(s[:-1], pair), ind1, ind2


def union1d(ar1: ArrayLike, ar2: ArrayLike) -> Array:
    """The sorted values in either array.

    Examples:
        >>> pm.union1d(pm.asarray([-1, 0, 1]), pm.asarray([-2, 0, 2]))
        Array([-2, -1,  0,  1,  2], dtype=int64)
    """
    return _unique1d(_m.concat([_m.ravel(_A(ar1)), _m.ravel(_A(ar2))]))


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Array:
    """The sorted distinct values of ar1 that are not in ar2.

    Examples:
        >>> pm.setdiff1d(pm.asarray([1, 2, 3, 2, 4]), pm.asarray([3, 4, 5]))
        Array([1, 2], dtype=int64)
    """
    u = _unique1d(ar1)
    return _compact(u, isin(u, _m.ravel(_A(ar2)), invert=True))


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Array:
    """The sorted values in exactly one of the arrays.

    Examples:
        >>> pm.setxor1d(pm.asarray([1, 2, 3]), pm.asarray([2, 3, 4]))
        Array([1, 4], dtype=int64)
    """
    return union1d(setdiff1d(ar1, ar2), setdiff1d(ar2, ar1))
