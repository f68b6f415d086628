"""Sorting, gathers, compaction, full/axis reductions and matmul against NumPy
(issue 25 items 2 and 4), measured in one run.

Each line interleaves NumPy and pymetal repetitions (alternating which goes
first) and prints the medians and
NumPy's time over pymetal's (> 1: pymetal is faster). pymetal times include
waiting for the result. Installed peers (torch) are measured for matmul in
float16/bfloat16; NumPy float16 and ml_dtypes bfloat16 matmul are always shown.

    python scripts/bench_sort_gather.py            # 1M and 16M
    python scripts/bench_sort_gather.py --quick    # 1M only, 3 repetitions
    python scripts/bench_sort_gather.py -k sort    # only lines whose name contains "sort"
    python scripts/bench_sort_gather.py --thread-time -k 4096

--thread-time: the calling thread's CPU time instead of wall time, with
pymetal's dispatches run whole by the calling thread (PYMETAL_CPU_THREADS=1,
set before pymetal loads): one core against NumPy's one, which a loaded machine
disturbs far less than wall time (the wall-time medians of the same op varied
2-19 ms on a machine with load 9 on 2 cores). It leaves out what a second core
gains, and what waiting for other threads loses.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's pymetal
CLOCK = time.perf_counter
if "--thread-time" in sys.argv:  # before pymetal loads: the pool reads the limit once
    os.environ["PYMETAL_CPU_THREADS"] = "1"
    CLOCK = time.thread_time

import pymetal as pm  # noqa: E402


def median_pair(ref, cand, repeats):
    """Medians of interleaved runs, the order alternating: on a loaded machine
    whichever runs second in a pair more often finds its time slice used up
    (a busy 2 ms before a 1 ms take made it 4 ms; a 2 ms sleep, 1.2 ms)."""
    rt, ct = [], []
    for i in range(repeats):
        for f, times in ((ref, rt), (cand, ct)) if i % 2 == 0 else ((cand, ct), (ref, rt)):
            t = CLOCK()
            f()
            times.append(CLOCK() - t)
    return statistics.median(rt), statistics.median(ct)


def sync(x):
    for a in (x if isinstance(x, tuple) else (x,)):
        pm.synchronize() if a is None else np.asarray(a[:1] if a.ndim else a)
    pm.synchronize()


def line(what, ref, cand, repeats, only):
    if only and not any(k in what for k in only):
        return
    cand()  # warm: kernels loaded, memory cached
    ref()
    r, c = median_pair(ref, lambda: sync(cand()), repeats)
    print(f"  {what:<44} NumPy {r * 1e3:9.2f} ms   pymetal {c * 1e3:9.2f} ms   {r / c:6.2f}x", flush=True)


def sorting(sizes, repeats, only, rng):
    for n in sizes:
        tag = "%dM" % (n >> 20)
        for dt in (np.float32, np.int32, np.float64, np.int64):
            x = (rng.random(n) if dt in (np.float32, np.float64) else
                 rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, n)).astype(dt)
            px = pm.asarray(x)
            name = np.dtype(dt).name
            line(f"sort {tag} {name}", lambda: np.sort(x), lambda: pm.sort(px), repeats, only)
            line(f"argsort stable {tag} {name}", lambda: np.argsort(x, kind="stable"), lambda: pm.argsort(px),
                 repeats, only)
            if dt in (np.float64, np.int64):  # float64 runs NumPy on the host (pymetal/arrays/float64.py)
                continue
            idx = rng.integers(0, n, n)
            pidx = pm.asarray(idx)
            line(f"take {tag} from {tag} {name}", lambda: np.take(x, idx), lambda: pm.take(px, pidx), repeats, only)
            if dt == np.float32:
                line(f"x[x > 0.5] {tag} {name}", lambda: x[x > 0.5], lambda: px[px > 0.5], repeats, only)
                mask = x > 0.5
                pmask = pm.asarray(mask)
                line(f"nonzero {tag} bool (half set)", lambda: np.nonzero(mask), lambda: pm.nonzero(pmask),
                     repeats, only)
            u = (rng.integers(0, 1000, n)).astype(dt)
            pu = pm.asarray(u)
            line(f"unique {tag} {name} (1000 distinct)", lambda: np.unique(u), lambda: pm.unique_values(pu),
                 repeats, only)
            if dt == np.float32:
                line(f"unique {tag} {name} (random)", lambda: np.unique(x), lambda: pm.unique_values(px),
                     repeats, only)


def reductions(repeats, only, rng):
    for dt in (np.float32, np.int32):
        x = (rng.standard_normal((4096, 4096)) * 1000).astype(dt)
        px = pm.asarray(x)
        name = np.dtype(dt).name
        for op in ("max", "min", "argmax", "argmin"):
            f_np, f_pm = getattr(np, op), getattr(pm, op)
            for axis in (None, 0, 1):
                line(f"{op} 4096^2 {name} axis={axis}", lambda: f_np(x, axis=axis), lambda: f_pm(px, axis=axis),
                     repeats, only)


def matmuls(sizes, repeats, only, rng):
    try:
        import ml_dtypes
        bf16 = ml_dtypes.bfloat16
    except ImportError:
        bf16 = None
    try:
        import torch
    except ImportError:
        torch = None
    for k in sizes:
        a = rng.standard_normal((k, k)).astype(np.float32)
        b = rng.standard_normal((k, k)).astype(np.float32)
        pa, pb = pm.asarray(a), pm.asarray(b)
        line(f"matmul {k}^3 float32", lambda: a @ b, lambda: pa @ pb, repeats, only)
        for dt, pdt in ((np.float16, pm.float16), (bf16, pm.bfloat16)):
            if dt is None:
                continue
            name = np.dtype(dt).name
            ph, pg = pm.astype(pa, pdt), pm.astype(pb, pdt)
            line(f"matmul {k}^3 {name} vs NumPy float32", lambda: a @ b, lambda: ph @ pg, repeats, only)
            if k <= 1024 or dt is bf16:  # NumPy's float16 matmul is a slow loop: seconds at 1024
                ah, bh = a.astype(dt), b.astype(dt)
                line(f"matmul {k}^3 {name} vs NumPy {name}", lambda: ah @ bh, lambda: ph @ pg,
                     repeats if dt is bf16 else 1, only)
            if torch is not None:
                tdt = torch.float16 if dt == np.float16 else torch.bfloat16
                ta, tb = torch.from_numpy(a).to(tdt), torch.from_numpy(b).to(tdt)
                line(f"matmul {k}^3 {name} vs torch", lambda: ta @ tb, lambda: ph @ pg, repeats, only)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1M only, 3 repetitions")
    ap.add_argument("--thread-time", action="store_true", help="CPU time of the calling thread, pymetal on one core")
    ap.add_argument("-k", action="append", default=[], help="run only lines containing this text (repeatable)")
    args = ap.parse_args()
    repeats = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    print(f"sort/gather/reduce/matmul on {pm.device().name} ({pm.device().backend} backend): "
          f"NumPy time / pymetal time (medians, interleaved, {'thread' if args.thread_time else 'wall'} time)")
    sorting([1 << 20] if args.quick else [1 << 20, 1 << 24], repeats, args.k, rng)
    reductions(repeats, args.k, rng)
    matmuls([1024] if args.quick else [1024, 2048], repeats, args.k, rng)


if __name__ == "__main__":
    main()
