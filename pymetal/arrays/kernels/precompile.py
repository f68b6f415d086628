"""``pm.precompile``: the array library's kernel families compiled ahead of first use
(issue 23; the note on a slow first-use compile is compile_note.py)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...runtime.device import device as _default_device
from .. import optable as _ops
from . import compile_note
from . import lookup as _jit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable


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
    done: list[tuple[str, str]] = []
    compile_note.quiet = True
    try:
        _compile_all(todo_dtypes, families, done)
    finally:
        compile_note.quiet = False
    return done


def _compile_all(todo_dtypes, families, done):
    for dt in todo_dtypes:
        if dt in _ops.PRECOMPILED:
            continue
        for family in families:
            if (_default_device(), family, dt) in _jit._families:
                continue
            lines = _ops.family_lines(family, dt)
            if not lines:
                continue
            _jit.kernel(next(iter(lines)), family, dt, _default_device())
            done.append((family, _dt.NAMES[dt]))
