"""pm.nn.layer_norm and pm.nn.rms_norm: a row normalisation as one fused kernel.

Both are written once, as a composition of the array library's functions over the
trailing axes (_layer_norm_rows, _rms_norm_rows). pm.fuse compiles that composition
into one kernel (a pass per reduction level over each row, then the output pass)
where fusion has the right shape for the device; elsewhere the same composition
runs unfused, op by op. float64 goes through the float64 policy (arrays/float64.py):
on the host by NumPy ("host"), narrowed to float32 ("downcast"), or refused ("error").
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from . import dtypes as _dt
from .arrays import elementwise as _ew
from .arrays import float64 as _f64
from .arrays import reduce as _red
from .arrays.array import Array as _Array
from .arrays.construct import _new

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .arrays.array import Array
    from ._typing import ArrayLike

# The overflow-safe mean of squares (_rstd): a second sum of the values times 2**-80.
# Its squares cannot overflow float32 (|v| * 2**-80 <= 2**48: squares <= 2**96, a sum
# of fewer than 2**32 of them stays finite). It is used only where the plain sum
# overflowed (>= 2**128); then the values whose scaled squares are denormal or underflow
# (|v| < 2**17) add at most n * 2**34 to it, below 2**-50 of it for rows shorter than 2**44.
_TINY = 2.0 ** -80


# ---- the computation, over the last k axes (traced by pm.fuse, or run as it is) -------------

def _as(v, dt):
    return v if v.dtype == dt else _ew.astype(v, dt)


def _rstd(d, axes, eps, wide):
    """1 / sqrt(mean(d * d) + eps) over `axes`, also where d * d overflows float32 (rows
    with values past ~1e19 give their true scale, not 0): both sums are one pass. Data
    that was float16 (wide False: |d| < 2**18) cannot overflow, and skips the second sum."""
    v = _red.mean(d * d, axis=axes, keepdims=True)
    if not wide:
        return _ew.unary("rsqrt", v + eps)
    q = d * _TINY
    vs = _red.mean(q * q, axis=axes, keepdims=True)
    scaled = _ew.unary("rsqrt", vs + eps * _TINY * _TINY) * _TINY
    return _ew.where(_ew.unary("isinf", v), scaled, _ew.unary("rsqrt", v + eps))


def _affine(y, w, b):
    if w is not None:
        y = y * _as(w, _dt.float32)
    if b is not None:
        y = y + _as(b, _dt.float32)
    return y


def _layer_norm_rows(x, w, b, eps, k, out):
    axes, wide = tuple(range(-k, 0)), x.dtype != _dt.float16
    x = _as(x, _dt.float32)
    d = x - _red.mean(x, axis=axes, keepdims=True)
    return _as(_affine(d * _rstd(d, axes, eps, wide), w, b), out)


def _rms_norm_rows(x, w, eps, k, out):
    wide = x.dtype != _dt.float16
    x = _as(x, _dt.float32)
    return _as(_affine(x * _rstd(x, tuple(range(-k, 0)), eps, wide), w, None), out)


# ---- arguments -----------------------------------------------------------------------------

def _axes(name, x, axis):
    """The normalised axes, sorted and non-negative."""
    nd = len(x.shape)
    if nd == 0:
        raise ValueError("%s(): x is 0-d (a scalar); there is no axis to normalise over. Give x at least one "
                         "dimension (x.reshape(1), or a row: x.reshape(1, -1))" % name)
    many = isinstance(axis, (tuple, list))
    try:
        axes = [operator.index(a) for a in (axis if many else (axis,))]
    except TypeError:
        raise TypeError("%s(): axis must be an int or a tuple of ints, not %r" % (name, axis)) from None
    if not axes:
        raise ValueError("%s(): axis=() names no axis to normalise over; give at least one (axis=-1)" % name)
    for a in axes:
        if not -nd <= a < nd:
            raise ValueError("%s(): axis %d is out of range for a %d-d array" % (name, a, nd))
    norm = sorted(a % nd for a in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("%s(): axis %r names an axis twice" % (name, axis))
    return tuple(norm)


def _check_float(name, what, dt):
    if _dt.kind(dt) != "f":
        raise TypeError(
            "%s(): %s must be a floating-point array (float16, bfloat16, float32 or float64), not %s; convert it "
            "first (.astype(pm.float32)). Integer input is refused, as PyTorch and MLX do (NumPy's mean/var "
            "would pick float64 for you; here the float type is yours to choose)"
            % (name, what, _dt.NAMES.get(dt, dt)))


def _check_param(name, what, p, shape, axes):
    want = tuple(shape[a] for a in axes)
    if tuple(p.shape) != want:
        raise ValueError("%s(): %s has shape %r, but it must have the shape of x's normalised axes, %r "
                         "(x.shape[a] for a in axis; it is broadcast over the other axes)"
                         % (name, what, tuple(p.shape), want))
    _check_float(name, what, p.dtype)


def _check(name, x, params, axis):
    """(normalised axes, the operands' dtypes) of a call whose x and params ((name, array or
    None) pairs) are arrays: raises for what the functions refuse."""
    _check_float(name, "x", x.dtype)
    axes = _axes(name, x, axis)
    dts = [x.dtype]
    for what, p in params:
        if p is not None:
            _check_param(name, what, p, x.shape, axes)
            dts.append(p.dtype)
    return axes, dts


def _eps(name, eps):
    try:
        return float(eps)  # a Python float: a static argument of the fused kernel (np.float64 would be an array)
    except (TypeError, ValueError):
        raise TypeError("%s(): eps must be a real number, not %r" % (name, eps)) from None


# ---- running it ----------------------------------------------------------------------------

_FUSED: dict = {}


def _fused(fn):
    f = _FUSED.get(fn)
    if f is None:
        from .arrays.fusion import fuse
        f = _FUSED[fn] = fuse(fn)
    return f


def _run(name, rows, x, params, axis, eps):
    """rows(x moved so the normalised axes are last, *params, eps, k, result dtype)."""
    x = _ew.as_array(x)
    dev = None if not isinstance(x, _Array) else x._buf.device
    params = [(what, None if p is None else _ew.as_array(p, dev)) for what, p in params]
    axes, dts = _check(name, x, params, axis)
    out = functools.reduce(_dt.promote_types, dts)  # (float dtypes: pm.result_type's promotion, without its checks)
    eps = _eps(name, eps)
    args = [p for _, p in params]
    nd, k = len(x.shape), len(axes)
    if not isinstance(x, _Array):  # traced inside pm.fuse: part of that kernel
        if axes != tuple(range(nd - k, nd)):
            from .arrays.fusion import FuseError
            raise FuseError("%s(axis=%r) inside pm.fuse: only the trailing axes are normalised there (the "
                            "others would need a transpose); move them last outside the fused function" % (name, axis))
        return rows(x, *args, eps, k, out)
    if x._size == 0:  # no rows, or rows of nothing: nothing to normalise
        return _new(x._shape, out, x._buf.device)
    perm = tuple(a for a in range(nd) if a not in axes) + axes
    moved = perm != tuple(range(nd))
    xt = x.permute_dims(perm) if moved else x
    y = _fused(rows)(xt, *args, eps, k, out)  # a thread per row on a CPU, a threadgroup per row on a GPU
    return y.permute_dims(tuple(int(i) for i in np.argsort(perm))) if moved else y


def _host_dispatch(fn, host, x, params, kwargs):
    """A call with a float64 operand, as the float64 policy says (None: not such a call)."""
    if _f64.get_float64_policy() == "error" or not _f64._wide_call((x,) + tuple(params), {}):
        return None
    return _f64.dispatch(fn, host, (x,) + tuple(params), kwargs)


def _host_rows(name, x, params, axis, eps, rms):
    """The float64 computation on the host (NumPy arrays in, NumPy array out)."""
    x = np.asarray(x)
    params = [(what, None if p is None else np.asarray(p)) for what, p in params]
    axes, dts = _check(name, x, params, axis)
    eps = _eps(name, eps)
    xf = x.astype(np.float64)
    d = xf if rms else xf - xf.mean(axis=axes, keepdims=True)
    y = d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)
    bshape = [x.shape[i] if i in axes else 1 for i in range(x.ndim)]  # a parameter, along x's axes
    w, b = params[0][1], (params[1][1] if len(params) > 1 else None)
    if w is not None:
        y = y * w.astype(np.float64).reshape(bshape)
    if b is not None:
        y = y + b.astype(np.float64).reshape(bshape)
    return y.astype(np.result_type(*dts))


def _layer_norm_host(x, weight=None, bias=None, *, axis=-1, eps=1e-5):
    return _host_rows("layer_norm", x, [("weight", weight), ("bias", bias)], axis, eps, False)


def _rms_norm_host(x, weight=None, *, axis=-1, eps=1e-6):
    return _host_rows("rms_norm", x, [("weight", weight)], axis, eps, True)


# ---- the API ----------------------------------------------------------------------------------

def layer_norm(x: ArrayLike, weight: ArrayLike | None = None, bias: ArrayLike | None = None, *,
               axis: int | Sequence[int] = -1, eps: float = 1e-5) -> Array:
    """Layer normalisation: (x - mean) / sqrt(var + eps) * weight + bias over `axis`.

    As ``torch.nn.functional.layer_norm`` and ``mlx.core.fast.layer_norm``: the mean and
    the (biased) variance are taken over the last axis, or over several axes given as a
    tuple (``axis=(-2, -1)`` is PyTorch's ``normalized_shape`` of the last two dimensions;
    any axes may be named). ``weight`` and ``bias`` (optional) have the shape of the
    normalised axes, ``tuple(x.shape[a] for a in sorted axes)``, and are broadcast over the
    others. x, weight and bias are floating-point (float16, bfloat16, float32, float64;
    integers are refused with a TypeError, as PyTorch and MLX do); the result has their
    promoted dtype. float16 and bfloat16 are computed in float32 (as MLX accumulates)
    and rounded once at the end; float64 follows the float64 policy (on the host by
    default). Rows whose squared deviations overflow float32 (values past ~1e19) are
    still normalised (a scaled second sum). An empty x gives an empty result; a 0-d x is
    a ValueError (nothing to normalise over). Each call is one fused kernel (pm.fuse).

    Examples:
        >>> x = pm.asarray([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
        >>> pm.nn.layer_norm(x).numpy().round(4)
        array([[-1.2247,  0.    ,  1.2247],
               [ 0.    ,  0.    ,  0.    ]], dtype=float32)
        >>> pm.nn.layer_norm(x, pm.asarray([1.0, 2.0, 3.0]), pm.asarray([0.0, 0.0, 1.0])).numpy().round(4)
        array([[-1.2247,  0.    ,  4.6742],
               [ 0.    ,  0.    ,  1.    ]], dtype=float32)
    """
    params = (weight, bias)
    r = _host_dispatch(layer_norm, _layer_norm_host, x, params, {"axis": axis, "eps": eps})
    if r is not None:
        return r
    return _run("layer_norm", _layer_norm_rows, x, [("weight", weight), ("bias", bias)], axis, eps)


def rms_norm(x: ArrayLike, weight: ArrayLike | None = None, *, axis: int | Sequence[int] = -1,
             eps: float = 1e-6) -> Array:
    """Root-mean-square normalisation: x / sqrt(mean(x * x) + eps) * weight over `axis`.

    As ``mlx.core.fast.rms_norm`` and ``torch.nn.functional.rms_norm``
    (``x * rsqrt(mean(x**2) + eps) * weight``), over the last axis or a tuple of axes
    (PyTorch's ``normalized_shape`` is ``axis=(-2, -1)`` for two). ``weight`` (optional)
    has the shape of the normalised axes and is broadcast over the others. x and weight
    are floating-point (float16, bfloat16, float32, float64; integers are refused with a
    TypeError, as PyTorch and MLX do); the result has their promoted dtype. float16 and
    bfloat16 are computed in float32 (as MLX accumulates) and rounded once at the end;
    float64 follows the float64 policy (on the host by default). Values past ~1e19, whose
    squares overflow float32, are still normalised (a scaled second sum). An empty x
    gives an empty result; a 0-d x is a ValueError. Each call is one fused kernel
    (pm.fuse).

    Examples:
        >>> x = pm.asarray([[3.0, 4.0], [0.0, 0.0]])
        >>> pm.nn.rms_norm(x).numpy().round(4)
        array([[0.8485, 1.1314],
               [0.    , 0.    ]], dtype=float32)
        >>> pm.nn.rms_norm(x, pm.asarray([1.0, -2.0])).numpy().round(4)
        array([[ 0.8485, -2.2627],
               [ 0.    , -0.    ]], dtype=float32)
    """
    r = _host_dispatch(rms_norm, _rms_norm_host, x, (weight,), {"axis": axis, "eps": eps})
    if r is not None:
        return r
    return _run("rms_norm", _rms_norm_rows, x, [("weight", weight)], axis, eps)
