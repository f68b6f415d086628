"""Elementwise add on pymetal arrays against NumPy, 1K..16M float32 elements.

Per size: pymetal's add_float32 (a trivial elementwise kernel) on pymetal
arrays, synchronised after every call (what `c = a + b` then reading c costs),
against NumPy's np.add(a, b, out=c) on arrays of the same size, interleaved in
rounds; the ratio is NumPy's median time over pymetal's (> 1: pymetal faster).
Targets (issue 7): >= 0.5x at 64K, >= 1.3x at 1M, crossover (the smallest size
at which pymetal is at least as fast) below 256K.
"""
import statistics
import time

import numpy as np
import pymetal as pm

SIZES = [1 << k for k in range(10, 25)]  # 1K .. 16M
ROUNDS = 9
TARGETS = {1 << 16: 0.5, 1 << 20: 1.3}
CROSSOVER_LIMIT = 1 << 18


def label(n):
    return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"


def timed(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(n, add):
    rng = np.random.default_rng(n)
    a_np, b_np = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    c_np = np.empty_like(a_np)
    a, b, c = pm.asarray(a_np), pm.asarray(b_np), pm.empty(n, np.float32)

    def ours():
        add(a, b, c, grid=n)
        pm.synchronize()

    def numpy():
        np.add(a_np, b_np, out=c_np)

    ours()
    numpy()
    if not np.array_equal(c.numpy(), c_np):
        raise SystemExit(f"add over {n} elements differs from NumPy")
    # About 15 ms per timed block, at least one call: the first call of a block finds the
    # caches holding the other side's arrays, and should not be most of the block.
    calls = max(1, int(15e-3 / max(timed(numpy, 3), 1e-7)))
    mine, theirs = [], []
    for _ in range(ROUNDS):
        mine.append(timed(ours, calls))
        theirs.append(timed(numpy, calls))
    return statistics.median(mine), statistics.median(theirs)


def main():
    add = pm.shaders().add_float32
    print(f"add_float32 on pymetal arrays (synchronised per call) vs np.add(a, b, out=c), "
          f"{ROUNDS} interleaved rounds, medians:")
    ratios = {}
    for n in SIZES:
        mine, theirs = measure(n, add)
        ratios[n] = theirs / mine
        target = TARGETS.get(n)
        note = ""
        if target is not None:
            note = f"  (target >= {target}x: {'ok' if ratios[n] >= target else 'OVER'})"
        print(f"  {label(n):>4s}: pymetal {mine * 1e6:9.1f} us   NumPy {theirs * 1e6:9.1f} us   "
              f"ratio {ratios[n]:5.2f}x{note}")
    # The crossover: the smallest size at which pymetal is at least as fast as NumPy.
    crossover = next((n for n in SIZES if ratios[n] >= 1), None)
    if crossover is None:
        print(f"crossover: none up to {label(SIZES[-1])} (target below {label(CROSSOVER_LIMIT)}: OVER)")
        return
    verdict = "ok" if crossover < CROSSOVER_LIMIT else "OVER"
    print(f"crossover: pymetal is at least as fast from {label(crossover)} elements "
          f"(target below {label(CROSSOVER_LIMIT)}: {verdict})")
    slower = [f"{label(n)} ({ratios[n]:.2f}x)" for n in SIZES if n > crossover and ratios[n] < 1]
    if slower:
        print("  larger sizes where NumPy is faster (memory-bound: 2 cores share the bandwidth): " + ", ".join(slower))


if __name__ == "__main__":
    main()
