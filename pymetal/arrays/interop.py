"""NumPy's protocols on pymetal arrays (NEP 13 __array_ufunc__, NEP 18 __array_function__).

``np.exp(a)``, ``np.add(a, b, out=c)``, ``np.sum(a, axis=1)``,
``np.concatenate([a, b])`` run pymetal's kernels and return pymetal arrays.
A NumPy function's arguments, positional or keyword, are bound to its
signature and all passed on (``np.var(x, 0)`` reduces over axis 0); a call
with an argument pymetal has no equivalent for (``out=``, ``order="F"``,
``where=``), and NumPy functions and ufunc methods pymetal does not implement,
run in NumPy on the same shared memory (no copy; pending work is waited for
first) and return what NumPy returns.
"""

from typing import Any, Callable

import numpy as np

from . import elementwise as _ew
from . import float64 as _f64
from . import optable as _ops
from .. import dtypes as _dt
from .array import Array
from .construct import asarray
from . import linear_algebra as _linalg
from .numpy_api import (
    creation as _numpy_creation, functions as _numpy_api, more as _numpy_more, reduce as _numpy_reduce, shapes as _numpy_shapes, signal as _numpy_signal, stats as _numpy_stats, ufuncs as _numpy_ufuncs,
)

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
    if _f64.get_float64_policy() != "error" and _f64._wide_call(inputs, kwargs):
        # np.add(float64 data, x), np.add.reduce(...): the float64 policy (arrays/float64.py)
        host = getattr(ufunc, method)
        return _f64.dispatch(getattr(_ew.FUNCTIONS.get(_UFUNCS.get(ufunc, "")), method, None) or host, host,
                             inputs, kwargs)
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
        return getattr(_linalg, _GUFUNCS[ufunc])(*inputs)
    if (method != "__call__" and name is not None and hasattr(_ew.FUNCTIONS.get(name), method)
            and isinstance(inputs[0], Array)):
        # NumPy's ufunc methods as pymetal's (numpy_api/ufuncs.py): np.add.at(x, i, v) changes x
        if out is not None:
            kwargs["out"] = out
        return getattr(_ew.FUNCTIONS[name], method)(*inputs, **kwargs)
    # Not a pymetal kernel: NumPy on the shared memory.
    if out is not None:
        kwargs["out"] = tuple(_host(o) for o in (out if isinstance(out, tuple) else (out,)))
        return getattr(ufunc, method)(*_host(inputs), **_host(kwargs))
    return _device(getattr(ufunc, method)(*_host(inputs), **_host(kwargs)))


def _device(r):
    """NumPy's result of a call on pymetal arrays, as pymetal arrays: code that calls NumPy
    functions on pymetal arrays (Dask on its chunks, xarray) keeps getting pymetal arrays.
    NumPy scalars become 0-d arrays (np.max(x) of a pymetal x is one, as pm.max(x) gives).
    Arrays and scalars of dtypes pymetal has no kernels for (float64, structured), Python
    values and other results stay as NumPy gives them."""
    if isinstance(r, (np.ndarray, np.generic)) and (r.dtype in _dt.SUPPORTED or _f64.host_dtype(r.dtype)):
        return asarray(r)
    if type(r) is tuple or type(r) is list:
        return type(r)(_device(v) for v in r)
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # a named tuple (np.linalg.qr's QRResult)
        return type(r)(*(_device(v) for v in r))
    return r


_GUFUNCS: dict = {np.matmul: "matmul"}
if isinstance(getattr(np, "vecdot", None), np.ufunc):
    _GUFUNCS[np.vecdot] = "vecdot"


# NumPy function -> (pymetal function, NumPy parameters passed positionally, NumPy parameter ->
# pymetal keyword). An argument given to the NumPy function that is in neither (and is not the
# parameter's default) cannot be passed on: the call then runs in NumPy (below), which honours it.
_REDUCTION = {"axis": "axis", "keepdims": "keepdims"}
_LIKE = {"dtype": "dtype", "shape": "shape", "subok": None, "order": None}
_SPECS = {
    "sum": ("sum", ("a",), dict(_REDUCTION, dtype="dtype")),
    "prod": ("prod", ("a",), dict(_REDUCTION, dtype="dtype")),
    "max": ("max", ("a",), _REDUCTION), "amax": ("max", ("a",), _REDUCTION),
    "min": ("min", ("a",), _REDUCTION), "amin": ("min", ("a",), _REDUCTION),
    "all": ("all", ("a",), _REDUCTION), "any": ("any", ("a",), _REDUCTION),
    "argmax": ("argmax", ("a",), _REDUCTION), "argmin": ("argmin", ("a",), _REDUCTION),
    "mean": ("mean", ("a",), _REDUCTION),
    "count_nonzero": ("count_nonzero", ("a",), _REDUCTION),
    "var": ("var", ("a",), dict(_REDUCTION, ddof="correction", correction="correction")),
    "std": ("std", ("a",), dict(_REDUCTION, ddof="correction", correction="correction")),
    "where": ("where", ("condition", "x", "y"), {}),
    "clip": ("clip", ("a",), {"a_min": "min", "a_max": "max", "min": "min", "max": "max"}),
    "concatenate": ("concatenate", ("arrays",), {"axis": "axis"}),
    "stack": ("stack", ("arrays",), {"axis": "axis"}),
    "reshape": ("reshape", ("a", "shape"), {"copy": "copy"}),
    "transpose": ("transpose", ("a", "axes"), {}),
    "moveaxis": ("moveaxis", ("a", "source", "destination"), {}),
    "broadcast_to": ("broadcast_to", ("array", "shape"), {}),
    "broadcast_arrays": ("broadcast_arrays", ("args",), {}),
    "expand_dims": ("expand_dims", ("a", "axis"), {}),
    "squeeze": ("squeeze", ("a", "axis"), {}),
    "flip": ("flip", ("m",), {"axis": "axis"}),
    "roll": ("roll", ("a", "shift"), {"axis": "axis"}),
    "tile": ("tile", ("A", "reps"), {}),
    "repeat": ("repeat", ("a", "repeats"), {"axis": "axis"}),
    "take": ("take", ("a", "indices"), {"axis": "axis"}),
    "take_along_axis": ("take_along_axis", ("arr", "indices"), {"axis": "axis"}),
    "tensordot": ("tensordot", ("a", "b"), {"axes": "axes"}),
    "outer": ("outer", ("a", "b"), {}),
    "sort": ("sort", ("a",), {"axis": "axis", "stable": "stable", "kind": None}),  # any kind sorts alike
    "argsort": ("argsort", ("a",), {"axis": "axis", "stable": "stable", "kind": None}),
    "searchsorted": ("searchsorted", ("a", "v"), {"side": "side", "sorter": "sorter"}),
    "nonzero": ("nonzero", ("a",), {}),
    "tril": ("tril", ("m",), {"k": "k"}), "triu": ("triu", ("m",), {"k": "k"}),
    "split": ("split", ("ary", "indices_or_sections", "axis"), {}),
    "ravel": ("ravel", ("a",), {}),
    # shape= (Dask makes its chunks' metadata this way); order= only lays out memory: pymetal's are C.
    "zeros_like": ("zeros_like", ("a",), _LIKE), "ones_like": ("ones_like", ("a",), _LIKE),
    "empty_like": ("empty_like", ("prototype",), _LIKE), "full_like": ("full_like", ("a", "fill_value"), _LIKE),
    "copy": ("asarray", ("a",), {"subok": None}),
}


def _functions():
    import inspect

    import pymetal as pm  # at call time: the face: NumPy's functions map onto the whole namespace
    # NumPy function: (pymetal function, NumPy's signature, positional names, keyword map);
    # the last three None for a function called with the arguments as given
    table: dict[Any, tuple[Callable[..., Any], inspect.Signature | None, tuple[str, ...] | None, object]] = {}
    for name, (pm_name, positional, keywords) in _SPECS.items():
        fn = getattr(np, name, None)
        if fn is not None and not isinstance(fn, np.ufunc):
            pm_fn = getattr(pm, pm_name)
            if keywords is _LIKE:
                pm_fn = _with_shape(pm_fn, getattr(pm, pm_name[:-len("_like")]))
            table[fn] = (pm_fn, inspect.signature(fn), positional, keywords)
    # NumPy's functions pymetal implements with NumPy's signature (numpy_api/): called as given.
    # Imported on first dispatch: the table spans the whole namespace, extensions (linalg) included.
    from .. import linalg  # at call time: pm.linalg: an extension over arrays/
    for mod in (_numpy_api, _numpy_creation, _numpy_reduce, _numpy_shapes, _numpy_signal, _numpy_stats, _numpy_ufuncs, _numpy_more):
        for name, f in vars(mod).items():
            fn = getattr(np, name, None)
            if getattr(f, "__module__", None) == mod.__name__ and callable(fn) and not isinstance(fn, np.ufunc):
                # float64 operands follow the float64 policy (NumPy's fn on the host views), as
                # through the namespace: these functions are not the namespace's wrapped ones
                table.setdefault(fn, (_f64.wrap(f, fn), None, None, None))
    table[np.linalg.norm] = (linalg.norm, None, None, None)
    return table


def _with_shape(like, new):
    """np.zeros_like(a, shape=s) and friends: pm.zeros(s, dtype=a.dtype) when a shape is given."""
    def fn(a, *fill, dtype=None, shape=None):
        if shape is None:
            return like(a, *fill, dtype=dtype)
        return new(shape, *fill, dtype=a.dtype if dtype is None else dtype)
    fn.__name__ = like.__name__
    return fn


_FN = None


def _array_function(self, func, types, args, kwargs):
    global _FN
    if _FN is None:
        _FN = _functions()
    if func in _LIKE_FUNCS:
        dt = _like_dtype(func, args, kwargs)
        if dt not in _dt.SUPPORTED and not _f64.host_dtype(dt):
            # np.empty_like(x, dtype=[("vals", ...), ("arg", ...)]) of a pymetal x: an array of x's
            # type cannot hold it. TypeError, as CuPy raises, is what callers test for (Dask's
            # arg-reductions then keep their pieces as pymetal arrays in a dict).
            raise TypeError("pymetal arrays cannot hold dtype %s; use NumPy's %s on a NumPy array"
                            % (dt, func.__name__))
    spec = _FN.get(func)
    if spec is not None and all(issubclass(t, (Array, np.ndarray)) for t in types):
        try:
            if spec[1] is None:
                return spec[0](*args, **kwargs)
            return _call(spec, args, kwargs)
        except (_Unsupported, TypeError, NotImplementedError):
            pass  # an argument pymetal does not take: NumPy's, below
    return _device(func(*_host(args), **_host(kwargs)))


# (not _LIKE, the keyword map above: _functions() tells the like-functions by it)
_LIKE_FUNCS = (np.empty_like, np.zeros_like, np.ones_like, np.full_like)


def _like_dtype(func, args, kwargs):
    at = 2 if func is np.full_like else 1  # dtype's position: (a, [fill_value,] dtype, ...)
    dtype = kwargs.get("dtype", args[at] if len(args) > at else None)
    return np.dtype(dtype) if dtype is not None else args[0].dtype


class _Unsupported(Exception):
    pass


def _call(spec, args, kwargs):
    """The pymetal function called with every argument of the NumPy call, bound to the
    NumPy function's signature (np.var(x, 0) reduces over axis 0; np.sum(x, 0, np.int32)
    sums in int32); _Unsupported when an argument has no pymetal equivalent."""
    fn, sig, positional, keywords = spec
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        raise _Unsupported from None  # NumPy raises its own error
    pos = []
    kw = {}
    for name, value in bound.arguments.items():
        param = sig.parameters[name]
        if name in positional:
            if param.kind is param.VAR_POSITIONAL:
                pos.extend(value)
            else:
                pos.append(value)
        elif name in keywords:
            if keywords[name] is not None:
                kw[keywords[name]] = value
        elif not _is_default(value, param.default):
            raise _Unsupported  # e.g. out=, order="F", where=: NumPy computes it
    given = [name for name in positional if name in bound.arguments]
    if given != list(positional[:len(given)]):
        raise _Unsupported  # a gap in the positional arguments (np.where(c, y=b))
    if fn.__name__ == "asarray":
        kw["copy"] = True  # np.copy
    try:
        return fn(*pos, **kw)
    except TypeError:
        raise _Unsupported from None


def _is_default(value, default):
    if value is default or value is None and default is None:
        return True
    return isinstance(value, (str, bool)) and type(value) is type(default) and value == default

