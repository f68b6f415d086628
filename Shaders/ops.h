// pymetal's op functors: one small struct per operation, so that a new
// elementwise op is one functor here and one row in the Python op table
// (pymetal/_ops.py), which generates the kernel instantiations.
//
// Unary functors: `template <typename T> U operator()(T x)`; binary ones take
// (T a, T b). Floating-point functors compute half and bfloat in float and
// round once (MLX does the same), via F(x) and the result's cast.
#pragma once
#include <metal_stdlib>
#include "complex.h"
using namespace metal;

template <typename T> METAL_FUNC float F(T x) { return static_cast<float>(x); }
template <typename T> METAL_FUNC bool is_nan(T x) { return x != x; }

// ---- seed ops (the first kernels; pymetal.shaders().square_float32 etc.) ----
struct Square { template <typename T> T operator()(T x) const { return x * x; } };
struct Cube   { template <typename T> T operator()(T x) const { return x * x * x; } };
struct Log    { template <typename T> T operator()(T x) const { return T(log(F(x))); } };
struct Exp    { template <typename T> T operator()(T x) const { return T(exp(F(x))); } };
struct Sqrt   { template <typename T> T operator()(T x) const { return T(sqrt(F(x))); } };
struct Negate { template <typename T> T operator()(T x) const { return T(-x); } };

// ---- unary, same type ---------------------------------------------------------
struct Identity { template <typename T> T operator()(T x) const { return x; } };
struct Abs {
    template <typename T> T operator()(T x) const { return x < T(0) ? T(-x) : x; }
    float operator()(float x) const { return fabs(x); }
    half operator()(half x) const { return fabs(x); }
    bfloat operator()(bfloat x) const { return bfloat(fabs(float(x))); }  // clears the sign of -0 too
    bool operator()(bool x) const { return x; }
    float operator()(cfloat x) const { return c_abs(x); }  // complex: the modulus, a real
};
struct Sign {
    template <typename T> T operator()(T x) const { return T((x > T(0)) - (x < T(0))); }
    float operator()(float x) const { return is_nan(x) ? x : float((x > 0.0f) - (x < 0.0f)); }
    template <typename T> T flt(T x) const { return is_nan(x) ? x : T(float((x > T(0)) - (x < T(0)))); }
    half operator()(half x) const { return flt(x); }
    bfloat operator()(bfloat x) const { return flt(x); }
};
struct Rsqrt      { template <typename T> T operator()(T x) const { return T(rsqrt(F(x))); } };
struct Reciprocal { template <typename T> T operator()(T x) const { return T(1.0f / F(x)); } };
struct Exp2       { template <typename T> T operator()(T x) const { return T(exp2(F(x))); } };
struct Log2       { template <typename T> T operator()(T x) const { return T(log2(F(x))); } };
struct Log10      { template <typename T> T operator()(T x) const { return T(log10(F(x))); } };
// MSL has no expm1 / log1p: Kahan's forms, accurate near 0 (no cancellation).
struct Expm1 {
    template <typename T> T operator()(T x) const {
        float v = F(x), u = exp(v);
        if (u == 1.0f) return x;
        float um1 = u - 1.0f;
        if (um1 == -1.0f) return T(-1.0f);
        if (isinf(u)) return T(u);
        return T(um1 * (v / log(u)));
    }
};
struct Log1p { template <typename T> T operator()(T x) const { return T(log1p_f(F(x))); } };  // complex.h
struct Sin   { template <typename T> T operator()(T x) const { return T(sin(F(x))); } };
struct Cos   { template <typename T> T operator()(T x) const { return T(cos(F(x))); } };
struct Tan   { template <typename T> T operator()(T x) const { return T(tan(F(x))); } };
struct Asin  { template <typename T> T operator()(T x) const { return T(asin(F(x))); } };
struct Acos  { template <typename T> T operator()(T x) const { return T(acos(F(x))); } };
struct Atan  { template <typename T> T operator()(T x) const { return T(atan(F(x))); } };
struct Sinh  { template <typename T> T operator()(T x) const { return T(sinh(F(x))); } };
struct Cosh  { template <typename T> T operator()(T x) const { return T(cosh(F(x))); } };
struct Tanh  { template <typename T> T operator()(T x) const { return T(tanh(F(x))); } };
struct Asinh { template <typename T> T operator()(T x) const { return T(asinh(F(x))); } };
struct Acosh { template <typename T> T operator()(T x) const { return T(acosh(F(x))); } };
struct Atanh { template <typename T> T operator()(T x) const { return T(atanh(F(x))); } };
struct Floor { template <typename T> T operator()(T x) const { return T(floor(F(x))); } };
struct Ceil  { template <typename T> T operator()(T x) const { return T(ceil(F(x))); } };
struct Rint  { template <typename T> T operator()(T x) const { return T(rint(F(x))); } }; // half to even, as np.round
struct Trunc { template <typename T> T operator()(T x) const { return T(trunc(F(x))); } };
struct LogicalNot { template <typename T> bool operator()(T x) const { return !bool(x); } };
struct BitwiseInvert {
    template <typename T> T operator()(T x) const { return T(~x); }
    bool operator()(bool x) const { return !x; }
};

// ---- unary -> bool ------------------------------------------------------------
struct IsNan    { template <typename T> bool operator()(T x) const { return is_nan(x); } };
struct IsInf    { template <typename T> bool operator()(T x) const { return isinf(F(x)); } };
struct IsFinite { template <typename T> bool operator()(T x) const { return isfinite(F(x)); } };
struct Signbit  { template <typename T> bool operator()(T x) const { return signbit(F(x)); } };

// ---- activations (pymetal.nn) ----------------------------------------------------
// erf and erfc: fdlibm's rational approximations (s_erff.c) in float, < 2 ulp.
// erfc is computed directly for large arguments, so gelu's left tail keeps its
// relative accuracy instead of cancelling in 1 + erf(x).
METAL_FUNC float erf_small(float x) {  // |x| < 0.84375
    float z = x * x;
    float p = 1.28379166e-01f + z * (-3.25042108e-01f + z * (-2.84817495e-02f + z * (-5.77027029e-03f + z * -2.37630166e-05f)));
    float q = 1.0f + z * (3.97917223e-01f + z * (6.50222499e-02f + z * (5.08130628e-03f + z * (1.32494738e-04f + z * -3.96022827e-06f))));
    return x + x * (p / q);
}
METAL_FUNC float erfc_pos(float a) {  // a >= 0.84375
    if (a < 1.25f) {
        float s = a - 1.0f;
        float p = -2.36211856e-03f + s * (4.14856118e-01f + s * (-3.72207877e-01f + s * (3.18346619e-01f + s * (-1.10894694e-01f + s * (3.54783043e-02f + s * -2.16637559e-03f)))));
        float q = 1.0f + s * (1.06420880e-01f + s * (5.40397918e-01f + s * (7.18286526e-02f + s * (1.26171216e-01f + s * (1.36370836e-02f + s * 1.19844998e-02f)))));
        return 1.0f - 8.45062911e-01f - p / q;
    }
    if (a >= 28.0f) return 0.0f;
    float s = 1.0f / (a * a);
    float p, q;
    if (a < 2.857143f) {
        p = -9.86494403e-03f + s * (-6.93858469e-01f + s * (-1.05586262e+01f + s * (-6.23753357e+01f + s * (-1.62396667e+02f + s * (-1.84605087e+02f + s * (-8.12874374e+01f + s * -9.81432915e+00f))))));
        q = 1.0f + s * (1.96512718e+01f + s * (1.37657761e+02f + s * (4.34565887e+02f + s * (6.45387268e+02f + s * (4.29008148e+02f + s * (1.08635002e+02f + s * (6.57024956e+00f + s * -6.04244135e-02f)))))));
    } else {
        p = -9.86494310e-03f + s * (-7.99283230e-01f + s * (-1.77579546e+01f + s * (-1.60636383e+02f + s * (-6.37566467e+02f + s * (-1.02509516e+03f + s * -4.83519202e+02f)))));
        q = 1.0f + s * (3.03380623e+01f + s * (3.25792511e+02f + s * (1.53672961e+03f + s * (3.19985815e+03f + s * (2.55305029e+03f + s * (4.74528503e+02f + s * -2.24409524e+01f))))));
    }
    float z = as_type<float>(as_type<uint>(a) & 0xfffff000u);
    return exp(-z * z - 0.5625f) * exp((z - a) * (z + a) + p / q) / a;
}
METAL_FUNC float erf_f(float x) {
    float a = fabs(x);
    if (a < 0.84375f) return erf_small(x);
    if (is_nan(x)) return x;
    float r = 1.0f - erfc_pos(a);
    return x < 0.0f ? -r : r;
}
METAL_FUNC float erfc_f(float x) {
    float a = fabs(x);
    if (a < 0.84375f) return 1.0f - erf_small(x);
    if (is_nan(x)) return x;
    float r = erfc_pos(a);
    return x < 0.0f ? 2.0f - r : r;
}
struct Erf      { template <typename T> T operator()(T x) const { return T(erf_f(F(x))); } };
struct Relu     { template <typename T> T operator()(T x) const { return x > T(0) ? x : T(0); } };
struct Sigmoid  { template <typename T> T operator()(T x) const { return T(1.0f / (1.0f + exp(-F(x)))); } };
struct Softplus {  // log(1 + exp(x)) without overflow
    template <typename T> T operator()(T x) const {
        float v = F(x);
        return T(fmax(v, 0.0f) + Log1p()(exp(-fabs(v))));
    }
};
struct Silu { template <typename T> T operator()(T x) const { float v = F(x); return T(v / (1.0f + exp(-v))); } };
struct Gelu { template <typename T> T operator()(T x) const { float v = F(x); return T(0.5f * v * erfc_f(-v * M_SQRT1_2_F)); } };
struct GeluTanh {  // 0.5 x (1 + tanh(u)) = x sigmoid(2u): no cancellation in the left tail
    template <typename T> T operator()(T x) const {
        float v = F(x);
        return T(v / (1.0f + exp(-1.5957691216057308f * (v + 0.044715f * v * v * v))));
    }
};

// ---- binary, same type ------------------------------------------------------------
struct Add { template <typename T> T operator()(T a, T b) const { return T(a + b); } bool operator()(bool a, bool b) const { return a || b; } };
struct Sub { template <typename T> T operator()(T a, T b) const { return T(a - b); } };
struct Mul { template <typename T> T operator()(T a, T b) const { return T(a * b); } bool operator()(bool a, bool b) const { return a && b; } };
struct Div { template <typename T> T operator()(T a, T b) const { return T(F(a) / F(b)); } float operator()(float a, float b) const { return a / b; } };
struct Max {  // NaN wins, as np.maximum
    template <typename T> T operator()(T a, T b) const { return (is_nan(a) || a > b) ? a : b; }
};
struct Min {
    template <typename T> T operator()(T a, T b) const { return (is_nan(a) || a < b) ? a : b; }
};
// Python's floor division and modulo: the result takes the divisor's sign.
// Integer division by zero gives 0 (NumPy's value; a GPU does not trap).
struct FloorDivide {
    template <typename T> T operator()(T a, T b) const {
        if (b == T(0)) return T(0);
        if (T(-1) < T(0) && b == T(-1)) return T(T(0) - a); // INT_MIN / -1 wraps, no trap
        T q = a / b;
        return (a % b != T(0) && ((a < T(0)) != (b < T(0)))) ? T(q - T(1)) : q;
    }
    template <typename T> T flt(T x, T y) const {
        float a = F(x), b = F(y);
        // The Array API's values with an infinite operand (2024.12): inf // 2 is inf and
        // 3 // -inf is -0, which a / b gives (NumPy and Python give NaN and -1 through fmod).
        if (b == 0.0f || isinf(a) != isinf(b)) return T(a / b);
        float m = fmod(a, b);
        float d = (a - m) / b;
        if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) d -= 1.0f;
        float f = floor(d);
        if (d - f > 0.5f) f += 1.0f;
        return T(d == 0.0f ? copysign(0.0f, a / b) : f);
    }
    float operator()(float a, float b) const { return flt(a, b); }
    half operator()(half a, half b) const { return flt(a, b); }
    bfloat operator()(bfloat a, bfloat b) const { return flt(a, b); }
};
struct Remainder {
    template <typename T> T operator()(T a, T b) const {
        if (b == T(0)) return T(0);
        if (T(-1) < T(0) && b == T(-1)) return T(0);
        T r = a % b;
        return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
    }
    template <typename T> T flt(T x, T y) const {
        float a = F(x), b = F(y);
        if (b == 0.0f) return T(fmod(a, b));
        float m = fmod(a, b);
        if (m != 0.0f) { if ((b < 0.0f) != (m < 0.0f)) m += b; }
        else m = copysign(0.0f, b);
        return T(m);
    }
    float operator()(float a, float b) const { return flt(a, b); }
    half operator()(half a, half b) const { return flt(a, b); }
    bfloat operator()(bfloat a, bfloat b) const { return flt(a, b); }
};
struct Pow {
    // Integers: exact, by squaring (wraps like NumPy); negative exponents give
    // the truncated exact value (1, -1 or 0).
    template <typename T> T operator()(T a, T b) const {
        if (b < T(0)) return a == T(1) ? T(1) : (a == T(-1) ? ((b & T(1)) ? T(-1) : T(1)) : T(0));
        T r = T(1);
        while (b != T(0)) {
            if (b & T(1)) r = T(r * a);
            a = T(a * a);
            b = T(b >> 1);
        }
        return r;
    }
    bool operator()(bool a, bool b) const { return a || !b; }
    float operator()(float a, float b) const { return pow(a, b); }
    half operator()(half a, half b) const { return half(pow(F(a), F(b))); }
    bfloat operator()(bfloat a, bfloat b) const { return bfloat(pow(F(a), F(b))); }
};
struct Atan2    { template <typename T> T operator()(T a, T b) const { return T(atan2(F(a), F(b))); } };
struct Hypot {  // scaled, so that large inputs do not overflow
    template <typename T> T operator()(T a, T b) const {
        float x = fabs(F(a)), y = fabs(F(b));
        if (isinf(x) || isinf(y)) return T(INFINITY);
        if (is_nan(x) || is_nan(y)) return T(NAN);  // fmax/fmin below would drop a NaN
        float m = fmax(x, y), n = fmin(x, y);
        if (m == 0.0f) return T(0.0f);
        float r = n / m;
        return T(m * sqrt(1.0f + r * r));
    }
};
struct NextAfter {  // the next representable value of a's own type towards b (bit stepping)
    template <typename T, typename U> static T step(T a, T b) {
        if (is_nan(a) || is_nan(b)) return T(F(a) + F(b));
        if (a == b) return b;
        if (a == T(0)) return b > T(0) ? as_type<T>(U(1)) : T(-as_type<T>(U(1)));
        U bits = as_type<U>(a);
        bits = ((a < b) == (a > T(0))) ? U(bits + 1) : U(bits - 1);
        return as_type<T>(bits);
    }
    float operator()(float a, float b) const { return step<float, uint>(a, b); }
    half operator()(half a, half b) const { return step<half, ushort>(a, b); }
    bfloat operator()(bfloat a, bfloat b) const { return step<bfloat, ushort>(a, b); }
};
struct Copysign { template <typename T> T operator()(T a, T b) const { return T(copysign(F(a), F(b))); } };
struct LogAddExp {
    template <typename T> T operator()(T a, T b) const {
        float x = F(a), y = F(b);
        if (x == y) return T(x + M_LN2_F);  // also +-inf
        float m = fmax(x, y);
        if (is_nan(m)) return T(x + y);
        return T(m + Log1p()(exp(-fabs(x - y))));
    }
};
struct BitwiseAnd { template <typename T> T operator()(T a, T b) const { return T(a & b); } };
struct BitwiseOr  { template <typename T> T operator()(T a, T b) const { return T(a | b); } };
struct BitwiseXor { template <typename T> T operator()(T a, T b) const { return T(a ^ b); } };
// Shifts by the type's width or more (or by a negative count) give what
// NumPy gives: 0, or -1 for a right shift of a negative value.
struct LeftShift {
    template <typename T> T operator()(T a, T b) const {
        return (b < T(0) || ulong(b) >= sizeof(T) * 8) ? T(0) : T(a << b);
    }
};
struct RightShift {
    template <typename T> T operator()(T a, T b) const {
        return (b < T(0) || ulong(b) >= sizeof(T) * 8) ? T(a < T(0) ? T(-1) : T(0)) : T(a >> b);
    }
};
struct LeakyRelu { template <typename T> T operator()(T x, T slope) const { return x > T(0) ? x : T(F(x) * F(slope)); } };

// ---- binary -> bool -------------------------------------------------------------------
struct Equal        { template <typename T> bool operator()(T a, T b) const { return a == b; } };
struct NotEqual     { template <typename T> bool operator()(T a, T b) const { return a != b; } };
struct Less         { template <typename T> bool operator()(T a, T b) const { return a < b; } };
struct LessEqual    { template <typename T> bool operator()(T a, T b) const { return a <= b; } };
struct Greater      { template <typename T> bool operator()(T a, T b) const { return a > b; } };
struct GreaterEqual { template <typename T> bool operator()(T a, T b) const { return a >= b; } };
struct LogicalAnd   { template <typename T> bool operator()(T a, T b) const { return bool(a) && bool(b); } };
struct LogicalOr    { template <typename T> bool operator()(T a, T b) const { return bool(a) || bool(b); } };
struct LogicalXor   { template <typename T> bool operator()(T a, T b) const { return bool(a) != bool(b); } };

// ---- ternary ----------------------------------------------------------------------------
struct Where { template <typename T> T operator()(bool c, T x, T y) const { return c ? x : y; } };
struct Clip {  // min(max(x, lo), hi), NaN propagates from x
    template <typename T> T operator()(T x, T lo, T hi) const {
        if (is_nan(x)) return x;
        T r = x < lo ? lo : x;
        return r > hi ? hi : r;
    }
};

// ---- complex64 (cfloat) ------------------------------------------------------------------
// The generic functors above compute through F(x), a real float; for cfloat
// these specialisations take their place (Square, Negate, Identity, Add, Sub,
// Mul, Equal, NotEqual and IsNan work as written through cfloat's operators).
struct Conj { template <typename T> T operator()(T x) const { return x; } };
template <> METAL_FUNC cfloat Conj::operator()<cfloat>(cfloat x) const { return cfloat(x.re, -x.im); }
struct Real { float operator()(cfloat x) const { return x.re; } };
struct Imag { float operator()(cfloat x) const { return x.im; } };
#define PM_CUNARY(Op, expr) template <> METAL_FUNC cfloat Op::operator()<cfloat>(cfloat z) const { return expr; }
PM_CUNARY(Exp, c_exp(z))
PM_CUNARY(Log, c_log(z))
PM_CUNARY(Sqrt, c_sqrt(z))
// sign: z / |z|, 0 for 0, NaN + NaN i if a part is NaN (the standard); one infinite part
// gives the unit in its direction, two give NaN (as NumPy).
PM_CUNARY(Sign, (is_nan(z.re) || is_nan(z.im)) ? cfloat(NAN, NAN)
                : (z.re == 0.0f && z.im == 0.0f) ? cfloat(0.0f, 0.0f)
                : (isinf(z.re) != isinf(z.im)) ? cfloat(isinf(z.re) ? copysign(1.0f, z.re) : 0.0f,
                                                       isinf(z.im) ? copysign(1.0f, z.im) : 0.0f)
                : cfloat(z.re / c_abs(z), z.im / c_abs(z)))
PM_CUNARY(Reciprocal, cfloat(1.0f, 0.0f) / z)
PM_CUNARY(Log2, cfloat(c_log(z).re * M_LOG2E_F, c_log(z).im * M_LOG2E_F))
PM_CUNARY(Log10, cfloat(c_log(z).re * M_LOG10E_F, c_log(z).im * M_LOG10E_F))
// expm1 and log1p without cancellation near 0: exp(x) cos(y) - 1 = expm1(x) cos(y) - 2 sin^2(y/2).
// On the real axis and with infinite real parts, C99's values (as exp): no inf * 0 or inf - inf.
PM_CUNARY(Expm1, z.im == 0.0f ? cfloat(z.re == 0.0f ? 0.0f : Expm1()(z.re), z.im) // e^(+-0) - 1 = +0, as C99's cexp
                 : (isinf(z.re) && !isfinite(z.im)) ? (z.re < 0.0f ? cfloat(-1.0f, 0.0f) : cfloat(z.re, NAN))
                 : cfloat(Expm1()(z.re) * cos(z.im) - 2.0f * sin(0.5f * z.im) * sin(0.5f * z.im), exp(z.re) * sin(z.im)))
PM_CUNARY(Log1p, c_log1p(z))
PM_CUNARY(Sinh, c_sinh(z))
PM_CUNARY(Cosh, c_cosh(z))
PM_CUNARY(Tanh, c_tanh(z))
PM_CUNARY(Asinh, c_asinh(z))
PM_CUNARY(Acosh, c_acosh(z))
PM_CUNARY(Atanh, c_atanh(z))
PM_CUNARY(Sin, c_div_i(c_sinh(c_mul_i(z))))   // sin z = -i sinh(i z)
PM_CUNARY(Cos, c_cosh(c_mul_i(z)))            // cos z = cosh(i z)
PM_CUNARY(Tan, c_div_i(c_tanh(c_mul_i(z))))   // tan z = -i tanh(i z)
PM_CUNARY(Asin, c_asin(z))
PM_CUNARY(Acos, c_acos(z))
PM_CUNARY(Atan, c_div_i(c_atanh(c_mul_i(z)))) // atan z = -i atanh(i z)
PM_CUNARY(Rint, cfloat(rint(z.re), rint(z.im)))
#undef PM_CUNARY
template <> METAL_FUNC bool IsInf::operator()<cfloat>(cfloat z) const { return isinf(z.re) || isinf(z.im); }
template <> METAL_FUNC bool IsFinite::operator()<cfloat>(cfloat z) const { return isfinite(z.re) && isfinite(z.im); }
template <> METAL_FUNC cfloat Div::operator()<cfloat>(cfloat a, cfloat b) const { return a / b; }
template <> METAL_FUNC cfloat Pow::operator()<cfloat>(cfloat a, cfloat b) const {
    if (b.re == 0.0f && b.im == 0.0f) return cfloat(1.0f, 0.0f);
    if (a.re == 0.0f && a.im == 0.0f && b.im == 0.0f && b.re > 0.0f) return cfloat(0.0f, 0.0f);
    // Integer powers up to 100 by repeated squaring, as NumPy's (exp(b log a) loses digits:
    // (1.5e14j) ** 1 had a real part of -6.5e6)
    if (b.im == 0.0f && b.re == floor(b.re) && fabs(b.re) <= 100.0f) {
        int n = int(fabs(b.re));
        cfloat r = cfloat(1.0f, 0.0f), p = b.re < 0.0f ? cfloat(1.0f, 0.0f) / a : a;  // (1/a)^n: no 1/inf
        bool first = true;  // r = p, not (1 + 0i) * p: 0 * inf would make a NaN part
        for (; n; n >>= 1) {
            if (n & 1) {
                r = first ? p : r * p;
                first = false;
            }
            p = p * p;
        }
        return r;
    }
    cfloat w = b * c_log(a);
    // |a^b| = e^Re(w) is zero in float below e^-104, whatever the angle Im(w): an angle that
    // overflowed while finite inputs were multiplied ((4e36i) ** (4e36i): Im(w) = 3.4028e38 rounds
    // to inf) must not make the zero a NaN
    if (w.re < -104.0f && isinf(w.im) && isfinite(a.re) && isfinite(a.im) && isfinite(b.re) && isfinite(b.im))
        return cfloat(0.0f, 0.0f);
    return c_exp(w);
}
