// Vectorisable float exp, exp2, log, log2, sin, cos, tan, tanh and pow, each in
// a precise and a fast variant (MSL spec section 8.4, tables 8.1 and 8.2).
//
// Why not libm: a libm call in a kernel is a scalar call per thread, and the
// loop over a threadgroup's threads (runtime.h, LOOP mode) cannot vectorise
// around it. clang's -fveclib=libmvec would turn some of them into glibc's
// vector functions, but which ones depends on the clang version and the
// architecture (x86-64: sin cos tan exp log pow; arm64: most of libm), and
// glibc gained them over several releases, so a kernel library could fail to
// load on another machine. These functions are plain inline code instead: no
// branch, no call, no library, so clang vectorises the kernel loop on every
// target, and results are the same on every machine.
//
// - precise (pm_*_precise): the float argument is widened to double and the
//   function evaluated there with series accurate to ~2^-40, then rounded once
//   to float: about 0.5 ulp, well inside table 8.1 (4 ulp; tan 6, tanh 5,
//   pow 16), over the whole float range (sin/cos/tan reduce huge arguments
//   exactly, Payne-Hanek style) with IEEE special values.
// - fast (pm_*_fast): float arithmetic only (twice the vector width), a few
//   ulp; inside table 8.2's bounds on the domains it states. NaN / INF inputs
//   give unspecified results, as fast math allows.
//
// Every function is scalar (float -> float); math.h maps vectors and half /
// bfloat onto them. Rounding uses __builtin_rint, never the (x + 1.5 * 2^52) -
// 1.5 * 2^52 trick, which -ffast-math would fold away.
#pragma once
#include <stdint.h>

namespace metal {

template <class _PmTo, class _PmFrom> inline _PmTo pm_bits(_PmFrom x) { return __builtin_bit_cast(_PmTo, x); }

// ---------------------------------------------------------------------------
// Precise: double-precision cores
// ---------------------------------------------------------------------------
// 2^t for any t (NaN gives an unspecified finite value; callers patch NaN):
// t = k + f with k an integer and |f| <= 1/2; 2^f = e^(f ln 2) by its Taylor
// series to degree 11 (error < 2^-47). |t| is clamped to 200: 2^k is then a
// normal double, and the float result still overflows / underflows correctly.
inline double pm_exp2_d(double t) {
    t = __builtin_fmin(__builtin_fmax(t, -200.0), 200.0);
    double k = __builtin_rint(t);
    double r = (t - k) * 0.69314718055994530942; // t - k is exact
    double p = 1.0 / 39916800;
    p = p * r + 1.0 / 3628800;
    p = p * r + 1.0 / 362880;
    p = p * r + 1.0 / 40320;
    p = p * r + 1.0 / 5040;
    p = p * r + 1.0 / 720;
    p = p * r + 1.0 / 120;
    p = p * r + 1.0 / 24;
    p = p * r + 1.0 / 6;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t scale = (int64_t)((int)k + 1023) << 52; // 2^k
    return p * pm_bits<double>(scale);
}

// log2(x) for finite x > 0 (subnormals included): x = 2^e * m with m in
// [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172,
// by its series to s^13 (error < 2^-40).
inline double pm_log2_d(float x) {
    float xs = x < 0x1p-126f ? x * 0x1p23f : x; // subnormal: scale up exactly
    uint32_t u = pm_bits<uint32_t>(xs) - 0x3f3504f3u; // 0x3f3504f3: sqrt(1/2)
    int e = ((int32_t)u >> 23) - (x < 0x1p-126f ? 23 : 0);
    double m = pm_bits<float>((u & 0x007fffffu) + 0x3f3504f3u);
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 2.0 / 13;
    p = p * z + 2.0 / 11;
    p = p * z + 2.0 / 9;
    p = p * z + 2.0 / 7;
    p = p * z + 2.0 / 5;
    p = p * z + 2.0 / 3;
    p = p * z + 2.0;
    return e + s * p * 1.44269504088896340736; // e + ln(m) / ln(2)
}

// IEEE special values of log / log2: log(+-0) = -inf, log(x < 0) = NaN,
// log(+inf) = +inf, NaN stays NaN.
inline float pm_log_special(float x, float finite) {
    float r = x > 0.0f ? finite : x == 0.0f ? -__builtin_inff() : __builtin_nanf("");
    return x == __builtin_inff() ? x : r;
}

inline float pm_exp2_precise(float x) { return x != x ? x : (float)pm_exp2_d(x); }
inline float pm_exp_precise(float x) { return x != x ? x : (float)pm_exp2_d(x * 1.44269504088896340736); }
inline float pm_log2_precise(float x) { return pm_log_special(x, (float)pm_log2_d(x)); }
inline float pm_log_precise(float x) { return pm_log_special(x, (float)(pm_log2_d(x) * 0.69314718055994530942)); }

// tanh = (e - 1) / (e + 1) with e = exp(2|x|): in double the cancellation in
// e - 1 costs < 2^-36 relative for |x| >= 2^-10; below, x - x^3/3 + 2x^5/15.
inline float pm_tanh_precise(float x) {
    double a = __builtin_fabs((double)x);
    double e = pm_exp2_d(2.0 * 1.44269504088896340736 * a);
    double small = a * (1.0 + a * a * (-1.0 / 3 + a * a * (2.0 / 15)));
    double t = a < 0x1p-10 ? small : (e - 1.0) / (e + 1.0);
    return x != x ? x : __builtin_copysignf((float)t, x);
}

// pow(x, y) = +-2^(y log2|x|) in double (|y log2|x|| < 200 is all a float
// result needs; the error is < 2^-33 relative), with C99's special cases:
// pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, sign from odd integer y
// for x < 0 (and -0), NaN for finite x < 0 and finite non-integer y.
inline float pm_pow_precise(float x, float y) {
    float ax = __builtin_fabsf(x);
    double l = ax == 0.0f ? -__builtin_inf() : ax == __builtin_inff() ? __builtin_inf() : pm_log2_d(ax);
    float r = (float)pm_exp2_d((double)y * l);
    bool integer = y == __builtin_truncf(y);
    bool odd = integer && y * 0.5f != __builtin_truncf(y * 0.5f);
    r = odd && __builtin_signbit(x) ? -r : r;
    r = x < 0.0f && x != -__builtin_inff() && !integer ? __builtin_nanf("") : r;
    r = x != x || y != y ? x + y : r;
    return y == 0.0f || x == 1.0f || (x == -1.0f && __builtin_isinf(y)) ? 1.0f : r;
}

// ---------------------------------------------------------------------------
// Precise sin, cos, tan: reduce x to r = x - n pi/2 with |r| <= pi/4, then
// polynomials in double.
// ---------------------------------------------------------------------------
// Bits of 2/pi: entry j is floor(2/pi * 2^(8j + 8)) mod 2^32, so every entry
// starts 8 bits further into the binary expansion.
inline constexpr uint32_t pm_two_over_pi_bits[24] = {
    0x000000a2, 0x0000a2f9, 0x00a2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
    0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};

// |x| >= 2: |x| = M * 2^(b - 150) with a 24-bit M and biased exponent b.
// Writing b - 128 = 8i + s, |x| * 2/pi * 2^62 mod 2^64 is, up to < 2^-30 of
// its last bit, M * 2^s * (W[i] 2^32 + W[i+4] + W[i+8] 2^-32) mod 2^64 (W the
// table above): a 2.62 fixed-point number whose top two bits are the quadrant.
// Exact integer arithmetic, so the reduction is good for every finite float.
inline double pm_reduce_large(float ax, int &quadrant) {
    uint32_t u = pm_bits<uint32_t>(ax);
    uint32_t i = (u >> 26) & 15, m = ((u & 0x007fffffu) | 0x00800000u) << ((u >> 23) & 7);
    uint64_t hi = (uint32_t)(m * pm_two_over_pi_bits[i]);            // bits 32..63
    uint64_t mid = (uint64_t)m * pm_two_over_pi_bits[i + 4];         // bits 0..63
    uint64_t lo = ((uint64_t)m * pm_two_over_pi_bits[i + 8]) >> 32; // bits -32..-1, kept from 0
    uint64_t f = ((hi << 32) | lo) + mid;
    uint64_t n = (f + (1ull << 61)) >> 62; // nearest quadrant
    quadrant = (int)n;
    int64_t frac = (int64_t)(f - (n << 62)); // in [-2^61, 2^61): r = frac 2^-62 pi/2
    // int64 -> double in two exact halves (vectorises without AVX-512), rounded once.
    double d = (double)(int32_t)(frac >> 32) * 0x1p32 + (double)(uint32_t)frac;
    return d * (1.57079632679489661923 * 0x1p-62);
}

// r = |x| - n pi/2, |r| <= pi/4 (|x| < 2: n is 0 or 1, pi/2 as two doubles).
inline double pm_reduce(float ax, int &quadrant) {
    int nl;
    double large = pm_reduce_large(ax, nl);
    double a = ax, n = a > 0.78539816339744830962 ? 1.0 : 0.0;
    double small = (a - n * 1.57079632679489655800) - n * 6.123233995736766036e-17;
    quadrant = ax < 2.0f ? (int)n : nl;
    return ax < 2.0f ? small : large;
}

// sin r and cos r for |r| <= pi/4, Taylor series to r^11 / r^12 (< 2^-36).
inline double pm_sin_poly(double r) {
    double z = r * r, p = -1.0 / 39916800;
    p = p * z + 1.0 / 362880;
    p = p * z - 1.0 / 5040;
    p = p * z + 1.0 / 120;
    p = p * z - 1.0 / 6;
    return r + r * z * p;
}
inline double pm_cos_poly(double r) {
    double z = r * r, p = 1.0 / 479001600;
    p = p * z - 1.0 / 3628800;
    p = p * z + 1.0 / 40320;
    p = p * z - 1.0 / 720;
    p = p * z + 1.0 / 24;
    p = p * z - 0.5;
    return 1.0 + z * p;
}

// sin(x) = sign(x) sin|x|; quadrant q of |x|: sin r, cos r, -sin r, -cos r.
inline float pm_sin_precise(float x) {
    int q;
    double r = pm_reduce(__builtin_fabsf(x), q), s = pm_sin_poly(r), c = pm_cos_poly(r);
    double v = q & 1 ? c : s;
    v = (q & 2) != (__builtin_signbit(x) ? 2 : 0) ? -v : v;
    return __builtin_isfinite(x) ? (float)v : __builtin_nanf("");
}
inline float pm_cos_precise(float x) {
    int q;
    double r = pm_reduce(__builtin_fabsf(x), q), s = pm_sin_poly(r), c = pm_cos_poly(r);
    double v = q & 1 ? s : c;
    v = (q + 1) & 2 ? -v : v;
    return __builtin_isfinite(x) ? (float)v : __builtin_nanf("");
}
inline float pm_tan_precise(float x) {
    int q;
    double r = pm_reduce(__builtin_fabsf(x), q), s = pm_sin_poly(r), c = pm_cos_poly(r);
    double v = q & 1 ? -c / s : s / c;
    v = __builtin_signbit(x) ? -v : v;
    return __builtin_isfinite(x) ? (float)v : __builtin_nanf("");
}

// ---------------------------------------------------------------------------
// Fast: float only
// ---------------------------------------------------------------------------
// e^r - 1 for |r| <= ln(2)/2, Taylor series to r^8 (< 2^-27 relative).
inline float pm_expm1_poly_f(float r) {
    float p = 1.0f / 40320;
    p = __builtin_fmaf(p, r, 1.0f / 5040);
    p = __builtin_fmaf(p, r, 1.0f / 720);
    p = __builtin_fmaf(p, r, 1.0f / 120);
    p = __builtin_fmaf(p, r, 1.0f / 24);
    p = __builtin_fmaf(p, r, 1.0f / 6);
    p = __builtin_fmaf(p, r, 0.5f);
    return __builtin_fmaf(p * r, r, r);
}
// p * 2^k for p in [0.5, 2) and an integer k, by adding k to p's exponent
// field: integer arithmetic, which -ffast-math cannot reassociate into an
// early overflow. A subnormal result is flushed to zero (section 8.1 allows
// it), one past the largest float is inf.
inline float pm_scale_f(float p, float k) {
    int e = (pm_bits<int>(p) >> 23) + (int)k;
    float r = pm_bits<float>(pm_bits<int>(p) + ((int)k << 23));
    return e <= 0 ? 0.0f : e >= 255 ? pm_bits<float>(0x7f800000) : r;
}
// e^x = 2^k e^r, k = rint(x / ln 2), r = x - k ln 2 with ln 2 in two parts
// (the high one has 16 bits, so k * high is exact).
inline float pm_exp_fast(float x) {
    x = __builtin_fminf(__builtin_fmaxf(x, -104.0f), 89.0f); // keeps k within int range
    float k = __builtin_rintf(x * 1.44269504088896340736f);
    float r = __builtin_fmaf(-k, 0.693145751953125f, x);
    r = __builtin_fmaf(-k, 1.42860682030941723212e-6f, r);
    return pm_scale_f(pm_expm1_poly_f(r) + 1.0f, k);
}
// 2^x = 2^k e^(f ln 2), k = rint(x), |f| <= 1/2.
inline float pm_exp2_fast(float x) {
    x = __builtin_fminf(__builtin_fmaxf(x, -151.0f), 129.0f); // keeps k within int range
    float k = __builtin_rintf(x);
    return pm_scale_f(pm_expm1_poly_f((x - k) * 0.69314718055994530942f) + 1.0f, k);
}

// ln(x) for x > 0: x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)),
// ln(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f), R by the atanh
// series (the arrangement of FreeBSD's logf, < 1 ulp). Subnormals: unspecified.
inline float pm_log1p_parts_f(float x, float &k) {
    uint32_t u = pm_bits<uint32_t>(x) - 0x3f3504f3u;
    k = (float)((int32_t)u >> 23);
    float f = pm_bits<float>((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float s = f / (2.0f + f), z = s * s, hfsq = 0.5f * f * f;
    float R = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9))));
    return f - (hfsq - s * (hfsq + R));
}
inline float pm_log_fast(float x) {
    float k, l = pm_log1p_parts_f(x, k);
    return __builtin_fmaf(k, 0.693145751953125f, __builtin_fmaf(k, 1.42860682030941723212e-6f, l));
}
inline float pm_log2_fast(float x) {
    float k, l = pm_log1p_parts_f(x, k);
    return __builtin_fmaf(l, 1.44269504088896340736f, k);
}

// sin / cos / tan: n = rint(x 2/pi), r = x - n pi/2 with pi/2 in three parts
// (accurate for |x| up to ~1e5; table 8.2 bounds only [-pi, pi]), then float
// Taylor series to r^9 / r^10 on |r| <= pi/4 (< 2^-29).
inline float pm_reduce_f(float x, int &quadrant) {
    float n = __builtin_rintf(x * 0.63661977236758134308f);
    quadrant = (int)n;
    float r = __builtin_fmaf(-n, 1.57079637e+00f, x); // pi/2 = sum of the three floats
    r = __builtin_fmaf(-n, -4.37113883e-08f, r);
    r = __builtin_fmaf(-n, -1.71512451e-15f, r);
    // Past ~1e5 the reduction degrades; keep the results within [-1, 1] there.
    return __builtin_fminf(__builtin_fmaxf(r, -0.785398185f), 0.785398185f);
}
inline float pm_sin_poly_f(float r) {
    float z = r * r, p = 1.0f / 362880;
    p = __builtin_fmaf(p, z, -1.0f / 5040);
    p = __builtin_fmaf(p, z, 1.0f / 120);
    p = __builtin_fmaf(p, z, -1.0f / 6);
    return __builtin_fmaf(r * z, p, r);
}
inline float pm_cos_poly_f(float r) {
    float z = r * r, p = -1.0f / 3628800;
    p = __builtin_fmaf(p, z, 1.0f / 40320);
    p = __builtin_fmaf(p, z, -1.0f / 720);
    p = __builtin_fmaf(p, z, 1.0f / 24);
    p = __builtin_fmaf(p, z, -0.5f);
    return __builtin_fmaf(z, p, 1.0f);
}
inline float pm_sin_fast(float x) {
    int q;
    float r = pm_reduce_f(x, q), v = q & 1 ? pm_cos_poly_f(r) : pm_sin_poly_f(r);
    return q & 2 ? -v : v;
}
inline float pm_cos_fast(float x) {
    int q;
    float r = pm_reduce_f(x, q), v = q & 1 ? pm_sin_poly_f(r) : pm_cos_poly_f(r);
    return (q + 1) & 2 ? -v : v;
}
inline float pm_tan_fast(float x) {
    int q;
    float r = pm_reduce_f(x, q), s = pm_sin_poly_f(r), c = pm_cos_poly_f(r);
    return q & 1 ? -c / s : s / c;
}

// tanh(x) = sign(x) e / (e + 2), e = expm1(2|x|) = 2^k (1 + p) - 1 computed as
// fma(2^k, p, 2^k - 1): relative accuracy down to 0 (unlike (t - 1) / (t + 1)).
// |x| is clamped to 9, where tanh rounds to 1.
inline float pm_tanh_fast(float x) {
    float a = __builtin_fminf(2.0f * __builtin_fabsf(x), 18.0f);
    float k = __builtin_rintf(a * 1.44269504088896340736f);
    float r = __builtin_fmaf(-k, 0.693145751953125f, a);
    r = __builtin_fmaf(-k, 1.42860682030941723212e-6f, r);
    float twok = pm_bits<float>(((int)k + 127) << 23); // k <= 26
    float e = __builtin_fmaf(twok, pm_expm1_poly_f(r), twok - 1.0f);
    return __builtin_copysignf(e / (e + 2.0f), x);
}

// pow = exp2(y log2 x), as table 8.2 defines it (x > 0).
inline float pm_pow_fast(float x, float y) { return pm_exp2_fast(y * pm_log2_fast(x)); }

} // namespace metal
