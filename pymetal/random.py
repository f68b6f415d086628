"""pm.random: NumPy's random API, with the numbers drawn by Metal kernels.

``pm.random.default_rng(seed)`` gives a :class:`Generator` with the methods of
NumPy's (``random``, ``integers``, ``normal``, ``choice``, ``permutation``, ...);
the module-level functions (``seed``, ``rand``, ``randn``, ``randint``, ...)
are NumPy's legacy ones, on one generator of the module's.

The generator is Philox4x32-10, counter-based (as cuRAND's and JAX's
default): each value is a function of the seed, the number of the
generator's call and the value's index (Shaders/random.h), so a seed gives
the same arrays on every device and at any thread count. Seeds go through
NumPy's ``SeedSequence`` (``spawn`` gives independent generators, as
NumPy's). The streams are not NumPy's (NumPy's default is PCG64), and each
call draws from a fresh counter range: ``rng.random(2)`` twice is not
``rng.random(4)``.

Floating-point results are float32 by default (``dtype=`` float16, bfloat16);
``size=None`` gives a 0-d array, as CuPy.
"""

from __future__ import annotations

import math
import operator
import threading
from typing import Any

import numpy as np

from .arrays.array import Array
from .arrays.construct import asarray, empty
from .arrays.layout import normalize_shape
from .arrays.kernels.random import fill
from .arrays.manipulation import ascontiguousarray, broadcast_to
from .runtime.device import resolve
from .arrays.reduce import any as _any
from .dtypes import bfloat16
from .arrays.elementwise import FUNCTIONS as _FUNCTIONS
from .arrays.indexing import take as _take
from .random_distributions import Distributions
from .arrays.sorting import argsort as _argsort, cumulative_sum as _cumulative_sum, searchsorted as _searchsorted

__all__ = [
    "Generator", "default_rng", "seed", "rand", "randn", "randint", "random", "random_sample", "normal",
    "uniform", "standard_normal", "exponential", "poisson", "binomial", "gamma", "beta", "choice",
    "permutation", "shuffle", "RandomState", "ranf", "sample", "random_integers", "get_state", "set_state",
    # random_distributions.py's, on the module's generator
    "lognormal", "laplace", "logistic", "gumbel", "rayleigh", "weibull", "pareto", "power", "standard_cauchy",
    "chisquare", "standard_t", "f", "triangular", "geometric", "negative_binomial", "wald", "dirichlet",
    "multinomial", "multivariate_normal", "standard_exponential", "standard_gamma", "noncentral_chisquare",
    "noncentral_f", "logseries", "zipf", "vonmises", "hypergeometric", "bytes",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16))
_UINT64_SPAN = 1 << 64


def _float_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in _FLOATS:
        raise TypeError("pm.random: dtype %s is not supported for floating-point values (use float32, float16 "
                        "or bfloat16: the device computes no float64; pm.set_float64_policy('host') draws float64 on the "
                        "host)" % dt)
    return dt


def _shape(size):
    return () if size is None else normalize_shape(size)


def _is_scalar(x):
    return np.ndim(x) == 0 and not isinstance(x, Array)


def _parameter(x, dtype):
    """A scalar parameter as a Python number, else a pymetal array of dtype."""
    if _is_scalar(x):
        return x
    if isinstance(x, Array):
        return x if x.dtype == dtype else x.astype(dtype)
    return asarray(np.asarray(x, dtype=dtype))


def _out_shape(size, *params):
    """NumPy's rule: the broadcast of the parameters, or `size`, to which they must broadcast."""
    shapes = [tuple(p.shape) for p in params if not _is_scalar(p)]
    if size is None:
        return np.broadcast_shapes(*shapes) if shapes else ()
    shape = _shape(size)
    try:
        if np.broadcast_shapes(shape, *shapes) != shape:
            raise ValueError
    except ValueError:
        raise ValueError("pm.random: parameters of shapes %s do not broadcast to size %r"
                         % (", ".join(map(str, shapes)), shape)) from None
    return shape


def _check(bad, message):
    """ValueError(message) if `bad` (a bool, or a pymetal array of bools: any true)."""
    if bool(_any(bad)) if isinstance(bad, Array) else bool(bad):
        raise ValueError(message)


class Generator(Distributions):
    """Random numbers from Philox4x32-10 kernels, with NumPy Generator's methods
    (make one with :func:`default_rng`).

    Thread-safe: each call takes the next call number under a lock.

    Examples:
        >>> rng = pm.random.default_rng(0)
        >>> rng.integers(0, 10, size=5)
        Array([1, 5, 5, 8, 9], dtype=int64)
    """

    def __init__(self, seed_seq: Any) -> None:
        if isinstance(seed_seq, np.random.BitGenerator):  # Generator(PCG64(42)), as NumPy code builds one:
            seed_seq = seed_seq.seed_seq  # its seeds, drawn through Philox (the streams are not NumPy's)
        if not isinstance(seed_seq, np.random.SeedSequence):
            raise TypeError("Generator() takes a SeedSequence or a bit generator (pm.random.PCG64(seed)); "
                            "use pm.random.default_rng(seed) for a seed, not %s" % type(seed_seq).__name__)
        self._seed_seq = seed_seq
        key = seed_seq.generate_state(2, np.uint32)
        self._key = (int(key[0]), int(key[1]))
        self._calls = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "Generator(Philox4x32-10)"

    @property
    def bit_generator(self) -> Generator:
        """The generator itself (NumPy's Generator.bit_generator): Philox keyed by its SeedSequence,
        so what Dask's ``da.random.default_rng(pm_generator)`` needs, a stream that spawns
        per-chunk streams (``type(g)(seed_seq)``) and that ``default_rng`` turns back into one.

        Examples:
            >>> g = pm.random.default_rng(0)
            >>> g.bit_generator is g
            True
        """
        return self

    def spawn(self, n_children: int) -> list[Generator]:
        """Independent generators (NumPy's SeedSequence.spawn).

        Examples:
            >>> a, b = pm.random.default_rng(0).spawn(2)
            >>> bool(pm.all(a.random(4) == b.random(4)))
            False
        """
        return [Generator(s) for s in self._seed_seq.spawn(n_children)]

    # ---- drawing

    def _draw(self, sampler, shape, dtype, *buffers, **params):
        with self._lock:
            call = self._calls
            self._calls += 1
        # The call number is one 32-bit word of the counter: every 2**32 calls take a new key.
        key = (self._key[0], self._key[1] ^ ((call >> 32) & 0xFFFFFFFF))
        return fill(sampler, shape, dtype, resolve(None), key, call & 0xFFFFFFFF, buffers=buffers, **params)

    def _with_parameters(self, sampler, size, params, dtypes, out_dtype):
        """A sampler of random.metal that reads its parameters from buffers."""
        params = [_parameter(p, dt) for p, dt in zip(params, dtypes)]
        shape = _out_shape(size, *params)
        n = math.prod(shape)
        buffers = []
        for p, dt in zip(params, dtypes):
            if _is_scalar(p):  # read with stride 0
                buf = asarray(np.full(1, p, dtype=dt))
            else:
                buf = ascontiguousarray(p.reshape(1) if p.size == 1 else broadcast_to(p, shape))
            buffers.append(buf)
        return self._draw(sampler, shape, out_dtype, *buffers)

    def random(self, size: Any = None, dtype: Any = np.float32, out: Array | None = None) -> Array:
        """Floats uniform in [0, 1) (24 random bits for float32, 11 for float16, 8 for bfloat16).

        Examples:
            >>> pm.random.default_rng(0).random(3)
            Array([0.12218684, 0.5622784 , 0.54024506], dtype=float32)
        """
        return _into(out, self._draw("uniform", _shape(size) if out is None else out.shape,
                                     _float_dtype(dtype)))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Array:
        """Floats uniform in [low, high); low and high broadcast (NumPy's rule).

        Examples:
            >>> pm.random.default_rng(0).uniform(-1.0, 1.0, 3)
            Array([-0.7556263 ,  0.12455678,  0.08049011], dtype=float32)
        """
        if _is_scalar(low) and _is_scalar(high):
            if not math.isfinite(float(high) - float(low)):
                raise OverflowError("high - low range exceeds valid bounds")
            return self._draw("uniform", _out_shape(size), np.dtype(np.float32), a=low, b=float(high) - float(low))
        low, high = _parameter(low, np.float32), _parameter(high, np.float32)
        return low + (high - low) * self._draw("uniform", _out_shape(size, low, high), np.dtype(np.float32))

    def standard_normal(self, size: Any = None, dtype: Any = np.float32, out: Array | None = None) -> Array:
        """Standard normal floats (Box-Muller).

        Examples:
            >>> x = pm.random.default_rng(0).standard_normal((1000, 100))
            >>> x.shape, round(float(pm.mean(x)), 1), round(float(pm.std(x)), 1)
            ((1000, 100), 0.0, 1.0)
        """
        return _into(out, self._draw("normal", _shape(size) if out is None else out.shape, _float_dtype(dtype)))

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Array:
        """Normal floats of mean loc and standard deviation scale (both broadcast).

        Examples:
            >>> x = pm.random.default_rng(0).normal(2.0, 0.5, 100000)
            >>> round(float(pm.mean(x)), 1), round(float(pm.std(x)), 1)
            (2.0, 0.5)
        """
        scale = _parameter(scale, np.float32)
        _check(scale < 0, "scale < 0")
        if _is_scalar(loc) and _is_scalar(scale):
            return self._draw("normal", _out_shape(size), np.dtype(np.float32), a=loc, b=scale)
        loc = _parameter(loc, np.float32)
        return loc + scale * self._draw("normal", _out_shape(size, loc, scale), np.dtype(np.float32))

    def standard_exponential(self, size: Any = None, dtype: Any = np.float32, method: str = "zig",
                             out: Array | None = None) -> Array:
        """Exponential floats of scale 1 (`method` is accepted as NumPy's; one method here).

        Examples:
            >>> x = pm.random.default_rng(0).standard_exponential(100000)
            >>> round(float(pm.mean(x)), 1), bool(pm.min(x) > 0)
            (1.0, True)
        """
        if method not in ("zig", "inv"):
            raise ValueError("method must be 'zig' or 'inv', not %r" % (method,))
        return _into(out, self._draw("exponential", _shape(size) if out is None else out.shape,
                                     _float_dtype(dtype)))

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Array:
        """Exponential floats of the given scale (1 / rate).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).exponential(3.0, 100000))), 1)
            3.0
        """
        scale = _parameter(scale, np.float32)
        _check(scale < 0, "scale < 0")
        if _is_scalar(scale):
            return self._draw("exponential", _out_shape(size), np.dtype(np.float32), b=scale)
        return scale * self._draw("exponential", _out_shape(size, scale), np.dtype(np.float32))

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Array:
        """Integers in [low, high) ([low, high] with endpoint=True), uniform and unbiased
        (in [0, low) without high). Array bounds broadcast, as NumPy's.

        Examples:
            >>> pm.random.default_rng(0).integers(0, 10, size=5)
            Array([1, 5, 5, 8, 9], dtype=int64)
            >>> pm.random.default_rng(0).integers(3, dtype=pm.uint8, size=2).dtype
            dtype('uint8')
        """
        if high is None:
            low, high = 0, low
        if not (_is_scalar(low) and _is_scalar(high)):
            return self._integers_between(low, high, size, dtype, endpoint)
        dt = np.dtype(dtype)
        kind = np.dtype(np.uint8) if dt == np.bool_ else dt
        if kind.kind not in "iu":
            raise TypeError("pm.random: integers() needs an integer or bool dtype, not %s" % dt)
        low, high = operator.index(low), operator.index(high) + (1 if endpoint else 0)
        lo, hi = (0, 2) if dt == np.bool_ else (int(np.iinfo(kind).min), int(np.iinfo(kind).max) + 1)
        if low < lo:
            raise ValueError("low is out of bounds for %s" % dt)
        if high > hi:
            raise ValueError("high is out of bounds for %s" % dt)
        if low >= high:
            raise ValueError("low > high" if endpoint else "low >= high")
        x = self._draw("integers", _out_shape(size), kind, low=low, range_=(high - low) % _UINT64_SPAN)
        return x.astype(np.bool_) if dt == np.bool_ else x

    def _integers_between(self, low, high, size, dtype, endpoint):
        """integers() with array bounds (NumPy's broadcasting): low + a random 64-bit value mod
        (high - low), whose bias, below (high - low) / 2**64, no sample can show."""
        dt = np.dtype(dtype)
        if dt.kind not in "iu":
            raise TypeError("pm.random: integers() with array bounds needs an integer dtype, not %s" % dt)
        lo, hi = (np.asarray(b.numpy() if isinstance(b, Array) else b) for b in (low, high))
        if lo.dtype.kind not in "iub" or hi.dtype.kind not in "iub":
            raise TypeError("pm.random: integers() bounds must be integers")
        hi = hi.astype(np.int64) + (1 if endpoint else 0)
        info = np.iinfo(dt)
        if np.any(lo < info.min):
            raise ValueError("low is out of bounds for %s" % dt)
        if np.any(hi > int(info.max) + 1):
            raise ValueError("high is out of bounds for %s" % dt)
        if np.any(lo >= hi):
            raise ValueError("low > high" if endpoint else "low >= high")
        lo_a, span = asarray(lo.astype(np.int64)), asarray((hi - lo).astype(np.uint64))
        shape = _out_shape(size, lo_a, span)
        keys = self._draw("integers", shape, np.dtype(np.uint64), low=0, range_=0)
        return ((keys % span).astype(np.int64) + lo_a).astype(dt)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None) -> Array:
        """Gamma floats of the given shape and scale (Marsaglia and Tsang's method).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).gamma(2.0, 3.0, 100000))), 0)
            6.0
        """
        x = self.standard_gamma(shape, size=size)
        return x if _is_scalar(scale) and float(scale) == 1.0 else x * _parameter(scale, np.float32)

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = np.float32,
                       out: Array | None = None) -> Array:
        """Gamma floats of scale 1.

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).standard_gamma(0.5, 100000))), 1)
            0.5
        """
        dt = _float_dtype(dtype)
        shape = _parameter(shape, np.float32)
        _check(shape < 0, "shape < 0")
        x = self._with_parameters("gamma", size if out is None else out.shape, [shape], [np.float32],
                                  np.dtype(np.float32))
        return _into(out, x if dt == np.float32 else x.astype(dt))

    def beta(self, a: Any, b: Any, size: Any = None) -> Array:
        """Beta floats (Johnk's method for a, b <= 1, else two gamma values, as NumPy).

        Examples:
            >>> round(float(pm.mean(pm.random.default_rng(0).beta(2.0, 6.0, 100000))), 2)
            0.25
        """
        a, b = _parameter(a, np.float32), _parameter(b, np.float32)
        _check(a <= 0, "a <= 0")
        _check(b <= 0, "b <= 0")
        return self._with_parameters("beta", size, [a, b], [np.float32, np.float32], np.dtype(np.float32))

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Array:
        """Poisson int64 values (multiplying uniforms below lam = 10, else Hormann's PTRS).

        Examples:
            >>> pm.random.default_rng(0).poisson(3.0, 5)
            Array([3, 3, 5, 1, 4], dtype=int64)
        """
        lam = _parameter(lam, np.float32)
        _check((lam < 0) | (lam != lam), "lam < 0 or lam is NaN")
        _check(lam > 9.2e18, "lam value too large")
        return self._with_parameters("poisson", size, [lam], [np.float32], np.dtype(np.int64))

    def binomial(self, n: Any, p: Any, size: Any = None) -> Array:
        """Binomial int64 values (waiting times below n p = 10, else Hormann's BTRS).

        Examples:
            >>> pm.random.default_rng(0).binomial(10, 0.5, 5)
            Array([5, 3, 5, 5, 6], dtype=int64)
        """
        n, p = _parameter(n, np.int64), _parameter(p, np.float32)
        _check(n < 0, "n < 0")
        _check((p < 0) | (p > 1) | (p != p), "p < 0, p > 1 or p is NaN")
        return self._with_parameters("binomial", size, [n, p], [np.int64, np.float32], np.dtype(np.int64))

    def permutation(self, x: Any, axis: int = 0) -> Array:
        """A shuffled arange(x) (x an int), or a shuffled copy of x along axis.

        Examples:
            >>> pm.random.default_rng(0).permutation(5)
            Array([3, 0, 2, 4, 1], dtype=int64)
        """
        if isinstance(x, (int, np.integer)):
            return self._order(int(x))
        a = x if isinstance(x, Array) else asarray(x)
        if a.ndim == 0:
            raise ValueError("pm.random: permutation() of a 0-d array: pass an int or an array with a dimension")
        return _take(a, self._order(a.shape[axis]), axis=axis)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffles x in place along axis (a pymetal array, or a writeable NumPy array).

        Examples:
            >>> x = pm.arange(5)
            >>> pm.random.default_rng(0).shuffle(x)
            >>> x
            Array([3, 0, 2, 4, 1], dtype=int64)
        """
        if isinstance(x, Array):
            x[...] = self.permutation(x, axis=axis)
        elif isinstance(x, np.ndarray):
            x[...] = np.take(x, self._order(x.shape[axis]).numpy(), axis=axis)
        elif isinstance(x, list):  # NumPy shuffles a list in place too
            x[:] = [x[i] for i in self._order(len(x)).numpy().tolist()]
        else:
            raise TypeError("pm.random: shuffle() takes a pymetal or NumPy array or a list, not %s"
                            % type(x).__name__)

    def _order(self, n):
        """A random permutation of range(n): the order of random 64-bit keys (ties, about
        n**2 / 2**65 of them, keep index order)."""
        keys = self._draw("integers", (n,), np.dtype(np.uint64), low=0, range_=0)
        return _argsort(keys, stable=True).astype(np.int64)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> Array:
        """Samples of a (an int: of arange(a)), with or without replacement, with
        probabilities p (weighted sampling without replacement: Efraimidis and Spirakis).

        Examples:
            >>> pm.random.default_rng(0).choice(5, size=3, replace=False)
            Array([3, 0, 2], dtype=int64)
            >>> pm.random.default_rng(0).choice(pm.asarray([10, 20]), size=4, p=[0.0, 1.0])
            Array([20, 20, 20, 20], dtype=int64)
        """
        if not isinstance(a, (int, np.integer, Array)) and np.asarray(a).dtype.kind in "USOMmV":
            # Strings or objects (pymetal arrays hold numbers): the indices here, the values on the host.
            h = np.asarray(a)
            if h.ndim == 0:
                raise ValueError("a must be a positive integer or an array with at least one dimension")
            idx = self.choice(h.shape[axis], size, replace, p, axis, shuffle)
            return np.take(h, idx.numpy(), axis=axis)  # type: ignore[return-value]
        pop = None if isinstance(a, (int, np.integer)) else (a if isinstance(a, Array) else asarray(a))
        if pop is not None and pop.ndim == 0:
            raise ValueError("a must be a positive integer or an array with at least one dimension")
        n = int(a) if pop is None else pop.shape[axis]
        if pop is None and n <= 0:
            raise ValueError("a must be a positive integer unless no samples are taken")
        shape = _shape(size)
        k = math.prod(shape)
        if p is not None:
            p = _parameter(p, np.float32)
            if p.ndim != 1 or p.shape[0] != n:
                raise ValueError("p must be 1-dimensional and of the same size as a (%d)" % n)
            host = p.numpy()
            if np.any(host < 0) or not np.all(np.isfinite(host)):
                raise ValueError("probabilities are not non-negative")
            if abs(float(host.sum(dtype=np.float64)) - 1.0) > math.sqrt(np.finfo(np.float32).eps):
                raise ValueError("probabilities do not sum to 1")
        if replace:
            if k and n == 0:
                raise ValueError("a cannot be empty unless no samples are taken")
            if p is None:
                idx = self.integers(0, n, size=shape) if n else empty(shape, np.int64)
            else:
                cdf = _cumulative_sum(p)
                u = self.random(shape) * cdf[-1]
                idx = _searchsorted(cdf, u, side="right").astype(np.int64)
                idx = _minimum(idx, n - 1)  # u rounds up to cdf[-1]: the last positive entry
        else:
            if k > n:
                raise ValueError("Cannot take a larger sample than population when replace is False")
            if p is None:
                idx = self._order(n)[:k].reshape(shape)
            else:
                if int((p > 0).sum()) < k:
                    raise ValueError("Fewer non-zero entries in p than size")
                # Efraimidis and Spirakis: the k largest of log(u) / p.
                keys = _FUNCTIONS["log"](self.random(n)) / p
                idx = _argsort(-keys, stable=True)[:k].astype(np.int64).reshape(shape)
        if pop is None:
            return idx
        return _take(pop, idx.reshape(-1), axis=axis).reshape(
            pop.shape[:axis % pop.ndim] + shape + pop.shape[axis % pop.ndim + 1:])


def _minimum(x, bound):
    return _FUNCTIONS["minimum"](x, bound)


def _into(out, x):
    if out is None:
        return x
    if not isinstance(out, Array) or out.dtype != x.dtype:
        raise TypeError("pm.random: out must be a pymetal array of dtype %s" % x.dtype)
    out[...] = x
    return out


def default_rng(seed: Any = None) -> Generator:
    """A Generator seeded as NumPy's default_rng (None: fresh entropy; an int, a
    sequence of ints or a SeedSequence; a Generator is returned as it is).

    Examples:
        >>> pm.random.default_rng(0).random(2)
        Array([0.12218684, 0.5622784 ], dtype=float32)
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)):
        return Generator(seed)
    return Generator(np.random.SeedSequence(seed))


# ---- NumPy's legacy functions, on one generator of the module's

_global: Generator | None = None
_global_lock = threading.Lock()


def _rng() -> Generator:
    global _global
    if _global is None:
        with _global_lock:
            if _global is None:
                _global = default_rng()
    return _global


def seed(seed: Any = None) -> None:
    """Seeds the module's generator (as numpy.random.seed).

    Examples:
        >>> pm.random.seed(0)
        >>> pm.random.rand(2)
        Array([0.12218684, 0.5622784 ], dtype=float32)
    """
    global _global
    _global = default_rng(seed)


def rand(*dims: int) -> Array:
    """Floats uniform in [0, 1) of shape dims.

    Examples:
        >>> pm.random.rand(2, 3).shape
        (2, 3)
    """
    return _rng().random(dims)


def randn(*dims: int) -> Array:
    """Standard normal floats of shape dims.

    Examples:
        >>> pm.random.randn(4).dtype
        dtype('float32')
    """
    return _rng().standard_normal(dims)


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> Array:
    """Integers in [low, high) (in [0, low) without high).

    Examples:
        >>> pm.random.seed(0)
        >>> pm.random.randint(0, 100, 4)
        Array([12, 56, 54, 86], dtype=int64)
    """
    return _rng().integers(low, high, size=size, dtype=dtype)


def random(size: Any = None) -> Array:
    """Floats uniform in [0, 1) (numpy.random.random).

    Examples:
        >>> pm.random.random((2, 2)).shape
        (2, 2)
    """
    return _rng().random(size)


random_sample = random


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Array:
    """Floats uniform in [low, high).

    Examples:
        >>> bool(pm.all(pm.random.uniform(1.0, 2.0, 10) >= 1.0))
        True
    """
    return _rng().uniform(low, high, size)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Array:
    """Normal floats of mean loc and standard deviation scale.

    Examples:
        >>> pm.random.normal(0.0, 1.0, (2, 3)).shape
        (2, 3)
    """
    return _rng().normal(loc, scale, size)


def standard_normal(size: Any = None) -> Array:
    """Standard normal floats.

    Examples:
        >>> pm.random.standard_normal(3).shape
        (3,)
    """
    return _rng().standard_normal(size)


def exponential(scale: Any = 1.0, size: Any = None) -> Array:
    """Exponential floats of the given scale.

    Examples:
        >>> bool(pm.all(pm.random.exponential(1.0, 5) >= 0))
        True
    """
    return _rng().exponential(scale, size)


def poisson(lam: Any = 1.0, size: Any = None) -> Array:
    """Poisson int64 values.

    Examples:
        >>> pm.random.poisson(2.0, 3).dtype
        dtype('int64')
    """
    return _rng().poisson(lam, size)


def binomial(n: Any, p: Any, size: Any = None) -> Array:
    """Binomial int64 values.

    Examples:
        >>> bool(pm.all(pm.random.binomial(4, 0.5, 10) <= 4))
        True
    """
    return _rng().binomial(n, p, size)


def gamma(shape: Any, scale: Any = 1.0, size: Any = None) -> Array:
    """Gamma floats.

    Examples:
        >>> pm.random.gamma(2.0, 1.0, 3).shape
        (3,)
    """
    return _rng().gamma(shape, scale, size)


def beta(a: Any, b: Any, size: Any = None) -> Array:
    """Beta floats, in [0, 1].

    Examples:
        >>> pm.random.beta(1.0, 2.0, 3).shape
        (3,)
    """
    return _rng().beta(a, b, size)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Array:
    """Samples of a (an int: of arange(a)).

    Examples:
        >>> int(pm.random.choice([7, 7, 7]))
        7
    """
    return _rng().choice(a, size, replace, p)


def permutation(x: Any) -> Array:
    """A shuffled arange(x), or a shuffled copy of x.

    Examples:
        >>> sorted(pm.random.permutation(4).tolist())
        [0, 1, 2, 3]
    """
    return _rng().permutation(x)


def shuffle(x: Any) -> None:
    """Shuffles x in place along its first axis.

    Examples:
        >>> x = pm.arange(3)
        >>> pm.random.shuffle(x)
        >>> sorted(x.tolist())
        [0, 1, 2]
    """
    _rng().shuffle(x)


ranf = sample = random
# NumPy's seeding classes, for NumPy code's Generator(PCG64(seed)) and default_rng(SeedSequence(s)):
# only their seeds are used (the numbers are Philox's, drawn by the kernels).
SeedSequence, BitGenerator = np.random.SeedSequence, np.random.BitGenerator
PCG64, PCG64DXSM, Philox, MT19937, SFC64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox,
                                             np.random.MT19937, np.random.SFC64)


def _legacy(name: str) -> Any:
    """NumPy's module-level function `name`: the Generator method on the module's generator."""
    import inspect
    method = getattr(Generator, name)
    sig = inspect.signature(method)

    def draw(*args: Any, **kwargs: Any) -> Any:
        return getattr(_rng(), name)(*args, **kwargs)
    draw.__name__ = draw.__qualname__ = name
    draw.__doc__ = method.__doc__
    draw.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])  # type: ignore[attr-defined]
    draw.__annotations__ = {k: v for k, v in method.__annotations__.items() if k != "self"}
    return draw


for _name in __all__[__all__.index("lognormal"):]:
    globals()[_name] = _legacy(_name)
del _name


def random_integers(low: int, high: int | None = None, size: Any = None) -> Array:
    """Integers in [low, high] ([1, low] without high): NumPy's deprecated alias, with its
    DeprecationWarning.

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     sorted(set(pm.random.random_integers(2, size=100).tolist()))
        [1, 2]
    """
    import warnings
    if high is None:
        low, high, advice = 1, low, "randint(1, {} + 1)".format(low)
    else:
        advice = "randint({}, {} + 1)".format(low, high)
    warnings.warn("This function is deprecated. Please call %s instead" % advice, DeprecationWarning, stacklevel=2)
    return _rng().integers(low, high, size=size, endpoint=True)


def get_state(legacy: bool = True) -> Any:
    """Not available: NotImplementedError (the generator is counter-based Philox, with no
    Mersenne Twister state to return or restore).

    Examples:
        >>> pm.random.get_state()
        Traceback (most recent call last):
        ...
        NotImplementedError: pm.random.get_state: ...
    """
    raise NotImplementedError("pm.random.get_state: pymetal's generator is counter-based Philox with no MT19937 "
                              "state; to replay a stream, seed again (pm.random.seed(s), RandomState(s)) or keep "
                              "a Generator (pm.random.default_rng(s))")


def set_state(state: Any) -> None:
    """Not available: NotImplementedError, as get_state.

    Examples:
        >>> pm.random.set_state(None)
        Traceback (most recent call last):
        ...
        NotImplementedError: pm.random.get_state: ...
    """
    get_state()


class RandomState:
    """NumPy's legacy RandomState: rand, randn, randint, random_sample, seed and every
    Generator distribution (normal, uniform, choice, permutation, shuffle, poisson, ...) on
    its own Philox generator; RandomState(s) draws what pm.random.seed(s) then the module's
    functions draw. The streams are not NumPy's (MT19937).

    Examples:
        >>> rs = pm.random.RandomState(0)
        >>> rs.rand(2, 3).shape, rs.normal(0.0, 1.0, 4).shape
        ((2, 3), (4,))
    """

    def __init__(self, seed: Any = None) -> None:
        self._gen = default_rng(seed)

    def seed(self, seed: Any = None) -> None:
        """Re-seeds (as numpy.random.RandomState.seed).

        Examples:
            >>> rs = pm.random.RandomState(1); a = rs.rand(3); rs.seed(1)
            >>> bool(pm.all(rs.rand(3) == a))
            True
        """
        self._gen = default_rng(seed)

    def rand(self, *dims: int) -> Array:
        """Floats uniform in [0, 1) of shape dims.

        Examples:
            >>> pm.random.RandomState(0).rand(2).shape
            (2,)
        """
        return self._gen.random(dims)

    def randn(self, *dims: int) -> Array:
        """Standard normal floats of shape dims.

        Examples:
            >>> pm.random.RandomState(0).randn(2, 2).shape
            (2, 2)
        """
        return self._gen.standard_normal(dims)

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> Array:
        """Integers in [low, high) (in [0, low) without high).

        Examples:
            >>> bool(pm.all(pm.random.RandomState(0).randint(3, 5, size=10) >= 3))
            True
        """
        return self._gen.integers(low, high, size=size, dtype=dtype)

    def random_sample(self, size: Any = None) -> Array:
        """Floats uniform in [0, 1) (also .random).

        Examples:
            >>> pm.random.RandomState(0).random_sample((2, 2)).shape
            (2, 2)
        """
        return self._gen.random(size)

    random = random_sample

    def random_integers(self, low: int, high: int | None = None, size: Any = None) -> Array:
        """Integers in [low, high] ([1, low] without high): NumPy's deprecated method.

        Examples:
            >>> import warnings
            >>> with warnings.catch_warnings():
            ...     warnings.simplefilter("ignore")
            ...     int(pm.random.RandomState(0).random_integers(3, 3, size=2).max())
            3
        """
        import warnings
        warnings.warn("This function is deprecated. Please call randint instead", DeprecationWarning, stacklevel=2)
        low, high = (1, low) if high is None else (low, high)
        return self._gen.integers(low, high, size=size, endpoint=True)

    def get_state(self, legacy: bool = True) -> Any:
        """Not available: NotImplementedError, as pm.random.get_state.

        Examples:
            >>> pm.random.RandomState(0).get_state()
            Traceback (most recent call last):
            ...
            NotImplementedError: pm.random.get_state: ...
        """
        return get_state()

    def set_state(self, state: Any) -> None:
        """Not available: NotImplementedError, as pm.random.get_state.

        Examples:
            >>> pm.random.RandomState(0).set_state(None)
            Traceback (most recent call last):
            ...
            NotImplementedError: pm.random.get_state: ...
        """
        get_state()

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Array:
        """Samples of a (an int: of arange(a)), as RandomState.choice.

        Examples:
            >>> sorted(pm.random.RandomState(0).choice(3, 3, replace=False).tolist())
            [0, 1, 2]
        """
        return self._gen.choice(a, size, replace, p)

    def permutation(self, x: Any) -> Array:
        """A shuffled arange(x), or a shuffled copy of x along its first axis.

        Examples:
            >>> sorted(pm.random.RandomState(0).permutation(3).tolist())
            [0, 1, 2]
        """
        return self._gen.permutation(x)

    def shuffle(self, x: Any) -> None:
        """Shuffles x in place along its first axis.

        Examples:
            >>> x = pm.arange(3); pm.random.RandomState(0).shuffle(x); sorted(x.tolist())
            [0, 1, 2]
        """
        self._gen.shuffle(x)

    def __getattr__(self, name: str) -> Any:
        """The Generator's distributions (normal, uniform, poisson, ...)."""
        if name.startswith("_") or not hasattr(self._gen, name):
            raise AttributeError("'RandomState' object has no attribute %r" % name)
        if name in ("permuted", "multivariate_hypergeometric", "spawn", "integers", "bit_generator"):
            raise AttributeError("'RandomState' object has no attribute %r (a Generator's: use "
                                 "pm.random.default_rng)" % name)
        return getattr(self._gen, name)

    def __repr__(self) -> str:
        return "RandomState(Philox4x32-10)"


# ---- float64 draws (issue 23): the float64 policy's host path (pymetal/arrays/float64.py) ----------------

def _host_draw(name):
    """Generator.<name>(..., dtype=float64) on the host's cores (the device has no float64): NumPy's
    Generator of the same name over a Philox bit generator keyed by this generator's next draw, so a
    seed gives the same float64 values every time (they are not the float32 draws widened)."""
    import inspect
    sig = inspect.signature(getattr(Generator, name))

    def draw(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        out = a.get("out")
        key = self._draw("integers", (2,), np.dtype(np.uint64), low=0, range_=0).numpy()
        gen = np.random.Generator(np.random.Philox(key=key))
        params = [np.asarray(a["shape"])] if "shape" in a else []  # standard_gamma's parameter broadcasts
        size = tuple(out.shape) if out is not None else a["size"] if params else _shape(a["size"])
        return _into(out, asarray(getattr(gen, name)(*params, size=size, dtype=a["dtype"])))
    return draw


def _install_float64():
    from . import _namespace  # noqa: F401  (float64 arrays' methods: installed with the namespace)
    from .arrays.float64 import wrap
    for name in ("random", "standard_normal", "standard_exponential", "standard_gamma"):
        setattr(Generator, name, wrap(getattr(Generator, name), _host_draw(name), raw=True))


_install_float64()
