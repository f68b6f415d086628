"""Libraries of kernels: compiling MSL source and loading library files."""

from __future__ import annotations

import ctypes
import os
import re
import threading
import weakref

import numpy as np

from . import kernel_cache as _kernel_cache
from . import native as _native
from .device import resolve as _resolve_device
from ..errors import CompileError, FunctionNotFoundError, NotFoundError
from .function import Function

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from typing import Any, Union

    from .device import Device

    #: ``{"NAME": value}`` (None: a bare #define) or ``["NAME=VALUE", "NAME", ("NAME", value), ...]``.
    Defines = Union[Mapping[str, Any], Sequence[Union[str, tuple[str, Any]]]]

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

    Examples:
        >>> lib = pm.compile('''
        ... kernel void add_one(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
        ...                     uint i [[thread_position_in_grid]]) { out[i] = a[i] + 1.0f; }
        ... ''')
        >>> lib.functions
        ['add_one']
        >>> out = pm.empty(3)
        >>> lib.add_one(pm.asarray([1.0, 2.0, 3.0]), out, grid=3)
        >>> out
        Array([2., 3., 4.], dtype=float32)
    """

    def __init__(self, handle: int, device: Device, origin: str | None = None, owned: bool = True) -> None:
        self._owner = _LibraryHandle(handle, owned)
        self._device = device
        self._origin = origin
        self._functions: dict = {}  # name, or (name, constant values) -> Function
        self._constants: dict = {}  # name -> its function constants
        self._names: tuple[str, ...] | None = None
        # How to make it again in another process (pickle: Dask workers, process pools): the
        # arguments of _recompile, or None for a library made from a handle.
        self._recipe: tuple | None = None

    def __reduce__(self) -> tuple:
        # Kernels are native pipelines: a pickle carries what made them (the MSL source with its
        # #includes expanded and the options, or the library file's path), and the receiver
        # rebuilds them on its default device (its kernel cache makes that a lookup).
        if self._origin == "pymetal's shader library":
            return shaders, ()
        if self._recipe is None:
            raise TypeError("this Library cannot be pickled (it was not made by pm.compile, pm.load or "
                            "pm.shaders); pickle the source and compile it in the receiving process")
        return self._recipe

    @property
    def device(self) -> Device:
        """The device the library's kernels run on.

        Examples:
            >>> pm.shaders().device is pm.device()
            True
        """
        return self._device

    @property
    def functions(self) -> list[str]:
        """Names of the library's kernel functions.

        Examples:
            >>> "add_float32" in pm.shaders().functions
            True
        """
        if self._names is None:
            lib = _native.lib()
            h = self._owner.handle
            count = _native.out_i64(lib.pm_library_function_count, h)
            self._names = tuple(_native.out_str(lib.pm_library_function_name, h, i) for i in range(count))
        return list(self._names)

    def function(self, name: str, constants: dict[str | int, Any] | None = None) -> Function:
        """The kernel function `name` (raises FunctionNotFoundError naming the others).

        constants: values for the function constants it declares
        (``constant bool has_w [[function_constant(20)]];``), by name or by index:
        ``{"has_w": True}`` or ``{20: True}``. Each set of values is a pipeline of its
        own (Metal's makeFunction(name:constantValues:)); a constant the kernel uses
        without a value is an error.

        Examples:
            >>> fn = pm.shaders().function("add_float32")
            >>> fn.name
            'add_float32'
            >>> lib = pm.compile('''
            ... constant float scale [[function_constant(0)]];
            ... kernel void scaled(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= scale; }
            ... ''')
            >>> x = pm.ones(2)
            >>> lib.function("scaled", constants={"scale": 3.0})(x, grid=2)
            >>> x
            Array([3., 3.], dtype=float32)
        """
        key = name
        if constants:
            if not isinstance(name, str) or name not in self.functions:
                return self.function(name)  # the plain lookup's errors
            key = (name, self._constant_values(name, constants))
        fn = self._functions.get(key)
        if fn is not None:
            return fn
        if not isinstance(name, str):
            raise TypeError("function name must be a str, not %s" % type(name).__name__)
        names = self.functions
        if name not in names:
            raise FunctionNotFoundError(self._not_found(name, names))
        try:
            fn = Function(self, name, constants=key[1] if constants else None)
        except NotFoundError as e:
            raise FunctionNotFoundError("%s (%s)" % (self._not_found(name, names), e)) from None
        except CompileError as e:
            if constants or "function constants without a value" not in str(e):
                raise
            raise CompileError("%s; give them with lib.function(%r, constants={...})" % (e, name), e.diagnostics) from None
        return self._functions.setdefault(key, fn)

    def function_constants(self, name: str) -> list[dict[str, Any]]:
        """The function constants kernel `name` declares.

        A list of dicts with name, index, type (MSL spelling), required (the kernel
        uses its value) and code (the MTLDataType).

        Examples:
            >>> lib = pm.compile('''
            ... constant bool use_b [[function_constant(0)]];
            ... kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
            ...     if (use_b) x[i] = 1.0f;
            ... }
            ... ''')
            >>> lib.function_constants("k")
            [{'name': 'use_b', 'index': 0, 'type': 'bool', 'required': True, 'code': 53}]
        """
        if name in self._constants:
            return [dict(c) for c in self._constants[name]]
        if name not in self.functions:
            raise FunctionNotFoundError(self._not_found(name, self.functions))
        lib = _native.lib()
        size = 4096
        while True:
            buf = ctypes.create_string_buffer(size)
            needed = ctypes.c_int64()
            _native.check(lib.pm_library_function_constants(buf, size, ctypes.byref(needed), self._owner.handle,
                                                             name.encode()))
            if needed.value <= size:
                break
            size = needed.value
        result = []
        for line in buf.value.decode().splitlines():
            index, code, required, cname = line.split("\t")
            type_name, _, _ = _DATA_TYPES.get(int(code), ("MTLDataType %s" % code, None, 0))
            result.append({"name": cname, "index": int(index), "type": type_name, "required": required == "1",
                           "code": int(code)})
        self._constants[name] = result
        return [dict(c) for c in result]

    def _constant_values(self, name, constants):
        """{"has_w": True, 3: 0.5} -> "20 53 01\\n3 3 0000003f" (pm_kernel_new_specialized's lines)."""
        if not isinstance(constants, dict):
            raise TypeError("constants= must be a dict of {name or index: value}, not %s" % type(constants).__name__)
        declared = self.function_constants(name)
        if not declared:
            raise ValueError("kernel %r declares no function constants ([[function_constant(index)]])" % name)
        by_name = {c["name"]: c for c in declared}
        by_index = {c["index"]: c for c in declared}
        values = {}
        for key, value in constants.items():
            c = by_name.get(key) if isinstance(key, str) else by_index.get(key) if isinstance(key, int) else None
            if c is None:
                raise ValueError("kernel %r has no function constant %r; it has: %s" % (
                    name, key, ", ".join("%s [%d] (%s)" % (d["name"], d["index"], d["type"]) for d in declared)))
            if c["index"] in values:
                raise ValueError("function constant %r [%d] is given twice" % (c["name"], c["index"]))
            values[c["index"]] = "%d %d %s" % (c["index"], c["code"], _constant_bytes(c, value).hex())
        return "\n".join(values[i] for i in sorted(values))

    def _not_found(self, name, names):
        where = " in %s" % self._origin if self._origin else ""
        if names:
            return "no kernel function %r%s; available: %s" % (name, where, ", ".join(names))
        return "no kernel function %r%s; the library has no kernel functions" % (name, where)

    def __getattr__(self, name: str) -> Function:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.function(name)

    def __getitem__(self, name: str) -> Function:
        """The kernel function `name`, as ``lib.function(name)``.

        Examples:
            >>> pm.shaders()["add_float32"] is pm.shaders().add_float32
            True
        """
        return self.function(name)

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.functions))

    def __repr__(self) -> str:
        where = " from %s" % self._origin if self._origin else ""
        return "<pymetal.Library%s functions=%s>" % (where, self.functions)


# MTLDataType raw value -> (MSL name, NumPy dtype of an element, width); bfloat is encoded apart.
_DATA_TYPES: dict = {}
for _base, _name, _dtype in [(3, "float", np.float32), (16, "half", np.float16), (29, "int", np.int32),
                             (33, "uint", np.uint32), (37, "short", np.int16), (41, "ushort", np.uint16),
                             (45, "char", np.int8), (49, "uchar", np.uint8), (53, "bool", np.bool_),
                             (81, "long", np.int64), (85, "ulong", np.uint64), (121, "bfloat", np.float32)]:
    for _w in range(1, 5):
        _DATA_TYPES[_base + _w - 1] = (_name + (str(_w) if _w > 1 else ""), _dtype, _w)


def _constant_bytes(c, value):
    """The bytes of `value` as function constant c's declared type (checked: no silent wrap or truncation)."""
    entry = _DATA_TYPES.get(c["code"])
    if entry is None:
        raise TypeError("function constant %r has a type pymetal cannot set" % c["name"])
    type_name, dtype, width = entry
    what = "function constant %r (%s)" % (c["name"], type_name)
    items = list(value) if width > 1 and np.ndim(value) == 1 else [value]
    if len(items) != width or any(np.ndim(v) != 0 for v in items):
        raise TypeError("%s needs %s" % (what, "%d values" % width if width > 1 else "one value"))
    kind = np.dtype(dtype).kind
    for v in items:
        if isinstance(v, (str, bytes)) or (kind == "b" and not isinstance(v, (bool, np.bool_))) or \
                (kind in "iu" and not isinstance(v, (int, np.integer, bool, np.bool_))) or \
                (kind == "f" and not isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_))):
            raise TypeError("%s: %r is not a %s value" % (what, v, type_name))
        if kind in "iu" and not np.iinfo(dtype).min <= int(v) <= np.iinfo(dtype).max:
            raise ValueError("%s: %r is out of range" % (what, v))
    array = np.array(items, dtype)
    if c["code"] >= 121:  # bfloat: float32 rounded to nearest even, top 16 bits
        bits = array.view(np.uint32).astype(np.uint64)
        nan = np.isnan(array)
        bits = np.where(nan, 0x7FC00000, bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return bits.astype("<u2").tobytes()
    return array.astype(np.dtype(dtype).newbyteorder("<")).tobytes()


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


# `#import` (Objective-C's include-once, which Metal's compiler takes too: Apple's samples import their
# shared AAPL*Types.h) is an #include whose file is then read once
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*(include|import)[ \t]*([<"])([^>"]+)[>"]')
_PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once\b")
_LANGUAGE_VERSIONS = ("2.4", "3.0", "3.1", "3.2")


def _quoted_path(path):
    return '"%s"' % path.replace("\\", "\\\\").replace('"', '\\"')


def _expand_includes(text, name, directory, include_dirs, once, depth=0):
    """The source with the #include lines that name a file in `directory` (quoted
    includes: the including file's own folder, as `xcrun metal` does) or in
    `include_dirs` replaced by that file, between #line markers (so diagnostics
    name the file and line). Metal's runtime compiler reads no files, so this is
    done before compiling, on every platform. `#pragma once` is honoured per
    file; <metal_stdlib> and other names found nowhere stay for the compiler."""
    if depth > 100:
        raise ValueError("#include nested more than 100 deep (an include cycle?) in %s" % name)
    lines = text.split("\n")
    out = []
    for number, line in enumerate(lines, 1):
        m = _INCLUDE.match(line)
        if _PRAGMA_ONCE.match(line) and depth > 0:
            out.append("")  # handled through `once`
            continue
        if not m:
            out.append(line)
            continue
        folders = ([directory] if m.group(2) == '"' and directory else []) + list(include_dirs)
        found = next((os.path.join(d, m.group(3)) for d in folders if os.path.isfile(os.path.join(d, m.group(3)))), None)
        if found is None:
            out.append(line)
            continue
        found = os.path.realpath(found)
        if found in once:
            out.append("")
            continue
        with open(found, encoding="utf-8") as f:
            body = f.read()
        if m.group(1) == "import" or any(_PRAGMA_ONCE.match(l) for l in body.split("\n")):
            once.add(found)
        out.append("#line 1 %s" % _quoted_path(found))
        out.append(_expand_includes(body, found, os.path.dirname(found), include_dirs, once, depth + 1))
        out.append("#line %d %s" % (number + 1, _quoted_path(name)))
    return "\n".join(out)


def _compile(source, name, directory, defines, macros, include_dirs, fast_math, language_version, device,
             logging=False):
    if defines is not None and macros is not None:
        raise TypeError("give defines= or its older name macros=, not both")
    defines = defines if defines is not None else macros
    if language_version is None:
        version = 0
    elif str(language_version) in _LANGUAGE_VERSIONS:
        major, minor = str(language_version).split(".")
        version = int(major) * 100 + int(minor)
    else:
        raise ValueError("language_version=%r: Metal's are %s" % (language_version, ", ".join(_LANGUAGE_VERSIONS)))
    if logging and version and version < 302:
        raise ValueError("shader logging (logging=True) needs Metal 3.2: give language_version='3.2' or none, "
                         "not %r" % language_version)
    if include_dirs is None:
        include_dirs = []
    elif isinstance(include_dirs, (str, bytes, os.PathLike)):
        include_dirs = [include_dirs]
    dirs = []
    for d in include_dirs:
        d = os.fsdecode(os.fspath(d))
        if not os.path.isdir(d):
            raise FileNotFoundError(2, "include directory not found", d)
        dirs.append(os.path.abspath(d))
    if directory or dirs:
        source = "#line 1 %s\n%s" % (_quoted_path(name), _expand_includes(source, name, directory, dirs, set()))
    elif name != "program_source":
        source = "#line 1 %s\n%s" % (_quoted_path(name), source)
    dev = _resolve_device(device)
    lib, source_bytes, macro_text = _native.lib(), source.encode("utf-8"), _macro_text(defines)
    handle = _kernel_cache.interruptible(lambda: _native.out_u64(
        lib.pm_library_compile_logging, dev.handle, source_bytes, macro_text, 1 if fast_math else 0, version,
        1 if logging else 0))
    if logging:
        from . import kernel_log
        kernel_log.enable()
    library = Library(handle, dev)
    # (source is final here: its #includes expanded, so the receiver needs none of the files)
    library._recipe = (_recompile, (source, defines, fast_math, language_version, bool(logging)))
    return library


def _recompile(source, defines, fast_math, language_version, logging):
    """A pickled Library, compiled again (Library.__reduce__)."""
    return _compile(source, "program_source", None, defines, None, None, fast_math, language_version, None, logging)


def _reload(path, logging):
    """A pickled Library of a prebuilt library file, loaded again (Library.__reduce__)."""
    return load(path, logging=logging)


def compile(source: str | bytes, *, defines: Defines | None = None,
            include_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
            fast_math: bool = False, language_version: str | None = None, device: Device | None = None,
            macros: Defines | None = None, logging: bool = False) -> Library:
    """Compiles MSL source into a Library.

    Args:
        source: the Metal Shading Language source (str, or UTF-8 bytes).
        defines: ``{"NAME": value}`` (value None for a bare #define) or ``["NAME=VALUE", ...]``
            (``macros=`` is the older name).
        include_dirs: folders searched by ``#include "..."`` and ``#include <...>``
            (besides Metal's own headers).
        fast_math: False (default, safe IEEE math on every platform) or True.
        language_version: "2.4", "3.0", "3.1" or "3.2" (default: the platform's).
        device: the device to compile for (default: pm.device()).
        macros: the older name of defines.
        logging: shader logging: the kernels' ``os_log`` messages (``#include <metal_logging>``)
            reach Python's ``logging`` under the logger "pymetal.kernel" (pymetal.kernel_log);
            without it, os_log calls do nothing, as on a Mac.

    Raises CompileError (with .diagnostics) if the source does not compile.

    Examples:
        >>> lib = pm.compile('''
        ... kernel void fill(device int* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = VALUE; }
        ... ''', defines={"VALUE": 7})
        >>> x = pm.empty(3, pm.int32)
        >>> lib.fill(x, grid=3)
        >>> x
        Array([7, 7, 7], dtype=int32)
    """
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8")
    if not isinstance(source, str):
        raise TypeError("compile() takes MSL source as a str, not %s" % type(source).__name__)
    if "\0" in source:  # C strings end at a NUL: the compiler would see a truncated source
        raise CompileError("MSL source contains a NUL character at offset %d; remove it" % source.index("\0"))
    return _compile(source, "program_source", None, defines, macros, include_dirs, fast_math, language_version, device,
                    bool(logging))


def load(path: str | bytes | os.PathLike[str], *, defines: Defines | None = None,
         include_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
         fast_math: bool = False, language_version: str | None = None, device: Device | None = None,
         macros: Defines | None = None, logging: bool = False) -> Library:
    """Loads a library from a file.

    A ``.metal`` file is compiled (diagnostics name the file; ``#include "..."``
    is found next to the including file first, then in include_dirs, as
    ``xcrun metal`` does); anything else is a prebuilt library (.metallib on
    macOS, MetalCPU's library on Linux). The options are those of :func:`compile`.
    logging=True: a ``.metal`` file is compiled with shader logging; a prebuilt
    library's messages are delivered, but whether its kernels log was fixed when
    it was built (``xcrun metal -std=metal3.2 -fmetal-enable-logging`` on a Mac;
    on Linux, a library pymetal compiled with logging=True): one built without
    logging logs nothing, on every backend.

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "twice.metal")
        >>> with open(path, "w") as f:
        ...     _ = f.write("kernel void twice(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]])"
        ...                 " { x[i] *= 2.0f; }")
        >>> x = pm.asarray([1.0, 5.0])
        >>> pm.load(path).twice(x, grid=2)
        >>> x
        Array([ 2., 10.], dtype=float32)
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
        lib = _compile(text, path, os.path.dirname(os.path.abspath(path)), defines, macros, include_dirs, fast_math,
                       language_version, dev, bool(logging))
        lib._origin = path
        return lib
    if defines or macros or fast_math or include_dirs or language_version:
        raise ValueError("defines=, include_dirs=, fast_math= and language_version= apply only to .metal source files")
    handle = _native.out_u64(_native.lib().pm_library_load, dev.handle, os.fsencode(path))
    if logging:
        from . import kernel_log
        kernel_log.enable()
    library = Library(handle, dev, origin=path)
    library._recipe = (_reload, (path, bool(logging)))  # (the file must be there in the receiver)
    return library


_shaders_lock = threading.Lock()


def shaders(device: Device | None = None) -> Library:
    """pymetal's own kernel library (the Shaders/ folder), loaded once per device.

    Examples:
        >>> a, b, out = pm.asarray([1.0, 2.0]), pm.asarray([3.0, 4.0]), pm.empty(2)
        >>> pm.shaders().add_float32(a, b, out, grid=2)
        >>> out
        Array([4., 6.], dtype=float32)
    """
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
