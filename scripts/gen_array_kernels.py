#!/usr/bin/env python3
"""Writes Shaders/array_kernels.metal: the array library's precompiled kernel
instantiations, generated from the op table (pymetal/_ops.py). Run it after
changing the table; a test checks that the file is current."""
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, root)
from pymetal.arrays.optable import precompiled_source  # noqa: E402

path = os.path.join(root, "Shaders", "array_kernels.metal")
with open(path, "w") as f:
    f.write(precompiled_source())
print("gen_array_kernels: wrote", path)
