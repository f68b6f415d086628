"""Small-array latency against NumPy (issue 25, item 1), ratios in one run.

Figures (medians of interleaved rounds; ratio = NumPy time / pymetal time,
> 1 means pymetal is faster):
  1. one elementwise op (a + b) on 1,000 float32, then a host read  target >= 0.5x NumPy
  2. 100 asynchronous ops (x = x + b) on 1,000 float32, then one read  target >= 1x NumPy
  3. a trivial custom kernel (a[i] += b[i]) on 256 float32, call and wait
     (pm.synchronize())                                              target <= 5 us
  4. the scaling curve of add (a + b, read) and sum (float(pm.sum(a))) against
     NumPy, 1K..64M elements in steps of 4x (--quick: up to 4M; every power of two:
     scripts/bench_scaling.py); the crossover is the smallest
     size from which pymetal is at least as fast at every larger size measured
                                                                     target <= 16K
The "floor" line times the same figures 1 and 2 for the smallest possible Python
object over NumPy (class Floor): the bound for any pure-Python array library.
With PYMETAL_HOST_SMALL=0 every op runs its kernel (pymetal/arrays/small.py); the
"kernels" column measures that in the same rounds (the host path turned off per call).
--thread-time: the latency figures (1-3) in the calling thread's CPU time, which
a loaded machine disturbs far less than wall time (their work runs on the
calling thread: the host path, and small kernels, run by the thread that waits);
the scaling curve is always wall time (kernels on several cores).
--stages: where the time of figures 1 and 2 goes instead: each stage of `c = a + b`
and `np.asarray(c)` on 1,000 float32 timed alone (calling thread's CPU time, medians).
Usage: python scripts/bench_latency.py [--quick] [--thread-time] [--stages]
"""
import statistics
import sys
import time

import numpy as np

import pymetal as pm

try:
    from pymetal.arrays import small as _small
except ImportError:  # a pymetal without the host path (measuring "before")
    _small = None

TRIVIAL = """
#include <metal_stdlib>
using namespace metal;
kernel void inc(device float* a [[buffer(0)]], device const float* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    a[i] += b[i];
}
"""


CLOCK = time.perf_counter_ns


def per_call(fn, calls):
    clock = CLOCK
    t = clock()
    for _ in range(calls):
        fn()
    return (clock() - t) / calls / 1e9


def interleaved(fns, calls, rounds):
    """Median seconds per call of each fn, rounds interleaved."""
    for fn in fns:
        per_call(fn, max(1, calls // 10))  # warm
    times = [[] for _ in fns]
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            times[k].append(per_call(fn, calls))
    return [statistics.median(t) for t in times]


def on_kernels(fn):
    """fn with the host path for small arrays off (every op on its kernel)."""
    if _small is None:
        return fn

    def run():
        limit = _small.LIMIT
        _small.LIMIT = 0
        try:
            return fn()
        finally:
            _small.LIMIT = limit
    return run


class Floor:
    """The least any Python array object over NumPy can do per op: one object, one
    ufunc call, __array__ handing the ndarray back. pymetal is pure Python over
    ctypes (no compiled extension), so its host path can only approach this."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __add__(self, other):
        return Floor(np.add(self.a, other.a))

    def __array__(self, dtype=None, copy=None):
        return self.a


def fmt(t):
    return f"{t * 1e6:9.2f} us" if t < 1e-3 else f"{t * 1e3:9.2f} ms"


def latency(rounds):
    rng = np.random.default_rng(0)
    an, bn = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    a, b = pm.asarray(an.copy()), pm.asarray(bn.copy())  # copies: pymetal-owned memory, no NumPy owner
    a, b = a + 0.0, b + 0.0

    def one(x, y):
        """Figure 1: one op, then a host read (np.asarray of an ndarray is the array itself)."""
        return lambda: np.asarray(x + y)

    def hundred(x, y):
        """Figure 2: 100 ops in a row, then one host read."""
        def run():
            z = x
            for _ in range(100):
                z = z + y
            return np.asarray(z)
        return run

    np_one, pm_one, np_100, pm_100 = one(an, bn), one(a, b), hundred(an, bn), hundred(a, b)
    assert np.array_equal(pm_one(), np_one()) and np.array_equal(pm_100(), np_100())
    inc = pm.compile(TRIVIAL).inc
    x, y = pm.zeros(256, np.float32), pm.full(256, 1, np.float32)
    xn, yn = np.zeros(256, np.float32), np.ones(256, np.float32)

    def pm_kernel():
        inc(x, y, grid=256)
        pm.synchronize()

    def np_kernel():
        np.add(xn, yn, out=xn)

    floor_one, floor_100 = one(Floor(an), Floor(bn)), hundred(Floor(an), Floor(bn))

    t = interleaved([np_one, pm_one, on_kernels(pm_one), np_100, pm_100, on_kernels(pm_100), np_kernel, pm_kernel,
                     floor_one, floor_100], 400, rounds)
    clock = "thread time" if CLOCK is time.thread_time_ns else "wall time"
    print(f"latency ({clock}, {rounds} interleaved rounds, medians; ratio = NumPy / pymetal; kernels: host path off):")
    rows = [("1 op on 1,000 float32 + read", t[0], t[1], t[2], "ratio >= 0.5x", t[0] / t[1] >= 0.5),
            ("100 async ops on 1,000 float32 + read", t[3], t[4], t[5], "ratio >= 1x", t[3] / t[4] >= 1),
            ("custom kernel on 256, call + sync", t[6], t[7], t[7], "<= 5 us", t[7] <= 5e-6)]
    for name, n, p, k, target, ok in rows:
        print(f"  {name:40s} NumPy {fmt(n)}  pymetal {fmt(p)}  {n / p:6.2f}x  (kernels {fmt(k)} {n / k:5.2f}x)  "
              f"(target {target}: {'ok' if ok else 'OVER'})")
    print(f"  floor: the least a Python wrapper object over NumPy costs (Floor): 1 op + read {fmt(t[8])} "
          f"({t[0] / t[8]:.2f}x NumPy), 100 ops + read {fmt(t[9])} ({t[3] / t[9]:.2f}x NumPy)")
    return [row[-1] for row in rows]


def crossover(sizes, ratios):
    """The smallest size from which ratio (NumPy / pymetal) >= 1 at every larger size, or None."""
    cross = None
    for k in range(len(sizes) - 1, -1, -1):
        if ratios[k] < 1:
            break
        cross = sizes[k]
    return cross


def scaling(sizes, rounds):
    """The curve over `sizes` (wall time: kernels may run on several cores); whether each crossover is met."""
    rng = np.random.default_rng(1)
    print(f"scaling, float32 (wall time, {rounds} interleaved rounds, medians; ratio = NumPy / pymetal):")
    print(f"  {'n':>9}  {'add NumPy':>12} {'add pymetal':>12} {'ratio':>6} {'kernels':>8}   "
          f"{'sum NumPy':>12} {'sum pymetal':>12} {'ratio':>6}")
    ratios = {"add": [], "sum": []}
    for n in sizes:
        an, bn = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        a, b = pm.asarray(an) + 0.0, pm.asarray(bn) + 0.0  # pymetal-owned memory
        calls = max(3, min(2000, (1 << 22) // n))  # some ms per sample at every size
        add = lambda: np.asarray(a + b)  # noqa: E731
        t = interleaved([lambda: an + bn, add, on_kernels(add), lambda: float(an.sum()), lambda: float(pm.sum(a))],
                        calls, rounds)
        ratios["add"].append(t[0] / t[1])
        ratios["sum"].append(t[3] / t[4])
        print(f"  {n:>9}  {fmt(t[0]):>12} {fmt(t[1]):>12} {t[0] / t[1]:5.2f}x {t[0] / t[2]:7.2f}x   "
              f"{fmt(t[3]):>12} {fmt(t[4]):>12} {t[3] / t[4]:5.2f}x", flush=True)
        del a, b, an, bn
        pm.clear_cache()  # the next size does not keep this one's memory
    oks = []
    for name, r in ratios.items():
        cross = crossover(sizes, r)
        ok = cross is not None and cross <= 16384
        oks.append(ok)
        print(f"  crossover {name}: {cross if cross else 'none'} (target <= 16384: {'ok' if ok else 'OVER'})")
    return oks


def stages(rounds):
    """Each stage of figure 1's path timed alone (thread time): the op's layers
    (float64's operator check, the op's dispatch, the allocator, the host path's
    rule, views and NumPy call) and the read's (NumPy's protocol, the counted view)."""
    from pymetal.arrays import construct, elementwise
    from pymetal.arrays.array import Array
    from pymetal.runtime.user_array import user_array
    global CLOCK
    CLOCK = time.thread_time_ns
    an = np.random.default_rng(0).random(1000, dtype=np.float32)
    a = pm.asarray(an.copy()) + 0.0
    b, c, out = a + 0.0, a + 0.0, an.copy()
    dev, add = a._buf.device, np.add
    steps = [
        ("NumPy: an + bn", lambda: an + an),
        ("NumPy: np.add(an, bn, out) (what the host path runs)", lambda: add(an, an, out)),
        ("a + b (all of the op)", lambda: a + b),
        ("  Array.__add__ without float64's check", lambda: Array.__add__.__wrapped__(a, b)),
        ("  elementwise.binary('add', a, b)", lambda: elementwise.binary("add", a, b)),
        ("  construct._new: the result Array (and its release)", lambda: construct._new(a._shape, a._dtype, dev)),
        ("  small.binary: rule, views, errstate, NumPy", lambda: _small.binary(add, a, b, c)),
        ("np.asarray(c) (all of the read)", lambda: np.asarray(c)),
        ("  c.numpy()", lambda: c.numpy()),
        ("  runtime.user_array: the counted view", lambda: user_array(c._buf, 0, c._shape, c._dtype, c._strides)),
        ("Floor: np.asarray(Floor + Floor)", lambda: np.asarray(Floor(an) + Floor(an))),
    ]
    times = interleaved([fn for _, fn in steps], 2000, rounds)
    print(f"stages of figure 1 (thread time, {rounds} interleaved rounds, medians):")
    for (name, _), t in zip(steps, times):
        print(f"  {name:60s} {fmt(t)}")


def main():
    global CLOCK
    quick = "--quick" in sys.argv
    if "--stages" in sys.argv:
        stages(5 if quick else 9)
        return
    if "--thread-time" in sys.argv:
        CLOCK = time.thread_time_ns
    print(f"pymetal on {pm.device().name}, NumPy {np.__version__}")
    results = latency(5 if quick else 9)
    CLOCK = time.perf_counter_ns
    results += scaling([1 << k for k in range(10, (22 if quick else 26) + 1, 2)],
                                                   3 if quick else 5)
    print(f"{sum(results)} of {len(results)} targets met")


if __name__ == "__main__":
    main()
