"""log of every element, checked against NumPy (the PyObjC seed's log.metal)."""
import numpy as np
import pymetal as pm

SOURCE = """
#include <metal_stdlib>
using namespace metal;

kernel void log_kernel(device float *in  [[ buffer(0) ]],
                       device float *out [[ buffer(1) ]],
                       uint id [[ thread_position_in_grid ]]) {
    out[id] = log(in[id]);  /* log each element *not in-place */
}
"""


def main() -> str:
    log = pm.compile(SOURCE).log_kernel
    input_array = np.random.default_rng(2).random(100_000).astype(np.float32) + 1e-3
    output_array = np.empty_like(input_array)
    log(input_array, output_array, grid=input_array.size)
    error = np.abs(output_array - np.log(input_array)).max()
    assert error < 1e-5, "Output does not match reference!"
    return f"log: ok (max error {error:.1e})"


if __name__ == "__main__":
    print(main())
