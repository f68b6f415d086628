"""The array library against NumPy, measured in the same run (issue 8 targets).

Each line interleaves NumPy and pymetal repetitions and compares medians;
pymetal times include waiting for the result (np.asarray), except the
small-op line, which measures the host cost of an asynchronous op.
"""
import statistics
import sys
import time

import numpy as np

import pymetal as pm

REPEATS = 7


def median_pair(ref, cand, repeats=REPEATS):
    rt, ct = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        ref()
        rt.append(time.perf_counter() - t)
        t = time.perf_counter()
        cand()
        ct.append(time.perf_counter() - t)
    return statistics.median(rt), statistics.median(ct)


def line(what, ref, cand, target, repeats=REPEATS):
    cand()  # warm: kernels loaded, memory cached
    r, c = median_pair(ref, cand, repeats)
    ratio = r / c
    ok = "ok" if ratio >= target else "OVER"
    print(f"  {what:<34} NumPy {r * 1e3:8.2f} ms   pymetal {c * 1e3:8.2f} ms   {ratio:5.2f}x  (target >= {target}x: {ok})")
    return ratio >= target


def small_op():
    a = pm.ones(1000, np.float32)
    b = pm.ones(1000, np.float32)
    n = 20000
    for _ in range(2000):
        c = a + b
    pm.synchronize()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            c = a + b
        times.append((time.perf_counter() - t) / n)
        pm.synchronize()
    us = statistics.median(times) * 1e6
    an, bn = np.ones(1000, np.float32), np.ones(1000, np.float32)
    t = time.perf_counter()
    for _ in range(n):
        an + bn
    ref = (time.perf_counter() - t) / n * 1e6
    ok = "ok" if us <= 4 else "OVER"
    print(f"  {'a + b, 1000 float32, async':<34} host {us:6.2f} us per op (NumPy {ref:.2f} us)  (target <= 4 us: {ok})")
    return us <= 4


def main():
    dev = pm.device()
    print(f"pymetal array library on {dev.name}, against NumPy {np.__version__}:")
    rng = np.random.default_rng(0)
    results = [small_op()]
    n = 16 << 20
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    pa, pb = pm.asarray(a), pm.asarray(b)
    sync = lambda x: np.asarray(x)  # noqa: E731
    results.append(line("a + b, 16M float32", lambda: a + b, lambda: sync(pa + pb), 1.3))
    for name in ("exp", "sin", "tanh"):
        f, g = getattr(np, name), getattr(pm, name)
        results.append(line(f"{name}, 16M float32", lambda: f(a), lambda: sync(g(pa)), 2.0))
    gelu_np = lambda: 0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)))  # noqa: E731
    results.append(line("nn.gelu (tanh), 16M float32", gelu_np, lambda: sync(pm.nn.gelu(pa, approximate="tanh")), 2.0))
    results.append(line("sum, 16M float32", lambda: a.sum(), lambda: float(pm.sum(pa)), 1.0))
    m = a.reshape(4096, 4096)
    pmm = pa.reshape(4096, 4096)
    results.append(line("sum(axis=0), 4096x4096", lambda: m.sum(axis=0), lambda: sync(pm.sum(pmm, axis=0)), 1.0))
    results.append(line("sum(axis=1), 4096x4096", lambda: m.sum(axis=1), lambda: sync(pm.sum(pmm, axis=1)), 1.0))
    results.append(line("argmax, 16M float32", lambda: a.argmax(), lambda: int(pm.argmax(pa)), 1.0))
    k = 1024
    A = rng.random((k, k), dtype=np.float32)
    B = rng.random((k, k), dtype=np.float32)
    pA, pB = pm.asarray(A), pm.asarray(B)
    ok = line("matmul 1024^3 float32", lambda: A @ B, lambda: sync(pA @ pB), 0.25, repeats=5)
    _, c = median_pair(lambda: None, lambda: sync(pA @ pB), 3)
    print(f"  {'':<34} pymetal matmul: {2 * k ** 3 / c / 1e9:.1f} GFLOP/s")
    results.append(ok)
    x = rng.random(1 << 20, dtype=np.float32)
    px = pm.asarray(x)

    def chain(mod, v):
        for _ in range(10):
            v = v * 1.0001 + 0.5
        return v
    results.append(line("10-op chain, 1M float32", lambda: chain(np, x), lambda: sync(chain(pm, px)), 1.0))
    print(f"{sum(results)} of {len(results)} targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
