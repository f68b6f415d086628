"""pm.fuse against the same code unfused, NumPy, and jax.jit / torch.compile when installed.

    python scripts/bench_fuse.py [--quick] [--norms] [--rounds=N]   (--norms: only pm.nn.layer_norm / rms_norm)

Interleaved (each variant once per round), medians; pymetal's times include waiting for
the result. Ratios: peer time / fused time (> 1: the fused kernel is faster); for
pm.nn.layer_norm and rms_norm (float32 and float16) peer time / pm.nn's time. Also the
time to trace and compile a fused kernel never seen before (cold: clang on the CPU
backend) and to call it again (cached).
"""

import statistics
import sys
import time

import numpy as np

import pymetal as pm

QUICK = "--quick" in sys.argv
NORMS_ONLY = "--norms" in sys.argv
ROUNDS = [int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--rounds=")]


def chain10(x, y, np_=pm):
    a = x * 1.5 + y
    b = np_.exp(-np_.abs(a)) - 0.25
    c = np_.maximum(b, y * 0.5)
    d = np_.sqrt(np_.abs(c) + 1.0)
    return d / (1.0 + np_.tanh(a)) - x


def layer_norm(x, w, b, np_=pm):
    m = np_.mean(x, axis=-1, keepdims=True)
    v = np_.var(x, axis=-1, keepdims=True)
    return (x - m) / np_.sqrt(v + 1e-5) * w + b


def rms_norm(x, w, np_=pm):
    return x / np_.sqrt(np_.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def softmax(x, np_=pm):
    e = np_.exp(x - np_.max(x, axis=-1, keepdims=True))
    return e / np_.sum(e, axis=-1, keepdims=True)


def std_rows(x, np_=pm):
    return np_.std(x, axis=-1)


def _time(f):
    start = time.perf_counter()
    r = f()
    if isinstance(r, pm.Array):
        pm.synchronize()
    return time.perf_counter() - start


def compare(name, variants, rounds, base="fused"):
    for f in variants.values():  # warm up (compile, caches)
        f()
    pm.synchronize()
    times = {k: [] for k in variants}
    for _ in range(rounds):
        for k, f in variants.items():
            times[k].append(_time(f))
    med = {k: statistics.median(v) for k, v in times.items()}
    fused = med[base]
    cells = "  ".join("%s %.2f ms (%.2fx)" % (k, v * 1e3, v / fused) for k, v in med.items())
    print("%-24s %s" % (name, cells), flush=True)
    return med


def peers():
    out = {}
    try:
        import jax
        out["jax"] = jax
    except ImportError:
        pass
    try:
        import torch
        out["torch"] = torch
    except ImportError:
        pass
    return out


def _peer_norms(found, a, w, b):
    """{name: call} of the installed peers' layer_norm and rms_norm on copies of a, w, b."""
    out = {}
    if "jax" in found:
        jax = found["jax"]
        jnp = jax.numpy
        ja, jw, jb = (jax.device_put(v) for v in (a, w, b))
        jln = jax.jit(lambda x, w, b: layer_norm(x, w, b, jnp))
        jrms = jax.jit(lambda x, w: rms_norm(x, w, jnp))
        out["jax"] = (lambda: jln(ja, jw, jb).block_until_ready(), lambda: jrms(ja, jw).block_until_ready())
    if "torch" in found:
        torch = found["torch"]
        F = torch.nn.functional
        ta, tw, tb = (torch.from_numpy(v) for v in (a, w, b))
        d = a.shape[-1:]
        trms = (lambda: F.rms_norm(ta, d, tw, 1e-6)) if hasattr(F, "rms_norm") else (lambda: rms_norm(ta, tw, torch))
        out["torch"] = (lambda: F.layer_norm(ta, d, tw, tb, 1e-5), trms)
    return out


def norms(rng, found, rounds):
    """pm.nn.layer_norm / rms_norm (one fused kernel on the CPU backend) against the same
    formula as pymetal ops (unfused), NumPy, and the installed peers; ratio = time / pm.nn's."""
    shapes = [(1024, 1024)] if QUICK else [(1024, 1024), (4096, 1024)]
    for dt in (np.float32, np.float16):
        for rows, cols in shapes:
            a = rng.standard_normal((rows, cols)).astype(dt)
            w, b = rng.standard_normal(cols).astype(dt), rng.standard_normal(cols).astype(dt)
            x, xw, xb = pm.asarray(a), pm.asarray(w), pm.asarray(b)
            tag = "%dx%d %s" % (rows, cols, np.dtype(dt).name)
            peers = _peer_norms(found, a, w, b)
            ln = {"pm.nn": lambda: pm.nn.layer_norm(x, xw, xb), "unfused": lambda: layer_norm(x, xw, xb),
                  "numpy": lambda: layer_norm(a, w, b, np)}
            rms = {"pm.nn": lambda: pm.nn.rms_norm(x, xw), "unfused": lambda: rms_norm(x, xw),
                   "numpy": lambda: rms_norm(a, w, np)}
            for k, (fl, fr) in peers.items():
                ln[k], rms[k] = fl, fr
            compare("nn.layer_norm " + tag, ln, rounds, base="pm.nn")
            compare("nn.rms_norm " + tag, rms, rounds, base="pm.nn")


def main():
    rng = np.random.default_rng(0)
    found = peers()
    print("pm.fuse bench, %s backend; peers installed: %s; ratio = variant time / fused time"
          % (pm.device().backend, ", ".join(found) or "none (NumPy and unfused pymetal only)"))
    rounds = ROUNDS[-1] if ROUNDS else 3 if QUICK else 7
    if NORMS_ONLY:
        return norms(rng, found, rounds)
    for n in ([1 << 20] if QUICK else [1 << 10, 1 << 16, 1 << 20, 1 << 24]):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        x, y = pm.asarray(a), pm.asarray(b)
        fused = pm.fuse(chain10)
        compare("chain10 %d" % n, {"fused": lambda: fused(x, y), "unfused": lambda: chain10(x, y),
                                            "numpy": lambda: chain10(a, b, np)}, rounds)
    rows, cols = (1024, 1024) if QUICK else (4096, 1024)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    w, bb = rng.standard_normal(cols).astype(np.float32), rng.standard_normal(cols).astype(np.float32)
    x, xw, xb = pm.asarray(a), pm.asarray(w), pm.asarray(bb)
    tag = "%dx%d" % (rows, cols)
    ln, sm, sd = pm.fuse(layer_norm), pm.fuse(softmax), pm.fuse(std_rows)
    compare("layer_norm " + tag, {"fused": lambda: ln(x, xw, xb), "unfused": lambda: layer_norm(x, xw, xb),
                                  "numpy": lambda: layer_norm(a, w, bb, np)}, rounds)
    compare("softmax " + tag, {"fused": lambda: sm(x), "unfused": lambda: softmax(x),
                               "pm.nn.softmax": lambda: pm.nn.softmax(x), "numpy": lambda: softmax(a, np)}, rounds)
    compare("std rows " + tag, {"fused": lambda: sd(x), "unfused": lambda: std_rows(x),
                                "numpy": lambda: std_rows(a, np)}, rounds)
    norms(rng, found, rounds)
    # Compile: a structure never seen before (the ops' order drawn at random), first call
    # (trace + MSL + clang + run) and then cached calls.
    ops = [pm.exp, pm.tanh, pm.sin, pm.sqrt, pm.abs, pm.negative, pm.cos, pm.log1p]
    order = [ops[i] for i in np.random.default_rng(time.time_ns()).integers(0, len(ops), 8)]

    def fresh(x):
        for f in order:
            x = f(x) * 0.5
        return x
    small = pm.asarray(rng.standard_normal(1000).astype(np.float32))
    f = pm.fuse(fresh)
    cold = _time(lambda: f(small))
    cached = statistics.median(_time(lambda: f(small)) for _ in range(20))
    unfused = statistics.median(_time(lambda: fresh(small)) for _ in range(20))
    trivial = ("kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = 1; }\n"
               "// %d\n" % time.time_ns())
    start = time.perf_counter()
    pm.compile(trivial)
    floor = time.perf_counter() - start
    print("compile: a new fused kernel %.0f ms cold (trace + MSL + clang + run; a trivial kernel compiles in "
          "%.0f ms), %.3f ms cached call (the 16 unfused ops on 1000 elements: %.3f ms)"
          % (cold * 1e3, floor * 1e3, cached * 1e3, unfused * 1e3))


if __name__ == "__main__":
    main()
