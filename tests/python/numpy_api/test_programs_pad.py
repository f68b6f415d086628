"""np.pad's statistic and ramp modes (pymetal/arrays/numpy_api/pad_modes.py), NumPy as the oracle."""

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, data

WIDTHS = [1, (2, 1), ((1, 2), (0, 3))]


@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("shape", [(1,), (5,), (3, 4)], ids=str)
def test_statistic_modes(mode, dtype, shape):
    x = data(shape, dtype, lo=0, hi=50)
    for w in WIDTHS:
        if np.ndim(w) == 2 and len(shape) != 2:
            continue
        check(lambda xp, a: xp.pad(a, w, mode=mode), x, rtol=1e-5, atol=1e-5)
        for sl in (1, 2, (1, 3)):
            check(lambda xp, a: xp.pad(a, w, mode=mode, stat_length=sl), x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("shape", [(1,), (4,), (2, 3)], ids=str)
def test_linear_ramp(dtype, shape):
    x = data(shape, dtype, lo=0, hi=40)
    for w in (1, (3, 2), 4):
        check(lambda xp, a: xp.pad(a, w, mode="linear_ramp"), x, rtol=1e-5, atol=1e-5)
        for ev in (7, (100, 3), ((5, 9),) * len(shape)):
            check(lambda xp, a: xp.pad(a, w, mode="linear_ramp", end_values=ev), x, rtol=1e-5, atol=1e-5)


def test_empty_mode_and_errors():
    x = pm.arange(6).reshape(2, 3)
    got = pm.pad(x, ((1, 0), (2, 1)), mode="empty")
    assert got.shape == (3, 6) and got[1:, 2:5].tolist() == x.tolist()  # the values are undefined elsewhere
    with pytest.raises(ValueError, match="stat_length of 0"):
        pm.pad(pm.asarray([1, 2]), 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="stat_length of 0"):
        pm.pad(pm.asarray([1.0, 2.0]), 1, mode="mean", stat_length=0)  # NumPy gives NaN (garbage for ints)
    with pytest.raises(ValueError, match="empty axis"):
        pm.pad(pm.zeros((0, 2)), 1, mode="maximum")
    with pytest.raises(TypeError, match="end_values"):
        pm.pad(pm.asarray([1, 2]), 1, mode="maximum", end_values=3)
    with pytest.raises(NotImplementedError, match="numpy.pad"):
        pm.pad(pm.asarray([1, 2]), 1, mode=lambda v, w, i, k: None)
    with pytest.raises(ValueError, match="mode must be one of"):
        pm.pad(pm.asarray([1, 2]), 1, mode="bogus")
