"""Python glue for pymetal's built-in kernel families (Shaders/matmul.metal,
sort.metal, scan.metal): each module checks its operands, packs the kernels'
parameter structs and launches them, never waiting for the device.

The checks and parameters depend only on the operands' dtypes, shapes and
strides, so each module prepares a Plan (the launches, with their parameter
bytes and grids) once per such signature and replays it from a dictionary:
a repeated call costs a lookup plus one kernel call per launch.

Operands are pymetal arrays: objects with ``_buf`` (buffer), ``_offset``
(bytes), ``_shape``, ``_dtype`` and optionally ``_strides`` (bytes, like
NumPy's; C-contiguous when absent).
"""

import threading

import numpy as np

from ..construct import empty
from ..optable import glue_name
from . import lookup as _lookup

__all__ = ["Plan", "bfloat16", "dtype_name", "kernel", "plan", "scratch",
           "signature"]

from ...dtypes import NAMES as _NAMES, bfloat16


def dtype_name(dtype, what):
    """The host-name suffix of a dtype (float32, ..., bool); TypeError if none."""
    name = _NAMES.get(np.dtype(dtype))
    if name is None:
        raise TypeError("%s: dtype %s is not supported (supported: %s)"
                        % (what, np.dtype(dtype), ", ".join(sorted(_NAMES.values()))))
    return name


def kernel(family, variant, dtype_suffix, device):
    """The shader library's kernel <family>_<variant>_<dtype> (optable.glue_name), through the
    array library's one lookup (lookup.py)."""
    return _lookup.kernel(glue_name(family, variant, dtype_suffix), None, None, device)


_tls = threading.local()
SCRATCH_KEEP = 64 << 20  # larger temporaries are not kept


def scratch(device, slot, nbytes):
    """A temporary device buffer (a uint8 pymetal array) of at least nbytes,
    reused by this thread's later calls with the same slot name. Safe without
    waiting: work a thread encodes runs in order on the device's stream, so a
    later call's writes to it come after an earlier call's reads. Fresh memory
    costs page faults (milliseconds per 4 MiB on some machines)."""
    cache = getattr(_tls, "scratch", None)
    if cache is None:
        cache = _tls.scratch = {}
    key = (id(device), slot)
    buf = cache.get(key)
    if buf is not None and buf._buf.device is device and buf.nbytes >= nbytes:
        return buf
    buf = empty(max(nbytes, 1), np.uint8, device=device)
    if nbytes <= SCRATCH_KEEP:
        cache[key] = buf
    return buf


def signature(*arrays):
    """What a plan may depend on: each operand's dtype, shape and strides."""
    return tuple((x._dtype, x._shape, getattr(x, "_strides", None)) for x in arrays)


class Plan:
    """Prepared launches: each binds operands by role ("a", "out", ...; the
    caller's arrays or scratch buffers) followed by its parameter bytes."""

    __slots__ = ("device", "launches", "temps")

    def __init__(self, device):
        self.device = device
        self.launches = []  # (function, roles, params, launch keywords)
        self.temps = {}     # role -> bytes of its scratch buffer (the role names the slot)

    def temp(self, role, nbytes):
        """Role `role` is a scratch buffer of at least nbytes."""
        self.temps[role] = max(nbytes, self.temps.get(role, 0))

    def launch(self, fn, roles, params, **config):
        self.launches.append((fn, roles, params, config))

    def run(self, **operands):
        for role, nbytes in self.temps.items():
            operands[role] = scratch(self.device, role, nbytes)
        for fn, roles, params, config in self.launches:
            fn(*[operands[r] for r in roles], params, **config)


_PLANS_MAX = 512


def plan(cache, key, build):
    """cache[key], made by build() on a miss (the cache is bounded)."""
    p = cache.get(key)
    if p is None:
        p = build()
        if len(cache) >= _PLANS_MAX:
            cache.clear()
        cache[key] = p
    return p
