// pm.random's kernels (pymetal/random.py): every value is a function of the
// generator's key, the call's number and its own index (random.h), so a seed
// gives the same array whatever the device and threadgroup size.
//
// random_uniform_<T>, random_normal_<T>: four values per thread from one
//   Philox block (a + b * x, x uniform in [0, 1) or standard normal); each T
//   gets as many random bits as it holds.
// random_exponential_<T>: b * Exp(1).
// random_integers_<T>: low + a value in [0, range), unbiased (four per thread
//   for ranges up to 2^32, else one).
// random_gamma_float32 (shape a[i]), random_beta_float32 (a[i], b[i]),
// random_poisson_int64 (lam a[i]), random_binomial_int64 (n a[i], p b[i]):
//   one value per thread from the element's own stream; the parameters are
//   buffers read at i * stride (stride 0: one value for all).
#include "random.h"
#include "kernels_common.h"

template <typename T> struct PmUniformBits { static constant constexpr int value = 24; };
template <> struct PmUniformBits<half> { static constant constexpr int value = 11; };
template <> struct PmUniformBits<bfloat> { static constant constexpr int value = 8; };

// Writes the four values of thread gid's block: whole groups of four as one
// store (vector code on the CPU), the last group element by element.
#define PM_RANDOM_STORE4(value)                                                                          \
    if (first + 4 <= p.n) {                                                                              \
        for (uint j = 0; j < 4; j++) out[first + j] = value;                                             \
    } else {                                                                                             \
        for (uint j = 0; first + j < p.n; j++) out[first + j] = value;                                   \
    }

template <typename T>
[[kernel]] void random_uniform(device T* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                               uint gid [[thread_position_in_grid]]) {
    const int bits = PmUniformBits<T>::value;
    const float scale = p.b / float(1u << bits);
    ulong first = ulong(gid) * 4;
    if (first >= p.n) return;
    uint4 w = pm_philox_block(p, gid, 0);
    PM_RANDOM_STORE4(T(p.a + scale * float(w[j] >> (32 - bits))))
}

template <typename T>
[[kernel]] void random_normal(device T* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                              uint gid [[thread_position_in_grid]]) {
    ulong first = ulong(gid) * 4;
    if (first >= p.n) return;
    uint4 w = pm_philox_block(p, gid, 0);
    float z[4];
    for (int j = 0; j < 4; j += 2) { // Box-Muller: two normals from two uniforms
        float r = sqrt(-2.0f * log(pm_uniform_open(w[j]))), c;
        float s = sincos(2.0f * M_PI_F * pm_uniform(w[j + 1]), c);
        z[j] = r * c;
        z[j + 1] = r * s;
    }
    PM_RANDOM_STORE4(T(p.a + p.b * z[j]))
}

template <typename T>
[[kernel]] void random_exponential(device T* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                                   uint gid [[thread_position_in_grid]]) {
    ulong first = ulong(gid) * 4;
    if (first >= p.n) return;
    uint4 w = pm_philox_block(p, gid, 0);
    PM_RANDOM_STORE4(T(-p.b * log(pm_uniform_open(w[j]))))
}

// Ranges up to 2^32: Lemire's multiply-shift (2019), four values per block;
// the rare value that would be biased is drawn again from the element's own
// stream (its blocks 1, 2, ...: block 0 of every index is the four-value kind).
// Wider ranges: each element's own stream, with masked rejection.
template <typename T>
[[kernel]] void random_integers(device T* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                                uint gid [[thread_position_in_grid]]) {
    if (p.range == 0 || p.range > 0x100000000ul) {
        if (gid >= p.n) return;
        PmStream s(p, gid, 1);
        out[gid] = T(ulong(p.low) + pm_bounded(s, p.range));
        return;
    }
    ulong first = ulong(gid) * 4;
    if (first >= p.n) return;
    const ulong range = p.range;
    const uint threshold = uint((0x100000000ul - range) % range);
    uint4 w = pm_philox_block(p, gid, 0);
    ulong v[4];
    for (int j = 0; j < 4; j++) {
        ulong m = ulong(w[j]) * range;
        if (uint(m) < threshold) {
            PmStream s(p, first + j, 1);
            do m = ulong(s.next()) * range; while (uint(m) < threshold);
        }
        v[j] = m >> 32;
    }
    PM_RANDOM_STORE4(T(ulong(p.low) + v[j]))
}

[[kernel]] void random_gamma_float32(device float* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                                     device const float* shape [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    if (gid >= p.n) return;
    PmStream s(p, gid, 1);
    out[gid] = p.b * pm_gamma(s, shape[gid * p.stride_a]);
}

[[kernel]] void random_beta_float32(device float* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                                    device const float* a [[buffer(2)]], device const float* b [[buffer(3)]],
                                    uint gid [[thread_position_in_grid]]) {
    if (gid >= p.n) return;
    PmStream s(p, gid, 1);
    out[gid] = pm_beta(s, a[gid * p.stride_a], b[gid * p.stride_b]);
}

[[kernel]] void random_poisson_int64(device long* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                                     device const float* lam [[buffer(2)]], uint gid [[thread_position_in_grid]]) {
    if (gid >= p.n) return;
    PmStream s(p, gid, 1);
    out[gid] = pm_poisson(s, lam[gid * p.stride_a]);
}

[[kernel]] void random_binomial_int64(device long* out [[buffer(0)]], constant RandomParams& p [[buffer(1)]],
                                      device const long* n [[buffer(2)]], device const float* prob [[buffer(3)]],
                                      uint gid [[thread_position_in_grid]]) {
    if (gid >= p.n) return;
    PmStream s(p, gid, 1);
    out[gid] = pm_binomial(s, n[gid * p.stride_a], prob[gid * p.stride_b]);
}

#define PM_RANDOM_FLOAT(name, T)                                                                          \
    template [[host_name("random_uniform_" #name)]] [[kernel]] decltype(random_uniform<T>) random_uniform<T>;  \
    template [[host_name("random_normal_" #name)]] [[kernel]] decltype(random_normal<T>) random_normal<T>;     \
    template [[host_name("random_exponential_" #name)]] [[kernel]]                                        \
    decltype(random_exponential<T>) random_exponential<T>;
PM_DTYPES_FLOAT(PM_RANDOM_FLOAT)

#define PM_RANDOM_INT(name, T)                                                                            \
    template [[host_name("random_integers_" #name)]] [[kernel]] decltype(random_integers<T>) random_integers<T>;
PM_DTYPES_INT(PM_RANDOM_INT)
