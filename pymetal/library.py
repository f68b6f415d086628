"""Libraries of kernels: compiling MSL source and loading library files."""

import os
import re
import threading
import weakref

import numpy as np

from . import _kernel_cache, _native
from .device import resolve as _resolve_device
from .errors import CompileError, FunctionNotFoundError, NotFoundError
from .function import Function

__all__ = ["Library", "compile", "load", "shaders"]

_MACRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _LibraryHandle:
    """Owns a pm_library handle; released when no Library or Function needs it."""

    __slots__ = ("handle", "__weakref__")

    def __init__(self, handle, owned=True):
        self.handle = handle
        if owned:
            lib = _native.lib()
            f = weakref.finalize(self, lib.pm_library_release, handle)
            f.atexit = False


class Library:
    """Kernel functions compiled from MSL source or loaded from a library file.

    ``lib.function("name")``, ``lib.name`` and ``lib["name"]`` give a callable
    :class:`Function`; ``lib.functions`` lists the kernel names.
    """

    def __init__(self, handle, device, origin=None, owned=True):
        self._owner = _LibraryHandle(handle, owned)
        self._device = device
        self._origin = origin
        self._functions = {}
        self._names = None

    @property
    def device(self):
        return self._device

    @property
    def functions(self):
        """Names of the library's kernel functions."""
        if self._names is None:
            lib = _native.lib()
            h = self._owner.handle
            count = _native.out_i64(lib.pm_library_function_count, h)
            self._names = tuple(_native.out_str(lib.pm_library_function_name, h, i) for i in range(count))
        return list(self._names)

    def function(self, name):
        """The kernel function `name` (raises FunctionNotFoundError naming the others)."""
        fn = self._functions.get(name)
        if fn is not None:
            return fn
        if not isinstance(name, str):
            raise TypeError("function name must be a str, not %s" % type(name).__name__)
        names = self.functions
        if name not in names:
            raise FunctionNotFoundError(self._not_found(name, names))
        try:
            fn = Function(self, name)
        except NotFoundError as e:
            raise FunctionNotFoundError("%s (%s)" % (self._not_found(name, names), e)) from None
        return self._functions.setdefault(name, fn)

    def _not_found(self, name, names):
        where = " in %s" % self._origin if self._origin else ""
        if names:
            return "no kernel function %r%s; available: %s" % (name, where, ", ".join(names))
        return "no kernel function %r%s; the library has no kernel functions" % (name, where)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.function(name)

    def __getitem__(self, name):
        return self.function(name)

    def __contains__(self, name):
        return name in self.functions

    def __iter__(self):
        return iter(self.functions)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.functions))

    def __repr__(self):
        where = " from %s" % self._origin if self._origin else ""
        return "<pymetal.Library%s functions=%s>" % (where, self.functions)


def _macro_value(v):
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _macro_text(macros):
    """{"N": 4, "FLAG": None} or ["N=4", "FLAG"] -> "N=4\\nFLAG" (None if empty)."""
    if not macros:
        return None
    if isinstance(macros, dict):
        items = list(macros.items())
    elif isinstance(macros, str):
        raise TypeError("macros= must be a dict or a list of 'NAME' / 'NAME=VALUE' strings")
    else:
        items = []
        for m in macros:
            if isinstance(m, str):
                name, sep, value = m.partition("=")
                items.append((name, value if sep else None))
            else:
                name, value = m
                items.append((name, value))
    lines = []
    for name, value in items:
        if not isinstance(name, str) or not _MACRO_NAME.match(name):
            raise ValueError("macro name %r is not an identifier" % (name,))
        if value is None:
            lines.append(name)
        else:
            text = _macro_value(value)
            if "\n" in text or "\r" in text:
                raise ValueError("macro %s: the value must be on one line" % name)
            lines.append("%s=%s" % (name, text))
    return "\n".join(lines).encode()


def compile(source, *, macros=None, fast_math=False, device=None):
    """Compiles MSL source into a Library.

    macros: {"NAME": value} (value None for a bare #define) or ["NAME=VALUE", ...].
    fast_math: False (default, safe IEEE math on every platform) or True.
    Raises CompileError (with .diagnostics) if the source does not compile.
    """
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8")
    if not isinstance(source, str):
        raise TypeError("compile() takes MSL source as a str, not %s" % type(source).__name__)
    if "\0" in source:  # C strings end at a NUL: the compiler would see a truncated source
        raise CompileError("MSL source contains a NUL character at offset %d; remove it" % source.index("\0"))
    dev = _resolve_device(device)
    lib = _native.lib()
    source_bytes, macro_text = source.encode("utf-8"), _macro_text(macros)
    handle = _kernel_cache.interruptible(lambda: _native.out_u64(
        lib.pm_library_compile, dev.handle, source_bytes, macro_text, 1 if fast_math else 0))
    return Library(handle, dev)


def load(path, *, macros=None, fast_math=False, device=None):
    """Loads a library from a file.

    A ``.metal`` file is compiled (diagnostics name the file); anything else is
    a prebuilt library (.metallib on macOS, MetalCPU's library on Linux).
    """
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(2, "no such library or .metal file", path)
    dev = _resolve_device(device)
    if path.endswith(".metal"):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        quoted = path.replace("\\", "\\\\").replace('"', '\\"')
        lib = compile('#line 1 "%s"\n%s' % (quoted, text), macros=macros, fast_math=fast_math, device=dev)
        lib._origin = path
        return lib
    if macros or fast_math:
        raise ValueError("macros= and fast_math= apply only to .metal source files")
    handle = _native.out_u64(_native.lib().pm_library_load, dev.handle, os.fsencode(path))
    return Library(handle, dev, origin=path)


_shaders_lock = threading.Lock()


def shaders(device=None):
    """pymetal's own kernel library (the Shaders/ folder), e.g.
    ``pm.shaders().add_float32(a, b, out, grid=n)``. Loaded once per device."""
    dev = _resolve_device(device)
    lib = getattr(dev, "_shaders", None)
    if lib is None:
        with _shaders_lock:
            lib = getattr(dev, "_shaders", None)
            if lib is None:
                handle = _native.out_u64(_native.lib().pm_device_shader_library, dev.handle)
                lib = Library(handle, dev, origin="pymetal's shader library")
                dev._shaders = lib
    return lib
