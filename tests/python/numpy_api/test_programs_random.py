"""pm.random's further distributions (pymetal/random_distributions.py), RandomState and the legacy
module functions: each distribution's mean and variance against NumPy's sampler of the same
parameters (large samples, fixed seeds), shapes, dtypes, parameter broadcasting and errors."""

import math

import numpy as np
import pytest

import pymetal as pm

N = 200_000
# (name, args): each checked against NumPy's Generator method of the same name.
CASES = [
    ("lognormal", (0.5, 0.4)), ("laplace", (1.0, 2.0)), ("logistic", (-1.0, 0.5)), ("gumbel", (2.0, 1.5)),
    ("rayleigh", (2.0,)), ("weibull", (1.5,)), ("weibull", (0.7,)), ("pareto", (3.5,)), ("power", (2.5,)),
    ("chisquare", (3.0,)), ("chisquare", (0.5,)), ("standard_t", (6.0,)), ("f", (5.0, 12.0)),
    ("triangular", (-1.0, 0.5, 2.0)), ("triangular", (0.0, 0.0, 1.0)), ("geometric", (0.3,)),
    ("geometric", (1.0,)), ("negative_binomial", (4, 0.4)), ("negative_binomial", (2.5, 0.9)),
    ("wald", (1.5, 2.0)), ("standard_exponential", ()), ("standard_gamma", (2.0,)),
]


def _stats(x):
    x = np.asarray(x, np.float64)
    return x.mean(), x.var()


@pytest.mark.parametrize("name, args", CASES, ids=lambda c: str(c))
def test_distribution_matches_numpys(name, args):
    got = getattr(pm.random.default_rng(3), name)(*args, size=N)
    want = getattr(np.random.default_rng(3), name)(*args, size=N)
    assert got.shape == (N,)
    assert got.dtype.kind == np.asarray(want).dtype.kind  # int64 counts, float values
    (gm, gv), (wm, wv) = _stats(got.numpy()), _stats(want)
    se = math.sqrt(wv / N)  # the mean's standard error
    assert abs(gm - wm) < 6 * se + 1e-3, (gm, wm)
    assert abs(gv - wv) < 0.05 * wv + 1e-3, (gv, wv)


def test_heavy_tails_by_quantiles():
    # Cauchy has no mean: compare quartiles (-1, 0, 1).
    x = pm.random.default_rng(0).standard_cauchy(N).numpy()
    np.testing.assert_allclose(np.percentile(x, [25, 50, 75]), [-1, 0, 1], atol=0.03)


def test_parameters_broadcast():
    rng = pm.random.default_rng(1)
    x = rng.lognormal(pm.asarray([0.0, 1.0, 2.0]), 0.1, size=(1000, 3))
    assert x.shape == (1000, 3)
    np.testing.assert_allclose(np.log(x.numpy()).mean(axis=0), [0, 1, 2], atol=0.02)
    y = rng.laplace([0.0, 10.0], [1.0, 2.0])
    assert y.shape == (2,)
    z = rng.geometric(pm.asarray([0.2, 0.9]), size=(50000, 2)).numpy()
    np.testing.assert_allclose(z.mean(axis=0), [5.0, 1 / 0.9], rtol=0.03)
    assert z.min() >= 1 and z.dtype == np.int64
    w = rng.triangular(0.0, pm.asarray([0.0, 1.0]), 1.0, size=(2, 2))
    assert w.shape == (2, 2) and float(w.min()) >= 0 and float(w.max()) <= 1


def test_multinomial():
    rng = pm.random.default_rng(2)
    x = rng.multinomial(20, [0.2, 0.3, 0.5], size=50000)
    assert x.shape == (50000, 3) and x.dtype == pm.int64
    assert (x.sum(axis=1) == 20).all()
    np.testing.assert_allclose(x.numpy().mean(axis=0), [4, 6, 10], rtol=0.02)
    np.testing.assert_allclose(x.numpy().var(axis=0), [20 * 0.2 * 0.8, 20 * 0.3 * 0.7, 20 * 0.5 * 0.5], rtol=0.05)
    assert rng.multinomial(5, [1.0]).tolist() == [5]
    assert rng.multinomial(0, [0.5, 0.5], size=3).tolist() == [[0, 0]] * 3
    with pytest.raises(ValueError, match="sum"):
        rng.multinomial(3, [0.8, 0.8, 0.1])
    with pytest.raises(ValueError, match="pvals"):
        rng.multinomial(3, [-0.1, 1.1])


@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal(method):
    mean = [1.0, -2.0, 0.5]
    cov = [[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]]
    x = pm.random.default_rng(4).multivariate_normal(mean, cov, size=100000, method=method)
    assert x.shape == (100000, 3) and x.dtype == pm.float32
    np.testing.assert_allclose(x.numpy().mean(axis=0), mean, atol=0.02)
    np.testing.assert_allclose(np.cov(x.numpy().T), cov, atol=0.03)
    assert pm.random.default_rng(0).multivariate_normal(mean, cov).shape == (3,)
    with pytest.raises(ValueError, match="square"):
        pm.random.default_rng(0).multivariate_normal([0.0, 0.0], [[1.0, 0.0]])


def test_multivariate_normal_checks_the_covariance():
    bad = [[1.0, 2.0], [2.0, 1.0]]  # not positive semi-definite
    with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
        pm.random.default_rng(0).multivariate_normal([0.0, 0.0], bad, size=3)
    with pytest.raises(ValueError, match="positive-semidefinite"):
        pm.random.default_rng(0).multivariate_normal([0.0, 0.0], bad, check_valid="raise")


def test_dirichlet():
    x = pm.random.default_rng(5).dirichlet([1.0, 2.0, 7.0], size=50000)
    assert x.shape == (50000, 3)
    np.testing.assert_allclose(x.numpy().sum(axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(x.numpy().mean(axis=0), [0.1, 0.2, 0.7], atol=0.005)
    with pytest.raises(ValueError, match="alpha"):
        pm.random.default_rng(5).dirichlet([1.0, -1.0])
    assert pm.random.default_rng(5).dirichlet([1.0, 0.0]).tolist() == [1.0, 0.0]  # NumPy allows zeros


@pytest.mark.parametrize("call, match", [
    (lambda r: r.laplace(0.0, -1.0), "scale"), (lambda r: r.weibull(-1.0), "a < 0"),
    (lambda r: r.pareto(0.0), "a <= 0"), (lambda r: r.chisquare(0.0), "df"), (lambda r: r.standard_t(-2.0), "df"),
    (lambda r: r.triangular(1.0, 0.0, 2.0), "left > mode"), (lambda r: r.triangular(1.0, 1.0, 1.0), "left == right"),
    (lambda r: r.geometric(0.0), "p <= 0"), (lambda r: r.geometric(pm.asarray([0.5, 1.5])), "p > 1"),
    (lambda r: r.negative_binomial(0, 0.5), "n <= 0"), (lambda r: r.wald(-1.0, 1.0), "mean"),
    (lambda r: r.gumbel(0.0, pm.asarray([1.0, -1.0])), "scale")])
def test_bad_parameters_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call(pm.random.default_rng(0))


def test_module_functions_and_random_state():
    pm.random.seed(11)
    a = pm.random.lognormal(0.0, 1.0, 5)
    rs = pm.random.RandomState(11)
    b = rs.lognormal(0.0, 1.0, 5)
    assert a.tolist() == b.tolist()  # RandomState(s) draws what seed(s) then the module's functions draw
    rs.seed(3)
    first = rs.rand(2, 3)
    rs.seed(3)
    assert (rs.random_sample((2, 3)) == first).all() and first.shape == (2, 3)
    assert rs.randn(4).shape == (4,) and rs.random(2).shape == (2,)
    r = rs.randint(2, 5, size=1000)
    assert int(r.min()) >= 2 and int(r.max()) <= 4 and r.dtype == pm.int64
    assert sorted(rs.permutation(6).tolist()) == list(range(6))
    assert len(set(rs.choice(10, 10, replace=False).tolist())) == 10
    x = pm.arange(8)
    rs.shuffle(x)
    assert sorted(x.tolist()) == list(range(8))
    assert rs.poisson(3.0, 4).dtype == pm.int64 and rs.normal(0, 1, (2, 2)).shape == (2, 2)
    for f in (pm.random.ranf, pm.random.sample):
        assert f(3).shape == (3,)
    for name in ("laplace", "chisquare", "multinomial", "multivariate_normal", "standard_exponential", "dirichlet"):
        assert callable(getattr(pm.random, name))


@pytest.mark.parametrize("name", ["zipf", "hypergeometric", "vonmises", "logseries", "noncentral_f"])
def test_formerly_missing_samplers_exist(name):
    # (tests/python/arrays/test_random_distributions.py checks their distributions)
    assert callable(getattr(pm.random, name)) and callable(getattr(pm.random.RandomState(0), name))
    with pytest.raises(NotImplementedError, match="Philox"):
        pm.random.get_state()


def test_generator_of_a_bit_generator_and_seed_sequences():
    want = pm.random.default_rng(42).random(3).tolist()
    assert pm.random.Generator(pm.random.PCG64(42)).random(3).tolist() == want  # the seeds, drawn through Philox
    assert pm.random.default_rng(pm.random.SeedSequence(42)).random(3).tolist() == want
    assert pm.random.default_rng(np.random.MT19937(42)).random(3).tolist() == want
    assert pm.random.Generator(pm.random.Philox(7)).random(3).tolist() != want
    with pytest.raises(TypeError, match="default_rng"):
        pm.random.Generator(42)
