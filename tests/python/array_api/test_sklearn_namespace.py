"""The main-namespace pieces scikit-learn relies on (array namespace protocol, unique_*,
the float64 name): checked against NumPy."""

import numpy as np

import pymetal as pm
from arraytest import assert_same


def test_namespace_protocol(dev):
    x = pm.ones(3)
    assert x.__array_namespace__() is pm
    assert x.__array_namespace__(api_version="2023.12") is pm
    assert pm.__array_api_version__ == "2024.12"
    info = pm.__array_namespace_info__()
    assert info.default_device() == x.device and x.device in info.devices()
    floats = info.dtypes(kind="real floating")
    assert "float32" in floats and "float64" not in floats
    assert info.default_dtypes()["real floating"] == pm.float32
    assert "int64" in info.dtypes(kind="integral") and "float32" not in info.dtypes(kind="integral")
    assert info.capabilities()["data-dependent shapes"] is True


def test_unique_inverse_counts(dev, rng):
    for a in [rng.integers(-3, 4, (7, 5)).astype(np.int32), rng.random(100).astype(np.float32).round(1),
              np.zeros(0, np.int64), np.array([5], np.int64)]:
        values, inverse = pm.unique_inverse(pm.asarray(a))
        wv, wi = np.unique(a.reshape(-1), return_inverse=True)
        assert_same(values, wv)
        assert_same(inverse, wi.reshape(a.shape).astype(np.int64))
        values, counts = pm.unique_counts(pm.asarray(a))
        wv, wc = np.unique(a, return_counts=True)
        assert_same(values, wv)
        assert_same(counts, wc.astype(np.int64))
