"""Checks the MSL runtime through kernels.cpp (built as a .so by run.sh).

Usage: python3 test_runtime.py path/to/kernels.so
Exits non-zero on the first failure; every check prints one line.
"""
import sys
import time

import numpy as np

import pmrt

M32 = 0xFFFFFFFF
failures = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures.append(name)


def check_err(name, rc_msg, *needles):
    rc, msg = rc_msg
    ok = rc != 0 and all(n in msg for n in needles)
    check(name, ok, f"rc={rc} message={msg!r}")
    if ok:
        print("     -> " + msg)


# ---------------------------------------------------------------------------
def test_positions(lib):
    configs = [
        dict(threads=(100,), tpg=(64,)),
        dict(threads=(37, 5, 3), tpg=(8, 4, 2)),
        dict(threads=(70, 3), tpg=(33, 2)),
        dict(groups=(3, 2, 2), tpg=(5, 3, 2)),
        dict(threads=(1, 1, 1), tpg=(1, 1, 1)),
        dict(threads=(1000,), tpg=(1024,)),
    ]
    for kname in ("positions_loop", "positions_fibers"):
        for cfg in configs:
            for nth in (1, 2):
                L0 = pmrt.make_launch([None], **cfg)
                grid = tuple(L0.threads_per_grid)
                n = grid[0] * grid[1] * grid[2]
                out = np.full(n * 24, 0xDEADBEEF, dtype=np.uint32)
                L = pmrt.make_launch([out], **cfg)
                rc = pmrt.run(lib[kname], L, nthreads=nth)
                exp = np.full(n * 24, 0xDEADBEEF, dtype=np.uint32)
                ng = tuple(L.threadgroups_per_grid)
                dt = tuple(L.threads_per_threadgroup)
                for g, size, ths in pmrt.groups_of(L):
                    nthreads = len(ths)
                    for idx, p in enumerate(ths):
                        org = tuple(g[d] * dt[d] for d in range(3))
                        lid = tuple(p[d] - org[d] for d in range(3))
                        i = p[0] + p[1] * grid[0] + p[2] * grid[0] * grid[1]
                        exp[i * 24:(i + 1) * 24] = [
                            *p, *lid, *size, *g, *ng, idx, idx % 32, idx // 32, 32, (nthreads + 31) // 32,
                            idx % 4, idx // 4, (nthreads + 3) // 4, dt[0] + 1000 * dt[1] + 1000000 * dt[2]]
                bad = np.nonzero(out != exp)[0]
                check(f"{kname} {cfg} threads={nth}", rc == (0, "") and len(bad) == 0,
                      f"rc={rc} first bad word {bad[:1]} got {out[bad[:4]]} want {exp[bad[:4]]}")

    cfg = dict(threads=(45, 7), tpg=(16, 4))
    out = np.zeros(45 * 7 * 4, dtype=np.int32)
    L = pmrt.make_launch([out], **cfg)
    rc = pmrt.run(lib["positions2"], L)
    exp = np.zeros_like(out)
    for y in range(7):
        for x in range(45):
            i = x + y * 45
            exp[i * 4:(i + 1) * 4] = [x, y, x % 16, y % 4]
    check("positions2 (uint2, ushort2, int, int2)", rc == (0, "") and (out == exp).all())


# ---------------------------------------------------------------------------
def test_saxpy(lib):
    n = 1000003
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n, dtype=np.float32)
    y0 = rng.standard_normal(n, dtype=np.float32)
    a = np.array([1.5], dtype=np.float32)
    for kname in ("saxpy", "saxpy_fibers"):
        for nth in (1, 2):
            y = y0.copy()
            L = pmrt.make_launch([y, x, a], threads=(n,), tpg=(256,))
            rc = pmrt.run(lib[kname], L, nthreads=nth)
            check(f"{kname} threads={nth}", rc == (0, "") and np.allclose(y, 1.5 * x + y0, rtol=1e-6, atol=1e-6))


# ---------------------------------------------------------------------------
def test_reductions(lib):
    rng = np.random.default_rng(2)
    for tpg in (1, 32, 256, 1024):
        ngroups = 17
        inp = rng.integers(-100, 100, size=tpg * ngroups).astype(np.float32)
        for kname in ("reduce_tree", "reduce_dyn"):
            for nth in (1, 2):
                out = np.zeros(ngroups, dtype=np.float32)
                L = pmrt.make_launch([inp, out], groups=(ngroups,), tpg=(tpg,), tg_lengths=[tpg * 4], poison=1)
                rc = pmrt.run(lib[kname], L, nthreads=nth)
                exp = inp.reshape(ngroups, tpg).sum(axis=1)
                check(f"{kname} tpg={tpg} threads={nth}", rc == (0, "") and (out == exp).all(),
                      f"rc={rc} out={out[:4]} exp={exp[:4]}")
    k = lib["reduce_tree"]
    check("static threadgroup bytes reported", k.static_bytes == 4096, str(k.static_bytes))
    check("max_total_threads reported", k.max_total_threads == 1024, str(k.max_total_threads))
    # too much threadgroup memory: 16 static + 40000 dynamic
    inp = np.zeros(64, dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    L = pmrt.make_launch([inp, out], groups=(1,), tpg=(64,), tg_lengths=[40000])
    check_err("threadgroup memory over the limit", pmrt.run(lib["reduce_dyn"], L), "threadgroup memory", "32768")


# ---------------------------------------------------------------------------
def f32(v):
    return np.float32(v)


def simd_reference(x, u, f, act):
    """Expected results (NR uint32 per lane) of simd_ops for one simdgroup.
    x, u, f: per-lane values (len <= 32); act: set of active lanes."""
    NR = 64
    res = {}
    lanes = sorted(act)

    def grp(l, W):
        base = l & ~(W - 1)
        return [q for q in range(base, base + W) if q in act]

    def src(l, s, W):  # value source: s relative to the group base; None/inactive -> own
        base = l & ~(W - 1)
        if s is None or s < 0 or s >= W or (base + s) not in act:
            return l
        return base + s

    def fill(l, d, M, W, up):
        base = l & ~(W - 1)
        li = l - base
        seg = base + li // M * M
        lj = li % M
        if up:
            isfill = lj < d
            frm = seg + M - d + lj if isfill else seg + lj - d
        else:
            isfill = lj + d >= M
            frm = seg + lj + d - M if isfill else seg + lj + d
        if frm not in act:
            return x[l]
        return x[frm] + 1000 if isfill else x[frm]

    def prod(vals):
        p = 1
        for v in vals:
            p = (p * v) & M32
        return p

    def fsum(vals):
        acc = None
        for v in vals:
            acc = f32(v) if acc is None else f32(acc + f32(v))
        return acc

    def bits(v):
        return int(np.array([v], dtype=np.float32).view(np.uint32)[0])

    for l in lanes:
        o = [0] * NR
        g32 = grp(l, 32)
        g4 = grp(l, 4)
        xs32 = [x[q] for q in g32]
        xs4 = [x[q] for q in g4]
        before32 = [q for q in g32 if q < l]
        before4 = [q for q in g4 if q < l]
        li = l & 3
        o[0] = sum(xs32)
        o[1] = prod(u[q] for q in g32)
        o[2] = min(xs32)
        o[3] = max(xs32)
        a = -1
        orr = 0
        xr = 0
        for v in xs32:
            a &= v
            orr |= v
            xr ^= v
        o[4], o[5], o[6] = a, orr, xr
        o[7] = sum(x[q] for q in before32)
        o[8] = o[7] + x[l]
        o[9] = prod(u[q] for q in before32)
        o[10] = (o[9] * u[l]) & M32
        o[11] = x[src(l, 5, 32)]
        o[12] = x[g32[0]]
        o[13] = x[src(l, (l * 7 + 3) % 32, 32)]
        o[14] = x[src(l, l - 3 if l >= 3 else None, 32)]
        o[15] = x[src(l, l + 5 if l + 5 < 32 else None, 32)]
        o[16] = x[src(l, l ^ 6, 32)]
        o[17] = x[src(l, (l - 3) % 32, 32)]
        o[18] = x[src(l, (l + 9) % 32, 32)]
        o[19] = fill(l, 3, 32, 32, True)
        o[20] = fill(l, 5, 32, 32, False)
        o[21] = fill(l, 3, 8, 32, True)
        o[22] = fill(l, 2, 8, 32, False)
        o[23] = sum(1 << q for q in g32 if x[q] > 0)
        o[24] = 0
        o[25] = int(all(x[q] > -3 for q in g32))
        o[26] = int(any(x[q] == 3 for q in g32))
        o[27] = int(l == g32[0])
        o[28] = sum(1 << q for q in g32)
        o[29] = sum(xs4)
        o[30] = prod(u[q] for q in g4)
        o[31] = min(xs4)
        o[32] = max(xs4)
        a = -1
        orr = 0
        xr = 0
        for v in xs4:
            a &= v
            orr |= v
            xr ^= v
        o[33], o[34], o[35] = a, orr, xr
        o[36] = sum(x[q] for q in before4)
        o[37] = o[36] + x[l]
        o[38] = x[src(l, 2, 4)]
        o[39] = x[g4[0]]
        o[40] = x[src(l, (l * 3 + 1) % 4, 4)]
        o[41] = x[src(l, li - 1 if li >= 1 else None, 4)]
        o[42] = x[src(l, li + 1 if li + 1 < 4 else None, 4)]
        o[43] = x[src(l, li ^ 2, 4)]
        o[44] = x[src(l, (li - 1) % 4, 4)]
        o[45] = x[src(l, (li + 3) % 4, 4)]
        o[46] = fill(l, 1, 4, 4, True)
        o[47] = fill(l, 2, 4, 4, False)
        o[48] = sum(1 << (q & 3) for q in g4 if x[q] > 0)
        o[49] = int(all(x[q] > -3 for q in g4))
        o[50] = int(any(x[q] == 3 for q in g4))
        o[51] = int(l == g4[0])
        o[52] = sum(1 << (q & 3) for q in g4)
        o[53] = int(len(g32) == 32)
        o[54] = int(any(x[q] > 2 for q in g32))
        o[55] = bits(fsum(f[q] for q in g32))
        o[56] = bits(fsum(f[q] for q in g32 if q <= l))
        o[57] = bits(fsum(f32(2) * f32(f[q]) for q in g32))
        o[58] = bits(f32(len(g32)))
        o[59] = bits(f32(max(xs32)))
        s = src(l, l + 1 if l + 1 < 32 else None, 32)
        o[60] = bits(f32(f32(f[s]) + f32(1)))
        mn = min(xs32) & 0xFFFF
        mn = mn - 0x10000 if mn >= 0x8000 else mn
        o[61] = ((mn & M32) + 1000 * max((v + 3) & 0xFF for v in xs32)) & M32
        o[62] = sum(x[src(q, q ^ 1, 32)] for q in g32)
        o[63] = len(g32)
        res[l] = [v & M32 for v in o]
    return res


def test_simd(lib):
    rng = np.random.default_rng(3)
    configs = [
        dict(threads=(100, 1), tpg=(64, 1), skip=0.0),
        dict(threads=(100, 1), tpg=(64, 1), skip=0.25),
        dict(threads=(45, 3), tpg=(16, 3), skip=0.2),
        dict(groups=(2, 1), tpg=(96, 1), skip=0.0),
        dict(threads=(7, 1), tpg=(7, 1), skip=0.3),
        dict(threads=(300, 1), tpg=(1024, 1), skip=0.1),
    ]
    NR = 64
    for cfg in configs:
        cfg = dict(cfg)
        skipp = cfg.pop("skip")
        L0 = pmrt.make_launch([None], **cfg)
        gx, gy = L0.threads_per_grid[0], L0.threads_per_grid[1]
        n = gx * gy
        xs = rng.integers(-3, 4, size=n).astype(np.int32)
        us = rng.integers(1, 4, size=n).astype(np.uint32)
        fs = rng.standard_normal(n).astype(np.float32)
        skip = (rng.random(n) < skipp).astype(np.int32)
        for nth in (1, 2):
            out = np.full(n * NR, 0xDEADBEEF, dtype=np.uint32)
            L = pmrt.make_launch([xs, us, skip, out, fs], **cfg)
            t0 = time.time()
            rc = pmrt.run(lib["simd_ops"], L, nthreads=nth)
            dt = time.time() - t0
            exp = np.full(n * NR, 0xDEADBEEF, dtype=np.uint32)
            for g, size, ths in pmrt.groups_of(L):
                for s0 in range(0, len(ths), 32):
                    sgth = ths[s0:s0 + 32]
                    idx = [p[0] + p[1] * gx for p in sgth]
                    act = {l for l, i in enumerate(idx) if not skip[i]}
                    if not act:
                        continue
                    ref = simd_reference([int(xs[i]) for i in idx], [int(us[i]) for i in idx],
                                         [float(fs[i]) for i in idx], act)
                    for l, vals in ref.items():
                        exp[idx[l] * NR:(idx[l] + 1) * NR] = vals
            bad = np.nonzero(out != exp)[0]
            detail = ""
            if len(bad):
                w = bad[0]
                detail = f"thread {w // NR} result {w % NR}: got {out[w]:#x} want {exp[w]:#x} ({len(bad)} bad)"
            check(f"simd_ops {cfg} skip={skipp} threads={nth} ({dt * 1e3:.1f} ms)", rc == (0, "") and not len(bad),
                  f"rc={rc} {detail}")


# ---------------------------------------------------------------------------
def test_errors(lib):
    out = np.zeros(1024, dtype=np.int32)
    # a thread that returned counts as arrived at the barrier (as on Apple GPUs; validation builds report it)
    L = pmrt.make_launch([out], groups=(5, 1, 1), tpg=(64,))
    rc = pmrt.run(lib["err_return_early"], L)
    check("barrier after an early return runs", rc == (0, "") and out[17] == 0 and out[:64].sum() == 63, f"rc={rc}")
    out[:] = 0
    L = pmrt.make_launch([out], groups=(2, 2, 1), tpg=(40,))
    check_err("simdgroups at different barriers", pmrt.run(lib["err_extra_barrier"], L, nthreads=2),
              "barrier divergence", "another threadgroup_barrier")
    L = pmrt.make_launch([out], groups=(1,), tpg=(64,))
    check_err("SIMD calls at different sites", pmrt.run(lib["err_simd_sites"], L), "divergent control flow",
              "simd_sum", "simd_max")
    out[:] = -1
    rc = pmrt.run(lib["err_simd_barrier"], L)
    want = np.array([sum(range(s * 32, s * 32 + 16)) if l < 16 else 0 for s in (0, 1) for l in range(32)])
    check("SIMD call beside a barrier: the barrier carries the lanes", rc == (0, "") and (out[:64] == want).all(),
          f"rc={rc} {out[:64]}")
    check_err("barrier in a LOOP-mode kernel", pmrt.run(lib["err_loop_barrier"], L), "internal error",
              "threadgroup_barrier")
    L1 = pmrt.make_launch([out], groups=(3,), tpg=(1,))
    check("barrier in a LOOP-mode kernel, 1-thread groups", pmrt.run(lib["err_loop_barrier"], L1) == (0, ""))
    # the runtime state stays usable after errors
    out2 = np.zeros(64 * 24, dtype=np.uint32)
    L = pmrt.make_launch([out2], threads=(64,), tpg=(64,))
    check("runs again after errors", pmrt.run(lib["positions_fibers"], L) == (0, "") and out2[24 * 5] == 5)


# ---------------------------------------------------------------------------
def test_poison(lib):
    n = 40
    for poison in (1, 0):
        out = np.zeros(n * 2, dtype=np.uint32)
        L = pmrt.make_launch([out], threads=(n,), tpg=(16,), tg_lengths=[32], poison=poison)
        rc = pmrt.run(lib["tg_poison"], L)
        if poison:
            check("threadgroup memory poisoned with 0xFF", rc == (0, "") and (out == M32).all(), f"{rc} {out[:4]}")
        else:
            check("threadgroup memory without poison runs", rc == (0, ""))
    check("tg_poison static bytes", lib["tg_poison"].static_bytes == 64, str(lib["tg_poison"].static_bytes))


# ---------------------------------------------------------------------------
def test_gemm(lib):
    rng = np.random.default_rng(4)
    M, N, K = 48, 32, 40
    dims = np.array([M, N, K], dtype=np.uint32)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    for kname, a, b in (("gemm_sg_float", A, B), ("gemm_bt", A, np.ascontiguousarray(B.T)),
                        ("gemm_frag", A, B),
                        ("gemm_sg_half", A.astype(np.float16), B.astype(np.float16))):
        for nth in (1, 2):
            C = np.full((M, N), np.nan, dtype=np.float32)
            L = pmrt.make_launch([a, b, C, dims], groups=(N // 16, M // 16), tpg=(128,))
            rc = pmrt.run(lib[kname], L, nthreads=nth)
            r = ref if "half" not in kname else a.astype(np.float64) @ b.astype(np.float64)
            err = np.abs(C - r).max()
            check(f"{kname} {M}x{N}x{K} threads={nth}", rc == (0, "") and err < 1e-3, f"rc={rc} max err {err}")


def test_many_os_threads(lib):
    # More OS threads with fibers than a library's table of fiber stacks
    # (PM_FIBER_REGIONS, fiber.h): the rest find their state thread-locally.
    rng = np.random.default_rng(5)
    M = N = K = 128
    dims = np.array([M, N, K], dtype=np.uint32)
    A = rng.integers(-3, 4, size=(M, K)).astype(np.float32)
    B = rng.integers(-3, 4, size=(K, N)).astype(np.float32)
    C = np.full((M, N), np.nan, dtype=np.float32)
    L = pmrt.make_launch([A, B, C, dims], groups=(N // 16, M // 16), tpg=(128,))
    rc = pmrt.run(lib["gemm_sg_float"], L, nthreads=24)
    check("gemm_sg_float on 24 OS threads", rc == (0, "") and (C == A @ B).all(), f"rc={rc}")


def main():
    lib = pmrt.Library(sys.argv[1])
    test_positions(lib)
    test_saxpy(lib)
    test_reductions(lib)
    test_simd(lib)
    test_errors(lib)
    test_poison(lib)
    test_gemm(lib)
    test_many_os_threads(lib)
    print()
    if failures:
        print(f"{len(failures)} FAILED: " + ", ".join(failures))
        sys.exit(1)
    print("all runtime checks passed")


if __name__ == "__main__":
    main()
