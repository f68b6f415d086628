"""The "pymetal" Dask backend's creation functions take NumPy's calling forms (bugs found by
Dask's test_reductions.py::test_general_reduction_names and test_creation.py on pymetal)."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import pymetal as pm  # noqa: E402
import pymetal.dask  # noqa: E402,F401


@pytest.mark.parametrize("name", ["ones", "zeros", "empty"])
@pytest.mark.parametrize("dtype", [int, np.int16, "f4", bool, np.uint8])
@pytest.mark.parametrize("shape", [0, 1, 7, (3, 5)])
def test_positional_dtype(name, dtype, shape):
    # np.ones(shape, dtype, order): Dask's da.ones(10, int) passes dtype positionally (it raised
    # "takes 1 positional argument but 2 were given")
    with dask.config.set({"array.backend": "pymetal"}):
        d = getattr(da, name)(shape, dtype, chunks=2)
        d2 = getattr(da, name)(shape, dtype, "C", chunks=2)
    want = getattr(np, name)(shape, dtype)
    for x in (d, d2):
        r = x.compute()
        assert isinstance(x._meta, pm.Array) and type(r) is pm.Array
        assert x.dtype == r.dtype == want.dtype and r.shape == want.shape
        if name != "empty":
            np.testing.assert_array_equal(r.numpy(), want)


def test_general_reduction_of_backend_ones():
    with dask.config.set({"array.backend": "pymetal"}):
        a = da.reduction(da.ones(10, int, chunks=2), np.sum, np.sum, dtype=int, name="foo")
    assert int(a.compute()) == 10


@pytest.mark.parametrize("fill, want", [(1.5, np.float32), (7, np.int64), (1 + 2j, np.complex64), (True, np.bool_)])
def test_full_without_dtype_uses_pymetal_defaults(fill, want):
    # da.full passes type(fill_value) when no dtype is given: a Python float made float64 chunks
    with dask.config.set({"array.backend": "pymetal"}):
        d = da.full((3, 4), fill, chunks=2)
        f = da.full(5, 2, dtype=float, chunks=2)
    r = d.compute()
    assert d.dtype == r.dtype == want
    np.testing.assert_array_equal(r.numpy(), np.full((3, 4), fill, want))
    assert f.dtype == f.compute().dtype == np.float32
