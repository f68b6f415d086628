"""pymetal.linalg against numpy.linalg, measured in the same run (issue 12).

Each line interleaves NumPy and pymetal repetitions (bench_array.median_pair) and
prints the medians and NumPy's time over pymetal's (> 1: pymetal is faster).
pymetal times include waiting for the result. Kernel lines run pymetal's Metal
kernels; host lines run NumPy's LAPACK on the shared memory, so their ratio is
the cost of pymetal's wrapping (about 1x is the expectation there).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_array import median_pair  # noqa: E402

import pymetal as pm  # noqa: E402

L = pm.linalg


def sync(x):
    for a in (x if isinstance(x, tuple) else (x,)):
        a.numpy()


def line(what, ref, cand, repeats=7):
    cand()  # warm: kernels loaded, memory cached
    r, c = median_pair(ref, cand, repeats)
    print(f"  {what:<40} NumPy {r * 1e3:8.2f} ms   pymetal {c * 1e3:8.2f} ms   {r / c:5.2f}x")


def main():
    rng = np.random.default_rng(0)
    print(f"pymetal.linalg on {pm.device().name}: NumPy time / pymetal time (medians)")
    print(" kernels:")
    v = rng.standard_normal(1 << 22).astype(np.float32)
    pv = pm.asarray(v)
    line("vector_norm, 4M float32", lambda: np.linalg.vector_norm(v), lambda: sync(L.vector_norm(pv)))
    line("vector_norm ord=1, 4M float32", lambda: np.linalg.vector_norm(v, ord=1),
         lambda: sync(L.vector_norm(pv, ord=1)))
    m = v.reshape(2048, 2048)
    pmat = pv.reshape(2048, 2048)
    line("vector_norm axis=1, 2048x2048", lambda: np.linalg.vector_norm(m, axis=1),
         lambda: sync(L.vector_norm(pmat, axis=1)))
    line("matrix_norm fro, 2048x2048", lambda: np.linalg.matrix_norm(m), lambda: sync(L.matrix_norm(pmat)))
    line("matrix_norm inf, 2048x2048", lambda: np.linalg.matrix_norm(m, ord=np.inf),
         lambda: sync(L.matrix_norm(pmat, ord=np.inf)))
    b = v.reshape(64, 256, 256)
    pb = pv.reshape(64, 256, 256)
    line("trace, 64 x 256x256", lambda: np.trace(b, axis1=-2, axis2=-1), lambda: sync(L.trace(pb)))
    c1, c2 = v[: 3 << 18].reshape(-1, 3), v[3 << 18: 6 << 18].reshape(-1, 3)
    p1, p2 = pm.asarray(c1), pm.asarray(c2)
    line("cross, 256K x 3", lambda: np.cross(c1, c2), lambda: sync(L.cross(p1, p2)))
    line("vecdot, 2048x2048 rows", lambda: np.linalg.vecdot(m, m), lambda: sync(L.vecdot(pmat, pmat)))
    s = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    ps = pm.asarray(s)
    line("matrix_power n=8, 256x256", lambda: np.linalg.matrix_power(s, 8), lambda: sync(L.matrix_power(ps, 8)))
    print(" host (NumPy's LAPACK on the shared memory):")
    h = (rng.standard_normal((64, 64, 64)) / 8 + np.eye(64)).astype(np.float32)  # det within float32
    ph = pm.asarray(h)
    for name in ("det", "inv", "svdvals", "eigvalsh"):
        line(f"{name}, 64 x 64x64", lambda f=getattr(np.linalg, name): f(h), lambda f=getattr(L, name): sync(f(ph)))
    line("svd, 512x256", lambda: np.linalg.svd(m[:512, :256], full_matrices=False),
         lambda: sync(L.svd(pmat[:512, :256], full_matrices=False)), repeats=5)
    line("solve, 64 x 64x64 by 64x8", lambda: np.linalg.solve(h, h[..., :8]),
         lambda: sync(L.solve(ph, ph[..., :8])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
