"""metalcompute's compute-throughput kernel: an unrolled block of 8 flops
repeated 400 times per thread, reported in GFLOP/s."""
import time

import numpy as np
import pymetal as pm

BLOCK = """
    D += Ai * G;
    E += Bi * F;
    F += Ai * E;
    G += Bi * D;
"""
SOURCE = """
#include <metal_stdlib>
using namespace metal;
kernel void helloABC(const device float *A [[buffer(0)]],
                     const device float *B [[buffer(1)]],
                     device float *C [[buffer(2)]],
                     uint id [[thread_position_in_grid]]) {
    float Ai = A[id];
    float Bi = B[id];
    float D = Ai;
    float E = Bi;
    float F = Ai+Bi;
    float G = Ai-Bi;
""" + BLOCK * 400 + """
    C[id] = D + E + F + G;
}
"""
FLOPS_PER_THREAD = 400 * 8 + 6


def reference(A: np.ndarray, B: np.ndarray, blocks: int = 400) -> np.ndarray:
    D, E, F, G = A.copy(), B.copy(), A + B, A - B
    for _ in range(blocks):
        D += A * G
        E += B * F
        F += A * E
        G += B * D
    return D + E + F + G


def main(count: int = 1 << 20, repeats: int = 5) -> str:
    kernel = pm.compile(SOURCE).helloABC
    rng = np.random.default_rng(3)
    A = pm.asarray(rng.uniform(-0.01, 0.01, count).astype(np.float32))
    B = pm.asarray(rng.uniform(-0.01, 0.01, count).astype(np.float32))
    C = pm.empty(count, np.float32)
    kernel(A, B, C, grid=count)
    pm.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        kernel(A, B, C, grid=count)
    pm.synchronize()
    seconds = time.perf_counter() - start
    check = reference(A.numpy()[:4096], B.numpy()[:4096])
    assert np.allclose(C.numpy()[:4096], check, rtol=1e-3, atol=1e-5)
    return f"compute throughput: {FLOPS_PER_THREAD * count * repeats / seconds / 1e9:.1f} GFLOP/s over {count:,} threads"


if __name__ == "__main__":
    print(main())
