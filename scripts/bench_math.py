"""MSL math on the CPU backend against NumPy, measured in the same run (issue 7).

Each kernel computes one function over 16M float32 (y[i] = f(x[i])), in pymetal's
default (safe, precise) math mode; NumPy computes the same expression. Both
sides are timed interleaved, 7 repetitions, and the medians are compared.
Target: pymetal >= 2x NumPy for every function. The same kernels compiled with
fast_math=True are timed in the same loop and reported in the last column.
Optional arguments: the functions to measure (default: all).

erf is not an MSL function (real Metal has none): kernels define their own, as
MLX and tinygrad do. The kernel here uses the one in tests/python/msl/msl_erf.metal;
NumPy has no erf: its side is scipy.special.erf (the line is skipped without SciPy).
"""
import os
import pathlib
import sys
import time

import numpy as np
import pymetal as pm

ERF_SOURCE = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "python" / "msl" / "msl_erf.metal").read_text()

GELU_C = np.float32(0.7978845608028654)  # sqrt(2 / pi)


def _numpy_erf():
    try:
        from scipy.special import erf
        return erf
    except ImportError:
        return None


# name: (MSL expression of v, NumPy function of x, inputs; None: scipy.special.erf)
FUNCTIONS = {
    "exp": ("exp(v)", np.exp, "normal10"),
    "exp2": ("exp2(v)", np.exp2, "normal10"),
    "log": ("log(v)", np.log, "positive"),
    "log2": ("log2(v)", np.log2, "positive"),
    "sin": ("sin(v)", np.sin, "normal10"),
    "cos": ("cos(v)", np.cos, "normal10"),
    "tan": ("tan(v)", np.tan, "normal10"),
    "tanh": ("tanh(v)", np.tanh, "normal"),
    "sigmoid": ("1.0f / (1.0f + exp(-v))", lambda x: 1 / (1 + np.exp(-x)), "normal"),
    "pow": ("pow(v, 1.7f)", lambda x: np.power(x, np.float32(1.7)), "positive"),
    "gelu": ("0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)))",
             lambda x: np.float32(0.5) * x * (1 + np.tanh(GELU_C * (x + np.float32(0.044715) * x * x * x))),
             "normal"),
    "erf": ("erf(v)", None, "normal"),
}


def _source():
    kernels = "\n".join(
        f"kernel void k_{name}(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],\n"
        f"                     uint i [[thread_position_in_grid]]) {{ float v = x[i]; y[i] = {expr}; }}"
        for name, (expr, _, _) in FUNCTIONS.items())
    return "#include <metal_stdlib>\nusing namespace metal;\n" + ERF_SOURCE + "\n" + kernels


def _inputs(n):
    rng = np.random.default_rng(0)
    normal = rng.standard_normal(n, dtype=np.float32)
    return {"normal": normal, "normal10": normal * np.float32(10),
            "positive": np.abs(normal) * np.float32(10) + np.float32(1e-3)}


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(names=None, repeats=7):
    n = 16 << 20
    libs = {"precise": pm.compile(_source()), "fast": pm.compile(_source(), fast_math=True)}
    inputs = _inputs(n)
    numpy_erf = _numpy_erf()
    print(f"pymetal {pm.device().backend} backend, {os.cpu_count()} cores; 16M float32, "
          f"medians of {repeats} interleaved runs; target pymetal (default, precise math) >= 2x NumPy;\n"
          f"last column: the same kernel compiled with fast_math=True (fast:: variants)")
    all_ok = True
    for name, (_, reference, kind) in FUNCTIONS.items():
        if names and name not in names:
            continue
        x_np = inputs[kind]
        reference = reference or numpy_erf
        if reference is None:
            print(f"  {name:8s} skipped: SciPy is not installed (NumPy has no erf)")
            continue
        x, y = pm.asarray(x_np), pm.empty(n, np.float32)
        expected = reference(x_np).astype(np.float32)
        kernels = {mode: getattr(lib, "k_" + name) for mode, lib in libs.items()}
        for mode, kernel in kernels.items():  # warm-up, and a check that it is NumPy's function
            kernel(x, y, grid=n)
            assert np.allclose(y.numpy(), expected, rtol=1e-4, atol=1e-6, equal_nan=True), (name, mode)

        def run(kernel):
            kernel(x, y, grid=n)
            pm.synchronize()
        times = {"precise": [], "numpy": [], "fast": []}
        for _ in range(repeats):
            times["precise"].append(_timed(lambda: run(kernels["precise"])))
            times["numpy"].append(_timed(lambda: reference(x_np)))
            times["fast"].append(_timed(lambda: run(kernels["fast"])))
        ms = {key: np.median(value) * 1e3 for key, value in times.items()}
        ratio = ms["numpy"] / ms["precise"]
        ok = ratio >= 2.0
        all_ok &= ok
        print(f"  {name:8s} pymetal {ms['precise']:8.2f} ms   NumPy {ms['numpy']:8.2f} ms   "
              f"ratio {ratio:6.2f}x  (target >= 2x: {'ok' if ok else 'OVER'})   "
              f"fast-math {ms['fast']:8.2f} ms {ms['numpy'] / ms['fast']:6.2f}x")
    return all_ok


if __name__ == "__main__":
    main(sys.argv[1:])  # optional: the functions to measure (default: all)
