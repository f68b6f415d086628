// Counts and weight sums per integer key (pymetal/_numpy_stats.py: bincount,
// histogram): out[k] = sum of w[i] over the i with keys[i] == k, for k < n.
// Keys outside [0, n) (histogram's values outside its range, marked -1) are skipped.
//
// CPU-shaped, in two launches: thread t makes the private histogram of its run
// of `chunk` keys in rows t of `partial` (no atomics, each key read once), then
// thread k adds column k of the rows. A GPU would count in threadgroup memory with
// atomics; this form runs on one too, with fewer threads than it could use.
//
// histogram_count_int64 / histogram_combine_int64: counts (uint per run, int64 total).
// histogram_sum_float32 / histogram_combine_float32: float32 weights summed
//   with Kahan's compensation per bin (the shaders build without fast math), so a
//   bin's sum has about one rounding whatever the run's length.
#include <metal_stdlib>
using namespace metal;

struct HistogramParams {
    ulong m;      // keys
    ulong n;      // bins
    ulong chunk;  // keys per run
    ulong runs;   // threads of the first launch
};

[[kernel]] void histogram_count_int64(device const long* keys [[buffer(0)]], device uint* partial [[buffer(1)]],
                                constant HistogramParams& p [[buffer(2)]], uint t [[thread_position_in_grid]]) {
    if (t >= p.runs) return;
    device uint* h = partial + ulong(t) * p.n;
    for (ulong k = 0; k < p.n; k++) h[k] = 0;
    ulong end = min(ulong(t) * p.chunk + p.chunk, p.m);
    for (ulong i = ulong(t) * p.chunk; i < end; i++) {
        ulong k = ulong(keys[i]);  // negative keys become huge: skipped with the rest
        if (k < p.n) h[k] += 1;
    }
}

[[kernel]] void histogram_combine_int64(device const uint* partial [[buffer(0)]], device long* out [[buffer(1)]],
                                        constant HistogramParams& p [[buffer(2)]],
                                        uint k [[thread_position_in_grid]]) {
    if (k >= p.n) return;
    long s = 0;
    for (ulong t = 0; t < p.runs; t++) s += long(partial[t * p.n + k]);
    out[k] = s;
}

[[kernel]] void histogram_sum_float32(device const long* keys [[buffer(0)]], device const float* w [[buffer(1)]],
                                      device float* partial [[buffer(2)]], constant HistogramParams& p [[buffer(3)]],
                                      uint t [[thread_position_in_grid]]) {
    if (t >= p.runs) return;
    device float* s = partial + 2 * ulong(t) * p.n;  // the run's sums, then their compensations
    device float* c = s + p.n;
    for (ulong k = 0; k < p.n; k++) s[k] = c[k] = 0.0f;
    ulong end = min(ulong(t) * p.chunk + p.chunk, p.m);
    for (ulong i = ulong(t) * p.chunk; i < end; i++) {
        ulong k = ulong(keys[i]);
        if (k >= p.n) continue;
        float y = w[i] - c[k];
        float u = s[k] + y;
        c[k] = (u - s[k]) - y;
        s[k] = u;
    }
}

[[kernel]] void histogram_combine_float32(device const float* partial [[buffer(0)]], device float* out [[buffer(1)]],
                                              constant HistogramParams& p [[buffer(2)]],
                                              uint k [[thread_position_in_grid]]) {
    if (k >= p.n) return;
    float s = 0.0f, c = 0.0f;
    for (ulong t = 0; t < p.runs; t++) {
        device const float* row = partial + 2 * t * p.n;
        float y = (row[k] - row[p.n + k]) - c;  // the run's sum less its compensation
        float u = s + y;
        c = (u - s) - y;
        s = u;
    }
    out[k] = s;
}
