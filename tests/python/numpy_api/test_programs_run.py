"""The realistic NumPy programs of scripts/numpy_programs.py, run with NumPy and with
`import pymetal as np`, results compared (values within float32 tolerance, shapes, dtype
kinds; statistics of the random ones; clear errors where pymetal refuses)."""

import importlib.util
import os

import numpy as np
import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "numpy_programs.py")
_spec = importlib.util.spec_from_file_location("numpy_programs", _PATH)
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program(name):
    ok, message = programs.run(name)
    assert ok, message


def test_the_comparison_can_fail():
    # The oracle notices a wrong value, shape, dtype kind, Python type and a missing result.
    assert programs.compare({"a": np.arange(3.0)}, {"a": np.arange(3.0) + 1e-2}, None)
    assert programs.compare({"a": np.arange(3.0)}, {"a": np.arange(4.0)}, None)
    assert programs.compare({"a": np.arange(3)}, {"a": np.arange(3.0)}, None)
    assert programs.compare({"a": 3}, {"a": 3.0}, None)
    assert programs.compare({"a": "x"}, {}, None)
    assert programs.compare({"a": [1, 2]}, {"a": [1, 3]}, None)
    assert not programs.compare({"a": np.arange(3.0), "b": [1, "s"]}, {"a": np.arange(3, dtype=np.float32), "b": [1, "s"]}, None)
