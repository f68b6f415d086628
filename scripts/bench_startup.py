"""Start-up cost: `import pymetal; pymetal.device()` against a bare interpreter.

Runs `python -c pass` and the pymetal command alternately in fresh processes
(interleaved, so machine noise hits both alike), and prints the medians and the
difference, which should be within 60 ms. A third row times `import pymetal`
alone. Usage: python scripts/bench_startup.py [rounds]
"""

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
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    env = dict(os.environ)
    # Run from the script's checkout unless an installed pymetal is meant.
    if "PYMETAL_BENCH_INSTALLED" not in env:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    for _, code in CASES:  # warm the page cache and the kernel cache
        run_once(code, env)
    times = {label: [] for label, _ in CASES}
    for _ in range(rounds):
        for label, code in CASES:
            times[label].append(run_once(code, env))
    base = statistics.median(times[CASES[0][0]])
    print("start-up, %d interleaved rounds, medians:" % rounds)
    for label, _ in CASES:
        med = statistics.median(times[label])
        print("  %-36s %7.1f ms  (+%.1f ms over bare python)" % (label, med, med - base))
    extra = statistics.median(times[CASES[-1][0]]) - base
    verdict = "within" if extra <= LIMIT_MS else "OVER"
    print("pymetal.device() costs %.1f ms over bare python: %s the %.0f ms limit" % (extra, verdict, LIMIT_MS))


if __name__ == "__main__":
    main()
