"""pymetal: GPU compute for Python on Apple Silicon through Metal.

On Linux the same engine runs Metal Shading Language kernels on the CPU.

    import numpy as np, pymetal as pm
    lib = pm.compile(source)                  # MSL -> Library
    add = lib.add                             # or lib.function("add")
    out = pm.empty(n, np.float32)
    add(a, b, out, grid=n)                    # [[buffer(0)]], [[buffer(1)]], ...
    out.numpy()

libPyMetal is loaded on first use (see pymetal._native for where it is looked for).
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
from .array import Array, asarray, empty, empty_like, full, ones, ones_like, zeros, zeros_like
from .function import Function
from .library import Library, compile, load, shaders
from ._native import ABI_VERSION, library_path

__all__ = [
    "ABI_VERSION",
    "Array",
    "CompileError",
    "Device",
    "Error",
    "Function",
    "FunctionNotFoundError",
    "InvalidArgumentError",
    "KernelError",
    "Library",
    "LibraryError",
    "NotFoundError",
    "OutOfMemoryError",
    "UnsupportedError",
    "asarray",
    "compile",
    "device",
    "empty",
    "empty_like",
    "full",
    "library_path",
    "load",
    "ones",
    "ones_like",
    "shaders",
    "synchronize",
    "zeros",
    "zeros_like",
]
