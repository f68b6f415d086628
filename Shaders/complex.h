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
    if (z.im == 0.0f) return cfloat(exp(z.re), z.im);
    float e = exp(z.re);
    return cfloat(e * cos(z.im), e * sin(z.im));
}
METAL_FUNC cfloat c_log(cfloat z) { return cfloat(log(c_abs(z)), atan2(z.im, z.re)); }
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
METAL_FUNC cfloat c_sinh(cfloat z) { return cfloat(sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im)); }
METAL_FUNC cfloat c_cosh(cfloat z) { return cfloat(cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im)); }
METAL_FUNC cfloat c_tanh(cfloat z) {
    // (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); for large |x| the limit (+-1, 0 * sin 2y)
    if (fabs(z.re) > 15.0f) return cfloat(copysign(1.0f, z.re), copysign(0.0f, sin(2.0f * z.im)));
    float d = cosh(2.0f * z.re) + cos(2.0f * z.im);
    return cfloat(sinh(2.0f * z.re) / d, sin(2.0f * z.im) / d);
}
METAL_FUNC cfloat c_asinh(cfloat z) {  // log(z + sqrt(z^2 + 1)), in the half plane where it does not cancel
    bool neg = z.re < 0.0f;
    cfloat w = neg ? -z : z;
    cfloat r = c_log(w + c_sqrt(w * w + cfloat(1.0f, 0.0f)));
    return neg ? -r : r;
}
METAL_FUNC cfloat c_acosh(cfloat z) {  // log(z + sqrt(z + 1) sqrt(z - 1))
    return c_log(z + c_sqrt(z + cfloat(1.0f, 0.0f)) * c_sqrt(z - cfloat(1.0f, 0.0f)));
}
METAL_FUNC cfloat c_atanh(cfloat z) {  // (log(1 + z) - log(1 - z)) / 2
    cfloat one(1.0f, 0.0f);
    cfloat r = c_log(one + z) - c_log(one - z);
    return cfloat(0.5f * r.re, 0.5f * r.im);
}
