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
first use (see pymetal.runtime.native for where it is looked for).
"""

from __future__ import annotations

__version__ = "0.1.0"
__array_api_version__ = "2024.12"  # the Python Array API standard pymetal implements

import importlib as _importlib
import os as _os

# Start-up: `import pymetal; pymetal.device()` loads only errors, the device and
# libPyMetal (ctypes). Everything else imports NumPy (70-130 ms here), so the
# rest of the namespace (pymetal/_namespace.py) loads on first use of any other name.
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
from .runtime.device import Device, device, synchronize, set_kernel_timeout, kernel_timeout
from .runtime.native import ABI_VERSION, library_path

TYPE_CHECKING = False
if TYPE_CHECKING:  # what __getattr__ below loads on first use, for type checkers
    from typing import Any

    from ._namespace import *  # noqa: F401,F403
    from ._namespace import __array_namespace_info__  # noqa: F401
    from . import fft, linalg, nn  # noqa: F401


_LAZY_DUNDERS = ("__array_namespace_info__",)


def _load_api() -> dict[str, Any]:
    """Binds the rest of the namespace (pymetal/_namespace.py) on the package; returns it."""
    api = _importlib.import_module(__name__ + "._namespace")
    namespace = {k: v for k, v in vars(api).items() if not k.startswith("_") or k in _LAZY_DUNDERS}
    globals().update(namespace)
    return namespace


def __getattr__(name: str) -> Any:
    if name == "__all__":  # `from pymetal import *`
        _load_api()
        return [k for k in globals() if not k.startswith("_")]
    if name.startswith("__") and name not in _LAZY_DUNDERS:  # probes by copy, pickle, inspect, ... load nothing
        raise AttributeError("module 'pymetal' has no attribute %r" % name)
    here = __path__[0]
    if _os.path.isfile(_os.path.join(here, name + ".py")) or _os.path.isdir(_os.path.join(here, name)):
        return _importlib.import_module(__name__ + "." + name)  # a submodule (pm.nn, `from . import x`)
    namespace = _load_api()
    if name in namespace:
        return namespace[name]
    from .arrays.numpy_api.unsupported import hint  # NumPy's names pymetal lacks: what to do instead
    raise AttributeError("module 'pymetal' has no attribute %r%s" % (name, hint(name)))


def __dir__() -> list[str]:
    _load_api()
    return sorted(globals())
