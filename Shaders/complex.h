// complex64 for the array kernels: MSL has no complex type, so `cfloat` is a
// plain struct of two floats with NumPy's complex64 layout (real, imaginary).
// Arithmetic follows C99 Annex G where it matters for the Array API's special
// cases (division scaled as in Smith's algorithm so that large parts do not
// overflow, exp/log/sqrt with exact zero imaginary parts on the real axis).
#pragma once
#include <metal_stdlib>
using namespace metal;

struct cfloat {
    float re;
    float im;
    cfloat() = default;
    METAL_FUNC constexpr cfloat(float r, float i) : re(r), im(i) {}
    // Conversions from the real types (astype, weak scalars): imaginary part 0.
    template <typename T> METAL_FUNC explicit cfloat(T x) : re(static_cast<float>(x)), im(0.0f) {}
    // To a real type: the real part (NumPy discards the imaginary part); to bool: non-zero.
    template <typename T> METAL_FUNC explicit operator T() const { return static_cast<T>(re); }
    METAL_FUNC explicit operator bool() const { return re != 0.0f || im != 0.0f; }
};

METAL_FUNC cfloat operator+(cfloat a, cfloat b) { return cfloat(a.re + b.re, a.im + b.im); }
METAL_FUNC cfloat operator-(cfloat a, cfloat b) { return cfloat(a.re - b.re, a.im - b.im); }
METAL_FUNC cfloat operator-(cfloat a) { return cfloat(-a.re, -a.im); }
METAL_FUNC cfloat operator*(cfloat a, cfloat b) {
    return cfloat(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
METAL_FUNC cfloat operator/(cfloat a, cfloat b) {  // Smith's algorithm
    if (fabs(b.re) >= fabs(b.im)) {
        if (b.re == 0.0f && b.im == 0.0f) return cfloat(a.re / fabs(b.re), a.im / fabs(b.re));
        float r = b.im / b.re, d = b.re + b.im * r;
        return cfloat((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    float r = b.re / b.im, d = b.im + b.re * r;
    return cfloat((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
METAL_FUNC bool operator==(cfloat a, cfloat b) { return a.re == b.re && a.im == b.im; }
METAL_FUNC bool operator!=(cfloat a, cfloat b) { return !(a == b); }

METAL_FUNC float c_abs(cfloat z) {  // hypot without overflow
    float x = fabs(z.re), y = fabs(z.im);
    if (isinf(x) || isinf(y)) return INFINITY;  // even with a NaN part (C99 hypot)
    if (isnan(x) || isnan(y)) return NAN;
    float m = fmax(x, y), n = fmin(x, y);
    if (m == 0.0f) return 0.0f;
    float r = n / m;
    return m * sqrt(1.0f + r * r);
}
// exp(x) (c + i s) for |c|, |s| <= 1 without overflowing where the product does not:
// past x = 88, exp(x) is inf in float while exp(x) cos(y) may not be, so exp(x / 2) twice.
METAL_FUNC cfloat c_exp_mul(float x, float c, float s) {
    if (x <= 88.0f) { float e = exp(x); return cfloat(e * c, e * s); }
    float h = exp(0.5f * x);
    return cfloat(h * c * h, h * s * h);
}
METAL_FUNC cfloat c_exp(cfloat z) {
    float x = z.re, y = z.im;
    if (y == 0.0f) return cfloat(exp(x), y);            // the real axis, exactly (also +-inf, NaN)
    if (isinf(x) && !isfinite(y)) return x < 0.0f ? cfloat(0.0f, 0.0f) : cfloat(x, NAN);
    return c_exp_mul(x, cos(y), sin(y));
}
// MSL has no log1p: Kahan's form, accurate near 0 (no cancellation).
METAL_FUNC float log1p_f(float v) {
    float u = 1.0f + v;
    if (u == 1.0f) return v;
    if (isinf(u)) return u > 0.0f ? u : NAN;  // log1p(-inf) is NaN
    return log(u) * (v / (u - 1.0f));
}
// log |z| = log m + log1p((n / m)^2) / 2 for m = max(|x|, |y|), n = min: |z| itself is never
// formed, which overflows for |z| past FLT_MAX (log(2.4e38 + 2.4e38i) was inf) and keeps few
// digits for a subnormal z (|1e-45 + 1e-45i| rounds to 1e-45).
METAL_FUNC cfloat c_log(cfloat z) {
    float x = fabs(z.re), y = fabs(z.im), m = fmax(x, y);
    if (m > 0.5f && m < 2.0f)  // |z| near 1: log |z| = log1p((x - 1)(x + 1) + y^2) / 2, no cancellation
        return cfloat(0.5f * log1p_f((z.re - 1.0f) * (z.re + 1.0f) + z.im * z.im), atan2(z.im, z.re));
    if (isnan(x) || isnan(y) || !(m > 0.0f) || isinf(m))  // 0, infinities, NaN: C99's values, through c_abs
        return cfloat(log(c_abs(z)), atan2(z.im, z.re));
    float r = fmin(x, y) / m;
    return cfloat(log(m) + 0.5f * log1p_f(r * r), atan2(z.im, z.re));
}
// log(2z) without forming 2z, which can overflow where log(2z) cannot.
METAL_FUNC cfloat c_log_2z(cfloat z) { cfloat r = c_log(z); return cfloat(r.re + M_LN2_F, r.im); }
// Tiny and huge z are scaled by 2^64 or 2^-64 first and the root by 2^-32 or 2^32
// (exact): (|x| + |z|) / 2 of a subnormal z rounds to 0 (sqrt(1e-45i) was inf), and
// |x| + |z| of a huge one overflows.
METAL_FUNC cfloat c_sqrt(cfloat z) {
    if (isinf(z.im)) return cfloat(INFINITY, z.im);
    if (z.re == 0.0f && z.im == 0.0f) return cfloat(0.0f, z.im);
    float m = fmax(fabs(z.re), fabs(z.im)), up = 1.0f, back = 1.0f;
    if (m < 7.888609052210118e-31f) {                       // 2^-100
        up = 18446744073709551616.0f;                        // 2^64
        back = 2.3283064365386963e-10f;                      // 2^-32
    } else if (m > 1.2676506002282294e30f && isfinite(m)) { // 2^100
        up = 5.421010862427522e-20f;                         // 2^-64
        back = 4294967296.0f;                                // 2^32
    }
    float x = z.re * up, y = z.im * up;
    float t = sqrt((fabs(x) + c_abs(cfloat(x, y))) * 0.5f);
    if (isinf(x) && !isnan(y)) t = fabs(x);
    if (x >= 0.0f) return cfloat(t * back, y / (2.0f * t) * back);
    return cfloat(fabs(y) / (2.0f * t) * back, copysign(t * back, y));
}
METAL_FUNC cfloat c_mul_i(cfloat z) { return cfloat(-z.im, z.re); }   // i z
METAL_FUNC cfloat c_div_i(cfloat z) { return cfloat(z.im, -z.re); }   // z / i = -i z
// sinh, cosh, tanh with C99 Annex G's values where a part is infinite or NaN
// (sin, cos, tan follow through sin z = -i sinh(iz) and so on).
METAL_FUNC cfloat c_sinh(cfloat z) {
    float x = z.re, y = z.im;
    if (y == 0.0f) return cfloat(sinh(x), y);
    if (isfinite(x) && isfinite(y)) {
        if (fabs(x) <= 88.0f) return cfloat(sinh(x) * cos(y), cosh(x) * sin(y));
        cfloat r = c_exp_mul(fabs(x) - M_LN2_F, cos(y), sin(y));  // sinh and cosh are exp(|x|) / 2 here
        return cfloat(x < 0.0f ? -r.re : r.re, r.im);
    }
    if (x == 0.0f) return cfloat(x, NAN);
    if (isinf(x)) return isfinite(y) ? cfloat(x * cos(y), INFINITY * sin(y)) : cfloat(x, NAN);
    return cfloat(NAN, NAN);
}
METAL_FUNC cfloat c_cosh(cfloat z) {
    float x = z.re, y = z.im;
    if (y == 0.0f) return cfloat(cosh(x), isnan(x) ? y : copysign(0.0f, x) * copysign(1.0f, y));
    if (isfinite(x) && isfinite(y)) {
        if (fabs(x) <= 88.0f) return cfloat(cosh(x) * cos(y), sinh(x) * sin(y));
        cfloat r = c_exp_mul(fabs(x) - M_LN2_F, cos(y), sin(y));
        return cfloat(r.re, copysign(1.0f, x) * r.im);
    }
    if (x == 0.0f) return cfloat(NAN, 0.0f);
    if (isinf(x)) return isfinite(y) ? cfloat(INFINITY * cos(y), x * sin(y)) : cfloat(INFINITY, NAN);
    return cfloat(NAN, NAN);
}
METAL_FUNC cfloat c_tanh(cfloat z) {
    // (sinh 2x + i sin 2y) / (cosh 2x + cos 2y) = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y):
    // the right side never forms 2y, which overflows (and makes sin NaN) for |y| > 1.7e38.
    // For large |x|: (+-1, 4 sin y cos y e^-2|x|).
    float x = z.re, y = z.im;
    // +-1 + 0j with the sign of y (the Array API's value; C99 and NumPy take the sign of sin 2y)
    if (isinf(x)) return cfloat(copysign(1.0f, x), copysign(0.0f, y));
    if (isnan(x)) return cfloat(x, y == 0.0f ? y : NAN);
    if (!isfinite(y)) return cfloat(x == 0.0f ? x : NAN, NAN);
    float s = sin(y), c = cos(y);
    if (fabs(x) > 15.0f) return cfloat(copysign(1.0f, x), 4.0f * s * c * exp(-2.0f * fabs(x)));  // cosh 2x ~ e^2|x| / 2
    float sh = sinh(x), d = sh * sh + c * c;
    return cfloat(sh * cosh(x) / d, s * c / d);
}
// The inverse functions: on their branch cuts the sign of a zero part picks the
// side, so real constants are added to the real part only (adding a complex 1
// would turn an imaginary -0 into +0).
METAL_FUNC cfloat c_add_real(cfloat z, float r) { return cfloat(z.re + r, z.im); }
// Re log(1 + z) = log|1 + z|: half log1p(|1 + z|^2 - 1) keeps the precision near 0; where
// that square overflows (parts beyond ~1e19), or near z = -1 (where |1 + z|^2 - 1 is close
// to -1 and log1p cancels; 1 + z is exact there), log|1 + z| has no cancellation to lose.
// It is c_log's real part, which never forms |1 + z|: that overflows for parts near FLT_MAX
// whose logarithm is finite (log1p(2.4e38 + 2.4e38j) has real part 88.7, not inf).
METAL_FUNC float c_log1p_re(cfloat z) {
    if (isinf(z.re) || isinf(z.im)) return INFINITY;
    float s = z.re * (2.0f + z.re) + z.im * z.im;
    return (isinf(s) || s < -0.5f) ? c_log(c_add_real(z, 1.0f)).re : 0.5f * log1p_f(s);
}
METAL_FUNC cfloat c_log1p(cfloat z) { return cfloat(c_log1p_re(z), atan2(z.im, 1.0f + z.re)); }
METAL_FUNC cfloat c_asinh(cfloat z) {
    if (isinf(z.re) || isinf(z.im))  // C99: +-inf + i atan2(y, |x|); NaN parts stay NaN
        return cfloat(isnan(z.re) ? INFINITY : copysign(INFINITY, z.re), isnan(z.re) ? NAN : atan2(z.im, fabs(z.re)));
    if (isnan(z.re) && z.im == 0.0f) return z;
    if (z.re == 0.0f && fabs(z.im) <= 1.0f) return cfloat(z.re, asin(z.im));  // exactly on the imaginary axis
    bool neg = signbit(z.re);
    cfloat w = neg ? -z : z;
    // log(w + sqrt(w^2 + 1)) = log1p(w + w^2 / (1 + sqrt(w^2 + 1))), in the half plane where
    // it does not cancel: log1p keeps the precision near 0 that 1 + w would round away.
    // Past 1e9, w^2 could overflow and w + sqrt(w^2 + 1) is 2w to float precision.
    cfloat r;
    if (c_abs(w) > 1.0e9f) {
        r = c_log_2z(w);
    } else {
        cfloat w2 = w * w;
        r = c_log1p(w + w2 / c_add_real(c_sqrt(c_add_real(w2, 1.0f)), 1.0f));
    }
    return neg ? -r : r;
}
METAL_FUNC cfloat c_acosh(cfloat z) {  // log(z + sqrt(z + 1) sqrt(z - 1))
    if (isinf(z.re) || isinf(z.im))  // C99: +inf + i atan2(y, x)
        return cfloat(INFINITY, (isnan(z.re) || isnan(z.im)) ? NAN : atan2(z.im, z.re));
    if (z.re == 0.0f && isnan(z.im)) return cfloat(NAN, M_PI_2_F);
    if (c_abs(z) > 1.0e9f) return c_log_2z(z);  // z + sqrt(z+1) sqrt(z-1) = 2z to float precision, and 2z could overflow
    return c_log(z + c_sqrt(c_add_real(z, 1.0f)) * c_sqrt(c_add_real(z, -1.0f)));
}
METAL_FUNC cfloat c_atanh(cfloat z) {
    // Re = log(|1 + z| / |1 - z|) / 2 = log1p(4x / ((1 - x)^2 + y^2)) / 4 and
    // Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2 (no difference of two logarithms, which cancels near 0)
    float x = z.re, y = z.im;
    if (isinf(x) || isinf(y))  // C99: +-0 + i pi/2 with the signs of the parts
        return cfloat(isnan(x) ? 0.0f : copysign(0.0f, x), isnan(y) ? NAN : copysign(M_PI_2_F, y));
    if (x == 0.0f && isnan(y)) return z;
    if (isnan(x) || isnan(y)) return cfloat(NAN, NAN);
    float m = fmax(fabs(x), fabs(y));
    if (m > 1.0e18f)  // (1 - x)^2 + y^2 would overflow: Re = x / |z|^2 (scaled), Im = +-pi/2
        return cfloat((x / m) / (m * ((x / m) * (x / m) + (y / m) * (y / m))), copysign(M_PI_2_F, y));
    // Re from |x| (an odd function of x): log1p of a non-negative number, which cannot
    // cancel near x = -1 as log1p(4x / ...) near -1 would.
    // Within 1e-4 of +-1, a^2 + y^2 can underflow (atanh(1 + 1e-22i) came out inf): there
    // log1p(q) is log(q) to float precision, and log(4|x| / h^2) = log(4|x|) - 2 log(h) with
    // h = |a + iy| computed without squaring.
    float a = 1.0f - fabs(x), h = c_abs(cfloat(a, y));
    float re = h < 1.0e-4f ? 0.25f * log(4.0f * fabs(x)) - 0.5f * log(h)
                           : 0.25f * log1p_f(4.0f * fabs(x) / (a * a + y * y));
    return cfloat(copysign(re, x),
                  0.5f * atan2(2.0f * y, (1.0f - x) * (1.0f + x) - y * y));
}
// asin z = -i asinh(i z); acos z = pi/2 - asin z with the imaginary part negated, not
// subtracted from +0 (acos(0) is pi/2 - 0i).
// asin and acos of finite z below 1e9 in magnitude by Kahan's formulas ("Branch cuts for
// complex elementary functions", 1987), from sqrt(1 - z) and sqrt(1 + z): accurate near
// the branch points +-1, where pi/2 - asin(z) cancelled (acos(1 - 6e-5i) lost 5 digits).
// Elsewhere (huge or non-finite parts) through asinh, with C99's special values.
METAL_FUNC bool c_kahan_ok(cfloat z) { return isfinite(z.re) && isfinite(z.im) && fmax(fabs(z.re), fabs(z.im)) < 1.0e9f; }
METAL_FUNC cfloat c_asin(cfloat z) {
    if (!c_kahan_ok(z)) return c_div_i(c_asinh(c_mul_i(z)));
    cfloat a = c_sqrt(cfloat(1.0f - z.re, -z.im)), b = c_sqrt(cfloat(1.0f + z.re, z.im));
    return cfloat(atan2(z.re, a.re * b.re - a.im * b.im), asinh(a.re * b.im - a.im * b.re));
}
METAL_FUNC cfloat c_acos(cfloat z) {
    if (!c_kahan_ok(z)) { cfloat s = c_div_i(c_asinh(c_mul_i(z))); return cfloat(M_PI_2_F - s.re, -s.im); }
    cfloat a = c_sqrt(cfloat(1.0f - z.re, -z.im)), b = c_sqrt(cfloat(1.0f + z.re, z.im));
    return cfloat(2.0f * atan2(a.re, b.re), asinh(b.re * a.im - b.im * a.re));
}
