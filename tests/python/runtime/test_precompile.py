"""No silent first-use compile (issue 23, pymetal/arrays/kernels/precompile.py): pm.precompile warms the disk
cache of compiled kernels; a first-use compile over a second warns with pm.CompileTimeWarning.
Compiles run in subprocesses with a cache home of their own (as test_kernel_cache.py)."""

import warnings

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays.kernels import compile_note as _precompile

from test_kernel_cache import OURS, _python, cache, template  # noqa: F401


def test_precompiled_dtypes_and_bad_arguments(dev):
    assert pm.precompile(dtypes=[pm.float32, pm.int32, pm.int64, pm.bool]) == []  # shipped precompiled
    assert pm.precompile(dtypes="float32", ops="binary") == []
    with pytest.raises(ValueError, match="unary, binary, copy, reduce"):
        pm.precompile(dtypes=[pm.uint8], ops=["matmul"])
    with pytest.raises(TypeError, match="object"):
        pm.precompile(dtypes=[object])
    with pytest.raises(TypeError, match="structured"):
        pm.precompile(dtypes=[[("a", "f4")]])


def test_note_threshold(dev):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _precompile.compiled("binary", np.dtype(pm.uint16), 0.2)  # fast: no note (internals take dtype objects)
        assert not w
        _precompile.compiled("binary", np.dtype(pm.uint16), 1.5)
    assert len(w) == 1 and issubclass(w[0].category, pm.CompileTimeWarning)
    msg = str(w[0].message)
    assert "binary kernels for uint16" in msg and "pm.precompile(dtypes=['uint16'])" in msg and "1.5 s" in msg
    assert w[0].filename == __file__  # the user's line


def test_precompile_warms_the_cache(cache):
    # A fresh cache: precompile compiles the copy family of uint16 and says so; a second call, and
    # a new process's first use, find it compiled (no note, milliseconds).
    r = _python(cache, """
        import warnings, time
        warnings.simplefilter("error", pm.CompileTimeWarning)  # precompile itself does not note
        print(pm.precompile(dtypes=[pm.uint16], ops=["copy"]))
        print(pm.precompile(dtypes=[pm.uint16], ops=["copy"]))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[('copy', 'uint16')]", "[]"]
    r = _python(cache, """
        import warnings, time
        from pymetal.arrays.kernels import compile_note as _precompile
        _precompile.NOTE_SECONDS = 0.5
        warnings.simplefilter("error", pm.CompileTimeWarning)
        t = time.perf_counter()
        x = pm.arange(7, dtype=pm.uint16)  # the copy family (fill): from the disk cache
        print(x.tolist(), time.perf_counter() - t < 0.5)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[0,", "1,", "2,", "3,", "4,", "5,", "6]", "True"]


def test_first_use_compile_notes(cache):
    # Forced threshold 0 so the test does not depend on the machine's speed: the note names the
    # family, the dtype and pm.precompile, once per family.
    r = _python(cache, """
        import warnings
        from pymetal.arrays.kernels import compile_note as _precompile
        _precompile.NOTE_SECONDS = 0.0
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = pm.arange(3, dtype=pm.int16)
            y = pm.arange(3, dtype=pm.int16)
        print(len(w), w[0].category.__name__, "copy kernels for int16" in str(w[0].message))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "CompileTimeWarning", "True"]

