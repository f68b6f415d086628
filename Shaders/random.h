// Random numbers for pm.random: the Philox4x32-10 counter-based generator
// (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011; cuRAND's and JAX's default) and the samplers built on it.
//
// Philox is a keyed bijection of 128-bit counters: the numbers of a value are
// philox(counter, key) for counters that name the value, never a state
// carried from one thread to the next. So a seed gives the same numbers on
// every device, at any threadgroup size and thread count.
//
// Counters: (index low, index high, call, block). `call` numbers a generator's
// calls (each call draws new numbers); `index` is the element (or, for the
// samplers that take four values at a time, the group of four); `block`
// counts the element's own 128-bit blocks, for samplers that reject and draw
// again (integers, gamma, Poisson, binomial, beta). Block 0 belongs to the
// samplers that take four values of one block; an element's own stream starts
// at block 1, so the two kinds never share a block.
#pragma once
#include <metal_stdlib>
using namespace metal;

struct RandomParams {
    ulong n;        // elements to write
    ulong range;    // integers: high - low + 1 values (0: all 2^64)
    long low;       // integers: the lowest value
    uint key0, key1; // the generator's key
    uint call;      // the generator's call number
    uint stride_a;  // parameter buffers: 1 = one value per element, 0 = one for all
    uint stride_b;
    float a, b;     // scalar parameters (uniform / normal: out = a + b * x)
};

inline uint4 pm_philox4x32_10(uint4 c, uint2 k) {
    const uint M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    for (int round = 0; round < 10; round++) {
        uint hi0 = mulhi(M0, c.x), lo0 = M0 * c.x;
        uint hi1 = mulhi(M1, c.z), lo1 = M1 * c.z;
        c = uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k += uint2(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}

inline uint4 pm_philox_block(constant RandomParams& p, ulong index, uint block) {
    return pm_philox4x32_10(uint4(uint(index), uint(index >> 32), p.call, block), uint2(p.key0, p.key1));
}

// [0, 1) with 24 random bits (every float32 it can give is exact).
inline float pm_uniform(uint w) { return float(w >> 8) * 0x1.0p-24f; }
// (0, 1): for logarithms and divisions.
inline float pm_uniform_open(uint w) { return (float(w >> 8) + 0.5f) * 0x1.0p-24f; }

// log(1 + x) without losing x's digits when x is small (MSL has no log1p):
// the rounding of 1 + x cancels in log(u) / (u - 1) (Goldberg 1991).
inline float pm_log1p(float x) {
    float u = 1.0f + x;
    return u == 1.0f ? x : log(u) * (x / (u - 1.0f));
}

// One element's own numbers: block after block of its own counter.
struct PmStream {
    uint2 key;
    uint call;
    ulong index;
    uint block;
    uint4 words;
    int used;
    float spare; // Box-Muller's second normal
    bool has_spare;

    PmStream(constant RandomParams& p, ulong i, uint first_block)
        : key(uint2(p.key0, p.key1)), call(p.call), index(i), block(first_block), words(0), used(4), spare(0),
          has_spare(false) {}

    uint next() {
        if (used == 4) {
            words = pm_philox4x32_10(uint4(uint(index), uint(index >> 32), call, block++), key);
            used = 0;
        }
        return words[used++];
    }
    ulong next64() { return ulong(next()) << 32 | ulong(next()); }
    float uniform() { return pm_uniform(next()); }
    float uniform_open() { return pm_uniform_open(next()); }
    float normal() {
        if (has_spare) {
            has_spare = false;
            return spare;
        }
        float r = sqrt(-2.0f * log(uniform_open())), c;
        float s = sincos(2.0f * M_PI_F * uniform(), c);
        spare = r * s;
        has_spare = true;
        return r * c;
    }
};

// A value in [0, range) (range 0: any 64-bit value), without bias: draws with
// the bits below range's top bit until one is below range.
inline ulong pm_bounded(thread PmStream& s, ulong range) {
    if (range == 0) return s.next64();
    ulong top = range - 1, mask = top;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4;
    mask |= mask >> 8; mask |= mask >> 16; mask |= mask >> 32;
    if (top <= 0xFFFFFFFFul) {
        for (;;) {
            ulong v = ulong(s.next()) & mask;
            if (v <= top) return v;
        }
    }
    for (;;) {
        ulong v = s.next64() & mask;
        if (v <= top) return v;
    }
}

// Gamma(shape, 1): Marsaglia and Tsang (2000); shape < 1 through shape + 1
// and U^(1/shape) (their note).
inline float pm_gamma(thread PmStream& s, float shape) {
    if (shape <= 0.0f) return 0.0f;
    float boost = 1.0f;
    if (shape < 1.0f) {
        boost = pow(s.uniform_open(), 1.0f / shape);
        shape += 1.0f;
    }
    const float d = shape - 1.0f / 3.0f, c = rsqrt(9.0f * d);
    for (;;) {
        float x, v;
        do {
            x = s.normal();
            v = 1.0f + c * x;
        } while (v <= 0.0f);
        v = v * v * v;
        float u = s.uniform_open(), x2 = x * x;
        if (u < 1.0f - 0.0331f * x2 * x2 || log(u) < 0.5f * x2 + d * (1.0f - v + log(v)))
            return d * v * boost;
    }
}

// log(k!) for k < 10, and lgamma(k + 1) - Stirling's formula for k < 10 (the
// tail of the series, exactly where the series is poor).
constant float pm_log_factorial[10] = {
    0.0f, 0.0f, 0.693147180559945f, 1.7917594692280554f, 3.178053830347945f,
    4.787491742782047f, 6.579251212010102f, 8.525161361065415f, 10.604602902745249f, 12.801827480081467f};
constant float pm_stirling_tail_table[10] = {
    0.08106146679532733f, 0.04134069595540946f, 0.027677925684997717f, 0.02079067210376584f,
    0.01664469118982126f, 0.013876128823072875f, 0.011896709945893313f, 0.010411265261973668f,
    0.00925546218270945f, 0.008330563433359472f};

// lgamma(k + 1) - ((k + 0.5) log(k + 1) - (k + 1) + log(2 pi) / 2).
inline float pm_stirling_tail(float k) {
    if (k < 10.0f) return pm_stirling_tail_table[int(k)];
    float x = k + 1.0f, x2 = x * x;
    return (1.0f / 12.0f - (1.0f / 360.0f - 1.0f / (1260.0f * x2)) / x2) / x;
}

// Poisson(lam): multiplying uniforms (Knuth) below 10; above, Hormann's PTRS
// (transformed rejection with squeeze, 1993), as NumPy. Positions are kept
// relative to floor(lam) so that float32 stays exact for large lam.
inline long pm_poisson(thread PmStream& s, float lam) {
    if (lam <= 0.0f) return 0;
    if (lam < 10.0f) {
        const float limit = exp(-lam);
        float prod = 1.0f;
        for (long k = 0;; k++) {
            prod *= s.uniform();
            if (prod <= limit) return k;
        }
    }
    const float m = floor(lam), f = lam - m;
    const float slam = sqrt(lam), loglam = log(lam);
    const float b = 0.931f + 2.53f * slam, a = -0.059f + 0.02483f * b;
    const float invalpha = 1.1239f + 1.1328f / (b - 3.4f), vr = 0.9277f - 3.6224f / (b - 2.0f);
    for (;;) {
        float u = s.uniform() - 0.5f, v = s.uniform(), us = 0.5f - fabs(u);
        float dk = floor((2.0f * a / us + b) * u + f + 0.43f); // k - floor(lam)
        float k = m + dk;
        if (us >= 0.07f && v <= vr) return long(k);
        if (k < 0.0f || (us < 0.013f && v > us)) continue;
        // log of the Poisson probability of k, in a form without cancellation:
        // -lam + k log(lam) - lgamma(k + 1) with Stirling's formula for lgamma.
        float logp;
        if (k < 10.0f) {
            logp = -lam + k * loglam - pm_log_factorial[int(k)];
        } else {
            float d = dk + 1.0f - f; // k + 1 - lam
            logp = d + k * pm_log1p(-d / (k + 1.0f)) - 0.5f * log(k + 1.0f) - 0.9189385332046727f - pm_stirling_tail(k);
        }
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= logp) return long(k);
    }
}

// Binomial(n, p) for p <= 1/2: waiting times between successes (inversion)
// when n p < 10; above, Hormann's BTRS (1993), as TensorFlow and JAX.
inline long pm_binomial_low(thread PmStream& s, float n, float p) {
    const float q = pm_log1p(-p);
    float sum = 0.0f;
    for (long count = 0;; count++) {
        sum += ceil(log(s.uniform_open()) / q);
        if (sum > n) return count;
    }
}

inline long pm_binomial_btrs(thread PmStream& s, float n, float p) {
    const float q = 1.0f - p, spq = sqrt(n * p * q);
    const float b = 1.15f + 2.53f * spq, a = -0.0873f + 0.0248f * b + 0.01f * p;
    const float c = n * p + 0.5f, vr = 0.92f - 4.2f / b, r = p / q;
    const float alpha = (2.83f + 5.1f / b) * spq, m = floor((n + 1.0f) * p);
    for (;;) {
        float u = s.uniform() - 0.5f, v = s.uniform(), us = 0.5f - fabs(u);
        float k = floor((2.0f * a / us + b) * u + c);
        if (k < 0.0f || k > n) continue;
        if (us >= 0.07f && v <= vr) return long(k);
        v = log(v * alpha / (a / (us * us) + b));
        float bound = (m + 0.5f) * log((m + 1.0f) / (r * (n - m + 1.0f)))
                    + (n + 1.0f) * pm_log1p((k - m) / (n - k + 1.0f))
                    + (k + 0.5f) * log(r * (n - k + 1.0f) / (k + 1.0f))
                    + pm_stirling_tail(m) + pm_stirling_tail(n - m) - pm_stirling_tail(k) - pm_stirling_tail(n - k);
        if (v <= bound) return long(k);
    }
}

inline long pm_binomial(thread PmStream& s, long n, float p) {
    if (n <= 0 || p <= 0.0f) return 0;
    if (p >= 1.0f) return n;
    const bool flip = p > 0.5f;
    const float pp = flip ? 1.0f - p : p, nf = float(n);
    long k = nf * pp < 10.0f ? pm_binomial_low(s, nf, pp) : pm_binomial_btrs(s, nf, pp);
    return flip ? n - k : k;
}

// Beta(a, b): Johnk's method when both are at most 1 (in logarithms when
// both powers underflow), else from two gamma values (as NumPy).
inline float pm_beta(thread PmStream& s, float a, float b) {
    if (a <= 1.0f && b <= 1.0f) {
        for (;;) {
            float u = s.uniform_open(), v = s.uniform_open();
            float x = pow(u, 1.0f / a), y = pow(v, 1.0f / b), xy = x + y;
            if (xy > 1.0f) continue;
            if (xy > 0.0f) return x / xy;
            float lx = log(u) / a, ly = log(v) / b, lm = max(lx, ly);
            lx -= lm;
            ly -= lm;
            return exp(lx - log(exp(lx) + exp(ly)));
        }
    }
    float x = pm_gamma(s, a), y = pm_gamma(s, b);
    return x / (x + y);
}
