"""The second set of realistic NumPy programs (scripts/numpy_programs2.py), run with NumPy and
with `import pymetal as np`, results compared as test_programs_run.py does."""

import importlib.util
import os
import sys

import pytest

_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts")
sys.path.insert(0, os.path.abspath(_DIR))
_spec = importlib.util.spec_from_file_location("numpy_programs2", os.path.join(_DIR, "numpy_programs2.py"))
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's overflow warnings (pymetal's kernels never warn)
@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program(name):
    ok, message = programs.run(name)
    assert ok, message
