"""More of NumPy Generator's distributions, as transforms of pm.random's kernel samplers
(uniform, normal, exponential, gamma, Poisson, binomial): the textbook constructions NumPy
uses too (lognormal = exp(normal), chi-square = 2 gamma(df / 2), Student's t = normal /
sqrt(chi-square / df), multinomial = successive binomials, multivariate normal = mean +
z A with A^T A = cov, ...). Mixed into pm.random.Generator (pymetal/random.py); float32
values, int64 counts, as the other samplers.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .arrays.array import Array
from .arrays.construct import asarray
from .arrays import elementwise as _ew
from .arrays import reduce as _r
from .arrays.manipulation import stack

_F = _ew.FUNCTIONS
_OPEN = 2.0 ** -25  # half a float32 uniform's step: random() + _OPEN is in (0, 1), never 0 or 1

# NumPy's samplers that pm.random does not have: their names, for a clear error.
MISSING = ("hypergeometric", "logseries", "noncentral_chisquare", "noncentral_f", "vonmises", "zipf",
           "multivariate_hypergeometric", "permuted", "bytes")


def missing(owner: str, name: str) -> AttributeError:
    return AttributeError("%s.%s is not implemented in pymetal; draw it with NumPy (numpy.random.default_rng()."
                          "%s(...)) and convert the result with pm.asarray" % (owner, name, name))


def _param(x: Any) -> Any:
    """A distribution parameter: Python float for a scalar, float32 array otherwise."""
    if isinstance(x, Array):
        return x if x.ndim else float(x)
    return float(x) if np.ndim(x) == 0 else asarray(np.asarray(x, np.float32))


def _shape(size: Any, *params: Any) -> tuple[int, ...]:
    """size as a shape, or the parameters' broadcast shape without it."""
    if size is None:
        return tuple(np.broadcast_shapes(*(p.shape if isinstance(p, Array) else () for p in params)))
    return tuple(operator.index(s) for s in size) if isinstance(size, (tuple, list)) else (operator.index(size),)


def _check(bad: Any, message: str) -> None:
    if bool(_r.any(bad) if isinstance(bad, Array) else bad):
        raise ValueError(message)


class Distributions:
    """NumPy Generator's further distributions, from the kernel samplers (a mixin of Generator)."""

    def _open01(self: Any, shape: tuple[int, ...]) -> Array:
        return self.random(shape) + _OPEN

    def _location_scale(self: Any, loc: Any, scale: Any, size: Any, standard: Any) -> Array:
        """loc + scale * standard(u), u uniform in (0, 1): the inverse CDF of a location-scale family."""
        loc, scale = _param(loc), _param(scale)
        _check(scale < 0, "scale < 0")
        return loc + scale * standard(self._open01(_shape(size, loc, scale)))

    def lognormal(self: Any, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> Array:
        """Floats whose logarithm is normal (mean, sigma).

        Examples:
            >>> x = pm.random.default_rng(0).lognormal(0.0, 0.5, 100000)
            >>> round(float(pm.median(x)), 1)
            1.0
        """
        return _F["exp"](self.normal(_param(mean), _param(sigma), size))

    def laplace(self: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Array:
        """Laplace (double exponential) floats: loc plus the difference of two exponentials.

        Examples:
            >>> x = pm.random.default_rng(0).laplace(0.0, 2.0, 100000)
            >>> round(float(pm.mean(abs(x))), 1)
            2.0
        """
        loc, scale = _param(loc), _param(scale)
        _check(scale < 0, "scale < 0")
        shape = _shape(size, loc, scale)
        return loc + scale * (self.standard_exponential(shape) - self.standard_exponential(shape))

    def logistic(self: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Array:
        """Logistic floats: loc + scale log(u / (1 - u)).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).logistic(3.0, 1.0, 100000))), 1)
            3.0
        """
        return self._location_scale(loc, scale, size, lambda u: _F["log"](u / (1.0 - u)))

    def gumbel(self: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Array:
        """Gumbel floats: loc - scale log(-log(u)).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).gumbel(0.0, 1.0, 100000))), 2)
            0.58
        """
        return self._location_scale(loc, scale, size, lambda u: -_F["log"](-_F["log"](u)))

    def rayleigh(self: Any, scale: Any = 1.0, size: Any = None) -> Array:
        """Rayleigh floats: scale sqrt(2 E), E standard exponential.

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).rayleigh(1.0, 100000))), 2)
            1.25
        """
        scale = _param(scale)
        _check(scale < 0, "scale < 0")
        return scale * _F["sqrt"](2.0 * self.standard_exponential(_shape(size, scale)))

    def weibull(self: Any, a: Any, size: Any = None) -> Array:
        """Weibull floats of shape a: E ** (1 / a) (0 where a is 0, as NumPy).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).weibull(1.0, 100000))), 1)
            1.0
        """
        a = _param(a)
        _check(a < 0, "a < 0")
        e = self.standard_exponential(_shape(size, a))
        return _ew.where(a == 0, 0.0, e ** (1.0 / _ew.where(a == 0, 1.0, a)))

    def pareto(self: Any, a: Any, size: Any = None) -> Array:
        """Pareto II (Lomax) floats of shape a: exp(E / a) - 1.

        Examples:
            >>> round(float(pm.median(pm.random.default_rng(0).pareto(1.0, 100000))), 1)
            1.0
        """
        a = _param(a)
        _check(a <= 0, "a <= 0")
        return _F["expm1"](self.standard_exponential(_shape(size, a)) / a)

    def power(self: Any, a: Any, size: Any = None) -> Array:
        """Floats in [0, 1] with density a x ** (a - 1): (1 - exp(-E)) ** (1 / a).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).power(2.0, 100000))), 2)
            0.67
        """
        a = _param(a)
        _check(a <= 0, "a <= 0")
        return (-_F["expm1"](-self.standard_exponential(_shape(size, a)))) ** (1.0 / a)

    def standard_cauchy(self: Any, size: Any = None) -> Array:
        """Standard Cauchy floats: the ratio of two standard normals.

        Examples:
            >>> abs(float(pm.median(pm.random.default_rng(0).standard_cauchy(100000)))) < 0.05
            True
        """
        shape = _shape(size)
        return self.standard_normal(shape) / self.standard_normal(shape)

    def chisquare(self: Any, df: Any, size: Any = None) -> Array:
        """Chi-square floats with df degrees of freedom: 2 gamma(df / 2).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).chisquare(3.0, 100000))), 1)
            3.0
        """
        df = _param(df)
        _check(df <= 0, "df <= 0")
        return 2.0 * self.standard_gamma(df / 2.0, size=_shape(size, df))

    def standard_t(self: Any, df: Any, size: Any = None) -> Array:
        """Student's t floats: normal / sqrt(chi-square(df) / df).

        Examples:
            >>> round(float(pm.std(pm.random.default_rng(0).standard_t(10.0, 100000))), 1)
            1.1
        """
        df = _param(df)
        _check(df <= 0, "df <= 0")
        shape = _shape(size, df)
        return self.standard_normal(shape) / _F["sqrt"](self.chisquare(df, shape) / df)

    def f(self: Any, dfnum: Any, dfden: Any, size: Any = None) -> Array:
        """F floats: (chi-square(dfnum) / dfnum) / (chi-square(dfden) / dfden).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).f(5.0, 20.0, 100000))), 1)
            1.1
        """
        dfnum, dfden = _param(dfnum), _param(dfden)
        shape = _shape(size, dfnum, dfden)
        return (self.chisquare(dfnum, shape) / dfnum) / (self.chisquare(dfden, shape) / dfden)

    def triangular(self: Any, left: Any, mode: Any, right: Any, size: Any = None) -> Array:
        """Triangular floats on [left, right] peaking at mode (the inverse of its CDF at u).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).triangular(0.0, 1.0, 2.0, 100000))), 1)
            1.0
        """
        left, mode, right = _param(left), _param(mode), _param(right)
        _check(left > mode, "left > mode")
        _check(mode > right, "mode > right")
        _check(left == right, "left == right")
        u = self.random(_shape(size, left, mode, right))
        span = right - left
        fc = (mode - left) / span
        low = left + _F["sqrt"](u * span * (mode - left))
        high = right - _F["sqrt"]((1.0 - u) * span * (right - mode))
        return _ew.where(u < fc, low, high)

    def geometric(self: Any, p: Any, size: Any = None) -> Array:
        """The number of Bernoulli(p) trials up to the first success (int64, >= 1).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).geometric(0.25, 100000))), 1)
            4.0
        """
        p = _param(p)
        _check((p <= 0) | (p > 1) | (p != p) if isinstance(p, Array) else not 0 < p <= 1, "p <= 0, p > 1 or p is NaN")
        u = self._open01(_shape(size, p))
        k = _F["ceil"](_F["log1p"](-u) / _F["log1p"](-_ew.where(p == 1, 0.5, p)))
        return _ew.astype(_ew.where(p == 1, 1.0, _F["maximum"](k, 1.0)), np.dtype(np.int64))

    def negative_binomial(self: Any, n: Any, p: Any, size: Any = None) -> Array:
        """Failures before the n-th success of Bernoulli(p) trials (int64): Poisson of a gamma
        (n, (1 - p) / p) mean, as NumPy.

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).negative_binomial(5, 0.5, 100000))), 0)
            5.0
        """
        n, p = _param(n), _param(p)
        _check(n <= 0, "n <= 0")
        _check((p <= 0) | (p > 1) | (p != p) if isinstance(p, Array) else not 0 < p <= 1, "p <= 0, p > 1 or p is NaN")
        shape = _shape(size, n, p)
        return self.poisson(self.gamma(n, (1.0 - p) / p, shape))

    def wald(self: Any, mean: Any, scale: Any, size: Any = None) -> Array:
        """Wald (inverse Gaussian) floats (Michael, Schucany and Haas, as NumPy).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).wald(2.0, 1.0, 100000))), 1)
            2.0
        """
        mean, scale = _param(mean), _param(scale)
        _check(mean <= 0, "mean <= 0")
        _check(scale <= 0, "scale <= 0")
        shape = _shape(size, mean, scale)
        y = self.standard_normal(shape) ** 2 * mean
        x = mean + mean / (2.0 * scale) * (y - _F["sqrt"](4.0 * scale * y + y * y))
        return _ew.where(self.random(shape) * (mean + x) <= mean, x, mean * mean / x)

    def dirichlet(self: Any, alpha: Any, size: Any = None) -> Array:
        """Dirichlet vectors (each sums to 1): gamma(alpha_i) values over their sum.

        Examples:
            >>> x = pm.random.default_rng(0).dirichlet([1.0, 2.0, 3.0], 4)
            >>> x.shape, bool(pm.all(abs(x.sum(axis=1) - 1) < 1e-5))
            ((4, 3), True)
        """
        a = np.asarray(alpha.numpy() if isinstance(alpha, Array) else alpha, np.float64)
        if a.ndim != 1 or a.size == 0:
            raise ValueError("alpha must be a non-empty 1-D sequence, got shape %r" % (a.shape,))
        if np.any(a <= 0) or np.any(np.isnan(a)):
            raise ValueError("alpha <= 0")
        g = self.standard_gamma(asarray(a.astype(np.float32)), size=_shape(size) + (a.size,))
        return g / _r.sum(g, axis=-1, keepdims=True)

    def multinomial(self: Any, n: Any, pvals: Any, size: Any = None) -> Array:
        """Counts of n draws over len(pvals) categories (int64; the last axis is the category):
        the binomial count of each category among the draws left, in turn.

        Examples:
            >>> x = pm.random.default_rng(0).multinomial(20, [0.2, 0.3, 0.5], size=2)
            >>> x.shape, x.sum(axis=1).tolist()
            ((2, 3), [20, 20])
        """
        pv = np.asarray(pvals.numpy() if isinstance(pvals, Array) else pvals, np.float64)
        if pv.ndim != 1 or pv.size == 0:
            raise ValueError("pvals must be a non-empty 1-D sequence, got shape %r" % (pv.shape,))
        if np.any(pv < 0) or np.any(pv > 1) or np.any(np.isnan(pv)):
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if pv[:-1].sum() > 1.0 + 1e-12:
            raise ValueError("sum(pvals[:-1]) > 1.0")
        left: Any = n if isinstance(n, Array) and n.ndim else operator.index(n)
        _check(left < 0, "n < 0")
        shape = _shape(size, left)
        counts, rest = [], 1.0
        for p in pv[:-1]:  # one binomial per category, over all draws at once
            x = self.binomial(left, float(min(1.0, p / rest)) if rest > 0 else 0.0, shape)
            counts.append(x)
            left = left - x
            rest -= p
        counts.append(left if isinstance(left, Array) else asarray(np.full(shape, left, np.int64)))
        return stack(counts, axis=-1)

    def multivariate_normal(self: Any, mean: Any, cov: Any, size: Any = None, check_valid: str = "warn",
                            tol: float = 1e-8, *, method: str = "svd") -> Array:
        """Normal vectors of the given mean and covariance: mean + z A with z standard normal
        and A^T A = cov (from cov's decomposition, on the host: it is d x d).

        Examples:
            >>> x = pm.random.default_rng(0).multivariate_normal([0.0, 5.0], [[1.0, 0.0], [0.0, 4.0]], 50000)
            >>> x.shape, [round(v, 0) for v in x.mean(axis=0).tolist()]
            ((50000, 2), [0.0, 5.0])
        """
        m = np.asarray(mean.numpy() if isinstance(mean, Array) else mean, np.float64)
        c = np.asarray(cov.numpy() if isinstance(cov, Array) else cov, np.float64)
        if m.ndim != 1 or c.shape != (m.size, m.size):
            raise ValueError("mean must be 1-D and cov 2-D and square of the same size, got shapes %r and %r"
                             % (m.shape, c.shape))
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
        if method == "cholesky":
            a = np.linalg.cholesky(c).T
        elif method == "eigh":
            w, v = np.linalg.eigh(c)
            a = (v * np.sqrt(np.maximum(w, 0))).T
        else:
            _, s, vh = np.linalg.svd(c)
            a = np.sqrt(s)[:, None] * vh
            if check_valid != "ignore" and not np.allclose((vh.T * s) @ vh, c, rtol=tol, atol=tol):
                if check_valid == "raise":
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
                warnings.warn("covariance is not symmetric positive-semidefinite.", RuntimeWarning, stacklevel=2)
        z = self.standard_normal(_shape(size) + (m.size,))
        return z @ asarray(a.astype(np.float32)) + asarray(m.astype(np.float32))
