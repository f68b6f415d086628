"""Elementwise operations: dtype resolution, broadcasting, layout choice, dispatch.

Every op of the table in optable.py becomes a module function here (``add``,
``exp``, ...). A call resolves the computation dtype (promotion, weak Python
scalars), converts operands that need it, picks a layout (contiguous ``v``,
array-and-scalar ``vs``/``sv``, general strided ``g`` after collapsing
dimensions), allocates the output from the caching allocator and encodes one
kernel on the device's stream. Nothing waits for the device.
"""

from __future__ import annotations

import struct

import numpy as np

from . import elementwise_examples as _examples
from .kernels import lookup as _jit
from . import optable as _ops
from . import small as _small
from .. import dtypes as _dt
from .array import Array, check_writeable
from .construct import _new, asarray
from .overlap import overlaps_differently

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from ..runtime.device import Device
    from .._typing import ArrayLike, Scalar

    class _Unary(Protocol):
        def __call__(self, x: ArrayLike, /, *, out: Array | None = None) -> Array: ...

    class _Binary(Protocol):
        def __call__(self, x1: ArrayLike | Scalar, x2: ArrayLike | Scalar, /, *, out: Array | None = None) -> Array: ...

_U32_MAX = 0xFFFFFFFF
_TG = 256  # threads per threadgroup for elementwise kernels


# ---- operands ------------------------------------------------------------------------

def is_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def as_array(x: object, dev: Device | None = None) -> Array:
    """An Array for an array-like operand (NumPy arrays shared when possible)."""
    if isinstance(x, Array):
        return x
    if hasattr(x, "_pm_trace"):  # a traced array of pm.fuse (arrays/fusion.py)
        return x  # type: ignore[return-value]  # it stands in for an Array
    if isinstance(x, np.generic) or is_scalar(x):
        return asarray(x, device=dev)  # a 0-d array (a Python scalar: int64 / float32 / complex64)
    try:
        return asarray(x, device=dev)
    except TypeError:
        raise
    except Exception as e:
        raise TypeError("cannot use %s as a pymetal array: %s" % (type(x).__name__, e)) from None


def scalar_value(value, dt):
    """value as a NumPy scalar of dt (passed to kernels by value).

    A Python scalar converts as in NumPy 2 (NEP 50): an int out of the range of an
    integer dt is an OverflowError (never wraps), a float rounds once, from its
    double, to dt (float16 through float32 would round twice). A NumPy scalar
    converts as NumPy's astype (C casting)."""
    if is_scalar(value):
        return np.asarray(value, dtype=dt)[()]
    return np.asarray(value).astype(dt)[()]


def broadcast_shapes(*shapes):
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        n = 1
        for s in shapes:
            j = i - (nd - len(s))
            if j < 0:
                continue
            m = s[j]
            if m != 1:
                if n != 1 and n != m:
                    raise ValueError("operands could not be broadcast together with shapes %s"
                                     % " ".join(str(tuple(s)) for s in shapes))
                n = m
        out.append(n)
    return tuple(out)


# ---- layouts ---------------------------------------------------------------------------

_STRIDED = struct.Struct("<i8I4x32q")
_params_cache: dict = {}


def collapse(shape, strides_list):
    """Merges dimensions contiguous in every operand; drops size-1 ones.
    strides in elements. Returns (shape, [strides per operand])."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (1,), [(0,) for _ in strides_list]
    out_shape = [shape[dims[0]]]
    out_strides = [[s[dims[0]]] for s in strides_list]
    for i in dims[1:]:
        n = shape[i]
        if all(os[-1] == s[i] * n for os, s in zip(out_strides, strides_list)):
            out_shape[-1] *= n
            for os, s in zip(out_strides, strides_list):
                os[-1] = s[i]
        else:
            out_shape.append(n)
            for os, s in zip(out_strides, strides_list):
                os.append(s[i])
    return tuple(out_shape), [tuple(s) for s in out_strides]


def strided(shape, strides_list):
    """(params bytes, grid, threadgroup) for a g kernel over shape with operands'
    element strides (memoised: repeated shapes cost a dictionary lookup)."""
    key = (shape, tuple(strides_list))
    hit = _params_cache.get(key)
    if hit is not None:
        return hit
    cshape, cstrides = collapse(shape, strides_list)
    if len(cshape) > 8:
        raise ValueError("arrays of more than 8 non-contiguous dimensions are not supported "
                         "(shape %r); make the operand contiguous first" % (shape,))
    while len(cshape) < 2:
        cshape = (1,) + cshape
        cstrides = [(0,) + s for s in cstrides]
    z = 1
    for n in cshape[:-2]:
        z *= n
    grid = (cshape[-1], cshape[-2], z)
    if max(grid) > _U32_MAX:
        raise ValueError("array of shape %r is too large for one dispatch" % (shape,))
    vals = [len(cshape)] + list(cshape) + [0] * (8 - len(cshape))
    for k in range(4):
        s = cstrides[k] if k < len(cstrides) else ()
        vals += list(s) + [0] * (8 - len(s))
    tx = min(grid[0], _TG)
    ty = min(grid[1], max(1, _TG // tx))
    hit = (_STRIDED.pack(*vals), grid, (tx, ty, 1))
    if len(_params_cache) > 4096:
        _params_cache.clear()
    _params_cache[key] = hit
    return hit


def elem_strides(a, shape=None):
    """Element strides of Array a broadcast to shape."""
    isz = a._dtype.itemsize
    st = [s // isz for s in a._strides]
    if shape is None or shape == a._shape:
        return tuple(st)
    pad = len(shape) - a.ndim
    out = [0] * pad
    for n, m, s in zip(shape[pad:], a._shape, st):
        out.append(s if m == n else 0)
    return tuple(out)


def _grid1(n):
    if n > _U32_MAX:
        raise ValueError("arrays of more than 2**32-1 elements are not supported by this kernel")
    return n


def _tg1(n):
    return min(n, _TG)


# ---- conversions, copies, fills ------------------------------------------------------------

def astype(x, dt):
    """A new C-contiguous array with x's values converted to dt."""
    if type(x) is not Array and hasattr(x, "_pm_trace"):  # pm.fuse records the op instead (arrays/fusion.py)
        return x._pm_trace.astype(x, dt)
    out = _new(x._shape, dt, x._buf.device)
    copy_into(x, out)
    return out


def copy_into(src, out):
    """out[...] = src (src broadcast to out's shape, converted to out's dtype)."""
    check_writeable(out)
    n = out._size
    if n == 0:
        return out
    if src._dtype.fields is not None and src._dtype == out._dtype:  # struct records: copied as their bytes
        copy_into(*as_words(src.broadcast_to(out._shape) if src._shape != out._shape else src, out))
        return out
    if overlaps_differently(out, src):
        src = astype(src, src._dtype)  # read it all before out is written (x[1:] = x[:-1])
    if src._shape != out._shape:
        src = src.broadcast_to(out._shape)
    if type(src) is Array and _small.copy(src, out):  # (not a pm.fuse trace: fusion.py reports it)
        return out
    if src._cc and out._cc:
        fn = _jit.kernel(_ops.copy_name("v", src._dtype, out._dtype), "copy", src._dtype, out._buf.device)
        fn(src, out, grid=_grid1(n), threadgroup=_tg1(n))
    else:
        params, grid, tg = strided(out._shape, [elem_strides(src), elem_strides(out)])
        fn = _jit.kernel(_ops.copy_name("g", src._dtype, out._dtype), "copy", src._dtype, out._buf.device)
        fn(src, out, params, grid=grid, threadgroup=tg)
    return out


def as_words(*arrays):
    """Struct arrays (of one dtype) as views of unsigned words, with one more axis for the words of
    a record: the widest word that every size, offset and stride allows. Copies and gathers move
    records of any size so, with the kernels of the number dtypes."""
    size = arrays[0]._dtype.itemsize
    w = next(w for w in (8, 4, 2, 1) if all(v % w == 0 for a in arrays for v in (size, a._offset) + a._strides))
    u = np.dtype("u%d" % w)
    return tuple(a._view(a._offset, a._shape + (size // w,), a._strides + (w,), u) for a in arrays)


def records(words, dtype):
    """as_words' view back: the records of a words array (its last axis one record's words)."""
    return words._view(words._offset, words._shape[:-1], words._strides[:-1], dtype)


def ascontiguous(x, force=False):
    if x._cc and not force:
        return x
    return astype(x, x._dtype)


def fill(x, value):
    """x[...] = value (a Python or NumPy scalar, or a 0-d / size-1 array)."""
    check_writeable(x)
    if isinstance(value, Array) or isinstance(value, np.ndarray):
        return copy_into(as_array(value), x) if x._size else x
    dt = x._dtype
    if is_scalar(value) and _dt.kind(dt) in "iu" and isinstance(value, float):
        value = int(value)  # NumPy truncates on assignment
    v = scalar_value(value, dt)  # converted first: a value x cannot hold is an error even if x is empty
    if x._size == 0:
        return x
    if x._cc:
        _jit.kernel(_ops.fill_name("v", dt), "copy", dt, x._buf.device)(x, v, grid=_grid1(x._size), threadgroup=_tg1(x._size))
    else:
        params, grid, tg = strided(x._shape, [elem_strides(x)])
        _jit.kernel(_ops.fill_name("g", dt), "copy", dt, x._buf.device)(x, v, params, grid=grid, threadgroup=tg)
    return x


# ---- unary --------------------------------------------------------------------------------

_SUPPORTS: dict = {}


def _compute_dtype(op, dt):
    key = (op.name, dt)
    ok = _SUPPORTS.get(key)
    if ok is None:
        ok = _SUPPORTS[key] = dt in _ops.dtypes_of(op.kinds)
    if ok:
        return dt
    if op.float_only and _dt.kind(dt) != "c":
        return _dt.default_float
    if _dt.kind(dt) in "iub" and op.name in _ops.NO_KERNEL_ON_INTEGERS:
        return None  # isnan & co. on integers: known answer; floor & co.: the values themselves
    raise TypeError("%s() does not support %s arrays (supported: %s)"
                    % (op.name, _dt.NAMES.get(dt, dt), ", ".join(_dt.NAMES[d] for d in _ops.dtypes_of(op.kinds))))


_FAST_UNARY: dict = {}  # (name, dtype, device) -> (Function, result dtype) or False


def unary(name, x, out=None):
    # Hot path: a contiguous array of a dtype the op computes in, no out=.
    if out is None and type(x) is Array and x._cc:
        dev = x._buf.device
        key = (name, x._dtype, dev)
        plan = _FAST_UNARY.get(key)
        if plan is None:
            op = _ops.UNARY[name]
            ok = op.functor != "Identity" and _compute_dtype(op, x._dtype) == x._dtype
            plan = _FAST_UNARY[key] = ok and (
                _jit.kernel(_ops.unary_name("v", name, x._dtype), "unary", x._dtype, dev),
                _ops.result_dtype(op, x._dtype), _small.ufunc(name, x._dtype))
        if plan:
            n = x._size
            res = _new(x._shape, plan[1], dev)
            if n and not (plan[2] and _small.unary(plan[2], x, res)):
                plan[0]._run_arrays(n if n <= _U32_MAX else _grid1(n), x, res)
            return res
    op = _ops.UNARY[name]
    x = as_array(x)
    ct = _compute_dtype(op, x._dtype)
    if type(x) is not Array and hasattr(x, "_pm_trace"):  # pm.fuse records the op instead (arrays/fusion.py)
        return x._pm_trace.unary(name, x, ct, out)
    if ct is None:
        if op.result != "bool":  # floor, ceil, trunc, round of integers: the same values
            return _finish(out, ascontiguous(x, force=True), False)
        r = _new(x._shape, _dt.bool_, x._buf.device)  # isnan / isinf of integers: False; isfinite: True
        return _finish(out, fill(r, name == "isfinite"), False)
    if ct == x._dtype and op.functor == "Identity" and out is None:
        return ascontiguous(x, force=True)
    if x._dtype != ct:
        x = astype(x, ct)
    rdt = _ops.result_dtype(op, ct)
    res, direct = _result(out, x._shape, rdt, x._buf.device, [x])
    n = res._size
    uf = _small.ufunc(name, ct)
    if n and not (uf and _small.unary(uf, x, res)):
        if x._cc and res._cc:
            _jit.kernel(_ops.unary_name("v", name, ct), "unary", ct, res._buf.device)(x, res, grid=_grid1(n), threadgroup=_tg1(n))
        else:
            params, grid, tg = strided(res._shape, [elem_strides(x), elem_strides(res)])
            _jit.kernel(_ops.unary_name("g", name, ct), "unary", ct, res._buf.device)(x, res, params, grid=grid, threadgroup=tg)
    return _finish(out, res, direct)


def _result(out, shape, dt, dev, inputs):
    """(array to write, whether it is `out` itself)."""
    if out is None:
        return _new(shape, dt, dev), False
    if not isinstance(out, Array):
        raise TypeError("out= must be a pymetal Array, not %s" % type(out).__name__)
    if out._shape != shape:
        raise ValueError("out= has shape %r, the result has shape %r" % (out._shape, shape))
    check_writeable(out)
    if out._dtype == dt and not any(overlaps_differently(out, a) for a in inputs):
        return out, True
    return _new(shape, dt, dev), False


def _finish(out, res, direct):
    if out is None or direct:
        return res
    copy_into(res, out)
    return out


# ---- binary -------------------------------------------------------------------------------

def _operand_dtype(x):
    if is_scalar(x):
        return None
    return _dt.check_dtype(x.dtype)


_FAST: dict = {}  # (name, dtype, dtype or float, device) -> (Function, result dtype, layout) for the hot path


def _fast_plan(name, a, b, dev):
    """The kernel for `a op b` when no conversion is needed, else False (cached)."""
    op = _ops.BINARY[name]
    tb = type(b)
    if tb is float:
        if _dt.kind(a._dtype) != "f":
            return False
        ct = a._dtype
    elif b._dtype != a._dtype:
        return False
    else:
        ct = a._dtype
    if _compute_dtype(op, ct) != ct:
        return False
    layout = "vs" if tb is float else "vv"
    fn = _jit.kernel(_ops.binary_name(layout, name, ct), "binary", ct, dev)
    return fn, _ops.result_dtype(op, ct), ct.type, _small.ufunc(name, ct)


def binary(name, a, b, out=None):
    if name == "pow" and (type(b) is int or type(b) is float) and b == 2 and type(a) is Array \
            and _dt.is_float(a._dtype) and _dt.kind(a._dtype) != "c":
        # x ** 2 is x * x, exactly (both the correctly rounded square), as NumPy's fast path has
        # it: a general pow per element costs ~20x more (Dask's moments raise deviations to 2)
        return unary("square", a, out)
    # Hot path: contiguous arrays of one dtype (or a float array and a Python float), no out=.
    if out is None and type(a) is Array and a._cc:
        tb = type(b)
        if (tb is Array and b._cc and a._shape == b._shape) or tb is float:
            dev = a._buf.device
            key = (name, a._dtype, b._dtype if tb is Array else tb, dev)
            plan = _FAST.get(key)
            if plan is None:
                plan = _FAST[key] = _fast_plan(name, a, b, dev)
            if plan:
                n = a._size
                res = _new(a._shape, plan[1], dev)
                if n:
                    if tb is Array:
                        if not (plan[3] and _small.binary(plan[3], a, b, res)):
                            plan[0]._run_arrays(n if n <= _U32_MAX else _grid1(n), a, b, res)
                    elif not (plan[3] and _small.binary_scalar(plan[3], a, plan[2](b), res)):
                        plan[0](a, plan[2](b), res, grid=_grid1(n), threadgroup=n if n < _TG else _TG)
                return res
    op = _ops.BINARY[name]
    sa, sb = is_scalar(a), is_scalar(b)
    if sa and sb:
        return asarray(getattr(np, op.numpy or name)(np.asarray(a), np.asarray(b)))
    if not sa:
        a = as_array(a)
    if not sb:
        b = as_array(b, a._buf.device if not sa else None)
    if name in _FLIPPED and (sa or sb):
        exact = _exact_comparison(_FLIPPED[name] if sa else name, b if sa else a, a if sa else b, out)
        if exact is not None:
            return exact
    if sa:
        dt = _scalar_dtype(op, b._dtype, a)
    elif sb:
        dt = _scalar_dtype(op, a._dtype, b)
    else:
        dt = _dt.promote_types(a._dtype, b._dtype)
    ct = _compute_dtype(op, dt)
    rdt = _ops.result_dtype(op, ct)
    trace = None if type(a) is Array and type(b) is Array else (
        getattr(a, "_pm_trace", None) or getattr(b, "_pm_trace", None))
    if trace is not None:  # pm.fuse records the op instead (arrays/fusion.py)
        return trace.binary(name, a, b, ct, rdt, out)
    dev = (b if sa else a)._buf.device
    if not sa and a._dtype != ct:
        a = astype(a, ct)
    if not sb and b._dtype != ct:
        b = astype(b, ct)
    shape = b._shape if sa else a._shape if sb else broadcast_shapes(a._shape, b._shape)
    res, direct = _result(out, shape, rdt, dev, [x for x in (a, b) if not is_scalar(x)])
    n = res._size
    if n == 0:
        return _finish(out, res, direct)
    uf = _small.ufunc(name, ct)
    if uf and _small.binary_any(uf, scalar_value(a, ct) if sa else a, scalar_value(b, ct) if sb else b, res):
        return _finish(out, res, direct)
    grid, tg = _grid1(n) if res._cc else 0, _tg1(n)
    if sb and a._cc and res._cc:
        _jit.kernel(_ops.binary_name("vs", name, ct), "binary", ct, dev)(a, scalar_value(b, ct), res, grid=grid, threadgroup=tg)
    elif sa and b._cc and res._cc:
        _jit.kernel(_ops.binary_name("sv", name, ct), "binary", ct, dev)(scalar_value(a, ct), b, res, grid=grid, threadgroup=tg)
    elif not sa and not sb and a._cc and b._cc and res._cc and a._shape == b._shape:
        _jit.kernel(_ops.binary_name("vv", name, ct), "binary", ct, dev)(a, b, res, grid=grid, threadgroup=tg)
    elif not sa and not sb and res._cc and b._size == 1 and a._cc and a._shape == shape:
        _jit.kernel(_ops.binary_name("vs", name, ct), "binary", ct, dev)(a, b, res, grid=grid, threadgroup=tg)
    elif not sa and not sb and res._cc and a._size == 1 and b._cc and b._shape == shape:
        _jit.kernel(_ops.binary_name("sv", name, ct), "binary", ct, dev)(a, b, res, grid=grid, threadgroup=tg)
    else:
        if sa:
            a = _scalar_array(a, ct, dev)
        if sb:
            b = _scalar_array(b, ct, dev)
        params, grid, tg = strided(shape, [elem_strides(a, shape), elem_strides(b, shape), elem_strides(res)])
        _jit.kernel(_ops.binary_name("g", name, ct), "binary", ct, dev)(a, b, res, params, grid=grid, threadgroup=tg)
    return _finish(out, res, direct)


def _scalar_dtype(op, dt, value):
    """The dtype of (array of dt) op (Python scalar value) (dtypes.scalar_result), except
    that an int out of an integer dt's range is no error for an op that computes integers
    in floating point (divide, atan2): as NumPy 2, the int is converted to that float type."""
    if (type(value) is int and _dt.kind(dt) in "iu" and not _dt.int_in_range(value, dt)
            and _dt.kind(_compute_dtype(op, dt)) == "f"):
        return dt
    return _dt.scalar_result(dt, value)


_FLIPPED = {"equal": "equal", "not_equal": "not_equal", "less": "greater", "less_equal": "greater_equal",
            "greater": "less", "greater_equal": "less_equal"}  # value OP x is x FLIPPED[OP] value


def _exact_comparison(name, x, value, out):
    """`x name value` for an integer array and a Python int out of its type's range:
    a constant, as NumPy 2 compares exactly (uint8_array < -1 is all False), where
    arithmetic with such an int raises OverflowError. None when value is in range."""
    if type(value) is not int or _dt.kind(x._dtype) not in "iu" or _dt.int_in_range(value, x._dtype):
        return None
    above = value > 0  # value is above every element (else below every one)
    truth = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
             "greater": not above, "greater_equal": not above}[name]
    res, direct = _result(out, x._shape, _dt.bool_, x._buf.device, [])
    return _finish(out, fill(res, truth), direct)


def _scalar_array(value, dt, dev):
    return fill(_new((), dt, dev), value)


# ---- ternary -------------------------------------------------------------------------------

def where(condition: ArrayLike, x1: ArrayLike | Scalar, x2: ArrayLike | Scalar, /) -> Array:
    """Elements of x1 where condition is true, else of x2 (all broadcast).

    Examples:
        >>> x = pm.asarray([1.0, -2.0, 3.0])
        >>> pm.where(x > 0, x, 0.0)
        Array([1., 0., 3.], dtype=float32)
    """
    arrays = [v for v in (x1, x2) if not is_scalar(v)]
    if arrays:
        arrs = [as_array(v) for v in arrays]
        dt = arrs[0]._dtype
        for v in arrs[1:]:
            dt = _dt.promote_types(dt, v._dtype)
        for v in (x1, x2):
            if is_scalar(v):
                dt = _dt.scalar_result(dt, v)
    else:
        dt = _dt.result_type(x1, x2)
    c = as_array(condition)
    return _ternary("where", _dt.bool_, c, x1, x2, dt)


def clip(x: ArrayLike, /, min: ArrayLike | Scalar | None = None, max: ArrayLike | Scalar | None = None) -> Array:
    """x limited to [min, max] (either may be None); NaN in x or in a bound gives NaN, as NumPy's.

    Examples:
        >>> pm.clip(pm.asarray([-5, 0, 5, 10]), 0, 6)
        Array([0, 0, 5, 6], dtype=int64)
    """
    x = as_array(x)
    dt = x._dtype
    if _dt.kind(dt) in "bc":
        raise TypeError("clip() does not support %s arrays (no order)" % _dt.NAMES[dt])
    if _dt.kind(dt) in "iu":
        # A Python int bound beyond the type's range at its own end clips nothing (NumPy 2's
        # values); beyond the other end it is an OverflowError, as NumPy's.
        info = np.iinfo(dt)
        if type(min) is int and min < info.min:
            min = int(info.min)
        if type(max) is int and max > info.max:
            max = int(info.max)
    if min is None and max is None:
        return ascontiguous(x, force=True)
    if min is None:
        return minimum(x, max)
    if max is None:
        return maximum(x, min)
    for v in (min, max):
        if not is_scalar(v):
            dt = _dt.promote_types(dt, as_array(v)._dtype)
    if _dt.kind(dt) == "f" and not all(is_scalar(v) and v == v for v in (min, max)):
        # NaN bounds give NaN, as NumPy's clip (maximum/minimum propagate NaN; the
        # clip kernel would ignore a NaN bound)
        return minimum(maximum(x, min), max)
    return _ternary("clip", dt, x, min, max, dt)


def _ternary(name, cdt, c, x1, x2, dt):
    for v in (c, x1, x2):
        if hasattr(v, "_pm_trace"):  # pm.fuse records the op instead (arrays/fusion.py)
            return v._pm_trace.ternary(name, cdt, c, x1, x2, dt)
    dev = (c if isinstance(c, Array) else as_array(c))._buf.device
    ops = []
    for v, want in ((c, cdt), (x1, dt), (x2, dt)):
        if is_scalar(v):
            v = _scalar_array(v, want, dev)
        else:
            v = as_array(v)
            if v._dtype != want:
                v = astype(v, want)
        ops.append(v)
    shape = broadcast_shapes(*(v._shape for v in ops))
    res = _new(shape, dt, dev)
    if res._size:
        params, grid, tg = strided(shape, [elem_strides(v, shape) for v in ops] + [elem_strides(res)])
        _jit.kernel(_ops.ternary_name(name, dt), "copy", dt, dev)(ops[0], ops[1], ops[2], res, params, grid=grid, threadgroup=tg)
    return res


# ---- module functions from the table ---------------------------------------------------------

def _make_unary(name):
    def f(x: ArrayLike, /, *, out: Array | None = None, **numpy_keywords: Any) -> Array:
        if numpy_keywords:  # where=, dtype=, casting=, ... (numpy_api/ufunc_keywords.py)
            return _ufunc_keywords(name, (x,), out, numpy_keywords)
        return unary(name, x, out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise %s of x (a Metal kernel; NumPy's np.%s).%s" % (
        name, _ops.UNARY[name].numpy or name, _example(name))
    return f


def _make_binary(name):
    def f(x1: ArrayLike | Scalar, x2: ArrayLike | Scalar, /, *, out: Array | None = None,
          **numpy_keywords: Any) -> Array:
        if numpy_keywords:
            return _ufunc_keywords(name, (x1, x2), out, numpy_keywords)
        return binary(name, x1, x2, out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise %s of x1 and x2, broadcast (a Metal kernel; NumPy's np.%s).%s" % (
        name, _ops.BINARY[name].numpy or name, _example(name))
    return f


def _ufunc_keywords(name, args, out, keywords):
    from .numpy_api.ufunc_keywords import call  # at call time: numpy_api imports this module
    return call(name, args, out, keywords)


def _example(name):
    """The Examples section of an elementwise function's docstring (table in elementwise_examples.py)."""
    lines = _examples.ELEMENTWISE.get(name)
    if not lines:
        return ""
    body = ["    >>> " + s for s in lines[:-1]] + ["    " + lines[-1]]
    return "\n\nout= takes an Array to write the result into.\n\nExamples:\n" + "\n".join(body) + "\n"


FUNCTIONS = {}
for _name in _ops.UNARY:
    FUNCTIONS[_name] = _make_unary(_name)
for _name in _ops.BINARY:
    FUNCTIONS[_name] = _make_binary(_name)
globals().update(FUNCTIONS)
maximum = FUNCTIONS["maximum"]
minimum = FUNCTIONS["minimum"]

# Declared for type checkers: the functions above, made from _ops's table
# (annotations only, nothing is evaluated; tests/python/test_api_docs.py checks the list).
abs: _Unary
negative: _Unary
positive: _Unary
sign: _Unary
square: _Unary
sqrt: _Unary
rsqrt: _Unary
reciprocal: _Unary
exp: _Unary
exp2: _Unary
expm1: _Unary
log: _Unary
log2: _Unary
log10: _Unary
log1p: _Unary
sin: _Unary
cos: _Unary
tan: _Unary
asin: _Unary
acos: _Unary
atan: _Unary
sinh: _Unary
cosh: _Unary
tanh: _Unary
asinh: _Unary
acosh: _Unary
atanh: _Unary
erf: _Unary
floor: _Unary
ceil: _Unary
round: _Unary
trunc: _Unary
isnan: _Unary
isinf: _Unary
isfinite: _Unary
signbit: _Unary
logical_not: _Unary
bitwise_invert: _Unary
conj: _Unary
real: _Unary
imag: _Unary
relu: _Unary
sigmoid: _Unary
softplus: _Unary
silu: _Unary
gelu: _Unary
gelu_tanh: _Unary
add: _Binary
subtract: _Binary
multiply: _Binary
divide: _Binary
floor_divide: _Binary
remainder: _Binary
pow: _Binary
atan2: _Binary
hypot: _Binary
copysign: _Binary
nextafter: _Binary
logaddexp: _Binary
equal: _Binary
not_equal: _Binary
less: _Binary
less_equal: _Binary
greater: _Binary
greater_equal: _Binary
logical_and: _Binary
logical_or: _Binary
logical_xor: _Binary
bitwise_and: _Binary
bitwise_or: _Binary
bitwise_xor: _Binary
bitwise_left_shift: _Binary
bitwise_right_shift: _Binary
leaky_relu: _Binary


# ---- operators ------------------------------------------------------------------------------------

def _binop(name):
    def op(self, other):
        if type(other) is not Array and not _operand_ok(other):
            return NotImplemented
        return binary(name, self, other)

    def rop(self, other):
        if not _operand_ok(other):
            return NotImplemented
        return binary(name, other, self)

    def iop(self, other):
        if not _operand_ok(other):
            return NotImplemented
        res = binary(name, self, other)
        # NumPy's same_kind rule: the result may narrow within its kind, not change kind
        # (float_array += complex_array raises, as NumPy's, instead of dropping the imaginary part)
        if res._dtype != self._dtype and not _dt.can_cast(res._dtype, self._dtype) \
                and _dt.kind(res._dtype) != _dt.kind(self._dtype):
            raise TypeError("cannot store the %s result of %s in place into a %s array; "
                            "use x = x %s y" % (res._dtype, name, self._dtype, name))
        copy_into(res, self)
        return self
    return op, rop, iop


def _operand_ok(x):
    return isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex, list, tuple))


_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
# The operators are bound on Array by methods.py (from _OPERATORS, _binop and these).
def _neg(self):
    return unary("negative", self) if self._dtype != _dt.bool_ else _bool_neg()


def _pos(self):
    return unary("positive", self)


def _abs(self):
    return unary("abs", self)


def _invert(self):
    return unary("bitwise_invert", self)


def _bool_neg():
    raise TypeError("the - operator is not supported for bool arrays; use ~ or pm.logical_not")
