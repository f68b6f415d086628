"""NumPy's protocols on pymetal arrays (NEP 13 __array_ufunc__, NEP 18 __array_function__).

``np.exp(a)``, ``np.add(a, b, out=c)``, ``np.sum(a, axis=1)``,
``np.concatenate([a, b])`` run pymetal's kernels and return pymetal arrays.
NumPy functions and ufunc methods pymetal does not implement run in NumPy on
the same shared memory (no copy; pending work is waited for first) and return
what NumPy returns.
"""

import numpy as np

from . import _elementwise as _ew
from . import _ops
from ._array import Array

_UFUNCS: dict = {}
for _name, _op in list(_ops.UNARY.items()) + list(_ops.BINARY.items()):
    uf = getattr(np, _op.numpy or _name, None)
    if isinstance(uf, np.ufunc) and _name not in ("relu", "leaky_relu"):
        _UFUNCS.setdefault(uf, _name)
_UFUNCS[np.true_divide] = "divide"
_UFUNCS[np.bitwise_not] = "bitwise_invert"
_UFUNCS[np.fabs] = "abs"


def _host(x):
    if isinstance(x, Array):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    if isinstance(x, dict):
        return {k: _host(v) for k, v in x.items()}
    return x


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = _UFUNCS.get(ufunc)
    out = kwargs.pop("out", None)
    simple = not kwargs or (set(kwargs) <= {"dtype"} and kwargs.get("dtype") is None)
    if method == "__call__" and name is not None and simple:
        target = out[0] if isinstance(out, tuple) else out
        if target is None or isinstance(target, Array):
            if len(inputs) == 1:
                return _ew.unary(name, inputs[0], target)
            return _ew.binary(name, inputs[0], inputs[1], target)
    if method == "__call__" and ufunc in _GUFUNCS and simple and out is None:
        from . import _linalg
        return getattr(_linalg, _GUFUNCS[ufunc])(*inputs)
    if method == "reduce" and ufunc in _REDUCING and simple and out is None:
        from . import _reduce
        return getattr(_reduce, _REDUCING[ufunc])(inputs[0], axis=kwargs.get("axis", 0))
    # Not a pymetal kernel: NumPy on the shared memory.
    if out is not None:
        kwargs["out"] = tuple(_host(o) for o in (out if isinstance(out, tuple) else (out,)))
    return getattr(ufunc, method)(*_host(inputs), **_host(kwargs))


_GUFUNCS: dict = {np.matmul: "matmul"}
if isinstance(getattr(np, "vecdot", None), np.ufunc):
    _GUFUNCS[np.vecdot] = "vecdot"
_REDUCING = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
             np.logical_and: "all", np.logical_or: "any"}


def _functions():
    import pymetal as pm
    table = {}
    for name in ("sum", "prod", "max", "min", "all", "any", "argmax", "argmin", "mean", "var", "std",
                 "count_nonzero", "where", "clip", "concatenate", "stack", "reshape", "transpose",
                 "moveaxis", "broadcast_to", "broadcast_arrays", "expand_dims", "squeeze", "flip", "roll",
                 "tile", "repeat", "take", "take_along_axis", "matmul", "tensordot", "vecdot", "outer",
                 "sort", "argsort", "searchsorted", "nonzero", "tril", "triu", "split", "ravel",
                 "zeros_like", "ones_like", "empty_like", "full_like", "copy"):
        np_fn = getattr(np, name, None)
        if np_fn is not None:
            table[np_fn] = name
    table[np.amax] = "max"
    table[np.amin] = "min"
    return table, pm


_FN = None


def _array_function(self, func, types, args, kwargs):
    global _FN
    if _FN is None:
        _FN = _functions()
    table, pm = _FN
    name = table.get(func)
    if name is not None and all(issubclass(t, (Array, np.ndarray)) for t in types):
        try:
            return _call(pm, name, args, kwargs)
        except _Unsupported:
            pass
    return func(*_host(args), **_host(kwargs))


class _Unsupported(Exception):
    pass


def _call(pm, name, args, kwargs):
    kw = dict(kwargs)
    if kw.pop("out", None) is not None:
        raise _Unsupported
    if name in ("sum", "prod", "max", "min", "all", "any", "mean", "argmax", "argmin", "count_nonzero"):
        x = args[0]
        axis = kw.pop("axis", args[1] if len(args) > 1 else None)
        keepdims = kw.pop("keepdims", False)
        dtype = kw.pop("dtype", None)
        if kw or (dtype is not None and name not in ("sum", "prod")):
            raise _Unsupported
        extra = {"dtype": dtype} if dtype is not None else {}
        return getattr(pm, name)(x, axis=axis, keepdims=keepdims, **extra)
    if name in ("var", "std"):
        axis = kw.pop("axis", None)
        ddof = kw.pop("ddof", 0)
        keepdims = kw.pop("keepdims", False)
        if kw:
            raise _Unsupported
        return getattr(pm, name)(args[0], axis=axis, correction=ddof, keepdims=keepdims)
    if name in ("concatenate", "stack"):
        axis = kw.pop("axis", args[1] if len(args) > 1 else 0)
        if kw:
            raise _Unsupported
        return getattr(pm, name)(args[0], axis=axis)
    if name == "reshape":
        shape = kw.pop("shape", kw.pop("newshape", args[1] if len(args) > 1 else None))
        if kw:
            raise _Unsupported
        return pm.reshape(args[0], shape)
    if name == "sort" or name == "argsort":
        axis = kw.pop("axis", args[1] if len(args) > 1 else -1)
        kw.pop("kind", None)
        if kw or axis is None:
            raise _Unsupported
        return getattr(pm, name)(args[0], axis=axis)
    if name == "copy":
        return pm.asarray(args[0], copy=True)
    try:
        return getattr(pm, name)(*args, **kw)
    except TypeError:
        raise _Unsupported from None


Array.__array_ufunc__ = _array_ufunc
Array.__array_function__ = _array_function
