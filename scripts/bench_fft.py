"""pymetal.fft against NumPy's pocketfft (complex64 in, single precision in NumPy 2),
measured in the same run: repetitions interleaved, medians compared. pymetal
times include waiting for the result. On Linux the kernels run on the CPU
backend; the figures there say what the MSL costs on 2 cores, not a GPU.
"""
import numpy as np

import pymetal as pm
from bench_array import median_pair  # interleaved repetitions, medians


def bench(what, ref, cand):
    cand()  # warm: kernels loaded, constants of the length on the device
    r, c = median_pair(ref, cand)
    print(f"  {what:<36} NumPy {r * 1e3:8.2f} ms   pymetal {c * 1e3:8.2f} ms   NumPy/pymetal {r / c:5.2f}x")


def main():
    rng = np.random.default_rng(0)
    print("pymetal.fft vs numpy.fft (%s)" % pm.device().name)
    for rows, n in ((1, 1 << 20), (256, 1024), (4096, 64), (64, 1000), (1, 100003)):
        z = (rng.standard_normal((rows, n)) + 1j * rng.standard_normal((rows, n))).astype(np.complex64)
        x = pm.asarray(z)
        bench("fft %d x %d complex64" % (rows, n), lambda: np.fft.fft(z), lambda: np.asarray(pm.fft.fft(x)))
    r = rng.standard_normal((512, 512)).astype(np.float32)
    xr = pm.asarray(r)
    bench("rfftn 512 x 512 float32", lambda: np.fft.rfftn(r), lambda: np.asarray(pm.fft.rfftn(xr)))


if __name__ == "__main__":
    main()
