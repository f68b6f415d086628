"""Per-call overhead and compile time, with the issue's targets.

Prints: a synchronous call of a trivial kernel on small NumPy arrays, the same
on pymetal arrays (asynchronous, and synchronised per call), and MSL compile
time cold (clang runs) vs cached (a fresh process, disk cache hit).
"""
import subprocess
import sys
import time
import uuid

import numpy as np
import pymetal as pm

TRIVIAL = """
#include <metal_stdlib>
using namespace metal;
kernel void inc(device float* a [[buffer(0)]], device const float* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    a[i] += b[i];
}
"""


def per_call(fn, calls):
    fn()  # warm up
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def verdict(value, limit):
    return f"{'ok' if value <= limit else 'OVER'}: {value / limit:.2f} of the limit"


def main():
    inc = pm.compile(TRIVIAL).inc
    a, b = np.zeros(256, np.float32), np.ones(256, np.float32)
    x, y = pm.zeros(256, np.float32), pm.full(256, 1, np.float32)
    calls = 3000
    numpy_call = per_call(lambda: inc(a, b, grid=256), calls)
    async_call = per_call(lambda: inc(x, y, grid=256), calls)
    pm.synchronize()
    sync_call = per_call(lambda: (inc(x, y, grid=256), pm.synchronize()), calls)
    numpy_add = per_call(lambda: np.add(a, b, out=a), calls)
    print("per-call overhead, trivial kernel over 256 float32:")
    print(f"  NumPy arrays, synchronous:       {numpy_call * 1e6:7.1f} us  (target <= 30 us, {verdict(numpy_call, 30e-6)})")
    print(f"  pymetal arrays, asynchronous:    {async_call * 1e6:7.1f} us")
    print(f"  pymetal arrays, synchronised:    {sync_call * 1e6:7.1f} us")
    print(f"  (NumPy's own np.add on the same: {numpy_add * 1e6:7.1f} us; ratio pymetal/NumPy {numpy_call / numpy_add:.0f}x)")

    source = TRIVIAL.replace("a[i] += b[i];", f"a[i] += b[i]; // {uuid.uuid4()}")
    start = time.perf_counter()
    pm.compile(source)
    cold = time.perf_counter() - start
    # A cache hit in a fresh process: what a user sees when re-running a script.
    probe = ("import sys, time, pymetal as pm; pm.device(); s = sys.stdin.read(); t = time.perf_counter(); "
             "pm.compile(s); print(time.perf_counter() - t)")
    cached = float(subprocess.run([sys.executable, "-c", probe], input=source, capture_output=True,
                                  text=True, check=True).stdout)
    print("MSL compile time:")
    print(f"  cold (clang):                    {cold * 1e3:7.1f} ms")
    print(f"  cached, fresh process:           {cached * 1e3:7.1f} ms  (target <= 50 ms, {verdict(cached, 50e-3)}; "
          f"{cold / cached:.0f}x faster than cold)")


if __name__ == "__main__":
    main()
