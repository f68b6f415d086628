"""Compile time of big kernel files (CPU backend): cold, warm, first kernel.

Cases: `big`, tests/python/big_msl.py's MLX-style scan file (one template
instantiated 384 times, as MLX's scan.metal), and `medium`, the MLX-style
project file tests/python/msl/msl_projects/mlxlike/kernels/binary.metal (36
instantiations over headers). Each measurement is a fresh process:
  cold: an empty cache (XDG_CACHE_HOME): pm.compile, then the first call of one
        kernel (which, for a lazily compiled library, compiles that kernel);
  warm: the same again with the cache the cold run left;
  other: then another kernel, which no process compiled before (a lazily
        compiled library compiles it alone; a whole one has it already).
With --before ROOT the same runs use the pymetal of another checkout (its
pymetal/ and .build, e.g. /work/main), interleaved with this one's.
Usage: python scripts/bench_compile.py [--rounds N] [--before ROOT] [--cases big,medium]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(HERE, "tests", "python")

PROBE = r"""
import os, sys, time
sys.path.insert(0, %(tests)r)
import numpy as np, pymetal as pm
assert os.path.dirname(pm.__file__) == os.path.join(os.getcwd(), "pymetal"), pm.__file__
case, other = sys.argv[1], sys.argv[2] == "other"
if case == "big":
    import big_msl
    start = time.perf_counter()
    lib = pm.compile(big_msl.source())
    compiled = time.perf_counter()
    got, want = big_msl.run(lib, *(("max", "char", False, True, 2) if other else ("sum", "float", True, False, 4)), n=100)
else:
    projects = os.path.join(%(tests)r, "msl", "msl_projects")
    with open(os.path.join(projects, "mlxlike", "kernels", "binary.metal")) as f:
        text = f.read()
    start = time.perf_counter()
    lib = pm.compile(text, include_dirs=[projects])
    compiled = time.perf_counter()
    a, b = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    got = np.zeros(100, np.float32)
    lib.function("vv_Maximumfloat32" if other else "vv_Addfloat32")(a, b, got, grid=100)
    want = np.maximum(a, b) if other else a + b
assert np.array_equal(got, want)
done = time.perf_counter()
print(compiled - start, done - compiled, len(lib.functions))
"""


def measure(root, case, cache, other=False):
    environment = dict(os.environ, XDG_CACHE_HOME=cache)
    out = subprocess.run([sys.executable, "-c", PROBE % {"tests": TESTS}, case, "other" if other else "first"],
                         cwd=root, env=environment,
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise SystemExit("%s failed in %s:\n%s" % (case, root, out.stderr))
    compile_s, first_s, kernels = out.stdout.split()
    return float(compile_s), float(first_s), int(kernels)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--before", help="another checkout to compare with (its pymetal/ and .build)")
    parser.add_argument("--cases", default="big,medium")
    args = parser.parse_args()
    roots = ([("before", os.path.abspath(args.before))] if args.before else []) + [("after", HERE)]
    results = {}
    for _ in range(args.rounds):
        for case in args.cases.split(","):
            for label, root in roots:  # interleaved: machine noise hits both alike
                cache = tempfile.mkdtemp(prefix="pymetal-bench-compile-")
                try:
                    cold = measure(root, case, cache)
                    warm = measure(root, case, cache)
                    other = measure(root, case, cache, other=True)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                results.setdefault((case, label), []).append((cold, warm, other))
    print("%-7s %-7s %8s %14s %14s %12s %14s %14s" % ("case", "build", "kernels", "cold compile", "cold 1st call",
                                                    "warm compile", "warm 1st call", "other kernel"))
    for (case, label), runs in results.items():
        def median(which, part):
            return statistics.median(run[which][part] for run in runs)
        print("%-7s %-7s %8d %13.2fs %13.2fs %11.3fs %13.3fs %13.2fs" % (
            case, label, runs[0][0][2], median(0, 0), median(0, 1), median(1, 0), median(1, 1), median(2, 1)))
    print("(medians of %d round(s); cold = empty cache, so it includes building the headers' precompiled header)"
          % args.rounds)


if __name__ == "__main__":
    main()
