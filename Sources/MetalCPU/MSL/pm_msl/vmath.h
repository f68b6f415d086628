// Vectorisable float exp, exp2, log, log2, sin, cos, tan, tanh and pow, each in
// a precise and a fast variant (MSL spec section 8.4, tables 8.1 and 8.2).
//
// Why not libm: a libm call in a kernel is a scalar call per thread, and the
// loop over a threadgroup's threads (runtime.h, LOOP mode) cannot vectorise
// around it. So these functions are plain inline code: no branch, no call, no
// library, and clang vectorises the kernel loop on every target.
// One exception: the precise sin, cos and tan use glibc's libmvec where the
// process has it (x86-64, glibc >= 2.35; MSLCompiler defines PM_LIBMVEC and
// passes -fveclib=libmvec, which turns the sinf / cosf / tanf calls of a
// vectorised loop into vector calls). A vector function can reduce huge
// arguments exactly in only the lanes that have one; inline code must do that
// work in every lane, which makes the own sin / cos / tan ~4x slower than exp.
//
// - precise (pm_*_precise), table 8.1 (4 ulp; tan 6, tanh 5, pow 16) over the
//   whole float range with IEEE special values: exp, exp2, log, log2, tanh in
//   float arithmetic (< 2 ulp); pow in double (y log2 x needs the bits); sin,
//   cos, tan (without libmvec) reduce the argument in double, huge ones
//   exactly (with 2/pi to 256 bits), then use float polynomials (< 3 ulp).
// - fast (pm_*_fast), table 8.2 on the domains it states: float only, no
//   special-value handling (fast math leaves NaN / INF undefined), sin / cos /
//   tan reduced in float (accurate to ~1e5, the table bounds [-pi, pi]), pow
//   as exp2(y log2 x) in float, as the table defines it.
//
// Every function is scalar (float -> float); math.h maps vectors and half /
// bfloat onto them. Rounding uses __builtin_rint, never the (x + 1.5 * 2^52) -
// 1.5 * 2^52 trick, and powers of two are built with integer arithmetic:
// -ffast-math (fast_math=True) may reassociate floating-point code, not that.
#pragma once
#include <stdint.h>

// Always inlined: a call left in a kernel's loop would stop it vectorising.
#define PM_VINLINE inline __attribute__((always_inline))

namespace metal {

template <class _PmTo, class _PmFrom> PM_VINLINE _PmTo pm_bits(_PmFrom x) { return __builtin_bit_cast(_PmTo, x); }
PM_VINLINE float pm_inf_f() { return pm_bits<float>(0x7f800000); }

// ---------------------------------------------------------------------------
// exp, exp2
// ---------------------------------------------------------------------------
// e^r - 1 for |r| <= ln(2)/2, Taylor series to r^8 (< 2^-27 relative).
PM_VINLINE float pm_expm1_poly_f(float r) {
    float p = 1.0f / 40320;
    p = __builtin_fmaf(p, r, 1.0f / 5040);
    p = __builtin_fmaf(p, r, 1.0f / 720);
    p = __builtin_fmaf(p, r, 1.0f / 120);
    p = __builtin_fmaf(p, r, 1.0f / 24);
    p = __builtin_fmaf(p, r, 1.0f / 6);
    p = __builtin_fmaf(p, r, 0.5f);
    return __builtin_fmaf(p * r, r, r);
}
// p * 2^k, correctly rounded, for p in [0.5, 2) and an integer k in [-151,
// 129]: k is added to p's exponent field; a result below the normal range is
// made 2^64 larger that way and then scaled by 2^-64 (one rounding); one past
// the largest float is inf.
PM_VINLINE float pm_scale_f(float p, float k) {
    int bits = pm_bits<int>(p), ki = (int)k, e = (bits >> 23) + ki;
    float normal = pm_bits<float>(bits + (ki << 23));
    float small = pm_bits<float>(bits + ((ki + 64) << 23)) * 0x1p-64f;
    return e <= 0 ? small : e >= 255 ? pm_inf_f() : normal;
}
// e^x = 2^k e^r, k = rint(x / ln 2), r = x - k ln 2 with ln 2 in two parts
// (the high one has 16 bits, so k * high is exact). NaN: unspecified.
PM_VINLINE float pm_exp_f(float x) {
    x = __builtin_fminf(__builtin_fmaxf(x, -104.0f), 89.0f); // the float range, k an int
    float k = __builtin_rintf(x * 1.44269504088896340736f);
    float r = __builtin_fmaf(-k, 0.693145751953125f, x);
    r = __builtin_fmaf(-k, 1.42860682030941723212e-6f, r);
    return pm_scale_f(pm_expm1_poly_f(r) + 1.0f, k);
}
// 2^x = 2^k e^(f ln 2), k = rint(x), |f| <= 1/2.
PM_VINLINE float pm_exp2_f(float x) {
    x = __builtin_fminf(__builtin_fmaxf(x, -151.0f), 129.0f);
    float k = __builtin_rintf(x);
    return pm_scale_f(pm_expm1_poly_f((x - k) * 0.69314718055994530942f) + 1.0f, k);
}
PM_VINLINE float pm_exp_precise(float x) { return x != x ? x : pm_exp_f(x); }
PM_VINLINE float pm_exp2_precise(float x) { return x != x ? x : pm_exp2_f(x); }
PM_VINLINE float pm_exp_fast(float x) { return pm_exp_f(x); }
PM_VINLINE float pm_exp2_fast(float x) { return pm_exp2_f(x); }

// ---------------------------------------------------------------------------
// log, log2
// ---------------------------------------------------------------------------
// Normal x > 0: x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); returns
// ln(1 + f) = f - f^2/2 + s (f^2/2 + rz(s^2)), s = f / (2 + f), rz from the
// atanh series (the arrangement of FreeBSD's logf, < 1 ulp).
PM_VINLINE float pm_log1p_parts_f(float x, float &k) {
    uint32_t u = pm_bits<uint32_t>(x) - 0x3f3504f3u; // 0x3f3504f3: sqrt(1/2)
    k = (float)((int32_t)u >> 23);
    float f = pm_bits<float>((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float s = f / (2.0f + f), z = s * s, hfsq = 0.5f * f * f;
    float rz = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9))));
    return f - (hfsq - s * (hfsq + rz));
}
PM_VINLINE float pm_log_from(float k, float l) { // k ln 2 + l, ln 2 in two parts
    return __builtin_fmaf(k, 0.693145751953125f, __builtin_fmaf(k, 1.42860682030941723212e-6f, l));
}
PM_VINLINE float pm_log2_from(float k, float l) { return __builtin_fmaf(l, 1.44269504088896340736f, k); }
PM_VINLINE float pm_log_fast(float x) {
    float k, l = pm_log1p_parts_f(x, k);
    return pm_log_from(k, l);
}
PM_VINLINE float pm_log2_fast(float x) {
    float k, l = pm_log1p_parts_f(x, k);
    return pm_log2_from(k, l);
}
// Precise: subnormals scaled up by 2^23 first; log(+-0) = -inf, log(x < 0) =
// NaN, log(+inf) = +inf, NaN stays NaN.
PM_VINLINE float pm_log_special(float x, float finite) {
    float r = x > 0.0f ? finite : x == 0.0f ? -pm_inf_f() : x - x + __builtin_nanf("");
    return x == pm_inf_f() ? x : r;
}
PM_VINLINE float pm_log_precise(float x) {
    bool sub = x < 0x1p-126f;
    float k, l = pm_log1p_parts_f(sub ? x * 0x1p23f : x, k);
    return pm_log_special(x, pm_log_from(sub ? k - 23.0f : k, l));
}
PM_VINLINE float pm_log2_precise(float x) {
    bool sub = x < 0x1p-126f;
    float k, l = pm_log1p_parts_f(sub ? x * 0x1p23f : x, k);
    return pm_log_special(x, pm_log2_from(sub ? k - 23.0f : k, l));
}

// ---------------------------------------------------------------------------
// tanh(x) = sign(x) e / (e + 2), e = expm1(2|x|) = 2^k (1 + p) - 1 computed as
// fma(2^k, p, 2^k - 1): relative accuracy down to 0, unlike table 8.2's
// (t - 1) / (t + 1). |x| is clamped to 9, where tanh rounds to 1.
// ---------------------------------------------------------------------------
PM_VINLINE float pm_tanh_f(float x) {
    float a = __builtin_fminf(2.0f * __builtin_fabsf(x), 18.0f);
    float k = __builtin_rintf(a * 1.44269504088896340736f);
    float r = __builtin_fmaf(-k, 0.693145751953125f, a);
    r = __builtin_fmaf(-k, 1.42860682030941723212e-6f, r);
    float twok = pm_bits<float>(((int)k + 127) << 23); // k <= 26
    float e = __builtin_fmaf(twok, pm_expm1_poly_f(r), twok - 1.0f);
    return __builtin_copysignf(e / (e + 2.0f), x);
}
PM_VINLINE float pm_tanh_precise(float x) { return x != x ? x : pm_tanh_f(x); }
PM_VINLINE float pm_tanh_fast(float x) { return pm_tanh_f(x); }

// ---------------------------------------------------------------------------
// pow
// ---------------------------------------------------------------------------
// pow needs y log2|x| to ~2^-21 absolute where the result is a float (|y
// log2|x|| < 151): log2 to ~2^-30 relative, exp2 to ~2^-27, in double.
// 2^t for any t (NaN: unspecified): t = k + f, |f| <= 1/2, 2^f by the Taylor
// series of e^(f ln 2) to degree 7 (< 2^-27.5). |t| is clamped to 200: 2^k
// is a normal double, and the float result still overflows / underflows right.
PM_VINLINE double pm_exp2_d(double t) {
    t = __builtin_fmin(__builtin_fmax(t, -200.0), 200.0);
    double k = __builtin_rint(t);
    double r = (t - k) * 0.69314718055994530942; // t - k is exact
    double p = 1.0 / 5040;
    p = p * r + 1.0 / 720;
    p = p * r + 1.0 / 120;
    p = p * r + 1.0 / 24;
    p = p * r + 1.0 / 6;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    return p * pm_bits<double>((int64_t)((int)k + 1023) << 52);
}
// log2(x) for finite x > 0 (subnormals included): x = 2^e m, m in [sqrt(1/2),
// sqrt(2)); ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its
// series to s^9 (< 2^-30 relative).
PM_VINLINE double pm_log2_d(float x) {
    bool sub = x < 0x1p-126f;
    uint32_t u = pm_bits<uint32_t>(sub ? x * 0x1p23f : x) - 0x3f3504f3u;
    int e = ((int32_t)u >> 23) - (sub ? 23 : 0);
    double m = pm_bits<float>((u & 0x007fffffu) + 0x3f3504f3u);
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 2.0 / 9;
    p = p * z + 2.0 / 7;
    p = p * z + 2.0 / 5;
    p = p * z + 2.0 / 3;
    p = p * z + 2.0;
    return e + s * p * 1.44269504088896340736; // e + ln(m) / ln(2)
}
// pow(x, y) = +-2^(y log2|x|) in double (< 2^-22 relative, < 1 ulp), with
// C99's special cases: pow(x, +-0)
// = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, the sign of x (and -0) for odd
// integer y, NaN for finite x < 0 and finite non-integer y.
PM_VINLINE float pm_pow_precise(float x, float y) {
    float ax = __builtin_fabsf(x);
    double l = ax == 0.0f ? -__builtin_inf() : ax == pm_inf_f() ? __builtin_inf() : pm_log2_d(ax);
    float r = (float)pm_exp2_d((double)y * l);
    bool integer = y == __builtin_truncf(y);
    bool odd = integer && y * 0.5f != __builtin_truncf(y * 0.5f);
    r = odd && __builtin_signbit(x) ? -r : r;
    r = x < 0.0f && x != -pm_inf_f() && !integer ? x - x + __builtin_nanf("") : r;
    r = x != x || y != y ? x + y : r;
    return y == 0.0f || x == 1.0f || (x == -1.0f && (y == pm_inf_f() || y == -pm_inf_f())) ? 1.0f : r;
}
// pow = exp2(y log2 x), as table 8.2 defines it (x > 0).
PM_VINLINE float pm_pow_fast(float x, float y) { return pm_exp2_f(y * pm_log2_fast(x)); }

// ---------------------------------------------------------------------------
// sin, cos, tan: r = x - n pi/2 with |r| <= pi/4, quadrant n mod 4, then
// polynomials for sin r and cos r.
// ---------------------------------------------------------------------------
// The first 256 bits of 2/pi = 0.a2f9836e4e441529... (hexadecimal).
inline constexpr uint32_t pm_two_over_pi_words[8] = {0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0,
                                                     0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561};
// Bits first .. first + count - 1 of 2/pi (bit j weighs 2^-j; bit 0 is 0) as an integer.
constexpr uint64_t pm_two_over_pi_bits(int first, int count) {
    uint64_t v = 0;
    for (int j = first; j < first + count; j++)
        v = v << 1 | (j < 1 ? 0 : (pm_two_over_pi_words[(j - 1) / 32] >> (31 - (j - 1) % 32)) & 1);
    return v;
}
// For a float with biased exponent b >= 151 (|x| >= 2^24, x = M 2^E with an
// integer M < 2^24 and E = b - 150 >= 1): F_E = 2^E 2/pi mod 4 as hi + lo
// (106 bits, truncated: error < 2^-104). Then x 2/pi = M F_E mod 4, as M is an
// integer. Computed by the compiler.
struct pm_trig_table {
    double hi[256], lo[256];
};
constexpr pm_trig_table pm_make_trig_table() {
    pm_trig_table t{};
    for (int b = 151; b < 256; b++) {
        t.hi[b] = (double)pm_two_over_pi_bits(b - 151, 53) * 0x1p-51;
        t.lo[b] = (double)pm_two_over_pi_bits(b - 150 + 52, 53) * 0x1p-104;
    }
    return t;
}
inline constexpr pm_trig_table pm_trig = pm_make_trig_table();

// Precise: r = |x| - n pi/2 computed in double, returned as float (|r| <=
// pi/4, relative error 2^-24 from that rounding), quadrant n mod 4 in q.
// - |x| < 2^24: n = rint(|x| 2/pi) < 2^24, pi/2 as two doubles; the products
//   are exact inside fma, so the error is < 2^-52 |r| + 2^-80.
// - |x| >= 2^24: M F_E mod 4 exactly: p + e = M hi (fma), p mod 4 exactly,
//   then n = rint(t), r = (t - n) + (e + M lo): absolute error < 2^-78 in
//   quadrants. The smallest |r| of any float is > 2^-31 (quadrants), so this
//   is plenty; the reduction is good for every finite float.
PM_VINLINE float pm_reduce(float ax, int &q) {
    double a = ax, n = __builtin_rint(a * 0.63661977236758134308);
    double medium = __builtin_fma(-n, 6.123233995736766036e-17, __builtin_fma(-n, 1.57079632679489655800, a));
    uint32_t u = pm_bits<uint32_t>(ax), b = u >> 23; // b < 256: ax >= 0
    double m = (double)(int)((u & 0x007fffffu) | 0x00800000u);
    double p = m * pm_trig.hi[b], e = __builtin_fma(m, pm_trig.hi[b], -p);
    double t = p - 4.0 * __builtin_rint(p * 0.25), small = __builtin_fma(m, pm_trig.lo[b], e);
    double nl = __builtin_rint(t + small);
    double large = ((t - nl) + small) * 1.57079632679489661923;
    q = (int)(b >= 151 ? nl : n);
    return (float)(b >= 151 ? large : medium);
}
// Fast: n = rint(x 2/pi), r = x - n pi/2 with pi/2 as three floats (accurate
// to |x| ~ 1e5; past that r is clamped, so results stay within [-1, 1]).
PM_VINLINE float pm_reduce_fast(float x, int &quadrant) {
    float n = __builtin_rintf(x * 0.63661977236758134308f);
    quadrant = (int)n;
    float r = __builtin_fmaf(-n, 1.57079637e+00f, x);
    r = __builtin_fmaf(-n, -4.37113883e-08f, r);
    r = __builtin_fmaf(-n, -1.71512451e-15f, r);
    return __builtin_fminf(__builtin_fmaxf(r, -0.785398185f), 0.785398185f);
}
// sin r and cos r for |r| <= pi/4, Taylor series to r^9 / r^10 (< 2^-29).
PM_VINLINE float pm_sin_poly_f(float r) {
    float z = r * r, p = 1.0f / 362880;
    p = __builtin_fmaf(p, z, -1.0f / 5040);
    p = __builtin_fmaf(p, z, 1.0f / 120);
    p = __builtin_fmaf(p, z, -1.0f / 6);
    return __builtin_fmaf(r * z, p, r);
}
PM_VINLINE float pm_cos_poly_f(float r) {
    float z = r * r, p = -1.0f / 3628800;
    p = __builtin_fmaf(p, z, 1.0f / 40320);
    p = __builtin_fmaf(p, z, -1.0f / 720);
    p = __builtin_fmaf(p, z, 1.0f / 24);
    p = __builtin_fmaf(p, z, -0.5f);
    return __builtin_fmaf(z, p, 1.0f);
}
// By quadrant q: sin = sin r, cos r, -sin r, -cos r; cos = sin(x + pi/2);
// tan = sin r / cos r, or -cos r / sin r for odd q.
PM_VINLINE float pm_sin_q(float r, int q) {
    float v = q & 1 ? pm_cos_poly_f(r) : pm_sin_poly_f(r);
    return q & 2 ? -v : v;
}
PM_VINLINE float pm_tan_q(float r, int q) {
    float s = pm_sin_poly_f(r), c = pm_cos_poly_f(r);
    return q & 1 ? -c / s : s / c;
}
// Precise: on |x| (sin and tan are odd); inf and NaN give NaN. With glibc's
// libmvec (PM_LIBMVEC, set by MSLCompiler) they are its vector sinf / cosf /
// tanf instead: as accurate (< 2 ulp measured), and much faster, as they
// reduce huge arguments only in the lanes that have one.
#if PM_LIBMVEC
PM_VINLINE float pm_sin_precise(float x) { return __builtin_sinf(x); }
PM_VINLINE float pm_cos_precise(float x) { return __builtin_cosf(x); }
PM_VINLINE float pm_tan_precise(float x) { return __builtin_tanf(x); }
#else
PM_VINLINE float pm_sin_precise(float x) {
    int q;
    float r = pm_reduce(__builtin_fabsf(x), q), v = pm_sin_q(r, q);
    return __builtin_isfinite(x) ? __builtin_copysignf(1.0f, x) * v : x - x;
}
PM_VINLINE float pm_cos_precise(float x) {
    int q;
    float r = pm_reduce(__builtin_fabsf(x), q);
    return __builtin_isfinite(x) ? pm_sin_q(r, q + 1) : x - x;
}
PM_VINLINE float pm_tan_precise(float x) {
    int q;
    float r = pm_reduce(__builtin_fabsf(x), q), v = pm_tan_q(r, q);
    return __builtin_isfinite(x) ? __builtin_copysignf(1.0f, x) * v : x - x;
}
#endif
PM_VINLINE float pm_sin_fast(float x) {
    int q;
    float r = pm_reduce_fast(x, q);
    return pm_sin_q(r, q);
}
PM_VINLINE float pm_cos_fast(float x) {
    int q;
    float r = pm_reduce_fast(x, q);
    return pm_sin_q(r, q + 1);
}
PM_VINLINE float pm_tan_fast(float x) {
    int q;
    float r = pm_reduce_fast(x, q);
    return pm_tan_q(r, q);
}

} // namespace metal
