"""sort / argsort and the cumulative sums and products along any axis return
C-contiguous arrays, as NumPy's do (fuzz seed 9007): a permuted result made a
later reshape copy where NumPy's reshape is a view."""

import numpy as np
import pytest

import pymetal as pm

CASES = [((5, 7), 0), ((5, 7), -1), ((4, 3, 6), 0), ((4, 3, 6), 1), ((4, 3, 6), 2), ((0, 3), 0), ((3, 0, 2), 1),
         ((1, 1), 0), ((2, 1025), 0)]


@pytest.mark.parametrize("shape,axis", CASES, ids=str)
@pytest.mark.parametrize("fn", ["sort", "argsort"])
def test_layout_as_numpy(rng, shape, axis, fn):
    x_np = rng.standard_normal(shape).astype(np.float32)
    got = getattr(pm, fn)(pm.asarray(x_np), axis=axis)
    want = np.sort(x_np, axis=axis) if fn == "sort" else np.argsort(x_np, axis=axis, kind="stable")
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.flags.c_contiguous == want.flags.c_contiguous
    if want.size:  # NumPy gives an empty sort result all-zero strides: a quirk, not a layout
        assert got.strides == want.strides


@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5)], ids=str)
def test_reshape_of_axis0_sort_is_a_view(rng, shape):
    x_np = rng.integers(-9, 9, shape).astype(np.int32)
    s = pm.sort(pm.asarray(x_np), axis=0)
    flat = s.reshape(-1)
    flat[0] = 100  # a write through the reshaped result shows in the sort result
    want = np.sort(x_np, axis=0)
    want.reshape(-1)[0] = 100
    np.testing.assert_array_equal(s.numpy(), want)


@pytest.mark.parametrize("shape,axis", CASES, ids=str)
@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_layout_as_numpy(rng, shape, axis, fn):
    x_np = rng.integers(-3, 4, shape).astype(np.int32)
    got = getattr(pm, fn)(pm.asarray(x_np), axis=axis)
    want = (np.cumsum if fn == "cumulative_sum" else np.cumprod)(x_np, axis=axis, dtype=np.int64)
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.flags.c_contiguous
    if want.size:
        assert got.strides == want.strides
