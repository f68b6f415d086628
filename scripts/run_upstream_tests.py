"""Run upstream projects' own tests against pymetal and print pass/fail/skip counts per file.

Not part of ``make test``: these are other projects' suites, run to find pymetal bugs. The script
fetches nothing; give it the test files (an installed package's tests, or a checkout):

    # Dask's CuPy tests with pymetal as "cupy" (a scratch ``cupy`` module = pymetal, and Dask's
    # "cupy" array backend = the "pymetal" one):
    python scripts/run_upstream_tests.py dask-cupy .venv/.../dask/array/tests/test_cupy_core.py ...
    # Dask's NumPy tests with pymetal chunks: ``da.from_array`` of a NumPy array makes pymetal
    # chunks (dtypes pymetal has), the array backend is "pymetal", and assert_eq accepts a
    # pymetal result for a NumPy expectation (check_type=False; values, dtypes, shapes, chunks
    # and meta-against-result are still checked):
    python scripts/run_upstream_tests.py dask-numpy .venv/.../dask/array/tests/test_reductions.py
    # scikit-learn's array-API tests with the pymetal namespace in place of theirs (float64 and
    # float32 combinations; scikit-learn skips float64 ones, as pymetal's __array_namespace_info__
    # lists float32 as the device's widest float), SCIPY_ARRAY_API=1; only the tests
    # parametrized over namespaces run (the others are deselected):
    python scripts/run_upstream_tests.py sklearn .venv/.../sklearn/preprocessing/tests/test_data.py

Extra pytest arguments go after ``--`` (e.g. ``-- -k sum -x``). ``-v`` lists each failure with
the first line of its error. Each file runs in place (its package's conftest and fixtures apply)
in its own pytest process, with this checkout's pymetal first on the path and a scratch plugin
(``-p``) from a temporary directory; nothing is written next to the upstream files.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A ``cupy`` module that is pymetal: what Dask's CuPy tests need of CuPy's API, mapped to pymetal's.
CUPY_SHIM = '''
import numpy as _np
import pymetal as _pm
import pymetal.dask as _pmdask
from pymetal import *  # noqa: F401,F403
from pymetal import linalg, random  # noqa: F401
from dask.array.backends import array_creation_dispatch as _acd

__version__ = "13.0.0"
ndarray = _pm.Array
double = _pm.float64


def asnumpy(x):
    return x.numpy() if isinstance(x, _pm.Array) else _np.asarray(x)


# CuPy-only API the tests use, mapped (not a pymetal feature): ndarray.get() is asnumpy.
_pm.Array.get = lambda self: self.numpy().copy()


def __getattr__(name):
    return getattr(_pm, name)


# Dask's "cupy" array backend: the "pymetal" one.
_acd.register_backend("cupy", _pmdask.PymetalBackendEntrypoint())
'''

# dask-numpy: NumPy arrays given to da.from_array become pymetal arrays (when pymetal has the dtype).
DASK_NUMPY_CONFTEST = '''
import numpy as np
import pytest
import dask
import dask.array as da
import dask.array.utils as _utils
import pymetal as pm
import pymetal.dask  # noqa: F401

_from_array = da.from_array


# The tests compare with NumPy results: a pymetal result is the same values of another type.
# Everything else assert_eq checks stays (values, dtype, shape, chunks, meta against result).
# (Patched at plugin import, before the test modules take assert_eq from dask.array.utils.)
_assert_eq = _utils.assert_eq


def _assert_eq_any_type(*args, **kwargs):
    kwargs["check_type"] = False
    return _assert_eq(*args, **kwargs)


_utils.assert_eq = _assert_eq_any_type


def _pymetal_from_array(x, *args, **kwargs):
    if type(x) is np.ndarray and x.dtype.kind in "biuf" and x.dtype.itemsize <= 8:
        try:
            x = pm.asarray(x)
        except (TypeError, ValueError):
            pass
    return _from_array(x, *args, **kwargs)


# At plugin import too, so test modules' parametrize lists hold this function (tests compare
# their parameter with `da.from_array` by identity).
da.from_array = _pymetal_from_array


@pytest.fixture(autouse=True)
def _pymetal_chunks():
    with dask.config.set({"array.backend": "pymetal"}):
        yield
'''

# sklearn: the array-API namespace/device/dtype combinations become pymetal's two float dtypes.
SKLEARN_CONFTEST = '''
import pytest
import sklearn.utils._array_api as _aa

_COMBOS = [("pymetal", None, "float64"), ("pymetal", None, "float32")]


def _pymetal_combinations(*args, **kwargs):
    yield from _COMBOS


_aa.yield_namespace_device_dtype_combinations = _pymetal_combinations
_aa.yield_namespaces = lambda *a, **k: iter(["pymetal"])


def pytest_collection_modifyitems(config, items):
    # Only the tests parametrized over array namespaces: the rest are not about pymetal.
    # (This plugin is imported before the test modules, so their parametrize lists see the patch.)
    keep = [i for i in items if "pymetal" in i.name]
    config.hook.pytest_deselected(items=[i for i in items if "pymetal" not in i.name])
    items[:] = keep
'''


def _counts(xml_path):
    """(passed, failed, errors, skipped, xfailed, failures) from a JUnit XML report."""
    p = f = e = s = 0
    fails = []
    tree = ET.parse(xml_path)
    for case in tree.iter("testcase"):
        name = case.get("name")
        kinds = {c.tag: c for c in case}
        if "failure" in kinds:
            f += 1
            fails.append((name, (kinds["failure"].get("message") or "").splitlines()[:1]))
        elif "error" in kinds:
            e += 1
            fails.append((name, (kinds["error"].get("message") or "").splitlines()[:1]))
        elif "skipped" in kinds:
            s += 1
        else:
            p += 1
    return p, f, e, s, fails


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["dask-cupy", "dask-numpy", "sklearn"])
    ap.add_argument("files", nargs="+", type=Path, help="upstream test files")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the failures")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per file")
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    extra = argv[cut + 1:]  # pytest's own arguments

    env = dict(os.environ)
    if args.mode == "sklearn":
        env["SCIPY_ARRAY_API"] = "1"  # before SciPy is imported (sklearn checks it)
    total = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory(prefix="pymetal-upstream-") as tmp:
        tmpd = Path(tmp)
        if args.mode == "dask-cupy":
            (tmpd / "cupy").mkdir()
            (tmpd / "cupy" / "__init__.py").write_text(CUPY_SHIM)
        plugin = {"dask-numpy": DASK_NUMPY_CONFTEST, "sklearn": SKLEARN_CONFTEST}.get(args.mode, "")
        (tmpd / "_pymetal_upstream.py").write_text(plugin)
        # Our own (empty) config: no ini file of a parent directory (a venv inside a checkout
        # would bring the checkout's pytest options and put *its* pymetal first on the path).
        (tmpd / "pytest.ini").write_text("[pytest]\n")
        env["PYTHONPATH"] = os.pathsep.join([str(tmpd), str(ROOT), env.get("PYTHONPATH", "")])
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ next to the upstream files
        print(f"{'file':40s} {'pass':>6s} {'fail':>6s} {'error':>6s} {'skip':>6s}")
        for f in args.files:
            if not f.is_file():
                sys.exit(f"{f}: no such file (give upstream test files; this script fetches nothing)")
            xml = tmpd / (f.stem + ".xml")
            cmd = [sys.executable, "-m", "pytest", str(f.resolve()), "-q", "-p", "no:cacheprovider",
                   "-p", "_pymetal_upstream", "-c", str(tmpd / "pytest.ini"), "--rootdir", str(tmpd), f"--junitxml={xml}", "-o", "junit_family=xunit2", *extra]
            try:
                subprocess.run(cmd, cwd=tmpd, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{f.name:40s} timed out after {args.timeout:.0f}s")
                continue
            if not xml.exists():
                print(f"{f.name:40s} pytest wrote no report (collection crashed?)")
                continue
            p, fl, e, s, fails = _counts(xml)
            for i, v in enumerate((p, fl, e, s)):
                total[i] += v
            print(f"{f.name:40s} {p:6d} {fl:6d} {e:6d} {s:6d}", flush=True)
            if args.verbose:
                for name, msg in fails:
                    print(f"    FAIL {name}: {msg[0][:160] if msg else ''}")
        print(f"{'total':40s} {total[0]:6d} {total[1]:6d} {total[2]:6d} {total[3]:6d}")


if __name__ == "__main__":
    main()
