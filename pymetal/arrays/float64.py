"""float64 and complex128 (issue 23): real arrays of them, computed on the host's cores.

Apple GPUs have no double precision, so no Metal kernel takes float64. The policy
(``pm.set_float64_policy`` / env ``PYMETAL_FLOAT64``, read at import):

- ``"host"`` (default, as MLX): float64 and complex128 arrays are pymetal Arrays
  in the same shared memory; an operation with such an operand (a float64 or
  complex128 Array, NumPy array or NumPy scalar, or ``dtype=float64``) runs its
  NumPy counterpart on host views of the memory, after the device work pending on
  the operands' memory, and gives pymetal Arrays. Promotion is NumPy's (NEP 50):
  ``float32_array / np.float64(2)`` is float64; Python floats stay weak
  (``float32_array / 2.0`` is float32, on the device).
- ``"downcast"``: float64 operands become float32 (complex128: complex64) and the
  operation runs on the device; the first conversion in the process warns once
  (``UserWarning``).
- ``"error"``: float64 operands are refused (TypeError), as before issue 23.

This module is the one dispatch point: ``install`` wraps the public functions of
the namespace, ``pm.linalg``, ``pm.fft`` and Array's methods with a check of their
operands (a few type tests per call; the device path is otherwise unchanged).
Custom kernels never take float64 arrays (Metal has no double): they refuse them.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings

import numpy as np

from .. import dtypes as _dt
from .array import Array as _Array, owner_of
from .construct import _from_numpy, _new
from ..runtime.device import device as _default_device

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

POLICIES = ("host", "downcast", "error")
WIDE = frozenset((_dt.float64, _dt.complex128))
_NARROW = {_dt.float64: _dt.float32, _dt.complex128: _dt.complex64}
_WIDE_NAMES = frozenset(("float64", "f8", "<f8", "=f8", "d", "double", "float", "complex128", "c16", "<c16", "=c16",
                         "D", "cdouble", "complex"))


def _env_policy():
    value = os.environ.get("PYMETAL_FLOAT64", "").strip().lower() or "host"
    if value not in POLICIES:
        raise ValueError("PYMETAL_FLOAT64=%r: expected one of %s" % (value, ", ".join(POLICIES)))
    return value


_policy = _env_policy()
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_warned = False


def set_float64_policy(policy: str) -> None:
    """How pymetal treats float64 and complex128 data (Apple GPUs have no double precision).

    - ``"host"`` (default): float64/complex128 arrays are real pymetal arrays whose
      operations run NumPy on the host's cores over the shared memory (NumPy's
      promotion: ``float32_array * np.float64(2)`` is float64);
    - ``"downcast"``: float64 inputs become float32 (complex128: complex64), with one
      UserWarning per process;
    - ``"error"``: float64 inputs raise TypeError.

    The environment variable ``PYMETAL_FLOAT64`` sets it at import.

    Examples:
        >>> pm.set_float64_policy("host")
        >>> pm.asarray(np.arange(3.0)).dtype
        dtype('float64')
    """
    global _policy
    if policy not in POLICIES:
        raise ValueError("set_float64_policy(%r): expected one of %s" % (policy, ", ".join(map(repr, POLICIES))))
    _policy = policy


def get_float64_policy() -> str:
    """The float64 policy: "host", "downcast" or "error" (see set_float64_policy).

    Examples:
        >>> pm.get_float64_policy() in ("host", "downcast", "error")
        True
    """
    return _policy


def host_dtype(dt: np.dtype) -> bool:
    """Whether arrays of dt may exist now: float64/complex128 under the "host" policy."""
    return _policy == "host" and dt in WIDE


def refusal_hint(dt: np.dtype) -> str:
    """The end of the TypeError refusing dt (dtypes.check_dtype): what to do."""
    narrow = _NARROW.get(dt, _dt.float32).name
    if _policy == "host":  # a Metal kernel (custom kernel, or a function NumPy has no counterpart of)
        return ("Metal kernels have no %s (no double precision on the device); convert with "
                ".astype(np.%s)" % (dt, narrow))
    return ("convert with .astype(np.%s), or set pm.set_float64_policy('host') (env PYMETAL_FLOAT64=host) "
            "to compute float64 on the host's cores, or 'downcast'; the policy is now %r" % (narrow, _policy))


# ---- which calls are float64 calls --------------------------------------------------------------

_PLAIN = frozenset((int, float, bool, complex, slice, type(None), type(Ellipsis)))  # never float64


def _wide(x: Any) -> bool:
    t = type(x)
    if t in _PLAIN:  # the common arguments, first: this check runs on every call
        return False
    if t is _Array:
        return x._dtype in WIDE
    if t is np.float64 or t is np.complex128:
        return True
    if t is np.ndarray:
        return x.dtype in WIDE
    if isinstance(x, np.dtype):
        return x in WIDE
    if x is np.float64 or x is np.complex128:  # dtype=np.float64 (the scalar type)
        return True
    if t is list or t is tuple:
        # Python data ([1.0, 2.0], nested lists) is never float64 (it becomes float32): one look at
        # the first element, not a scan of a long list; lists of arrays are looked at whole
        return bool(x) and type(x[0]) not in _PLAIN and any(_wide(v) for v in x)
    if t is str:  # dtype="float64", "f8", "d" (only these: other strings are modes, subscripts, ...)
        return x in _WIDE_NAMES
    return False


def _wide_call(args, kwargs):
    # _wide's first two tests inlined: this runs on every call of the array library
    for a in args:
        t = type(a)
        if t is _Array:
            if a._dtype in WIDE:
                return True
        elif t not in _PLAIN and _wide(a):
            return True
    if kwargs:
        for v in kwargs.values():
            if type(v) not in _PLAIN and _wide(v):
                return True
    return False


# ---- host computation ------------------------------------------------------------------------

def _host(x: Any) -> Any:
    """A pymetal array as a NumPy view of its memory after the device work that uses it
    (Array._read: the buffer's epoch counts reads and writes, so the host may also write it)."""
    t = type(x)
    if t is _Array:
        return x._read()
    if t is list or t is tuple:
        return t(_host(v) for v in x)
    return x


def _device(r: Any, dev: Any) -> Any:
    """NumPy's result as pymetal arrays: arrays in (or viewing) pymetal memory; NumPy scalars
    as 0-d arrays (as pymetal's reductions give); other values as they are."""
    if isinstance(r, np.ndarray):
        if r.dtype in WIDE:
            return _from_numpy(r, dev)  # NumPy's memory when page-aligned (zero-copy), else a copy
        if owner_of(r) is not None:
            return _from_numpy(r, dev)  # a view of pymetal memory (x64[1:3], x64.T)
        return _from_numpy(r, dev, True)  # not float64: in pymetal memory, so kernels on it stay asynchronous
    if isinstance(r, np.generic):
        return _from_numpy(np.asarray(r), dev, True)
    if type(r) is tuple or type(r) is list:
        return type(r)(_device(v, dev) for v in r)
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # a named tuple (np.linalg.svd's SVDResult)
        return type(r)(*(_device(v, dev) for v in r))
    return r


def _find_device(args, kwargs):
    dev = kwargs.pop("device", None)
    if dev is not None and dev != "cpu":
        return dev
    for a in args:
        if type(a) is _Array:
            return a._buf.device
    return _default_device()


def _ufunc_out(ufunc, hargs, kwargs, dev):
    """Outputs in pymetal memory for a ufunc call (NumPy writes there: zero-copy), or None."""
    if kwargs or len(hargs) != ufunc.nin:
        return None
    try:
        shape = np.broadcast_shapes(*(np.shape(a) for a in hargs))
        # Python scalars stay weak (NEP 50): resolve_dtypes takes their type
        dts = tuple(type(a) if type(a) in (int, float, complex) else np.asarray(a).dtype for a in hargs)
        outs = ufunc.resolve_dtypes(dts + (None,) * ufunc.nout)[ufunc.nin:]
    except Exception:
        return None
    res = []
    for dt in outs:
        if dt not in _dt.SUPPORTED and dt not in WIDE:
            return None
        a = _new(shape, dt, dev)
        a._buf.host_ready()  # recycled memory: the device work still using it first
        res.append(a)
    return res


def _run_host(np_fn: Callable, args: tuple, kwargs: dict) -> Any:
    kwargs = dict(kwargs)
    dev = _find_device(args, kwargs)
    kwargs.pop("stream", None)
    hargs, hkw = _host(args), {k: _host(v) for k, v in kwargs.items()}
    if isinstance(np_fn, np.ufunc):
        outs = _ufunc_out(np_fn, hargs, hkw, dev)
        if outs is not None:
            np_fn(*hargs, out=tuple(o._host() for o in outs))
            return outs[0] if len(outs) == 1 else tuple(outs)
    r = np_fn(*hargs, **hkw)
    for a, h in zip(args, hargs):
        if r is h and type(a) is _Array:  # NumPy gave its input back (asarray, astype(copy=False)): the Array
            return a
    res = _device(r, dev)
    if type(res) is _Array and isinstance(r, np.ndarray):
        for a, h in zip(args, hargs):  # NumPy's view of an operand (x64[1:], x64.T): .base is the operand's
            if type(a) is _Array and _views(r, h):
                res._base = a if a._base is None else a._base
                break
    return res


def _views(r: np.ndarray, h: Any) -> bool:
    """Whether NumPy's result r is a view of h: their .base chains meet (NumPy's view of a view
    has the first view's base as its own)."""
    if not isinstance(h, np.ndarray):
        return False
    chain = set()
    b = h
    while b is not None:
        chain.add(id(b))
        b = getattr(b, "base", None)
    b = r.base
    while b is not None:
        if id(b) in chain:
            return True
        b = getattr(b, "base", None)
    return False


# ---- downcast -------------------------------------------------------------------------------------

def _warn_once():
    global _warned
    if not _warned:
        _warned = True
        frame, level = sys._getframe(1), 2  # the warning names the user's line, outside pymetal
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
            frame, level = frame.f_back, level + 1
        warnings.warn("pymetal: float64/complex128 data converted to float32/complex64 (float64 policy "
                      "'downcast'; Apple GPUs have no double precision). pm.set_float64_policy('host') "
                      "computes float64 on the host instead. This warning is shown once.",
                      UserWarning, stacklevel=level)


def _narrow(x: Any) -> Any:
    t = type(x)
    if t is _Array:
        if x._dtype not in WIDE:
            return x
        _warn_once()
        return _from_numpy(x._read().astype(_NARROW[x._dtype]), x._buf.device, True)
    if t is np.float64 or t is np.complex128:
        _warn_once()
        return np.float32(x) if t is np.float64 else np.complex64(x)
    if t is np.ndarray:
        if x.dtype not in WIDE:
            return x
        _warn_once()
        return x.astype(_NARROW[x.dtype])
    if t is list or t is tuple:
        return t(_narrow(v) for v in x) if any(_wide(v) for v in x) else x
    if isinstance(x, np.dtype) or x is np.float64 or x is np.complex128 or t is str:
        if _wide(x):
            _warn_once()
            return _NARROW[np.dtype(x)]
    return x


# ---- the dispatch point ---------------------------------------------------------------------------

def dispatch(pm_fn: Callable, host_fn: Callable | None, args: tuple, kwargs: dict, raw: bool = False) -> Any:
    """A call with a float64/complex128 operand, under the current policy. host_fn is NumPy's
    function (called on host views), or with `raw` one of pymetal's that takes pymetal arrays."""
    if _policy == "downcast":
        return pm_fn(*_narrow(args), **{k: _narrow(v) for k, v in kwargs.items()})
    if host_fn is None:  # nothing NumPy computes it with: pymetal's own refusal
        return pm_fn(*args, **kwargs)
    if raw:
        return host_fn(*args, **kwargs)
    try:
        return _run_host(host_fn, args, kwargs)
    except (IndexError, ValueError):
        r = _zero_size_call(pm_fn, args, kwargs)
        if r is None:
            raise
        return r


_WIDEN = {v: k for k, v in _NARROW.items()}


def _zero_size_call(pm_fn: Callable, args: tuple, kwargs: dict) -> Any:
    """NumPy's quantiles and medians fail on a zero-size array (they index its last element:
    IndexError, or reshape it to (0, newaxis): ValueError) where pymetal's give NaN or an empty
    result, as for float32; Dask infers the chunk type of a result by calling functions on
    zero-size arrays. An empty array has no values to lose: pymetal's own function runs on
    float32 and its result is widened back. None if that fails too (NumPy's error stands)."""
    if not (args and type(args[0]) is _Array and args[0]._size == 0):
        return None
    global _warned
    warned, _warned = _warned, True  # (no "converted to float32" warning: there is nothing to convert)
    try:
        r = pm_fn(*_narrow(args), **{k: _narrow(v) for k, v in kwargs.items()})
    except Exception:
        return None
    finally:
        _warned = warned
    return r.astype(_WIDEN[r._dtype]) if type(r) is _Array and r._dtype in _WIDEN else r


def wrap(pm_fn: Callable, host_fn: Callable | None, raw: bool = False) -> Callable:
    """pm_fn, with calls that have a float64 operand sent to `dispatch`."""
    @functools.wraps(pm_fn)
    def fn(*args, **kwargs):
        if _policy != "error" and _wide_call(args, kwargs):
            return dispatch(pm_fn, host_fn, args, kwargs, raw)
        return pm_fn(*args, **kwargs)
    fn._float64_wrapped = pm_fn  # type: ignore[attr-defined]
    return fn


def _method(name: str, pm_fn: Callable) -> Callable:
    """An Array method: on the host, ndarray's method of the same name on the host view."""
    inplace = name in ("__setitem__", "fill", "sort", "put") or (name.startswith("__i") and name not in
                                                                  ("__invert__", "__index__", "__int__"))

    def host_fn(self, *args, **kwargs):
        r = getattr(self, name)(*args, **kwargs)
        if inplace:
            return _SELF if r is None or r is self else r
        return r

    @functools.wraps(pm_fn)
    def fn(self, *args, **kwargs):
        if _policy != "error" and (self._dtype in WIDE or _wide_call(args, kwargs)):
            if _policy == "host" and inplace:
                r = _run_host(host_fn, (self,) + args, kwargs)
                if r is _SELF:  # x += y gives x; x[k] = v, x.fill(v), x.sort() give None
                    return self if name.startswith("__i") else None
                return r
            return dispatch(pm_fn, host_fn, (self,) + args, kwargs)
        return pm_fn(self, *args, **kwargs)

    code = getattr(pm_fn, "__code__", None)
    if code is None or code.co_argcount != 2 or code.co_kwonlyargcount or code.co_flags & 0x0C \
            or pm_fn.__defaults__:  # (0x0C: *args, **kwargs)
        return fn

    # An operator (x + y, x < y, ...): the check without fn's packing of *args and **kwargs,
    # which would cost a small op a third of its time; float64 calls go through fn.
    @functools.wraps(pm_fn)
    def operator(self, other):
        if _policy != "error" and (self._dtype in WIDE or (
                other._dtype in WIDE if type(other) is _Array else type(other) not in _PLAIN and _wide(other))):
            return fn(self, other)
        return pm_fn(self, other)
    return operator


_SELF = object()  # an in-place method's result: the Array itself

# Array's methods that need no kernel, or that read the memory for the host themselves.
_HOST_SAFE = frozenset((
    "__array__", "__array_function__", "__array_namespace__", "__array_ufunc__", "__bool__", "__class__",
    "__complex__", "__delattr__", "__dir__", "__dlpack__", "__dlpack_device__", "__float__", "__format__",
    "__getattribute__", "__getstate__", "__hash__", "__index__", "__init__", "__init_subclass__", "__int__",
    "__iter__", "__len__", "__new__", "__reduce__", "__reduce_ex__", "__repr__", "__setattr__", "__sizeof__",
    "__str__", "__subclasshook__", "item", "to_device", "tolist", "tobytes",
    "resize",  # (in place, composed of zeros and a copy that dispatch themselves)
    "tofile", "dump", "dumps", "setflags",  # (NumPy's bytes of x.numpy(), pymetal's pickle, the flag)
))


def _host_function(module: Any, name: str) -> Callable | None:
    f = getattr(module, name, None)
    return f if callable(f) and not isinstance(f, type) else None


def install(namespace: dict, array_cls: type = _Array) -> None:
    """Wraps the namespace's functions, pm.linalg's, pm.fft's and Array's methods (once)."""
    from .. import fft, linalg
    if getattr(array_cls, "_float64_installed", False):
        return
    skip = {"result_type", "can_cast", "finfo", "iinfo", "isdtype", "broadcast_shapes", "set_float64_policy",
            "get_float64_policy", "precompile"}
    wrapped: dict = {}  # one wrapper per function: aliases stay the same object (pm.power is pm.pow)
    for name, f in list(namespace.items()):
        if name.startswith("_") or name in skip or isinstance(f, type) or not callable(f):
            continue
        if id(f) in wrapped:
            namespace[name] = wrapped[id(f)]
        elif getattr(f, "__module__", "").startswith("pymetal") and not hasattr(f, "_float64_wrapped"):
            host = _host_function(np, name)
            namespace[name] = wrapped[id(f)] = w = wrap(f, host)
            for m in ("reduce", "accumulate", "outer", "at", "reduceat"):  # pm.add.reduce: NumPy's ufunc methods
                if callable(getattr(f, m, None)):
                    setattr(w, m, wrap(getattr(f, m), getattr(host, m, None)))
    for mod, np_mod in ((linalg, np.linalg), (fft, np.fft)):
        for name in getattr(mod, "__all__", ()):
            f = getattr(mod, name)
            if callable(f) and not isinstance(f, type) and not hasattr(f, "_float64_wrapped"):
                setattr(mod, name, wrap(f, _host_function(np_mod, name) or _host_function(np, name)))
    for name in dir(array_cls):
        f = getattr(array_cls, name, None)
        if name in _HOST_SAFE or not callable(f) or isinstance(f, type):
            continue
        if hasattr(np.ndarray, name) or name in ("permute_dims", "broadcast_to", "expand_dims", "ptp"):
            host = name if hasattr(np.ndarray, name) else None
            if host is None:  # Array-only methods: NumPy's function of that name
                setattr(array_cls, name, wrap(f, _host_function(np, name)))
            else:
                setattr(array_cls, name, _method(name, f))
    for name in ("real", "imag"):
        p = getattr(array_cls, name)
        setattr(array_cls, name, property(_part(name, p.fget), _part_set(name, p.fset)))
    setattr(array_cls, "_float64_installed", True)


def _part(name, fget):
    """x.real / x.imag: for complex128 a float64 view (the device's takes float32 parts)."""
    @functools.wraps(fget)
    def get(self):
        if self._dtype in WIDE and _policy == "host":
            return _device(getattr(self._read(), name), self._buf.device)
        return fget(self)
    return get


def _part_set(name, fset):
    @functools.wraps(fset)
    def set_(self, value):
        if _policy == "host" and (self._dtype in WIDE or _wide(value)):
            setattr(self._read(), name, _host(value))
            return
        fset(self, value)
    return set_

