"""pymetal: GPU compute for Python on Apple Silicon through Metal.

Two ways in, sharing memory with NumPy without copies:

- an array library (``pm.asarray``, ``pm.exp``, ``x @ w``, ``pm.sum``, ...) whose
  operations run as Metal kernels, asynchronously;
- custom kernels in the Metal Shading Language::

    import numpy as np, pymetal as pm
    lib = pm.compile(source)                  # MSL -> Library
    out = pm.empty(n, np.float32)
    lib.add(a, b, out, grid=n)                # [[buffer(0)]], [[buffer(1)]], ...
    out.numpy()

On Linux the same engine runs the kernels on the CPU. libPyMetal is loaded on
first use (see pymetal._native for where it is looked for).
"""

__version__ = "0.1.0"

from .errors import (
    CompileError,
    Error,
    FunctionNotFoundError,
    InvalidArgumentError,
    KernelError,
    LibraryError,
    NotFoundError,
    OutOfMemoryError,
    UnsupportedError,
)
from .device import Device, device, synchronize
from .dtypes import (
    bool_ as bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, can_cast, finfo, iinfo, isdtype, result_type,
)
from .array import (
    Array, array, asarray, empty, empty_like, full, full_like, ones, ones_like, zeros, zeros_like,
)
from ._buffer import cache_info, clear_cache
from .function import Argument, Function
from .library import Library, compile, load, shaders
from ._native import ABI_VERSION, library_path
from ._elementwise import FUNCTIONS as _EW, clip, where
from ._reduce import (
    sum, prod, max, min, all, any, argmax, argmin, mean, var, std, count_nonzero, logsumexp,
)
from ._creation import arange, linspace, eye, tril, triu, meshgrid
from ._indexing import take, take_along_axis
from ._manipulation import (
    reshape, concat, concatenate, stack, split, flip, roll, tile, repeat, moveaxis, broadcast_arrays,
    broadcast_to, expand_dims, squeeze, permute_dims, transpose, matrix_transpose, astype, ravel, ascontiguousarray, unstack,
)
from ._linalg import matmul, tensordot, vecdot, outer
from ._sorting import sort, argsort, searchsorted, nonzero, unique_values, cumulative_sum, cumulative_prod
from . import nn
from . import _interop  # noqa: F401  (NumPy protocols on Array)

globals().update({k: v for k, v in _EW.items() if k not in ("relu", "sigmoid", "softplus", "silu", "gelu",
                                                              "gelu_tanh", "leaky_relu")})
del _EW

newaxis = None
e, pi, inf, nan = 2.718281828459045, 3.141592653589793, float("inf"), float("nan")
