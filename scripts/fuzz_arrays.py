"""Long differential fuzz of the array library against NumPy (`make fuzz-arrays`).

Runs tests/python/differential.py's random programs with fresh random seeds
until the time budget is spent (FUZZ_MINUTES, default 30, or --minutes). Each
failure is shrunk by Hypothesis to a minimal program and printed once, as a
runnable reproduction with pymetal's and NumPy's results; programs that meet
an already reported failure (same operation and kind of mismatch) are passed
over, so that one bug does not hide the others. Exits 1 if anything failed.

    python scripts/fuzz_arrays.py --minutes 20 [--seed N] [--out findings.txt] [--skip np.sum,dtype/shape]
"""

import argparse
import os
import random
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "python")]

from hypothesis import HealthCheck, given, seed, settings, strategies as st  # noqa: E402

from differential import Mismatch, run_program  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=float(os.environ.get("FUZZ_MINUTES", "30")))
    ap.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    ap.add_argument("--examples", type=int, default=100, help="programs per seed")
    ap.add_argument("--out", default=None, help="also append each finding to this file")
    ap.add_argument("--skip", action="append", default=[], metavar="SIGNATURE",
                    help="a failure already known, as its signature's words with commas "
                         "(np.sum,dtype/shape or setitem,no-raise,OverflowError); may repeat")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    end = time.monotonic() + args.minutes * 60
    rng = random.Random(args.seed)
    known = {tuple(s.split(",")) for s in args.skip}
    findings = 0
    runs = 0
    while time.monotonic() < end:
        s = rng.getrandbits(32)
        runs += 1

        @seed(s)
        @settings(max_examples=args.examples, deadline=None, database=None, print_blob=False,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
        @given(st.data())
        def check(data):
            # (no time check in here: a program that stops drawing early on a
            # replay makes Hypothesis report a flaky test; seeds are short)
            run_program(data, known=known)

        try:
            check()
        except Mismatch as e:
            known.add(e.sig)
            findings += 1
            report = "==== finding %d (seed %d)\n%s\n" % (findings, s, e.args[0])
        except Exception as e:  # noqa: BLE001 - the harness itself: report, go on
            findings += 1
            report = "==== finding %d (seed %d): %s: %s\n" % (findings, s, type(e).__name__, e)
        else:
            continue
        print(report, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(report + "\n")
    print("fuzz-arrays: %d seeds x up to %d programs, %d distinct failures" % (runs, args.examples, findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
