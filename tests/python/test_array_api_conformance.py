"""Regressions found by running the data-apis array-api-tests suite against pymetal
(scripts/array_api_tests.sh; CI here cannot fetch the suite). Each test checks the
standard's (2024.12) rule against NumPy on random data."""

import numpy as np
import pytest

import pymetal as pm
from arraytest import ALL, INTS, assert_same, dtype_id, random

SHAPES = [(), (1,), (5,), (3, 4), (2, 0, 3)]


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("rdtype", INTS, ids=dtype_id)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_repeat_array_counts(shape, rdtype, axis):
    # repeats of shape (1,) broadcast to the axis length (the standard); any integer
    # dtype, uint64 included
    rng = np.random.default_rng(0)
    x = random(rng, shape, np.float32)
    n = x.size if axis is None else shape[axis]
    for counts in (np.array([3], dtype=rdtype), random(rng, (n,), rdtype, 0, 4)):
        got = pm.repeat(pm.asarray(x), pm.asarray(counts), axis=axis)
        assert_same(got, np.repeat(x, np.broadcast_to(counts, (n,)).astype(np.int64), axis=axis))


def test_repeat_bad_counts():
    x = pm.asarray(np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError):
        pm.repeat(x, pm.asarray(np.array([1, 2], dtype=np.int32)))  # neither (1,) nor (4,)
    with pytest.raises(ValueError):
        pm.repeat(x, pm.asarray(np.array([1, -1, 1, 1], dtype=np.int32)))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL, ids=dtype_id)
@pytest.mark.parametrize("mask", [True, False])
def test_zero_dim_boolean_mask(shape, dtype, mask):
    # x[0-d mask] has shape (1,) + x.shape if the mask is True, (0,) + x.shape if False
    rng = np.random.default_rng(1)
    x = np.asarray(random(rng, shape, dtype))
    got = pm.asarray(x)[pm.asarray(mask)]
    assert_same(got, x[np.asarray(mask)])
    y = pm.asarray(x)
    y[pm.asarray(mask)] = 1
    want = x.copy()
    want[np.asarray(mask)] = 1
    assert_same(y, want)


# complex64 inverse functions far from the origin: asinh/acosh/acos/asin squared |z| and
# log1p summed |1+z|^2, which overflow float past ~1e19 (NumPy's results are finite)
BIG_COMPLEX = np.array([1 + 1.3043818701608976e19j, -3e19 + 2e19j, 2e38 + 1e38j, -1e20 - 1e-3j,
                        1e10 - 1e10j, 0.5 + 0.25j, -1e-8 + 1e-8j, 3.0 - 0.0j], dtype=np.complex64)


@pytest.mark.parametrize("name, npname", [("acos", "arccos"), ("asin", "arcsin"), ("asinh", "arcsinh"),
                                          ("acosh", "arccosh"), ("log1p", "log1p")])
def test_complex_inverse_functions_large_values(name, npname):
    got = getattr(pm, name)(pm.asarray(BIG_COMPLEX))
    assert_same(got, getattr(np, npname)(BIG_COMPLEX), rtol=2e-6, atol=1e-6)
