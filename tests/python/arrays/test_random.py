"""pm.random: the Philox kernels against a NumPy reference (bit for bit), the
samplers against their distributions (KS and chi-square tests on large
samples, fixed seeds), and NumPy's dtype / shape / broadcasting / error rules."""

import os
import subprocess
import sys

import numpy as np
import pytest

import pymetal as pm
from pymetal.dtypes import bfloat16

stats = pytest.importorskip("scipy.stats")

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox(ctr, key):
    """Philox4x32-10 over arrays of counters (4, n) with a key (2,), in NumPy."""
    c = [np.asarray(x, dtype=np.uint64) for x in ctr]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0, p1 = np.uint64(M0) * c[0], np.uint64(M1) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask, p0 & mask]
        k0, k1 = (k0 + np.uint64(W0)) & mask, (k1 + np.uint64(W1)) & mask
    return [x.astype(np.uint32) for x in c]


def key_of(seed):
    k = np.random.SeedSequence(seed).generate_state(2, np.uint32)
    return int(k[0]), int(k[1])


def _words(t, call, key, block=0):
    t = np.asarray(t, dtype=np.int64)
    return philox([t & 0xFFFFFFFF, t >> 32, np.full_like(t, call), np.full_like(t, block)], key)


def test_reference_matches_random123_known_answers():
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in cases:
        got = philox([[x] for x in ctr], key)
        assert tuple(int(w[0]) for w in got) == want


@pytest.mark.parametrize("n", [1, 3, 4, 5, 1023, 4099])
def test_uniform_bits_are_philox(dev, n):
    """Element 4t + j of random() is word j of block (t, 0, call, 0), top 24 bits."""
    rng = pm.random.default_rng(42)
    first = rng.random(n).numpy()
    second = rng.random(n).numpy()
    for call, got in ((0, first), (1, second)):
        words = _words(np.arange(-(-n // 4)), call, key_of(42))
        want = (np.stack(words, axis=1).reshape(-1)[:n] >> 8).astype(np.float32) * np.float32(2.0 ** -24)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 6, 1001])
def test_integers_are_philox(dev, n):
    """integers(0, R) for R <= 2**32 (Lemire's multiply-shift): element 4t + j takes
    word j of block (t, 0, call, 0); a value that would be biased is drawn again
    from the element's own blocks (4t + j, 0, call, 1), (..., 2), ..."""
    key = key_of(7)
    rng = pm.random.default_rng(7)
    got = rng.integers(0, 2 ** 32, size=n, dtype=np.uint32).numpy()
    np.testing.assert_array_equal(got, np.stack(_words(np.arange(-(-n // 4)), 0, key), axis=1).reshape(-1)[:n])
    R = 3 * 2 ** 30  # a quarter of the words are rejected
    got = rng.integers(0, R, size=n, dtype=np.int64).numpy()
    words = np.stack(_words(np.arange(-(-n // 4)), 1, key), axis=1).reshape(-1)[:n].astype(np.uint64)
    threshold = (2 ** 32 - R) % R
    want = []
    for i, w in enumerate(words.tolist()):
        block, stream = 1, []
        while (w * R) % 2 ** 32 < threshold:
            if not stream:
                stream = [int(x[0]) for x in _words([i], 1, key, block)]
                block += 1
            w = stream.pop(0)
        want.append((w * R) >> 32)
    if n > 100:  # the redraws were exercised
        assert any((w * R) % 2 ** 32 < threshold for w in words.tolist())
    np.testing.assert_array_equal(got, want)


def test_reproducible_and_independent(dev):
    a, b = pm.random.default_rng(123), pm.random.default_rng(123)
    for draw in (lambda r: r.random(100), lambda r: r.normal(size=(3, 5)), lambda r: r.integers(0, 10, 50),
                 lambda r: r.poisson(3.0, 40), lambda r: r.gamma(2.0, size=30), lambda r: r.permutation(20)):
        np.testing.assert_array_equal(draw(a).numpy(), draw(b).numpy())
    assert not np.array_equal(pm.random.default_rng(1).random(64).numpy(), pm.random.default_rng(2).random(64).numpy())
    r = pm.random.default_rng(5)
    assert not np.array_equal(r.random(64).numpy(), r.random(64).numpy())  # each call draws anew
    kids = pm.random.default_rng(5).spawn(2)
    x, y = (k.random(64).numpy() for k in kids)
    assert not np.array_equal(x, y)
    np.testing.assert_array_equal(pm.random.default_rng(5).spawn(2)[1].random(64).numpy(), y)
    seq = np.random.SeedSequence(9)
    np.testing.assert_array_equal(pm.random.default_rng(seq).random(8).numpy(), pm.random.default_rng(9).random(8).numpy())


def test_same_stream_at_any_thread_count(dev):
    """The arrays do not depend on how many CPU threads run the kernels."""
    code = ("import hashlib, pymetal as pm; r = pm.random.default_rng(11); "
            "parts = [r.random(100001), r.standard_normal(5003), r.integers(-5, 1000, 7777), "
            "r.poisson(50.0, 3001), r.binomial(40, 0.3, 999), r.gamma(0.7, size=2001), r.beta(0.5, 3.0, 555)]; "
            "print(hashlib.sha256(b''.join(p.numpy().tobytes() for p in parts)).hexdigest())")
    digests = set()
    for threads in ("1", "2", "3"):
        env = dict(os.environ, PYMETAL_CPU_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1


N = 200_000
P_MIN = 1e-4  # fixed seeds: a correct sampler passes; a wrong one fails by far


@pytest.mark.parametrize("name, draw, cdf", [
    ("uniform", lambda r: r.random(N), stats.uniform.cdf),
    ("uniform(-2, 3)", lambda r: r.uniform(-2.0, 3.0, N), stats.uniform(-2, 5).cdf),
    ("standard_normal", lambda r: r.standard_normal(N), stats.norm.cdf),
    ("normal(3, 2)", lambda r: r.normal(3.0, 2.0, N), stats.norm(3, 2).cdf),
    ("exponential(2)", lambda r: r.exponential(2.0, N), stats.expon(scale=2).cdf),
    ("gamma(0.3)", lambda r: r.gamma(0.3, size=N), stats.gamma(0.3).cdf),
    ("gamma(1)", lambda r: r.gamma(1.0, size=N), stats.gamma(1.0).cdf),
    ("gamma(4.5, 2)", lambda r: r.gamma(4.5, 2.0, N), stats.gamma(4.5, scale=2).cdf),
    ("beta(0.5, 0.5)", lambda r: r.beta(0.5, 0.5, N), stats.beta(0.5, 0.5).cdf),
    ("beta(2, 5)", lambda r: r.beta(2.0, 5.0, N), stats.beta(2, 5).cdf),
    ("beta(0.2, 3)", lambda r: r.beta(0.2, 3.0, N), stats.beta(0.2, 3).cdf),
])
def test_continuous_distributions(dev, name, draw, cdf):
    x = draw(pm.random.default_rng(2024)).numpy().astype(np.float64)
    assert x.shape == (N,) and np.all(np.isfinite(x))
    assert stats.kstest(x, cdf).pvalue > P_MIN, name


def _chi_square(values, pmf, lo, hi):
    """p-value of a chi-square test of integer samples against pmf over [lo, hi],
    the tails lumped into the end bins."""
    ks = np.arange(lo, hi + 1)
    expected = pmf(ks) * len(values)
    expected[0] += pmf(np.arange(lo)).sum() * len(values) if lo > 0 else 0
    counts = np.bincount(np.clip(values - lo, 0, hi - lo), minlength=hi - lo + 1).astype(np.float64)
    expected[-1] += (1 - pmf(np.arange(0, hi + 1)).sum()) * len(values)
    keep = expected >= 5
    c = np.append(counts[keep], counts[~keep].sum())
    e = np.append(expected[keep], expected[~keep].sum())
    if e[-1] < 5:
        c[-2] += c[-1]
        e[-2] += e[-1]
        c, e = c[:-1], e[:-1]
    return stats.chisquare(c, e * c.sum() / e.sum()).pvalue


@pytest.mark.parametrize("lam", [0.3, 4.0, 9.9, 10.0, 33.0, 1000.0, 250000.0])
def test_poisson(dev, lam):
    x = pm.random.default_rng(99).poisson(lam, N).numpy()
    assert x.dtype == np.int64
    sd = np.sqrt(lam)
    lo, hi = max(0, int(lam - 6 * sd)), int(lam + 6 * sd) + 2
    assert _chi_square(x, stats.poisson(lam).pmf, lo, hi) > P_MIN


@pytest.mark.parametrize("n, p", [(10, 0.3), (1, 0.5), (100, 0.5), (1000, 0.02), (50, 0.93), (5000, 0.4), (0, 0.5)])
def test_binomial(dev, n, p):
    x = pm.random.default_rng(77).binomial(n, p, N).numpy()
    assert x.dtype == np.int64 and x.min() >= 0 and x.max() <= n
    if n == 0:
        assert not x.any()
        return
    sd = np.sqrt(n * p * (1 - p))
    lo, hi = max(0, int(n * p - 7 * sd)), min(n, int(n * p + 7 * sd) + 1)
    assert _chi_square(x, stats.binom(n, p).pmf, lo, hi) > P_MIN


@pytest.mark.parametrize("low, high, dtype", [(0, 7, np.int64), (-3, 3, np.int8), (0, 256, np.uint8),
                                              (10, 10 + 3 * 2 ** 33, np.int64), (0, 2, np.bool_),
                                              (-2 ** 63, 2 ** 63, np.int64), (0, 1000, np.uint16)])
def test_integers(dev, low, high, dtype):
    x = pm.random.default_rng(3).integers(low, high, size=N, dtype=dtype).numpy()
    assert x.dtype == np.dtype(dtype)
    xi = x.astype(object) if high - low > 2 ** 60 else x.astype(np.int64)
    assert xi.min() >= low and xi.max() < high
    if high - low <= 1000:
        k = high - low
        counts = np.bincount(x.astype(np.int64) - low, minlength=k)
        assert stats.chisquare(counts).pvalue > P_MIN
    else:  # the top and bottom quarters are equally likely
        scaled = (np.asarray([int(v) - low for v in x[:20000]], dtype=np.float64) / (high - low))
        assert stats.kstest(scaled, stats.uniform.cdf).pvalue > P_MIN


def test_integers_endpoint_and_errors(dev):
    r = pm.random.default_rng(0)
    x = r.integers(5, 7, size=5000, endpoint=True).numpy()
    assert set(np.unique(x)) == {5, 6, 7}
    assert r.integers(4, size=3).numpy().max() < 4  # high omitted: [0, low)
    with pytest.raises(ValueError, match="low >= high"):
        r.integers(3, 3)
    with pytest.raises(ValueError, match="out of bounds for int8"):
        r.integers(0, 200, dtype=np.int8)
    with pytest.raises(ValueError, match="out of bounds for uint8"):
        r.integers(-1, 2, dtype=np.uint8)
    with pytest.raises(TypeError, match="integer or bool dtype"):
        r.integers(0, 3, dtype=np.float32)


def test_shapes_dtypes_and_broadcasting(dev, float64_error):
    r = pm.random.default_rng(1)
    assert r.random().shape == () and r.random(0).shape == (0,) and r.random((2, 0, 3)).shape == (2, 0, 3)
    assert r.random((3, 4)).shape == (3, 4) and r.random(5).dtype == np.float32
    for dt, top in ((np.float16, 1 - 2 ** -11), (bfloat16, 1 - 2 ** -8)):
        x = r.random(50000, dtype=dt).numpy().astype(np.float64)
        assert x.min() >= 0 and x.max() <= top and len(np.unique(x)) > 200
    x = r.standard_normal(1001, dtype=np.float16).numpy()
    assert x.dtype == np.float16 and abs(float(x.astype(np.float32).mean())) < 0.2
    loc, scale = np.array([0.0, 10.0, 100.0]), np.array([[1.0], [2.0]])
    y = r.normal(loc, scale)
    assert y.shape == (2, 3) and y.dtype == np.float32
    assert r.normal(pm.asarray(np.float32([1, 2])), 1.0, size=(4, 2)).shape == (4, 2)
    assert r.uniform(np.zeros(3), 1.0).shape == (3,)
    lam = np.array([1.0, 50.0, 1000.0])
    z = r.poisson(lam, size=(20000, 3)).numpy()
    np.testing.assert_allclose(z.mean(axis=0), lam, rtol=0.05)
    g = r.gamma(np.array([1.0, 5.0]), size=(20000, 2)).numpy()
    np.testing.assert_allclose(g.mean(axis=0), [1.0, 5.0], rtol=0.05)
    b = r.binomial(np.array([10, 100]), 0.5, size=(20000, 2)).numpy()
    np.testing.assert_allclose(b.mean(axis=0), [5.0, 50.0], rtol=0.05)
    with pytest.raises(ValueError, match="broadcast"):
        r.normal(np.zeros(3), 1.0, size=(4, 2))
    with pytest.raises(ValueError, match="scale < 0"):
        r.normal(0.0, -1.0, 3)
    with pytest.raises(ValueError, match="lam < 0"):
        r.poisson(np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="p < 0, p > 1"):
        r.binomial(3, 1.5)
    with pytest.raises(ValueError, match="a <= 0"):
        r.beta(0.0, 1.0)
    with pytest.raises(TypeError, match="float64"):
        r.random(3, dtype=np.float64)
    with pytest.raises(ValueError, match="negative dimension"):
        r.random(-1)
    out = pm.empty((2, 3), np.float32)
    assert r.random(out=out) is out and 0 <= float(out.numpy().max()) < 1


def test_permutation_shuffle_choice(dev):
    r = pm.random.default_rng(8)
    for n in (0, 1, 7, 1000):
        np.testing.assert_array_equal(np.sort(r.permutation(n).numpy()), np.arange(n))
    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    px = r.permutation(pm.asarray(x)).numpy()
    assert sorted(map(tuple, px)) == sorted(map(tuple, x))
    py = r.permutation(pm.asarray(x), axis=1).numpy()
    np.testing.assert_array_equal(np.sort(py, axis=1), x)
    a = pm.asarray(np.arange(100, dtype=np.float32))
    r.shuffle(a)
    assert not np.array_equal(a.numpy(), np.arange(100)) and np.array_equal(np.sort(a.numpy()), np.arange(100))
    h = np.arange(50)
    r.shuffle(h)
    np.testing.assert_array_equal(np.sort(h), np.arange(50))
    # choice: with replacement, uniform and weighted
    c = r.choice(5, size=N).numpy()
    assert stats.chisquare(np.bincount(c, minlength=5)).pvalue > P_MIN
    p = np.array([0.1, 0.0, 0.6, 0.3])
    c = r.choice(4, size=N, p=p).numpy()
    counts = np.bincount(c, minlength=4)
    assert counts[1] == 0
    assert stats.chisquare(counts[[0, 2, 3]], N * p[[0, 2, 3]]).pvalue > P_MIN
    # without replacement: distinct values
    d = r.choice(50, size=20, replace=False).numpy()
    assert len(set(d.tolist())) == 20 and d.max() < 50
    w = r.choice(10, size=5, replace=False, p=np.full(10, 0.1)).numpy()
    assert len(set(w.tolist())) == 5
    firsts = np.array([int(r.choice(3, size=1, replace=False, p=[0.7, 0.2, 0.1]).numpy()[0]) for _ in range(600)])
    assert 0.6 < (firsts == 0).mean() < 0.8
    pop = pm.asarray(np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32))
    assert r.choice(pop, size=(2, 2)).shape == (2, 2, 2)
    assert r.choice(4).shape == ()
    with pytest.raises(ValueError, match="larger sample"):
        r.choice(3, size=4, replace=False)
    with pytest.raises(ValueError, match="do not sum to 1"):
        r.choice(3, size=2, p=[0.5, 0.2, 0.2])
    with pytest.raises(ValueError, match="Fewer non-zero"):
        r.choice(3, size=2, replace=False, p=[1.0, 0.0, 0.0])


def test_legacy_functions(dev):
    pm.random.seed(17)
    a = pm.random.rand(3, 2).numpy()
    pm.random.seed(17)
    np.testing.assert_array_equal(pm.random.rand(3, 2).numpy(), a)
    assert a.shape == (3, 2) and a.min() >= 0 and a.max() < 1
    assert pm.random.randn(4).shape == (4,)
    r = pm.random.randint(3, 9, size=100).numpy()
    assert r.min() >= 3 and r.max() < 9 and r.dtype == np.int64
    assert pm.random.randint(5, size=10).numpy().max() < 5
    assert pm.random.random((2, 2)).shape == (2, 2) and pm.random.random_sample(3).shape == (3,)
    assert pm.random.normal(1.0, 0.0, 3).numpy().tolist() == [1.0, 1.0, 1.0]
    assert pm.random.uniform(2.0, 2.0, 2).numpy().tolist() == [2.0, 2.0]
    assert sorted(pm.random.permutation(5).numpy().tolist()) == [0, 1, 2, 3, 4]
    assert pm.random.choice([10, 20, 30], size=4).shape == (4,)
    for f in (pm.random.exponential, pm.random.poisson, pm.random.standard_normal):
        assert f(size=5).shape == (5,)
    assert pm.random.binomial(10, 0.5, 5).shape == (5,)
    assert pm.random.gamma(2.0, 1.0, 5).shape == (5,) and pm.random.beta(1.0, 2.0, 5).shape == (5,)
