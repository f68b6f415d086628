"""pymetal.linalg: the Python Array API's linear algebra extension (all 23 functions).

Where the work runs:

- **Metal kernels** (pymetal's own kernels, asynchronous like every array op):
  ``matmul``, ``tensordot``, ``vecdot``, ``outer``, ``trace``, ``cross``,
  ``vector_norm``, ``matrix_norm`` (``"fro"``, 1, -1, inf, -inf),
  ``matrix_power`` (repeated squaring with matmul); ``matrix_transpose`` and
  ``diagonal`` are views and copy nothing.
- **Host, on the same memory**: the decompositions ``cholesky, det, eigh,
  eigvalsh, inv, pinv, qr, slogdet, solve, svd, svdvals`` (and what needs
  singular values: ``matrix_rank``, ``matrix_norm`` with ord 2, -2, "nuc";
  ``matrix_power`` with n < 0 inverts first) run NumPy's LAPACK on a zero-copy
  view of the shared memory. Factorisations are sequential, pivoting,
  latency-bound algorithms where a GPU kernel wins only on large batches;
  unified memory makes this copy-free on the way in, and the result is handed
  back as pymetal memory (wrapped when NumPy's allocation is page-aligned,
  else copied once).

Dtypes: float32 in, float32 out (single-precision LAPACK; no float64 on the
way). float16 and bfloat16 compute in float32 and return their own type;
integer and bool input computes in float32 (the default float: a device
without float64). Singular or non-positive-definite input raises
``LinAlgError`` (NumPy's, a ValueError); a non-square matrix where one is
needed raises ValueError.
"""

from __future__ import annotations

import math
import operator
from collections import namedtuple

import numpy as np

from . import dtypes as _dt
from .arrays import elementwise as _ew
from .arrays import reduce as _red
from .arrays.linear_algebra import matmul, outer, tensordot, vecdot
from .arrays.manipulation import matrix_transpose, moveaxis, stack
from .arrays.construct import asarray
from .arrays.layout import normalize_axis
from .arrays.creation import eye as _eye

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .arrays.array import Array
    from .runtime.device import Device
    from ._typing import ArrayLike, DTypeLike, Norm

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm", "LinAlgError",
    "norm", "eig", "eigvals", "lstsq", "cond", "multi_dot", "tensorinv", "tensorsolve",  # NumPy's (not in the standard)
]

LinAlgError = np.linalg.LinAlgError

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


# ---- host decompositions: NumPy's LAPACK on the shared memory ----------------------------

def _result_dtype(x):
    """The floating dtype a function of x returns (float32 for integer and bool input)."""
    return x._dtype if _dt.is_float(x._dtype) or _dt.kind(x._dtype) == "c" else _dt.default_float


def _matrices(x, name, square=False):
    """(x as an Array, its float32 host view, the result dtype) after checking the shape."""
    x = _ew.as_array(x)
    if x.ndim < 2:
        raise ValueError("linalg.%s: needs an array of matrices (at least 2 dimensions), got shape %r"
                         % (name, x._shape))
    if square and x._shape[-1] != x._shape[-2]:
        raise ValueError("linalg.%s: the last two dimensions must be square, got shape %r" % (name, x._shape))
    a = x.numpy()  # waits for the work producing x; no copy
    if a.dtype not in (np.float32, np.complex64):  # complex64 stays complex (cgesv & co.)
        a = a.astype(np.float32)
    return x, a, _result_dtype(x)


def _back(r, dt, dev):
    """A NumPy result as a pymetal array of dtype dt (wraps page-aligned memory, else one copy)."""
    r = np.asarray(r)
    if _dt.kind(dt) == "c" and r.dtype.kind != "c":  # singular values, eigenvalues, log|det| of
        dt = _dt.real_dtype(dt)                        # complex input are real (the standard)
    if r.dtype != dt:
        r = r.astype(dt)
    return asarray(r if r.flags.c_contiguous else r.copy(), device=dev)  # (ascontiguousarray makes 0-d 1-d)


def _lapack(fn, x, name, square=False, **kwargs):
    """NumPy's fn on x's float32 host view; each array it returns as a pymetal array of x's float dtype."""
    x, a, dt = _matrices(x, name, square)
    r = fn(a, **kwargs)
    if isinstance(r, tuple):
        return tuple(_back(v, dt, x.device) for v in r)
    return _back(r, dt, x.device)


def _cholesky_upper(a):
    return np.swapaxes(np.linalg.cholesky(a), -1, -2)


def cholesky(x: ArrayLike, /, *, upper: bool = False) -> Array:
    """Cholesky factor L (lower, x = L L^T) or U (upper=True, x = U^T U) of symmetric positive-definite matrices.

    Examples:
        >>> pm.linalg.cholesky(pm.asarray([[4.0, 2.0], [2.0, 5.0]]))
        Array([[2., 0.],
               [1., 2.]], dtype=float32)
    """
    return _lapack(_cholesky_upper if upper else np.linalg.cholesky, x, "cholesky", square=True)


def det(x: ArrayLike, /) -> Array:
    """Determinants of square matrices.

    Examples:
        >>> pm.linalg.det(pm.asarray([[2.0, 0.0], [0.0, 3.0]]))
        Array(6., dtype=float32)
    """
    return _lapack(np.linalg.det, x, "det", square=True)


def slogdet(x: ArrayLike, /) -> SlogdetResult:
    """(sign, log|det|) of square matrices: the determinant without overflow.

    A named tuple (sign, logabsdet).

    Examples:
        >>> sign, logabsdet = pm.linalg.slogdet(pm.asarray([[-1.0, 0.0], [0.0, 1.0]]))
        >>> sign, logabsdet
        (Array(-1., dtype=float32), Array(0., dtype=float32))
    """
    return SlogdetResult(*_lapack(np.linalg.slogdet, x, "slogdet", square=True))


def inv(x: ArrayLike, /) -> Array:
    """Inverses of square matrices (LinAlgError if singular).

    Examples:
        >>> pm.linalg.inv(pm.asarray([[2.0, 0.0], [0.0, 4.0]]))
        Array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    return _lapack(np.linalg.inv, x, "inv", square=True)


def eigh(x: ArrayLike, /, UPLO: str = "L") -> EighResult:
    """(eigenvalues ascending, eigenvectors as columns) of symmetric matrices (the lower triangle
    used, or the upper with NumPy's UPLO="U").

    A named tuple (eigenvalues, eigenvectors).

    Examples:
        >>> w, v = pm.linalg.eigh(pm.asarray([[2.0, 1.0], [1.0, 2.0]]))
        >>> w.numpy().round(4)
        array([1., 3.], dtype=float32)
        >>> v.shape
        (2, 2)
    """
    return EighResult(*_lapack(np.linalg.eigh, x, "eigh", square=True, UPLO=UPLO))


def eig(a: ArrayLike) -> EigResult:
    """NumPy's eig: (eigenvalues, right eigenvectors as columns) of general square matrices.
    As NumPy's: float32 when every eigenvalue is real, else complex64.

    Examples:
        >>> w, v = pm.linalg.eig(pm.asarray([[0.0, -1.0], [1.0, 0.0]]))  # a rotation: +-i
        >>> w.dtype, sorted(w.numpy().imag.round(4).tolist())
        (dtype('complex64'), [-1.0, 1.0])
    """
    x, h, _ = _matrices(a, "eig", square=True)
    return EigResult(*(asarray(np.ascontiguousarray(r), device=x.device) for r in np.linalg.eig(h)))


def eigvals(a: ArrayLike) -> Array:
    """NumPy's eigvals: the eigenvalues of general square matrices (float32 or complex64, as eig).

    Examples:
        >>> pm.linalg.eigvals(pm.asarray([[2.0, 0.0], [0.0, 3.0]]))
        Array([2., 3.], dtype=float32)
    """
    x, h, _ = _matrices(a, "eigvals", square=True)
    return asarray(np.ascontiguousarray(np.linalg.eigvals(h)), device=x.device)


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None) -> tuple[Array, Array, int, Array]:
    """NumPy's lstsq: (x minimising |b - a x|, the residual sums of squares, the rank of a, its
    singular values), for one matrix a (M, N) and b (M,) or (M, K); rcond: singular values below
    rcond times the largest count as zero (default: eps * max(M, N)).

    Examples:
        >>> x, res, rank, s = pm.linalg.lstsq(pm.asarray([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]),
        ...                                   pm.asarray([1.0, 2.0, 3.0]))
        >>> x.numpy().round(4), rank
        (array([1., 1.], dtype=float32), 2)
    """
    x, h, dt = _matrices(a, "lstsq")
    if x.ndim != 2:
        raise LinAlgError("linalg.lstsq: a must be one matrix (2 dimensions), got shape %r" % (x._shape,))
    bh = _ew.as_array(b).numpy().astype(h.dtype, copy=False)
    sol, res, rank, s = np.linalg.lstsq(h, bh, rcond=rcond)
    return _back(sol, dt, x.device), _back(res, dt, x.device), int(rank), _back(s, dt, x.device)


def eigvalsh(x: ArrayLike, /, UPLO: str = "L") -> Array:
    """Eigenvalues (ascending) of symmetric matrices (the lower triangle used; UPLO="U": the upper).

    Examples:
        >>> pm.linalg.eigvalsh(pm.asarray([[3.0, 0.0], [0.0, 1.0]]))
        Array([1., 3.], dtype=float32)
    """
    return _lapack(np.linalg.eigvalsh, x, "eigvalsh", square=True, UPLO=UPLO)


def qr(x: ArrayLike, /, mode: str = "reduced") -> Any:
    """(Q, R) with x = Q R: mode "reduced" (Q is ...xMxK, K = min(M, N)) or "complete" (Q is ...xMxM);
    NumPy's mode "r" gives R alone.

    A named tuple (Q, R).

    Examples:
        >>> q, r = pm.linalg.qr(pm.ones((4, 2)))
        >>> q.shape, r.shape
        ((4, 2), (2, 2))
        >>> pm.linalg.qr(pm.ones((4, 2)), mode="complete").Q.shape
        (4, 4)
    """
    if mode == "r":
        return _lapack(np.linalg.qr, x, "qr", mode="r")
    if mode not in ("reduced", "complete"):
        raise ValueError('linalg.qr: mode must be "reduced", "complete" or "r", not %r' % (mode,))
    return QRResult(*_lapack(np.linalg.qr, x, "qr", mode=mode))


def svd(x: ArrayLike, /, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> SVDResult | Array:
    """(U, S, Vh) with x = U diag(S) Vh, singular values descending.

    A named tuple (U, S, Vh); NumPy's compute_uv=False gives S alone (svdvals), and hermitian
    is accepted (the same result; NumPy uses it to go faster).

    Examples:
        >>> u, s, vh = pm.linalg.svd(pm.asarray([[3.0, 0.0], [0.0, -4.0]]))
        >>> s
        Array([4., 3.], dtype=float32)
    """
    if not compute_uv:
        return svdvals(x)
    return SVDResult(*_lapack(np.linalg.svd, x, "svd", full_matrices=full_matrices))


def _svdvals_host(a):
    return np.linalg.svd(a, compute_uv=False)


def svdvals(x: ArrayLike, /) -> Array:
    """Singular values, descending.

    Examples:
        >>> pm.linalg.svdvals(pm.asarray([[1.0, 0.0], [0.0, -2.0]]))
        Array([2., 1.], dtype=float32)
    """
    return _lapack(_svdvals_host, x, "svdvals")


def _rtol_host(rtol, a, dt):
    """rtol as a host array broadcastable to the batch (the standard's default: max(M, N) * eps)."""
    if rtol is None:
        return np.float32(max(a.shape[-2:]) * float(_dt.finfo(dt).eps))
    return np.asarray(rtol.numpy() if hasattr(rtol, "numpy") else rtol, dtype=np.float32)


def pinv(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Array:
    """Moore-Penrose pseudo-inverses; singular values <= rtol * largest are treated as zero.

    Examples:
        >>> pm.linalg.pinv(pm.asarray([[2.0, 0.0], [0.0, 0.0]]))
        Array([[0.5, 0. ],
               [0. , 0. ]], dtype=float32)
    """
    x, a, dt = _matrices(x, "pinv")
    return _back(np.linalg.pinv(a, rcond=_rtol_host(rtol, a, dt)), dt, x.device)


def matrix_rank(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Array:
    """Number of singular values > rtol * the largest one (int64).

    Examples:
        >>> pm.linalg.matrix_rank(pm.asarray([[1.0, 2.0], [2.0, 4.0]]))
        Array(1, dtype=int64)
    """
    x, a, dt = _matrices(x, "matrix_rank")
    s = _svdvals_host(a)
    if s.shape[-1] == 0:
        rank = np.zeros(s.shape[:-1], np.int64)
    else:
        tol = s.max(axis=-1, keepdims=True) * _rtol_host(rtol, a, dt)[..., None]
        rank = np.count_nonzero(s > tol, axis=-1).astype(np.int64)
    return _back(rank, _dt.int64, x.device)


def solve(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The solution of x1 @ result = x2.

    x2 is a vector only when 1-D (the standard's rule); otherwise a stack of
    matrices; batch dimensions broadcast.

    Examples:
        >>> pm.linalg.solve(pm.asarray([[2.0, 0.0], [0.0, 4.0]]), pm.asarray([1.0, 1.0]))
        Array([0.5 , 0.25], dtype=float32)
    """
    x1, a, dt = _matrices(x1, "solve", square=True)
    x2 = _ew.as_array(x2)
    dt = _dt.promote_types(dt, _result_dtype(x2))
    b = x2.numpy().astype(np.complex64 if _dt.kind(dt) == "c" else np.float32, copy=False)
    m = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.ndim < 2 or b.shape[-2] != m:
        raise ValueError("linalg.solve: x2 of shape %r does not match x1 of shape %r" % (x2._shape, x1._shape))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    r = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))
    return _back(r[..., 0] if vector else r, dt, x1.device)


# ---- kernels and views ---------------------------------------------------------------

def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The offset-th diagonal of each matrix (a view: no copy).

    Examples:
        >>> x = pm.asarray([[1, 2, 3], [4, 5, 6]])
        >>> pm.linalg.diagonal(x), pm.linalg.diagonal(x, offset=1)
        (Array([1, 5], dtype=int64), Array([2, 6], dtype=int64))
    """
    x = _ew.as_array(x)
    if x.ndim < 2:
        raise ValueError("linalg.diagonal: needs at least 2 dimensions, got shape %r" % (x._shape,))
    offset = operator.index(offset)
    m, n = x._shape[-2:]
    s0, s1 = x._strides[-2:]
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    start = x._offset
    if length and x._size:  # (an empty result keeps the array's offset: no element to point at)
        start += offset * s1 if offset >= 0 else -offset * s0
    return x._view(start, x._shape[:-2] + (length,), x._strides[:-2] + (s0 + s1,))


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike = None) -> Array:
    """Sums along the offset-th diagonal (integers accumulate in 64 bits).

    Examples:
        >>> pm.linalg.trace(pm.asarray([[1, 2], [3, 4]]))
        Array(5, dtype=int64)
    """
    return _red.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Cross products of 3-vectors along axis (other dimensions broadcast).

    Examples:
        >>> pm.linalg.cross(pm.asarray([1.0, 0.0, 0.0]), pm.asarray([0.0, 1.0, 0.0]))
        Array([0., 0., 1.], dtype=float32)
    """
    a, b = _ew.as_array(x1), _ew.as_array(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("linalg.cross: operands must have at least one dimension")
    shape = _ew.broadcast_shapes(a._shape, b._shape)
    # The standard counts the axis from the end (a non-negative one is taken in the broadcast shape).
    neg = normalize_axis(axis, len(shape)) - len(shape)
    if neg < -min(a.ndim, b.ndim) or a._shape[neg] != 3 or b._shape[neg] != 3:
        raise ValueError("linalg.cross: axis %d must have size 3 in both operands, got shapes %r and %r"
                         % (axis, a._shape, b._shape))
    ax = neg + len(shape)
    a = moveaxis(a.broadcast_to(shape), ax, -1)
    b = moveaxis(b.broadcast_to(shape), ax, -1)
    mul, sub = (lambda p, q: _ew.binary("multiply", p, q)), (lambda p, q: _ew.binary("subtract", p, q))
    comp = [sub(mul(a[..., i], b[..., j]), mul(a[..., j], b[..., i])) for i, j in ((1, 2), (2, 0), (0, 1))]
    return stack(comp, axis=ax)


def _norm_input(x):
    """x as float32 for accumulation when it is integer, bool, float16 or bfloat16; and the result dtype.
    Complex x: its |x| (a norm depends only on it), and float32 (the standard: real, same precision)."""
    x = _ew.as_array(x)
    if _dt.kind(x._dtype) == "c":
        return _ew.unary("abs", x), _dt.real_dtype(x._dtype)
    dt = _result_dtype(x)
    return (x if x._dtype == _dt.float32 else _ew.astype(x, _dt.float32)), dt


def _finish(r, dt):
    return r if r._dtype == dt else _ew.astype(r, dt)


def vector_norm(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:
    """p-norms over axis (all elements by default): ord = 2, 1, inf, -inf, 0 (count of non-zeros), any p.

    Examples:
        >>> x = pm.asarray([3.0, -4.0])
        >>> pm.linalg.vector_norm(x), pm.linalg.vector_norm(x, ord=1), pm.linalg.vector_norm(x, ord=pm.inf)
        (Array(5., dtype=float32), Array(7., dtype=float32), Array(4., dtype=float32))
    """
    x, dt = _norm_input(x)
    if isinstance(ord, str) or isinstance(ord, bool):
        raise ValueError("linalg.vector_norm: ord must be a number, not %r" % (ord,))
    ord = float(ord)
    if ord == 2:
        r = _ew.unary("sqrt", _red.sum(_ew.binary("multiply", x, x), axis=axis, keepdims=keepdims))
    elif ord == 0:
        r = _ew.astype(_red.count_nonzero(x, axis=axis, keepdims=keepdims), _dt.float32)
    else:
        ax = _ew.unary("abs", x)
        if ord == math.inf:
            r = _red.max(ax, axis=axis, keepdims=keepdims)
        elif ord == -math.inf:
            r = _red.min(ax, axis=axis, keepdims=keepdims)
        elif ord == 1:
            r = _red.sum(ax, axis=axis, keepdims=keepdims)
        else:
            s = _red.sum(_ew.binary("pow", ax, ord), axis=axis, keepdims=keepdims)
            r = _ew.binary("pow", s, 1.0 / ord)
    return _finish(r, dt)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: int | float | str = "fro") -> Array:
    """Norms of the matrices in the last two dimensions: "fro", "nuc", 1, -1, 2, -2, inf, -inf.

    Examples:
        >>> x = pm.asarray([[1.0, -2.0], [2.0, 4.0]])
        >>> pm.linalg.matrix_norm(x), pm.linalg.matrix_norm(x, ord=1)
        (Array(5., dtype=float32), Array(6., dtype=float32))
    """
    xa = _ew.as_array(x)
    if xa.ndim < 2:
        raise ValueError("linalg.matrix_norm: needs at least 2 dimensions, got shape %r" % (xa._shape,))
    if ord in ("nuc", 2, -2):
        s = svdvals(xa)
        s = _ew.astype(s, _dt.float32) if s._dtype != _dt.float32 else s
        red = {"nuc": _red.sum, 2: _red.max, -2: _red.min}[ord]
        r = _finish(red(s, axis=-1), s._dtype if _dt.kind(xa._dtype) == "c" else _result_dtype(xa))
    elif ord == "fro":
        r = vector_norm(xa, axis=(-2, -1))
    elif ord in (1, -1, math.inf, -math.inf):
        xf, dt = _norm_input(xa)
        # 1: largest column sum of |x|; inf: largest row sum; negative: the smallest.
        sums = _red.sum(_ew.unary("abs", xf), axis=-2 if ord in (1, -1) else -1)
        r = _finish((_red.max if ord > 0 else _red.min)(sums, axis=-1), dt)
    else:
        raise ValueError('linalg.matrix_norm: ord must be "fro", "nuc", 1, -1, 2, -2, inf or -inf, not %r' % (ord,))
    return r.reshape(r._shape + (1, 1)) if keepdims else r


def matrix_power(x: ArrayLike, n: int, /) -> Array:
    """x raised to the integer power n by repeated squaring (n < 0: of the inverse; n = 0: identity).

    Examples:
        >>> pm.linalg.matrix_power(pm.asarray([[1, 1], [0, 1]]), 3)
        Array([[1, 3],
               [0, 1]], dtype=int64)
    """
    x = _ew.as_array(x)
    if x.ndim < 2 or x._shape[-1] != x._shape[-2]:
        raise ValueError("linalg.matrix_power: needs square matrices, got shape %r" % (x._shape,))
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("linalg.matrix_power: n must be an integer, not %r" % (n,)) from None
    if n == 0:
        return _ew.ascontiguous(_eye(x._shape[-1], dtype=x._dtype, device=x.device).broadcast_to(x._shape))
    if n < 0:
        x, n = inv(x), -n
    result, base = None, x
    while True:  # result = product of base^(2^k) over the set bits of n
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return result if result is not x else _ew.ascontiguous(x, force=True)  # type: ignore[return-value]  # n > 0: set


def norm(x: ArrayLike, ord: int | float | str | None = None, axis: int | tuple[int, int] | None = None,
         keepdims: bool = False) -> Array:
    """NumPy's linalg.norm: a vector norm over one axis (or of a 1-D array), a matrix norm
    over two axes (or of a 2-D array), the 2-norm of all elements when ord and axis are None.

    Examples:
        >>> x = pm.asarray([[3.0, 4.0], [0.0, 0.0]])
        >>> pm.linalg.norm(x), pm.linalg.norm(x, axis=1), pm.linalg.norm(x, 1)
        (Array(5., dtype=float32), Array([5., 0.], dtype=float32), Array(4., dtype=float32))
    """
    xa = _ew.as_array(x)
    if axis is None:
        if ord is None:  # the 2-norm of the flattened array (Frobenius for matrices)
            r = vector_norm(xa, keepdims=keepdims)
            return r.reshape((1,) * xa.ndim) if keepdims else r
        if xa.ndim not in (1, 2):
            raise ValueError("linalg.norm: an ord needs a 1-D or 2-D array (or axis=), got shape %r" % (xa._shape,))
        axis = tuple(range(xa.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(normalize_axis(a, xa.ndim) for a in axes)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError("linalg.norm: invalid norm order %r for vectors" % (ord,))
        return vector_norm(xa, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError("linalg.norm: axis must be an int or two distinct axes, not %r" % (axis,))
    r = matrix_norm(moveaxis(xa, axes, (-2, -1)), ord="fro" if ord is None else ord)
    if keepdims:
        shape = list(xa._shape)
        shape[axes[0]] = shape[axes[1]] = 1
        r = r.reshape(tuple(shape))
    return r


def cond(x: ArrayLike, p: int | float | str | None = None) -> Array:
    """NumPy's linalg.cond: the condition number of square matrices (p None, 2 or -2: the ratio of
    the extreme singular values; other p: norm(x, p) * norm(inv(x), p)).

    Examples:
        >>> float(pm.linalg.cond(pm.asarray([[2.0, 0.0], [0.0, 0.5]])))
        4.0
    """
    xa = _ew.as_array(x)
    if xa.ndim < 2:
        raise LinAlgError("linalg.cond: x must be a matrix (or a stack of them), got shape %r" % (xa._shape,))
    if p is None or p in (2, -2):
        s = svdvals(xa)
        big, small = _red.max(s, axis=-1), _red.min(s, axis=-1)
        return small / big if p == -2 else big / small
    return matrix_norm(xa, ord=p) * matrix_norm(inv(xa), ord=p)


def multi_dot(arrays: list, *, out: Array | None = None) -> Array:
    """NumPy's linalg.multi_dot: the product of the matrices in order (the first may be 1-D, a row
    vector, and the last 1-D, a column vector), multiplied from the side giving the smaller
    intermediate products.

    Examples:
        >>> pm.linalg.multi_dot([pm.ones((2, 3)), pm.ones((3, 4)), pm.ones(4)])
        Array([12., 12.], dtype=float32)
    """
    ms = [_ew.as_array(a) for a in arrays]
    if len(ms) < 2:
        raise ValueError("linalg.multi_dot: needs at least two arrays")
    for i, m in enumerate(ms):
        if m.ndim not in (1, 2) or (m.ndim == 1 and 0 < i < len(ms) - 1):
            raise ValueError("linalg.multi_dot: array %d has shape %r; the first and last may be 1-D, the "
                             "others must be 2-D" % (i, m._shape))
    r = ms[0]
    if len(ms) == 3 and ms[0].ndim == 2 and ms[2].ndim == 2:  # the cheaper of (AB)C and A(BC)
        a, b, c = (m._shape for m in ms)
        if a[0] * a[1] * b[1] + a[0] * b[1] * c[1] > b[0] * b[1] * c[1] + a[0] * a[1] * c[1]:
            r = matmul(ms[0], matmul(ms[1], ms[2]))
            return _into_out(r, out)
    for m in ms[1:]:
        r = matmul(r, m)
    return _into_out(r, out)


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """NumPy's tensorinv: the inverse of a as a tensor product, a of shape I + J (I its first ind
    dimensions, prod(I) == prod(J)) inverted as a matrix and shaped J + I.

    Examples:
        >>> pm.linalg.tensorinv(pm.eye(4).reshape(4, 2, 2), ind=1).shape
        (2, 2, 4)
    """
    x = _ew.as_array(a)
    if ind <= 0:
        raise ValueError("linalg.tensorinv: ind must be a positive int, not %r" % (ind,))
    rows = math.prod(x.shape[ind:])
    if rows * rows != x.size:
        raise LinAlgError("linalg.tensorinv: a of shape %r is not 'square' (prod(shape[ind:]) squared "
                          "must be its size)" % (x.shape,))
    return inv(x.reshape(rows, rows)).reshape(x.shape[ind:] + x.shape[:ind])


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: Any = None) -> Array:
    """NumPy's tensorsolve: x with tensordot(a, x, x.ndim) == b, a of shape b.shape + x.shape
    (axes: a's axes to move to the end first), solved as one square system.

    Examples:
        >>> pm.linalg.tensorsolve(pm.eye(6).reshape(2, 3, 6), pm.ones((2, 3))).shape
        (6,)
    """
    x, y = _ew.as_array(a), _ew.as_array(b)
    if axes is not None:
        rest = [k for k in range(x.ndim) if k not in [normalize_axis(k2, x.ndim) for k2 in axes]]
        x = x.permute_dims(rest + [normalize_axis(k, x.ndim) for k in axes])
    shape = x.shape[y.ndim:]
    n = math.prod(shape)
    if n * n != x.size:
        raise LinAlgError("linalg.tensorsolve: a of shape %r does not make a square system with b of "
                          "shape %r (prod(a.shape[b.ndim:]) squared must be a's size)" % (x.shape, y.shape))
    return solve(x.reshape(n, n), y.reshape(n, 1))[:, 0].reshape(shape)


def _into_out(r: Array, out: Array | None) -> Array:
    if out is None:
        return r
    out[...] = r
    return out
