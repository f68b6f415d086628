"""NumPy's polynomial functions on pymetal arrays: polyfit, polyval, poly1d, roots, poly,
polyder, polyint, polyadd, polysub, polymul, polydiv (coefficients highest power first).

They compose pymetal's operations: polyfit is a least-squares solve of the (column-scaled)
Vandermonde system, polyval is Horner's rule (one multiply-add per coefficient over all of
x), roots are the eigenvalues of the companion matrix, polymul is a convolution.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes as _dt
from ..array import Array
from .. import elementwise as _ew
from .. import manipulation as _m
from .. import creation as _c
from .. import reduce as _r
from ..construct import asarray

__all__ = ["polyfit", "polyval", "poly1d", "roots", "poly", "polyder", "polyint", "polyadd", "polysub",
           "polymul", "polydiv"]


def _coeffs(p: Any, name: str) -> Array:
    """p's coefficients as a 1-D pymetal array (a poly1d gives its own)."""
    if isinstance(p, poly1d):
        return p.coeffs
    c = _ew.as_array(p)
    if c.ndim != 1:
        raise ValueError("%s: the coefficients must be one-dimensional (highest power first), got shape %r"
                         % (name, c.shape))
    return c


def _float(c: Array) -> Array:
    """c as a floating array (integers and bool give the default float, as NumPy's float64)."""
    return c if _dt.kind(c.dtype) in "fc" else _ew.astype(c, _dt.default_float)


def _trim(c: Array) -> Array:
    """Without leading zeros (one zero left for the zero polynomial), as NumPy's poly1d keeps them."""
    nz = np.flatnonzero(c.numpy())  # the coefficients are few: one host read
    return c[int(nz[0]):] if nz.size else c[-1:] if c.shape[0] else _c.zeros(1, dtype=c.dtype)


def polyval(p: Any, x: Any) -> Array:
    """p evaluated at x (Horner's rule), as np.polyval.

    Examples:
        >>> pm.polyval([3, 0, 1], pm.asarray([0, 1, 2]))
        Array([ 1,  4, 13], dtype=int64)
    """
    c = _coeffs(p, "polyval")
    if isinstance(x, poly1d):
        return _compose(c, x)  # type: ignore[return-value]  # NumPy's: a polynomial of a polynomial
    xv = _ew.as_array(x)
    # NumPy's start, x's zeros as 0 * x (so an infinite x gives NaN, as NumPy's); operators
    # only, so that a float64 x takes the float64 policy's path as every operator does.
    y = xv * 0
    for i in range(c.shape[0]):  # one pass per coefficient, each over all of x
        y = y * xv + c[i]
    return y


def _compose(c: Array, q: poly1d) -> poly1d:
    """The polynomial c(q(t)), for polyval of a poly1d."""
    r = poly1d([0])
    for i in range(c.shape[0]):
        r = r * q + poly1d(c[i:i + 1])
    return r


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False, w: Any = None,
            cov: bool = False) -> Any:
    """The least-squares polynomial of degree deg through (x, y), highest power first, as np.polyfit
    (y may be 2-D: one fit per column). full=True also returns (residuals, rank, singular values,
    rcond). Float32 (NumPy: float64).

    Examples:
        >>> c = pm.polyfit(pm.asarray([0.0, 1.0, 2.0]), pm.asarray([1.0, 3.0, 5.0]), 1)
        >>> [round(float(v), 4) for v in c]
        [2.0, 1.0]
    """
    from ... import linalg
    if cov:
        raise NotImplementedError("polyfit: cov=True is not supported; fit with full=True and compute the "
                                  "covariance from the residuals, or call numpy.polyfit on x.numpy()")
    deg = int(deg)
    if deg < 0:
        raise ValueError("polyfit: deg must be non-negative, got %d" % deg)
    xv, yv = _float(_ew.as_array(x)), _float(_ew.as_array(y))
    if xv.ndim != 1 or xv.shape[0] == 0:
        raise TypeError("polyfit: x must be a non-empty 1-D array, got shape %r" % (xv.shape,))
    if yv.ndim not in (1, 2) or yv.shape[0] != xv.shape[0]:
        raise TypeError("polyfit: y must be 1-D or 2-D with as many rows as x has values (%d), got shape %r"
                        % (xv.shape[0], yv.shape))
    from .more import vander
    lhs = vander(xv, deg + 1)
    rhs = yv
    if w is not None:
        wv = _float(_ew.as_array(w))
        if wv.shape != (xv.shape[0],):
            raise TypeError("polyfit: w must be 1-D with one weight per x value, got shape %r" % (wv.shape,))
        lhs = lhs * wv[:, None]
        rhs = rhs * (wv if rhs.ndim == 1 else wv[:, None])
    if rcond is None:
        rcond = xv.shape[0] * float(np.finfo(np.dtype(xv.dtype)).eps)
    scale = _ew.sqrt(_r.sum(lhs * lhs, axis=0))  # NumPy's column scaling: better conditioned
    scale = _ew.where(scale == 0, 1, scale)
    c, resids, rank, s = linalg.lstsq(lhs / scale, rhs, rcond=rcond)
    c = c / (scale if c.ndim == 1 else scale[:, None])
    if full:
        return c, resids, rank, s, rcond
    return c


def roots(p: Any) -> Array:
    """The roots of the polynomial p (eigenvalues of its companion matrix), as np.roots: real
    when every root is, else complex64.

    Examples:
        >>> sorted(float(r) for r in pm.roots([1, -3, 2]))
        [1.0, 2.0]
    """
    from ... import linalg
    c = _float(_coeffs(p, "roots"))
    nz = np.flatnonzero(c.numpy())
    if nz.size == 0:
        return _c.zeros(0, dtype=c.dtype)
    trailing = c.shape[0] - 1 - int(nz[-1])  # zero roots
    c = c[int(nz[0]):int(nz[-1]) + 1]
    n = c.shape[0] - 1
    if n < 1:
        return _c.zeros(trailing, dtype=c.dtype)
    comp = _c.zeros((n, n), dtype=c.dtype)
    if n > 1:
        comp[1:, :-1] = _c.eye(n - 1, dtype=c.dtype)
    comp[0, :] = -c[1:] / c[0]
    r = linalg.eigvals(comp)
    return _m.concat([r, _c.zeros(trailing, dtype=r.dtype)]) if trailing else r


def poly(seq_of_zeros: Any) -> Array:
    """The coefficients of the monic polynomial with these roots (or a square matrix's
    characteristic polynomial), as np.poly.

    Examples:
        >>> pm.poly([1.0, 2.0])
        Array([ 1., -3.,  2.], dtype=float32)
    """
    from ... import linalg
    z = _ew.as_array(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        z = linalg.eigvals(_float(z))
    elif z.ndim != 1:
        raise ValueError("poly: the input must be a 1-D sequence of roots or a square 2-D array")
    if z.shape[0] == 0:
        return _c.ones((), dtype=_float(z).dtype)  # NumPy's: the scalar 1
    a = _c.ones(1, dtype=_float(z).dtype)
    for i in range(z.shape[0]):
        a = polymul(a, _m.concat([_c.ones(1, dtype=a.dtype), -z[i:i + 1].astype(a.dtype)]))
    # complex roots in conjugate pairs give real coefficients (up to rounding): NumPy returns them real
    if _dt.kind(a.dtype) == "c" and bool(_r.all(abs(_ew.imag(a)) <= 1e-6 * (float(_r.max(abs(a))) + 1))):
        a = _ew.real(a)
    return a


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative of p, as np.polyder (a poly1d for a poly1d).

    Examples:
        >>> pm.polyder([1, 2, 3])
        Array([2, 2], dtype=int64)
    """
    if m < 0:
        raise ValueError("polyder: the order of the derivative must be non-negative, got %d" % m)
    c = _coeffs(p, "polyder")
    for _ in range(m):
        n = c.shape[0] - 1
        c = c[:-1] * _c.arange(n, 0, -1, dtype=_dt.int64)  # past the degree: empty, as NumPy's
    return poly1d(c) if isinstance(p, poly1d) else c


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative of p (integration constants k, default 0), as np.polyint.

    Examples:
        >>> pm.polyint([3, 2, 1])
        Array([1., 1., 1., 0.], dtype=float32)
    """
    if m < 0:
        raise ValueError("polyint: the order of the integral must be non-negative, got %d" % m)
    ks = [0.0] * m if k is None else list(np.atleast_1d(np.asarray(k)).tolist())
    if len(ks) == 1 and m > 1:
        ks = ks * m
    if len(ks) < m:
        raise ValueError("polyint: k must be a scalar or have one value per integration (%d)" % m)
    c = _float(_coeffs(p, "polyint"))
    for i in range(m):
        n = c.shape[0]
        c = _m.concat([c / _c.arange(n, 0, -1, dtype=c.dtype), _c.full(1, ks[i], dtype=c.dtype)])
    return poly1d(c) if isinstance(p, poly1d) else c


def _pair(a1: Any, a2: Any, name: str) -> tuple[Array, Array]:
    c1, c2 = _coeffs(a1, name), _coeffs(a2, name)
    d = c1.shape[0] - c2.shape[0]
    if d > 0:
        c2 = _m.concat([_c.zeros(d, dtype=c2.dtype), c2])
    elif d < 0:
        c1 = _m.concat([_c.zeros(-d, dtype=c1.dtype), c1])
    return c1, c2


def _wrap(r: Array, *args: Any) -> Any:
    return poly1d(r) if any(isinstance(a, poly1d) for a in args) else r


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials, as np.polyadd.

    Examples:
        >>> pm.polyadd([1, 2], [1, 0, 0])
        Array([1, 1, 2], dtype=int64)
    """
    c1, c2 = _pair(a1, a2, "polyadd")
    return _wrap(c1 + c2, a1, a2)


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials, as np.polysub.

    Examples:
        >>> pm.polysub([1, 2], [1, 0, 0])
        Array([-1,  1,  2], dtype=int64)
    """
    c1, c2 = _pair(a1, a2, "polysub")
    return _wrap(c1 - c2, a1, a2)


def polymul(a1: Any, a2: Any) -> Any:
    """The product of two polynomials (the convolution of their coefficients), as np.polymul.

    Examples:
        >>> pm.polymul([1, 1], [1, -1])
        Array([ 1,  0, -1], dtype=int64)
    """
    from .signal import convolve
    return _wrap(convolve(_coeffs(a1, "polymul"), _coeffs(a2, "polymul")), a1, a2)


def polydiv(u: Any, v: Any) -> tuple[Any, Any]:
    """(quotient, remainder) of polynomial division, as np.polydiv (long division over the
    coefficients, one step per quotient term).

    Examples:
        >>> pm.polydiv([1.0, -3.0, 2.0], [1.0, -1.0])
        (Array([ 1., -2.], dtype=float32), Array([0.], dtype=float32))
    """
    cu, cv = _float(_coeffs(u, "polydiv")), _float(_trim(_coeffs(v, "polydiv")))
    if not bool(_r.any(cv != 0)):
        raise ZeroDivisionError("polydiv: division by the zero polynomial")
    n, m = cu.shape[0] - 1, cv.shape[0] - 1
    dt = _dt.result_type(cu, cv)
    r = _ew.astype(cu, dt)
    q = _c.zeros(max(n - m + 1, 1), dtype=dt)
    scale = 1.0 / cv[0]
    for k in range(n - m + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + m + 1] = r[k:k + m + 1] - d * cv
    rem = r[max(n - m + 1, 0):] if m > 0 else _c.zeros(1, dtype=dt)
    rem = _trim_close(rem)
    return _wrap(q, u, v), _wrap(rem, u, v)


def _trim_close(r: Array) -> Array:
    """Drops leading remainder terms that are zero to float32 rounding (NumPy's test, isclose to 0
    with rtol 1e-14, is for float64)."""
    h = r.numpy()
    big = np.flatnonzero(np.abs(h) > 1e-6)
    return r[int(big[0]):] if big.size else r[-1:]


class poly1d:
    """A polynomial (NumPy's poly1d): ``p = pm.poly1d([1, -3, 2])``; ``p(x)`` evaluates it over
    arrays, ``p.roots``, ``p.deriv()``, ``p.integ()``, ``p + q``, ``p * q``, ``p ** 2``;
    ``poly1d(r, True)`` is the polynomial with roots r.

    Examples:
        >>> p = pm.poly1d([1, -3, 2])
        >>> p(pm.asarray([0, 1, 2]))
        Array([2, 0, 0], dtype=int64)
    """

    __hash__ = None  # type: ignore[assignment]  # mutable, as NumPy's

    def __init__(self, c_or_r: Any, r: bool = False, variable: str | None = None) -> None:
        if isinstance(c_or_r, poly1d):
            self._coeffs: Array = c_or_r._coeffs
            self._variable: str = variable or c_or_r._variable
            return
        c = poly(c_or_r) if r else _ew.as_array(c_or_r)
        if c.ndim > 1:
            raise ValueError("poly1d: the coefficients must be one-dimensional, got shape %r" % (c.shape,))
        if c.ndim == 0:
            c = _m.reshape(c, (1,))
        self._coeffs = _trim(c) if c.shape[0] else _c.zeros(1, dtype=c.dtype)
        self._variable = variable or "x"

    @property
    def coeffs(self) -> Array:
        """The coefficients, highest power first (leading zeros dropped).

        Examples:
            >>> pm.poly1d([0, 2, 1]).coeffs
            Array([2, 1], dtype=int64)
        """
        return self._coeffs

    c = coef = coefficients = coeffs

    @property
    def variable(self) -> str:
        """The variable's name in str(p).

        Examples:
            >>> pm.poly1d([1, 0], variable="t").variable
            't'
        """
        return self._variable

    @property
    def order(self) -> int:
        """The degree.

        Examples:
            >>> pm.poly1d([1, 0, 0]).order
            2
        """
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self) -> Array:
        """The roots (pm.roots of the coefficients).

        Examples:
            >>> pm.poly1d([1.0, -1.0]).roots
            Array([1.], dtype=float32)
        """
        return roots(self._coeffs)

    r = roots

    def __call__(self, val: Any) -> Any:
        """The polynomial at val (an array, a scalar or a poly1d: the composition).

        Examples:
            >>> pm.poly1d([1, 0, 1])(pm.asarray([0, 2]))
            Array([1, 5], dtype=int64)
        """
        return polyval(self._coeffs, val)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self._coeffs.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        return self.order

    def __getitem__(self, power: int) -> Any:
        """The coefficient of x**power (0 beyond the order), as NumPy's.

        Examples:
            >>> pm.poly1d([3, 2, 1])[2]
            3
        """
        if power < 0 or power > self.order:
            return self._coeffs.dtype.type(0)
        return self._coeffs[self.order - power].item()

    def __iter__(self):
        return iter(self._coeffs)

    def deriv(self, m: int = 1) -> poly1d:
        """The m-th derivative.

        Examples:
            >>> pm.poly1d([1, 0, 0]).deriv()
            poly1d([2, 0])
        """
        return polyder(self, m)

    def integ(self, m: int = 1, k: Any = 0) -> poly1d:
        """The m-th antiderivative (integration constants k).

        Examples:
            >>> pm.poly1d([2.0, 0.0]).integ()
            poly1d([1., 0., 0.])
        """
        return polyint(self, m, k)

    def __neg__(self) -> poly1d:
        return poly1d(-self._coeffs)

    def __pos__(self) -> poly1d:
        return self

    def __add__(self, other: Any) -> poly1d:
        return polyadd(self, other if isinstance(other, poly1d) else poly1d(other))

    __radd__ = __add__

    def __sub__(self, other: Any) -> poly1d:
        return polysub(self, other if isinstance(other, poly1d) else poly1d(other))

    def __rsub__(self, other: Any) -> poly1d:
        return polysub(poly1d(other), self)

    def __mul__(self, other: Any) -> poly1d:
        if np.isscalar(other):
            return poly1d(self._coeffs * other)
        return polymul(self, other if isinstance(other, poly1d) else poly1d(other))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if np.isscalar(other):
            return poly1d(self._coeffs / other)
        return polydiv(self, other if isinstance(other, poly1d) else poly1d(other))

    def __pow__(self, n: int) -> poly1d:
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError("poly1d: the power must be a non-negative integer, got %r" % (n,))
        r = poly1d([1])
        for _ in range(int(n)):
            r = r * self
        return r

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, poly1d):
            return NotImplemented
        return self._coeffs.shape == other._coeffs.shape and bool(_r.all(self._coeffs == other._coeffs))

    def __ne__(self, other: Any) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __repr__(self) -> str:
        return "poly1d(%s)" % np.array2string(self._coeffs.numpy(), separator=", ")

    def __str__(self) -> str:
        return str(np.poly1d(self._coeffs.numpy(), variable=self._variable))
