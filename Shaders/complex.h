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
METAL_FUNC cfloat c_exp(cfloat z) {
    float x = z.re, y = z.im;
    if (y == 0.0f) return cfloat(exp(x), y);            // the real axis, exactly (also +-inf, NaN)
    if (isinf(x) && !isfinite(y)) return x < 0.0f ? cfloat(0.0f, 0.0f) : cfloat(x, NAN);
    float e = exp(x);
    return cfloat(e * cos(y), e * sin(y));
}
METAL_FUNC cfloat c_log(cfloat z) { return cfloat(log(c_abs(z)), atan2(z.im, z.re)); }
// log(2z) without forming 2z, which can overflow where log(2z) cannot.
METAL_FUNC cfloat c_log_2z(cfloat z) { cfloat r = c_log(z); return cfloat(r.re + M_LN2_F, r.im); }
METAL_FUNC cfloat c_sqrt(cfloat z) {
    if (isinf(z.im)) return cfloat(INFINITY, z.im);
    if (z.re == 0.0f && z.im == 0.0f) return cfloat(0.0f, z.im);
    float t = sqrt((fabs(z.re) + c_abs(z)) * 0.5f);
    if (isinf(z.re) && !isnan(z.im)) t = fabs(z.re);
    if (z.re >= 0.0f) return cfloat(t, z.im / (2.0f * t));
    return cfloat(fabs(z.im) / (2.0f * t), copysign(t, z.im));
}
METAL_FUNC cfloat c_mul_i(cfloat z) { return cfloat(-z.im, z.re); }   // i z
METAL_FUNC cfloat c_div_i(cfloat z) { return cfloat(z.im, -z.re); }   // z / i = -i z
// sinh, cosh, tanh with C99 Annex G's values where a part is infinite or NaN
// (sin, cos, tan follow through sin z = -i sinh(iz) and so on).
METAL_FUNC cfloat c_sinh(cfloat z) {
    float x = z.re, y = z.im;
    if (y == 0.0f) return cfloat(sinh(x), y);
    if (isfinite(x) && isfinite(y)) return cfloat(sinh(x) * cos(y), cosh(x) * sin(y));
    if (x == 0.0f) return cfloat(x, NAN);
    if (isinf(x)) return isfinite(y) ? cfloat(x * cos(y), INFINITY * sin(y)) : cfloat(x, NAN);
    return cfloat(NAN, NAN);
}
METAL_FUNC cfloat c_cosh(cfloat z) {
    float x = z.re, y = z.im;
    if (y == 0.0f) return cfloat(cosh(x), isnan(x) ? y : copysign(0.0f, x) * copysign(1.0f, y));
    if (isfinite(x) && isfinite(y)) return cfloat(cosh(x) * cos(y), sinh(x) * sin(y));
    if (x == 0.0f) return cfloat(NAN, 0.0f);
    if (isinf(x)) return isfinite(y) ? cfloat(INFINITY * cos(y), x * sin(y)) : cfloat(INFINITY, NAN);
    return cfloat(NAN, NAN);
}
METAL_FUNC cfloat c_tanh(cfloat z) {
    // (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); for large |x| the limit (+-1, 0 * sin 2y)
    float x = z.re, y = z.im;
    if (isinf(x)) return cfloat(copysign(1.0f, x), copysign(0.0f, isfinite(y) ? sin(2.0f * y) : y));
    if (isnan(x)) return cfloat(x, y == 0.0f ? y : NAN);
    if (!isfinite(y)) return cfloat(x == 0.0f ? x : NAN, NAN);
    if (fabs(x) > 15.0f) return cfloat(copysign(1.0f, x), copysign(0.0f, sin(2.0f * y)));
    float d = cosh(2.0f * x) + cos(2.0f * y);
    return cfloat(sinh(2.0f * x) / d, sin(2.0f * y) / d);
}
// The inverse functions: on their branch cuts the sign of a zero part picks the
// side, so real constants are added to the real part only (adding a complex 1
// would turn an imaginary -0 into +0).
METAL_FUNC cfloat c_add_real(cfloat z, float r) { return cfloat(z.re + r, z.im); }
METAL_FUNC cfloat c_asinh(cfloat z) {  // log(z + sqrt(z^2 + 1)), in the half plane where it does not cancel
    if (isinf(z.re) || isinf(z.im))  // C99: +-inf + i atan2(y, |x|); NaN parts stay NaN
        return cfloat(isnan(z.re) ? INFINITY : copysign(INFINITY, z.re), isnan(z.re) ? NAN : atan2(z.im, fabs(z.re)));
    if (isnan(z.re) && z.im == 0.0f) return z;
    bool neg = signbit(z.re);
    cfloat w = neg ? -z : z;
    // past 1e9, w^2 could overflow and w + sqrt(w^2 + 1) is 2w to float precision
    cfloat r = c_abs(w) > 1.0e9f ? c_log_2z(w) : c_log(w + c_sqrt(c_add_real(w * w, 1.0f)));
    return neg ? -r : r;
}
METAL_FUNC cfloat c_acosh(cfloat z) {  // log(z + sqrt(z + 1) sqrt(z - 1))
    if (isinf(z.re) || isinf(z.im))  // C99: +inf + i atan2(y, x)
        return cfloat(INFINITY, (isnan(z.re) || isnan(z.im)) ? NAN : atan2(z.im, z.re));
    if (z.re == 0.0f && isnan(z.im)) return cfloat(NAN, M_PI_2_F);
    if (c_abs(z) > 1.0e9f) return c_log_2z(z);  // z + sqrt(z+1) sqrt(z-1) = 2z to float precision, and 2z could overflow
    return c_log(z + c_sqrt(c_add_real(z, 1.0f)) * c_sqrt(c_add_real(z, -1.0f)));
}
METAL_FUNC cfloat c_atanh(cfloat z) {  // (log(1 + z) - log(1 - z)) / 2
    if (isinf(z.re) || isinf(z.im))  // C99: +-0 + i pi/2 with the signs of the parts
        return cfloat(isnan(z.re) ? 0.0f : copysign(0.0f, z.re), isnan(z.im) ? NAN : copysign(M_PI_2_F, z.im));
    if (z.re == 0.0f && isnan(z.im)) return z;
    cfloat r = c_log(c_add_real(z, 1.0f)) - c_log(cfloat(1.0f - z.re, -z.im));
    return cfloat(0.5f * r.re, 0.5f * r.im);
}
