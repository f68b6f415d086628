"""Creation functions that run kernels: arange, linspace, eye, tril, triu, meshgrid."""

import math

import numpy as np

from . import _jit
from . import _ops
from . import dtypes as _dt
from ._array import _device, _new
from . import _elementwise as _ew


def _range(n, start, step, dt, dev):
    out = _new((n,), dt, dev)
    if n:
        acc = np.float32 if _dt.kind(dt) == "f" else dt
        fn = _jit.kernel(_ops.range_name(dt), "copy", dt)
        fn(out, np.array(start).astype(acc)[()], np.array(step).astype(acc)[()], grid=n, threadgroup=min(n, 256))
    return out


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in [start, stop) (int64 for ints, float32 for floats)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        dtype = _dt.default_float if any(isinstance(v, float) for v in (start, stop, step)) else _dt.default_int
    dt = _dt.check_dtype(dtype)
    n = max(0, math.ceil((stop - start) / step))
    if _dt.kind(dt) == "b":
        raise TypeError("arange does not make bool arrays")
    if _dt.kind(dt) == "c":  # real values (no range kernel for complex): float32, then complex64
        return _ew.astype(_range(n, start, step, _dt.float32, _device(device)), dt)
    return _range(n, start, step, dt, _device(device))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """num evenly spaced values from start to stop (stop included unless endpoint=False)."""
    if dtype is None and (isinstance(start, complex) or isinstance(stop, complex)):
        dtype = _dt.complex64
    if dtype is not None and _dt.kind(_dt.check_dtype(dtype)) == "c":
        # complex: the real and imaginary parts are two real linspaces
        start, stop = complex(start), complex(stop)
        re = linspace(start.real, stop.real, num, device=device, endpoint=endpoint)
        im = linspace(start.imag, stop.imag, num, device=device, endpoint=endpoint)
        return _ew.binary("add", re, _ew.binary("multiply", im, 1j))
    dt = _dt.check_dtype(dtype or _dt.default_float)
    if num < 0:
        raise ValueError("linspace: num must be >= 0, not %d" % num)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    out = _range(num, float(start), float(step), dt, _device(device))
    if endpoint and num > 1:
        out[num - 1] = stop
    return out


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-D array with ones on the k-th diagonal."""
    n_cols = n_rows if n_cols is None else n_cols
    out = _ew.fill(_new((n_rows, n_cols), _dt.check_dtype(dtype or _dt.default_float), _device(device)), 0)
    lo, hi = max(0, -k), min(n_rows, n_cols - k)
    if hi > lo:
        flat = out.reshape(-1)
        start = lo * n_cols + lo + k
        _ew.fill(flat[start:start + (hi - lo - 1) * (n_cols + 1) + 1:n_cols + 1], 1)
    return out


def _tri_mask(shape, k, lower, dev):
    rows = _range(shape[-2], 0, 1, _dt.int64, dev).reshape(-1, 1)
    cols = _range(shape[-1], 0, 1, _dt.int64, dev).reshape(1, -1)
    diff = _ew.binary("subtract", cols, rows)
    return _ew.binary("less_equal" if lower else "greater_equal", diff, k)


def tril(x, /, *, k=0):
    """x with the elements above the k-th diagonal zeroed."""
    x = _ew.as_array(x)
    return _ew.where(_tri_mask(x._shape, k, True, x._buf.device), x, 0 if _dt.kind(x._dtype) != "b" else False)


def triu(x, /, *, k=0):
    """x with the elements below the k-th diagonal zeroed."""
    x = _ew.as_array(x)
    return _ew.where(_tri_mask(x._shape, k, False, x._buf.device), x, 0 if _dt.kind(x._dtype) != "b" else False)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate arrays from 1-D arrays (views broadcast to the grid, then copied)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', not %r" % (indexing,))
    arrs = [_ew.as_array(a) for a in arrays]
    shape = [a._size for a in arrs]
    if indexing == "xy" and len(arrs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrs):
        view = [1] * len(arrs)
        j = i
        if indexing == "xy" and len(arrs) >= 2 and i < 2:
            j = 1 - i
        view[j] = a._size
        out.append(_ew.ascontiguous(a.reshape(-1).reshape(view).broadcast_to(tuple(shape)), force=True))
    return out
