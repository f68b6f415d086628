"""What fault containment and shader validation cost (issue 10).

1. Shader validation: the same kernels compiled plainly and with each level
   of validation (issue 27), run interleaved in rounds on the same pymetal
   arrays; the ratio is validated time over plain time (median of rounds).
   NumPy's time for the same work is shown for scale. Levels:
   PYMETAL_VALIDATION=bounds (bounds only), threadgroup checks (bounds +
   threadgroup memory's uninitialized reads and data races), =1 (also
   device-memory races: every device access is tracked), =nan (threadgroup
   checks and NaN origins: every float access is tracked).
2. Integer division: an integer-heavy kernel (a division and a remainder per
   element) with non-zero divisors, against NumPy's // and %; then the same
   kernel where every divisor is 0: on x86-64 each such division traps and is
   completed by the signal handler (guard.c), on arm64 it costs nothing extra.
"""
import statistics
import time

import numpy as np
import pymetal as pm

ROUNDS = int(__import__('os').environ.get('BENCH_ROUNDS', 7))
N = 1 << 22

SOURCE = r'''
kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
kernel void stencil(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                    uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]],
                    uint n [[threads_per_grid]]) {
    threadgroup float s[258];
    s[t + 1] = x[i];
    if (t == 0) s[0] = i > 0 ? x[i - 1] : 0.0f;
    if (t == 255) s[257] = i + 1 < n ? x[i + 1] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[i] = 0.25f * s[t] + 0.5f * s[t + 1] + 0.25f * s[t + 2];
}
kernel void divmod(device const int *a [[buffer(0)]], device const int *b [[buffer(1)]],
                   device int *q [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    q[i] = a[i] / b[i] + a[i] % b[i];
}
'''


def median_time(fn, calls=3):
    fn()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def interleaved(fns):
    """Median over ROUNDS of each function's time, the functions interleaved in every round."""
    samples = [[] for _ in fns]
    for _ in range(ROUNDS):
        for s, fn in zip(samples, fns):
            s.append(median_time(fn))
    return [statistics.median(s) for s in samples]


def main():
    plain = pm.compile(SOURCE)
    levels = [("=bounds", pm.compile(SOURCE, macros={"PM_VALIDATION": 1, "PM_VALIDATION_BOUNDS_ONLY": 1})),
              ("threadgroup", pm.compile(SOURCE, macros={"PM_VALIDATION": 1})),
              ("=1", pm.compile(SOURCE, macros={"PM_VALIDATION": 1, "PM_VALIDATION_DEVICE_RACE": 1})),
              ("=nan", pm.compile(SOURCE, macros={"PM_VALIDATION": 1, "PM_VALIDATION_NAN": 1}))]
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal(N, dtype=np.float32)
    y_np = rng.standard_normal(N, dtype=np.float32)
    x, y = pm.asarray(x_np), pm.asarray(y_np)
    a = np.float32(1.5)

    print("shader validation: validated / plain time (median of %d rounds), %d elements" % (ROUNDS, N))
    for name, run, ref in [
        ("saxpy (loop)", lambda lib: (lib.saxpy(x, y, a, grid=N), pm.synchronize()),
         lambda: np.add(a * x_np, y_np, out=y_np)),
        ("stencil (barrier, threadgroup array)",
         lambda lib: (lib.stencil(x, y, grid=N, threadgroup=256), pm.synchronize()),
         lambda: np.add(0.5 * x_np[1:-1], 0.25 * (x_np[:-2] + x_np[2:]), out=y_np[1:-1])),
    ]:
        times = interleaved([lambda: run(plain)] + [lambda lib=lib: run(lib) for _, lib in levels] + [ref])
        tp, tn = times[0], times[-1]
        print("  %-38s plain %7.2f ms   (NumPy %.2f ms)" % (name, tp * 1e3, tn * 1e3))
        for (level, _), tv in zip(levels, times[1:-1]):
            print("    %-36s validated %7.2f ms  ratio %.2fx" % (level, tv * 1e3, tv / tp))

    ai_np = rng.integers(-1 << 30, 1 << 30, N, dtype=np.int32)
    bi_np = rng.integers(1, 1000, N, dtype=np.int32) * rng.choice(np.array([-1, 1], np.int32), N)
    zeros = pm.zeros(N, np.int32)
    ai, bi, q = pm.asarray(ai_np), pm.asarray(bi_np), pm.empty(N, np.int32)
    tk, tn = interleaved([lambda: (plain.divmod(ai, bi, q, grid=N), pm.synchronize()),
                          lambda: np.add(np.fmod(ai_np, bi_np), ai_np // bi_np, out=np.empty_like(ai_np))])
    print("integer division, %d elements: kernel %.2f ms, NumPy %.2f ms: NumPy / pymetal %.2fx"
          % (N, tk * 1e3, tn * 1e3, tn / tk))
    m = 1 << 16
    tz = median_time(lambda: (plain.divmod(ai, zeros, q, grid=m), pm.synchronize()))
    tnz = median_time(lambda: (plain.divmod(ai, bi, q, grid=m), pm.synchronize()))
    print("division by zero, %d elements: %.2f ms vs %.3f ms with non-zero divisors: %.2f us per division"
          % (m, tz * 1e3, tnz * 1e3, (tz - tnz) / (2 * m) * 1e6))


if __name__ == "__main__":
    main()
