"""Neural-network activations and normalisations on pymetal arrays (Metal kernels).

    pm.nn.relu(x), pm.nn.gelu(x, approximate="tanh"), pm.nn.softmax(x, axis=-1)
"""

from . import _elementwise as _ew
from . import _reduce as _red
from . import dtypes as _dt

__all__ = ["relu", "leaky_relu", "sigmoid", "softplus", "silu", "swish", "gelu", "softmax", "log_softmax"]


def relu(x):
    """max(x, 0)."""
    return _ew.unary("relu", x)


def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope * x."""
    x = _ew.as_array(x)
    if _dt.kind(x.dtype) != "f":
        x = _ew.astype(x, _dt.float32)
    return _ew.binary("leaky_relu", x, float(negative_slope))


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return _ew.unary("sigmoid", x)


def softplus(x):
    """log(1 + exp(x)), without overflow."""
    return _ew.unary("softplus", x)


def silu(x):
    """x * sigmoid(x) (also called swish)."""
    return _ew.unary("silu", x)


swish = silu


def gelu(x, approximate="none"):
    """Gaussian error linear unit: exact (erf) or approximate="tanh"."""
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', not %r" % (approximate,))
    return _ew.unary("gelu" if approximate == "none" else "gelu_tanh", x)


def _float32(x):
    """x in float32 (half and bfloat16 are computed in float32 and rounded once at the end)."""
    x = _ew.as_array(x)
    return x if x.dtype == _dt.float32 else _ew.astype(x, _dt.float32)


def _result_type(x):
    x = _ew.as_array(x)
    return x.dtype if _dt.kind(x.dtype) == "f" else _dt.float32


def _back(r, dt):
    return r if r.dtype == dt else _ew.astype(r, dt)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along axis, computed stably (max subtracted first)."""
    dt, x = _result_type(x), _float32(x)
    e = _ew.unary("exp", _ew.binary("subtract", x, _red.max(x, axis=axis, keepdims=True)))
    s = _red.sum(e, axis=axis, keepdims=True)
    return _back(_ew.binary("divide", e, s), dt)


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along axis."""
    dt, x = _result_type(x), _float32(x)
    return _back(_ew.binary("subtract", x, _red.logsumexp(x, axis=axis, keepdims=True)), dt)
