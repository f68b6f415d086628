"""The package's layers (docs/architecture.md): runtime/ imports nothing of the array library,
custom kernels work without it, and the module-level imports of pymetal/ have no cycle."""

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "pymetal")


def _modules():
    mods = {}
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                mods[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return mods


def _imports(mods, name, path, top_only):
    """The pymetal modules `name` imports (at module level only, or anywhere)."""
    tree = ast.parse(open(path).read())
    base = name.split(".") if path.endswith("__init__.py") else name.split(".")[:-1]
    nodes = tree.body if top_only else list(ast.walk(tree))
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            pkg = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            targets = [pkg + "." + a.name if pkg + "." + a.name in mods else pkg for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in mods and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in mods:
                out.add(t)
    return out


def test_runtime_imports_nothing_of_the_array_library():
    mods = _modules()
    for name, path in mods.items():
        if name.startswith("pymetal.runtime"):
            bad = {t for t in _imports(mods, name, path, top_only=False) if t.startswith("pymetal.arrays")}
            assert not bad, "%s imports %s: runtime/ must not (use runtime/bindable.py)" % (name, sorted(bad))


def test_module_level_imports_have_no_cycle():
    mods = _modules()
    edges = {n: _imports(mods, n, p, top_only=True) for n, p in mods.items()}
    state = {}

    def visit(n, stack):
        state[n] = 1
        for m in edges[n]:
            if state.get(m) == 1:
                raise AssertionError("import cycle: %s" % " -> ".join(stack[stack.index(m):] + [m]))
            if m not in state:
                visit(m, stack + [m])
        state[n] = 2

    for n in sorted(mods):
        if n not in state:
            visit(n, [n])


def test_custom_kernels_run_without_the_array_library():
    code = """
import sys, numpy as np
from pymetal.runtime.library import compile
lib = compile('kernel void inc(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] += 1; }')
x = np.arange(4, dtype=np.float32)
lib.inc(x, grid=4)
assert x.tolist() == [1.0, 2.0, 3.0, 4.0], x
assert not [m for m in sys.modules if m.startswith('pymetal.arrays')], 'the array library was loaded'
print('ok')
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
