"""Reductions: sum, prod, max, min, all, any, argmax, argmin and the statistics
built from them (mean, var, std, count_nonzero, logsumexp).

Any set of axes is brought to the kernels' (outer, n, inner) form: reduced
axes that are adjacent in a contiguous array need no copy (``inner == 1``:
row kernels, else column kernels); other layouts are first copied with the
reduced axes last. Each pass writes per-chunk partials in the accumulator type
until one chunk per result is left (see Shaders/reduce.h).
"""

from __future__ import annotations

import builtins
import struct

import numpy as np

from .kernels import lookup as _jit
from . import optable as _ops
from . import small as _small
from .. import dtypes as _dt
from .array import Array
from .construct import _new
from .layout import normalize_axis
from . import elementwise as _ew

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .array import Array
    from ..runtime.device import Device
    from .._typing import ArrayLike, DTypeLike, Scalar, ShapeLike

_PARAMS = struct.Struct("<QQQI4x")
# Enough threads that the CPU backend splits the dispatch over its cores (it
# does from 16,384 threads), each with enough elements to amortise a thread.
_MIN_THREADS = 16384
_MIN_CHUNK = 512
# Reductions whose result does not depend on how the elements are split (max, min,
# all, any, argmax/argmin, integer sums and products) take longer chunks: a thread's
# fixed cost (setting up and combining 64 lanes, writing its partial: 20-30 ns, 0.5 ms
# over 16K threads) is then a small share, and no second pass is needed for rows up to
# this long. On one core 4096² float32 max went 0.73x -> ~1x NumPy, argmax 0.8x -> ~1x
# (thread time). Such dispatches stay below the pool's split threshold (16K threads):
# one core, as when the pool's workers sleep (README, CPU backend).
# Float sums and products keep _MIN_CHUNK: their blockwise order is part of their results.
_MIN_CHUNK_FREE = 16384
# Fewer elements than this reduce in one pass (one chunk per result): a
# thread reads 256K float32 in ~30 us, less than another pass's dispatch and
# wait (the second pass over 16K partials of a large reduction, typically).
_SPLIT_MIN = 1 << 18


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis in %r" % (axis,))
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim),)


def _plan(x, axes):
    """(contiguous array, outer, n, inner) with the reduced axes as the middle block."""
    nd = x.ndim
    if axes and axes == tuple(range(axes[0], axes[-1] + 1)) and x._cc:
        src = x
        lo, hi = axes[0], axes[-1] + 1
    else:
        kept = [i for i in range(nd) if i not in axes]
        src = _ew.ascontiguous(x.permute_dims(kept + list(axes)))
        lo, hi = len(kept), nd
    prod = lambda dims: int(np.prod(dims, dtype=np.int64)) if dims else 1  # noqa: E731
    return src, prod(src._shape[:lo]), prod(src._shape[lo:hi]), prod(src._shape[hi:])


_CPU_COLS = 64  # columns per thread of the CPU column kernel (Shaders/reduce.h)
_ARG_COLS = 16  # columns per thread of argreduce_col (PM_RED_COLS)


def _order_free(name, acc):
    """Whether reduction `name` accumulating in `acc` gives the same result however it is chunked."""
    return name not in ("sum", "prod") or _dt.kind(acc) in "biu"


def _chunking(outer, n, inner, cols, whole=False, free=False):
    """(reduced elements per thread, chunks per reduction) for the CPU kernels
    (whole: one chunk, see _run; free: an order-free reduction, see _MIN_CHUNK_FREE)."""
    blocks = outer * (builtins.max(1, -(-inner // cols)) if inner > 1 else 1)
    least = _MIN_CHUNK_FREE if free else _MIN_CHUNK
    least = least if inner == 1 else builtins.max(1, least // cols)  # a column thread reads `cols` per row
    if whole or blocks >= _MIN_THREADS or n <= least or outer * n * inner < _SPLIT_MIN:
        return n, 1
    want = -(-_MIN_THREADS // blocks)
    chunk = builtins.max(least, -(-n // want))
    return chunk, -(-n // chunk)


def _geometry(outer, n, inner, cols, whole=False, free=False):
    """One pass of a row (inner == 1) or column kernel with `cols` columns per
    thread: (chunks per reduction, parameter bytes, grid, threadgroup)."""
    chunk, nchunks = _chunking(outer, n, inner, cols, whole, free)
    params = _PARAMS.pack(n, inner, chunk, nchunks)
    if inner == 1:
        # On the CPU each thread is a long contiguous stream and a threadgroup runs
        # on one core: one thread per group spreads them over the cores.
        return nchunks, params, (nchunks, outer), (1, 1)
    blocks = -(-inner // cols)
    tg = (builtins.min(blocks, 256), 1, 1) if cols == 1 else (1, 1, 1)  # cols == 1: the GPU shape
    return nchunks, params, (blocks, nchunks, outer), tg


def _result_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# Kernel shapes per device: None picks by backend (SIMD-group reductions over
# coalesced reads on a GPU, a contiguous stream per thread on the CPU); the
# tests set it to run the GPU shape on the CPU backend too.
GPU_SHAPES = None
_GPU_TG = 256          # threads per threadgroup of the GPU row kernel
_GPU_CHUNK = 256 * 64  # elements per threadgroup (64 per thread)


def _gpu_shapes(dev):
    return dev.backend == "metal" if GPU_SHAPES is None else GPU_SHAPES


def _run(name, src, outer, n, inner, acc):
    """Passes of reduce_<shape>_<name> until one value per (outer, inner) is left."""
    dev = src._buf.device
    x, dt = src, src._dtype
    # Float products in one pass: the kernels keep NumPy's zeros and infinities within a
    # pass (Shaders/reduce.h, ROps<RProd>), but a partial written for a later pass cannot
    # tell an infinite element from an overflow (0 * overflow is 0, 0 * inf is NaN).
    whole = name == "prod" and _dt.kind(acc) == "f"
    if name == "sum" and inner == 1:  # small integer sums on the host (arrays/small.py)
        res = _small.sum_rows(src, outer, n, acc)
        if res is not None:
            return res
    while True:
        if inner == 1 and _gpu_shapes(dev):
            chunk = n if whole else builtins.min(n, _GPU_CHUNK)
            nchunks = -(-n // chunk)
            out = _new((outer, nchunks, 1), acc, dev)
            fn = _jit.kernel(_ops.reduce_name("row_simd", name, dt), "reduce", dt, dev)
            fn(x, out, _PARAMS.pack(n, 1, chunk, nchunks), groups=(nchunks, outer), threadgroup=_GPU_TG)
            if nchunks == 1:
                return out
            x, dt, n = out, acc, nchunks
            continue
        cols = 1 if _gpu_shapes(dev) else _CPU_COLS
        nchunks, params, grid, tg = _geometry(outer, n, inner, cols, whole, _order_free(name, acc))
        shape = "row" if inner == 1 else "col1" if cols == 1 else "col"
        out = _new((outer, nchunks, inner), acc, dev)
        fn = _jit.kernel(_ops.reduce_name(shape, name, dt), "reduce", dt, dev)
        fn(x, out, params, grid=grid, threadgroup=tg)
        if nchunks == 1:
            return out
        x, dt, n = out, acc, nchunks


def reduce(name: str, x: ArrayLike, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
           out_dtype: np.dtype | None = None) -> Array:
    """The reduction `name` of the op table over `axis`; the result has out_dtype
    (default: the accumulator type for integer sums and products, else x's type)."""
    if axis is None and not keepdims and out_dtype is None and type(x) is Array and x._cc:
        # Hot path: a whole contiguous array in one pass of the row kernel, from a plan
        # kept per (op, dtype, size, device, kernel shape): one call of the kernel the general
        # path makes (GPU_SHAPES in the key: a plan made while a test forced the GPU shape is
        # False, and must not turn the fast path off for the process)
        dev = x._buf.device
        key = (name, x._dtype, x._size, dev, GPU_SHAPES)
        plan = _FAST.get(key)
        if plan is None:
            plan = _FAST[key] = _fast_plan(name, x, dev)
        if plan:
            res = _new((), plan[1], dev)
            plan[0]._run_reduce(plan[3], x, res, plan[2])
            return res
    x = _ew.as_array(x)
    functor, rule = _ops.REDUCE[name]
    if _dt.kind(x._dtype) == "c" and name not in _ops.COMPLEX_REDUCE:
        raise TypeError("%s() is not defined for complex arrays (complex numbers have no order)" % name)
    if out_dtype is not None and _dt.kind(x._dtype) == "c" and _dt.kind(out_dtype) != "c":
        raise TypeError("%s(): a complex array cannot accumulate into %s (the imaginary parts would be "
                        "lost); take pm.real(x) first" % (name, out_dtype))
    acc = _ops.accumulator(rule, x._dtype)
    if out_dtype is not None and _ops.accumulator(rule, out_dtype) != acc:
        # A requested dtype is the accumulator, as in NumPy: the elements are converted
        # first (sum(float32 [.5, .5, .5], dtype=int64) is 0, not int(1.5)), and an integer
        # product asked for in float32 cannot wrap around in int64 first. Where the
        # accumulators agree (bool or int8 into int64, float16 into float32) no copy is needed:
        # integer sums and products wrap the same in any width.
        x = _ew.astype(x, out_dtype)
        acc = _ops.accumulator(rule, out_dtype)
    if out_dtype is None:
        out_dtype = acc if (rule == "sum" and _dt.kind(x._dtype) != "f") or rule == "bool" else x._dtype
    axes = _axes(axis, x.ndim)
    shape = _result_shape(x._shape, axes, keepdims)
    n_red = 1
    for a in axes:
        n_red *= x._shape[a]
    if type(x) is not Array and hasattr(x, "_pm_trace"):  # pm.fuse records the reduction instead (arrays/fusion.py)
        return x._pm_trace.reduce(name, x, axes, keepdims, acc, out_dtype, shape)
    if n_red == 0 or x._size == 0:
        if n_red == 0 and name in ("max", "min"):
            raise ValueError("zero-size array to reduction operation %s which has no identity" % name)
        identity = {"sum": 0, "prod": 1, "all": True, "any": False}.get(name, 0)
        return _ew.fill(_new(shape, out_dtype, x._buf.device), identity)
    if not axes:
        return _ew.astype(x, out_dtype)
    src, outer, n, inner = _plan(x, axes)
    res = _run(name, src, outer, n, inner, acc)
    if res._dtype != out_dtype:
        res = _ew.astype(res, out_dtype)
    return res.reshape(shape)


_FAST: dict = {}


def _fast_plan(name, x, dev):
    """(kernel, result dtype, parameter bytes, launch configuration) when reduce(name, x) over all of x is one
    pass of the CPU row kernel whose accumulator is the result's dtype, else False."""
    functor, rule = _ops.REDUCE[name]
    dt = x._dtype
    acc = _ops.accumulator(rule, dt)
    out_dtype = acc if (rule == "sum" and _dt.kind(dt) != "f") or rule == "bool" else dt
    if (len(_FAST) > 4096 or x._size == 0 or dt not in _ops.ALL_DTYPES or _gpu_shapes(dev) or acc != out_dtype
            or (_dt.kind(dt) == "c" and name not in _ops.COMPLEX_REDUCE)
            or (name == "sum" and dt in (_dt.int32, _dt.int64))):  # (those take arrays/small.py's host path)
        return False
    whole = name == "prod" and _dt.kind(acc) == "f"
    nchunks, params, grid, tg = _geometry(1, x._size, 1, _CPU_COLS, whole, _order_free(name, acc))
    if nchunks != 1:
        return False
    fn = _jit.kernel(_ops.reduce_name("row", name, dt), "reduce", dt, dev)
    return fn, acc, params, fn._launch_for(grid, None, tg)


def _arg(name, x, axis=None, keepdims=False):
    x = _ew.as_array(x)
    if _dt.kind(x._dtype) == "c":
        raise TypeError("%s() is not defined for complex arrays (complex numbers have no order)" % name)
    if x._dtype == _dt.bool_:
        x = _ew.astype(x, _dt.uint8)
    if axis is None:
        src = _ew.ascontiguous(x).reshape(-1)
        axes = tuple(range(x.ndim))
        outer, n, inner = 1, src._size, 1
    else:
        a = normalize_axis(axis, x.ndim)
        axes = (a,)
        src, outer, n, inner = _plan(x, axes)
    if n == 0:
        raise ValueError("attempt to get %s of an empty sequence" % name)
    shape = _result_shape(x._shape, axes, keepdims)
    dev = src._buf.device
    if outer * inner == 0:  # argmax over axis 1 of a (0, n) array: an empty result, as NumPy's
        return _new(shape, _dt.int64, dev)
    vals, idx, dt, has_idx = src, src, src._dtype, False
    while True:
        # Long chunks for rows only: argreduce_col walks each of its columns down the chunk
        # in turn (16K-row chunks made argmax over axis 0 of 4096² 25% slower)
        nchunks, params, grid, tg = _geometry(outer, n, inner, _ARG_COLS, free=inner == 1)
        kind = "row" if inner == 1 else "col"
        ov = _new((outer, nchunks, inner), dt, dev)
        oi = _new((outer, nchunks, inner), _dt.int64, dev)
        fn = _jit.kernel(_ops.argreduce_name(kind, name, dt, has_idx), "reduce", dt, dev)
        fn(vals, idx, ov, oi, params, grid=grid, threadgroup=tg)
        if nchunks == 1:
            return oi.reshape(shape)
        vals, idx, n, has_idx = ov, oi, nchunks, True


# ---- public functions ------------------------------------------------------------------------

def sum(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, dtype: DTypeLike = None,
        keepdims: bool = False) -> Array:
    """Sum over axis (all axes by default).

    Integers accumulate in 64 bits, float16 and bfloat16 in float32; partial sums
    are combined blockwise, not in one serial chain.

    Examples:
        >>> x = pm.asarray([[1, 2, 3], [4, 5, 6]])
        >>> pm.sum(x)
        Array(21, dtype=int64)
        >>> pm.sum(x, axis=0)
        Array([5, 7, 9], dtype=int64)
        >>> pm.sum(x, axis=1, keepdims=True).shape
        (2, 1)
    """
    return reduce("sum", x, axis, keepdims, _dt.check_dtype(dtype) if dtype is not None else None)


def prod(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, dtype: DTypeLike = None,
         keepdims: bool = False) -> Array:
    """Product over axis (all axes by default).

    Examples:
        >>> pm.prod(pm.asarray([[1, 2], [3, 4]]), axis=1)
        Array([ 2, 12], dtype=int64)
    """
    return reduce("prod", x, axis, keepdims, _dt.check_dtype(dtype) if dtype is not None else None)


def max(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Largest element over axis; NaN if any element is NaN (as NumPy).

    Examples:
        >>> pm.max(pm.asarray([[1, 7], [5, 3]]), axis=0)
        Array([5, 7], dtype=int64)
    """
    return reduce("max", x, axis, keepdims)


def min(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Smallest element over axis; NaN if any element is NaN (as NumPy).

    Examples:
        >>> pm.min(pm.asarray([[1, 7], [5, 3]]), axis=1)
        Array([1, 3], dtype=int64)
    """
    return reduce("min", x, axis, keepdims)


def all(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Whether every element over axis is true (non-zero).

    Examples:
        >>> pm.all(pm.asarray([[1, 0], [1, 1]]), axis=1)
        Array([False,  True], dtype=bool)
    """
    return reduce("all", x, axis, keepdims)


def any(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Whether any element over axis is true (non-zero).

    Examples:
        >>> bool(pm.any(pm.asarray([0.0, 0.0, 2.0])))
        True
    """
    return reduce("any", x, axis, keepdims)


def argmax(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first largest element (NaN counts as largest), int64.

    Without axis, the index into the flattened array.

    Examples:
        >>> pm.argmax(pm.asarray([3, 9, 2, 9]))
        Array(1, dtype=int64)
        >>> pm.argmax(pm.asarray([[1, 5], [7, 2]]), axis=1)
        Array([1, 0], dtype=int64)
    """
    return _arg("argmax", x, axis, keepdims)


def argmin(x: ArrayLike, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first smallest element (NaN counts as smallest), int64.

    Examples:
        >>> pm.argmin(pm.asarray([3.0, 1.0, 2.0]))
        Array(1, dtype=int64)
    """
    return _arg("argmin", x, axis, keepdims)


def _count(x, axes):
    c = 1
    for a in axes:
        c *= x._shape[a]
    return c


def _float_of(x):
    return _dt.float32 if _dt.kind(x._dtype) not in "fc" else x._dtype


def _real_only(name, x):
    if _dt.kind(x._dtype) == "c":
        raise TypeError("%s() of complex arrays is not supported (the Array API defines it for real "
                        "arrays); use %s of pm.real(x) and pm.imag(x)" % (name, name))


def mean(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over axis.

    float32 for integer input (integers up to 32 bits summed exactly in int64, 64-bit
    ones in float32, so that the sum never wraps around; NumPy's float64 is not a device
    type); float16/bfloat16 summed in float32; complex64 stays complex64.

    Examples:
        >>> pm.mean(pm.asarray([[1, 2], [3, 5]]), axis=0)
        Array([2. , 3.5], dtype=float32)
    """
    x = _ew.as_array(x)
    axes = _axes(axis, x.ndim)
    n = _count(x, axes)
    k = _dt.kind(x._dtype)
    if k in "biu" and x._dtype.itemsize <= 4:
        # exactly, in int64 (float32 partial sums lose the digits of large integers:
        # mean([-2**31, 2**31 - 1, 0]) was 0)
        s = _ew.astype(reduce("sum", x, axis, keepdims, _dt.int64), _dt.float32)
    else:
        s = reduce("sum", x, axis, keepdims, _dt.complex64 if k == "c" else _dt.float32)
    r = _ew.binary("divide", s, float(n) if n else float("nan"))
    out = _float_of(x)
    return r if out == r._dtype else _ew.astype(r, out)


def var(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, correction: int | float = 0.0,
        keepdims: bool = False) -> Array:
    """Variance over axis with `correction` degrees of freedom removed (two passes).

    Examples:
        >>> x = pm.asarray([1.0, 2.0, 3.0, 4.0])
        >>> pm.var(x), pm.var(x, correction=1)
        (Array(1.25, dtype=float32), Array(1.6666666, dtype=float32))
    """
    r, big = _moment(x, axis, correction, keepdims)
    return _var_result(r if big is None else _ew.binary("multiply", _ew.binary("multiply", r, big), big), x)


def _moment(x, axis, correction, keepdims):
    """(mean square deviation over axis, the power of two its deviations were divided by,
    or None): var is r * s * s, std sqrt(r) * s (neither squares s, which can overflow)."""
    x = _ew.as_array(x)
    _real_only("var", x)
    axes = _axes(axis, x.ndim)
    n = _count(x, axes)
    xf = x if x._dtype == _dt.float32 else _ew.astype(x, _dt.float32)
    m = mean(xf, axis=axis, keepdims=True)
    d = _ew.binary("subtract", xf, m)
    denom = n - correction
    if (_dt.kind(x._dtype) in "iu" and x._dtype.itemsize <= 4) or n == 0 or x._size == 0:
        # deviations below 2**32 (small integers): their squares cannot overflow float32
        ss = reduce("sum", _ew.binary("multiply", d, d), axis, keepdims, _dt.float32)
        return _ew.binary("divide", ss, float(denom) if denom > 0 else float("nan")), None
    # Deviations past 1.8e19 (floats, 64-bit integers) have squares that overflow
    # float32 where the variance does not: they are squared divided by the power of
    # two nearest the largest one (exact: the same roundings as unscaled, or fewer).
    big = reduce("max", _ew.unary("abs", d), axis, True)
    ok = _ew.binary("logical_and", _ew.unary("isfinite", big), _ew.binary("greater", big, 0.0))
    # Tiny deviations are scaled up as well (their squares underflow where std does not:
    # std of [0, 7.6e-32] was 0), but by at most 2**126: 1 / 2**-130 would overflow.
    big = _ew.unary("exp2", _ew.binary("maximum", _ew.unary("floor", _ew.unary("log2", _ew.where(ok, big, 1.0))), -126.0))
    q = _ew.binary("multiply", d, _ew.unary("reciprocal", big))
    ss = reduce("sum", _ew.binary("multiply", q, q), axis, keepdims, _dt.float32)
    r = _ew.binary("divide", ss, float(denom) if denom > 0 else float("nan"))
    return r, (big if keepdims else big.reshape(r._shape))


def _var_result(r, x):
    out = _float_of(x)
    return r if out == _dt.float32 else _ew.astype(r, out)


def std(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, correction: int | float = 0.0,
        keepdims: bool = False) -> Array:
    """Standard deviation over axis (the square root of var).

    Examples:
        >>> pm.std(pm.asarray([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]))
        Array(2., dtype=float32)
    """
    r, big = _moment(x, axis, correction, keepdims)
    s = _ew.unary("sqrt", r)
    return _var_result(s if big is None else _ew.binary("multiply", s, big), x)


def count_nonzero(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Number of non-zero (true) elements over axis, int64.

    Examples:
        >>> pm.count_nonzero(pm.asarray([[0, 1, 2], [3, 0, 0]]), axis=1)
        Array([2, 1], dtype=int64)
    """
    x = _ew.as_array(x)
    nz = _ew.binary("not_equal", x, False if x._dtype == _dt.bool_ else 0)
    return reduce("sum", nz, axis, keepdims, _dt.int64)


def logsumexp(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """log(sum(exp(x))) over axis, computed without overflow.

    Examples:
        >>> round(float(pm.logsumexp(pm.asarray([1000.0, 1000.0]))), 3)  # 1000 + log(2); exp(1000) overflows
        1000.693
    """
    x = _ew.as_array(x)
    _real_only("logsumexp", x)
    if _dt.kind(x._dtype) != "f":
        x = _ew.astype(x, _dt.float32)
    if x._size == 0:  # log(0) = -inf over an empty axis (no max to subtract)
        shape = _result_shape(x._shape, _axes(axis, x.ndim), keepdims)
        return _ew.fill(_new(shape, x._dtype, x._buf.device), -np.inf)
    m = reduce("max", x, axis, True)
    m = _ew.where(_ew.unary("isfinite", m), m, 0.0)
    s = reduce("sum", _ew.unary("exp", _ew.binary("subtract", x, m)), axis, True, _dt.float32)
    r = _ew.binary("add", _ew.unary("log", s), m)
    if r._dtype != x._dtype:
        r = _ew.astype(r, x._dtype)
    if not keepdims:
        r = r.reshape(_result_shape(x._shape, _axes(axis, x.ndim), False))
    return r

