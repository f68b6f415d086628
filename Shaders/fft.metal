// FFT kernels for complex64 (pymetal.fft), along the rows of a contiguous
// (rows, n) array:
//
// fft_radix4      one radix-4 Stockham pass (the same scheme, four points per thread);
// fft_radix2      one radix-2 Stockham pass (n a power of two; ns = 1, 2, ..., n/2):
//                 thread j combines x[j] and x[j + n/2] with the twiddle
//                 w^(j mod ns) of the stage and writes both results in place
//                 order, so log2(n) passes between two buffers leave the
//                 transform in natural order (no bit reversal). Twiddles come
//                 from a table w[t] = exp(sign 2 pi i t / n), t < n, computed
//                 on the host in double precision (exactly rounded twiddles).
// fft_chirp_pad   Bluestein's algorithm for other lengths, step 1:
//                 a[j] = x[j] * chirp[j] for j < n, 0 up to m (a power of two >= 2n-1);
// fft_chirp_out   step 3: out[k] = y[k] * chirp[k] * scale. Step 2 is a
//                 circular convolution of length m: radix-2 transforms and a
//                 product with the transformed chirp filter.
#include "complex.h"

struct FftPass {
    uint n;   // transform length (a power of two)
    uint ns;  // length of the sub-transforms already combined
};

[[kernel]] void fft_radix2(device const cfloat* x [[buffer(0)]], device cfloat* y [[buffer(1)]],
                           device const cfloat* twiddles [[buffer(2)]], constant FftPass& p [[buffer(3)]],
                           uint2 gid [[thread_position_in_grid]]) {
    uint j = gid.x, half_n = p.n >> 1;
    ulong row = ulong(gid.y) * p.n;
    uint k = j & (p.ns - 1);                         // position within the sub-transform
    cfloat a = x[row + j];
    cfloat b = x[row + j + half_n] * twiddles[k * (half_n / p.ns)];
    ulong out = row + ((j - k) << 1) + k;            // (j / ns) * 2 ns + k
    y[out] = a + b;
    y[out + p.ns] = a - b;
}

// One radix-4 Stockham pass (ns = 1, 4, 16, ...): thread j transforms x[j + r n/4],
// r = 0..3, after the stage's twiddles w^(r (j mod ns)), and writes the four
// results ns apart. Half as many passes over memory as radix-2; a length that is
// an odd power of two ends with one radix-2 pass.
[[kernel]] void fft_radix4(device const cfloat* x [[buffer(0)]], device cfloat* y [[buffer(1)]],
                           device const cfloat* twiddles [[buffer(2)]], constant FftPass& p [[buffer(3)]],
                           uint2 gid [[thread_position_in_grid]]) {
    uint j = gid.x, quarter = p.n >> 2;
    ulong row = ulong(gid.y) * p.n;
    uint k = j & (p.ns - 1);
    uint step = k * (quarter / p.ns);                // twiddle index of w^k for this stage
    cfloat v0 = x[row + j];
    cfloat v1 = x[row + j + quarter] * twiddles[step];
    cfloat v2 = x[row + j + 2 * quarter] * twiddles[2 * step];
    cfloat v3 = x[row + j + 3 * quarter] * twiddles[3 * step];
    // the 4-point transform; twiddles[n/4] is w^(n/4) = sign * i, the transform's own rotation
    cfloat a0 = v0 + v2, a1 = v0 - v2, a2 = v1 + v3, a3 = (v1 - v3) * twiddles[quarter];
    ulong out = row + ((j - k) << 2) + k;            // (j / ns) * 4 ns + k
    y[out] = a0 + a2;
    y[out + p.ns] = a1 + a3;
    y[out + 2 * p.ns] = a0 - a2;
    y[out + 3 * p.ns] = a1 - a3;
}

struct FftChirp {
    uint n;       // transform length
    uint m;       // convolution length (a power of two >= 2n - 1)
    float scale;  // applied to the outputs (1/m of the inverse convolution, times the norm)
    uint pad;
};

[[kernel]] void fft_chirp_pad(device const cfloat* x [[buffer(0)]], device const cfloat* chirp [[buffer(1)]],
                              device cfloat* a [[buffer(2)]], constant FftChirp& p [[buffer(3)]],
                              uint2 gid [[thread_position_in_grid]]) {
    uint j = gid.x;
    a[ulong(gid.y) * p.m + j] = j < p.n ? x[ulong(gid.y) * p.n + j] * chirp[j] : cfloat(0.0f, 0.0f);
}

[[kernel]] void fft_chirp_out(device const cfloat* y [[buffer(0)]], device const cfloat* chirp [[buffer(1)]],
                              device cfloat* out [[buffer(2)]], constant FftChirp& p [[buffer(3)]],
                              uint2 gid [[thread_position_in_grid]]) {
    uint k = gid.x;
    cfloat v = y[ulong(gid.y) * p.m + k] * chirp[k];
    out[ulong(gid.y) * p.n + k] = cfloat(v.re * p.scale, v.im * p.scale);
}
