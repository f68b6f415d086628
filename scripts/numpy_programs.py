"""Realistic NumPy programs, run with NumPy and with ``import pymetal as np``; prints a pass table.

    python scripts/numpy_programs.py [name ...]

Each program is a function of the module it runs on (``np``) returning a dict of results.
Deterministic results are compared with NumPy's (values within float32 tolerance, same
shape, same dtype kind: pymetal's default float is float32 where NumPy gives float64, see
README "NumPy code on pymetal"). Random programs return statistics, compared with a loose
tolerance (the streams differ: pymetal's generator is Philox). Python values (str, bool,
int, float, list) are compared as such: repr/str/tolist/item results must match NumPy's.
"""

from __future__ import annotations

import math
import os
import sys
import traceback

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's pymetal

PROGRAMS = {}


def program(tol=None, expect=None):
    """Registers a program; `expect`: pymetal's results where they are meant to differ from NumPy's
    (clear errors for what pymetal refuses), compared instead of NumPy's."""
    def deco(f):
        PROGRAMS[f.__name__] = (f, tol, expect)
        return f
    return deco


@program(tol=0.02)
def monte_carlo_pi(np):
    np.random.seed(0)
    n = 200_000
    x, y = np.random.rand(n), np.random.rand(n)
    inside = (x * x + y * y) <= 1.0
    pi = 4.0 * np.sum(inside) / n
    rng = np.random.default_rng(1)
    pts = rng.random((n, 2))
    pi2 = 4 * np.count_nonzero(np.linalg.norm(pts, axis=1) < 1) / n
    return {"pi": float(pi), "pi2": float(pi2), "inside_dtype": str(inside.dtype)}


@program()
def game_of_life(np):
    Z = np.zeros((12, 12), dtype=int)
    Z[1, 2] = Z[2, 3] = Z[3, 1] = Z[3, 2] = Z[3, 3] = 1  # glider
    for _ in range(8):
        N = sum(np.roll(np.roll(Z, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        Z = ((N == 3) | ((Z == 1) & (N == 2))).astype(int)
    # NumPy-100 #79 style: slicing version
    Y = np.zeros((8, 8), dtype=np.int64)
    Y[2, 1:4] = 1
    for _ in range(3):
        N = (Y[0:-2, 0:-2] + Y[0:-2, 1:-1] + Y[0:-2, 2:] + Y[1:-1, 0:-2] + Y[1:-1, 2:]
             + Y[2:, 0:-2] + Y[2:, 1:-1] + Y[2:, 2:])
        birth = (N == 3) & (Y[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Y[1:-1, 1:-1] == 1)
        Y[...] = 0
        Y[1:-1, 1:-1][birth | survive] = 1
    return {"Z": Z, "alive": int(Z.sum()), "Y": Y, "where": np.argwhere(Y)}


@program()
def heat_equation(np):
    nx, nt, alpha = 41, 50, 0.2
    u = np.zeros(nx)
    u[nx // 4: nx // 2] = 2.0
    for _ in range(nt):
        un = u.copy()
        u[1:-1] = un[1:-1] + alpha * (un[2:] - 2 * un[1:-1] + un[:-2])
    T = np.zeros((10, 10))
    T[0, :] = 100.0
    for _ in range(20):
        T[1:-1, 1:-1] = 0.25 * (T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:])
    return {"u": u, "T": T, "max": u.max(), "hot": int(np.argmax(u > 1.45))}  # argmax(u): a float32 tie


@program()
def kmeans(np):
    X = np.array([[1.0, 2.0], [1.5, 1.8], [5.0, 8.0], [8.0, 8.0], [1.0, 0.6], [9.0, 11.0],
                  [8.0, 2.0], [10.0, 2.0], [9.0, 3.0]])
    centers = X[[0, 2, 6]].copy()
    for _ in range(10):
        d = np.sqrt(((X[:, np.newaxis, :] - centers[np.newaxis, :, :]) ** 2).sum(axis=2))
        labels = np.argmin(d, axis=1)
        new = np.array([X[labels == k].mean(axis=0) for k in range(3)])
        if np.allclose(new, centers):
            break
        centers = new
    inertia = sum(((X[labels == k] - centers[k]) ** 2).sum() for k in range(3))
    return {"centers": centers, "labels": labels, "inertia": float(inertia), "counts": np.bincount(labels)}


@program()
def linear_regression(np):
    x = np.linspace(0, 10, 50)
    y = 3.0 * x + 2.0 + np.sin(x)
    A = np.vstack([x, np.ones(len(x))]).T
    m, c = np.linalg.lstsq(A, y, rcond=None)[0]
    beta = np.linalg.solve(A.T @ A, A.T @ y)
    beta2 = np.linalg.inv(A.T.dot(A)).dot(A.T).dot(y)
    resid = y - A @ beta
    r2 = 1 - (resid ** 2).sum() / ((y - y.mean()) ** 2).sum()
    return {"m": float(m), "c": float(c), "beta": beta, "beta2": beta2, "r2": float(r2),
            "det": float(np.linalg.det(A.T @ A))}


@program()
def polyfit_program(np):
    x = np.linspace(-1, 1, 21)
    y = 2 * x ** 3 - x + 0.5
    coeffs = np.polyfit(x, y, 3)
    yhat = np.polyval(coeffs, x)
    p = np.poly1d(coeffs)
    return {"coeffs": coeffs, "yhat": yhat, "p2": p(2.0), "roots": np.sort(np.roots([1, -3, 2]))}


@program()
def fft_filter(np):
    t = np.linspace(0, 1, 256, endpoint=False)
    sig = np.sin(2 * np.pi * 5 * t) + 0.5 * np.sin(2 * np.pi * 40 * t)
    F = np.fft.rfft(sig)
    freqs = np.fft.rfftfreq(sig.size, d=t[1] - t[0])
    F[freqs > 20] = 0
    clean = np.fft.irfft(F, n=sig.size)
    spec = np.abs(np.fft.fft(sig))
    peaks = np.argsort(spec[:128])[-2:]
    return {"clean": clean, "peaks": np.sort(peaks), "freqs": np.fft.fftfreq(8, 0.5),
            "shift": np.fft.fftshift(np.arange(6))}


@program(tol=0.1)
def random_walk(np):
    rng = np.random.default_rng(42)
    steps = rng.choice([-1, 1], size=(100, 1000))
    walks = steps.cumsum(axis=1)
    final = walks[:, -1]
    return {"shape": walks.shape, "dtype_kind": walks.dtype.kind, "mean_abs_over_sqrt": float(np.abs(final).mean() / math.sqrt(1000)) / 0.8,
            "max_le_n": bool((np.abs(walks).max() <= 1000)), "mean_sq": float((final.astype(float) ** 2).mean()) / 1000}


@program()
def histograms(np):
    data = np.array([0.5, 1.2, 3.3, 2.2, 2.9, 4.1, 0.1, 3.9, 2.5, 1.1])
    counts, edges = np.histogram(data, bins=4, range=(0, 4.2))
    idx = np.digitize(data, [1, 2, 3])
    bc = np.bincount(np.array([0, 1, 1, 3, 2, 1, 7]))
    w = np.bincount(np.array([0, 1, 1, 2]), weights=np.array([0.5, 1.0, 0.25, 2.0]))
    h2, _ = np.histogram(data, bins=[0, 1, 2, 5], density=True)
    return {"counts": counts, "edges": edges, "idx": idx, "bc": bc, "w": w, "h2": h2,
            "mode": int(np.bincount(idx).argmax())}


@program()
def image_ops(np):
    img = np.arange(64, dtype=np.float32).reshape(8, 8) % 7
    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=np.float32) / 16
    out = np.zeros_like(img[1:-1, 1:-1])
    for i in range(3):
        for j in range(3):
            out += k[i, j] * img[i:i + 6, j:j + 6]
    thresh = np.where(img > 3, 255, 0).astype(np.uint8)
    clipped = np.clip(img * 40, 0, 255).astype(np.uint8)
    padded = np.pad(img, 1, mode="edge")
    gx = img[:, 2:] - img[:, :-2]
    img2 = img.copy()
    img2[img2 < 2] = 0
    return {"out": out, "thresh": thresh, "clipped": clipped, "padded": padded, "gx": gx, "img2": img2,
            "flip": img[::-1, ::2], "mean": img.mean(), "t": img.T[1]}


@program()
def pairwise_distances(np):
    A = np.arange(12.0).reshape(6, 2) ** 1.5
    B = np.array([[0.0, 0.0], [10.0, 10.0], [3.0, 4.0]])
    D = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    nearest = D.argmin(axis=1)
    D2 = np.sum(A ** 2, axis=1)[:, np.newaxis] + np.sum(B ** 2, axis=1) - 2 * A @ B.T
    return {"D": D, "nearest": nearest, "D2": D2, "mind": D.min(axis=0)}


@program()
def softmax_logsumexp(np):
    z = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1001.0], [-5.0, 0.0, 5.0]])
    e = np.exp(z - z.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    m = np.max(z, axis=-1, keepdims=True)
    lse = m.squeeze(-1) + np.log(np.sum(np.exp(z - m), axis=-1))
    onehot = np.eye(3)[np.array([2, 0, 1])]
    ce = -np.sum(onehot * np.log(sm + 1e-12)) / 3
    return {"sm": sm, "lse": lse, "rowsum": sm.sum(1), "ce": float(ce), "pred": sm.argmax(1)}


@program()
def moving_average(np):
    x = np.arange(20, dtype=float) ** 0.5
    ma = np.convolve(x, np.ones(5) / 5, mode="valid")
    cs = np.cumsum(np.insert(x, 0, 0))
    ma2 = (cs[5:] - cs[:-5]) / 5
    same = np.convolve(x, [1, 0, -1], "same")
    ema = np.zeros_like(x)
    ema[0] = x[0]
    for i in range(1, len(x)):
        ema[i] = 0.3 * x[i] + 0.7 * ema[i - 1]
    return {"ma": ma, "ma2": ma2, "same": same, "ema": ema, "full": np.convolve([1, 2, 3], [0, 1, 0.5])}


@program()
def sorting_searching(np):
    a = np.array([5, 3, 9, 1, 3, 7, 5, 5, 0])
    u, c = np.unique(a, return_counts=True)
    u2, inv = np.unique(a, return_inverse=True)
    order = np.argsort(a, kind="stable")
    pos = np.searchsorted(np.sort(a), [3, 6, 10])
    posr = np.searchsorted(np.sort(a), 5, side="right")
    top3 = a[np.argsort(a)[::-1][:3]]
    names = [int(v) for v in u]
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(a))
    lex = np.lexsort((np.array([1, 2, 1, 2]), np.array([3, 3, 1, 1])))
    return {"u": u, "c": c, "inv": inv, "u2": u2, "order": order, "pos": pos, "posr": int(posr), "top3": top3,
            "names": names, "ranks": ranks, "lex": lex, "part": np.partition(a, 3)[:3].max()}


@program()
def meshgrid_prep(np):
    x = np.linspace(-2, 2, 5)
    y = np.linspace(-1, 1, 3)
    X, Y = np.meshgrid(x, y)
    Z = np.exp(-(X ** 2 + Y ** 2))
    XI, YI = np.meshgrid(x, y, indexing="ij")
    grid = np.mgrid[0:3, 0:2]
    pts = np.c_[X.ravel(), Y.ravel()]
    return {"Z": Z, "XI": XI, "YI": YI, "grid": grid, "pts": pts, "lin": np.linspace(0, 1, 5, retstep=True)[1],
            "arange": np.arange(0, 1, 0.25), "logspace": np.logspace(0, 2, 3)}


@program()
def einsum_program(np):
    A = np.arange(6.0).reshape(2, 3)
    B = np.arange(12.0).reshape(3, 4)
    v = np.arange(3.0)
    return {"mm": np.einsum("ij,jk->ik", A, B), "tr": np.einsum("ii", np.eye(3) * 2), "outer": np.einsum("i,j->ij", v, v),
            "dot": np.einsum("i,i", v, v), "colsum": np.einsum("ij->j", A), "T": np.einsum("ij->ji", A),
            "batch": np.einsum("bij,bjk->bik", np.ones((2, 2, 3)), np.ones((2, 3, 2))),
            "ell": np.einsum("...j,j->...", A, v)}


@program()
def fancy_indexing(np):
    x = np.zeros(6, dtype=int)
    idx = np.array([0, 1, 1, 3, 5, 5, 5])
    x[idx] += 1
    y = np.zeros(6, dtype=int)
    np.add.at(y, idx, 1)
    M = np.arange(20).reshape(4, 5)
    sel = M[[0, 2], [1, 3]]
    M2 = M.copy()
    M2[M2 % 3 == 0] = -1
    M2[:, [0, 4]] = M2[:, [4, 0]]
    M3 = M.copy()
    M3[1] = 99
    M3[np.ix_([0, 3], [0, 2])] = 7
    rows = M[np.array([True, False, True, False])]
    Z = np.arange(10)
    Z[(3 < Z) & (Z < 8)] *= -1
    return {"x": x, "y": y, "sel": sel, "M2": M2, "M3": M3, "rows": rows, "Z": Z, "neg": M[-1, -2],
            "nz": np.nonzero(M % 7 == 0), "take": np.take(M, [1, 3], axis=1)}


@program()
def nan_functions(np):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]])
    b = a.copy()
    b[np.isnan(b)] = 0
    col_mean = np.nanmean(a, axis=0)
    filled = np.where(np.isnan(a), col_mean, a)
    return {"nansum": np.nansum(a), "nanmean0": col_mean, "nanmax": np.nanmax(a, axis=1), "nanstd": np.nanstd(a),
            "b": b, "filled": filled, "cnt": int(np.isnan(a).sum()), "any": bool(np.isnan(a).any()),
            "nanargmin": np.nanargmin(a, axis=1), "nanmedian": np.nanmedian(a), "n2n": np.nan_to_num(a, nan=-1)}


@program()
def stats_program(np):
    x = np.array([2.0, 8.0, 1.0, 9.0, 4.0, 7.0, 3.0])
    M = np.arange(12.0).reshape(3, 4) ** 1.3
    z = (x - x.mean()) / x.std()
    return {"median": np.median(x), "p": np.percentile(x, [25, 50, 90]), "q": np.quantile(M, 0.5, axis=1),
            "z": z, "var1": x.var(ddof=1), "cov": np.cov(M), "corr": np.corrcoef(M[0], M[1]),
            "avg": np.average(x, weights=np.arange(7.0)), "ptp": np.ptp(M, axis=0), "median_ax": np.median(M, axis=0)}


@program()
def newaxis_shapes(np):
    a = np.arange(24).reshape(2, 3, 4)
    b = a.transpose(2, 0, 1)
    c = np.stack([a[0], a[1]], axis=-1)
    d = np.concatenate([a, a], axis=1)
    parts = np.split(np.arange(9), 3)
    parts2 = np.array_split(np.arange(10), 3)
    h = np.hstack([np.ones((2, 1)), np.zeros((2, 2))])
    v = np.vstack([np.arange(3), np.arange(3, 6)])
    e = a[:, None, :, None, 0]
    f = a.reshape(-1, 4).sum(axis=0)
    g = np.swapaxes(a, 0, 2).shape
    t = np.tile(np.array([1, 2]), (2, 3))
    return {"b": b, "c": c, "d": d, "parts": parts, "parts2": parts2, "h": h, "v": v, "e": e, "f": f, "g": g,
            "t": t, "flat": a.flatten()[:5], "ravelF": np.ravel(a[0], order="F"), "sq": np.squeeze(a[:1]).shape,
            "ex": np.expand_dims(np.arange(3), 0).shape, "moveaxis": np.moveaxis(a, 0, -1).shape,
            "dstack": np.dstack([np.ones((2, 2)), np.zeros((2, 2))]).shape, "colstack": np.column_stack([[1, 2], [3, 4]])}


@program()
def dtype_conversions(np):
    a = np.array([1, 2, 3])
    b = a / 2
    c = a // 2
    d = (a * 1.5).astype(np.int32)
    e = np.float64(2.5) * a
    f = np.array([1.7, -1.7]).astype(int)
    g = a + 2**40
    h = np.array([True, False]).astype(np.float32)
    s = np.float32(3.0)
    return {"b": b, "c": c, "d": d, "d_dtype": str(d.dtype), "e": e, "f": f, "g": g, "h": h,
            "s": float(s), "a_dtype": str(a.dtype), "c_dtype": str(c.dtype), "u8": np.array([250], dtype=np.uint8) + np.uint8(10),
            "int_scalar": int(np.int64(7)) + 1, "is_int": bool(np.issubdtype(a.dtype, np.integer)),
            "is_float": bool(np.issubdtype(b.dtype, np.floating)), "iinfo": np.iinfo(np.int32).max,
            "finfo": float(np.finfo(np.float32).eps)}


@program()
def errstate_program(np):
    a = np.array([1.0, 0.0, -1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = 1.0 / a
        l = np.log(a)
    fin = np.isfinite(r)
    old = np.seterr(all="ignore")
    np.seterr(**old)
    return {"r": r, "l": l, "fin": fin, "isinf": np.isinf(r), "posinf": np.isposinf(r)}


@program()
def printing(np):
    a = np.arange(6).reshape(2, 3)
    f = np.array([0.5, 1.25, 3.0])
    s = a.sum()
    # repr: pymetal's reads "Array([...], dtype=...)" (its own type, every dtype named): compare str
    np.set_printoptions(precision=3)
    p3 = str(np.array([1 / 3, 2 / 3]))
    np.set_printoptions(precision=8)
    with np.printoptions(suppress=True):
        sup = str(np.array([1e-9, 1.0]))
    return {"repr_body": repr(a)[repr(a).index("[["):repr(a).rindex("]]") + 2], "str": str(a), "strf": str(f),
            "scalar_str": str(s), "fmt": "{:.2f}".format(f.mean()), "fmt2": f"{f[1]:.3f}", "mean_str": "%.6f" % f.mean(),
            "tolist": a.tolist(), "item": a[1, 2].item(), "item_type": type(a.item(4)).__name__,
            "list_type": type(a.tolist()[0][0]).__name__, "bool_str": str(np.array([True, False])),
            "p3": p3, "sup": sup, "a2s": np.array2string(f, separator=", "),
            "empty": str(np.array([])), "int_s": str(a[0, 1]), "scalar_repr_int": int(a[1, 1]),
            "round": round(float(f[1]), 1), "sum_repr": str(np.array([1.5, 2.5]).sum())}


@program()
def python_protocols(np):
    a = np.arange(12).reshape(3, 4)
    rows = [row.sum() for row in a]
    n = len(a)
    cmp = (a > 5) & (a <= 9)
    total = 0
    for v in a.ravel():
        total += v
    col = a[:, 1]
    col += 100  # in-place on a view
    first, *rest = a[0]
    return {"rows": [int(r) for r in rows], "n": n, "cmp": cmp, "total": int(total), "a": a,
            "in": bool(3 in a), "eq": a[0] == 0, "truth": bool((a[0] >= 0).all()), "idx": int(a[2][3]),
            "first": int(first), "rest": [int(r) for r in rest], "shape": a.shape, "size": a.size,
            "ndim": a.ndim, "nbytes": a.nbytes, "maxint": max(a.ravel()[:4]), "sorted": sorted(a[1].tolist()),
            "mul": (2 * a - 1)[0], "rdiv": 12 / (a[1] + 1), "pow": 2 ** np.arange(4), "neg": -a[0], "abs": abs(-a[0])}


@program(tol=0.15)
def legacy_random(np):
    np.random.seed(123)
    r = np.random.rand(1000)
    n = np.random.randn(2000)
    i = np.random.randint(0, 10, size=5000)
    c = np.random.choice(5, 1000)
    arr = np.arange(10)
    np.random.shuffle(arr)
    nrm = np.random.normal(5.0, 2.0, size=(100, 30))
    u = np.random.uniform(-1, 1, 1000)
    p = np.random.permutation(10)
    return {"r": float(r.mean()) / 0.5, "n_std": float(n.std()), "i_range": (int(i.min()), int(i.max())),
            "c_mean": float(c.mean()) / 2, "shuf": sorted(arr.tolist()), "nrm_mean": float(nrm.mean()) / 5,
            "nrm_shape": nrm.shape, "u_abs": float(np.abs(u).mean()) / 0.5, "perm": sorted(p.tolist()),
            "int_kind": i.dtype.kind, "rand_dtype_kind": r.dtype.kind, "rand_scalar": 0 <= float(np.random.rand()) < 1,
            "randint_scalar": 0 <= int(np.random.randint(5)) < 5, "rs": np.random.random((2, 3)).shape,
            "random_sample": np.random.random_sample(4).shape}


@program(tol=0.1)
def random_distributions(np):
    # Statistics of NumPy's other samplers (theory's values; the streams differ).
    np.random.seed(5)
    rng = np.random.default_rng(3)
    n = 100_000
    t = np.random.standard_t(8, n)
    ln = np.random.lognormal(1.0, 0.5, n)
    mv = rng.multivariate_normal([1.0, -1.0], [[1.0, 0.6], [0.6, 2.0]], size=n)
    counts = rng.multinomial(30, [0.2, 0.3, 0.5], size=1000)
    words = rng.choice(["x", "y"], size=10)
    deck = list(range(10))
    rng.shuffle(deck)
    rs = np.random.RandomState(0)
    return {"t_var": float(t.var()) / (8 / 6), "ln_median": float(np.median(ln)) / math.e,
            "chi2": float(rng.chisquare(4, n).mean()) / 4, "gumbel": float(rng.gumbel(0, 1, n).mean()) / 0.5772,
            "weibull": float(rng.weibull(2.0, n).mean()) / 0.8862, "geom": float(rng.geometric(0.2, n).mean()) / 5,
            "nbinom": float(rng.negative_binomial(5, 0.5, n).mean()) / 5, "wald": float(rng.wald(2.0, 3.0, n).mean()) / 2,
            "hyper": float(rng.hypergeometric(10, 20, 6, n).mean()) / 2, "zipf_min": int(rng.zipf(2.5, 100).min()),
            "ncx2": float(rng.noncentral_chisquare(3, 2, n).mean()) / 5, "logser": float(rng.logseries(0.5, n).mean()) / 1.4427,
            "mv_cov": float(np.cov(mv[:, 0], mv[:, 1])[0, 1]) / 0.6, "mv_shape": mv.shape,
            "multinomial_sums": sorted(set(counts.sum(axis=1).tolist())), "dirichlet": rng.dirichlet([1, 2, 3], 4).shape,
            "words": len(words), "deck": sorted(deck), "rs": float(rs.laplace(0, 1, n).var()) / 2,
            "int_bounds": rng.integers(0, [3, 5], size=(4, 2)).shape, "permuted": rng.permuted(np.arange(6).reshape(2, 3), axis=1).shape}


@program(tol=0.15)
def default_rng_program(np):
    rng = np.random.default_rng(7)
    x = rng.normal(size=10000)
    ints = rng.integers(0, 6, size=10000)
    c = rng.choice(100, size=10, replace=False)
    p = rng.permutation(np.arange(5))
    e = rng.exponential(2.0, 10000)
    u = rng.uniform(2, 4, size=(3, 3))
    b = rng.binomial(10, 0.5, 5000)
    po = rng.poisson(3, 5000)
    sh = np.arange(8)
    rng.shuffle(sh)
    return {"x": (float(x.mean()) + 1, float(x.std())), "ints": (int(ints.min()), int(ints.max())),
            "c_unique": len(np.unique(c)), "p": sorted(p.tolist()), "e": float(e.mean()) / 2,
            "u_ok": bool(((u >= 2) & (u < 4)).all()), "b": float(b.mean()) / 5, "po": float(po.mean()) / 3,
            "sh": sorted(sh.tolist()), "choice_w": float(rng.choice([0, 1], size=5000, p=[0.25, 0.75]).mean()) / 0.75}


@program()
def numpy100_a(np):
    out = {}
    Z = np.zeros(10); Z[4] = 1; out["n6"] = Z
    out["n7"] = np.arange(10, 50)[:3]
    out["n8"] = np.arange(10)[::-1]
    out["n9"] = np.arange(9).reshape(3, 3)
    out["n10"] = np.nonzero([1, 2, 0, 0, 4, 0])
    out["n11"] = np.eye(3)
    Z = np.ones((5, 5)); Z[1:-1, 1:-1] = 0; out["n15"] = Z
    out["n16"] = np.pad(np.ones((2, 2)), pad_width=1, mode="constant", constant_values=0)
    out["n17"] = [bool(0 * np.nan == 0 * np.nan) if False else 0, np.inf > np.nan, np.nan - np.nan != np.nan - np.nan, 0.3 == 3 * 0.1]
    out["n18"] = np.diag(1 + np.arange(4), k=-1)
    Z = np.zeros((8, 8), dtype=int); Z[1::2, ::2] = 1; Z[::2, 1::2] = 1; out["n19"] = Z
    out["n20"] = np.unravel_index(99, (6, 7, 8))
    out["n21"] = np.tile(np.array([[0, 1], [1, 0]]), (4, 4))
    Z = np.arange(25.0).reshape(5, 5); out["n22"] = (Z - np.mean(Z)) / np.std(Z)
    out["n24"] = np.dot(np.ones((5, 3)), np.ones((3, 2)))
    Z = np.arange(11); Z[(3 < Z) & (Z < 8)] *= -1; out["n25"] = Z
    out["n26"] = [sum(range(5), -1)]
    out["n28"] = [np.array(0) // np.array(0) if False else 0]
    Z = np.array([-1.5, 0.2, 2.7]); out["n29"] = np.copysign(np.ceil(np.abs(Z)), Z)
    out["n30"] = np.intersect1d(np.array([1, 3, 5, 7]), np.array([3, 4, 5]))
    out["n36"] = np.trunc(np.array([1.7, -1.7]))
    Z = np.zeros((5, 5)); Z += np.arange(5); out["n37"] = Z
    out["n38"] = np.fromiter((x * 2 for x in range(5)), dtype=float, count=-1)
    out["n39"] = np.linspace(0, 1, 11, endpoint=False)[1:]
    Z = np.array([3, 1, 2]); Z.sort(); out["n40"] = Z
    out["n41"] = np.add.reduce(np.arange(10))
    out["n42"] = np.array_equal(np.array([1, 2]), np.array([1, 2]))
    Z = np.zeros(10); Z.flags.writeable = False
    try:
        Z[0] = 1
        out["n43"] = "wrote"
    except ValueError:
        out["n43"] = "readonly"
    return out


@program()
def numpy100_b(np):
    out = {}
    Z = np.arange(20.0).reshape(10, 2)
    X, Y = Z[:, 0], Z[:, 1]
    R = np.sqrt(X ** 2 + Y ** 2); T = np.arctan2(Y, X); out["n44"] = (R, T)
    Z = np.array([1.0, 5.0, 3.0]); Z[Z.argmax()] = 0; out["n45"] = Z
    Z = np.zeros((3, 3), [("x", float), ("y", float)]) if False else np.zeros((3, 3))
    X = np.arange(4.0); Y = X + 0.5; out["n47"] = 1.0 / np.subtract.outer(X, Y)
    out["n48"] = [np.iinfo(np.int8).min, np.finfo(np.float32).max]
    Z = np.arange(100); v = 37.3; out["n50"] = Z[(np.abs(Z - v)).argmin()]
    Z = np.arange(9).reshape(3, 3)
    out["n53"] = Z.astype(np.float32)
    out["n55"] = [(index, int(value)) for index, value in np.ndenumerate(np.arange(4).reshape(2, 2))]
    X, Y = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5))
    D = np.sqrt(X * X + Y * Y); out["n56"] = np.exp(-((D - 0.0) ** 2 / (2.0 * 1.0 ** 2)))
    Z = np.zeros((5, 5)); np.put(Z, [1, 7, 13], 1); out["n57"] = Z
    X = np.arange(15.0).reshape(5, 3); out["n58"] = X - X.mean(axis=1, keepdims=True)
    Z = np.array([[1, 9, 3], [4, 2, 6], [7, 8, 0]]); out["n59"] = Z[Z[:, 1].argsort()]
    Z = np.array([[0, 1, 0], [0, 0, 0]]); out["n60"] = (~Z.any(axis=0)).any()
    Z = np.arange(10.0); out["n61"] = Z.flat[np.abs(Z - 4.4).argmin()]
    A = np.arange(3).reshape(3, 1); B = np.arange(3).reshape(1, 3)
    it = np.nditer([A, B, None])
    for x, y, z in it:
        z[...] = x + y
    out["n62"] = it.operands[2]
    Z = np.ones(10); I = np.array([1, 3, 3, 5]); Z += np.bincount(I, minlength=len(Z)); out["n65"] = Z
    X = np.array([1, 2, 3, 4, 5, 6]); I = np.array([1, 3, 9, 3, 4, 1]); out["n66"] = np.bincount(I, X)
    A = np.arange(24).reshape(2, 3, 4); out["n68"] = A.sum(axis=(-2, -1))
    D = np.array([1.0, 2.0, 3.0, 4.0]); S = np.array([0, 1, 0, 1])
    out["n69"] = np.bincount(S, weights=D) / np.bincount(S)
    A = np.arange(9).reshape(3, 3); out["n72"] = A[[0, 2]][:, ::-1]
    Z = np.array([1, 2, 3, 4, 5]); nz = 3; Z0 = np.zeros(len(Z) + (len(Z) - 1) * nz); Z0[::nz + 1] = Z; out["n71"] = Z0
    Z = np.arange(10); out["n75"] = np.cumsum(Z)[3:] - np.cumsum(Z)[:-3]
    Z = np.random.randint(0, 2, 100); np.logical_not(Z.astype(bool), out=Z.astype(bool)) if False else None
    Z = np.array([1.0, -2.0]); np.negative(Z, out=Z); out["n77"] = Z
    Z = np.arange(1, 15, dtype=np.uint32)
    out["n82"] = np.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]]))
    Z = np.array([1, 2, 2, 3, 3, 3]); out["n83"] = np.bincount(Z).argmax()
    Z = np.arange(16).reshape(4, 4); out["n87"] = np.add.reduceat(np.add.reduceat(Z, np.arange(0, 4, 2), axis=0), np.arange(0, 4, 2), axis=1)
    Z = np.arange(10); np.random.shuffle(Z); n = 3; out["n89"] = np.sort(Z[np.argsort(Z)[-n:]])
    Z = np.array([[1, 2], [1, 2], [3, 4]]); out["n94_unique"] = np.unique(Z, axis=0)
    I = np.array([0, 1, 2, 3, 15, 16, 32, 64, 128], dtype=np.int64)
    out["n95"] = ((I.reshape(-1, 1) & (2 ** np.arange(8))) != 0).astype(int)[:, ::-1]
    X = np.array([1.0, 2.0, 3.0]); out["n100"] = np.percentile(X, [2.5, 97.5])
    out["n35"] = np.multiply(np.add(X, 1), -0.5)
    return out


@program()
def data_analysis(np):
    sales = np.array([[120, 90, 150], [80, 110, 95], [130, 105, 160], [70, 60, 85]], dtype=float)
    totals = sales.sum(axis=0)
    share = sales / sales.sum(axis=1)[:, None]
    growth = np.diff(sales, axis=0) / sales[:-1] * 100
    best = np.argmax(sales, axis=0)
    above = sales[sales.mean(axis=1) > 100]
    rank = sales[:, 0].argsort()[::-1]
    norm = (sales - sales.min(0)) / (sales.max(0) - sales.min(0))
    cum = np.cumsum(sales, axis=0)
    pct = np.round(share * 100, 1)
    return {"totals": totals, "share": share, "growth": growth, "best": best, "above": above, "rank": rank,
            "norm": norm, "cum": cum, "pct": pct, "any_over": np.any(sales > 155, axis=1), "where": np.where(sales > 150),
            "cp": np.cumprod(np.array([1.0, 1.1, 0.9])), "mean_row": np.mean(sales, 1), "max_all": sales.max(),
            "sorted_desc": -np.sort(-sales[:, 1])}


@program()
def linalg_program(np):
    A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    w, V = np.linalg.eigh(A)
    L = np.linalg.cholesky(A)
    Q, R = np.linalg.qr(A)
    U, s, Vt = np.linalg.svd(A)
    b = np.array([1.0, 2.0, 3.0])
    x = np.linalg.solve(A, b)
    return {"w": w, "recon": V @ np.diag(w) @ V.T, "L": L, "QR": Q @ R, "s": s, "x": x,
            "norm": np.linalg.norm(A), "norm2": np.linalg.norm(b, 2), "inv": np.linalg.inv(A) @ A, "pinv": np.linalg.pinv(A) @ A,
            "cond": np.linalg.cond(A), "matpow": np.linalg.matrix_power(A, 3), "trace": np.trace(A), "outer": np.outer(b, b),
            "cross": np.cross(b, np.array([0.0, 1.0, 0.0])), "kron": np.kron(np.eye(2), np.ones((2, 2))),
            "slogdet": np.linalg.slogdet(A)[1]}


@program()
def scalar_protocols(np):
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    i = np.array([2, 0, 1])
    items = ["a", "b", "c"]
    u, c = np.unique(np.array([1, 2, 2, 3, 3, 3]), return_counts=True)
    return {"pct": "%.2f" % x.mean(), "d": "%d" % i.max(), "idx": items[i.argmax()], "range": list(range(i.max())),
            "round": round(float(x.mean()), 2), "round2": round(x.mean(), 2), "sqrt": math.sqrt(x.sum()),
            "div": float(x.sum() / len(x)), "cmp": bool(x.max() > 4), "fromscalars": np.array([x.sum(), x.min()]),
            "mean_list": np.mean([1, 2, 3, 4]), "sum_gen": np.sum([v * 2 for v in range(4)]),
            "max_list": np.max([[1, 5], [7, 2]], axis=0), "sorted": sorted(x.tolist()), "hex": hex(i[0]),
            "counter": {int(k): int(v) for k, v in zip(u, c)}, "argmax_list": np.argmax([1, 9, 3]),
            "float_i": float(np.float32(2.5)), "isfin": bool(np.isfinite(x).all()), "minmax": (x.min(), x.max())}


@program()
def ufunc_methods(np):
    a = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    return {"acc_max": np.maximum.accumulate(a), "red_min": np.minimum.reduce(a), "outer": np.add.outer(np.arange(3), np.arange(4)),
            "mul_outer": np.multiply.outer([1, 2], [3, 4, 5]), "land": np.logical_and.reduce(a > 0), "cnt": np.count_nonzero(a > 2),
            "cnt_ax": np.count_nonzero(np.arange(6).reshape(2, 3), axis=0), "addacc": np.add.accumulate(a), "where_s": np.where(a > 3, a, -1),
            "power": np.power(2, np.arange(5)), "rpow": 2 ** np.arange(5), "mod": np.mod(a, 3), "fd": np.floor_divide(a, 2),
            "sign": np.sign(a - 4), "interp": np.interp([1.5, 2.5], [1, 2, 3], [10, 20, 30]), "diff2": np.diff(a, n=2),
            "cumsum_ax": np.cumsum(np.arange(6).reshape(2, 3), axis=0), "hyp": np.hypot(3.0, np.array([4.0, 0.0]))}


@program()
def complex_program(np):
    theta = np.linspace(0, np.pi, 5)
    z = np.exp(1j * theta)
    w = np.array([1 + 2j, 3 - 4j])
    return {"z": z, "abs": np.abs(z), "angle": np.angle(w), "real": w.real, "imag": w.imag, "conj": np.conj(w),
            "mag": np.sqrt((w * w.conj()).real), "roots_unity": np.exp(2j * np.pi * np.arange(4) / 4).round(6)}


@program(tol=0.1)
def randomstate_program(np):
    rs = np.random.RandomState(0)
    a = rs.randn(2000)
    b = rs.rand(3, 4)
    c = rs.randint(0, 5, size=1000)
    d = rs.normal(10, 2, 2000)
    e = rs.uniform(0, 10, 2000)
    idx = rs.permutation(10)
    ch = rs.choice(10, 5, replace=False)
    rs.shuffle(idx)
    ln = np.random.lognormal(0, 0.25, 4000)
    lp = np.random.laplace(0, 1, 4000)
    g = np.random.geometric(0.5, 4000)
    mn = np.random.multinomial(100, [0.2, 0.3, 0.5])
    mvn = np.random.multivariate_normal([0, 5], [[1, 0], [0, 4]], size=3000)
    return {"a": (float(a.mean()) + 1, float(a.std())), "b": b.shape, "c": (int(c.min()), int(c.max())),
            "d": float(d.mean()) / 10, "e": float(e.mean()) / 5, "idx": sorted(idx.tolist()), "ch": len(set(ch.tolist())),
            "ln": float(ln.mean()) / math.exp(0.03125), "lp": float(np.abs(lp).mean()), "g": float(g.mean()) / 2,
            "mn": int(mn.sum()), "mn_shape": mn.shape, "mvn_mean": (float(mvn[:, 0].mean()) + 1, float(mvn[:, 1].mean()) / 5),
            "mvn_std": float(mvn[:, 1].std()) / 2}


@program(expect={"strings": "error", "objects": "error", "ragged": "error", "astype_str": "error",
                 "bad_reshape": "error", "bad_broadcast": "error", "bad_index": "error", "bad_axis": "error",
                 "numpy_errors": ["error"] * 5})
def unsupported_errors(np):
    """What cannot run must raise a clear error at the call (TypeError/NotImplementedError/ValueError)."""
    out = {}
    for name, f in [("strings", lambda: np.array(["a", "b"])), ("objects", lambda: np.array([1, "a"], dtype=object)),
                    ("ragged", lambda: np.array([[1, 2], [3]])), ("astype_str", lambda: np.arange(3).astype(str)),
                    ("bad_reshape", lambda: np.arange(6).reshape(4, 2)), ("bad_broadcast", lambda: np.ones(3) + np.ones(4)),
                    ("bad_index", lambda: np.arange(3)[5]), ("bad_axis", lambda: np.ones((2, 2)).sum(axis=3))]:
        try:
            f()
            out[name] = "no error"
        except (TypeError, ValueError, NotImplementedError, IndexError) as e:
            out[name] = "error" if str(e) else "empty message"
    import numpy as real_numpy  # and NumPy's own errors for these (the programs' reference)
    out["numpy_errors"] = []
    for f in (lambda: real_numpy.arange(6).reshape(4, 2), lambda: real_numpy.ones(3) + real_numpy.ones(4),
              lambda: real_numpy.arange(3)[5], lambda: real_numpy.ones((2, 2)).sum(axis=3),
              lambda: real_numpy.array([[1, 2], [3]])):
        try:
            f()
            out["numpy_errors"].append("no error")
        except (TypeError, ValueError, IndexError):
            out["numpy_errors"].append("error")
    return out


@program()
def integration_odes(np):
    # Euler's method for y' = -2y, trapezoid and Simpson integration, Newton's method
    t = np.linspace(0, 1, 101)
    y = np.empty_like(t)
    y[0] = 1.0
    for k in range(len(t) - 1):
        y[k + 1] = y[k] + (t[k + 1] - t[k]) * (-2 * y[k])
    f = np.sin(t)
    trap = np.trapezoid(f, t) if hasattr(np, "trapezoid") else np.trapz(f, t)
    h = t[1] - t[0]
    simpson = h / 3 * (f[0] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum() + f[-1])
    x = np.array([1.0, 2.0, 3.0])
    for _ in range(20):
        x = x - (x ** 2 - 2) / (2 * x)
    grad = np.gradient(t ** 2, t)
    return {"y_end": y[-1], "trap": trap, "simpson": simpson, "newton": x, "grad": grad[:5], "err": float(np.abs(y[-1] - np.exp(-2)))}


@program()
def matrix_ops(np):
    A = np.array([[2, -1, 0], [-1, 2, -1], [0, -1, 2]], dtype=float)
    I = np.identity(3)
    return {"AI": A @ I, "pow": A @ A @ A, "sym": bool(np.allclose(A, A.T)), "tri": np.triu(A, 1) + np.tril(A, -1),
            "diag": np.diag(A), "diagm": np.diag(np.diag(A)), "fill": (lambda B: (np.fill_diagonal(B, 0), B)[1])(A.copy()),
            "eigvals": np.sort(np.linalg.eigvals(A).real), "trace": A.trace(), "rank": np.linalg.matrix_rank(A),
            "hstack_I": np.hstack([A, I]).shape, "dot3": np.dot(A, np.ones(3)), "vdot": np.vdot([1, 2], [3, 4]),
            "inner": np.inner([1, 2, 3], [4, 5, 6]), "tensordot": np.tensordot(A, A, axes=1), "kron": np.kron([1, 2], [1, 1])}


@program()
def mandelbrot(np):
    x = np.linspace(-2.0, 0.5, 60)
    y = np.linspace(-1.2, 1.2, 40)
    C = x[np.newaxis, :] + 1j * y[:, np.newaxis]
    Z = np.zeros_like(C)
    N = np.zeros(C.shape, dtype=int)
    for i in range(25):
        mask = np.abs(Z) <= 2
        Z[mask] = Z[mask] ** 2 + C[mask]
        N[mask & (np.abs(Z) > 2)] = i
    return {"N": N, "inside": int((N == 0).sum()), "dtype": str(Z.dtype).replace("complex128", "complex64")}


@program()
def sieve_primes(np):
    n = 200
    is_prime = np.ones(n + 1, dtype=bool)
    is_prime[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_prime[i]:
            is_prime[i * i::i] = False
    primes = np.nonzero(is_prime)[0]
    gaps = np.diff(primes)
    return {"primes": primes, "count": len(primes), "maxgap": int(gaps.max()), "twin": int(np.sum(gaps == 2)),
            "flat": np.flatnonzero(is_prime)[:5], "where": np.where(is_prime[:20])[0]}


@program()
def pca(np):
    X = np.array([[2.5, 2.4, 0.5], [0.5, 0.7, 1.9], [2.2, 2.9, 0.3], [1.9, 2.2, 1.0], [3.1, 3.0, 0.2],
                  [2.3, 2.7, 0.8], [2.0, 1.6, 1.1], [1.0, 1.1, 1.6], [1.5, 1.6, 1.2], [1.1, 0.9, 1.7]])
    Xc = X - X.mean(axis=0)
    C = np.cov(Xc, rowvar=False)
    w, V = np.linalg.eigh(C)
    idx = np.argsort(w)[::-1]
    w, V = w[idx], V[:, idx]
    V = V * np.sign(V[0])  # fix the eigenvectors' signs
    proj = Xc @ V[:, :2]
    explained = w / w.sum()
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    return {"w": w, "V": V, "proj": proj, "explained": np.cumsum(explained), "S": S,
            "svd_var": S ** 2 / (len(X) - 1)}


@program()
def logistic_regression(np):
    X = np.array([[0.5, 1.0], [1.0, 1.5], [1.5, 0.5], [3.0, 3.5], [3.5, 2.5], [4.0, 4.0], [2.0, 2.2], [2.8, 3.1]])
    y = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    Xb = np.hstack([np.ones((X.shape[0], 1)), X])
    w = np.zeros(Xb.shape[1])
    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))
    losses = []
    for _ in range(200):
        p = sigmoid(Xb @ w)
        grad = Xb.T @ (p - y) / len(y)
        w -= 0.5 * grad
        losses.append(float(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))))
    pred = (sigmoid(Xb @ w) >= 0.5).astype(int)
    return {"w": w, "acc": float((pred == y).mean()), "loss_end": losses[-1], "decreasing": bool(np.all(np.diff(losses) <= 1e-7))}


@program()
def neural_net(np):
    X = np.linspace(-1, 1, 24).reshape(8, 3)
    y = np.array([0, 1, 2, 1, 0, 2, 1, 0])
    W1 = np.sin(np.arange(12.0)).reshape(3, 4) * 0.5
    b1 = np.zeros(4)
    W2 = np.cos(np.arange(12.0)).reshape(4, 3) * 0.5
    b2 = np.zeros((1, 3))
    for _ in range(50):
        h = np.maximum(0, X @ W1 + b1)
        scores = h @ W2 + b2
        scores -= scores.max(axis=1, keepdims=True)
        probs = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
        loss = -np.log(probs[np.arange(len(y)), y]).mean()
        d = probs.copy()
        d[np.arange(len(y)), y] -= 1
        d /= len(y)
        dW2 = h.T @ d
        db2 = d.sum(axis=0, keepdims=True)
        dh = d @ W2.T
        dh[h <= 0] = 0
        dW1 = X.T @ dh
        db1 = dh.sum(axis=0)
        W1 -= 0.5 * dW1; b1 -= 0.5 * db1; W2 -= 0.5 * dW2; b2 -= 0.5 * db2
    return {"loss": float(loss), "W1": W1, "b2": b2, "pred": np.argmax(probs, axis=1)}


@program(tol=0.1)
def bootstrap(np):
    rng = np.random.default_rng(0)
    data = np.array([2.1, 3.4, 1.9, 5.6, 4.4, 3.3, 2.8, 4.9, 3.7, 2.2])
    idx = rng.integers(0, len(data), size=(4000, len(data)))
    boots = data[idx].mean(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    b2 = rng.choice(data, size=(4000, len(data)), replace=True).mean(axis=1)
    return {"mean": float(boots.mean()) / data.mean(), "lo": float(lo) / 2.8, "hi": float(hi) / 4.2,
            "b2": float(b2.std()) / 0.36, "shape": boots.shape}


@program()
def classification_metrics(np):
    y_true = np.array([0, 1, 2, 2, 1, 0, 1, 2, 2, 0])
    y_pred = np.array([0, 2, 2, 2, 1, 0, 0, 2, 1, 0])
    k = 3
    cm = np.zeros((k, k), dtype=int)
    np.add.at(cm, (y_true, y_pred), 1)
    cm2 = np.bincount(k * y_true + y_pred, minlength=k * k).reshape(k, k)
    onehot = np.eye(k)[y_true]
    oh2 = np.zeros((len(y_true), k))
    oh2[np.arange(len(y_true)), y_true] = 1
    precision = np.diag(cm) / cm.sum(axis=0)
    recall = np.diag(cm) / cm.sum(axis=1)
    f1 = 2 * precision * recall / (precision + recall)
    return {"cm": cm, "cm2": cm2, "onehot": onehot, "oh2": oh2, "acc": float(np.mean(y_true == y_pred)),
            "precision": precision, "recall": recall, "f1": f1, "isin": np.isin(y_pred, [1, 2]),
            "setdiff": np.setdiff1d(np.arange(5), y_true)}


@program()
def similarity_topk(np):
    E = np.array([[1.0, 0.0, 1.0], [0.5, 0.5, 0.0], [0.9, 0.1, 1.1], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    En = E / np.linalg.norm(E, axis=1, keepdims=True)
    S = En @ En.T
    np.fill_diagonal(S, -np.inf)
    best = S.argmax(axis=1)
    top2 = np.argsort(-S, axis=1)[:, :2]
    scores = np.array([0.3, 0.9, 0.1, 0.75, 0.5, 0.95])
    part = np.sort(np.argpartition(scores, -3)[-3:])
    return {"S": np.where(np.isinf(S), 0, S), "best": best, "top2": top2, "part": part,
            "rank": np.argsort(np.argsort(-scores))}


@program()
def finance_series(np):
    prices = np.array([100.0, 102.0, 101.0, 105.0, 103.0, 99.0, 104.0, 108.0, 107.0, 110.0])
    returns = np.diff(prices) / prices[:-1]
    log_r = np.diff(np.log(prices))
    peak = np.maximum.accumulate(prices)
    drawdown = (prices - peak) / peak
    window = 3
    sma = np.convolve(prices, np.ones(window) / window, mode="valid")
    vol = np.std(returns, ddof=1) * np.sqrt(252)
    cum = np.cumprod(1 + returns)
    sw = np.lib.stride_tricks.sliding_window_view(prices, window).max(axis=1)
    return {"returns": returns, "log_r": log_r, "mdd": drawdown.min(), "sma": sma, "vol": float(vol), "cum": cum,
            "sw": sw, "up_days": int((returns > 0).sum()), "best_day": int(np.argmax(returns)) + 1}


@program()
def fft_image(np):
    img = np.add.outer(np.sin(np.linspace(0, 4 * np.pi, 16)), np.cos(np.linspace(0, 2 * np.pi, 16)))
    F = np.fft.fftshift(np.fft.fft2(img))
    mag = np.log1p(np.abs(F))
    r, c = np.ogrid[:16, :16]
    mask = (r - 8) ** 2 + (c - 8) ** 2 <= 16
    back = np.real(np.fft.ifft2(np.fft.ifftshift(F * mask)))
    return {"mag": mag, "back": back, "mask": int(mask.sum()), "energy": float(np.sum(np.abs(F) ** 2) / img.size)}


@program()
def misc_idioms(np):
    a = np.arange(0, 1.0, 0.1)
    b = np.array([1, 2, 3], dtype=np.float64)
    c = np.full((2, 2), np.nan)
    x = np.array([-7, -3, 3, 7])
    ff = np.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=int)
    hist, edges = np.histogram(np.linspace(0, 1, 101) ** 2, bins="auto")
    v = np.vectorize(lambda t: t * 2 if t > 1 else -t, otypes=[float])(b)
    rows, cols = np.nonzero(np.eye(3))
    m = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]).sum() if False else 4
    return {"a_len": len(a), "a": a, "b": b * 2, "c": c, "floordiv": x // 2, "mod": x % 3, "fmod": np.fmod(x, 3),
            "ff": ff, "hist_n": len(hist), "edges0": edges[0], "v": v, "rows": rows, "cols": cols, "m": m,
            "fmt": f"{b.mean():.3f}", "fmt_e": f"{b.sum():e}", "prod": int(np.prod(range(1, 6))),
            "shape": np.shape([[1, 2, 3]]), "ndim": np.ndim(5), "size": np.size(np.ones((2, 3))),
            "around": np.around(np.array([1.234, 5.678]), 1), "clip_none": np.clip(x, 0, None),
            "ones_bool": np.ones_like(x, dtype=bool), "array_range": np.array(range(4)), "arr_of_list": np.asarray([[1, 2], [3, 4]]).T,
            "zip_where": [(int(i), int(j)) for i, j in zip(*np.where(np.eye(2) > 0))]}


# --- comparison ---------------------------------------------------------------------------------

def _to_numpy(v):
    if hasattr(v, "__array_namespace__") and not isinstance(v, numpy.ndarray):
        return numpy.asarray(v)  # a pymetal array
    return v


def compare(ref, got, tol, path="") -> list[str]:
    """Differences between NumPy's result ``ref`` and pymetal's ``got`` (empty: they agree)."""
    got = _to_numpy(got)
    if isinstance(ref, dict):
        errs = []
        for k in ref:
            if k not in got:
                errs.append("%s.%s missing" % (path, k))
            else:
                errs += compare(ref[k], got[k], tol, "%s.%s" % (path, k))
        return errs
    if isinstance(ref, (tuple, list)) and not isinstance(got, (numpy.ndarray, numpy.generic)):
        if not isinstance(got, (tuple, list)):
            return ["%s: %s, NumPy gives %s" % (path, type(got).__name__, type(ref).__name__)]
        if len(ref) != len(got):
            return ["%s: length %d, NumPy %d" % (path, len(got), len(ref))]
        errs = []
        for i, (r, g) in enumerate(zip(ref, got)):
            errs += compare(r, g, tol, "%s[%d]" % (path, i))
        return errs
    if isinstance(ref, (str, bool)) or ref is None:
        return [] if ref == got and type(ref) is type(got) else ["%s: %r, NumPy %r" % (path, got, ref)]
    if isinstance(ref, (int, float)) and not isinstance(ref, numpy.generic):
        if type(got) is not type(ref):
            return ["%s: type %s, NumPy %s" % (path, type(got).__name__, type(ref).__name__)]
    r = numpy.asarray(ref)
    try:
        g = numpy.asarray(got)
    except Exception as e:  # noqa: BLE001
        return ["%s: not an array (%s)" % (path, e)]
    if r.shape != g.shape:
        return ["%s: shape %s, NumPy %s" % (path, g.shape, r.shape)]
    kinds = {"f": "fc", "c": "c", "i": "iu", "u": "ui", "b": "b"}
    if r.dtype.kind in kinds and g.dtype.kind not in kinds[r.dtype.kind]:
        return ["%s: dtype %s, NumPy %s" % (path, g.dtype, r.dtype)]
    if r.dtype.kind in "iub" and tol is None and r.dtype.kind == g.dtype.kind and r.dtype != g.dtype \
            and not (r.dtype == numpy.float64):
        return ["%s: dtype %s, NumPy %s" % (path, g.dtype, r.dtype)]
    if r.dtype.kind in "fc" or tol is not None:
        rt = tol if tol is not None else 2e-4
        ok = numpy.allclose(g.astype(numpy.complex128 if r.dtype.kind == "c" else float), r, rtol=rt, atol=rt,
                            equal_nan=True)
    else:
        ok = numpy.array_equal(g, r)
    return [] if ok else ["%s: values differ: %s vs NumPy %s" % (path, str(g)[:200], str(r)[:200])]


def run(name, table=None):
    """(ok, message) for one program (of `table`, default this file's PROGRAMS)."""
    import pymetal
    f, tol, expect = (PROGRAMS if table is None else table)[name]
    ref = f(numpy) if expect is None else expect
    try:
        got = f(pymetal)
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        where = next((fr for fr in reversed(tb) if "numpy_programs" in fr.filename), tb[-1])
        return False, "%s: %s (line %d: %s)" % (type(e).__name__, str(e)[:300], where.lineno, where.line)
    errs = compare(ref, got, tol)
    return not errs, "; ".join(errs)


def main(argv, table=None):
    names = argv or list(PROGRAMS if table is None else table)
    passed = 0
    for name in names:
        ok, msg = run(name, table)
        passed += ok
        print("%-22s %s %s" % (name, "PASS" if ok else "FAIL", msg))
    print("%d/%d programs pass" % (passed, len(names)))
    return 0 if passed == len(names) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
