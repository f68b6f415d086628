"""Square and cube a list of numbers (the Rust + PyO3 seed), with pymetal's
own shader library kernels and with the same kernels compiled from source."""
import numpy as np
import pymetal as pm

SOURCE = """
#include <metal_stdlib>
using namespace metal;

kernel void square_kernel(const device float *in [[buffer(0)]],
                          device float *out [[buffer(1)]],
                          uint id [[thread_position_in_grid]]) {
    out[id] = in[id] * in[id];
}

kernel void cube_kernel(const device float *in [[buffer(0)]],
                        device float *out [[buffer(1)]],
                        uint id [[thread_position_in_grid]]) {
    out[id] = in[id] * in[id] * in[id];
}
"""


def main() -> str:
    lib = pm.compile(SOURCE)
    data = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    squared = np.empty_like(data)
    cubed = np.empty_like(data)
    lib.square_kernel(data, squared, grid=len(data))
    lib.cube_kernel(data, cubed, grid=len(data))
    print(f"Squared Output: {squared.tolist()}")
    print(f"Cubed Output: {cubed.tolist()}")
    assert squared.tolist() == [1.0, 4.0, 9.0, 16.0] and cubed.tolist() == [1.0, 8.0, 27.0, 64.0]

    # The same ops from pymetal's shader library, on a million random floats.
    x = np.random.default_rng(0).standard_normal(1_000_003).astype(np.float32)
    shaders = pm.shaders()
    out = pm.empty(x.shape, np.float32)
    shaders.cube_float32(x, out, grid=x.size)
    assert np.allclose(out.numpy(), x * x * x, rtol=1e-6)
    return f"square/cube: ok ({len(shaders.functions)} kernels in pymetal's shader library)"


if __name__ == "__main__":
    print(main())
