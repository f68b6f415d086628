"""No silent first-use compile (issue 23): ``pm.precompile`` and the note on a slow compile.

The array library's kernels for float32, int32, int64 and bool are precompiled into
pymetal's shader library (Shaders/array_kernels.metal, pymetal/_ops.py PRECOMPILED);
those of the other dtypes (int8, int16, uint8..uint64, float16, bfloat16, complex64)
are compiled on first use, one family (unary, binary, copy, reduce) per dtype, and
kept in the disk cache of compiled kernels. ``pm.precompile`` compiles them ahead of
time; a first-use compile that takes over a second warns once with
``pm.CompileTimeWarning`` (a UserWarning: silence it with the warnings module).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from . import _jit, _ops
from . import dtypes as _dt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

NOTE_SECONDS = 1.0  # a first-use compile slower than this warns
_quiet = False  # within pm.precompile: the compile was asked for


class CompileTimeWarning(UserWarning):
    """The array library compiled a kernel family on first use and it took over a second.

    ``pm.precompile(dtypes=[...])`` compiles families ahead of time (into the disk
    cache, so later processes load them in milliseconds).

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", pm.CompileTimeWarning)  # no notes in this block
        ...     x = pm.arange(3, dtype=pm.int32) + 1
        >>> issubclass(pm.CompileTimeWarning, UserWarning)
        True
    """


def compiled(family: str, dt: np.dtype, seconds: float) -> None:
    """Called by _jit after it compiled a family (not precompiled) for dt on first use."""
    if seconds > NOTE_SECONDS and not _quiet:
        name = _dt.NAMES[dt]
        warnings.warn("pymetal: compiling the %s kernels for %s on first use took %.1f s (kept in the disk cache); "
                      "pm.precompile(dtypes=[%r]) compiles them ahead of time"
                      % (family, name, seconds, name), CompileTimeWarning, stacklevel=_user_level())


def _user_level():
    """The stacklevel of the first frame outside pymetal (the user's line)."""
    import os
    import sys
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(2), 2  # frame 1 (compiled) is stacklevel 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def precompile(dtypes: Iterable[Any] | None = None, ops: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """Compiles the array library's kernel families for `dtypes` ahead of first use.

    dtypes: the dtypes (None: every dtype whose kernels are not precompiled into
    pymetal's shader library); ops: families among "unary", "binary", "copy",
    "reduce" (None: all). Compiled families go to the disk cache of compiled kernels,
    so later processes load them in milliseconds. Returns the (family, dtype name)
    pairs compiled or loaded now; precompiled ones and families this process already
    has are left out.

    Examples:
        >>> pm.precompile(dtypes=[pm.float32])  # float32 ships precompiled
        []
    """
    if dtypes is None:
        todo_dtypes = [d for d in _ops.ALL_DTYPES if d not in _ops.PRECOMPILED]
    else:
        if isinstance(dtypes, (str, np.dtype, type)):
            dtypes = [dtypes]
        todo_dtypes = []
        for d in dtypes:
            dt = _dt.check_dtype(d, "precompile")
            if dt not in _ops.ALL_DTYPES:
                raise TypeError("precompile: %s has no array kernels (structured dtypes are for custom kernels)" % dt)
            todo_dtypes.append(dt)
    families = _ops.FAMILIES if ops is None else ([ops] if isinstance(ops, str) else list(ops))
    for f in families:
        if f not in _ops.FAMILIES:
            raise ValueError("precompile: ops=%r: the kernel families are %s" % (f, ", ".join(_ops.FAMILIES)))
    global _quiet
    done = []
    _quiet = True
    try:
        _compile_all(todo_dtypes, families, done)
    finally:
        _quiet = False
    return done


def _compile_all(todo_dtypes, families, done):
    for dt in todo_dtypes:
        if dt in _ops.PRECOMPILED:
            continue
        for family in families:
            if (family, dt) in _jit._families:
                continue
            lines = _ops.family_lines(family, dt)
            if not lines:
                continue
            _jit.kernel(next(iter(lines)), family, dt)
            done.append((family, _dt.NAMES[dt]))


def timed_compile(compile_fn: Any, family: str, dt: np.dtype) -> Any:
    """compile_fn() (a family's first-use compile), noting it if it was slow."""
    t = time.perf_counter()
    lib = compile_fn()
    compiled(family, dt, time.perf_counter() - t)
    return lib
