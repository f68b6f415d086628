"""Start-up cost: `import pymetal; pymetal.device()` against a bare interpreter.

Runs `python -c pass` and the pymetal command alternately in fresh processes
(interleaved, so machine noise hits both alike), and prints the medians and the
difference, which should be within 60 ms. A third row times `import pymetal`
alone. With --baseline LIB, a fourth row runs the device command on another
libPyMetal (PYMETAL_LIBRARY=LIB, e.g. a copy of an earlier build), interleaved
too, for a before/after figure from one run.
Usage: python scripts/bench_startup.py [rounds] [--baseline LIB]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = [
    ("python -c pass", "pass"),
    ("import pymetal", "import pymetal"),
    ("import pymetal; pymetal.device()", "import pymetal; pymetal.device()"),
]
LIMIT_MS = 60.0


def run_once(code, env):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return (time.perf_counter() - start) * 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=21)
    parser.add_argument("--baseline", metavar="LIB", help="another libPyMetal to time pymetal.device() on")
    args = parser.parse_args()
    env = dict(os.environ)
    # Run from the script's checkout unless an installed pymetal is meant.
    if "PYMETAL_BENCH_INSTALLED" not in env:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cases = [(label, code, env) for label, code in CASES]
    if args.baseline:
        if not os.path.isfile(args.baseline):
            parser.error("--baseline %s: no such file" % args.baseline)
        cases.append(("same, baseline library", CASES[-1][1], dict(env, PYMETAL_LIBRARY=os.path.abspath(args.baseline))))
    for _, code, case_env in cases:  # warm the page cache and the kernel cache
        run_once(code, case_env)
    times = {label: [] for label, _, _ in cases}
    for _ in range(args.rounds):
        for label, code, case_env in cases:
            times[label].append(run_once(code, case_env))
    base = statistics.median(times[CASES[0][0]])
    print("start-up, %d interleaved rounds, medians:" % args.rounds)
    for label, _, _ in cases:
        med = statistics.median(times[label])
        print("  %-36s %7.1f ms  (+%.1f ms over bare python)" % (label, med, med - base))
    if args.baseline:
        print("baseline: %s" % args.baseline)
    extra = statistics.median(times[CASES[-1][0]]) - base
    verdict = "within" if extra <= LIMIT_MS else "OVER"
    print("pymetal.device() costs %.1f ms over bare python: %s the %.0f ms limit" % (extra, verdict, LIMIT_MS))


if __name__ == "__main__":
    main()
