"""The array API and kernels: the part of pymetal's namespace that imports NumPy.

pymetal/__init__.py loads it on first use of any of these names, so that
`import pymetal; pymetal.device()` stays light (see __init__.py).
"""

from __future__ import annotations

from .dtypes import (
    bool_ as bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, can_cast, finfo, iinfo, isdtype, result_type,
    float64, complex64, complex128,  # float64/complex128: arrays computed on the host (arrays/float64.py)
)
from .arrays.array import Array
from .arrays.construct import array, asarray, empty, empty_like
from .arrays.creation import full, full_like, ones, ones_like, zeros, zeros_like
from .runtime.buffer import cache_info, clear_cache
from .runtime.kernel_cache import kernel_cache_info, clear_kernel_cache
from .runtime.function import Argument, Function
from .runtime.library import Library, compile, shaders  # load: NumPy data or a library (below)
from .runtime import function, library  # noqa: F401  (pm.function, pm.library: the modules, named so before runtime/)
from .arrays.elementwise import FUNCTIONS as _EW, where  # clip: NumPy's signature, from _numpy_shapes below
from .arrays.reduce import (
    sum, prod, max, min, all, any, argmax, argmin, mean, var, std, count_nonzero, logsumexp,
)
from .arrays.creation import arange, linspace, eye, tril, triu, meshgrid
from .arrays.indexing import take, take_along_axis
from .arrays.manipulation import (
    reshape, concat, concatenate, stack, split, flip, roll, tile, repeat, moveaxis, broadcast_arrays,
    broadcast_to, expand_dims, squeeze, permute_dims, transpose, matrix_transpose, astype, ravel, ascontiguousarray, unstack,
)
from .arrays.linear_algebra import matmul, tensordot, vecdot, outer
from .arrays.sorting import sort, argsort, searchsorted, nonzero, unique_values, cumulative_sum, cumulative_prod
from .arrays.dlpack import from_dlpack
from .arrays.fusion import fuse
from . import nn, linalg, fft  # noqa: F401
from .arrays import interop as _interop  # noqa: F401  (NumPy protocols on Array)

globals().update({k: v for k, v in _EW.items() if k not in ("relu", "sigmoid", "softplus", "silu", "gelu",
                                                              "gelu_tanh", "leaky_relu")})
del _EW
TYPE_CHECKING = False
if TYPE_CHECKING:  # the names set from the table above, for type checkers
    from .arrays.elementwise import (  # noqa: F401
        abs, negative, positive, sign, square, sqrt, rsqrt, reciprocal, exp, exp2, expm1, log, log2, log10,
        log1p, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, erf, floor, ceil, round,
        trunc, isnan, isinf, isfinite, signbit, logical_not, bitwise_invert, add, subtract, multiply, divide,
        floor_divide, remainder, pow, atan2, hypot, copysign, nextafter, maximum, minimum, logaddexp, equal,
        not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or, logical_xor, bitwise_and,
        bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift,
    )
# After the elementwise table: the standard's real/imag/conj also take real arrays.
from .arrays.namespace_extras import (  # the Python Array API standard's namespace (issue 12)
    __array_namespace_info__, broadcast_shapes, conj, diff, imag, isin, real,
    unique_all, unique_counts, unique_inverse,
)

newaxis = None
e, pi, inf, nan = 2.718281828459045, 3.141592653589793, float("inf"), float("nan")

# NumPy's API beside the standard's (issue 23): NumPy's names, signatures and semantics. Where a
# name is the standard's too, NumPy's extra parameters are additions (pm.sum(x, 1), pm.tril(x, 1),
# pm.where(c)); every call the standard allows means the same.
from .arrays.numpy_api import methods as _numpy_methods  # noqa: F401,E402  (ndarray's methods on Array)
from . import lib  # noqa: F401,E402
from .arrays.numpy_api.reduce import (  # noqa: E402
    sum, prod, max, min, ptp, all, any, argmax, argmin, mean, var, std, count_nonzero, cumsum, cumprod,
    sort, argsort, partition, argpartition,
)
from .arrays.numpy_api.functions import (  # noqa: E402
    dot, vdot, inner, outer, kron, diagonal, trace, diag, diagflat, einsum, einsum_path, swapaxes, matmul,
    isclose, allclose, array_equal, array_equiv, where, argwhere, flatnonzero, select, nan_to_num,
    unravel_index, ravel_multi_index, fill_diagonal, tri, triu_indices, tril_indices, triu_indices_from,
    tril_indices_from, diag_indices, intersect1d, union1d, setdiff1d, setxor1d,
)
from .arrays.numpy_api.creation import eye, identity, linspace, logspace, geomspace, meshgrid, indices  # noqa: E402
from .arrays.numpy_api.creation import (  # noqa: E402  (NumPy's signatures: order=, ndmin=, shape=)
    zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like, array, asarray,
)
from .arrays.numpy_api.shapes import (  # noqa: E402
    atleast_1d, atleast_2d, atleast_3d,
    hstack, vstack, row_stack, dstack, column_stack, stack, concatenate, array_split, rot90, fliplr, flipud,
    append, delete, insert, pad, resize, tril, triu, roll, flip, take, repeat, tensordot, searchsorted,
    shape, ndim, size, reshape, ravel, copy, clip, put_along_axis,
)
from .arrays.numpy_api.stats import (  # noqa: E402
    unique, bincount, histogram, digitize, quantile, percentile, median, nanquantile, nanpercentile,
    nanmedian, nansum, nanprod, nanmax, nanmin, nanargmax, nanargmin, nanmean, nanvar, nanstd, nancumsum,
    nancumprod, average, cov, corrcoef, lexsort,
)
from .arrays.numpy_api.signal import interp, correlate, convolve, cross, diff, gradient, trapezoid  # noqa: E402
from .arrays.numpy_api.ufuncs import (  # noqa: E402
    ALIASES as _NP_ALIASES, fmod, degrees, radians, fabs, rint, fix, round, fmax, fmin, cbrt, angle, divmod_ as divmod,
    heaviside, logaddexp2, sinc, modf, ldexp, float_power, gcd, lcm, spacing, unwrap, real_if_close,
)
from .arrays.numpy_api.more import (  # noqa: E402
    mgrid, ogrid, r_, c_, s_, ix_, hsplit, vsplit, dsplit, isneginf, isposinf, iscomplex, isreal, iscomplexobj,
    isrealobj, isscalar, issubdtype, iterable, ediff1d, extract, compress, place, put, putmask, copyto, choose,
    trim_zeros, vander, sort_complex, rollaxis, apply_along_axis, vectorize, fromfunction, frombuffer, fromiter,
    asanyarray, asarray_chkfinite, hamming, hanning, bartlett, blackman, diag_indices_from, mask_indices,
    may_share_memory, shares_memory, promote_types, common_type, min_scalar_type, matvec, vecmat, packbits,
    unpackbits, ndindex, binary_repr, i0, kaiser, frexp, bitwise_count, isfortran, asfortranarray, require,
    apply_over_axes, in1d, piecewise, histogramdd, histogram2d, frompyfunc, base_repr, broadcast, index_exp,
    mintypecode, typename, typecodes, sctypeDict, ScalarType, little_endian, True_, False_,
)
globals().update(_NP_ALIASES)
amax, amin, around, round_, rad2deg, deg2rad, trapz = max, min, round, round, degrees, radians, trapezoid
conjugate = conj
# NumPy's other names of the device's dtypes (float64 and complex128 stay refused)
int_ = intp = longlong = int64
uintp = ulonglong = uint = ulong = uint64
long = int64
double, cdouble = float64, complex128  # float64 policy (arrays/float64.py)
intc, uintc, short, ushort, byte, ubyte = int32, uint32, int16, uint16, int8, uint8
bool_, single, half, csingle = bool, float32, float16, complex64
# The dtype names are NumPy's scalar types, as in NumPy's namespace: NumPy code calls them
# (np.float64(2.5), np.int32(7)) and tests isinstance(v, np.float32); a dtype object can be
# neither called nor subclassed. Each equals its dtype (x.dtype == pm.float32) and every
# dtype= takes it; only hashing differs (key dicts by x.dtype, not by pm.float32).
from numpy import dtype as _dtype_class  # noqa: E402
for _name, _v in list(globals().items()):
    if not _name.startswith("_") and isinstance(_v, _dtype_class):
        globals()[_name] = _v.type
del _name, _v
# NumPy's abstract scalar types, for np.issubdtype(x.dtype, np.floating) and isinstance checks.
from numpy import (  # noqa: E402
    generic, number, integer, signedinteger, unsignedinteger, inexact, floating, complexfloating,
)
# Kernels never warn about floating-point errors; NumPy's context manager is here so NumPy code's
# `with np.errstate(divide="ignore"):` runs (it changes NumPy's own warnings only).
import numpy as _np  # noqa: E402
errstate = _np.errstate
from .arrays.numpy_api.host_names import (  # noqa: E402
    seterr, geterr, set_printoptions, get_printoptions, printoptions, array2string, array_str, array_repr,
    format_float_positional, format_float_scientific, ndenumerate, nditer, block, load, save, savez, savez_compressed,
    loadtxt, savetxt, genfromtxt, fromstring, fromfile,
)
from .arrays.numpy_api.bin_estimators import histogram_bin_edges  # noqa: E402
from .arrays.numpy_api.poly import (  # noqa: E402
    polyfit, polyval, poly1d, roots, poly, polyder, polyint, polyadd, polysub, polymul, polydiv,
)
# NumPy's type names: isinstance(x, np.ndarray), np.dtype("float32"), np.testing.assert_allclose(x, y)
ndarray = Array
dtype = _np.dtype
testing = _np.testing
# NumPy's own, on pymetal arrays through NumPy's protocols (coefficient arithmetic on the host;
# evaluation such as polyval(x, c) runs pymetal's operators on x): Polynomial.fit, emath.sqrt(-x)
polynomial = _np.polynomial
emath = _np.emath
euler_gamma = 0.5772156649015329

from .arrays.kernels.precompile import precompile  # noqa: E402
from .arrays.kernels.compile_note import CompileTimeWarning  # noqa: E402  (no silent first-use compile)

from .arrays.numpy_api.ufuncs import ufunc_attributes as _ufunc_attributes  # noqa: E402
_ufunc_attributes(globals())  # (np.add.nin, np.add.identity, ...: NumPy's)
# float64/complex128 (issue 23): the one dispatch point, wrapping the functions above and Array's methods.
from .arrays.float64 import set_float64_policy, get_float64_policy, install as _install_float64  # noqa: E402
_install_float64(globals(), Array)
