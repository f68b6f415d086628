"""pm.nn's activations on float64 data: NumPy on the host (the float64 policy "host").

Apple GPUs have no double precision, so no Metal kernel takes float64 (arrays/float64.py).
`float64_call(host)` decorates a pm.nn function: a call with a float64 operand goes
to the float64 policy, which runs `host` (these NumPy functions, on host views of the
arrays' memory) under "host", narrows the operands to float32 under "downcast", and
leaves the refusal to the function under "error". complex128 is refused here, as the
device functions refuse complex64 where they order their input.
"""

from __future__ import annotations

import math

import numpy as np

from .arrays import float64 as _f64

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


def float64_call(host: Callable[..., Any]) -> Callable[[F], F]:
    def deco(fn: F) -> F:
        return _f64.wrap(fn, host)  # type: ignore[return-value]  # functools.wraps: fn's signature
    return deco


def _real(name, x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("pm.nn.%s() takes real input; got %s (convert with pm.real(x) or pm.abs(x), or "
                        ".astype(np.float64))" % (name, x.dtype))
    return x


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))  # 1 / (1 + exp(-x)), keeping the left tail's relative accuracy


def relu(x):
    return np.maximum(_real("relu", x), 0.0)


def leaky_relu(x, negative_slope=0.01):
    x = _real("leaky_relu", x)
    return np.where(x > 0, x, negative_slope * x)


def sigmoid(x):
    return _sigmoid(_real("sigmoid", x))


def softplus(x):
    return np.logaddexp(0.0, _real("softplus", x))


def silu(x):
    x = _real("silu", x)
    return x * _sigmoid(x)


_erfc = np.vectorize(math.erfc, otypes=[np.float64])  # NumPy has no erf


def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', not %r" % (approximate,))
    x = _real("gelu", x)
    if approximate == "tanh":  # 0.5 x (1 + tanh(u)) = x sigmoid(2u)
        return x * _sigmoid(2 * 0.7978845608028654 * (x + 0.044715 * x ** 3))
    return 0.5 * x * _erfc(-x / math.sqrt(2))


def softmax(x, axis=-1):
    x = _real("softmax", x)
    if x.size == 0:
        return x.copy()
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    x = _real("log_softmax", x)
    if x.size == 0:
        return x.copy()
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))
