"""NumPy's names for the elementwise functions, the NumPy ufuncs pymetal composes
from them, and NumPy's ufunc methods on pymetal's binary functions (issue 23).

``pm.power``, ``pm.arctan2``, ... are the same functions as ``pm.pow``,
``pm.atan2`` (their NumPy names come from the op table in optable.py).
``pm.add.reduce / accumulate / outer / at / reduceat`` run kernels where pymetal
has one (sums, products, extremes, running sums and products, the sort-based
segmented sum of ``at``); other ufunc methods (``pm.subtract.accumulate``) run
NumPy's on the shared memory (pending work is waited for) and return pymetal
arrays.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from .. import elementwise as _ew
from .. import optable as _ops
from .. import reduce as _r
from .. import sorting as _s
from ... import dtypes as _dt
from ..array import Array, check_writeable
from ..construct import _new
from ..layout import normalize_axis
from .reduce import _bin, _float, into
from ..manipulation import concat
from ..reduce import _axes, _result_shape
from ..indexing import take
from .stats import segment_sums

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..._typing import ArrayLike

_A = _ew.as_array
_F = _ew.FUNCTIONS


# NumPy's names of the table's functions (power, arctan2, absolute, invert, left_shift, ...).
ALIASES = {op.numpy: _F[name] for name, op in list(_ops.UNARY.items()) + list(_ops.BINARY.items())
           if op.numpy and op.numpy not in ("conjugate",)}
del ALIASES["rint"]  # NumPy's rint of integers is float: below
ALIASES.update(mod=_F["remainder"], true_divide=_F["divide"], bitwise_not=_F["bitwise_invert"],
               bitwise_invert=_F["bitwise_invert"], amax=None, amin=None)
del ALIASES["amax"], ALIASES["amin"]  # (the reductions: set in _namespace)


def fmod(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """Remainder with the sign of the dividend (C's fmod), unlike remainder/mod.

    Examples:
        >>> pm.fmod(pm.asarray([-3, 3]), 2)
        Array([-1,  1], dtype=int64)
    """
    r = _bin("remainder", x1, x2)
    # remainder has the divisor's sign: where it differs from the dividend's, step back by x2
    fix = _bin("logical_and", _bin("not_equal", r, 0),
               _bin("not_equal", _bin("less", r, 0), _bin("less", x1, 0)))
    return into(_ew.where(fix, _bin("subtract", r, x2), r), out)


def degrees(x: ArrayLike, /, out: Array | None = None) -> Array:
    """Radians to degrees (also ``pm.rad2deg``).

    Examples:
        >>> pm.degrees(pm.asarray([pm.pi]))
        Array([180.], dtype=float32)
    """
    return into(_bin("multiply", _float(x), 180.0 / math.pi), out)


def radians(x: ArrayLike, /, out: Array | None = None) -> Array:
    """Degrees to radians (also ``pm.deg2rad``).

    Examples:
        >>> pm.radians(pm.asarray([180.0]))
        Array([3.1415927], dtype=float32)
    """
    return into(_bin("multiply", _float(x), math.pi / 180.0), out)


def fabs(x: ArrayLike, /, out: Array | None = None) -> Array:
    """Absolute values as floats (float32 for integers).

    Examples:
        >>> pm.fabs(pm.asarray([-1, 2]))
        Array([1., 2.], dtype=float32)
    """
    x = _A(x)
    if _dt.kind(x._dtype) == "c":
        raise TypeError("fabs is not defined for complex arrays; use pm.abs")
    return into(_ew.unary("abs", _float(x)), out)


def rint(x: ArrayLike, /, out: Array | None = None) -> Array:
    """Rounded to the nearest integer, halves to even, as floats (float32 for integers).

    Examples:
        >>> pm.rint(pm.asarray([0.5, 1.5, -2.5]))
        Array([ 0.,  2., -2.], dtype=float32)
    """
    return into(_ew.unary("round", _float(x)), out)


def fix(x: ArrayLike, out: Array | None = None) -> Array:
    """Rounded towards zero.

    Examples:
        >>> pm.fix(pm.asarray([-1.5, 1.5]))
        Array([-1.,  1.], dtype=float32)
    """
    return into(_ew.unary("trunc", x), out)


def round(a: ArrayLike, decimals: int = 0, out: Array | None = None) -> Array:
    """Rounded to `decimals` places, halves to even (NumPy's round; also ``pm.around``,
    ``pm.round_``). Integers with decimals < 0 round to tens, hundreds, ...

    Examples:
        >>> pm.round(pm.asarray([0.5, 1.5, 2.675]), 2)
        Array([0.5 , 1.5 , 2.68], dtype=float32)
        >>> pm.round(pm.asarray([1234, 5678]), -2)
        Array([1200, 5700], dtype=int64)
    """
    x = _A(a)
    d = int(decimals)
    if d == 0 or (d > 0 and _dt.kind(x._dtype) in "biu"):
        r = _ew.unary("round", x)
    elif _dt.kind(x._dtype) in "iu":  # to tens, hundreds: in floats, halves to even, as NumPy's
        s = 10.0 ** -d
        r = _ew.astype(_bin("multiply", _ew.unary("round", _bin("divide", _ew.astype(x, _dt.float32), s)), s), x._dtype)
    else:
        s = 10.0 ** d
        r = _bin("divide", _ew.unary("round", _bin("multiply", x, s)), s) if d > 0 else \
            _bin("multiply", _ew.unary("round", _bin("divide", x, 10.0 ** -d)), 10.0 ** -d)
    return into(r, out)


def fmax(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """Elementwise maximum ignoring NaNs (NaN only where both are NaN).

    Examples:
        >>> pm.fmax(pm.asarray([1.0, float("nan")]), pm.asarray([float("nan"), 2.0]))
        Array([1., 2.], dtype=float32)
    """
    return into(_nan_pick("maximum", x1, x2), out)


def fmin(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """Elementwise minimum ignoring NaNs (NaN only where both are NaN).

    Examples:
        >>> pm.fmin(pm.asarray([1.0, float("nan")]), pm.asarray([float("nan"), 2.0]))
        Array([1., 2.], dtype=float32)
    """
    return into(_nan_pick("minimum", x1, x2), out)


def _nan_pick(name, x1, x2):
    m = _bin(name, x1, x2)
    if _dt.kind(m._dtype) != "f":
        return m
    a, b = _A(x1), _A(x2)
    m = _ew.where(_ew.unary("isnan", a), b, m) if _dt.kind(a._dtype) == "f" else m
    return _ew.where(_ew.unary("isnan", b), a, m) if _dt.kind(b._dtype) == "f" else m


def cbrt(x: ArrayLike, /, out: Array | None = None) -> Array:
    """Cube root (of negative numbers too).

    Examples:
        >>> pm.cbrt(pm.asarray([-8.0, 27.0]))
        Array([-2.,  3.], dtype=float32)
    """
    x = _float(x)
    ax = _ew.unary("abs", x)
    r = _bin("pow", ax, 1.0 / 3.0)
    # one Newton step: pow(27, 1/3) is 3.0000002 in float32, NumPy's cbrt is exact
    step = _bin("divide", _bin("subtract", _bin("multiply", _bin("multiply", r, r), r), ax), _bin("multiply", _bin("multiply", r, r), 3.0))
    r = _ew.where(_bin("logical_and", _bin("greater", r, 0), _ew.unary("isfinite", r)), _bin("subtract", r, step), r)
    return into(_bin("copysign", r, x), out)


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex numbers (0 or pi for real ones).

    Examples:
        >>> pm.angle(pm.asarray([1j, -1.0]))
        Array([1.5707964, 3.1415927], dtype=float32)
    """
    z = _A(z)
    if _dt.kind(z._dtype) == "c":
        r = _bin("atan2", _ew.unary("imag", z), _ew.unary("real", z))
    else:
        zf = _float(z)
        r = _bin("atan2", _ew.fill(_new(zf._shape, zf._dtype, zf._buf.device), 0), zf)  # +0: pi for negatives
    return degrees(r) if deg else r


def divmod_(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:
    """(floor_divide(x1, x2), remainder(x1, x2)).

    Examples:
        >>> pm.divmod(pm.asarray([7, -7]), 2)
        (Array([ 3, -4], dtype=int64), Array([1, 1], dtype=int64))
    """
    return _bin("floor_divide", x1, x2), _bin("remainder", x1, x2)


divmod_.__name__ = divmod_.__qualname__ = "divmod"


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN stays NaN).

    Examples:
        >>> pm.heaviside(pm.asarray([-1.0, 0.0, 2.0]), 0.5)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    x = _float(x1)
    r = _ew.where(_bin("less", x, 0), 0.0, _ew.where(_bin("greater", x, 0), 1.0, x2))
    return _ew.where(_ew.unary("isnan", x), x, r)


def logaddexp2(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """log2(2**x1 + 2**x2) without overflow: the larger plus log2(1 + 2**-|x1 - x2|).

    Examples:
        >>> pm.logaddexp2(pm.asarray([1.0, 100.0]), pm.asarray([1.0, 100.0]))
        Array([  2., 101.], dtype=float32)
    """
    a, b = _float(x1), _float(x2)
    m = _bin("maximum", a, b)
    d = _ew.unary("abs", _bin("subtract", a, b))
    r = _bin("add", m, _bin("divide", _ew.unary("log1p", _ew.unary("exp2", _ew.unary("negative", d))), math.log(2.0)))
    return into(_ew.where(_bin("equal", a, b), _bin("add", a, 1.0), r), out)  # (inf == inf: not inf - inf)


def sinc(x: ArrayLike) -> Array:
    """sin(pi x) / (pi x), 1 at 0.

    Examples:
        >>> pm.sinc(pm.asarray([0.0, 0.5]))
        Array([1.        , 0.63661975], dtype=float32)
    """
    x = _float(x)
    y = _bin("multiply", _ew.where(_bin("equal", x, 0), 1e-20, x), math.pi)
    return _bin("divide", _ew.unary("sin", y), y)


def modf(x: ArrayLike, /) -> tuple[Array, Array]:
    """(fractional part, integral part), both with x's sign.

    Examples:
        >>> pm.modf(pm.asarray([-1.5, 2.25]))
        (Array([-0.5 ,  0.25], dtype=float32), Array([-1.,  2.], dtype=float32))
    """
    x = _float(x)
    i = _ew.unary("trunc", x)
    frac = _ew.where(_ew.unary("isinf", x), _bin("copysign", 0.0, x), _bin("subtract", x, i))
    return frac, i


def ldexp(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """x1 * 2**x2 (x2 integers).

    Examples:
        >>> pm.ldexp(pm.asarray([1.0, 3.0]), pm.asarray([3, -1]))
        Array([8. , 1.5], dtype=float32)
    """
    e = _A(x2)
    if _dt.kind(e._dtype) not in "biu":
        raise TypeError("ldexp: the exponents must be integers, not %s" % e._dtype)
    a = _float(x1)
    return into(_bin("multiply", a, _ew.unary("exp2", _ew.astype(e, a._dtype))), out)


def float_power(x1: ArrayLike, x2: ArrayLike, /, out: Array | None = None) -> Array:
    """x1 ** x2 in floating point (float32 here: NumPy's float64).

    Examples:
        >>> pm.float_power(pm.asarray([2, 3]), -1)
        Array([0.5       , 0.33333334], dtype=float32)
    """
    # is_scalar: a Python number (float() refuses a complex one, as before)
    b = _A(x2) if not _ew.is_scalar(x2) else float(cast("float", x2))
    return into(_bin("pow", _float(x1), _float(b) if isinstance(b, Array) else b), out)


def _euclid(a, b):
    """gcd of integer arrays: Euclid's steps on every element at once until all remainders are 0
    (a loop over steps, at most about 90 for 64-bit integers, each a few kernels)."""
    a, b = _ew.unary("abs", a), _ew.unary("abs", b)
    while b._size and bool(_r.any(b)):
        nz = _bin("not_equal", b, 0)
        safe = _ew.where(nz, b, 1)
        a, b = _ew.where(nz, b, a), _ew.where(nz, _bin("remainder", a, safe), 0)
    return a


def _int_pair(name, x1, x2):
    a, b = _A(x1), _A(x2)
    if _dt.kind(a._dtype) not in "iu" or _dt.kind(b._dtype) not in "iu":
        raise TypeError("%s needs integer arrays, not %s and %s" % (name, a._dtype, b._dtype))
    shape = _ew.broadcast_shapes(a._shape, b._shape)
    dt = _dt.promote_types(a._dtype, b._dtype)
    return tuple(_ew.ascontiguous(v.broadcast_to(shape) if v._dtype == dt else _ew.astype(v, dt).broadcast_to(shape),
                                  force=True) for v in (a, b))


def gcd(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Greatest common divisor of |x1| and |x2|.

    Examples:
        >>> pm.gcd(pm.asarray([12, 20, 0]), pm.asarray([18, -8, 5]))
        Array([6, 4, 5], dtype=int64)
    """
    return _euclid(*_int_pair("gcd", x1, x2))


def lcm(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Lowest common multiple of |x1| and |x2| (0 if either is 0).

    Examples:
        >>> pm.lcm(pm.asarray([4, 6, 0]), pm.asarray([6, 8, 3]))
        Array([12, 24,  0], dtype=int64)
    """
    a, b = _int_pair("lcm", x1, x2)
    g = _euclid(a, b)
    r = _bin("multiply", _ew.unary("abs", _bin("floor_divide", a, _ew.where(_bin("equal", g, 0), 1, g))), _ew.unary("abs", b))
    return r if r._dtype == a._dtype else _ew.astype(r, a._dtype)


def spacing(x: ArrayLike, /) -> Array:
    """The distance from x to the next representable number away from zero.

    Examples:
        >>> pm.spacing(pm.asarray([1.0])) == pm.finfo(pm.float32).eps
        Array([ True], dtype=bool)
    """
    x = _float(x)
    away = _ew.where(_ew.unary("signbit", x), float("-inf"), float("inf"))
    return _bin("subtract", _bin("nextafter", x, away), x)


def unwrap(p: ArrayLike, discont: float | None = None, axis: int = -1, *, period: float = 2 * math.pi) -> Array:
    """Phases with jumps larger than discont (default period / 2) replaced by their
    period-complement: the differences wrapped, their running sum added back.

    Examples:
        >>> pm.unwrap(pm.asarray([0.0, 4.0]))
        Array([ 0.      , -2.283185], dtype=float32)
    """
    p = _float(p)
    axis = normalize_axis(axis, p.ndim)
    if p._shape[axis] < 2:
        return _ew.ascontiguous(p, force=True)
    discont = period / 2 if discont is None else max(discont, period / 2)
    sl = lambda a, b: p[(slice(None),) * axis + (slice(a, b),)]  # noqa: E731
    dd = _bin("subtract", sl(1, None), sl(None, -1))
    half = period / 2
    ddmod = _bin("subtract", _bin("remainder", _bin("add", dd, half), period), half)
    ddmod = _ew.where(_bin("logical_and", _bin("equal", ddmod, -half), _bin("greater", dd, 0)), half, ddmod)
    fix = _ew.where(_bin("less", _ew.unary("abs", dd), discont), 0.0, _bin("subtract", ddmod, dd))
    return concat([sl(0, 1), _bin("add", sl(1, None), _s.cumulative_sum(fix, axis=axis))], axis=axis)


def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """The real part of a complex array whose imaginary parts are all within tol machine
    epsilons of zero; otherwise (and for real arrays) the array.

    Examples:
        >>> pm.real_if_close(pm.asarray([2.0 + 1e-9j]))
        Array([2.], dtype=float32)
    """
    a = _A(a)
    if _dt.kind(a._dtype) != "c":
        return a
    eps = float(_dt.finfo(_dt.float32).eps) * tol if tol > 1 else tol
    if bool(_r.all(_bin("less", _ew.unary("abs", _ew.unary("imag", a)), eps))):
        return _ew.unary("real", a)
    return a


# ---- ufunc methods ---------------------------------------------------------------------------

_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "sum", "multiply": "prod"}


def _in_numpy(name, method, args, kwargs):
    """A ufunc method pymetal has no kernel for: NumPy's, on the shared memory."""
    from ..interop import _host  # at call time: interop imports this module
    ufunc = getattr(np, _ops.BINARY[name].numpy or name)
    res = getattr(ufunc, method)(*_host(args), **_host(kwargs))
    return res if res is None else _A(np.asarray(res))


def _methods(name):
    fn = _F[name]

    def reduce(array: ArrayLike, axis: Any = 0, dtype: Any = None, out: Array | None = None,
               keepdims: bool = False, initial: Any = None, where: Any = True) -> Array:
        """The reduction of array over axis by this ufunc (pm.add.reduce is pm.sum over axis 0).

        Examples:
            >>> pm.add.reduce(pm.asarray([[1, 2], [3, 4]]))
            Array([4, 6], dtype=int64)
        """
        if name not in _REDUCE or where is not True:
            kw = dict(axis=axis, dtype=dtype, keepdims=keepdims, where=where)
            if initial is not None:
                kw["initial"] = initial
            return into(_in_numpy(name, "reduce", (array,), kw), out)
        x = _A(array)
        kw = {"dtype": dtype} if dtype is not None and name in ("add", "multiply") else {}
        if initial is not None and x._size == 0 and name in ("maximum", "minimum"):  # no identity to reduce from
            shape = _result_shape(x._shape, _axes(axis, x.ndim), keepdims)
            res = _ew.fill(_new(shape, _dt.check_dtype(dtype or x._dtype), x._buf.device), initial)
        else:
            res = getattr(_r, _REDUCE[name])(x, axis=axis, keepdims=keepdims, **kw)
            if initial is not None:
                res = fn(res, initial)
        if dtype is not None and res._dtype != _dt.check_dtype(dtype):
            res = _ew.astype(res, _dt.check_dtype(dtype))
        return into(res, out)

    def accumulate(array: ArrayLike, axis: int = 0, dtype: Any = None, out: Array | None = None) -> Array:
        """Running results of this ufunc along axis, in the input's dtype (pm.add.accumulate: a scan kernel).

        Examples:
            >>> pm.add.accumulate(pm.asarray([1, 2, 3]))
            Array([1, 3, 6], dtype=int64)
        """
        if name not in _ACCUMULATE:
            return into(_in_numpy(name, "accumulate", (array,), dict(axis=axis, dtype=dtype)), out)
        x = _A(array)
        if x.ndim == 0:
            raise TypeError("accumulate of a 0-d array")
        dt = None
        if dtype is not None:  # NumPy casts the input to dtype first
            dt = _dt.check_dtype(dtype)
            x = x if x._dtype == dt else _ew.astype(x, dt)
        f = _s.cumulative_sum if name == "add" else _s.cumulative_prod
        return into(f(x, axis=normalize_axis(axis, x.ndim), dtype=dt), out)  # (no dtype: sum's, as NumPy's)

    def outer(A: ArrayLike, B: ArrayLike, /, out: Array | None = None) -> Array:
        """This ufunc of every pair (a, b): shape A.shape + B.shape (broadcast views, one kernel).

        Examples:
            >>> pm.multiply.outer(pm.asarray([1, 2]), pm.asarray([1, 10]))
            Array([[ 1, 10],
                   [ 2, 20]], dtype=int64)
        """
        a, b = _A(A), _A(B)
        return into(fn(a.reshape(a._shape + (1,) * b.ndim), b), out)

    def at(a: Array, indices: Any, b: Any = None, /) -> None:
        """Unbuffered in place a[indices] op= b: repeated indices all count. add/subtract: a sort
        of the indices and a segmented sum (kernels); other ufuncs: NumPy's on the shared memory.

        Examples:
            >>> x = pm.zeros(3, pm.int64)
            >>> pm.add.at(x, pm.asarray([0, 0, 2]), 1)
            >>> x
            Array([2, 0, 1], dtype=int64)
        """
        if not isinstance(a, Array):
            raise TypeError("%s.at: the first argument must be a pymetal Array (it is changed in place)" % name)
        check_writeable(a)
        idx = None if isinstance(indices, tuple) or b is None else _A(indices)
        if name not in ("add", "subtract") or idx is None or _dt.kind(idx._dtype) not in "iu" or idx.ndim != 1:
            _in_numpy(name, "at", (a, indices) + (() if b is None else (b,)), {})
            return None
        _add_at(a, idx, b, negate=name == "subtract")
        return None

    def reduceat(array: ArrayLike, indices: Any, axis: int = 0, dtype: Any = None, out: Array | None = None) -> Array:
        """Reductions over the slices [indices[i], indices[i+1]) along axis (NumPy's, on the shared memory).

        Examples:
            >>> pm.add.reduceat(pm.arange(8), [0, 4, 5])
            Array([ 6,  4, 18], dtype=int64)
        """
        return into(_in_numpy(name, "reduceat", (array, indices), dict(axis=axis, dtype=dtype)), out)

    for m in (reduce, accumulate, outer, at, reduceat):
        m.__qualname__ = "%s.%s" % (name, m.__name__)
        setattr(fn, m.__name__, m)


def _add_at(a, idx, b, negate):
    """a[idx] += b with repeated indices summed: b's rows summed per index (segment_sums), one
    gather of a's rows, one scatter of the new ones."""
    n = a._shape[0] if a.ndim else 0
    if a.ndim == 0:
        raise TypeError("at: a 0-d array has no indices")
    m = idx._size
    if m == 0:
        return
    idx = _ew.where(_bin("less", idx, 0), _bin("add", idx, n), idx) if _dt.kind(idx._dtype) == "i" else idx
    if bool(_r.any(_bin("less", idx, 0))) or bool(_r.any(_bin("greater_equal", idx, n))):
        raise IndexError("at: an index is out of bounds for an axis of size %d" % n)
    rows = (m,) + a._shape[1:]
    acc = _dt.int64 if _dt.kind(a._dtype) in "biu" else _dt.promote_types(a._dtype, _dt.float32)
    vals = _A(b)
    vals = _ew.ascontiguous((vals if vals._dtype == acc else _ew.astype(vals, acc)).broadcast_to(rows))
    where, sums = segment_sums(idx, vals)
    cur = take(a, where, axis=0)
    new = _bin("subtract" if negate else "add", cur, sums)
    a[where] = new if new._dtype == a._dtype else _ew.astype(new, a._dtype)


for _name, _op in _ops.BINARY.items():
    if isinstance(getattr(np, _op.numpy or _name, None), np.ufunc):  # (not leaky_relu)
        _methods(_name)



def ufunc_attributes(namespace: dict) -> None:
    """NumPy's ufunc attributes on the namespace's functions of NumPy's ufuncs' names, which NumPy
    code reads (np.add.identity as a reduction's start, f.nin to count arguments)."""
    for name, fn in namespace.items():
        uf = getattr(np, name, None)
        if isinstance(uf, np.ufunc) and callable(fn) and not hasattr(fn, "nin"):
            for attr in ("nin", "nout", "nargs", "identity", "signature"):
                setattr(fn, attr, getattr(uf, attr))
