"""Neural-network activations and normalisations on pymetal arrays (Metal kernels).

    pm.nn.relu(x), pm.nn.gelu(x, approximate="tanh"), pm.nn.softmax(x, axis=-1),
    pm.nn.layer_norm(x, weight, bias), pm.nn.rms_norm(x, weight) (nn_norms.py)
"""

from __future__ import annotations

from .arrays import elementwise as _ew
from .arrays import reduce as _red
from . import dtypes as _dt
from .arrays.array import Array as _Array
from . import nn_host as _host
from .nn_host import float64_call as _float64_call
from .nn_norms import layer_norm, rms_norm

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .arrays.array import Array
    from .runtime.device import Device
    from ._typing import ArrayLike, DTypeLike, Norm

__all__ = ["relu", "leaky_relu", "sigmoid", "softplus", "silu", "swish", "gelu", "softmax", "log_softmax",
           "layer_norm", "rms_norm"]


@_float64_call(_host.relu)
def relu(x: ArrayLike) -> Array:
    """max(x, 0).

    Examples:
        >>> pm.nn.relu(pm.asarray([-1.0, 0.0, 2.0]))
        Array([0., 0., 2.], dtype=float32)
    """
    return _ew.unary("relu", x)


@_float64_call(_host.leaky_relu)
def leaky_relu(x: ArrayLike, negative_slope: float = 0.01) -> Array:
    """x where x > 0, else negative_slope * x.

    Examples:
        >>> pm.nn.leaky_relu(pm.asarray([-2.0, 3.0]), 0.5)
        Array([-1.,  3.], dtype=float32)
    """
    x = _real("leaky_relu", x)
    if _dt.kind(x.dtype) != "f":
        x = _ew.astype(x, _dt.float32)
    return _ew.binary("leaky_relu", x, float(negative_slope))


@_float64_call(_host.sigmoid)
def sigmoid(x: ArrayLike) -> Array:
    """1 / (1 + exp(-x)).

    Examples:
        >>> pm.nn.sigmoid(pm.asarray([-1.0, 0.0, 1.0])).numpy().round(4)
        array([0.2689, 0.5   , 0.7311], dtype=float32)
    """
    return _ew.unary("sigmoid", x)


@_float64_call(_host.softplus)
def softplus(x: ArrayLike) -> Array:
    """log(1 + exp(x)), without overflow.

    Examples:
        >>> pm.nn.softplus(pm.asarray([0.0, 100.0])).numpy().round(4)
        array([  0.6931, 100.    ], dtype=float32)
    """
    return _ew.unary("softplus", x)


@_float64_call(_host.silu)
def silu(x: ArrayLike) -> Array:
    """x * sigmoid(x) (also called swish: ``pm.nn.swish``).

    Examples:
        >>> pm.nn.silu(pm.asarray([-1.0, 0.0, 1.0])).numpy().round(4)
        array([-0.2689,  0.    ,  0.7311], dtype=float32)
    """
    return _ew.unary("silu", x)


swish = silu


@_float64_call(_host.gelu)
def gelu(x: ArrayLike, approximate: str = "none") -> Array:
    """Gaussian error linear unit: exact (erf) or approximate="tanh".

    Examples:
        >>> x = pm.asarray([-1.0, 0.0, 1.0])
        >>> pm.nn.gelu(x).numpy().round(4)
        array([-0.1587,  0.    ,  0.8413], dtype=float32)
        >>> pm.nn.gelu(x, approximate="tanh").numpy().round(3)
        array([-0.159,  0.   ,  0.841], dtype=float32)
    """
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', not %r" % (approximate,))
    return _ew.unary("gelu" if approximate == "none" else "gelu_tanh", x)


def _real(name, x):
    """x as an Array; complex refused: these functions order their input (x > 0, the
    maximum), which complex numbers do not have. PyTorch refuses complex input as well,
    and converting to float would drop the imaginary part silently."""
    x = _ew.as_array(x)
    if _dt.kind(x.dtype) == "c":
        raise TypeError("%s() is not defined for complex arrays (complex numbers have no order); "
                        "apply it to pm.real(x) or pm.abs(x) if that is what you mean" % name)
    return x


def _float32(x, name):
    """x in float32 (half and bfloat16 are computed in float32 and rounded once at the end)."""
    x = _real(name, x)
    return x if x.dtype == _dt.float32 else _ew.astype(x, _dt.float32)


def _result_type(x):
    x = _ew.as_array(x)
    return x.dtype if _dt.kind(x.dtype) == "f" else _dt.float32


def _back(r, dt):
    return r if r.dtype == dt else _ew.astype(r, dt)


@_float64_call(_host.softmax)
def softmax(x: ArrayLike, axis: int = -1) -> Array:
    """exp(x) / sum(exp(x)) along axis, computed stably (max subtracted first).

    Examples:
        >>> pm.nn.softmax(pm.asarray([[1.0, 1.0], [0.0, 1000.0]]))
        Array([[0.5, 0.5],
               [0. , 1. ]], dtype=float32)
    """
    dt, x = _result_type(x), _float32(x, "softmax")
    if x._size == 0:  # nothing to normalise (and no max to subtract)
        return _back(_ew.ascontiguous(x, force=True), dt)
    if _fusable(x, axis):
        return _back(_fused("softmax", softmax)(x), dt)
    e = _ew.unary("exp", _ew.binary("subtract", x, _red.max(x, axis=axis, keepdims=True)))
    s = _red.sum(e, axis=axis, keepdims=True)
    return _back(_ew.binary("divide", e, s), dt)


@_float64_call(_host.log_softmax)
def log_softmax(x: ArrayLike, axis: int = -1) -> Array:
    """x - logsumexp(x) along axis.

    Examples:
        >>> pm.nn.log_softmax(pm.asarray([0.0, 0.0])).numpy().round(4)
        array([-0.6931, -0.6931], dtype=float32)
    """
    dt, x = _result_type(x), _float32(x, "log_softmax")
    if _fusable(x, axis):
        return _back(_fused("log_softmax", log_softmax)(x), dt)
    return _back(_ew.binary("subtract", x, _red.logsumexp(x, axis=axis, keepdims=True)), dt)


# The last axis: one fused kernel (pm.fuse traces the functions above; on a CPU a thread per
# row, 2-4x faster than their five passes here; on a GPU a threadgroup per row, coalesced).
_FUSED: dict = {}


def _fusable(x, axis):
    return type(x) is _Array and x.ndim and axis in (-1, x.ndim - 1)


def _fused(name, fn):
    f = _FUSED.get(name)
    if f is None:
        from .arrays.fusion import fuse
        f = _FUSED[name] = fuse(lambda x: fn(x, -1))
    return f
