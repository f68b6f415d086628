"""Differential test of the array library: random programs against NumPy.

tests/python/differential.py draws the programs and says what counts as the
same result. Here a fixed, bounded sample runs (derandomized: the same
programs every run, about a minute); `make fuzz-arrays` (scripts/fuzz_arrays.py)
runs the same generator with random seeds for minutes and reports each
distinct failure once, shrunk to a minimal reproduction.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import pymetal as pm
from differential import Mismatch, Program, run_program

EXAMPLES = int(os.environ.get("PYMETAL_DIFFERENTIAL_EXAMPLES", "2000"))
# Shrinking a failure can take minutes: off in `make test` (the message still
# holds the whole program as a reproduction), on with PYMETAL_DIFFERENTIAL_SHRINK=1.
PHASES = list(Phase) if os.environ.get("PYMETAL_DIFFERENTIAL_SHRINK") else [Phase.explicit, Phase.generate]


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, phases=PHASES,
          suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False)
@given(st.data())
def test_random_programs_match_numpy(dev, data):
    run_program(data)


# The harness itself: each rule of the comparison catches what it is for.

def _prog(dev, *arrays):
    prog = Program()
    for a in arrays:
        prog.add_input(np.asarray(a))
    return prog


def test_harness_catches_a_wrong_value(dev):
    prog = _prog(dev, np.arange(5, dtype=np.int32))
    with pytest.raises(Mismatch, match="differs"):
        prog.step("add", "v0 + 1", lambda V: V[0] + 2, lambda V: V[0] + 1)


def test_harness_catches_a_wrong_dtype(dev):
    prog = _prog(dev, np.arange(5, dtype=np.int8))
    with pytest.raises(Mismatch, match="pymetal int16"):
        prog.step("astype", "...", lambda V: pm.astype(V[0], pm.int16), lambda V: V[0].copy())


def test_harness_catches_a_missing_error_and_an_unclear_one(dev):
    prog = _prog(dev, np.arange(5, dtype=np.float32))
    with pytest.raises(Mismatch, match="NumPy raises"):
        prog.step("f", "...", lambda V: V[0], lambda V: np.reshape(V[0], (2, 2)))
    with pytest.raises(Mismatch, match="pymetal raised RuntimeError"):
        prog.step("f", "...", lambda V: (_ for _ in ()).throw(RuntimeError("x")), lambda V: V[0])
    prog.step("f", "...", lambda V: pm.reshape(V[0], (2, 2)), lambda V: np.reshape(V[0], (2, 2)))  # both raise


def test_harness_float_bounds_and_nan(dev):
    x = np.array([1.0, np.nan, np.inf, 0.0], dtype=np.float32)
    prog = _prog(dev, x)
    one_ulp = np.nextafter(x, np.float32(2))
    prog.step("f", "...", lambda V: pm.asarray(np.where(np.isfinite(x), one_ulp, x)), lambda V: x.copy())
    with pytest.raises(Mismatch, match="differs"):
        prog.step("f", "...", lambda V: pm.asarray(x * np.float32(1.001)), lambda V: x.copy())
    with pytest.raises(Mismatch, match="differs"):
        prog.step("f", "...", lambda V: pm.asarray(np.nan_to_num(x)), lambda V: x.copy())


def test_harness_catches_a_write_that_misses_a_view(dev):
    prog = _prog(dev, np.arange(6, dtype=np.int16))
    prog.step("getitem", "v0[::2]", lambda V: V[0][::2], lambda V: V[0][::2])

    def pm_write(V):  # writes a copy: the view v0 is not changed
        c = pm.asarray(V[1].numpy().copy())
        c[0] = 9
    with pytest.raises(Mismatch, match="v0 after the step differs"):
        prog.step("setitem", "v1[0] = 9", pm_write, lambda V: V[1].__setitem__(0, 9), mutates=1)
