"""Ordinary NumPy arrays as kernel arguments vs pymetal arrays.

A 16M-element float32 add (3 arguments) and a 4-argument kernel, called on
plain NumPy arrays (np.random.rand(n).astype(np.float32): not page-aligned),
on page-aligned NumPy arrays, on read-only NumPy inputs, and on pymetal arrays
(call + synchronize, since NumPy calls are synchronous). Rounds are
interleaved; each figure is the median over rounds. Target: a plain NumPy call
costs at most 1.5x the pymetal-array call measured in the same run.
"""
import statistics
import time

import numpy as np
import pymetal as pm

N = 16 << 20
ROUNDS = 15
TARGET = 1.5

FMA = """
#include <metal_stdlib>
using namespace metal;
kernel void fma4(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                 device const float* c [[buffer(2)]], device float* out [[buffer(3)]],
                 uint i [[thread_position_in_grid]]) {
    out[i] = a[i] * b[i] + c[i];
}
"""


def aligned(n, page):
    raw = np.empty(n * 4 + page, np.uint8)
    start = (-raw.ctypes.data) % page
    return raw[start:start + n * 4].view(np.float32)


def read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def main():
    add = pm.shaders().add_float32
    fma4 = pm.compile(FMA).fma4
    page = pm.device().page_size
    rng = np.random.default_rng(1)
    plain = [rng.random(N).astype(np.float32) for _ in range(4)]
    pagealigned = [aligned(N, page) for _ in range(4)]
    for dst, src in zip(pagealigned, plain):
        dst[...] = src
    ro = [read_only(a) for a in plain[:3]] + [plain[3]]
    pmarrays = [pm.asarray(a) for a in plain]
    print(f"plain NumPy data at page offset {plain[0].ctypes.data % page} (page {page} bytes)")

    def call(fn, args):
        def run():
            fn(*args, grid=N)
            pm.synchronize()
        return run

    cases = {}
    for name, fn, nargs in (("add (3 arrays)", add, 3), ("fma4 (4 arrays)", fma4, 4)):
        cases[name] = {
            "pymetal arrays": call(fn, pmarrays[-nargs:]),
            "NumPy, plain": call(fn, plain[-nargs:]),
            "NumPy, page-aligned": call(fn, pagealigned[-nargs:]),
            "NumPy, read-only inputs": call(fn, ro[-nargs:]),
        }
    times = {(c, v): [] for c, variants in cases.items() for v in variants}
    for run in (f for variants in cases.values() for f in variants.values()):
        run()  # warm up: compile, caches, staging buffers
    for _ in range(ROUNDS):
        for c, variants in cases.items():
            for v, run in variants.items():
                start = time.perf_counter()
                run()
                times[(c, v)].append(time.perf_counter() - start)

    print(f"{N >> 20}M float32 per array, median of {ROUNDS} interleaved rounds; ratio vs pymetal arrays:")
    for c, variants in cases.items():
        ref = statistics.median(times[(c, "pymetal arrays")])
        print(f"  {c}:")
        for v in variants:
            t = statistics.median(times[(c, v)])
            line = f"    {v:26s} {t * 1e3:8.2f} ms  {t / ref:5.2f}x"
            if v in ("NumPy, plain", "NumPy, page-aligned"):
                line += f"  (target <= {TARGET}x: {'ok' if t / ref <= TARGET else 'OVER'})"
            print(line)


if __name__ == "__main__":
    main()
