"""Automatic histogram bins (bins="auto", "fd", ...; pymetal/arrays/numpy_api/bin_estimators.py), NumPy as the oracle."""

import warnings

import numpy as np
import pytest

import pymetal as pm
from npcompare import check

ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


def _samples():
    rng = np.random.default_rng(0)
    return {"normal": rng.normal(size=1000).astype(np.float32), "ints": rng.integers(0, 20, 300),
            "skewed": rng.exponential(size=57).astype(np.float32), "constant": np.ones(10, np.float32),
            "empty": np.zeros(0, np.float32), "one": np.array([3.0], np.float32), "two": np.array([1, 5], np.int32),
            "tiny_ints": np.array([0, 1, 1, 2, 2, 2, 3], np.int64)}


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("sample", sorted(_samples()))
def test_estimators_match_numpy(estimator, sample):
    x = _samples()[sample]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # stone: "may be suboptimal", from both
        check(lambda xp, a: xp.histogram_bin_edges(a, estimator), x, rtol=1e-4, atol=1e-4)
        check(lambda xp, a: xp.histogram(a, bins=estimator), x, rtol=1e-4, atol=1e-4)
        check(lambda xp, a: xp.histogram(a, bins=estimator, range=(0.5, 2.5)), x, rtol=1e-4, atol=1e-4)


def test_estimator_errors():
    x = pm.arange(10.0)
    with pytest.raises(ValueError, match="not a valid estimator"):
        pm.histogram(x, bins="best")
    with pytest.raises(TypeError, match="weighted"):
        pm.histogram(x, bins="auto", weights=pm.ones(10))
    with pytest.raises(ValueError, match="not finite"):
        pm.histogram(pm.asarray([1.0, np.inf]), bins="auto")
    with pytest.raises(ValueError, match="max must be larger"):
        pm.histogram(x, bins="auto", range=(3, 1))


def test_bin_edges_of_counts_and_edges():
    x = np.linspace(0, 7, 30).astype(np.float32)
    check(lambda xp, a: xp.histogram_bin_edges(a, 4), x)
    check(lambda xp, a: xp.histogram_bin_edges(a, [0, 1, 5, 7]), x, check_dtype=False)
    check(lambda xp, a: xp.histogram_bin_edges(a, 3, range=(1, 4)), x)
