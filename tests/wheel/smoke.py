"""Run by tests/wheel/run.sh with an installed wheel's Python, outside the checkout,
without the Swift toolchain on PATH. Checks that everything the package needs is in it."""

import os
import sys
import tempfile

import numpy as np

import pymetal as pm

site = os.path.dirname(os.path.abspath(pm.__file__))
assert "site-packages" in site, "pymetal imported from %s, not from the installed wheel" % site
lib = pm.library_path()
assert lib == os.path.join(site, "lib", os.path.basename(lib)), "libPyMetal loaded from " + lib

dev = pm.device()
print("device:", dev.name, dev.backend)

# No Swift runtime library is loaded from anywhere: it is linked into libPyMetal.
with open("/proc/self/maps") as f:
    mapped = {line.split()[-1] for line in f if line.rstrip().endswith(".so") or ".so." in line}
swift = sorted(p for p in mapped if "swift" in p.lower() or "Foundation" in p or "dispatch" in os.path.basename(p))
assert not swift, "Swift runtime libraries loaded: %s" % swift
assert lib in mapped
print("libPyMetal: %s, no Swift runtime libraries loaded" % lib)

# No ICU data inside (Foundation's, ~30 MB, named icudt<version>): libPyMetal uses
# FoundationEssentials, which needs none; the wheel was 3.3 times bigger with it.
with open(lib, "rb") as f:
    assert b"icudt" not in f.read(), "libPyMetal carries ICU data: Foundation is linked in again"
print("libPyMetal: no ICU data")

# The precompiled shader library (no clang needed): float32 arrays.
rng = np.random.default_rng(0)
for n in (0, 1, 1000, 100_003):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_allclose((pm.asarray(x) * 2 + pm.asarray(y)).numpy(), x * 2 + y, rtol=1e-6)
    np.testing.assert_allclose(float(pm.sum(pm.asarray(x))), float(x.sum(dtype=np.float64)), rtol=1e-4, atol=1e-3)

SOURCE = """
#include <metal_stdlib>
using namespace metal;
kernel void axpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
"""

mode = sys.argv[1]
if mode == "no-clang":
    # No clang++ anywhere: compiling MSL must say what to install.
    try:
        pm.compile(SOURCE)
    except pm.Error as e:
        assert "install clang" in str(e), str(e)
        print("without clang++:", " ".join(str(e).split()))
    else:
        raise AssertionError("pm.compile worked without a clang++")
else:
    # With a clang++ (PYMETAL_CLANG): the bundled MSL headers and Shaders/.
    assert os.environ.get("PYMETAL_CLANG"), "set PYMETAL_CLANG"
    for n in (1, 777, 65_536):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        want = 3 * x + y
        pm.compile(SOURCE).axpy(x, y, np.float32(3), grid=n)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)  # a fused multiply-add may round once
    # uint16 kernels are not precompiled: their family compiles from the bundled shaders/.
    u = rng.integers(0, 60000, 5000).astype(np.uint16)
    np.testing.assert_array_equal(pm.max(pm.asarray(u)).numpy(), u.max())
    print("with clang++: custom kernel and a kernel family compiled from the wheel's sources")
    # The console script the wheel installs.
    import subprocess

    script = os.path.join(os.path.dirname(sys.executable), "pymetal")
    out = subprocess.run([script, "info"], capture_output=True, text=True, check=True).stdout
    assert "self-check:        ok" in out and os.path.join(site, "lib") in out, out
    print("console script: pymetal info: ok")
print("wheel smoke test (%s): ok" % mode)
