"""metalcompute's helloABC (C = A * B) and its bandwidth run: the same kernel
over arrays sized to the machine, repeated back to back, reported in GB/s."""
import os
import time

import numpy as np
import pymetal as pm

SOURCE = """
#include <metal_stdlib>
using namespace metal;
kernel void helloABC(const device float *A [[buffer(0)]],
                     const device float *B [[buffer(1)]],
                     device float *C [[buffer(2)]],
                     uint id [[thread_position_in_grid]]) {
    C[id] = A[id] * B[id];
}
"""


def main(repeats: int = 10) -> str:
    hello = pm.compile(SOURCE).helloABC
    count = 10
    A = np.arange(10, dtype=np.float32)
    B = np.arange(10, 20, dtype=np.float32)
    C = pm.empty(count, np.float32)
    hello(A, B, C, grid=count)
    print(f"helloABC: C[1] = {C.numpy()[1]} (1.0 * 11.0)")
    assert C.numpy()[1] == 11.0

    # Bandwidth: 3 float32 streams of 64 MiB each (far beyond any cache), or a
    # quarter of memory on a small machine; big enough to measure, quick to run.
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    count = int(min(16 << 20, memory // 4 // 12))
    A = pm.full(count, 1.5, np.float32)
    B = pm.full(count, 2.0, np.float32)
    C = pm.empty(count, np.float32)
    hello(A, B, C, grid=count)            # warm up
    pm.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        hello(A, B, C, grid=count)        # pymetal arrays: encoded back to back
    pm.synchronize()
    seconds = time.perf_counter() - start
    assert np.all(C.numpy() == 3.0)
    gbps = 3 * 4 * count * repeats / seconds / 1e9
    start = time.perf_counter()
    for _ in range(repeats):
        np.multiply(A.numpy(), B.numpy(), out=C.numpy())
    numpy_gbps = 3 * 4 * count * repeats / (time.perf_counter() - start) / 1e9
    return f"helloABC bandwidth: {gbps:.1f} GB/s over {count:,} floats x{repeats} (NumPy multiply: {numpy_gbps:.1f} GB/s)"


if __name__ == "__main__":
    print(main())
