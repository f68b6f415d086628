"""The array library's one kernel lookup: precompiled, or compiled on first use.

``kernel(name, family, dtype, device)`` returns the Function `name` on `device`
(its names come from the op table, optable.py). It comes from the device's
shader library when precompiled (Shaders/*.metal, array_kernels.metal among
them); otherwise the whole family of kernels for that dtype is instantiated
from the same templates (Shaders/*.h inlined, plus the instantiation lines of
optable.py), compiled once per device, and kept in the disk cache of compiled
kernels, so a later process loads it in milliseconds. Built-in kernels that
are only precompiled (matmul, sort, scan, random, fft) pass family=None.
"""

import os
import threading

from .. import optable as _ops
from ...runtime import library as _library
from ...runtime.device import device as _default_device, renew_lock_after_fork
from ...runtime.function import Function
from .compile_note import timed_compile

_lock = threading.Lock()
renew_lock_after_fork(__name__, "_lock")
_functions: dict = {}   # device -> {name -> Function}
_families: dict = {}    # (device, family, dtype) -> Library
_precompiled: dict = {}  # device -> names in its shader library


def shaders_dir():
    """The folder of pymetal's MSL sources (PYMETAL_SHADERS, else a wheel's
    pymetal/lib/shaders, else the source tree's Shaders/)."""
    env = os.environ.get("PYMETAL_SHADERS")
    if env:
        return env
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # pymetal/
    bundled = os.path.join(here, "lib", "shaders")
    return bundled if os.path.isdir(bundled) else os.path.join(os.path.dirname(here), "Shaders")


def inline_header(name, seen=None):
    """The text of Shaders/<name> with its local #include "..." inlined once each
    (runtime compilation has no include path, on Metal as on the CPU backend)."""
    seen = set() if seen is None else seen
    if name in seen:
        return ""
    seen.add(name)
    path = os.path.join(shaders_dir(), name)
    out = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith('#include "'):
                out.append(inline_header(s[10:s.index('"', 10)], seen))
            elif s != "#pragma once":
                out.append(line)
    return "".join(out)


def family_source(family, dt):
    return inline_header(_ops.HEADERS[family]) + "\n" + "\n".join(_ops.family_lines(family, dt).values()) + "\n"


def kernel(name, family, dt, device):
    """The array library's Function `name` on `device` (a kernel of `family` for dtype dt;
    family None: a precompiled kernel only)."""
    try:
        return _functions[device][name]  # the hot path: two lookups
    except KeyError:
        pass
    with _lock:
        fns = _functions.setdefault(device, {})
        fn = fns.get(name)
        if fn is None:
            fn = fns[name] = _load(name, family, dt, device)
    return fn


def _load(name, family, dt, dev):
    lib = _library.shaders(dev)
    names = _precompiled.get(dev)
    if names is None:
        names = _precompiled[dev] = frozenset(lib.functions)
    # The library's own Function: views are passed with their strides in the parameters,
    # scratch memory as bytes (users' lib.function() stays checked).
    if name in names:
        return Function(lib, name, own=True)
    if family is None:
        lib.function(name)  # FunctionNotFoundError naming the others
    key = (dev, family, dt)
    flib = _families.get(key)
    if flib is None:
        # a slow first-use compile warns (pm.precompile compiles ahead of time)
        flib = timed_compile(lambda: _library.compile(family_source(family, dt), device=dev), family, dt)
        _families[key] = flib
    return Function(flib, name, own=True)


def _warm_one(job):
    family, name = job
    dt = _ops.ALL_DTYPES[[_ops._dt.NAMES[d] for d in _ops.ALL_DTYPES].index(name)]
    lines = _ops.family_lines(family, dt)
    kernel(next(iter(lines)), family, dt, _default_device())
    return family, name


def warm(jobs=2):
    """Compiles every kernel family that is not precompiled into the disk cache,
    in `jobs` processes (used before the test suite: a later first use costs
    milliseconds)."""
    import multiprocessing

    todo = [(f, _ops._dt.NAMES[d]) for d in _ops.ALL_DTYPES if d not in _ops.PRECOMPILED for f in _ops.FAMILIES]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for family, name in pool.imap_unordered(_warm_one, todo):
            print("pymetal: compiled the %s kernels for %s" % (family, name), flush=True)


if __name__ == "__main__":
    import sys

    warm(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
