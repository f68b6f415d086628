"""pm.random's composed distributions (pymetal/random_distributions.py), the legacy module
functions and RandomState: KS / chi-square tests against scipy.stats on large samples with
fixed seeds, support bounds, NumPy's shapes / dtypes / size / broadcasting / error rules."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import pymetal as pm

stats = pytest.importorskip("scipy.stats")

N = 100_000
P_MIN = 1e-4  # fixed seeds: a correct sampler passes; a wrong one fails by far


@pytest.mark.parametrize("name, args, dist", [
    ("lognormal", (0.5, 0.8), stats.lognorm(0.8, scale=np.exp(0.5))),
    ("laplace", (1.0, 2.0), stats.laplace(1.0, 2.0)),
    ("logistic", (-1.0, 0.5), stats.logistic(-1.0, 0.5)),
    ("gumbel", (2.0, 3.0), stats.gumbel_r(2.0, 3.0)),
    ("rayleigh", (2.0,), stats.rayleigh(scale=2.0)),
    ("weibull", (1.7,), stats.weibull_min(1.7)),
    ("weibull", (0.4,), stats.weibull_min(0.4)),
    ("pareto", (3.0,), stats.lomax(3.0)),
    ("power", (2.5,), stats.powerlaw(2.5)),
    ("power", (0.3,), stats.powerlaw(0.3)),
    ("triangular", (-1.0, 0.5, 3.0), stats.triang(1.5 / 4.0, loc=-1.0, scale=4.0)),
    ("triangular", (0.0, 0.0, 1.0), stats.triang(0.0, loc=0.0, scale=1.0)),
    ("standard_cauchy", (), stats.cauchy()),
    ("chisquare", (3.0,), stats.chi2(3.0)),
    ("chisquare", (0.5,), stats.chi2(0.5)),
    ("standard_t", (5.0,), stats.t(5.0)),
    ("standard_t", (0.7,), stats.t(0.7)),
    ("f", (5.0, 10.0), stats.f(5.0, 10.0)),
    ("noncentral_chisquare", (3.0, 2.0), stats.ncx2(3.0, 2.0)),
    ("noncentral_chisquare", (0.6, 5.0), stats.ncx2(0.6, 5.0)),
    ("noncentral_f", (5.0, 10.0, 2.0), stats.ncf(5.0, 10.0, 2.0)),
    ("wald", (2.0, 3.0), stats.invgauss(2.0 / 3.0, scale=3.0)),
    ("wald", (10.0, 0.1), stats.invgauss(100.0, scale=0.1)),
    ("wald", (1.0, 0.001), stats.invgauss(1000.0, scale=0.001)),  # the textbook root cancels in float32
    ("vonmises", (0.0, 2.0), stats.vonmises(2.0)),  # (scipy does not wrap a loc into [-pi, pi])
])
def test_continuous(dev, name, args, dist):
    x = getattr(pm.random.default_rng(7), name)(*args, size=N)
    assert x.dtype == np.float32 and x.shape == (N,)
    v = x.numpy().astype(np.float64)
    assert np.all(np.isfinite(v) | (name == "standard_t")), name
    assert stats.kstest(v, dist.cdf).pvalue > P_MIN, (name, args)


def test_supports(dev):
    r = pm.random.default_rng(3)
    n = 50_000
    assert float(pm.min(r.rayleigh(1.0, n))) > 0
    assert float(pm.min(r.pareto(0.5, n))) >= 0
    p = r.power(0.2, n)
    assert float(pm.min(p)) >= 0 and float(pm.max(p)) <= 1
    t = r.triangular(1.0, 2.0, 5.0, n)
    assert float(pm.min(t)) >= 1 and float(pm.max(t)) <= 5
    w = r.wald(1.0, 0.01, n)  # heavy cancellation in the textbook formula: here never <= 0
    assert float(pm.min(w)) > 0 and bool(pm.all(pm.isfinite(w)))
    vm = r.vonmises(0.0, 0.5, n)
    assert float(pm.min(vm)) >= -np.pi and float(pm.max(vm)) <= np.pi
    assert float(pm.min(r.weibull(0.0, 10))) == 0 == float(pm.max(r.weibull(0.0, 10)))


def _chi_square(values, pmf, lo, hi):
    """p-value of a chi-square test of integer samples against pmf over [lo, hi], the upper
    tail lumped into the last bin (bins with under 5 expected values merged)."""
    ks = np.arange(lo, hi + 1)
    expected = pmf(ks) * len(values)
    expected[-1] += (1 - pmf(ks).sum()) * len(values)
    counts = np.bincount(np.clip(values - lo, 0, hi - lo), minlength=hi - lo + 1).astype(np.float64)
    keep = expected >= 5
    c = np.append(counts[keep], counts[~keep].sum())
    e = np.append(expected[keep], expected[~keep].sum())
    if e[-1] < 5:
        c, e = c[:-1], e[:-1]
        c[-1] += counts[~keep].sum()
        e[-1] += expected[~keep].sum()
    return stats.chisquare(c, e * c.sum() / e.sum()).pvalue


@pytest.mark.parametrize("name, args, dist, lo, hi", [
    ("geometric", (0.3,), stats.geom(0.3), 1, 30),
    ("geometric", (0.9,), stats.geom(0.9), 1, 10),
    ("geometric", (0.01,), stats.geom(0.01), 1, 600),
    ("negative_binomial", (3, 0.4), stats.nbinom(3, 0.4), 0, 40),
    ("negative_binomial", (0.5, 0.1), stats.nbinom(0.5, 0.1), 0, 100),
    ("logseries", (0.6,), stats.logser(0.6), 1, 20),
    ("logseries", (0.99,), stats.logser(0.99), 1, 300),
    ("zipf", (2.5,), stats.zipf(2.5), 1, 50),
    ("hypergeometric", (10, 5, 7), stats.hypergeom(15, 10, 7), 0, 7),
    ("hypergeometric", (300, 700, 100), stats.hypergeom(1000, 300, 100), 0, 100),
])
def test_discrete(dev, name, args, dist, lo, hi):
    x = getattr(pm.random.default_rng(11), name)(*args, size=N)
    assert x.dtype == np.int64 and x.shape == (N,)
    v = x.numpy()
    assert v.min() >= dist.support()[0]
    assert _chi_square(v, dist.pmf, lo, hi) > P_MIN, (name, args)


def test_geometric_small_p(dev):
    # k ~ 1e8 is past float32's integers: one float32 formula gave only multiples of 8
    p = 1e-8
    for k in (pm.random.default_rng(2).geometric(p, N), pm.random.default_rng(2).geometric(pm.asarray([p]), (N, 1))):
        v = k.numpy().ravel()
        assert v.dtype == np.int64 and v.min() >= 1
        assert abs(v.mean() * p - 1) < 6 / np.sqrt(N)
        assert abs(np.mean(v % 8 == 0) - 1 / 8) < 6 * np.sqrt(1 / 8 * 7 / 8 / N)
        assert stats.kstest(v * p, stats.expon.cdf).pvalue > P_MIN  # (1 - p)**k ~ exp(-p k)


def test_geometric_p_one_and_negative_binomial_p_one(dev):
    r = pm.random.default_rng(0)
    assert r.geometric(1.0, 100).numpy().tolist() == [1] * 100
    assert r.negative_binomial(2.0, 1.0, 10).numpy().tolist() == [0] * 10
    assert r.logseries(0.0, 5).numpy().tolist() == [1] * 5


def test_dirichlet(dev):
    r = pm.random.default_rng(5)
    alpha = np.array([1.0, 2.0, 3.5])
    x = r.dirichlet(alpha, size=(N // 2,))
    assert x.shape == (N // 2, 3) and x.dtype == np.float32
    v = x.numpy().astype(np.float64)
    np.testing.assert_allclose(v.sum(axis=1), 1.0, atol=1e-5)
    a0 = alpha.sum()
    mean, var = alpha / a0, alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1))
    assert np.all(np.abs(v.mean(axis=0) - mean) < 6 * np.sqrt(var / len(v)))
    for j in range(3):  # marginals are Beta(alpha_j, a0 - alpha_j)
        assert stats.kstest(v[:, j], stats.beta(alpha[j], a0 - alpha[j]).cdf).pvalue > P_MIN
    assert r.dirichlet([1.0, 1.0]).shape == (2,) and r.dirichlet([0.5, 2.0], size=(2, 3)).shape == (2, 3, 2)
    small = r.dirichlet([0.01, 0.02, 0.01], size=N // 2).numpy().astype(np.float64)  # gammas underflow
    np.testing.assert_allclose(small.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(np.abs(small.mean(axis=0) - [0.25, 0.5, 0.25]) < 6 * np.sqrt(0.25 / (1.04 * len(small))))
    assert r.dirichlet([0.0, 2.0, 0.0], size=3).numpy().tolist() == [[0.0, 1.0, 0.0]] * 3
    assert r.dirichlet([0.0, 0.0]).numpy().tolist() == [0.0, 0.0]  # as NumPy
    with pytest.raises(ValueError, match="alpha < 0"):
        r.dirichlet([1.0, -1.0])
    with pytest.raises(ValueError):
        r.dirichlet(1.0)


def test_multinomial(dev):
    r = pm.random.default_rng(9)
    p = np.array([0.2, 0.3, 0.1, 0.4])
    x = r.multinomial(20, p, size=N)
    assert x.shape == (N, 4) and x.dtype == np.int64
    v = x.numpy()
    assert np.all(v.sum(axis=1) == 20) and v.min() >= 0
    assert np.all(np.abs(v.mean(axis=0) - 20 * p) < 6 * np.sqrt(20 * p * (1 - p) / N))
    assert _chi_square(v[:, 2], stats.binom(20, 0.1).pmf, 0, 20) > P_MIN
    # n broadcasts; size None gives one draw of shape (k,); pvals rows broadcast with n
    assert r.multinomial(5, [0.5, 0.5]).shape == (2,)
    nn = r.multinomial([1, 10, 100], [0.5, 0.25, 0.25])
    assert nn.shape == (3, 3) and nn.numpy().sum(axis=1).tolist() == [1, 10, 100]
    rows = r.multinomial(7, [[1.0, 0.0], [0.0, 1.0]]).numpy()
    assert rows.tolist() == [[7, 0], [0, 7]]
    assert r.multinomial(0, [0.3, 0.7], size=3).numpy().tolist() == [[0, 0]] * 3
    with pytest.raises(ValueError, match="pvals < 0"):
        r.multinomial(3, [1.5, -0.5])
    with pytest.raises(ValueError, match=r"sum\(pvals\[:-1\]\) > 1.0"):
        r.multinomial(3, [0.7, 0.7, 0.0])


def test_multivariate_normal(dev):
    r = pm.random.default_rng(4)
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    for method in ("svd", "eigh", "cholesky"):
        x = r.multivariate_normal(mean, cov, size=N, method=method)
        assert x.shape == (N, 3) and x.dtype == np.float32
        v = x.numpy().astype(np.float64)
        assert np.all(np.abs(v.mean(axis=0) - mean) < 6 * np.sqrt(np.diag(cov) / N))
        np.testing.assert_allclose(np.cov(v.T), cov, atol=0.03)
    assert r.multivariate_normal([0.0, 0.0], np.eye(2)).shape == (2,)
    assert r.multivariate_normal([0.0, 0.0], np.eye(2), size=(4, 5)).shape == (4, 5, 2)
    bad = [[1.0, 2.0], [2.0, 1.0]]
    with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
        r.multivariate_normal([0.0, 0.0], bad)
    with pytest.raises(ValueError, match="positive-semidefinite"):
        r.multivariate_normal([0.0, 0.0], bad, check_valid="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r.multivariate_normal([0.0, 0.0], bad, check_valid="ignore")
    with pytest.raises(ValueError, match="check_valid"):
        r.multivariate_normal([0.0, 0.0], np.eye(2), check_valid="nope")
    with pytest.raises(ValueError, match="same length"):
        r.multivariate_normal([0.0], np.eye(2))
    with pytest.raises(ValueError, match="square"):
        r.multivariate_normal([0.0, 0.0], np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError):
        r.multivariate_normal([0.0, 0.0], bad, method="cholesky")


def test_multivariate_hypergeometric(dev):
    r = pm.random.default_rng(1)
    x = r.multivariate_hypergeometric([3, 4, 5], 6, size=1000)
    assert x.shape == (1000, 3) and x.dtype == np.int64
    v = x.numpy()
    assert np.all(v.sum(axis=1) == 6) and np.all(v <= [3, 4, 5])


def test_permuted_and_bytes(dev):
    r = pm.random.default_rng(2)
    a = pm.arange(60).reshape(3, 20)
    p = r.permuted(a, axis=1)
    v = p.numpy()
    assert np.all(np.sort(v, axis=1) == a.numpy())  # each row keeps its values
    assert not np.array_equal(v[0] - v[0, 0], v[1] - v[1, 0])  # rows shuffled independently
    q = r.permuted(a).numpy()
    assert sorted(q.ravel().tolist()) == list(range(60)) and q.shape == (3, 20)
    assert not np.all(np.sort(q, axis=1) == a.numpy())  # mixed across rows
    c = r.permuted(a, axis=0).numpy()
    assert np.all(np.sort(c, axis=0) == a.numpy())
    out = pm.zeros((3, 20), dtype=pm.int64)
    assert r.permuted(a, axis=1, out=out) is out and sorted(out.numpy()[2].tolist()) == list(range(40, 60))
    assert r.permuted(pm.arange(0), axis=0).shape == (0,) and r.permuted([5]).numpy().tolist() == [5]
    with pytest.raises(ValueError, match="out"):
        r.permuted(a, out=pm.zeros(3))
    f = r.permuted(np.arange(24.0).reshape(2, 3, 4), axis=1).numpy()  # a NumPy float64 input, a middle axis
    assert f.shape == (2, 3, 4) and np.all(np.sort(f, axis=1) == np.arange(24.0).reshape(2, 3, 4))
    assert r.permuted(pm.zeros((3, 0)), axis=1).shape == (3, 0)
    b = r.bytes(1000)
    assert isinstance(b, bytes) and len(b) == 1000 and len(set(b)) > 200 and r.bytes(0) == b""
    with pytest.raises(ValueError, match="negative"):  # (NumPy 2.4 returns 3 bytes for -1)
        r.bytes(-1)


def test_size_and_broadcasting(dev):
    r, g = pm.random.default_rng(0), np.random.default_rng(0)
    cases = [
        ("lognormal", ()), ("laplace", ()), ("logistic", ()), ("gumbel", ()), ("rayleigh", ()),
        ("weibull", (2.0,)), ("pareto", (2.0,)), ("power", (2.0,)), ("triangular", (0.0, 1.0, 2.0)),
        ("standard_cauchy", ()), ("chisquare", (2.0,)), ("standard_t", (3.0,)), ("f", (2.0, 3.0)),
        ("noncentral_chisquare", (2.0, 1.0)), ("noncentral_f", (2.0, 3.0, 1.0)), ("wald", (1.0, 2.0)),
        ("vonmises", (0.0, 1.0)), ("geometric", (0.5,)), ("negative_binomial", (2, 0.5)),
        ("logseries", (0.5,)), ("zipf", (2.0,)), ("hypergeometric", (5, 5, 3)),
    ]
    for name, args in cases:
        for size in (None, 0, 1, 7, (2, 3), (0, 4)):
            x, y = getattr(r, name)(*args, size=size), getattr(g, name)(*args, size=size)
            assert x.shape == np.shape(y), (name, size)
            assert x.dtype == (np.int64 if np.asarray(y).dtype.kind == "i" else np.float32), name
    # array parameters broadcast against each other, and to size
    x = r.laplace(np.array([0.0, 100.0, -100.0])[:, None], np.array([1.0, 2.0]), size=None)
    assert x.shape == (3, 2) and np.all(np.abs(x.numpy().mean(axis=1) - [0, 100, -100]) < 50)
    t = r.triangular(np.zeros(4), np.array([0.0, 0.5, 1.0, 1.0]), np.ones(4), size=(5, 4)).numpy()
    assert t.shape == (5, 4) and t.min() >= 0 and t.max() <= 1
    m = r.geometric(np.array([1.0, 1.0, 0.5]), size=(1000, 3)).numpy()
    assert np.all(m[:, :2] == 1) and m[:, 2].min() >= 1 and m[:, 2].max() > 1
    w = r.weibull(np.array([0.0, 1.0]), size=(10, 2)).numpy()
    assert np.all(w[:, 0] == 0) and np.all(w[:, 1] > 0)
    nb = r.negative_binomial(pm.asarray([1.0, 50.0]), 0.5, size=(N // 10, 2)).numpy().mean(axis=0)
    assert abs(nb[0] - 1) < 0.1 and abs(nb[1] - 50) < 1.0
    nc = r.noncentral_chisquare(np.array([2.0, 4.0]), np.array([0.0, 3.0]), size=(N // 10, 2)).numpy()
    assert np.all(np.abs(nc.mean(axis=0) - [2.0, 7.0]) < 0.15)
    with pytest.raises(ValueError, match="broadcast"):
        r.gumbel(np.zeros(3), 1.0, size=(2,))


@pytest.mark.parametrize("call, message", [
    (lambda r: r.lognormal(0.0, -1.0), "sigma < 0"),
    (lambda r: r.laplace(0.0, -1.0), "scale < 0"),
    (lambda r: r.logistic(0.0, [1.0, -1.0]), "scale < 0"),
    (lambda r: r.gumbel(0.0, -1.0), "scale < 0"),
    (lambda r: r.rayleigh(-1.0), "scale < 0"),
    (lambda r: r.weibull(-1.0), "a < 0"),
    (lambda r: r.pareto(0.0), "a <= 0"),
    (lambda r: r.power(-2.0), "a <= 0"),
    (lambda r: r.triangular(1.0, 0.0, 2.0), "left > mode"),
    (lambda r: r.triangular(0.0, 3.0, 2.0), "mode > right"),
    (lambda r: r.triangular(1.0, 1.0, 1.0), "left == right"),
    (lambda r: r.chisquare(0.0), "df <= 0"),
    (lambda r: r.standard_t(-1.0), "df <= 0"),
    (lambda r: r.f(0.0, 1.0), "dfnum <= 0"),
    (lambda r: r.f(1.0, 0.0), "dfden <= 0"),
    (lambda r: r.noncentral_chisquare(1.0, -1.0), "nonc < 0"),
    (lambda r: r.noncentral_f(1.0, 1.0, -1.0), "nonc < 0"),
    (lambda r: r.wald(0.0, 1.0), "mean <= 0"),
    (lambda r: r.wald(1.0, 0.0), "scale <= 0"),
    (lambda r: r.vonmises(0.0, -1.0), "kappa < 0"),
    (lambda r: r.geometric(0.0), "p <= 0, p > 1"),
    (lambda r: r.geometric([0.5, 1.5]), "p <= 0, p > 1"),
    (lambda r: r.negative_binomial(0, 0.5), "n <= 0"),
    (lambda r: r.negative_binomial(1, 0.0), "p <= 0, p > 1"),
    (lambda r: r.logseries(1.0), "p < 0, p >= 1"),
    (lambda r: r.zipf(1.0), "a <= 1"),
    (lambda r: r.hypergeometric(1, 1, 3), "ngood \\+ nbad < nsample"),
    (lambda r: r.hypergeometric(-1, 1, 0), "ngood < 0"),
])
def test_errors_match_numpy(dev, call, message):
    with pytest.raises(ValueError, match=message):
        call(np.random.default_rng(0))  # the message is NumPy's ...
    with pytest.raises(ValueError, match=message):
        call(pm.random.default_rng(0))  # ... and pymetal's


def test_reproducible(dev):
    a = pm.random.default_rng(42)
    b = pm.random.default_rng(42)
    for name, args in (("lognormal", ()), ("zipf", (2.0,)), ("multinomial", (5, [0.5, 0.5])),
                       ("logseries", (0.5,)), ("wald", (1.0, 1.0))):
        np.testing.assert_array_equal(getattr(a, name)(*args, size=50).numpy(),
                                      getattr(b, name)(*args, size=50).numpy())


def test_module_functions_and_random_state(dev):
    pm.random.seed(3)
    a = pm.random.lognormal(0.0, 1.0, 10).numpy()
    pm.random.seed(3)
    np.testing.assert_array_equal(pm.random.lognormal(0.0, 1.0, 10).numpy(), a)
    for name in ("chisquare", "standard_t", "pareto", "power", "weibull", "zipf", "geometric", "logseries",
                 "rayleigh", "standard_gamma"):
        arg = {"zipf": 2.0, "geometric": 0.5, "logseries": 0.5, "power": 2.0}.get(name, 3.0)
        assert getattr(pm.random, name)(arg, size=4).shape == (4,), name
    for name in ("gumbel", "laplace", "logistic", "lognormal", "standard_cauchy", "standard_exponential",
                 "random_sample", "ranf", "sample"):
        assert getattr(pm.random, name)(size=3).shape == (3,), name
    assert pm.random.multivariate_normal([0.0, 1.0], np.eye(2), 5).shape == (5, 2)
    assert pm.random.dirichlet([1.0, 1.0], 3).shape == (3, 2)
    assert pm.random.multinomial(4, [0.5, 0.5], 3).shape == (3, 2)
    assert len(pm.random.bytes(7)) == 7
    with pytest.warns(DeprecationWarning):
        ri = pm.random.random_integers(1, 3, size=3000).numpy()
    assert ri.min() == 1 and ri.max() == 3
    with pytest.warns(DeprecationWarning):
        assert set(pm.random.random_integers(2, size=1000).numpy().tolist()) == {1, 2}
    with pytest.raises(NotImplementedError, match="seed"):
        pm.random.get_state()
    with pytest.raises(NotImplementedError):
        pm.random.set_state(("MT19937", np.zeros(624, np.uint32), 0, 0, 0.0))

    rs = pm.random.RandomState(5)
    x = rs.rand(2, 3).numpy()
    rs.seed(5)
    np.testing.assert_array_equal(rs.rand(2, 3).numpy(), x)
    assert rs.randn(4).shape == (4,) and rs.randint(0, 5, 10).numpy().max() < 5
    assert rs.random_sample(3).shape == (3,) and rs.random(2).shape == (2,)
    assert rs.uniform(1.0, 2.0, 5).shape == (5,) and rs.normal(0.0, 1.0, (2, 2)).shape == (2, 2)
    assert rs.choice(5, 3, replace=False).shape == (3,) and sorted(rs.permutation(4).numpy().tolist()) == [0, 1, 2, 3]
    s = pm.arange(6)
    rs.shuffle(s)
    assert sorted(s.numpy().tolist()) == list(range(6))
    assert rs.lognormal(0.0, 1.0, 3).shape == (3,) and rs.standard_t(3.0, 3).shape == (3,)
    assert rs.multivariate_normal([0.0], [[1.0]], 2).shape == (2, 1) and rs.standard_gamma(2.0, 3).shape == (3,)
    assert rs.binomial(3, 0.5, 2).shape == (2,)
    with pytest.warns(DeprecationWarning):
        assert rs.random_integers(1, 2, 10).numpy().min() >= 1
    with pytest.raises(AttributeError):
        rs.not_a_method
    with pytest.raises(NotImplementedError):
        rs.get_state()
    # NumPy's seeding classes: a SeedSequence or a bit generator seeds a pymetal Generator
    assert pm.random.SeedSequence is np.random.SeedSequence
    g1 = pm.random.default_rng(pm.random.PCG64(8)).random(4).numpy()
    g2 = pm.random.default_rng(pm.random.SeedSequence(8)).random(4).numpy()
    np.testing.assert_array_equal(g1, g2)


def test_numpy_programs_with_pymetal_as_np(dev):
    code = """
import pymetal as np
np.random.seed(0)
x = np.random.lognormal(mean=1.0, sigma=0.25, size=(1000, 10))
t = np.random.standard_t(10, size=20000)
c = np.random.chisquare(4, 20000)
mv = np.random.multivariate_normal([0, 0], [[1, 0.9], [0.9, 1]], size=5000)
counts = np.random.multinomial(100, [0.25] * 4, size=500)
rng = np.random.default_rng(1)
g = rng.gumbel(0, 1, 10000); w = rng.weibull(2.0, 10000); k = rng.geometric(0.25, 10000)
print(x.shape, round(float(np.median(x)), 1), abs(round(float(t.mean()), 1)), round(float(c.mean())),
      round(float(np.corrcoef(mv[:, 0], mv[:, 1])[0, 1]), 1), int(counts.sum(axis=1).min()),
      round(float(g.mean()), 1), round(float(w.mean()), 1), round(float(k.mean())))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    # median of lognormal e**1, t mean 0, chisquare mean 4, correlation 0.9, 100 per draw,
    # Gumbel mean 0.577, Weibull(2) mean 0.886, geometric mean 4
    assert out.stdout.split() == ["(1000,", "10)", "2.7", "0.0", "4", "0.9", "100", "0.6", "0.9", "4"], out.stdout


def test_open_uniform_excludes_both_ends(dev, monkeypatch):
    # random()'s extremes, 0 and 1 - 2**-24: the inverse CDFs must see neither 0 nor 1
    # (1 - 2**-24 + 2**-25 rounds to 1.0 in float32: log(1 - u) = -inf).
    r = pm.random.default_rng(0)
    draws = iter([[0.0, 1 - 2.0 ** -24, 0.5], [0.25, 0.75, 0.75]])
    monkeypatch.setattr(r, "random", lambda shape: pm.asarray(np.array(next(draws), np.float32)))
    u = r._open01((3,)).numpy()
    assert u.tolist() == [0.25, np.float32(1 - 2.0 ** -24), 0.5]
    for name, args in (("logistic", ()), ("gumbel", ()), ("geometric", (0.5,)), ("laplace", ())):
        draws = iter([[0.0, 1 - 2.0 ** -24, 0.5], [0.25, 0.75, 0.75]] * 2)
        x = getattr(r, name)(*args, size=3).numpy()
        assert np.all(np.isfinite(x)) and (name != "geometric" or x.min() >= 1), (name, x)


def test_integers_with_array_bounds(dev):
    r = pm.random.default_rng(6)
    x = r.integers(0, [5, 10, 1000], size=(N // 3, 3))
    assert x.dtype == np.int64 and x.shape == (N // 3, 3)
    v = x.numpy()
    assert v.min() == 0 and v[:, 0].max() == 4 and v[:, 1].max() == 9 and v[:, 2].max() <= 999
    assert _chi_square(v[:, 1], lambda k: np.where((k >= 0) & (k < 10), 0.1, 0.0), 0, 9) > P_MIN
    y = r.integers(np.array([[-3], [7]]), 8, endpoint=True).numpy()  # bounds broadcast, size None
    assert y.shape == (2, 1) and -3 <= y[0, 0] <= 8 and 7 <= y[1, 0] <= 8
    assert r.integers([2, 3], dtype=np.uint8).dtype == np.uint8
    assert r.integers(pm.asarray([4, 4]), size=(0, 2)).shape == (0, 2)
    assert r.integers([1, 1], 2).numpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match="low >= high"):
        r.integers([0, 5], [1, 5])
    with pytest.raises(ValueError, match="high is out of bounds"):
        r.integers(0, [10, 300], dtype=np.uint8)
    with pytest.raises(ValueError, match="broadcast"):
        r.integers(0, [2, 3], size=(3,))
    with pytest.raises(TypeError, match="integer"):
        r.integers(0, [2.5, 3.0])


def test_float64_error_policy(dev, float64_error):
    # float32 results and host parameters (NumPy float64 lists): nothing reaches the float64 path
    r = pm.random.default_rng(0)
    assert r.vonmises(0.0, 1.0, 3).dtype == np.float32 and r.zipf(2.0, 3).dtype == np.int64
    assert r.multivariate_normal([0.0, 0.0], np.eye(2), 2).dtype == np.float32
    assert r.dirichlet([1.0, 2.0]).dtype == np.float32 and r.laplace([0.0, 1.0]).dtype == np.float32
    assert r.multinomial(5, [0.5, 0.5]).dtype == np.int64 and r.integers(0, [3, 4]).dtype == np.int64


def test_shuffle_list_and_choice_of_strings(dev):
    r = pm.random.default_rng(8)
    items = list(range(20))
    r.shuffle(items)
    assert sorted(items) == list(range(20)) and items != list(range(20))
    pm.random.shuffle(items)
    assert sorted(items) == list(range(20))
    words = ["a", "b", "c"]
    picks = r.choice(words, size=3000)
    assert isinstance(picks, np.ndarray) and picks.shape == (3000,) and set(picks.tolist()) == set(words)
    one = pm.random.choice(words)
    assert one in words and np.ndim(one) == 0
    assert sorted(r.choice(words, 3, replace=False).tolist()) == words
    assert r.choice(words, 100, p=[0.0, 1.0, 0.0]).tolist() == ["b"] * 100
    assert r.choice(np.array([["x", "y"], ["z", "w"]]), 2, axis=1).shape == (2, 2)
    with pytest.raises(TypeError, match="list"):
        r.shuffle((1, 2, 3))
    with pytest.raises(AttributeError, match="'RandomState' object has no attribute 'nope'"):
        pm.random.RandomState(0).nope
