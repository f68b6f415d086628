"""The Array API ``fft`` extension: 14 functions on complex64 and float32 arrays.

Which parts run where:

- the transforms (fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft,
  ihfft) run on the host, with NumPy's pocketfft in single precision, over the
  array's shared memory: the input is read in place (zero-copy, after the work
  that produced it finished) and the result is copied once into a new pymetal
  array. There is no Metal FFT kernel yet; on Apple Silicon the memory is
  unified, so the cost is the host transform itself.
- fftfreq, rfftfreq, fftshift and ifftshift run as kernels (arange, arithmetic,
  roll).

Dtypes follow the standard: complex transforms take and return complex64
(real input is promoted to complex64), real-input transforms take float32
(integers become float32) and return complex64, irfft/hfft return float32.
Double precision is not available (Apple GPUs have none).
"""

import operator

import numpy as np

from . import dtypes as _dt
from . import _elementwise as _ew
from .array import asarray, normalize_axis

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _input(name, x, want):
    """x read on the host (zero-copy) in the transform's input type: 'c' complex64, 'f' float32."""
    x = _ew.as_array(x)
    k = _dt.kind(x._dtype)
    if want == "f" and k == "c":
        raise TypeError("%s() needs a real array, not %s" % (name, x._dtype))
    if k == "b":
        raise TypeError("%s() needs a numeric array, not bool" % name)
    dt = _dt.complex64 if want == "c" else _dt.float32
    if x._dtype != dt:
        x = _ew.astype(x, dt)
    return x, x.numpy()


def _norm(norm):
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


def _result(a, dt, dev):
    # pocketfft computes complex64/float32 in single precision; the cast only fixes the type
    return asarray(np.ascontiguousarray(a, dtype=dt), device=dev, copy=True)


def _one(name, npfn, want, out):
    def f(x, /, *, n=None, axis=-1, norm="backward"):
        x, a = _input(name, x, want)
        if a.ndim == 0:
            raise ValueError("%s() needs an array of at least one dimension" % name)
        axis = normalize_axis(axis, a.ndim)
        return _result(npfn(a, n=_n(n), axis=axis, norm=_norm(norm)), out, x.device)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "The Array API's fft.%s along axis (host pocketfft over the shared memory)." % name
    return f


def _many(name, npfn, want, out):
    def f(x, /, *, s=None, axes=None, norm="backward"):
        x, a = _input(name, x, want)
        if axes is not None:
            axes = [normalize_axis(ax, a.ndim) for ax in axes]
            if len(set(axes)) != len(axes):
                raise ValueError("%s(): repeated axis in %r" % (name, axes))
        if s is not None:
            s = [_n(v) if v != -1 else None for v in s]
            if axes is None:
                axes = list(range(a.ndim - len(s), a.ndim))
            elif len(s) != len(axes):
                raise ValueError("%s(): s and axes must have the same length" % name)
            s = [a.shape[ax] if v is None else v for v, ax in zip(s, axes)]
        return _result(npfn(a, s=s, axes=axes, norm=_norm(norm)), out, x.device)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "The Array API's fft.%s over axes (host pocketfft over the shared memory)." % name
    return f


fft = _one("fft", np.fft.fft, "c", _dt.complex64)
ifft = _one("ifft", np.fft.ifft, "c", _dt.complex64)
rfft = _one("rfft", np.fft.rfft, "f", _dt.complex64)
irfft = _one("irfft", np.fft.irfft, "c", _dt.float32)
hfft = _one("hfft", np.fft.hfft, "c", _dt.float32)
ihfft = _one("ihfft", np.fft.ihfft, "f", _dt.complex64)
fftn = _many("fftn", np.fft.fftn, "c", _dt.complex64)
ifftn = _many("ifftn", np.fft.ifftn, "c", _dt.complex64)
rfftn = _many("rfftn", np.fft.rfftn, "f", _dt.complex64)
irfftn = _many("irfftn", np.fft.irfftn, "c", _dt.float32)


def _freq_dtype(dtype):
    dt = _dt.default_float if dtype is None else _dt.check_dtype(dtype)
    if _dt.kind(dt) != "f":
        raise TypeError("fftfreq: dtype must be a real floating type, not %s" % dt)
    return dt


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of an n-point fft: [0, 1, ..., n//2 - 1 (or n//2), -(n//2), ..., -1] / (d n)."""
    from ._creation import arange
    from ._manipulation import roll

    n = _n(n)
    dt = _freq_dtype(dtype)
    k = roll(arange(-(n // 2), n - n // 2, dtype=_dt.int64, device=device), -(n // 2))
    return _ew.astype(_ew.binary("divide", _ew.astype(k, _dt.float32), float(d * n)), dt)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of an n-point rfft: [0, 1, ..., n//2] / (d n)."""
    from ._creation import arange

    n = _n(n)
    dt = _freq_dtype(dtype)
    k = arange(n // 2 + 1, dtype=_dt.float32, device=device)
    return _ew.astype(_ew.binary("divide", k, float(d * n)), dt)


def _shift(x, axes, sign):
    from ._manipulation import roll

    x = _ew.as_array(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(a, x.ndim) for a in axes)
    if not axes:
        return _ew.ascontiguous(x, force=True)
    shifts = tuple(sign * (x._shape[a] // 2) for a in axes)
    return roll(x, shifts, axis=axes)


def fftshift(x, /, *, axes=None):
    """x with the zero-frequency term moved to the centre of each axis in axes (all by default)."""
    return _shift(x, axes, 1)


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)
