"""More of NumPy Generator's distributions, as transforms of pm.random's kernel samplers
(uniform, normal, exponential, gamma, Poisson, binomial): the textbook constructions NumPy
uses too (lognormal = exp(normal), chi-square = 2 gamma(df / 2), Student's t = normal /
sqrt(chi-square / df), multinomial = successive binomials, multivariate normal = mean +
z A with A^T A = cov, ...). Mixed into pm.random.Generator (pymetal/random.py); float32
values, int64 counts, as the other samplers.

Four samplers whose algorithms are rejection loops with several branches (hypergeometric,
multivariate_hypergeometric, vonmises, zipf) draw on the host: NumPy's Generator over a
Philox bit generator keyed by this generator's next draw (as the float64 host path), so a
seed still gives the same values every time.
"""

from __future__ import annotations

import builtins
import operator
import warnings
from typing import Any

import numpy as np

from .arrays.array import Array
from .arrays.construct import asarray
from .arrays import elementwise as _ew
from .arrays import reduce as _r
from .arrays.indexing import take
from .arrays.manipulation import moveaxis, stack
from .arrays.sorting import argsort

_F = _ew.FUNCTIONS
_SPLIT = 2.0 ** 20  # geometric(): X's integer part in two float32-exact pieces
_REDRAWS = 64  # rounds of redrawing random()'s zeros (2**-24 of its values): never all used


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
        """Uniform floats in (0, 1), for inverse CDFs that take log(u) or log(1 - u): random()'s
        [0, 1) with its zeros redrawn. (Adding half a step instead rounds random()'s largest
        value, 1 - 2**-24, up to 1.0 in float32: log(1 - u) = -inf.)"""
        u = self.random(shape)
        for _ in range(_REDRAWS):
            zero = u == 0
            if not bool(_r.any(zero)):
                return u
            u = _ew.where(zero, self.random(shape), u)
        raise RuntimeError("pm.random: could not draw a nonzero uniform")  # pragma: no cover

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
        sigma = _param(sigma)
        _check(sigma < 0, "sigma < 0")
        return _F["exp"](self.normal(_param(mean), sigma, size))

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
        _check(dfnum <= 0, "dfnum <= 0")
        _check(dfden <= 0, "dfden <= 0")
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
        _check((p <= 0) | (p > 1) | (p != p) if isinstance(p, Array) else not 0 < p <= 1, "p <= 0, p > 1 or p contains NaNs")
        shape = _shape(size, p)
        # k = 1 + floor(X), X exponential of rate lam = -log(1 - p) (inf for p = 1). float32 holds
        # X's integer part only below 2**24 (p = 1e-8 gave multiples of 8), so X is split at
        # multiples of _SPLIT (memorylessness): floor(X / _SPLIT) = floor(E / (lam _SPLIT)), and
        # X mod _SPLIT, independent of it, is an exponential truncated to [0, _SPLIT).
        with np.errstate(divide="ignore"):
            lam = -_F["log1p"](-p) if isinstance(p, Array) else float(-np.log1p(-p))
            q = -_F["expm1"](-lam * _SPLIT) if isinstance(p, Array) else float(-np.expm1(-lam * _SPLIT))
        whole = _F["floor"](-_F["log"](self._open01(shape)) / (lam * _SPLIT))
        part = _F["floor"](-_F["log1p"](-self._open01(shape) * q) / lam)
        whole = _F["minimum"](whole, 2.0 ** 40)  # k below 2**61 (p under 1e-12 or so: NumPy's k is not a float's)
        part = _F["minimum"](part, _SPLIT - 1)  # (rounding can reach _SPLIT)
        i64 = np.dtype(np.int64)
        return 1 + _ew.astype(whole, i64) * int(_SPLIT) + _ew.astype(part, i64)

    def negative_binomial(self: Any, n: Any, p: Any, size: Any = None) -> Array:
        """Failures before the n-th success of Bernoulli(p) trials (int64): Poisson of a gamma
        (n, (1 - p) / p) mean, as NumPy.

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).negative_binomial(5, 0.5, 100000))), 0)
            5.0
        """
        n, p = _param(n), _param(p)
        _check(n <= 0, "n <= 0")
        _check((p <= 0) | (p > 1) | (p != p) if isinstance(p, Array) else not 0 < p <= 1, "p <= 0, p > 1 or p contains NaNs")
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
        # The smaller root, mean + mean / (2 scale) (y - sqrt(4 scale y + y**2)), without the
        # difference of near-equal terms (float32 rounds it to 0 or below once y >> scale).
        r = y + _F["sqrt"](4.0 * scale * y + y * y)
        x = _ew.where(y == 0, mean + 0.0 * y, 4.0 * mean * scale * y / (r * r))
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
        if np.any(a < 0) or np.any(np.isnan(a)):
            raise ValueError("alpha < 0")
        # In log space: float32 gammas of a small alpha underflow to 0 (a third of them for
        # alpha = 0.01), and a row of zeros has no proportions. log G(a) = log G(a + 1) + log(u) / a
        # (-inf for a = 0: that component is 0, as NumPy's).
        shape = _shape(size) + (a.size,)
        alpha = asarray(a.astype(np.float32))
        lg = _F["log"](self.standard_gamma(alpha + 1.0, size=shape)) + _F["log"](self._open01(shape)) / alpha
        top = _r.max(lg, axis=-1, keepdims=True)
        e = _F["exp"](lg - _ew.where(top == -np.inf, 0.0, top))
        total = _r.sum(e, axis=-1, keepdims=True)
        return _ew.where(total == 0, 0.0, e / _ew.where(total == 0, 1.0, total))  # all-zero alpha: zeros, as NumPy

    def multinomial(self: Any, n: Any, pvals: Any, size: Any = None) -> Array:
        """Counts of n draws over len(pvals) categories (int64; the last axis is the category):
        the binomial count of each category among the draws left, in turn.

        Examples:
            >>> x = pm.random.default_rng(0).multinomial(20, [0.2, 0.3, 0.5], size=2)
            >>> x.shape, x.sum(axis=1).tolist()
            ((2, 3), [20, 20])
        """
        p = np.asarray(pvals.numpy() if isinstance(pvals, Array) else pvals, np.float64)
        if p.ndim == 0 or p.shape[-1] == 0:
            raise ValueError("pvals must have at least 1 dimension and 1 category, got shape %r" % (p.shape,))
        if np.any(p < 0) or np.any(p > 1) or np.any(np.isnan(p)):
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if np.any(p[..., :-1].sum(axis=-1) > 1.0 + 1e-12):
            raise ValueError("sum(pvals[:-1]) > 1.0")
        nn = np.asarray(n.numpy() if isinstance(n, Array) else n)
        if np.any(nn < 0):
            raise ValueError("n < 0")
        # n and the rows of pvals broadcast (NumPy's rule), to size if given.
        rows = np.broadcast_shapes(nn.shape, p.shape[:-1])
        shape = rows if size is None else _shape(size)
        if np.broadcast_shapes(shape, rows) != shape:
            raise ValueError("n and pvals of shapes %s and %s do not broadcast to size %r" % (nn.shape, p.shape, shape))
        # P(category j | not one of 0..j-1), in float64 on the host (k values a row of pvals).
        rest = 1.0 - np.concatenate([np.zeros(p.shape[:-1] + (1,)), np.cumsum(p, axis=-1)[..., :-1]], axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = np.clip(np.where(rest > 0, p / rest, 0.0), 0.0, 1.0)
        left = asarray(np.broadcast_to(nn, shape).astype(np.int64))
        counts = []
        for j in range(p.shape[-1] - 1):  # one binomial per category, over all draws at once
            c = cond[..., j]
            x = self.binomial(left, float(c) if c.ndim == 0 else asarray(np.broadcast_to(c, shape)), shape)
            counts.append(x)
            left = left - x
        counts.append(left)
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
        if m.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        if c.ndim != 2 or c.shape[0] != c.shape[1]:
            raise ValueError("cov must be 2 dimensional and square")
        if c.shape[0] != m.size:
            raise ValueError("mean and cov must have same length")
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
        psd = True
        if method == "cholesky":
            a = np.linalg.cholesky(c).T  # LinAlgError if cov is not positive definite, as NumPy
        elif method == "eigh":
            w, v = np.linalg.eigh(c)
            a = (v * np.sqrt(np.maximum(w, 0))).T
            psd = not np.any(w < -tol)  # NumPy's test for eigh
        else:
            _, s, vh = np.linalg.svd(c)
            a = np.sqrt(s)[:, None] * vh
            psd = np.allclose((vh.T * s) @ vh, c, rtol=tol, atol=tol)
        if check_valid != "ignore" and not psd:
            if check_valid == "raise":
                raise ValueError("covariance is not symmetric positive-semidefinite.")
            warnings.warn("covariance is not symmetric positive-semidefinite.", RuntimeWarning, stacklevel=2)
        z = self.standard_normal(_shape(size) + (m.size,))
        return z @ asarray(a.astype(np.float32)) + asarray(m.astype(np.float32))

    def noncentral_chisquare(self: Any, df: Any, nonc: Any, size: Any = None) -> Array:
        """Noncentral chi-square floats: a Poisson(nonc / 2) mixture of chi-square(df + 2 i),
        one formula for every df > 0 and nonc >= 0 (nonc = 0 gives chi-square(df)).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).noncentral_chisquare(3.0, 2.0, 100000))), 1)
            5.0
        """
        df, nonc = _param(df), _param(nonc)
        _check(df <= 0, "df <= 0")
        _check((nonc < 0) | (nonc != nonc) if isinstance(nonc, Array) else not nonc >= 0, "nonc < 0")
        shape = _shape(size, df, nonc)
        i = self.poisson(nonc / 2.0, shape).astype(np.float32)
        return 2.0 * self.standard_gamma(df / 2.0 + i, size=shape)

    def noncentral_f(self: Any, dfnum: Any, dfden: Any, nonc: Any, size: Any = None) -> Array:
        """Noncentral F floats: (noncentral chi-square(dfnum, nonc) / dfnum) / (chi-square(dfden) / dfden).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).noncentral_f(5.0, 20.0, 5.0, 100000))), 1)
            2.2
        """
        dfnum, dfden, nonc = _param(dfnum), _param(dfden), _param(nonc)
        _check(dfnum <= 0, "dfnum <= 0")
        _check(dfden <= 0, "dfden <= 0")
        _check((nonc < 0) | (nonc != nonc) if isinstance(nonc, Array) else not nonc >= 0, "nonc < 0")
        shape = _shape(size, dfnum, dfden, nonc)
        num = self.noncentral_chisquare(dfnum, nonc, shape) * dfden
        return num / (self.chisquare(dfden, shape) * dfnum)

    def logseries(self: Any, p: Any, size: Any = None) -> Array:
        """Log-series int64 values >= 1 (Kemp's algorithm, NumPy's; v in (0, 1) spares its retry).

        Examples:
            >>> x = pm.random.default_rng(0).logseries(0.5, 100000)
            >>> int(x.min()), round(float(pm.mean(x.astype(pm.float32))), 2)
            (1, 1.44)
        """
        p = _param(p)
        _check((p < 0) | (p >= 1) | (p != p) if isinstance(p, Array) else not 0 <= p < 1, "p < 0, p >= 1 or p is NaN")
        shape = _shape(size, p)
        v, u = self._open01(shape), self._open01(shape)
        q = -_F["expm1"](_F["log1p"](-p) * u)
        k = _F["floor"](1.0 + _F["log"](v) / _F["log"](q))
        two = _ew.where(v >= q, 1.0, 2.0)
        return _ew.astype(_ew.where(v >= p, 1.0, _ew.where(v <= q * q, k, two)), np.dtype(np.int64))

    def zipf(self: Any, a: Any, size: Any = None) -> Array:
        """Zipf int64 values >= 1 (drawn on the host: see the module's docstring).

        Examples:
            >>> x = pm.random.default_rng(0).zipf(3.0, 1000)
            >>> x.dtype, int(x.min())
            (dtype('int64'), 1)
        """
        a = _param(a)
        _check((a <= 1) | (a != a) if isinstance(a, Array) else not a > 1, "a <= 1 or a is NaN")
        return self._host("zipf", a, size=size)

    def vonmises(self: Any, mu: Any, kappa: Any, size: Any = None) -> Array:
        """Von Mises floats on [-pi, pi] (drawn on the host: see the module's docstring).

        Examples:
            >>> round(float(pm.mean(pm.cos(pm.random.default_rng(0).vonmises(0.0, 4.0, 100000)))), 2)
            0.86
        """
        kappa = _param(kappa)
        _check((kappa < 0) | (kappa != kappa) if isinstance(kappa, Array) else not kappa >= 0, "kappa < 0")
        return self._host("vonmises", mu, kappa, size=size)

    def hypergeometric(self: Any, ngood: Any, nbad: Any, nsample: Any, size: Any = None) -> Array:
        """The number of good items among nsample drawn without replacement from ngood good and
        nbad bad ones (int64; drawn on the host: see the module's docstring).

        Examples:
            >>> x = pm.random.default_rng(0).hypergeometric(10, 5, 6, 100000)
            >>> int(x.min()), int(x.max()), round(float(pm.mean(x.astype(pm.float32))), 1)
            (1, 6, 4.0)
        """
        return self._host("hypergeometric", ngood, nbad, nsample, size=size)

    def multivariate_hypergeometric(self: Any, colors: Any, nsample: int, size: Any = None,
                                    method: str = "marginals") -> Array:
        """Counts of each color among nsample items drawn without replacement (int64, last axis the
        color; drawn on the host: see the module's docstring).

        Examples:
            >>> x = pm.random.default_rng(0).multivariate_hypergeometric([3, 4, 5], 6, size=4)
            >>> x.shape, x.sum(axis=1).tolist()
            ((4, 3), [6, 6, 6, 6])
        """
        return self._host("multivariate_hypergeometric", colors, nsample, size=size, method=method)

    def _host(self: Any, name: str, *params: Any, size: Any = None, **kwargs: Any) -> Array:
        """NumPy's Generator.<name> over a Philox keyed by this generator's next draw."""
        key = self._draw("integers", (2,), np.dtype(np.uint64), low=0, range_=0).numpy()
        host = np.random.Generator(np.random.Philox(key=key))
        args = [p.numpy() if isinstance(p, Array) else p for p in params]
        v = np.asarray(getattr(host, name)(*args, size=size, **kwargs))
        return asarray(v.astype(np.float32) if v.dtype.kind == "f" else v)  # float32, as the device's

    def permuted(self: Any, x: Any, *, axis: int | None = None, out: Array | None = None) -> Array:
        """x shuffled along axis, each slice on its own (all of x when axis is None), into out if
        given (out may be x): the order of random 64-bit keys along the axis.

        Examples:
            >>> x = pm.random.default_rng(0).permuted(pm.arange(6).reshape(2, 3), axis=1)
            >>> [sorted(row) for row in x.tolist()]
            [[0, 1, 2], [3, 4, 5]]
        """
        a = x if isinstance(x, Array) else asarray(x)
        if out is not None and (not isinstance(out, Array) or tuple(out.shape) != tuple(a.shape)):
            raise ValueError("out must be a pymetal array of x's shape %s" % (tuple(a.shape),))
        b = a.reshape(-1) if axis is None else moveaxis(a, axis, -1)  # the slices: b's rows
        if b.ndim and b.size:
            keys = self._draw("integers", tuple(b.shape), np.dtype(np.uint64), low=0, range_=0)
            order = argsort(keys, axis=-1, stable=True).astype(np.int64)
            n = b.shape[-1]
            starts = asarray(np.arange(0, b.size, n, dtype=np.int64).reshape(b.shape[:-1] + (1,)))
            # one gather of the flat array (take moves every dtype, float64 host arrays too)
            b = take(b.reshape(-1), (order + starts).reshape(-1), axis=0).reshape(b.shape)
        res = (b if axis is None else moveaxis(b, -1, axis)).reshape(a.shape)
        if out is None:
            return res
        out[...] = res
        return out

    def bytes(self: Any, length: int) -> builtins.bytes:
        """length random bytes (a Python bytes object, as NumPy's).

        Examples:
            >>> b = pm.random.default_rng(0).bytes(4)
            >>> type(b), len(b)
            (<class 'bytes'>, 4)
        """
        n = operator.index(length)
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
        return self._draw("integers", (n,), np.dtype(np.uint8), low=0, range_=256).numpy().tobytes()

