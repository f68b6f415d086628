"""MSL shared by several test files: the .metal files of tests/python/msl/kernels/, and
compiling a kernel both ways the CPU backend runs it (lockstep, fibers)."""

import functools
import os

import numpy as np

import pymetal as pm

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "msl", "kernels")

# "default": as the CPU backend compiles a kernel (SIMD lockstep wherever the front end can
# rewrite it: Lockstep.swift); "fibers": with PM_NO_LOCKSTEP (one fiber per thread).
MODES = ("default", "fibers")


def fixed(reason):
    """MODES, for a case lockstep once got wrong (`reason`: how), kept as a regression test."""
    return MODES


def source(name):
    """The text of tests/python/msl/kernels/<name>."""
    with open(os.path.join(KERNELS, name)) as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def compile_mode(src, mode):
    """The library of `src` compiled in `mode` (one of MODES), compiled once per process."""
    if mode not in MODES:
        raise ValueError("mode must be one of %r, not %r" % (MODES, mode))
    return pm.compile(src, defines={"PM_NO_LOCKSTEP": None} if mode == "fibers" else None)


def run_both_ways(src, kernel, args, written, **launch):
    """Runs `kernel` of `src` in both modes, each on fresh copies of `args` (NumPy arrays and
    scalars), asserts that the arguments at the positions `written` come out equal bit for bit,
    and returns them (as the default mode left them) to compare with a model."""
    results = {}
    for mode in MODES:
        call = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        getattr(compile_mode(src, mode), kernel)(*call, **launch)
        results[mode] = [call[i] for i in written]
    for want, got in zip(results["default"], results["fibers"]):
        np.testing.assert_array_equal(got, want, err_msg="%s: fibers and lockstep disagree" % kernel)
    return results["default"]
