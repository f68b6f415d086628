"""No silent first-use compile (issue 23): the note on a slow first-use compile (pm.precompile: precompile.py).

The array library's kernels for float32, int32, int64 and bool are precompiled into
pymetal's shader library (Shaders/array_kernels.metal, arrays/optable.py PRECOMPILED);
those of the other dtypes (int8, int16, uint8..uint64, float16, bfloat16, complex64)
are compiled on first use, one family (unary, binary, copy, reduce) per dtype, and
kept in the disk cache of compiled kernels. ``pm.precompile`` compiles them ahead of
time; a first-use compile that takes over a second warns once with
``pm.CompileTimeWarning`` (a UserWarning: silence it with the warnings module).
"""

from __future__ import annotations

import time
import warnings

from ... import dtypes as _dt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

NOTE_SECONDS = 1.0  # a first-use compile slower than this warns
quiet = False  # within pm.precompile: the compile was asked for


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
    """Called by the kernel lookup after it compiled a family (not precompiled) for dt on first use."""
    if seconds > NOTE_SECONDS and not quiet:
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


def timed_compile(compile_fn: Any, family: str, dt: np.dtype) -> Any:
    """compile_fn() (a family's first-use compile), noting it if it was slow."""
    t = time.perf_counter()
    lib = compile_fn()
    compiled(family, dt, time.perf_counter() - t)
    return lib
