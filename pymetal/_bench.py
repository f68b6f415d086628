"""`pymetal bench`: pymetal arrays against NumPy, per operation and size.

Each measurement alternates the two (so machine noise hits both alike) and
takes medians; pymetal's time includes waiting for the result. Prints the
ratio NumPy time / pymetal time (above 1: pymetal is faster) and, with a
folder, writes one PNG per operation (matplotlib, the `plots` extra).
"""

import os
import statistics
import time

import numpy as np

import pymetal as pm

SIZES = [1 << 12, 1 << 16, 1 << 20, 1 << 22, 1 << 24]
QUICK_SIZES = [1 << 10, 1 << 14, 1 << 18]


def _operations():
    """name -> (pymetal function, NumPy function, inputs from n); matmul takes n as its element count."""
    def square(n):
        side = max(1, int(round(n ** 0.5)))
        return side, side
    return {
        "add": (lambda a, b: a + b, np.add, lambda n: (n,)),
        "exp": (lambda a, b: pm.exp(a), lambda a, b: np.exp(a), lambda n: (n,)),
        "sum": (lambda a, b: pm.sum(a), lambda a, b: np.sum(a), lambda n: (n,)),
        "matmul": (lambda a, b: a @ b, np.matmul, square),
    }


def _median_pair(f_pm, f_np, repeats):
    t_pm, t_np = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        r = f_pm()
        pm.synchronize()
        t_pm.append(time.perf_counter() - start)
        del r
        start = time.perf_counter()
        f_np()
        t_np.append(time.perf_counter() - start)
    return statistics.median(t_pm), statistics.median(t_np)


def run(quick=False):
    """Measures every operation at every size; prints a table; returns {op: [(n, pm s, numpy s)]}."""
    sizes = QUICK_SIZES if quick else SIZES
    rng = np.random.default_rng(0)
    dev = pm.device()
    print("pymetal bench on %s (%s backend): median seconds, ratio = NumPy / pymetal" % (dev.name, dev.backend))
    print("%-8s %12s %12s %12s %8s" % ("op", "elements", "pymetal", "numpy", "ratio"))
    results: dict = {}
    for name, (f_pm, f_np, shape_of) in _operations().items():
        for n in sizes:
            if name == "matmul" and n > (1 << 20):
                continue  # 1024 x 1024 is enough to see the trend; larger ones take minutes on a CPU
            shape = shape_of(n)
            a = rng.standard_normal(shape).astype(np.float32)
            b = rng.standard_normal(shape).astype(np.float32)
            xa, xb = pm.asarray(a), pm.asarray(b)
            f_pm(xa, xb)  # compile / warm up
            pm.synchronize()
            repeats = 3 if quick else max(3, min(50, int(2e7 // n)))
            t_pm, t_np = _median_pair(lambda: f_pm(xa, xb), lambda: f_np(a, b), repeats)
            results.setdefault(name, []).append((n, t_pm, t_np))
            print("%-8s %12d %12.6f %12.6f %8.2f" % (name, n, t_pm, t_np, t_np / t_pm), flush=True)
    return results


def plot(results, folder):
    """One PNG per operation: time against size, pymetal and NumPy, log-log."""
    try:
        import matplotlib
    except ImportError:
        print("pymetal bench: plots need matplotlib (pip install 'pymetal-msl[plots]'); none written")
        return []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(folder, exist_ok=True)
    written = []
    for name, rows in results.items():
        n, t_pm, t_np = zip(*rows)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.loglog(n, t_pm, "o-", label="pymetal (%s)" % pm.device().backend)
        ax.loglog(n, t_np, "s--", label="NumPy")
        ax.set_xlabel("elements")
        ax.set_ylabel("seconds per call (median)")
        ax.set_title("%s: pymetal vs NumPy" % name)
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        path = os.path.join(folder, "bench_%s.png" % name)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
        print("wrote %s" % path)
    return written
