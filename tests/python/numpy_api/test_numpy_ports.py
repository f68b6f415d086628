"""Real NumPy programs run unchanged with pymetal in place of NumPy (issue 23).

Each program is written as NumPy code against a module parameter `np`; it runs once
with NumPy and once with pymetal (``np=pm``), and the results are compared. No
randomness inside the programs (pm.random is not part of this): inputs are made
by NumPy beforehand, the Monte-Carlo estimate uses a low-discrepancy sequence.
"""

import numpy

import pymetal as pm
from npcompare import compare

rng = numpy.random.default_rng(23)


def _run(program, *inputs, rtol=1e-4, atol=1e-4):
    want = program(numpy, *inputs)
    got = program(pm, *[pm.asarray(x) if isinstance(x, numpy.ndarray) else x for x in inputs])
    compare(got, want, rtol=rtol, atol=atol, check_dtype=False)  # NumPy's float64 is float32 here
    return got, want


def kmeans(np, X, k=3, iters=8):
    C = X[:k].copy()
    for _ in range(iters):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        labels = d.argmin(1)
        counts = np.bincount(labels, minlength=k)
        for j in range(k):  # a loop over clusters, not elements
            if counts[j] > 0:
                C[j] = X[labels == j].mean(0)
    inertia = np.min(d, axis=1).sum()
    return C, labels, counts, inertia


def test_kmeans():
    centres = numpy.array([[0, 0], [5, 5], [-5, 4]], numpy.float32)
    X = (centres[rng.integers(0, 3, 300)] + rng.normal(size=(300, 2))).astype(numpy.float32)
    _run(kmeans, X, rtol=1e-3, atol=1e-3)


def mlp_forward(np, X, y, W1, b1, W2, b2):
    h = np.maximum(X.dot(W1) + b1, 0)
    logits = h @ W2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    pred = np.argmax(p, axis=1)
    acc = np.mean(pred == y)
    loss = -np.mean(np.log(p[np.arange(len(y)), y] + 1e-7))
    top2 = np.argsort(-p, axis=1)[:, :2]
    return p, pred, acc, loss, top2, np.einsum("ij,ij->i", h, h)


def test_mlp_forward():
    X = rng.normal(size=(64, 10)).astype(numpy.float32)
    y = rng.integers(0, 4, 64)
    W1 = (rng.normal(size=(10, 32)) * 0.3).astype(numpy.float32)
    W2 = (rng.normal(size=(32, 4)) * 0.3).astype(numpy.float32)
    b1, b2 = numpy.zeros(32, numpy.float32), numpy.full(4, 0.1, numpy.float32)
    _run(mlp_forward, X, y, W1, b1, W2, b2, rtol=1e-3, atol=1e-4)


def image_filter(np, img, sigma=1.0):
    r = 2
    x = np.arange(-r, r + 1, dtype=np.float32)
    k = np.exp(-(x ** 2) / (2 * sigma ** 2))
    k = k / k.sum()
    padded = np.pad(img, r, mode="reflect")
    windows = np.lib.stride_tricks.sliding_window_view(padded, (2 * r + 1, 2 * r + 1))
    blurred = np.einsum("ijkl,k,l->ij", windows, k, k)
    rows = np.vstack([np.convolve(row, k, mode="same") for row in padded[r:-r]])
    gy, gx = np.gradient(blurred)
    magnitude = np.hypot(gx, gy)
    edges = magnitude > np.percentile(magnitude, 90)
    hist, bin_edges = np.histogram(blurred, bins=8)
    return blurred, rows, magnitude, edges.sum(), hist, bin_edges, np.rot90(blurred)[0], np.clip(img, 0.2, 0.8)


def test_image_filter():
    yy, xx = numpy.mgrid[0:24, 0:31]
    img = ((numpy.sin(xx / 3.0) * numpy.cos(yy / 5.0) + 1) / 2).astype(numpy.float32)
    img[8:14, 10:20] = 1.0
    _run(image_filter, img, rtol=1e-4, atol=1e-5)


def monte_carlo_pi(np, n):
    i = np.arange(1, n + 1)
    u = np.mod(i * 0.6180339887, 1.0)  # additive recurrences: a low-discrepancy sequence
    v = np.mod(i * 0.7548776662, 1.0)
    inside = (u * u + v * v) <= 1.0
    running = np.cumsum(inside) * 4.0 / i
    return 4.0 * np.count_nonzero(inside) / n, running[-1], np.abs(running[n // 2:] - np.pi).max() < 0.05


def test_monte_carlo_pi():
    got, want = _run(monte_carlo_pi, 4096, rtol=2e-3, atol=2e-3)
    assert abs(float(got[0]) - numpy.pi) < 0.01


def clean_and_describe(np, X):
    X = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
    lo, hi = np.percentile(X, [1, 99], axis=0)
    X = np.clip(X, lo, hi)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    C = np.corrcoef(Z, rowvar=False)
    vals, counts = np.unique(np.round(Z[:, 0]), return_counts=True)
    q = np.quantile(Z, [0.25, 0.5, 0.75], axis=0)
    order = np.lexsort((Z[:, 1], np.round(Z[:, 0])))
    return Z, C, vals, counts, q, order[:5], np.allclose(Z.mean(0), 0, atol=1e-5), np.trace(C)


def test_clean_and_describe():
    X = rng.normal(size=(200, 4)).astype(numpy.float32)
    X[:, 1] += X[:, 0]
    X[rng.integers(0, 200, 15), rng.integers(0, 4, 15)] = numpy.nan
    _run(clean_and_describe, X, rtol=1e-3, atol=1e-4)
