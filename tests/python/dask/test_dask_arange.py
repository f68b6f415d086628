"""arange's inferred dtype: pm.arange and the "pymetal" Dask backend's da.arange (bugs found by
Dask's test_creation.py::test_arange_dtype_infer on pymetal)."""

import itertools

import numpy as np
import pytest

import pymetal as pm

TYPES = [np.uint8, np.uint64, np.int8, np.int64, np.float32, np.float64, int, float]


@pytest.mark.parametrize("step", [np.float32(2.5), np.float16(0.5), 2.5, np.float64(1.5)])
@pytest.mark.parametrize("start", [np.int64(3), 3, np.uint8(3)])
def test_arange_with_a_numpy_float_argument_makes_floats(start, step):
    # np.float32 is no Python float: a float32 step made an int64 range of truncated values
    r = pm.arange(start, 13, step)
    want = np.arange(start, 13, step)
    assert r.dtype.kind == "f" and r.shape == want.shape
    np.testing.assert_allclose(r.numpy(), want, rtol=1e-6)
    assert pm.arange(np.float32(4)).dtype == np.float32
    assert pm.arange(0, np.float32(1), 0.25).shape == (4,)


da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import pymetal.dask  # noqa: E402,F401


def test_backend_arange_infers_dask_dtypes():
    # Dask's inference (np.arange of the arguments' types), float64 made float32 unless an
    # argument is a NumPy float64: it took np.result_type (uint8 ranges stayed uint8, NumPy's int64).
    with dask.config.set({"array.backend": "pymetal"}):
        for a, b, c in itertools.product(TYPES, repeat=3):
            d = da.arange(a(3), b(13), c(2), chunks=3)
            want = np.arange(a(3), b(13), c(2))
            r = d.compute()
            assert type(r) is pm.Array and r.dtype == d.dtype
            if want.dtype != np.float64 or np.float64 in (a, b, c):
                assert d.dtype == want.dtype, (a, b, c)
            else:
                assert d.dtype == np.float32, (a, b, c)
            np.testing.assert_array_equal(r.numpy(), want.astype(r.dtype))
        for args, kw in (((5,), {}), ((2,), {"stop": 9}), ((2, 9), {"step": 0.5}), ((0.0, 1.0, 0.25), {})):
            d = da.arange(*args, chunks=2, **kw)
            want = np.arange(*args, **kw)
            np.testing.assert_allclose(d.compute().numpy(), want)
            assert d.dtype == (np.float32 if want.dtype == np.float64 else want.dtype)
        with pytest.raises(TypeError, match="requires stop"):
            da.arange()
        assert da.arange(0, chunks=2).compute().shape == (0,)
