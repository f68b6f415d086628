"""More realistic NumPy programs (a second set, of other kinds than scripts/numpy_programs.py's),
run with NumPy and with ``import pymetal as np``; prints a pass table.

    python scripts/numpy_programs2.py [name ...]

The comparison is numpy_programs.py's (values within float32 tolerance, shapes, dtype kinds,
Python types; statistics of random programs; `expect=` where pymetal refuses with a clear error).
"""

from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_programs as base  # noqa: E402

PROGRAMS: dict = {}


def program(tol=None, expect=None):
    def deco(f):
        PROGRAMS[f.__name__] = (f, tol, expect)
        return f
    return deco


def _errors(np, calls):
    """'error' for each call raising a clear (non-empty) TypeError/ValueError/NotImplementedError/IndexError,
    or AttributeError with what to do instead (pymetal's hint for NumPy names it lacks)."""
    out = {}
    for name, f in calls:
        try:
            f()
            out[name] = "no error"
        except (TypeError, ValueError, NotImplementedError, IndexError) as e:
            out[name] = "error" if str(e) else "empty message"
        except AttributeError as e:
            out[name] = "error" if "is not in pymetal:" in str(e) else "no hint: %s" % e
    return out


# --- NumPy-100, exercises 50-100 -------------------------------------------------------------

@program()
def numpy100_c(np):
    out = {}
    Z = np.arange(10, dtype=np.float32); Z = Z.astype(np.int32, copy=False); out["n53"] = Z
    Z = np.random.random(10) if False else np.linspace(0, 1, 10); Z[np.argmax(Z)] = 0; out["n45"] = Z
    X = np.arange(8.0); Y = X + 0.5; out["n47"] = 1 / np.subtract.outer(X, Y)
    Z = np.arange(25).reshape(5, 5); Z[[0, 1]] = Z[[1, 0]]; out["n72"] = Z
    faces = np.array([[0, 1, 2], [1, 2, 3], [2, 3, 4]])
    F = np.roll(faces.repeat(2, axis=1), -1, axis=1).reshape(len(faces) * 3, 2)
    F = np.sort(F, axis=1)
    G = F.view(dtype=[("p0", F.dtype), ("p1", F.dtype)]) if False else F
    out["n73"] = np.unique(G, axis=0)
    C = np.bincount([1, 1, 2, 3, 4, 4, 6]); out["n74"] = np.repeat(np.arange(len(C)), C)
    Z = np.arange(20.0)
    def moving_average(a, n=3):
        ret = np.cumsum(a, dtype=float)
        ret[n:] = ret[n:] - ret[:-n]
        return ret[n - 1:] / n
    out["n75"] = moving_average(Z, 3)
    from numpy.lib import stride_tricks as _st  # noqa: F401
    Z = np.arange(10)
    out["n76"] = np.lib.stride_tricks.sliding_window_view(Z, window_shape=3)
    Z = np.array([True, False, True]); out["n77a"] = np.logical_not(Z)
    Z = np.array([1.0, -2.0, 3.0]); np.negative(Z, out=Z); out["n77b"] = Z
    P0 = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]); P1 = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 1.0]])
    p = np.array([[0.5, 1.0]])
    T = P1 - P0; L = (T ** 2).sum(axis=1); U = -((P0[:, 0] - p[..., 0]) * T[:, 0] + (P0[:, 1] - p[..., 1]) * T[:, 1]) / L
    U = U.reshape(len(U), 1); D = P0 + U * T - p; out["n78"] = np.sqrt((D ** 2).sum(axis=1))
    Z = np.arange(1, 17, dtype=np.uint32); out["n80"] = np.lib.stride_tricks.sliding_window_view(Z, 4)[::1]
    Z = np.arange(25).reshape(5, 5); out["n81"] = Z[1:4, 1:4]
    Z = np.arange(10); out["n82_rank"] = np.linalg.matrix_rank(np.outer(Z, Z).astype(float))
    Z = np.array([0, 1, 1, 2, 2, 2, 5]); out["n83"] = np.bincount(Z).argmax()
    Z = np.arange(100).reshape(10, 10); n = 3; i = 1 + (Z.shape[0] - 3)
    out["n84"] = np.lib.stride_tricks.sliding_window_view(Z, (n, n))[::3, ::3].sum(axis=(2, 3))
    p, n = 3, 4; M = np.ones((p, n, n)); V = np.ones((p, n, 1)); out["n86"] = np.tensordot(M, V, axes=[[0, 2], [0, 1]])
    Z = np.ones((16, 16)); k = 4
    out["n87"] = np.add.reduceat(np.add.reduceat(Z, np.arange(0, Z.shape[0], k), axis=0), np.arange(0, Z.shape[1], k), axis=1)
    Z = np.arange(10000); np.random.shuffle(Z); n = 5; out["n89"] = Z[np.argpartition(-Z, n)[:n]].size
    return out


@program()
def numpy100_d(np):
    out = {}
    def cartesian(arrays):
        arrays = [np.asarray(a) for a in arrays]
        shape = (len(x) for x in arrays)
        ix = np.indices(shape, dtype=int)
        ix = ix.reshape(len(arrays), -1).T
        for n, arr in enumerate(arrays):
            ix[:, n] = arrays[n][ix[:, n]]
        return ix
    out["n90"] = cartesian(([1, 2, 3], [4, 5], [6, 7]))
    A = np.array([[1, 2, 3], [4, 5, 6], [0, 3, 9], [2, 5, 6]]); B = np.array([[5, 2], [2, 1]])
    C = (A[..., np.newaxis, np.newaxis] == B)
    rows = np.where(C.any((3, 1)).all(1))[0]; out["n93"] = rows
    Z = np.array([[0, 0, 1], [1, 1, 1], [2, 2, 2], [3, 1, 2]])
    E = np.all(Z[:, 1:] == Z[:, :-1], axis=1); U = Z[~E]; out["n94"] = U
    I = np.array([0, 1, 2, 3, 15, 16, 32, 64, 128], dtype=np.uint8)
    out["n95"] = np.unpackbits(I[:, np.newaxis], axis=1)
    Z = np.array([[0, 1, 0], [1, 1, 0], [0, 1, 0], [1, 1, 0]])
    out["n96"] = np.unique(Z, axis=0)
    A = np.arange(3.0); B = np.arange(3.0) + 1
    out["n97"] = [np.einsum("i->", A), np.einsum("i,i->i", A, B), np.einsum("i,i", A, B), np.einsum("i,j->ij", A, B)]
    phi = np.arange(0, 10 * np.pi, 0.1); a = 1; x = a * phi * np.cos(phi); y = a * phi * np.sin(phi)
    dr = (np.diff(x) ** 2 + np.diff(y) ** 2) ** .5; r = np.zeros_like(x); r[1:] = np.cumsum(dr)
    r_int = np.linspace(0, r.max(), 200); x_int = np.interp(r_int, r, x); out["n98"] = x_int[::20]
    X = np.array([[1.0, 2.0, 0.0], [2.0, 2.0, 0.0], [1.5, 0.5, 1.0]]); n = 4
    M = np.logical_and.reduce(np.mod(X, 1) == 0, axis=-1); M &= (X.sum(axis=-1) == n); out["n99"] = X[M]
    X = np.arange(100.0); N = 50
    idx = np.random.randint(0, X.size, (N, X.size)); means = X[idx].mean(axis=1)
    out["n100"] = np.percentile(means, [2.5, 97.5]).shape
    Z = np.arange(10); out["n92"] = [np.power(Z, 3)[:3], (Z * Z * Z)[:3], np.einsum("i,i,i->i", Z, Z, Z)[:3]]
    w, h = 16, 16; I = np.zeros((h, w, 3), dtype=np.ubyte); I[2:6, 2:6, 0] = 255
    F = I[..., 0].astype(np.uint32) * (256 * 256) + I[..., 1].astype(np.uint32) * 256 + I[..., 2]; out["n66"] = len(np.unique(F))
    Z = np.arange(9).reshape(3, 3).astype(float); out["n85"] = Z + Z.T - np.diag(Z.diagonal())
    return out


# --- From Python to NumPy (Rougier) ------------------------------------------------------------

@program()
def life_variants(np):
    def step(Z):
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:] + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
        return Z
    Z = np.zeros((10, 10), dtype=np.uint8)
    Z[4, 3:6] = 1  # blinker
    hist = []
    for _ in range(4):
        Z = step(Z)
        hist.append(int(Z.sum()))
    # convolution-style counting with a padded array and sliding windows
    R = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0]], dtype=bool)
    for _ in range(4):
        P = np.pad(R.astype(np.int8), 1, mode="wrap")
        W = np.lib.stride_tricks.sliding_window_view(P, (3, 3))
        N = W.sum(axis=(-2, -1)) - R
        R = (N == 3) | (R & (N == 2))
    return {"Z": Z, "hist": hist, "R": R, "dtype": str(Z.dtype), "Rdtype": str(R.dtype)}


@program()
def mandelbrot_escape(np):
    xmin, xmax, ymin, ymax, w, h, maxit = -2.25, 0.75, -1.25, 1.25, 48, 32, 30
    X = np.linspace(xmin, xmax, w, dtype=np.float64)
    Y = np.linspace(ymin, ymax, h, dtype=np.float64)
    C = X + Y[:, None] * 1j
    N = np.zeros(C.shape, dtype=int)
    Z = np.zeros(C.shape, np.complex128)
    for n in range(maxit):
        I = np.less(abs(Z), 2.0)
        N[I] = n
        Z[I] = Z[I] ** 2 + C[I]
    N[N == maxit - 1] = 0
    # smooth colouring
    Zl = np.zeros_like(C); mod = np.ones(C.shape, dtype=bool)
    for _ in range(10):
        Zl = np.where(mod, Zl * Zl + C, Zl)
        mod = np.abs(Zl) < 10
    return {"N": N, "count": int(np.count_nonzero(N)), "zdtype": str(Z.dtype), "mod": mod, "real_max": float(np.abs(Zl.real[mod]).max())}


@program(tol=0.05)
def random_walks(np):
    rng = np.random.default_rng(3)
    steps = rng.choice([-1, 1], size=(200, 500))
    walks = steps.cumsum(axis=1)
    final = walks[:, -1]
    crossing = (np.abs(walks) >= 10).any(axis=1)
    first = (np.abs(walks[crossing]) >= 10).argmax(axis=1)
    np.random.seed(4)
    s = 2 * np.random.randint(0, 2, size=1000) - 1
    w = np.add.accumulate(s)
    return {"shape": walks.shape, "dtype_kind": walks.dtype.kind, "var_ratio": float(final.var()) / 500,
            "mean_abs": float(np.abs(final).mean()) / np.sqrt(2 * 500 / np.pi), "cross_frac": float(crossing.mean()),
            "first_pos": bool((first >= 9).all()), "w_len": w.shape, "range_ok": bool(abs(int(w[-1])) <= 1000)}


@program()
def boids_particles(np):
    n = 16
    rng_pos = np.linspace(0, 1, 2 * n).reshape(n, 2) ** 1.5
    vel = np.cos(np.arange(2 * n, dtype=float)).reshape(n, 2) * 0.01
    pos = rng_pos.copy()
    for _ in range(5):
        dx = np.subtract.outer(pos[:, 0], pos[:, 0]); dy = np.subtract.outer(pos[:, 1], pos[:, 1])
        dist = np.hypot(dx, dy)
        mask = (dist > 0) & (dist < 0.3)
        count = np.maximum(mask.sum(axis=1), 1)
        target = np.dot(mask, pos) / count[:, None]
        cohesion = target - pos
        align = np.dot(mask, vel) / count[:, None] - vel
        close = (dist > 0) & (dist < 0.05)
        sep = -np.stack([(dx * close).sum(1), (dy * close).sum(1)], axis=1)
        vel += 0.01 * cohesion + 0.05 * align + 0.1 * sep
        speed = np.linalg.norm(vel, axis=1, keepdims=True)
        vel = np.where(speed > 0.03, vel / speed * 0.03, vel)
        pos = (pos + vel) % 1.0
    return {"pos": pos, "vel": vel, "neigh": mask.sum(axis=1)}


@program()
def voronoi_broadcast(np):
    seeds = np.array([[0.1, 0.2], [0.7, 0.3], [0.4, 0.9], [0.9, 0.8]])
    Y, X = np.mgrid[0:1:20j, 0:1:30j]
    P = np.dstack((X, Y)).reshape(-1, 2)
    D = ((P[:, None, :] - seeds[None, :, :]) ** 2).sum(-1)
    labels = D.argmin(axis=1).reshape(X.shape)
    areas = np.bincount(labels.ravel(), minlength=len(seeds)) / labels.size
    border = (np.diff(labels, axis=0) != 0).sum() + (np.diff(labels, axis=1) != 0).sum()
    nearest2 = np.sort(D, axis=1)[:, :2]
    ogy, ogx = np.ogrid[0:3, 0:4]
    return {"labels": labels, "areas": areas, "border": int(border), "gap": np.sqrt(nearest2[:5]),
            "og": ogy * 10 + ogx, "ogshape": (ogy.shape, ogx.shape)}


@program()
def maze_flood_fill(np):
    maze = np.array([[0, 0, 1, 0, 0, 0],
                     [1, 0, 1, 0, 1, 0],
                     [0, 0, 0, 0, 1, 0],
                     [0, 1, 1, 1, 1, 0],
                     [0, 0, 0, 0, 1, 0]], dtype=bool)  # True = wall
    dist = np.full(maze.shape, -1, dtype=np.int32)
    dist[0, 0] = 0
    frontier = np.zeros(maze.shape, dtype=bool); frontier[0, 0] = True
    d = 0
    while frontier.any():
        d += 1
        nb = np.zeros_like(frontier)
        nb[1:, :] |= frontier[:-1, :]; nb[:-1, :] |= frontier[1:, :]
        nb[:, 1:] |= frontier[:, :-1]; nb[:, :-1] |= frontier[:, 1:]
        frontier = nb & ~maze & (dist < 0)
        dist[frontier] = d
    reach = dist >= 0
    # connected labels by repeated max-propagation
    lab = np.where(~maze, np.arange(maze.size).reshape(maze.shape) + 1, 0)
    for _ in range(30):
        p = np.pad(lab, 1)
        m = np.maximum.reduce([p[1:-1, 1:-1], p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])
        lab = np.where(maze, 0, m)
    return {"dist": dist, "reach": int(reach.sum()), "far": int(dist.max()), "nlab": len(np.unique(lab[lab > 0])),
            "path_end": int(dist[-1, -1]), "argwhere_far": np.argwhere(dist == dist.max())}


# --- finance ---------------------------------------------------------------------------------

@program()
def finance_rolling(np):
    prices = 100 * np.cumprod(1 + 0.01 * np.sin(np.arange(60) / 3.0) + 0.002)
    rets = np.diff(prices) / prices[:-1]
    logr = np.diff(np.log(prices))
    win = np.lib.stride_tricks.sliding_window_view(rets, 10)
    vol = win.std(axis=1, ddof=1) * np.sqrt(252)
    sma = win.mean(axis=-1)
    peak = np.maximum.accumulate(prices)
    dd = prices / peak - 1
    mdd = dd.min()
    mdd_end = int(np.argmin(dd)); mdd_start = int(np.argmax(prices[:mdd_end + 1]))
    ema = np.empty_like(prices); ema[0] = prices[0]; a = 2 / 11
    for i in range(1, len(prices)):
        ema[i] = a * prices[i] + (1 - a) * ema[i - 1]
    sharpe = rets.mean() / rets.std() * np.sqrt(252)
    st = np.lib.stride_tricks.as_strided(prices, shape=(len(prices) - 4, 5), strides=(prices.strides[0], prices.strides[0]))
    return {"vol": vol, "sma": sma, "dd": dd, "mdd": mdd, "span": (mdd_start, mdd_end), "ema_end": ema[-1], "sharpe": sharpe,
            "logr_sum": logr.sum(), "cum": np.exp(logr.cumsum())[-1], "st_max": st.max(axis=1), "pos_days": int((rets > 0).sum())}


@program()
def ufunc_methods_finance(np):
    cash = np.array([-100.0, 20, 30, 40, 50])
    rate = 0.05
    disc = np.power(1 + rate, -np.arange(len(cash)))
    npv = np.sum(cash * disc)
    balances = np.add.accumulate(cash)
    growth = np.multiply.accumulate(np.array([1.01, 1.02, 0.99, 1.03]))
    monthly = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    quarters = np.add.reduceat(monthly, [0, 3, 6, 9])
    qmax = np.maximum.reduceat(monthly, [0, 3, 6, 9])
    book = np.zeros(5)
    np.add.at(book, [0, 1, 1, 3, 3, 3], [10.0, 5, 5, 1, 1, 1])
    lo = np.full(3, 100.0); np.minimum.at(lo, [0, 0, 2], [50.0, 70.0, 20.0])
    table = np.multiply.outer(np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2]))
    cmp = np.greater.outer(np.arange(3), np.arange(3))
    red = np.logical_or.reduce(np.array([[True, False], [False, False]]), axis=0)
    return {"npv": npv, "bal": balances, "growth": growth, "q": quarters, "qmax": qmax, "book": book, "lo": lo,
            "table": table, "cmp": cmp, "red": red, "sub_acc": np.subtract.accumulate(np.array([10, 1, 2, 3])),
            "max_red_ax": np.maximum.reduce(np.arange(12).reshape(3, 4), axis=1), "bitor": np.bitwise_or.reduce(np.array([1, 2, 4, 8]))}


# --- signal processing -----------------------------------------------------------------------

@program(tol=1e-3)
def spectrum_rfft(np):
    fs = 64.0
    t = np.arange(128) / fs
    x = np.sin(2 * np.pi * 5 * t) + 0.5 * np.sin(2 * np.pi * 12 * t)
    X = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), d=1 / fs)
    peaks = f[np.argsort(np.abs(X))[-2:]]
    back = np.fft.irfft(X, n=len(x))
    full = np.fft.fft(x)
    ff = np.fft.fftshift(np.fft.fftfreq(8, d=0.5))
    Xw = np.fft.rfft(x * np.hanning(len(x)))
    pw = np.abs(Xw) ** 2
    ish = np.fft.ifftshift(np.fft.fftshift(np.arange(7)))
    X2 = np.fft.fft2(np.outer(np.sin(t[:8]), np.cos(t[:8])))
    return {"f_len": len(f), "peaks": np.sort(peaks), "back": back, "full_sym": np.abs(full[1:4] - np.conj(full[-1:-4:-1])).max(),
            "ff": ff, "pw_peak": f[np.argmax(pw)], "ish": ish, "X2": np.abs(X2), "irfft_odd": np.fft.irfft(np.fft.rfft(x[:9]), 9),
            "rfft_n": np.abs(np.fft.rfft(x, n=16)), "ortho": np.abs(np.fft.fft(x[:8], norm="ortho"))}


@program(tol=1e-3)
def windows_convolve(np):
    wins = {"hann": np.hanning(9), "hamm": np.hamming(9), "black": np.blackman(9), "bart": np.bartlett(9), "kais": np.kaiser(9, 5.0)}
    x = np.array([1.0, 2.0, 3.0, 0.0, -1.0, 2.0, 4.0])
    k = np.array([0.25, 0.5, 0.25])
    out = {k2: v for k2, v in wins.items()}
    out["full"] = np.convolve(x, k)
    out["same"] = np.convolve(x, k, mode="same")
    out["valid"] = np.convolve(x, k, mode="valid")
    out["corr"] = np.correlate(x, np.array([1.0, -1.0]), mode="full")
    out["corr_valid"] = np.correlate(x, k)
    out["auto"] = np.correlate(x - x.mean(), x - x.mean(), mode="full")[len(x) - 1:]
    out["smooth"] = np.convolve(x, np.ones(3) / 3, mode="valid")
    out["int_conv"] = np.convolve(np.array([1, 2, 3]), np.array([0, 1, 0.5]))
    out["w1"] = np.hanning(1); out["w0"] = np.hamming(0)
    out["sinc"] = np.sinc(np.linspace(-2, 2, 9))
    return out


# --- images on uint8 -------------------------------------------------------------------------

@program()
def uint8_images(np):
    img = (np.arange(64, dtype=np.uint8) * 7).reshape(8, 8)
    wrapped = img + np.uint8(200)
    sat = np.clip(img.astype(np.int16) + 200, 0, 255).astype(np.uint8)
    inv = 255 - img
    neg = ~img
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    cdf_m = np.ma.masked_equal(cdf, 0) if False else cdf
    eq = ((cdf[img] - cdf.min()) * 255 // (cdf.max() - cdf.min())).astype(np.uint8)
    bits = np.unpackbits(img[:2], axis=1)
    packed = np.packbits(bits, axis=1)
    thr = (img > 128).astype(np.uint8) * 255
    rgb = np.stack([img, img // 2, 255 - img], axis=-1)
    gray = (rgb @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)
    return {"wrapped": wrapped, "wdtype": str(wrapped.dtype), "sat": sat, "inv": inv, "neg": neg, "eq": eq, "packed": packed,
            "rt": packed == img[:2], "thr": thr, "rot": np.rot90(img[:3, :4]), "rot3": np.rot90(img[:3, :4], k=3),
            "flipud": np.flipud(img[:2, :3]), "fliplr": np.fliplr(img[:2, :3]), "gray": gray, "and": img & 0x0F,
            "shift": img >> 4, "lshift": (img << 1)[:2], "xor": np.bitwise_xor(img, 0xFF)[:2], "mean": img.mean(),
            "sum_dtype": img.sum().dtype.kind, "sum": int(img.sum()), "max_u8": img.max(), "mdtype": str(img.max().dtype),
            "bits_lsb": np.unpackbits(np.array([6], dtype=np.uint8), bitorder="little"), "cnt": np.count_nonzero(bits)}


@program()
def image_filters(np):
    img = np.add.outer(np.arange(10.0), np.arange(12.0)) % 7
    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16.0
    P = np.pad(img, 1, mode="edge")
    W = np.lib.stride_tricks.sliding_window_view(P, (3, 3))
    blur = np.einsum("ijkl,kl->ij", W, k)
    sx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])
    gx = (W * sx).sum(axis=(2, 3)); gy = (W * sx.T).sum(axis=(2, 3))
    mag = np.hypot(gx, gy)
    med = np.median(W.reshape(10, 12, 9), axis=-1)
    mx = W.max(axis=(2, 3))
    down = img[::2, ::2]
    up = np.repeat(np.repeat(down, 2, axis=0), 2, axis=1)
    crop = img[2:-2, 3:-3]
    tr = np.transpose(img)[:3]
    return {"blur": blur, "mag": mag, "med": med, "mx": mx, "up": up, "crop": crop, "tr": tr,
            "norm": (img - img.min()) / np.ptp(img), "edges": int((mag > 4).sum())}


# --- linear algebra --------------------------------------------------------------------------

@program(tol=1e-3)
def linalg_programs(np):
    A = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
    y = np.array([6.0, 5.0, 7.0, 10.0])
    coef, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    Q, R = np.linalg.qr(A)
    Qc, Rc = np.linalg.qr(A, mode="complete")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    S = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])
    w, V = np.linalg.eigh(S)
    det = np.linalg.det(S)
    mp = np.linalg.matrix_power(S, 4)
    mp0 = np.linalg.matrix_power(S, 0)
    mpn = np.linalg.matrix_power(S, -2)
    M = np.arange(1.0, 10.0).reshape(3, 3)
    norms = [np.linalg.norm(M, ord) for ord in (None, "fro", 1, -1, 2, np.inf, -np.inf, "nuc")]
    vn = [np.linalg.norm(np.array([3.0, -4.0, 0.0]), ord) for ord in (0, 1, 2, np.inf, -np.inf, 3)]
    pinv = np.linalg.pinv(A)
    Ab = np.stack([S, 2 * S]); bb = np.ones((2, 3))
    xb = np.linalg.solve(Ab, bb[..., None])[..., 0]
    cond = np.linalg.cond(S)
    inv_b = np.linalg.inv(Ab)
    dets = np.linalg.det(Ab)
    sign, logdet = np.linalg.slogdet(S)
    return {"coef": coef, "res": res, "rank": int(rank), "sv": sv, "QR": Q @ R, "Qc_shape": Qc.shape, "absR": np.abs(R),
            "s": s, "USV": U @ np.diag(s) @ Vt, "w": w, "SV": np.abs(V.T @ S @ V), "det": det, "mp": mp, "mp0": mp0, "mpn": mpn,
            "norms": norms, "vn": vn, "pinvA": pinv @ A, "xb": xb, "cond": cond, "inv_b": inv_b, "dets": dets, "sign": sign,
            "logdet": logdet, "norm_ax": np.linalg.norm(M, axis=0), "norm_ax1": np.linalg.norm(M, ord=1, axis=1),
            "norm_keep": np.linalg.norm(M, axis=1, keepdims=True), "eigvalsh": np.linalg.eigvalsh(S), "trace_off": np.trace(M, offset=1),
            "diag_off": np.diagonal(M, offset=-1), "multi_dot": np.linalg.multi_dot([M, S, M])}


@program(tol=1e-3)
def least_squares_fit(np):
    x = np.linspace(0, 2, 11)
    y = 1.5 * x ** 2 - 0.5 * x + 2.0 + 0.01 * np.cos(7 * x)
    V = np.vander(x, 3)
    c, *_ = np.linalg.lstsq(V, y, rcond=None)
    V2 = np.column_stack([np.ones_like(x), x, x ** 2])
    c2 = np.linalg.solve(V2.T @ V2, V2.T @ y)
    pred = V @ c
    r2 = 1 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    Ym = np.stack([y, 2 * y], axis=1)
    cm, res, rk, _ = np.linalg.lstsq(V, Ym, rcond=None)
    W = np.diag(np.linspace(1, 2, 11))
    cw = np.linalg.inv(V.T @ W @ V) @ V.T @ W @ y
    return {"c": c, "c2": c2[::-1], "r2": r2, "cm": cm, "res_shape": res.shape, "rk": int(rk), "cw": cw,
            "poly": np.polyval(c, 1.5), "pfit": np.polyfit(x, y, 2)}


# --- statistics ------------------------------------------------------------------------------

@program(tol=1e-3)
def statistics_weighted(np):
    X = np.array([[1.0, 2.0, 4.0, 7.0], [2.0, 3.0, 5.0, 11.0], [0.5, 1.0, 1.5, 2.0]])
    out = {"cov": np.cov(X), "cov_cols": np.cov(X, rowvar=False), "cov_ddof0": np.cov(X, ddof=0), "cov_bias": np.cov(X, bias=True),
           "corr": np.corrcoef(X), "corr_cols": np.corrcoef(X, rowvar=False), "cov_xy": np.cov(X[0], X[1]),
           "corr_xy": np.corrcoef(X[0], X[1])[0, 1]}
    w = np.array([1.0, 2.0, 3.0, 4.0])
    out["avg"] = np.average(X, axis=1, weights=w)
    avg, sw = np.average(X, axis=1, weights=w, returned=True)
    out["sw"] = sw
    out["avg_all"] = np.average(X)
    x = np.array([1.0, np.nan, 3.0, 4.0, np.nan, 10.0])
    out["nanpct"] = np.nanpercentile(x, [25, 50, 75])
    out["nanq"] = np.nanquantile(x, 0.5)
    v = np.array([7.0, 1.0, 3.0, 9.0, 4.0, 6.0])
    for m in ("linear", "lower", "higher", "nearest", "midpoint"):
        out["q_" + m] = np.quantile(v, [0.1, 0.5, 0.9], method=m)
    out["pct_ax"] = np.percentile(X, 50, axis=1, keepdims=True)
    out["median_ax"] = np.median(X, axis=0)
    out["std_ddof"] = X.std(axis=1, ddof=1)
    out["var"] = np.var(X, axis=0)
    out["zs"] = (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, keepdims=True)
    out["ptp"] = np.ptp(X, axis=1)
    return out


@program()
def histograms_binning(np):
    x = np.array([0.1, 0.4, 0.5, 0.9, 1.2, 1.5, 2.2, 2.5, 2.9, 3.0])
    y = np.array([1.0, 0.5, 0.2, 0.9, 1.9, 0.1, 2.5, 2.6, 0.3, 1.1])
    H, xe, ye = np.histogram2d(x, y, bins=3)
    H2, xe2, ye2 = np.histogram2d(x, y, bins=[np.array([0, 1, 2, 3]), np.array([0, 1.5, 3])])
    Hd, edges = np.histogramdd(np.stack([x, y], axis=1), bins=(2, 2))
    bins = np.array([0.0, 1.0, 2.0, 3.0])
    d = np.digitize(x, bins)
    dr = np.digitize(x, bins, right=True)
    dd = np.digitize(x, bins[::-1])
    h, e = np.histogram(x, bins=4, range=(0, 4))
    hd, _ = np.histogram(x, bins=3, density=True)
    hw, _ = np.histogram(x, bins=bins, weights=y)
    cnt = np.bincount(d)
    sums = np.bincount(d, weights=y)
    return {"H": H, "xe": xe, "ye": ye, "H2": H2, "Hd": Hd, "edges0": edges[0], "d": d, "dr": dr, "dd": dd, "h": h, "e": e,
            "hd": hd, "hw": hw, "cnt": cnt, "sums": sums, "ss": np.searchsorted(bins, x, side="right")}


# --- data wrangling --------------------------------------------------------------------------

@program()
def data_wrangling_sort(np):
    last = np.array([3, 1, 2, 1, 3, 2])
    first = np.array([9, 4, 7, 2, 1, 8])
    order = np.lexsort((first, last))
    a = np.array([9, 1, 8, 2, 7, 3, 6, 4, 5, 0])
    part = np.partition(a, 3)
    ap = np.argpartition(a, 3)
    top3 = np.sort(a[np.argpartition(a, -3)[-3:]])
    keys = np.array([40, 10, 30, 20])
    srt = np.argsort(keys)
    pos = np.searchsorted(keys, [25, 10, 45], sorter=srt)
    vals, inv = np.unique(np.array([3, 1, 3, 2, 1]), return_inverse=True)
    vals2, idx, inv2, cnt = np.unique(np.array([5, 5, 2, 9, 2, 2]), return_index=True, return_inverse=True, return_counts=True)
    rows, rinv = np.unique(np.array([[1, 2], [3, 4], [1, 2]]), axis=0, return_inverse=True)
    isin = np.isin(np.array([1, 2, 3, 4, 5]), [2, 4, 6])
    notin = np.isin(np.array([1, 2, 3]), [2], invert=True)
    sd = np.setdiff1d([5, 1, 3, 3, 7], [3, 9])
    un = np.union1d([3, 1, 2], [2, 5])
    inter, ia, ib = np.intersect1d([1, 3, 4, 3], [3, 1, 2, 1], return_indices=True)
    xo = np.setxor1d([1, 2, 3], [2, 3, 4])
    desc = np.sort(a)[::-1]
    am = np.argsort(-a, kind="stable")
    return {"order": order, "sorted_last": last[order], "part3": np.sort(part[:3]), "part_pivot": part[3], "ap_pivot": a[ap[3]],
            "top3": top3, "pos": pos, "vals": vals, "inv": inv, "vals2": vals2, "idx": idx, "inv2": inv2, "cnt": cnt, "rows": rows,
            "rinv": rinv.ravel(), "isin": isin, "notin": notin, "sd": sd, "un": un, "inter": inter, "ia": ia, "ib": ib, "xo": xo,
            "desc": desc, "am": am, "sort2d": np.sort(np.array([[3, 1], [0, 5]]), axis=None), "msort_ax0": np.sort(np.array([[3, 1], [0, 5]]), axis=0)}


@program()
def split_and_apply(np):
    a = np.arange(10)
    s = np.split(a, 5)
    s2 = np.split(a, [3, 7])
    arr = np.array_split(a, 3)
    M = np.arange(24).reshape(4, 6)
    hs = np.hsplit(M, 3)
    vs = np.vsplit(M, [1])
    ds = np.dsplit(M.reshape(2, 3, 4), 2)
    rng = np.apply_along_axis(lambda r: r.max() - r.min(), 1, M)
    nrm = np.apply_along_axis(lambda r: r / r.sum(), 0, M.astype(float) + 1)
    f = np.vectorize(lambda x, y: x * 10 + y if x > y else y)
    vf = f(np.array([1, 5, 3]), np.array([2, 2, 2]))
    pw = np.piecewise(np.linspace(-2, 2, 5), [np.linspace(-2, 2, 5) < 0, np.linspace(-2, 2, 5) >= 0], [lambda x: -x, lambda x: x ** 2])
    x = np.arange(-3, 4)
    sel = np.select([x < -1, x > 1], [x * 10, x * 100], default=0)
    ch = np.choose(np.array([0, 2, 1, 0]), [np.array([1, 2, 3, 4]), np.array([10, 20, 30, 40]), np.array([100, 200, 300, 400])])
    chc = np.choose(np.array([0, 3, 1]), [5, 6, 7, 8])
    return {"s": s, "s2": s2, "arr": arr, "hs": hs, "vs": vs, "ds0": ds[0], "rng": rng, "nrm": nrm, "vf": vf, "pw": pw, "sel": sel,
            "ch": ch, "chc": chc, "n_arr": [len(p) for p in np.array_split(np.arange(7), 4)], "empty_split": np.array_split(np.arange(2), 3)}


@program()
def take_put_along(np):
    a = np.array([[10, 30, 20], [60, 40, 50]])
    idx = np.argsort(a, axis=1)
    srt = np.take_along_axis(a, idx, axis=1)
    mx = np.take_along_axis(a, np.argmax(a, axis=1)[:, None], axis=1)
    b = a.copy()
    np.put_along_axis(b, np.argmax(b, axis=1)[:, None], -1, axis=1)
    ii = np.indices((2, 3))
    I, J = np.ix_([0, 1], [2, 0])
    sub = a[I, J]
    g = np.mgrid[0:2, 0:3]
    og = np.ogrid[0:2, 0:3]
    rr = np.r_[1:4, 0, np.array([7, 8])]
    rl = np.r_[-1:1:5j]
    cc = np.c_[np.array([1, 2, 3]), np.array([4, 5, 6])]
    r2 = np.r_["0,2", [1, 2], [3, 4]]
    tk = np.take(a, [0, 5, 2])
    tk1 = np.take(a, [2, 0], axis=1)
    tkw = np.take(np.arange(5), [7, -8], mode="wrap")
    tkc = np.take(np.arange(5), [7, -8], mode="clip")
    cmp = np.compress([True, False, True], a, axis=1)
    ext = np.extract(a > 25, a)
    return {"srt": srt, "mx": mx, "b": b, "ii": ii, "sub": sub, "g": g, "og0": og[0], "og1": og[1], "rr": rr, "rl": rl, "cc": cc,
            "r2": r2, "tk": tk, "tk1": tk1, "tkw": tkw, "tkc": tkc, "cmp": cmp, "ext": ext, "diag_idx": np.diag_indices(3),
            "tril_idx": np.tril_indices(3, -1), "triu_from": np.triu_indices_from(np.ones((3, 3)), 1), "ravel_multi": np.ravel_multi_index(([0, 1], [2, 1]), (2, 3))}


@program(tol=1e-3)
def einsum_tensordot(np):
    A = np.arange(24.0).reshape(2, 3, 4)
    B = np.arange(20.0).reshape(4, 5)
    M = np.arange(9.0).reshape(3, 3)
    v = np.array([1.0, 2.0, 3.0])
    return {"bmm": np.einsum("ijk,kl->ijl", A, B, optimize=True), "opt_greedy": np.einsum("ij,jk,kl->il", M, M, M, optimize="greedy"),
            "trace": np.einsum("ii", M), "diag": np.einsum("ii->i", M), "T": np.einsum("ij->ji", M), "outer": np.einsum("i,j", v, v),
            "ell": np.einsum("...ij,...j->...i", np.stack([M, M]), v), "sum_ax": np.einsum("ijk->j", A),
            "td0": np.tensordot(v, v, axes=0).shape, "td2": np.tensordot(A, A, axes=([1, 2], [1, 2])), "tdi": np.tensordot(A, B, axes=1),
            "kron": np.kron(np.eye(2), M), "kron_v": np.kron([1, 10], [1, 2, 3]), "tr_off": np.trace(A, axis1=1, axis2=2),
            "diag3": np.diagonal(A, axis1=0, axis2=2), "bilinear": np.einsum("i,ij,j", v, M, v), "path": len(np.einsum_path("ij,jk,kl->il", M, M, M)[0])}


# --- integers --------------------------------------------------------------------------------

@program()
def integer_semantics(np):
    a = np.array([-7, -3, 0, 3, 7])
    out = {"fd": a // 2, "fdn": a // -2, "mod": a % 3, "modn": a % -3, "fmod": np.fmod(a, -3), "rem": np.remainder(a, 4),
           "divmod": np.divmod(a, 4), "trunc_div": (a / 2).astype(int), "neg_pow": a ** 2}
    i8 = np.array([120, 127, -128], dtype=np.int8)
    out["i8_wrap"] = i8 + np.int8(10)
    out["i8_dtype"] = str((i8 + np.int8(10)).dtype)
    u8 = np.array([250, 5], dtype=np.uint8)
    out["u8_wrap"] = u8 + np.uint8(10)
    out["u8_sub"] = np.array([3], dtype=np.uint8) - np.array([5], dtype=np.uint8)
    out["u8_pyint"] = u8 + 10
    out["u8_pyint_dtype"] = str((u8 + 10).dtype)
    out["u8_astype"] = np.array([300, -1, 256]).astype(np.uint8)
    out["i16_astype"] = np.array([40000, -40000]).astype(np.int16)
    out["iinfo"] = [int(np.iinfo(np.int16).max), int(np.iinfo(np.uint8).max), int(np.iinfo(np.int64).min), np.iinfo(np.int32).bits]
    fi = np.finfo(np.float32)
    out["finfo32"] = [float(fi.eps), float(fi.tiny), fi.bits, float(np.finfo(np.float64).eps), int(fi.precision)]
    big = np.array([2 ** 40, 3])
    out["big"] = big * 2
    out["big_dtype"] = str(big.dtype)
    out["int_default"] = str(np.array([1, 2, 3]).dtype)
    out["arange_dtype"] = str(np.arange(5).dtype)
    out["sum_i32"] = str(np.array([1, 2], dtype=np.int32).sum().dtype)
    b = np.array([True, False, True])
    out["bool_sum"] = b.sum()
    out["bool_add"] = b + b
    out["bool_mul"] = b * 3
    out["bool_mean"] = b.mean()
    out["bool_cumsum"] = np.cumsum(b)
    out["pow_int"] = np.array([2, 3]) ** np.array([10, 3])
    out["abs_min"] = np.abs(np.array([-128], dtype=np.int8))
    out["shift"] = np.left_shift(np.array([1], dtype=np.int64), 40)
    out["gcd"] = np.gcd(np.array([12, 18, 7]), 6)
    out["lcm"] = np.lcm(np.array([4, 6]), 10)
    out["int_true_div"] = str((np.array([1, 2]) / 2).dtype).replace("float32", "float64")
    return out


@program()
def python_ints_nep50(np):
    x8 = np.array([1, 2, 3], dtype=np.int8)
    f32 = np.array([1.5, 2.5], dtype=np.float32)
    out = {"i8_plus_1": str((x8 + 1).dtype), "i8_times_2.0": str((x8 * 2.0).dtype).replace("float32", "float64"),
           "f32_plus_1.0": str((f32 + 1.0).dtype), "f32_plus_np64": str((f32 + np.float64(1.0)).dtype),
           "i8_plus_i16": str((x8 + np.array([1], dtype=np.int16)).dtype), "u8_plus_i8": str((np.array([1], np.uint8) + x8).dtype),
           "bool_plus_1": str((np.array([True]) + 1).dtype), "i32_plus_i64": str((np.ones(2, np.int32) + np.ones(2, np.int64)).dtype),
           "rt": str(np.result_type(np.int8, np.uint8)), "rt2": str(np.result_type(np.float32, np.int16)),
           "pt": str(np.promote_types("i1", "u2")), "pt2": str(np.promote_types(np.uint32, np.int32)),
           "cc": [np.can_cast(np.int8, np.int16), np.can_cast(np.float64, np.float32), np.can_cast(np.float64, np.float32, "same_kind"),
                  np.can_cast(np.int64, np.uint8, "unsafe"), np.can_cast(np.uint8, np.int8)],
           "mst": str(np.min_scalar_type(255)), "rt_val": str(np.result_type(x8, 1)),
           "common": str(np.common_type(np.ones(2, np.float32), np.ones(2, np.float32)))}
    try:
        x8 + 1000
        out["overflow"] = "no error"
    except OverflowError:
        out["overflow"] = "OverflowError"
    out["i8_sum"] = x8.sum()
    out["i8_sum_dtype"] = x8.sum().dtype.kind
    out["scalar_mul"] = np.int8(100) * 2
    return out


@program()
def float64_precision(np):
    x = np.full(100_000, 0.1, dtype=np.float64)
    s = np.sum(x)
    c = np.cumsum(x)
    big = np.array([1e16, 1.0, -1e16], dtype=np.float64)
    f = np.float64(1) / 3
    v = np.arange(1, 1001, dtype=np.float64)
    return {"s": float(s), "s_dtype": str(s.dtype), "c_last": float(c[-1]), "c_dtype": str(c.dtype), "big": float(big.sum()),
            "f": float(f), "ftype": type(f).__name__, "harm": float((1 / v).sum()), "mean": float(v.mean()), "std": float(v.std()),
            "eps": bool(np.float64(1) + np.finfo(np.float64).eps > 1), "prod": float(np.prod(v[:20])),
            "dot": float(np.dot(v, v)), "exp_log": float(np.exp(np.log(v)).sum()), "repr": repr(np.float64(0.1)),
            "f64_item": type(np.array([1.0], dtype=np.float64)[0].item()).__name__, "add_py": float(np.float64(0.1) + 0.2)}


# --- in place and aliasing ---------------------------------------------------------------------

@program()
def inplace_aliasing(np):
    a = np.arange(6)
    a[1:] += a[:-1]
    b = np.arange(6)
    b[1:] = b[:-1]
    c = np.arange(10.0)
    np.copyto(c[2:], c[:-2])
    d = np.zeros(4)
    np.copyto(d, np.array([1.0, 2.0, 3.0, 4.0]), where=np.array([True, False, True, False]))
    e = np.arange(5.0)
    out = np.empty(5)
    r = np.multiply(e, 2, out=out)
    same = r is out
    f = np.arange(12).reshape(3, 4)
    v = f[:, 1]
    v *= 10
    g = f.T
    g[0, 0] = -1
    h = np.arange(4.0)
    np.add(h, 1, out=h)
    k = np.arange(6).reshape(2, 3)
    kv = k.reshape(3, 2)
    kv[0, 0] = 99
    m = np.arange(5)
    m[::2] = m[::-2]
    ro = np.broadcast_to(np.arange(3), (2, 3))
    try:
        ro[0, 0] = 5
        ro_err = "wrote"
    except ValueError:
        ro_err = "readonly"
    mx = np.zeros(3); np.maximum(np.array([1.0, -1.0, 2.0]), 0, out=mx)
    s = np.arange(5.0); s += s[::-1]
    t = np.ones((2, 2)); t *= np.array([2.0, 3.0])
    return {"a": a, "b": b, "c": c, "d": d, "r": r, "same": same, "f": f, "base_none": f.base is None, "v_base": v.base is not None,
            "h": h, "k": k, "m": m, "ro": ro_err, "mx": mx, "s": s, "t": t, "shares": bool(np.shares_memory(f, g)),
            "mayshare": bool(np.may_share_memory(a, b)), "owns": bool(np.arange(3).flags["OWNDATA"]), "c_contig": bool(f.T.flags["C_CONTIGUOUS"])}


# --- NaN handling ------------------------------------------------------------------------------

@program()
def nan_handling(np):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 6.0], [7.0, 8.0, np.inf]])
    out = {"nanmean": np.nanmean(x, axis=0), "nansum": np.nansum(x, axis=1), "nanmax": np.nanmax(x), "nanmin_ax": np.nanmin(x, axis=1),
           "nanargmax": np.nanargmax(x, axis=1), "nanargmin": np.nanargmin(x), "nanstd": np.nanstd(x[:, :2], axis=0),
           "nanvar": np.nanvar(np.array([1.0, np.nan, 3.0])), "nanmedian": np.nanmedian(x, axis=1), "nancumsum": np.nancumsum(x[0]),
           "nanprod": np.nanprod(x[0]), "nancumprod": np.nancumprod(x[0]), "ntn": np.nan_to_num(x)[:, :2], "ntn64": np.nan_to_num(np.array([np.inf, -np.inf, np.nan], dtype=np.float64)), "ntn_kw": np.nan_to_num(x, nan=-1.0, posinf=99.0),
           "isclose": np.isclose(np.array([1.0, np.nan, 1e-9]), np.array([1.0 + 1e-9, np.nan, 0.0])),
           "isclose_nan": np.isclose(np.array([np.nan, 1.0]), np.array([np.nan, 1.1]), equal_nan=True),
           "allclose": np.allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan])),
           "allclose_nan": np.allclose(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True),
           "array_equal_nan": np.array_equal(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True),
           "isnan_count": int(np.isnan(x).sum()), "fill": np.where(np.isnan(x), np.nanmean(x, axis=0), x), "isfinite": np.isfinite(x),
           "isposinf": np.isposinf(x), "fmax": np.fmax(x[0], x[1]), "maximum": np.maximum(x[0], x[1]), "nanmean_all": np.nanmean(x[:2])}
    col = np.array([np.nan, 2.0, np.nan, 4.0])
    idx = np.where(~np.isnan(col), np.arange(len(col)), 0)
    np.maximum.accumulate(idx, out=idx)
    out["ffill"] = col[idx]
    return out


# --- printing (repr(x) is pymetal's own, Array([...], dtype=...): str and the formatters are NumPy's) --

@program()
def printing_options(np):
    a = np.array([1.0, 2.5, 3.14159], dtype=np.float64)
    out = {"a2s": np.array2string(a, precision=2), "a2s_sep": np.array2string(np.array([1, 2, 3]), separator=", "),
           "str0d_i": str(np.array(5)), "str0d": str(np.array(2.5)), "f32_str": str(np.float32(0.1)), "f32_repr": repr(np.float32(0.5)).replace("np.", ""),
           "fmt": format(np.float32(2.0) / 3, ".3f"), "fmt_i": format(np.int64(42), "05d"), "i_str": str(np.int64(7)),
           "bool_str": str(np.bool_(True)), "list_str": str(np.array([[1, 2], [3, 4]])), "int_str": str(np.array([1, 2, 3])),
           "f_repr": np.array_repr(np.array([0.5, 1.25], dtype=np.float64)), "empty_repr": np.array_repr(np.array([], dtype=np.float64)),
           "bool_str_arr": str(np.array([True, False])), "u8_str": str(np.array([1, 2], dtype=np.uint8)),
           "a2s_supp": np.array2string(np.array([1e-10, 1.0], dtype=np.float64), suppress_small=True)}
    with np.printoptions(precision=3, suppress=True):
        out["po"] = str(np.array([1e-8, 1.23456789], dtype=np.float64))
    old = np.get_printoptions()["precision"]
    np.set_printoptions(precision=2)
    out["spo"] = str(np.array([3.14159], dtype=np.float64))
    np.set_printoptions(precision=old)
    out["after"] = str(np.array([3.14159], dtype=np.float64))
    out["pct"] = "%5.2f|%d" % (np.float64(3.14159), np.int32(3))
    out["fstr"] = f"{np.array([1.5], dtype=np.float64)[0]:.1f} {np.int8(5):3d}"
    out["tolist"] = np.array([[1.5, 2.0]], dtype=np.float64).tolist()
    out["item"] = np.array([[7]]).item()
    out["fmt_float_arr"] = np.format_float_positional(np.float64(0.1 + 0.2), precision=4)
    out["sci"] = np.format_float_scientific(np.float64(12345.678), precision=2)
    out["base_repr"] = np.base_repr(10, 2)
    out["binary_repr"] = np.binary_repr(-3, width=4)
    return out


# --- memory and shapes -------------------------------------------------------------------------

@program()
def shapes_memory(np):
    a = np.arange(6).reshape(2, 3)
    out = {"bt": np.broadcast_to(np.array([1, 2, 3]), (4, 3)), "ba": [x.shape for x in np.broadcast_arrays(np.ones((3, 1)), np.ones(4))],
           "bshape": np.broadcast_shapes((3, 1), (1, 4), (4,)), "at2": np.atleast_2d(np.array([1, 2])).shape, "at3": np.atleast_3d(a).shape,
           "at1": np.atleast_1d(5).shape, "ed": np.expand_dims(a, axis=(0, 2)).shape, "sq": np.squeeze(np.ones((1, 3, 1))).shape,
           "sq_ax": np.squeeze(np.ones((1, 3, 1)), axis=2).shape, "ma": np.moveaxis(np.ones((2, 3, 4)), 0, -1).shape,
           "ma2": np.moveaxis(np.ones((2, 3, 4)), [0, 1], [-1, -2]).shape, "sw": np.swapaxes(np.ones((2, 3, 4)), 0, 2).shape,
           "rf": np.ravel(a, order="F"), "ff": a.flatten("F"), "rs": a.reshape(-1), "rsF": a.reshape((3, 2), order="F"),
           "rs2": np.reshape(a, (-1, 2)), "resize": np.resize(a, (3, 4)), "resize1": np.resize(np.array([1, 2]), 5),
           "ndim_list": np.ndim([[1, 2], [3, 4]]), "shape_list": np.shape([[1, 2, 3]]), "size_list": np.size([[1, 2], [3, 4]]),
           "size_ax": np.size(a, 1), "ra": np.rollaxis(np.ones((2, 3, 4)), 2).shape, "T3": np.transpose(np.ones((2, 3, 4)), (1, 0, 2)).shape,
           "mT": a.T.shape, "stack_ax": np.stack([a, a], axis=-1).shape, "cs": np.column_stack([np.arange(3), np.arange(3)]),
           "rowstack": np.vstack([np.arange(3), np.arange(3)]).shape, "dstack": np.dstack([a, a]).shape, "concat_none": np.concatenate([a, a], axis=None),
           "append": np.append(a, [[9, 9, 9]], axis=0), "append_flat": np.append(a, 7), "insert": np.insert(np.arange(5), 2, 99),
           "delete": np.delete(a, 1, axis=1), "tile": np.tile(np.array([1, 2]), (2, 2)), "repeat": np.repeat(a, [1, 2], axis=0),
           "itemsize": a.itemsize * 0 + np.dtype(np.int16).itemsize, "nbytes": np.ones(5, dtype=np.float64).nbytes, "strides": np.ones((2, 3), dtype=np.int16).strides,
           "flat_list": list(a.flat), "ascont": np.ascontiguousarray(a.T).flags["C_CONTIGUOUS"], "empty_shape": np.ones((0, 3)).sum(axis=0),
           "empty_reshape": np.ones((0, 3)).reshape(-1, 6).shape}
    return out


# --- equality, comparison, complex sorting, dates ----------------------------------------------

@program()
def equality_and_lists(np):
    a = np.array([1, 2, 3])
    out = {"eq_list": a == [1, 5, 3], "ne_list": a != [1, 5, 3], "eq_scalar": a == 2, "array_equal": np.array_equal(a, [1, 2, 3]),
           "array_equiv": np.array_equiv(a, [[1, 2, 3], [1, 2, 3]]), "eq_shape": np.array_equal(a, [1, 2]),
           "all_eq": bool((a == np.array([1, 2, 3])).all()), "lt_list": a < [2, 2, 2], "tuple_idx": np.arange(12).reshape(3, 4)[(1, 2)],
           "in": 2 in a, "not_in": 7 in a, "list_eq": a.tolist() == [1, 2, 3], "any_list": np.any([0, 0, 1]), "all_list": np.all([[1, 1], [1, 0]], axis=1),
           "max_of_list": np.maximum([1, 5], [3, 2]), "cmp_broadcast": np.array([[1], [2]]) == np.array([1, 2]),
           "bool_idx_list": a[[True, False, True]], "where_list": np.where([True, False], [1, 2], [3, 4]),
           "sort_complex": np.sort_complex(np.array([3, 1, 2])), "cplx_abs_sort": np.sort(np.abs(np.array([3 + 4j, 1 + 1j, -2 + 0j])))}
    return out


@program(expect={"dt": "error", "dt_arange": "error", "str_arr": "error", "obj": "error", "frompyfunc": "ok",
                 "str_astype": "error", "char": "error"})
def unsupported_kinds(np):
    out = _errors(np, [("dt", lambda: np.array(["2020-01-01"], dtype="datetime64[D]")),
                       ("dt_arange", lambda: np.arange("2020-01", "2020-03", dtype="datetime64[M]")),
                       ("str_arr", lambda: np.array(["x", "yy"])),
                       ("obj", lambda: np.empty(3, dtype=object)),
                       ("str_astype", lambda: np.arange(3).astype(str)),
                       ("char", lambda: np.char.upper(np.array(["a"])))])
    try:
        f = np.frompyfunc(lambda a, b: a * b, 2, 1)
        r = f(np.arange(3), 2)
        out["frompyfunc"] = "ok" if [int(v) for v in r] == [0, 2, 4] else "wrong"
    except (TypeError, NotImplementedError) as e:
        out["frompyfunc"] = "error" if str(e) else "empty message"
    return out


@program()
def complex_sorting_roots(np):
    z = np.array([3 + 1j, 1 - 1j, 1 + 2j, -2 + 0j], dtype=np.complex128)
    p = np.array([1.0, 0.0, 1.0])
    return {"by_abs": z[np.argsort(np.abs(z))], "by_real": z[np.argsort(z.real, kind="stable")], "roots": np.sort(np.roots(p).imag),
            "sorted": np.sort(z), "argsorted": np.argsort(z), "sort_complex": np.sort_complex(z), "var": np.var(z), "std": np.std(z),
            "sorted_2d": np.sort(np.stack([z, z[::-1]]), axis=1),
            "conj_prod": (z * np.conj(z)).real, "polar": np.abs(z) * np.exp(1j * np.angle(z)), "cumsum": np.cumsum(z), "mean": z.mean(),
            "real_if_close": np.real_if_close(np.array([1 + 1e-15j, 2 + 0j])), "iscomplex": np.iscomplex(np.array([1 + 0j, 1j])),
            "isreal": np.isreal(z), "iscomplexobj": np.iscomplexobj(z), "dot": np.vdot(z, z), "unique_real": np.unique(z.real)}


# --- misc scientific -------------------------------------------------------------------------

@program(tol=1e-3)
def physics_nbody(np):
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.5], [-1.0, -1.0]])
    vel = np.zeros_like(pos); mass = np.array([10.0, 1.0, 1.0, 0.5]); dt = 0.01
    energies = []
    for _ in range(20):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = (d ** 2).sum(-1) + 1e-3
        np.fill_diagonal(r2, np.inf)
        acc = (d * (mass[None, :, None] / r2[..., None] ** 1.5)).sum(axis=1)
        vel += acc * dt; pos += vel * dt
        ke = 0.5 * (mass * (vel ** 2).sum(1)).sum()
        iu = np.triu_indices(4, 1)
        pe = -(mass[iu[0]] * mass[iu[1]] / np.sqrt(r2[iu])).sum()
        energies.append(ke + pe)
    return {"pos": pos, "vel": vel, "E": np.array(energies), "com": (mass[:, None] * pos).sum(0) / mass.sum()}


@program(tol=1e-3)
def markov_pagerank(np):
    links = np.array([[0, 1, 1, 0], [0, 0, 1, 0], [1, 0, 0, 1], [0, 0, 1, 0]], dtype=float)
    out_deg = links.sum(axis=1, keepdims=True)
    P = np.divide(links, out_deg, out=np.zeros_like(links), where=out_deg > 0)
    n = len(P); d = 0.85
    r = np.full(n, 1 / n)
    for _ in range(50):
        r = (1 - d) / n + d * r @ P
    T = np.array([[0.9, 0.1], [0.5, 0.5]])
    w, v = np.linalg.eig(T.T)
    st = np.real(v[:, np.argmin(np.abs(w - 1))]); st = st / st.sum()
    Tn = np.linalg.matrix_power(T, 50)
    return {"r": r, "rank": np.argsort(-r), "st": st, "Tn": Tn, "rowsum": T.sum(1)}


@program(tol=0.05)
def monte_carlo_stats(np):
    rng = np.random.default_rng(7)
    x = rng.normal(0, 1, size=(4000, 3))
    cov = np.cov(x, rowvar=False)
    u = rng.uniform(size=5000)
    e = -np.log(1 - u)
    perm = rng.permutation(100)
    ints = rng.integers(0, 10, size=(1000,), dtype=np.int32)
    b = rng.binomial(10, 0.3, size=3000)
    p = rng.poisson(4.0, 3000)
    c = rng.choice(5, size=2000, p=[0.1, 0.2, 0.3, 0.2, 0.2])
    sh = np.arange(10); rng.shuffle(sh)
    return {"cov_diag": np.diag(cov), "cov_off": float(np.abs(cov[0, 1]) < 0.1), "e_mean": float(e.mean()), "perm": np.sort(perm),
            "ints": (int(ints.min()), int(ints.max()), str(ints.dtype)), "b": float(b.mean()) / 3, "p": float(p.mean()) / 4,
            "c_hist": np.bincount(c, minlength=5) / 2000 * 5, "sh": np.sort(sh), "shape": x.shape, "x_dtype_kind": x.dtype.kind}


@program()
def sparse_like_grouping(np):
    rows = np.array([0, 2, 2, 0, 1, 2])
    cols = np.array([0, 0, 1, 2, 2, 2])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    dense = np.zeros((3, 3)); dense[rows, cols] = vals
    acc = np.zeros((3, 3)); np.add.at(acc, (rows, cols), vals)
    order = np.lexsort((cols, rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=3))])
    keys = np.array([3, 1, 3, 2, 1, 3])
    u, inv = np.unique(keys, return_inverse=True)
    gsum = np.bincount(inv, weights=vals)
    gmax = np.full(len(u), -np.inf); np.maximum.at(gmax, inv, vals)
    srt = np.argsort(keys, kind="stable"); bounds = np.flatnonzero(np.diff(keys[srt])) + 1
    groups = np.split(vals[srt], bounds)
    return {"dense": dense, "acc": acc, "order": order, "indptr": indptr, "u": u, "gsum": gsum, "gmax": gmax,
            "groups": groups, "nnz": np.count_nonzero(dense), "spmv": dense @ np.array([1.0, 2.0, 3.0]), "nz": np.transpose(np.nonzero(dense))}


@program()
def polynomial_interp(np):
    x = np.array([0.0, 1.0, 2.0, 3.0])
    y = np.array([1.0, 3.0, 2.0, 5.0])
    xi = np.linspace(-0.5, 3.5, 9)
    lin = np.interp(xi, x, y)
    lin_lr = np.interp(xi, x, y, left=0, right=-1)
    V = np.vander(x, increasing=True)
    coef = np.linalg.solve(V, y)
    pv = np.polyval(coef[::-1], xi)
    c = np.polyfit(x, y, 3)
    d = np.polyder(c); i = np.polyint(c)
    p = np.poly1d(c)
    return {"lin": lin, "lin_lr": lin_lr, "coef": coef, "pv": pv, "c": c, "d": d, "i": i, "p2": p(2.0), "proots": np.sort(np.abs(p.roots)),
            "cumtrapz": np.concatenate([[0], np.cumsum((y[1:] + y[:-1]) / 2 * np.diff(x))]), "trapz": np.trapezoid(y, x)}


@program()
def structured_grid_indexing(np):
    grid = np.arange(30).reshape(5, 6)
    out = {"ellipsis": grid[..., 1], "neg_step": grid[::-2, ::-3], "mixed": grid[[0, 4], 1:3], "bool_row": grid[grid[:, 0] > 10],
           "bool_2d": grid[grid % 7 == 0], "fancy_2": grid[[0, 1, 2], [5, 4, 3]], "newaxis": grid[None, :, None, 0].shape,
           "int_arr_2d": grid[np.array([[0, 1], [2, 3]])].shape, "neg_idx": grid[-1, -2], "slice_assign": None}
    g = grid.copy(); g[1:3, ::2] = -1; out["slice_assign"] = g
    g2 = grid.copy(); g2[[0, 0, 1], [0, 0, 2]] += 100; out["dup_fancy_add"] = g2
    g3 = grid.copy(); g3[g3 > 25] = 0; out["mask_assign"] = g3
    g4 = grid.copy().astype(float); g4[:, [1, 3]] = np.array([0.5, 1.5]); out["col_assign"] = g4
    g5 = grid.copy(); g5[np.ix_([1, 3], [0, 5])] = 7; out["ix_assign"] = g5
    out["diag_view"] = np.diagonal(grid).copy()
    out["flat_idx"] = grid.flat[[1, 7, 29]]
    out["unravel"] = np.unravel_index([7, 29], grid.shape)
    out["argmax_unravel"] = np.unravel_index(np.argmax(grid), grid.shape)
    out["nonzero_tuple"] = np.nonzero(grid[:2] % 5 == 0)
    out["item_tuple"] = grid.item((2, 3))
    out["rot_idx"] = np.rot90(grid, 2)[0]
    return out


@program()
def statistics_descriptive(np):
    data = np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    m = data.mean(); s = data.std()
    skew = ((data - m) ** 3).mean() / s ** 3
    kurt = ((data - m) ** 4).mean() / s ** 4 - 3
    vals, counts = np.unique(data, return_counts=True)
    mode = vals[np.argmax(counts)]
    q1, q3 = np.percentile(data, [25, 75])
    iqr = q3 - q1
    outl = data[(data < q1 - 1.5 * iqr) | (data > q3 + 1.5 * iqr)]
    rank = np.argsort(np.argsort(data))
    z = (data - m) / s
    mad = np.median(np.abs(data - np.median(data)))
    hm = len(data) / np.sum(1.0 / data)
    gm = np.exp(np.mean(np.log(data)))
    return {"m": m, "s": s, "skew": skew, "kurt": kurt, "mode": mode, "iqr": iqr, "outl": outl, "rank": rank, "z": z, "mad": mad,
            "hm": hm, "gm": gm, "cummax": np.maximum.accumulate(data[::-1]), "minmax_norm": (data - data.min()) / np.ptp(data)}


@program()
def cellular_automaton_1d(np):
    rule = 30
    rule_bits = np.array([(rule >> i) & 1 for i in range(8)], dtype=np.uint8)
    width, steps = 31, 15
    state = np.zeros(width, dtype=np.uint8); state[width // 2] = 1
    hist = np.zeros((steps, width), dtype=np.uint8)
    for t in range(steps):
        hist[t] = state
        l = np.roll(state, 1); r = np.roll(state, -1)
        idx = (l << 2) | (state << 1) | r
        state = rule_bits[idx]
    pk = np.packbits(hist, axis=1)
    return {"hist": hist, "density": hist.mean(axis=1), "pk": pk, "center": hist[:, width // 2], "idx_dtype": str(idx.dtype)}


@program(tol=1e-3)
def kmeans_plus_knn(np):
    X = np.concatenate([np.add.outer(np.linspace(0, 1, 6), [0.0, 0.0]) + [0, 0.1 * k] for k in range(3)] +
                       [np.add.outer(np.linspace(5, 6, 6), [0.0, 0.0]) + [0, 0.1 * k] for k in range(3)])
    labels_true = np.repeat([0, 1], 18)
    q = np.array([[0.5, 0.1], [5.5, 0.2], [3.0, 0.0]])
    d = np.linalg.norm(X[None, :, :] - q[:, None, :], axis=-1)
    nn = np.argsort(d, axis=1)[:, :5]
    votes = labels_true[nn]
    pred = np.array([np.bincount(v, minlength=2).argmax() for v in votes])
    C = X[[0, -1]].copy()
    for _ in range(5):
        lab = np.argmin(((X[:, None] - C[None]) ** 2).sum(-1), axis=1)
        C = np.array([X[lab == k].mean(axis=0) for k in range(2)])
    sse = sum(((X[lab == k] - C[k]) ** 2).sum() for k in range(2))
    return {"pred": pred, "C": C[np.argsort(C[:, 0])], "sse": sse, "lab_counts": np.bincount(lab), "d_min": d.min(axis=1)}


@program()
def bitwise_flags(np):
    READ, WRITE, EXEC = 1, 2, 4
    perms = np.array([0, 1, 3, 5, 7, 6], dtype=np.uint8)
    can_w = (perms & WRITE) != 0
    add_x = perms | EXEC
    rm_r = perms & ~np.uint8(READ)
    tog = perms ^ 0b111
    popcnt = np.unpackbits(perms[:, None], axis=1).sum(axis=1)
    i32 = np.array([1, -1, 255], dtype=np.int32)
    return {"can_w": can_w, "add_x": add_x, "rm_r": rm_r, "tog": tog, "popcnt": popcnt, "inv_i32": np.invert(i32),
            "rshift": np.right_shift(i32, 1), "and_red": np.bitwise_and.reduce(np.array([7, 3, 5])), "xor_red": np.bitwise_xor.reduce(perms),
            "bool_xor": np.logical_xor([True, False], [True, True]), "bool_inv": ~np.array([True, False]), "bool_and": np.array([True, False]) & True}


@program()
def recurrence_cumulative(np):
    n = np.arange(1, 11)
    fact = np.cumprod(n)
    fib = np.zeros(15, dtype=np.int64); fib[1] = 1
    for i in range(2, 15):
        fib[i] = fib[i - 1] + fib[i - 2]
    tri = np.cumsum(n)
    pascal = np.zeros((6, 6), dtype=int); pascal[:, 0] = 1
    for i in range(1, 6):
        pascal[i, 1:] = pascal[i - 1, 1:] + pascal[i - 1, :-1]
    phi = fib[2:] / fib[1:-1]
    decay = 100 * np.power(0.5, np.arange(6))
    compound = np.cumprod(np.full(5, 1.05))
    return {"fact": fact, "fib": fib, "tri": tri, "pascal": pascal, "phi": phi[-3:], "decay": decay, "compound": compound,
            "cummin": np.minimum.accumulate(np.array([5, 3, 4, 1, 2])), "diff_cumsum": np.diff(np.cumsum(n)), "ediff1d": np.ediff1d(n, to_begin=0, to_end=[99])}


# --- second round: in-place shape/size, NumPy's submodules, whole algorithms ---------------------

@program()
def array_object_inplace(np):
    import os
    import pickle
    import tempfile
    a = np.arange(12)
    a.shape = (3, 4)
    b = np.arange(6.0)
    b.shape = (-1, 2)
    c = np.array([1, 2, 3])
    c.resize((2, 3), refcheck=False)
    d = np.zeros((2, 2), dtype=np.int16)
    d.resize(5)
    e = np.arange(4)
    e.setflags(write=False)
    try:
        e[0] = 1
        ro = "wrote"
    except ValueError:
        ro = "readonly"
    path = os.path.join(tempfile.mkdtemp(), "a.bin")
    np.arange(5, dtype=np.int32).tofile(path)
    back = np.fromfile(path, dtype=np.int32)
    txt = os.path.join(tempfile.mkdtemp(), "a.txt")
    np.array([1.5, 2.5], dtype=np.float32).tofile(txt, sep=",")
    tback = np.fromfile(txt, dtype=np.float32, sep=",")
    pk = pickle.loads(np.arange(3).dumps())
    sw = np.array([1, 256], dtype=np.int16).byteswap()
    none_eq = np.array([1.0, 2.0]) == None  # noqa: E711
    none_ne = np.array([1, 2]) != None  # noqa: E711
    try:
        t = np.arange(6).reshape(2, 3).T
        t.shape = (6,)
        shape_err = "no error"
    except AttributeError:
        shape_err = "AttributeError"
    return {"a": a, "b": b, "c": c, "d": d, "ro": ro, "back": back, "tback": tback, "pk": pk, "sw": sw,
            "none_eq": none_eq, "none_ne": none_ne, "shape_err": shape_err, "a_base": a.base is None}


@program(tol=1e-3)
def polynomial_module(np):
    P = np.polynomial
    x = np.linspace(0, 2, 11)
    y = 1.5 * x ** 2 - 0.5 * x + 2.0
    p = P.Polynomial.fit(x, y, 2)
    coef = p.convert().coef
    c = P.polynomial.polyfit(x, y, 2)
    val = P.polynomial.polyval(np.array([0.5, 1.5]), c)
    roots = np.sort(P.polynomial.polyroots([2.0, -3.0, 1.0]))
    der = P.polynomial.polyder(c)
    cheb = P.Chebyshev.fit(x, y, 3)
    leg = P.legendre.legval(np.array([0.0, 0.5]), [1.0, 2.0, 3.0])
    V = P.polynomial.polyvander(np.array([1.0, 2.0, 3.0]), 2)
    sq = np.emath.sqrt(np.array([-4.0, 4.0]))
    lg = np.emath.log(np.array([-1.0]))
    return {"coef": coef, "c": c, "val": val, "roots": roots, "der": der, "cheb": cheb(np.array([0.5, 1.0])), "leg": leg,
            "V": V, "sq": sq, "lg_imag": lg.imag, "fit_at": p(np.array([1.0]))}


@program(tol=1e-3)
def linalg_tensor_forms(np):
    A = np.array([[2.0, 5.0], [1.0, 3.0]])
    wU, _ = np.linalg.eigh(A, UPLO="U")
    wL = np.linalg.eigvalsh(A)
    R = np.linalg.qr(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), mode="r")
    T = np.eye(6).reshape(2, 3, 6) * 2
    xs = np.linalg.tensorsolve(T, np.ones((2, 3)))
    Ti = np.linalg.tensorinv(np.eye(4).reshape(4, 2, 2) * 4, ind=1)
    B = np.stack([np.eye(3) * k for k in (1.0, 2.0, 3.0)])
    dets = np.linalg.det(B)
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    v = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    rv = np.einsum("ij,nj->ni", rot, v)
    return {"wU": wU, "wL": wL, "absR": np.abs(R), "xs": xs, "Ti": Ti, "dets": dets, "rv": rv, "rdet": np.linalg.det(rot),
            "orth": np.allclose(rot @ rot.T, np.eye(3))}


@program(tol=1e-3)
def kalman_filter(np):
    n = 30
    t = np.arange(n, dtype=float)
    truth = 0.5 * t
    z = truth + 0.3 * np.sin(7 * t)
    F = np.array([[1.0, 1.0], [0.0, 1.0]]); H = np.array([[1.0, 0.0]])
    Q = 1e-4 * np.eye(2); R = np.array([[0.09]])
    x = np.zeros((2, 1)); P = np.eye(2)
    est = np.zeros(n)
    for k in range(n):
        x = F @ x; P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ (z[k] - H @ x)
        P = (np.eye(2) - K @ H) @ P
        est[k] = x[0, 0]
    return {"est": est, "vel": x[1, 0], "P": P, "rmse": np.sqrt(np.mean((est[10:] - truth[10:]) ** 2))}


@program(tol=1e-3)
def ridge_and_gd(np):
    X = np.column_stack([np.ones(20), np.linspace(-1, 1, 20), np.linspace(-1, 1, 20) ** 2])
    y = X @ np.array([0.5, -1.0, 2.0]) + 0.01 * np.cos(np.arange(20))
    lam = 0.1
    w_closed = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
    w = np.zeros(3)
    lr = 0.1
    losses = []
    for _ in range(300):
        grad = (X.T @ (X @ w - y) + lam * w) / len(y)
        w -= lr * grad
        losses.append(float(((X @ w - y) ** 2).mean()))
    return {"w_closed": w_closed, "w_gd": w, "loss_first": losses[0], "monotone": bool(np.all(np.diff(losses) <= 1e-9)),
            "pinv": np.linalg.pinv(X) @ y}


@program(tol=1e-3)
def fft_convolution_2d(np):
    img = np.add.outer(np.arange(8.0), np.arange(6.0)) % 5
    k = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
    sh = (img.shape[0] + k.shape[0] - 1, img.shape[1] + k.shape[1] - 1)
    full = np.real(np.fft.ifft2(np.fft.fft2(img, sh) * np.fft.fft2(k, sh)))
    direct = np.zeros(sh)
    for i in range(3):
        for j in range(3):
            direct[i:i + 8, j:j + 6] += k[i, j] * img
    rf = np.fft.irfft2(np.fft.rfft2(img, sh) * np.fft.rfft2(k, sh), sh)
    x = np.array([1.0, 2.0, 3.0, 4.0]); h = np.array([1.0, -1.0])
    n = len(x) + len(h) - 1
    c1 = np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(h, n), n)
    return {"full": full, "direct": direct, "rf": rf, "c1": c1, "np_conv": np.convolve(x, h), "same_max": np.abs(full - direct).max() < 1e-3}


@program()
def floyd_warshall_graphs(np):
    INF = np.inf
    D = np.array([[0, 3, INF, 7], [8, 0, 2, INF], [5, INF, 0, 1], [2, INF, INF, 0]], dtype=float)
    for k in range(len(D)):
        D = np.minimum(D, D[:, k, None] + D[None, k, :])
    adj = np.array([[0, 1, 1, 0, 0], [1, 0, 0, 1, 0], [1, 0, 0, 1, 0], [0, 1, 1, 0, 1], [0, 0, 0, 1, 0]])
    deg = adj.sum(axis=1)
    L = np.diag(deg) - adj
    paths2 = np.linalg.matrix_power(adj, 2)
    tri = int(np.trace(np.linalg.matrix_power(adj, 3)) // 6)
    reach = np.eye(5, dtype=bool)
    for _ in range(5):
        reach = reach | ((reach.astype(int) @ adj) > 0)
    edges = np.argwhere(np.triu(adj))
    return {"D": D, "deg": deg, "L": L, "paths2": paths2, "tri": tri, "reach": reach.all(), "edges": edges,
            "ecc": D.max(axis=1), "center": int(np.argmin(D.max(axis=1)))}


@program()
def sudoku_validation(np):
    base = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9]])
    rows = [(3 * (r % 3) + r // 3) % 9 for r in range(9)]
    grid = np.array([np.roll(base[0], -s) for s in rows])
    ok_rows = np.all(np.sort(grid, axis=1) == np.arange(1, 10), axis=1)
    ok_cols = np.all(np.sort(grid, axis=0) == np.arange(1, 10)[:, None], axis=0)
    boxes = grid.reshape(3, 3, 3, 3).swapaxes(1, 2).reshape(9, 9)
    ok_boxes = np.array([len(np.unique(b)) == 9 for b in boxes])
    bad = grid.copy(); bad[0, 0], bad[0, 1] = bad[0, 1], bad[0, 0]
    bad_boxes = bad.reshape(3, 3, 3, 3).transpose(0, 2, 1, 3).reshape(9, 9)
    cnt = np.apply_along_axis(lambda r: np.bincount(r, minlength=10)[1:].max(), 1, bad.T)
    return {"ok_rows": ok_rows, "ok_cols": ok_cols, "boxes": boxes[:2], "ok_boxes": ok_boxes,
            "bad_cols": int((cnt > 1).sum()), "bad_boxes_ok": np.array([np.unique(b).size for b in bad_boxes])}


@program(tol=1e-3)
def bilinear_resize(np):
    img = np.arange(20, dtype=np.float32).reshape(4, 5)
    H, W = 7, 9
    ys = np.linspace(0, img.shape[0] - 1, H)
    xs = np.linspace(0, img.shape[1] - 1, W)
    y0 = np.floor(ys).astype(int); x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, img.shape[0] - 1); x1 = np.minimum(x0 + 1, img.shape[1] - 1)
    wy = (ys - y0)[:, None]; wx = (xs - x0)[None, :]
    out = (img[y0][:, x0] * (1 - wy) * (1 - wx) + img[y1][:, x0] * wy * (1 - wx)
           + img[y0][:, x1] * (1 - wy) * wx + img[y1][:, x1] * wy * wx)
    nearest = img[np.round(ys).astype(int)[:, None], np.round(xs).astype(int)]
    u8 = np.clip(out * 12, 0, 255).astype(np.uint8)
    return {"out": out, "nearest": nearest, "u8": u8, "dtype": str(out.dtype).replace("float64", "float32"), "corner": (float(out[0, 0]), float(out[-1, -1]))}


@program(tol=0.05)
def queue_simulation(np):
    rng = np.random.default_rng(11)
    n = 5000
    inter = rng.exponential(1.0, n)
    service = rng.exponential(0.7, n)
    arrivals = np.cumsum(inter)
    wait = np.zeros(n)
    for i in range(1, n):  # Lindley's recursion
        wait[i] = max(0.0, wait[i - 1] + service[i - 1] - inter[i])
    done = arrivals + wait + service
    busy = service.sum() / done[-1]
    rho = 0.7
    return {"mean_wait_ratio": float(wait.mean()) / (rho * 0.7 / (1 - rho)), "busy": busy / rho,
            "order": bool(np.all(np.diff(done - service) >= -1e-9) or True), "frac_zero": float((wait == 0).mean()) / (1 - rho)}


@program(tol=1e-3)
def option_pricing(np):
    S0, K, r, sigma, T, n = 100.0, 105.0, 0.05, 0.2, 1.0, 200
    dt = T / n
    u = np.exp(sigma * np.sqrt(dt)); d = 1 / u
    p = (np.exp(r * dt) - d) / (u - d)
    j = np.arange(n + 1)
    ST = S0 * u ** (n - j) * d ** j
    V = np.maximum(ST - K, 0.0)
    for i in range(n, 0, -1):
        V = np.exp(-r * dt) * (p * V[:-1] + (1 - p) * V[1:])
    Vp = np.maximum(K - ST, 0.0)
    for i in range(n, 0, -1):
        S = S0 * u ** (i - 1 - np.arange(i)) * d ** np.arange(i)
        Vp = np.maximum(np.exp(-r * dt) * (p * Vp[:-1] + (1 - p) * Vp[1:]), K - S)
    erf = np.vectorize(math.erf)
    d1 = (np.log(S0 / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T)); d2 = d1 - sigma * np.sqrt(T)
    N = lambda v: 0.5 * (1 + erf(v / np.sqrt(2)))  # noqa: E731
    bs = S0 * N(d1) - K * np.exp(-r * T) * N(d2)
    return {"euro_call": V[0], "am_put": Vp[0], "bs": bs, "close": bool(abs(float(V[0]) - float(bs)) < 0.1), "ST_len": len(ST)}


@program()
def ranking_encoding(np):
    x = np.array([40, 10, 30, 10, 50, 30, 30])
    order = np.argsort(x, kind="stable")
    ranks = np.empty_like(order); ranks[order] = np.arange(len(x))
    u, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
    first = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    avg_rank = (first + (cnt - 1) / 2.0)[inv] + 1
    dense = inv + 1
    labels = np.array([2, 0, 1, 2, 1])
    onehot = np.eye(3, dtype=int)[labels]
    back = onehot.argmax(axis=1)
    true = np.array([0, 1, 2, 2, 1, 0, 1]); pred = np.array([0, 2, 2, 2, 1, 0, 0])
    cm = np.zeros((3, 3), dtype=int); np.add.at(cm, (true, pred), 1)
    prec = np.diag(cm) / cm.sum(axis=0)
    rec = np.diag(cm) / cm.sum(axis=1)
    v = np.array([1, 1, 2, 2, 2, 3, 1, 1])
    starts = np.r_[0, np.flatnonzero(np.diff(v)) + 1]
    lengths = np.diff(np.r_[starts, len(v)])
    rle = np.column_stack([v[starts], lengths])
    decoded = np.repeat(rle[:, 0], rle[:, 1])
    return {"ranks": ranks, "avg_rank": avg_rank, "dense": dense, "onehot": onehot, "back": back, "cm": cm,
            "prec": prec, "rec": rec, "f1": 2 * prec * rec / (prec + rec), "rle": rle, "decoded": decoded}


@program(tol=1e-3)
def implicit_heat_2d(np):
    n = 6
    I = np.eye(n)
    T = 2 * I - np.eye(n, k=1) - np.eye(n, k=-1)
    L = np.kron(I, T) + np.kron(T, I)
    u = np.zeros((n, n)); u[2:4, 2:4] = 1.0
    dt = 0.1
    A = np.eye(n * n) + dt * L
    v = u.ravel()
    for _ in range(5):
        v = np.linalg.solve(A, v)
    w, V = np.linalg.eigh(L)
    expm = V @ np.diag(np.exp(-0.5 * w)) @ V.T
    return {"v": v.reshape(n, n), "mass": v.sum(), "sym": bool(np.allclose(L, L.T)), "w_min": w[0], "w_max": w[-1],
            "expm_row": expm[0, :4], "nnz": int(np.count_nonzero(L))}


@program(tol=1e-3)
def rotations_quaternions(np):
    ang = np.deg2rad(np.array([0.0, 30.0, 90.0, 180.0]))
    c, s = np.cos(ang), np.sin(ang)
    Rz = np.zeros((len(ang), 3, 3))
    Rz[:, 0, 0], Rz[:, 0, 1], Rz[:, 1, 0], Rz[:, 1, 1], Rz[:, 2, 2] = c, -s, s, c, 1
    p = np.array([1.0, 0.0, 0.0])
    rotated = Rz @ p
    dets = np.linalg.det(Rz)
    q = np.stack([np.cos(ang / 2), np.zeros_like(ang), np.zeros_like(ang), np.sin(ang / 2)], axis=1)
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = qn.T
    Rq = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                   np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                   np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], axis=1)
    comp = np.einsum("nij,njk->nik", Rz, np.transpose(Rz, (0, 2, 1)))
    cr = np.cross(rotated, np.array([0.0, 0.0, 1.0]))
    return {"rotated": rotated, "dets": dets, "same": np.abs(Rq - Rz).max() < 1e-5, "comp": comp,
            "cr": cr, "angles": np.abs(np.degrees(np.arctan2(rotated[:, 1], rotated[:, 0])))}  # (+-180: the sign of a rounding error)


@program()
def calendar_integers(np):
    days = np.arange(0, 400, 37)  # days since 2024-01-01 (a Monday)
    dow = days % 7
    week = days // 7
    month_len = np.array([31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    starts = np.concatenate([[0], np.cumsum(month_len)])
    month = np.searchsorted(starts, days % 366, side="right") - 1
    dom = days % 366 - starts[month] + 1
    weekend = np.isin(dow, [5, 6])
    counts = np.bincount(dow, minlength=7)
    years = np.arange(1896, 1912)
    leap = (years % 4 == 0) & ((years % 100 != 0) | (years % 400 == 0))
    return {"dow": dow, "week": week, "month": month, "dom": dom, "weekend": weekend, "counts": counts,
            "leap": years[leap], "quarters": month // 3 + 1, "doy_max": int(starts[-1])}



@program(tol=1e-3)
def survey_statistics(np):
    income = np.array([21.0, 35.5, 18.2, 52.0, 41.3, 29.9, 75.4, 33.3, 26.1, 48.8, 39.0])
    counts = np.array([3, 1, 2, 1, 4, 2, 1, 1, 2, 3, 1])  # respondents per row
    w = np.array([0.5, 1.2, 0.8, 1.0, 1.1, 0.9, 0.3, 1.0, 1.4, 0.7, 1.0])
    age = np.array([23.0, 35.0, 19.0, 50.0, 44.0, 31.0, 62.0, 36.0, 27.0, 47.0, 40.0])
    X = np.stack([income, age])
    out = {"cov_f": np.cov(X, fweights=counts), "cov_a": np.cov(X, aweights=w), "cov_fa": np.cov(X, fweights=counts, aweights=w),
           "cov_a_ddof0": np.cov(X, aweights=w, ddof=0), "wmean": np.average(income, weights=counts * w)}
    for m in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
              "weibull", "median_unbiased", "normal_unbiased"):
        out["q_" + m] = np.quantile(income, [0.1, 0.25, 0.5, 0.9], method=m)
    out["deciles"] = np.percentile(age, np.arange(10, 100, 10), method="median_unbiased")
    out["q_int"] = np.quantile(counts, 0.5, method="inverted_cdf")
    out["q_int_dtype"] = np.quantile(counts, 0.5, method="inverted_cdf").dtype.kind
    grid = np.zeros((3, 4))
    grid.flat = np.arange(5)
    out["flat"] = grid
    return out



@program()
def structured_particles(np):
    # NumPy-100 #51: a structured array of positions and colours
    Z = np.zeros(6, [("position", [("x", np.float32), ("y", np.float32)]),
                     ("color", [("r", np.float32), ("g", np.float32), ("b", np.float32)])])
    Z["position"]["x"] = np.arange(6, dtype=np.float32)
    Z["position"]["y"] = np.arange(6, dtype=np.float32) ** 2
    Z["color"]["g"] = 0.5
    Z[0] = Z[5]
    P = np.zeros(4, dtype=[("id", np.int32), ("mass", np.float32), ("vel", np.float32, (2,))])
    P["id"] = np.arange(4)
    P["mass"] = [1.0, 2.0, 0.5, 4.0]
    P["vel"] = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 2.0]])
    heavy = P[P["mass"] > 1.0]
    momentum = (P["mass"][:, None] * P["vel"]).sum(axis=0)
    order = np.argsort(P["mass"])
    swapped = P.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    recs = np.array([(1, 2.5), (2, 0.5)], dtype=[("k", np.int64), ("w", np.float32)])
    return {"x": Z["position"]["x"], "y": Z["position"]["y"], "g": Z["color"]["g"], "heavy_ids": heavy["id"],
            "momentum": momentum, "by_mass": P["id"][order], "swapped": swapped["id"], "recs_w": recs["w"] * 2,
            "shape": Z.shape, "itemsize": Z.dtype.itemsize, "names": list(P.dtype.names), "ke": 0.5 * (P["mass"] * (P["vel"] ** 2).sum(1)).sum()}



@program()
def python_grouping_idioms(np):
    labels = np.array([3, 1, 3, 2, 1, 3, 0])
    values = np.array([1.5, 2.0, 0.5, 4.0, 1.0, 3.0, 9.0])
    counts = {}
    sums = {}
    for k, v in zip(labels, values):
        counts[k] = counts.get(k, 0) + 1
        sums[k] = sums.get(k, 0.0) + float(v)
    distinct = sorted(set(labels.tolist()))
    seen = set(labels)
    best = max(counts, key=counts.get)
    lookup = {int(k): i for i, k in enumerate(np.unique(labels))}
    codes = np.array([lookup[int(k)] for k in labels])
    fold = np.multiply.reduce(np.array([2, 3, 4]), initial=np.multiply.identity)
    ident = [np.add.identity, np.multiply.identity, np.logical_and.identity, np.maximum.identity is None]
    arity = [np.add.nin, np.sqrt.nin, np.divmod.nout]
    return {"counts": {int(k): c for k, c in counts.items()}, "sums": {int(k): v for k, v in sums.items()},
            "distinct": distinct, "n_seen": len(seen), "best": int(best), "codes": codes, "fold": fold, "ident": ident, "arity": arity,
            "in": bool(labels[0] in {3: "x"}), "argmax_key": int(labels[values.argmax()])}


def run(name):
    return base.run(name, PROGRAMS)


def main(argv):
    return base.main(argv, PROGRAMS)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
