"""`import pymetal; pymetal.device()` stays light: NumPy and the array API load on first use.
(The time itself is measured by scripts/bench_startup.py, not here.)"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(code):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_device_does_not_import_numpy(dev):
    out = run("import sys, pymetal as pm; d = pm.device(); print(d.backend, 'numpy' in sys.modules)")
    assert out.split() == [dev.backend, "False"]


def test_first_use_loads_the_array_api():
    out = run("import sys, pymetal as pm; x = pm.arange(5) * 2; print('numpy' in sys.modules, x.tolist(), pm.nn.relu.__name__)")
    assert out.split() == ["True", "[0,", "2,", "4,", "6,", "8]", "relu"]


@pytest.mark.parametrize("module", sorted(
    "pymetal." + f[:-3] for f in os.listdir(os.path.join(ROOT, "pymetal")) if f.endswith(".py") and f != "__init__.py"))
def test_each_module_imports_first(module):
    # Any submodule may be the first one imported (no import cycle relies on
    # __init__'s order), and pm.array stays the function afterwards.
    out = run("import %s, pymetal as pm; print(type(pm.array).__name__, pm.array([1, 2]).tolist())" % module)
    assert out.split() == ["function", "[1,", "2]"]


def test_star_import_and_dir():
    out = run("from pymetal import *; import pymetal; print(float32.__name__, callable(sum), 'matmul' in dir(pymetal))")
    assert out.split() == ["float32", "True", "True"]


def test_unknown_name_is_an_attribute_error():
    out = run("import pymetal\ntry:\n    pymetal.no_such_thing\nexcept AttributeError as e:\n    print('ok', e)")
    assert out.startswith("ok") and "no_such_thing" in out
