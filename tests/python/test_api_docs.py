"""The public API is documented and annotated, and its examples run.

Every public callable (what `import pymetal as pm` exports, pm.linalg, pm.fft,
pm.nn, pm.random, and the public methods and properties of pymetal's classes) must have a
docstring with an ``Examples`` section of ``>>>`` lines, and annotations on
every parameter and on its return. The examples run here as doctests, with
``pm`` and ``np`` already imported; their outputs are exact (no timings,
addresses or unseeded random numbers).
"""

import ast
import doctest
import inspect
import os
import re
import types

import numpy as np
import pytest

import pymetal as pm

SUBMODULES = ("linalg", "fft", "nn", "random")
CLASSES_WITHOUT_API = (np.dtype,)  # pm.float32 & co. are NumPy dtype objects
# Special methods that are API users call by their name or through syntax worth documenting.
DOCUMENTED_DUNDERS = ("__call__", "__getitem__", "__setitem__", "__array_namespace__", "__dlpack__",
                      "__dlpack_device__")


def _public_callables():
    """(qualified name, object) for every public function, class, method and property."""
    found = {}

    def add(name, obj):
        if isinstance(obj, CLASSES_WITHOUT_API) or isinstance(obj, types.ModuleType):
            return
        if not (callable(obj) or isinstance(obj, property)):
            return
        if not getattr(obj, "__module__", "pymetal").startswith("pymetal"):
            return  # NumPy's, re-exported (pm.linalg.LinAlgError)
        found.setdefault(name, obj)
        if inspect.isclass(obj) and obj.__module__.startswith("pymetal"):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in DOCUMENTED_DUNDERS:
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member) or isinstance(member, property):
                    found.setdefault("%s.%s" % (name, attr), member)

    for name in dir(pm):
        if not name.startswith("_"):
            add("pm." + name, getattr(pm, name))
    for mod in SUBMODULES:
        module = getattr(pm, mod)
        for name in module.__all__:
            add("pm.%s.%s" % (mod, name), getattr(module, name))
    return sorted(found.items())


PUBLIC = _public_callables()


def _problems(name, obj):
    doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""
    problems = []
    if not doc.strip():
        problems.append("no docstring")
    elif ">>> " not in doc:
        problems.append("no example (>>> lines)")
    func = obj.fget if isinstance(obj, property) else obj
    if inspect.isclass(func):
        if issubclass(func, BaseException):
            return problems  # exceptions take what Exception takes
        func = func.__init__ if "__init__" in vars(func) else None
        if func is None:
            return problems
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return problems + ["no signature"]
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.annotation is inspect.Parameter.empty:
            problems.append("parameter %r not annotated" % p.name)
    if func.__name__ != "__init__" and sig.return_annotation is inspect.Signature.empty:
        problems.append("no return annotation")
    return problems


def test_public_api_is_large():
    # The walk finds the namespace (a broken walk would check nothing).
    names = {n for n, _ in PUBLIC}
    assert len(PUBLIC) > 250
    for n in ("pm.exp", "pm.add", "pm.asarray", "pm.Array.reshape", "pm.Array.shape", "pm.linalg.inv",
              "pm.fft.rfft", "pm.nn.softmax", "pm.Library.function", "pm.Function.arguments", "pm.device", "pm.Device.synchronize", "pm.CompileError"):
        assert n in names, n


def test_every_public_callable_is_documented_and_annotated():
    bad = ["%s: %s" % (name, ", ".join(p)) for name, obj in PUBLIC for p in [_problems(name, obj)] if p]
    assert not bad, "%d of %d public callables:\n  %s" % (len(bad), len(PUBLIC), "\n  ".join(bad))


def _api_reference():
    """What docs/api.md documents: {"module.name"} of its ::: blocks and their members lists,
    and the modules it documents whole (a ::: module block without a members list)."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "api.md")
    with open(path) as f:
        lines = f.read().split("\n")
    names, whole = set(), set()
    target, listed = None, False
    for line in lines + ["::: end"]:
        if line.startswith("::: "):
            if target and not listed:
                whole.add(target)
            names.add(line[4:].strip())
            target, listed = line[4:].strip(), False
        elif line.strip() == "members:":
            listed = True
        elif listed and line.strip().startswith("- "):
            names.add("%s.%s" % (target, line.strip()[2:]))
    return names, whole


def test_api_reference_covers_the_public_api():
    names, whole = _api_reference()
    missing = []
    for name, obj in PUBLIC:
        target = obj.fget if isinstance(obj, property) else obj
        qual = "%s.%s" % (target.__module__, target.__qualname__)
        cls = qual.rsplit(".", 1)[0] if "." in target.__qualname__ else None  # a method's class
        if qual in names or (cls and cls in names) or target.__module__ in whole:
            continue
        if name == "pm.concatenate":  # the same function as pm.concat
            continue
        missing.append("%s (%s)" % (name, qual))
    assert not missing, "docs/api.md does not document:\n  " + "\n  ".join(missing)


def test_generated_functions_are_declared_for_type_checkers():
    # The elementwise functions are made from _ops's table at import; type checkers see
    # them through annotations in arrays/elementwise.py and an import in _namespace.py.
    from pymetal.arrays import elementwise as _elementwise
    from pymetal import _namespace

    public = {n for n in _elementwise.FUNCTIONS  # (seen through the float64 policy's wrapper, _float64.py)
              if getattr(getattr(pm, n, None), "_float64_wrapped", None) is _elementwise.FUNCTIONS[n]}
    assert len(public) > 60
    assert public <= set(_elementwise.__annotations__) | {"maximum", "minimum"}  # those two are assigned by name
    with open(_namespace.__file__) as f:
        tree = ast.parse(f.read())
    declared = {alias.name for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
                for imp in node.body if isinstance(imp, ast.ImportFrom) for alias in imp.names}
    assert public <= declared | {"conj", "real", "imag"}  # those three come from arrays/namespace_extras.py


def _doctests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen, tests = set(), []
    for name, obj in PUBLIC:
        target = obj.fget if isinstance(obj, property) else obj
        for t in finder.find(target, name, globs={}):
            if t.examples and (t.filename, t.lineno, t.docstring) not in seen:
                seen.add((t.filename, t.lineno, t.docstring))
                tests.append(t)
    # Module docstrings too (the package's own example among them).
    for module in [pm] + [getattr(pm, m) for m in SUBMODULES]:
        for t in finder.find(module, module.__name__, globs={}):
            if t.examples and t.docstring and (t.filename, t.lineno, t.docstring) not in seen:
                seen.add((t.filename, t.lineno, t.docstring))
                tests.append(t)
    return tests


DOCTESTS = _doctests()


def test_examples_are_collected():
    assert len(DOCTESTS) > 200


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_example(test):
    test.globs = {"pm": pm, "np": np}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    environ = dict(os.environ)
    try:
        runner.run(test, out=out.append)
    finally:  # an example that sets a variable (a cache folder of its own) leaves nothing behind
        os.environ.clear()
        os.environ.update(environ)
    assert runner.failures == 0, "".join(out)


def _guide_blocks():
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs")
    pages = sorted(f for f in os.listdir(docs) if f.endswith(".md"))
    out = []
    for page in pages:
        with open(os.path.join(docs, page)) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        if blocks:
            out.append((page, blocks))
    return out


@pytest.mark.parametrize("page, blocks", _guide_blocks(), ids=[p for p, _ in _guide_blocks()])
def test_user_guide_code_runs(page, blocks, capsys):
    # The guide's Python blocks run in order, one namespace per page.
    namespace = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)
    printed = capsys.readouterr().out
    # Where a print line says what it prints (`print(x)  # -> [3. 3. 3.]`), it is checked.
    expected = [m for b in blocks for m in re.findall(r"^print\(.*\)\s+# -> (.*)$", b, re.M)]
    for e in expected:
        assert e.strip() in printed, (page, e, printed)
