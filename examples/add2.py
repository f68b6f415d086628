"""Add 2 in place to uint8 values (the PyObjC seed's add2.metal)."""
import numpy as np
import pymetal as pm

SOURCE = """
#include <metal_stdlib>
using namespace metal;

kernel void add2_kernel(device uint8_t *in [[ buffer(0) ]],
                        uint id [[ thread_position_in_grid ]]) {
    in[id] = in[id] + 2;    /* add 2 in-place */
}
"""


def main() -> str:
    add2 = pm.compile(SOURCE).function("add2_kernel")
    values = np.random.default_rng(1).integers(0, 254, size=1024, dtype=np.uint8)
    expected = values + 2
    add2(values, grid=values.size, threadgroup=32)   # 32 threads per group, 1024 per grid
    assert np.array_equal(values, expected), "Output does not match reference!"
    # Zero-copy: a pymetal array is the kernel's buffer and NumPy's memory at once.
    shared = pm.asarray(values)
    add2(shared, grid=values.size)
    assert np.array_equal(shared.numpy(), expected + 2)
    return "add2 (uint8, in place): ok"


if __name__ == "__main__":
    print(main())
