"""Per-call overhead and compile time, with the issue's targets.

Per call, on a trivial kernel over 256 float32 (rounds interleaved, medians):
  a synchronous call on NumPy arrays                              <= 15 us
  the same on pymetal arrays: host time of an asynchronous call    <= 4 us
  and a call followed by pm.synchronize()                          <= 6 us
  the signature checks of a call (saxpy: 2 arrays, 1 scalar):
  binding with checks minus packing the same records unchecked     <= 1 us
MSL compile time:
  cold (clang runs; the headers' precompiled header is cached)     <= 250 ms
  cached, in a fresh process (disk cache hit, no clang)            <= 5 ms
and, for information, the first compile with an empty cache (it also builds
the precompiled header, once per toolchain).
"""
import os
import statistics
import subprocess
import sys
import tempfile
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
ROUNDS = 9


def per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def verdict(value, limit):
    return f"target <= {limit * 1e6 if limit < 1e-3 else limit * 1e3:g} {'us' if limit < 1e-3 else 'ms'}: " \
           f"{'ok' if value <= limit else 'OVER'}"


def overhead():
    inc = pm.compile(TRIVIAL).inc
    a, b = np.zeros(256, np.float32), np.ones(256, np.float32)
    x, y = pm.zeros(256, np.float32), pm.full(256, 1, np.float32)

    def numpy_call():
        inc(a, b, grid=256)

    def async_call():
        inc(x, y, grid=256)

    def synced_call():
        inc(x, y, grid=256)
        pm.synchronize()

    def numpy_add():
        np.add(a, b, out=a)

    cases = [("NumPy arrays, synchronous", numpy_call, 15e-6),
             ("pymetal arrays, asynchronous (host time)", async_call, 4e-6),
             ("pymetal arrays, synchronised", synced_call, 6e-6),
             ("(NumPy's own np.add on the same)", numpy_add, None)]
    times = {name: [] for name, _, _ in cases}
    for fn in (numpy_call, async_call, synced_call, numpy_add):
        per_call(fn, 200)  # warm up
    pm.synchronize()
    for _ in range(ROUNDS):
        for name, fn, _ in cases:
            times[name].append(per_call(fn, 2000))
            pm.synchronize()  # asynchronous work runs outside the timed loop
    print(f"per-call overhead, trivial kernel over 256 float32 ({ROUNDS} interleaved rounds, medians):")
    for name, _, limit in cases:
        t = statistics.median(times[name])
        note = f"  ({verdict(t, limit)})" if limit else ""
        print(f"  {name:42s} {t * 1e6:7.2f} us{note}")


# pm.compile is looked up before the clock starts: its first use loads the lazy part of
# the namespace (NumPy and the array library), which is start-up, not compiling.
PROBE = ("import sys, time, pymetal as pm; pm.device(); compile = pm.compile; s = sys.stdin.read(); "
         "t = time.perf_counter(); compile(s); print(time.perf_counter() - t)")


def in_fresh_process(source, env=None):
    run = subprocess.run([sys.executable, "-c", PROBE], input=source, capture_output=True, text=True, check=True,
                         env=env)
    return float(run.stdout)


def compile_times():
    def unique():
        return TRIVIAL.replace("a[i] += b[i];", f"a[i] += b[i]; // {uuid.uuid4()}")

    pm.compile(unique())  # the headers' precompiled header is built if missing
    cold = []
    for _ in range(5):
        source = unique()
        start = time.perf_counter()
        pm.compile(source)
        cold.append(time.perf_counter() - start)
    cached = [in_fresh_process(source) for _ in range(5)]
    with tempfile.TemporaryDirectory() as empty:
        first = in_fresh_process(unique(), dict(os.environ, XDG_CACHE_HOME=empty))
    cold_t, cached_t = statistics.median(cold), statistics.median(cached)
    print("MSL compile time (medians of 5):")
    print(f"  cold (clang runs)                          {cold_t * 1e3:7.1f} ms  ({verdict(cold_t, 250e-3)})")
    print(f"  cached, fresh process                      {cached_t * 1e3:7.1f} ms  ({verdict(cached_t, 5e-3)})")
    print(f"  first compile, empty cache (+ PCH build)   {first * 1e3:7.1f} ms")


SAXPY = """
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
"""


def check_cost():
    """What checking a call against the kernel's signature adds to binding its
    arguments: runtime.arguments.bind (count, dtypes, scalar range, foreign memory)
    against packing the same three pm_arg records and the scalar unchecked."""
    import struct
    from pymetal.runtime import scratch as F
    from pymetal.runtime.arguments import bind

    saxpy = pm.compile(SAXPY).saxpy
    x, y = pm.zeros(256, np.float32), pm.ones(256, np.float32)
    args = (x, y, 2.0)
    saxpy(*args, grid=256)
    pm.synchronize()
    s = F._tls.scratch
    abuf, data, addr, pack, f32 = s.args, s.data, s.data_addr, F._pack_arg, struct.Struct("<f").pack_into
    size = F._ARG_SIZE

    def checked():
        if len(args) != len(saxpy._params):
            raise TypeError
        bind(saxpy, args, s, False)

    def unchecked():
        a, b, c = args
        pack(abuf, 0, 0, 0, a._buf.handle, a._offset, 0, 0)
        pack(abuf, size, 0, 1, b._buf.handle, b._offset, 0, 0)
        f32(data, 0, c)
        pack(abuf, 2 * size, 1, 2, 0, 0, addr, 4)

    with_checks, without = [], []
    for _ in range(ROUNDS):
        with_checks.append(per_call(checked, 20000))
        without.append(per_call(unchecked, 20000))
    c, u = statistics.median(with_checks), statistics.median(without)
    print(f"signature checks per call (saxpy, {ROUNDS} interleaved rounds, medians):")
    print(f"  binding with checks {c * 1e6:.2f} us, unchecked packing {u * 1e6:.2f} us: "
          f"checks {(c - u) * 1e6:7.2f} us  ({verdict(c - u, 1e-6)})")


def main():
    overhead()
    check_cost()
    compile_times()


if __name__ == "__main__":
    main()
