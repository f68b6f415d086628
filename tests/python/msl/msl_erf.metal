// erf(x) for float, written in MSL as a kernel author would (MSL has no erf;
// MLX and tinygrad define their own). Branch-free, so a kernel calling it
// vectorises. Coefficients: least-squares fits (relative error < 5e-10 in
// float64), evaluated in float:
//   |x| < 0.921875: erf(x) = x * P(x^2)
//   otherwise:      erf(|x|) = 1 - exp(Q(|x| - 2.42) - x^2), Q ~ log(erfc(t)) + t^2,
//                   with |x| clamped to 3.92 (erf rounds to 1 in float beyond).
// Used by tests/python/msl/test_msl_math_accuracy.py and scripts/bench_math.py.
static inline float erf(float x) {
    float t = fabs(x), s = x * x;
    float p = 8.370424293e-05f;
    p = fma(p, s, -8.142794149e-04f);
    p = fma(p, s, 5.201041883e-03f);
    p = fma(p, s, -2.685940318e-02f);
    p = fma(p, s, 1.128369562e-01f);
    p = fma(p, s, -3.761263375e-01f);
    p = fma(p, s, 1.128379167e+00f);
    float u = fmin(t, 3.92f) - 2.42f;
    float q = -2.111378912e-05f;
    q = fma(q, u, 7.701357152e-05f);
    q = fma(q, u, -4.572272527e-04f);
    q = fma(q, u, 2.351256907e-03f);
    q = fma(q, u, -1.157261026e-02f);
    q = fma(q, u, 5.879837789e-02f);
    q = fma(q, u, -3.618711057e-01f);
    q = fma(q, u, -1.528236156e+00f);
    float tc = fmin(t, 3.92f);
    float big = copysign(1.0f - exp(fma(-tc, tc, q)), x);
    return t >= 0.921875f ? big : x * p; // NaN: x * p is NaN
}
