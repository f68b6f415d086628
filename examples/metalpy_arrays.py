"""MetalPy's usage with pymetal's array library: every operation is a Metal kernel
on pymetal arrays (zero-copy with NumPy), checked against NumPy."""
import time

import numpy as np

import pymetal as pm


def main() -> str:
    a = pm.asarray([1.0, 2.0, 3.0, 4.0])
    b = pm.asarray([5.0, 6.0, 7.0, 8.0])
    c = a + b  # gpu.add(a, b)
    assert c.tolist() == [6.0, 8.0, 10.0, 12.0], c
    r = pm.nn.relu(pm.asarray([-2.0, -1.0, 0.0, 1.0, 2.0]))
    assert r.tolist() == [0.0, 0.0, 0.0, 1.0, 2.0], r
    assert float(pm.max(a)) == 4.0 and float(pm.sum(a)) == 10.0 and int(pm.argmax(b)) == 3

    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 20).astype(np.float32)
    g = pm.nn.gelu(pm.asarray(x), approximate="tanh")
    want = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x.astype(np.float64) ** 3)))
    assert np.allclose(g.numpy(), want, rtol=1e-5, atol=1e-6)

    n = 2000
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    gA, gB = pm.asarray(A), pm.asarray(B)
    start = time.perf_counter()
    C = gA @ gB  # gpu.matmul(A, B, M=2000, N=2000, K=2000)
    C.numpy()
    seconds = time.perf_counter() - start
    err = np.abs(C.numpy() - A @ B).max() / np.abs(A @ B).max()
    assert err < 1e-5, err
    return (f"metalpy_arrays: add, relu, max, sum, argmax, gelu ok; matmul {n}x{n} in {seconds * 1e3:.0f} ms "
            f"({2 * n ** 3 / seconds / 1e9:.1f} GFLOP/s), max relative error {err:.1e}")


if __name__ == "__main__":
    print(main())
