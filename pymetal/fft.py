"""The Array API ``fft`` extension: 14 functions on complex64 and float32 arrays,
as Metal kernels (Shaders/fft.metal).

- Complex transforms along one axis: the axis is made the last one of a
  contiguous copy, then each row is transformed. Power-of-two lengths: radix-4
  Stockham passes between two buffers (natural order, no bit reversal), and one
  radix-2 pass when log2(n) is odd.
  Other lengths: Bluestein's algorithm, a chirp multiplication, a circular
  convolution of a power-of-two length m >= 2n - 1 (two radix-2 transforms and a
  product with the transformed chirp filter) and a second chirp multiplication.
  The twiddle factors and the chirp filter's transform are constants of n,
  computed once on the host in double precision and kept on the device.
- Real transforms from complex ones: rfft transforms the real input as complex
  and keeps the n//2 + 1 non-negative frequencies; irfft rebuilds the Hermitian
  spectrum (X[n-k] = conj(X[k])) and keeps the real part of its inverse; hfft and
  ihfft are irfft and rfft of the conjugate, with the normalisation swapped (as
  NumPy). n-dimensional transforms are one-axis transforms over each axis.
- fftfreq, rfftfreq, fftshift and ifftshift: arange, arithmetic and roll kernels.

Dtypes follow the standard: complex transforms take and return complex64
(real input is promoted), real-input transforms take float32 (integers become
float32) and return complex64, irfft/hfft return float32. No double precision
(Apple GPUs have none): results carry float32 rounding, about 1e-7 relative to
the largest output times log2(n).
"""

from __future__ import annotations

import math
import operator
import struct

import numpy as np

from . import dtypes as _dt
from .arrays import elementwise as _ew
from .arrays.construct import _new, asarray
from .arrays.layout import normalize_axis
from .arrays.kernels import kernel as _kernel
from .arrays.manipulation import concat as _concat, flip as _flip, roll as _roll
from .arrays.sorting import _last_axis
from .arrays.namespace_extras import conj as _conj, real as _real
from .arrays.creation import arange as _arange

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .arrays.array import Array
    from .runtime.device import Device
    from ._typing import ArrayLike, DTypeLike, Norm

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "fft2", "ifft2", "rfft2", "irfft2"]  # NumPy's (not in the standard)

_NORMS = ("backward", "ortho", "forward")
_PASS = struct.Struct("<II")
_CHIRP = struct.Struct("<IIfI")
_TG = 256


def _norm(norm):
    if norm is None:  # NumPy's spelling of the default
        return "backward"
    if norm not in _NORMS:
        raise ValueError("norm must be one of %s, not %r" % (", ".join(_NORMS), norm))
    return norm


def _n(n):
    if n is None:
        return None
    n = operator.index(n)
    if n < 1:
        raise ValueError("n must be >= 1, not %d" % n)
    return n


def _as(name, x, want):
    """x as complex64 ('c') or float32 ('f'); real transforms refuse complex input."""
    x = _ew.as_array(x)
    k = _dt.kind(x._dtype)
    if k == "b":
        raise TypeError("%s() needs a numeric array, not bool" % name)
    if want == "f" and k == "c":
        raise TypeError("%s() needs a real array, not %s" % (name, x._dtype))
    dt = _dt.complex64 if want == "c" else _dt.float32
    if x.ndim == 0:
        raise ValueError("%s() needs an array of at least one dimension" % name)
    return x if x._dtype == dt else _ew.astype(x, dt)


# ---- constants of a length, kept on the device -------------------------------------------------

_consts: dict = {}


def _const(key, make, dev):
    got = _consts.get((key, dev))
    if got is None:
        if len(_consts) > 64:
            _consts.clear()
        got = _consts[(key, dev)] = asarray(np.ascontiguousarray(make(), dtype=np.complex64), device=dev, copy=True)
    return got


def _twiddles(n, sign, dev):
    """w[t] = exp(sign 2 pi i t / n) for t < n (double precision, rounded once)."""
    return _const(("tw", n, sign), lambda: np.exp(sign * 2j * np.pi * np.arange(n) / n), dev)


def _chirp(n, sign, dev):
    """exp(sign pi i j^2 / n) for j < n, with j^2 reduced mod 2n (exact) before the angle."""
    def make():
        j = np.arange(n, dtype=np.int64)
        return np.exp(sign * 1j * np.pi * ((j * j) % (2 * n)) / n)
    return _const(("chirp", n, sign), make, dev)


def _chirp_filter(n, m, sign, dev):
    """The length-m transform of the convolution filter b[d] = exp(-sign pi i d^2 / n), |d| < n."""
    def make():
        j = np.arange(n, dtype=np.int64)
        b = np.zeros(m, np.complex128)
        b[:n] = np.exp(-sign * 1j * np.pi * ((j * j) % (2 * n)) / n)
        b[m - n + 1:] = b[1:n][::-1]
        return np.fft.fft(b)
    return _const(("filter", n, m, sign), make, dev)


# ---- one-axis complex transforms of the rows of a (rows, n) array --------------------------------

def _radix2(a, sign):
    """The unscaled transform of each row of contiguous complex64 a (rows, n), n a power of two."""
    rows, n = a._shape
    dev = a._buf.device
    if n == 1:
        return _ew.ascontiguous(a, force=True)
    tw = _twiddles(n, sign, dev)
    bufs = (_new((rows, n), _dt.complex64, dev), _new((rows, n), _dt.complex64, dev))
    src, ns, i = a, 1, 0
    while ns < n:  # radix-4 passes, then one radix-2 pass if log2(n) is odd
        radix = 4 if ns * 4 <= n else 2
        dst = bufs[i & 1]
        threads = n // radix
        _kernel("fft", "radix%d" % radix, None, dev)(src, dst, tw, _PASS.pack(n, ns), grid=(threads, rows),
                                                     threadgroup=(min(threads, _TG), 1))
        src, ns, i = dst, ns * radix, i + 1
    return src


def _bluestein(a, sign, scale):
    """scale times the transform of each row of a (rows, n), any n, through a power-of-two convolution."""
    rows, n = a._shape
    dev = a._buf.device
    m = 1 << (2 * n - 2).bit_length()  # the least power of two >= 2n - 1
    chirp = _chirp(n, sign, dev)
    params = _CHIRP.pack(n, m, scale / m, 0)
    padded = _new((rows, m), _dt.complex64, dev)
    _kernel("fft", "chirp_pad", None, dev)(a, chirp, padded, params, grid=(m, rows), threadgroup=(min(m, _TG), 1))
    spectrum = _ew.binary("multiply", _radix2(padded, -1), _chirp_filter(n, m, sign, dev))
    conv = _radix2(spectrum, 1)  # unscaled inverse: the 1/m is in params
    out = _new((rows, n), _dt.complex64, dev)
    _kernel("fft", "chirp_out", None, dev)(conv, chirp, out, params, grid=(n, rows), threadgroup=(min(n, _TG), 1))
    return out


def _scale(n, inverse, norm):
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "backward") == inverse else 1.0


def _resize(x, axis, n):
    """x truncated or zero-padded to length n along axis."""

    have = x._shape[axis]
    if n is None or n == have:
        return x
    if n < have:
        return x[(slice(None),) * axis + (slice(0, n),)]
    shape = list(x._shape)
    shape[axis] = n - have
    return _concat([x, _ew.fill(_new(tuple(shape), x._dtype, x._buf.device), 0)], axis=axis)


def _c2c(x, n, axis, norm, inverse):
    """The complex transform of complex64 x along axis (length n after resizing)."""

    axis = normalize_axis(axis, x.ndim)
    x = _resize(x, axis, n)
    n = x._shape[axis]
    if n == 0:
        raise ValueError("invalid number of data points (0) along axis %d" % axis)
    if x._size == 0:
        return _ew.ascontiguous(x, force=True)
    src, rows, n, inv = _last_axis(x, axis)
    a = src.reshape(rows, n)
    sign = 1 if inverse else -1
    scale = _scale(n, inverse, norm)
    if n & (n - 1) == 0:
        y = _radix2(a, sign)
        if scale != 1.0:
            y = _ew.binary("multiply", y, scale)
    else:
        y = _bluestein(a, sign, scale)
    return y.reshape(src._shape).permute_dims(inv)


def _take(x, axis, n):
    """The first n elements along axis (a view)."""
    return x[(slice(None),) * axis + (slice(0, n),)]


def _rfft(x, n, axis, norm):
    axis = normalize_axis(axis, x.ndim)
    y = _c2c(_ew.astype(x, _dt.complex64), n, axis, norm, False)
    return _take(y, axis, y._shape[axis] // 2 + 1)


def _irfft(x, n, axis, norm):
    """Real inverse: the Hermitian spectrum of length n from its first n//2 + 1 terms."""

    axis = normalize_axis(axis, x.ndim)
    if n is None:
        n = 2 * (x._shape[axis] - 1)
        if n < 1:
            raise ValueError("irfft: invalid number of data points (%d) along axis %d" % (n, axis))
    h = n // 2 + 1
    half = _resize(x, axis, h)
    rest = half[(slice(None),) * axis + (slice(1, n - h + 1),)]
    full = _concat([half, _conj(_flip(rest, axis=axis))], axis=axis) if n > h else half
    return _real(_c2c(full, n, axis, norm, True))


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def fft(x: ArrayLike, /, n: int | None = None, axis: int = -1, norm: Norm | None = "backward") -> Array:
    """The one-dimensional discrete Fourier transform along axis (complex64).

    n: the length to crop or zero-pad the input to; norm: "backward" (no scaling),
    "ortho" (1/sqrt(n)) or "forward" (1/n).

    Examples:
        >>> pm.fft.fft(pm.asarray([1.0, 0.0, 0.0, 0.0]))
        Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
        >>> pm.fft.fft(pm.ones(4)).numpy().real
        array([4., 0., 0., 0.], dtype=float32)
    """
    return _c2c(_as("fft", x, "c"), _n(n), axis, _norm(norm), False)


def ifft(x: ArrayLike, /, n: int | None = None, axis: int = -1, norm: Norm | None = "backward") -> Array:
    """The one-dimensional inverse discrete Fourier transform along axis (complex64).

    Examples:
        >>> pm.fft.ifft(pm.asarray([4.0, 0.0, 0.0, 0.0]))
        Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    return _c2c(_as("ifft", x, "c"), _n(n), axis, _norm(norm), True)


def rfft(x: ArrayLike, /, n: int | None = None, axis: int = -1, norm: Norm | None = "backward") -> Array:
    """The transform of a real signal: its n//2 + 1 non-negative frequency terms (complex64).

    Examples:
        >>> X = pm.fft.rfft(pm.asarray([1.0, 2.0, 3.0, 4.0]))
        >>> X.shape, X.numpy().real
        ((3,), array([10., -2., -2.], dtype=float32))
    """
    return _rfft(_as("rfft", x, "f"), _n(n), axis, _norm(norm))


def irfft(x: ArrayLike, /, n: int | None = None, axis: int = -1, norm: Norm | None = "backward") -> Array:
    """The inverse of rfft: a real signal of length n (default 2 (m - 1)), float32.

    Examples:
        >>> pm.fft.irfft(pm.fft.rfft(pm.asarray([1.0, 2.0, 3.0, 4.0]))).numpy().round(4)
        array([1., 2., 3., 4.], dtype=float32)
    """
    return _irfft(_as("irfft", x, "c"), _n(n), axis, _norm(norm))


def hfft(x: ArrayLike, /, n: int | None = None, axis: int = -1, norm: Norm | None = "backward") -> Array:
    """The transform of a signal with Hermitian symmetry (given by its first half): real, float32.

    Examples:
        >>> pm.fft.hfft(pm.asarray([1.0, 0.0, 0.0]))
        Array([1., 1., 1., 1.], dtype=float32)
    """
    return _irfft(_conj(_as("hfft", x, "c")), _n(n), axis, _SWAP[_norm(norm)])


def ihfft(x: ArrayLike, /, n: int | None = None, axis: int = -1, norm: Norm | None = "backward") -> Array:
    """The inverse of hfft: the first n//2 + 1 terms of a Hermitian spectrum, complex64.

    Examples:
        >>> pm.fft.ihfft(pm.asarray([1.0, 1.0, 1.0, 1.0])).numpy().real
        array([1., 0., 0.], dtype=float32)
    """
    return _conj(_rfft(_as("ihfft", x, "f"), _n(n), axis, _SWAP[_norm(norm)]))


def _axes_and_sizes(name, x, s, axes):
    """(axes, sizes) of an n-dimensional transform, with the standard's defaults."""
    if axes is not None:
        axes = [normalize_axis(a, x.ndim) for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError("%s(): repeated axis in %r" % (name, axes))
    if s is None:
        axes = list(range(x.ndim)) if axes is None else axes
        return axes, [None] * len(axes)
    s = list(s)
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim))
    elif len(s) != len(axes):
        raise ValueError("%s(): s and axes must have the same length" % name)
    return axes, [None if v == -1 else _n(v) for v in s]


def fftn(x: ArrayLike, /, s: tuple[int, ...] | list[int] | None = None,
         axes: tuple[int, ...] | list[int] | None = None, norm: Norm | None = "backward") -> Array:
    """The n-dimensional transform over axes (all by default), complex64.

    s: the length of each transformed axis (crop or zero-pad).

    Examples:
        >>> pm.fft.fftn(pm.ones((2, 2))).numpy().real
        array([[4., 0.],
               [0., 0.]], dtype=float32)
    """
    x = _as("fftn", x, "c")
    for a, n in zip(*_axes_and_sizes("fftn", x, s, axes)):
        x = _c2c(x, n, a, _norm(norm), False)
    return x


def ifftn(x: ArrayLike, /, s: tuple[int, ...] | list[int] | None = None,
          axes: tuple[int, ...] | list[int] | None = None, norm: Norm | None = "backward") -> Array:
    """The n-dimensional inverse transform over axes (all by default), complex64.

    Examples:
        >>> pm.fft.ifftn(pm.asarray([[4.0, 0.0], [0.0, 0.0]])).numpy().real
        array([[1., 1.],
               [1., 1.]], dtype=float32)
    """
    x = _as("ifftn", x, "c")
    for a, n in zip(*_axes_and_sizes("ifftn", x, s, axes)):
        x = _c2c(x, n, a, _norm(norm), True)
    return x


def rfftn(x: ArrayLike, /, s: tuple[int, ...] | list[int] | None = None,
          axes: tuple[int, ...] | list[int] | None = None, norm: Norm | None = "backward") -> Array:
    """The n-dimensional transform of a real array: rfft over the last axis, fft over the others.

    Examples:
        >>> pm.fft.rfftn(pm.ones((2, 4))).shape
        (2, 3)
    """
    x = _as("rfftn", x, "f")
    axes, sizes = _axes_and_sizes("rfftn", x, s, axes)
    if not axes:
        return _ew.astype(x, _dt.complex64)
    y = _rfft(x, sizes[-1], axes[-1], _norm(norm))
    for a, n in zip(axes[:-1], sizes[:-1]):
        y = _c2c(y, n, a, _norm(norm), False)
    return y


def irfftn(x: ArrayLike, /, s: tuple[int, ...] | list[int] | None = None,
           axes: tuple[int, ...] | list[int] | None = None, norm: Norm | None = "backward") -> Array:
    """The inverse of rfftn: ifft over all axes but the last, irfft over the last (float32).

    Examples:
        >>> x = pm.ones((2, 4))
        >>> pm.fft.irfftn(pm.fft.rfftn(x), s=(2, 4)).numpy().round(4)
        array([[1., 1., 1., 1.],
               [1., 1., 1., 1.]], dtype=float32)
    """
    x = _as("irfftn", x, "c")
    axes, sizes = _axes_and_sizes("irfftn", x, s, axes)
    if not axes:
        return _ew.unary("real", x)
    for a, n in zip(axes[:-1], sizes[:-1]):
        x = _c2c(x, n, a, _norm(norm), True)
    return _irfft(x, sizes[-1], axes[-1], _norm(norm))


def _freq_dtype(dtype):
    dt = _dt.default_float if dtype is None else _dt.check_dtype(dtype)
    if _dt.kind(dt) != "f":
        raise TypeError("fftfreq: dtype must be a real floating type, not %s" % dt)
    return dt


def fftfreq(n: int, /, d: float = 1.0, *, dtype: DTypeLike = None, device: Device | None = None) -> Array:
    """Sample frequencies of an n-point fft: [0, 1, ..., n//2 - 1 (or n//2), -(n//2), ..., -1] / (d n).

    Examples:
        >>> pm.fft.fftfreq(4)
        Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """

    n = _n(n)
    dt = _freq_dtype(dtype)
    k = _roll(_arange(-(n // 2), n - n // 2, dtype=_dt.int64, device=device), -(n // 2))
    return _ew.astype(_ew.binary("divide", _ew.astype(k, _dt.float32), float(d * n)), dt)


def rfftfreq(n: int, /, d: float = 1.0, *, dtype: DTypeLike = None, device: Device | None = None) -> Array:
    """Sample frequencies of an n-point rfft: [0, 1, ..., n//2] / (d n).

    Examples:
        >>> pm.fft.rfftfreq(4, d=0.5)
        Array([0. , 0.5, 1. ], dtype=float32)
    """

    n = _n(n)
    dt = _freq_dtype(dtype)
    k = _arange(n // 2 + 1, dtype=_dt.float32, device=device)
    return _ew.astype(_ew.binary("divide", k, float(d * n)), dt)


def _shift(x, axes, sign):

    x = _ew.as_array(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    if not axes:
        return _ew.ascontiguous(x, force=True)
    shifts = tuple(sign * (x._shape[a] // 2) for a in axes)
    return _roll(x, shifts, axis=axes)


def fftshift(x: ArrayLike, /, axes: int | tuple[int, ...] | list[int] | None = None) -> Array:
    """x with the zero-frequency term moved to the centre of each axis in axes (all by default).

    Examples:
        >>> pm.fft.fftshift(pm.fft.fftfreq(4))
        Array([-0.5 , -0.25,  0.  ,  0.25], dtype=float32)
    """
    return _shift(x, axes, 1)


def ifftshift(x: ArrayLike, /, axes: int | tuple[int, ...] | list[int] | None = None) -> Array:
    """The inverse of fftshift.

    Examples:
        >>> pm.fft.ifftshift(pm.asarray([-2, -1, 0, 1]))
        Array([ 0,  1, -2, -1], dtype=int64)
    """
    return _shift(x, axes, -1)


# ---- NumPy's two-dimensional names (not in the standard): the n-dimensional transforms over
# the last two axes by default, with NumPy's positional signature (a, s, axes, norm)

def fft2(a: ArrayLike, s: tuple[int, ...] | list[int] | None = None, axes: tuple[int, ...] | list[int] = (-2, -1),
         norm: Norm | None = None) -> Array:
    """NumPy's fft2: fftn over axes (the last two by default), complex64.

    Examples:
        >>> pm.fft.fft2(pm.ones((2, 3))).numpy().real.round(4)
        array([[ 6.,  0., -0.],
               [ 0.,  0., -0.]], dtype=float32)
    """
    return fftn(a, s=s, axes=axes, norm=norm or "backward")


def ifft2(a: ArrayLike, s: tuple[int, ...] | list[int] | None = None, axes: tuple[int, ...] | list[int] = (-2, -1),
          norm: Norm | None = None) -> Array:
    """NumPy's ifft2: ifftn over axes (the last two by default), complex64.

    Examples:
        >>> pm.fft.ifft2(pm.fft.fft2(pm.ones((2, 2)))).numpy().real.round(4)
        array([[1., 1.],
               [1., 1.]], dtype=float32)
    """
    return ifftn(a, s=s, axes=axes, norm=norm or "backward")


def rfft2(a: ArrayLike, s: tuple[int, ...] | list[int] | None = None, axes: tuple[int, ...] | list[int] = (-2, -1),
          norm: Norm | None = None) -> Array:
    """NumPy's rfft2: rfftn over axes (the last two by default), complex64.

    Examples:
        >>> pm.fft.rfft2(pm.ones((2, 4))).shape
        (2, 3)
    """
    return rfftn(a, s=s, axes=axes, norm=norm or "backward")


def irfft2(a: ArrayLike, s: tuple[int, ...] | list[int] | None = None, axes: tuple[int, ...] | list[int] = (-2, -1),
           norm: Norm | None = None) -> Array:
    """NumPy's irfft2: irfftn over axes (the last two by default), float32.

    Examples:
        >>> pm.fft.irfft2(pm.fft.rfft2(pm.ones((2, 4)))).numpy().round(4)
        array([[1., 1., 1., 1.],
               [1., 1., 1., 1.]], dtype=float32)
    """
    return irfftn(a, s=s, axes=axes, norm=norm or "backward")
