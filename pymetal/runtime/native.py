"""Finding and loading libPyMetal, its C prototypes, and status checking.

The library is loaded lazily, on first use, from the first of:

1. the path in the ``PYMETAL_LIBRARY`` environment variable;
2. a copy bundled in the package: ``pymetal/lib/libPyMetal.{dylib,so}``;
3. the source tree's build: ``<repo>/.build/release/`` then ``.build/debug/``.

A library whose ``pm_abi_version()`` differs from :data:`ABI_VERSION` is refused.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import POINTER, byref, c_char_p, c_double, c_int32, c_int64, c_uint32, c_uint64, c_void_p

from ..errors import LibraryError, error_for_status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The C ABI's constants and records, as Sources/CPyMetal/include/pymetal.h
# defines them (tests/python/runtime/test_c_abi.py compiles a C program that prints the
# header's values and layouts and compares them with these).
ABI_VERSION = 3

PM_MAX_BINDINGS = 31     # [[buffer(0)]] .. [[buffer(30)]]
PM_MAX_ARGS = 64         # pm_arg records per dispatch
PM_MAX_BYTES = 4096      # a value passed by copy (setBytes)
PM_BYTES_ALIGNMENT = 16  # each value is copied to a 16-byte boundary

PM_ARG_LENGTH_EMPTY = (1 << 64) - 1  # pm_arg.length of an empty array (0 means "to the buffer's end")
PM_ARG_BUFFER = 0
PM_ARG_BYTES = 1
PM_ARG_THREADGROUP_MEMORY = 2

PM_ACCESS_UNUSED = 0
PM_ACCESS_READ_ONLY = 1
PM_ACCESS_READ_WRITE = 2

PM_BINDING_BUFFER = 0
PM_BINDING_THREADGROUP = 1
SPACES = ("", "device", "constant", "threadgroup")  # pm_address_space
PM_FORM_UNKNOWN, PM_FORM_POINTER, PM_FORM_REFERENCE, PM_FORM_VALUE = 0, 1, 2, 3
PM_SCALAR_OTHER, PM_SCALAR_BOOL, PM_SCALAR_INT, PM_SCALAR_UINT, PM_SCALAR_FLOAT, PM_SCALAR_BFLOAT = range(6)


class PmArg(ctypes.Structure):
    """struct pm_arg: one argument of a dispatch."""

    _fields_ = [
        ("kind", c_int32),
        ("index", c_int32),
        ("buffer", c_uint64),
        ("offset", c_uint64),
        ("bytes", c_void_p),
        ("length", c_uint64),
    ]


class PmLaunchConfig(ctypes.Structure):
    """struct pm_launch_config: what pm_dispatch_launch takes besides the arguments."""

    _fields_ = [
        ("stream", c_uint64),
        ("kernel", c_uint64),
        ("size", c_uint32 * 3),
        ("threadgroup", c_uint32 * 3),
        ("by_groups", c_int32),
        ("reserved", c_int32),
    ]


class PmArgumentInfo(ctypes.Structure):
    """struct pm_argument_info: one parameter of a kernel's signature."""

    _fields_ = [
        ("name", c_char_p),
        ("type_name", c_char_p),
        ("binding", c_int32),
        ("index", c_int32),
        ("space", c_int32),
        ("form", c_int32),
        ("access", c_int32),
        ("scalar", c_int32),
        ("scalar_size", c_int32),
        ("lanes", c_int32),
        ("size", c_int64),
    ]


_STRUCT_CODES = {c_int32: "i", c_uint32: "I", c_int64: "q", c_uint64: "Q", c_void_p: "Q"}


def struct_format(structure):
    """The struct-module format of a ctypes Structure of integer fields (arrays
    of them too), with its padding: pymetal packs records with struct (cheaper
    than ctypes per call) from this one definition."""
    fmt, at = "<", 0
    for name, ctype in structure._fields_:
        offset = getattr(structure, name).offset
        fmt += "x" * (offset - at)
        length = getattr(ctype, "_length_", 1)
        fmt += _STRUCT_CODES[getattr(ctype, "_type_", ctype) if length > 1 else ctype] * length
        at = offset + ctypes.sizeof(ctype)
    fmt += "x" * (ctypes.sizeof(structure) - at)
    return fmt


_u64p = POINTER(c_uint64)
_i64p = POINTER(c_int64)
_i32p = POINTER(c_int32)
_strp = POINTER(c_char_p)
_voidpp = POINTER(c_void_p)
_u32_3 = POINTER(c_uint32)

# name -> (restype, argtypes)
_PROTOTYPES = {
    "pm_abi_version": (c_int32, []),
    "pm_last_error": (c_char_p, []),
    "pm_device_default": (c_int32, [_u64p]),
    "pm_device_name": (c_int32, [_strp, c_uint64]),
    "pm_device_backend": (c_int32, [_strp, c_uint64]),
    "pm_device_unified_memory": (c_int32, [_i32p, c_uint64]),
    "pm_device_max_threads_per_threadgroup": (c_int32, [_i64p, c_uint64]),
    "pm_device_max_buffer_length": (c_int32, [_i64p, c_uint64]),
    "pm_device_recommended_working_set": (c_int32, [_i64p, c_uint64]),
    "pm_device_page_size": (c_int32, [_i64p, c_uint64]),
    "pm_device_max_threadgroup_memory": (c_int32, [_i64p, c_uint64]),
    "pm_device_shader_library": (c_int32, [_u64p, c_uint64]),
    "pm_buffer_new": (c_int32, [_u64p, c_uint64, c_uint64]),
    "pm_buffer_wrap": (c_int32, [_u64p, c_uint64, c_void_p, c_uint64]),
    "pm_buffer_contents": (c_int32, [_voidpp, c_uint64]),
    "pm_buffer_length": (c_int32, [_u64p, c_uint64]),
    "pm_buffer_release": (c_int32, [c_uint64]),
    "pm_library_compile": (c_int32, [_u64p, c_uint64, c_char_p, c_char_p, c_int32]),
    "pm_library_compile_version": (c_int32, [_u64p, c_uint64, c_char_p, c_char_p, c_int32, c_int32]),
    "pm_library_compile_logging": (c_int32, [_u64p, c_uint64, c_char_p, c_char_p, c_int32, c_int32, c_int32]),
    "pm_library_load": (c_int32, [_u64p, c_uint64, c_char_p]),
    "pm_library_function_count": (c_int32, [_i64p, c_uint64]),
    "pm_library_function_name": (c_int32, [_strp, c_uint64, c_int64]),
    "pm_library_release": (c_int32, [c_uint64]),
    "pm_kernel_new": (c_int32, [_u64p, c_uint64, c_char_p]),
    "pm_library_function_constants": (c_int32, [c_char_p, c_int64, _i64p, c_uint64, c_char_p]),
    "pm_kernel_new_specialized": (c_int32, [_u64p, c_uint64, c_char_p, c_char_p]),
    "pm_kernel_max_threads": (c_int32, [_i64p, c_uint64]),
    "pm_kernel_execution_width": (c_int32, [_i64p, c_uint64]),
    "pm_kernel_static_threadgroup_memory": (c_int32, [_i64p, c_uint64]),
    "pm_kernel_default_threadgroup": (c_int32, [c_void_p, c_uint64, c_void_p, c_int32]),
    "pm_kernel_buffer_access": (c_int32, [_i32p, c_uint64, c_int32]),
    "pm_kernel_argument_count": (c_int32, [_i64p, c_uint64]),
    "pm_kernel_argument": (c_int32, [POINTER(PmArgumentInfo), c_uint64, c_int64]),
    "pm_kernel_release": (c_int32, [c_uint64]),
    "pm_stream_new": (c_int32, [_u64p, c_uint64]),
    "pm_stream_commit": (c_int32, [c_uint64]),
    "pm_stream_synchronize": (c_int32, [c_uint64]),
    "pm_stream_wait": (c_int32, [c_uint64]),
    "pm_stream_finish": (c_int32, [c_uint64]),
    "pm_buffer_error": (c_int32, [c_uint64]),
    "pm_buffer_clear_error": (c_int32, [c_uint64]),
    "pm_buffer_error_count": (c_int32, [POINTER(POINTER(c_int64))]),
    "pm_stream_gpu_time": (c_int32, [POINTER(c_double), c_uint64]),
    "pm_stream_release": (c_int32, [c_uint64]),
    "pm_set_kernel_timeout": (c_int32, [c_double]),
    "pm_kernel_timeout": (c_int32, [POINTER(c_double)]),
    "pm_cancel_all": (c_int32, []),
    # args, size and threadgroup are passed as integer addresses (fast path).
    "pm_dispatch": (c_int32, [c_uint64, c_uint64, c_void_p, c_int32, c_void_p, c_void_p, c_int32]),
    "pm_dispatch_launch": (c_int32, [c_void_p, c_void_p, c_int32]),
    # The compile cache (pymetal/runtime/kernel_cache.py).
    "pm_kernel_cache_info": (c_int32, [_strp, _i64p, _i64p, _i64p, _i32p]),
    "pm_kernel_cache_clear": (c_int32, [_i64p]),
    "pm_compile_interrupt_socket": (c_int32, [c_int32]),
}

_BUILD_HINT = (
    "build it with `swift build -c release --product PyMetal` (or `make`) in the "
    "pymetal source tree, or set PYMETAL_LIBRARY to the path of libPyMetal"
)

_lib: Any = None  # the ctypes CDLL, once loaded
_lib_path: str | None = None
_lock = threading.Lock()


def _library_names():
    if sys.platform == "darwin":
        return ("libPyMetal.dylib", "libPyMetal.so")
    return ("libPyMetal.so", "libPyMetal.dylib")


def candidate_paths():
    """Where pymetal looks for libPyMetal, in order (PYMETAL_LIBRARY aside)."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # pymetal/ (this file is in runtime/)
    root = os.path.dirname(pkg)
    dirs = [
        os.path.join(pkg, "lib"),
        os.path.join(root, ".build", "release"),
        os.path.join(root, ".build", "debug"),
    ]
    return [os.path.join(d, n) for d in dirs for n in _library_names()]


def find_library():
    """The path of the libPyMetal to load; raises LibraryError if there is none."""
    env = os.environ.get("PYMETAL_LIBRARY")
    if env:
        if not os.path.isfile(env):
            raise LibraryError("PYMETAL_LIBRARY=%r: no such file; %s" % (env, _BUILD_HINT))
        return env
    candidates = candidate_paths()
    for path in candidates:
        if os.path.isfile(path):
            return path
    dirs = []
    for path in candidates:
        d = os.path.dirname(path)
        if d not in dirs:
            dirs.append(d)
    raise LibraryError(
        "pymetal could not find libPyMetal (looked in %s); %s" % (", ".join(dirs), _BUILD_HINT)
    )


def _load(path):
    # Swift's crash reporter (swift-backtrace, started on a crash anywhere in a
    # process with the Swift runtime) inherits the dying process's stdout and
    # stderr and keeps them open for 30 s or more: a parent reading the pipes
    # (subprocess.run(capture_output=True), CI) sees a crash as a hang. So it is
    # off unless the user set SWIFT_BACKTRACE; the runtime reads the variable
    # once, when it is loaded, and the environment is restored after (children
    # of this process are not affected).
    quiet = "SWIFT_BACKTRACE" not in os.environ
    if quiet:
        os.environ["SWIFT_BACKTRACE"] = "enable=no"
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise LibraryError("cannot load libPyMetal from %s: %s" % (path, e)) from None
    finally:
        if quiet:
            del os.environ["SWIFT_BACKTRACE"]
    try:
        abi = lib.pm_abi_version
    except AttributeError:
        raise LibraryError("%s is not libPyMetal (it has no pm_abi_version)" % path) from None
    abi.restype, abi.argtypes = c_int32, []
    version = abi()
    if version != ABI_VERSION:
        raise LibraryError(
            "libPyMetal at %s has ABI version %d, but this pymetal package expects "
            "version %d; rebuild the library from the same source as the Python "
            "package (swift build -c release --product PyMetal) or point "
            "PYMETAL_LIBRARY at a matching one" % (path, version, ABI_VERSION)
        )
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LibraryError("libPyMetal at %s lacks %s; rebuild it" % (path, name)) from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def lib():
    """The loaded libPyMetal (loads it on first call)."""
    global _lib, _lib_path
    if _lib is None:
        with _lock:
            if _lib is None:
                path = find_library()
                loaded = _load(path)
                _lib_path = os.path.abspath(path)
                _lib = loaded
    return _lib


def library_path() -> str:
    """The path of the loaded libPyMetal (loads it if needed).

    Examples:
        >>> import os
        >>> os.path.isfile(pm.library_path())
        True
    """
    lib()
    return _lib_path  # type: ignore[return-value]  # set by lib()


def last_error():
    msg = _lib.pm_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def error(status):
    """The exception for a failed call (reads pm_last_error on this thread)."""
    return error_for_status(status, last_error())


def check(status):
    if status:
        raise error(status)


# ---- small helpers for calls with one out-parameter -------------------------

def out_u64(fn, *args):
    out = c_uint64()
    st = fn(byref(out), *args)
    if st:
        raise error(st)
    return out.value


def out_i64(fn, *args):
    out = c_int64()
    st = fn(byref(out), *args)
    if st:
        raise error(st)
    return out.value


def out_i32(fn, *args):
    out = c_int32()
    st = fn(byref(out), *args)
    if st:
        raise error(st)
    return out.value


def out_ptr(fn, *args):
    out = c_void_p()
    st = fn(byref(out), *args)
    if st:
        raise error(st)
    return out.value or 0


def out_str(fn, *args):
    out = c_char_p()
    st = fn(byref(out), *args)
    if st:
        raise error(st)
    return (out.value or b"").decode("utf-8", "replace")


def out_f64(fn, *args):
    out = c_double()
    st = fn(byref(out), *args)
    if st:
        raise error(st)
    return out.value
