"""Property tests of the Array API namespace with Hypothesis's own Array API
strategies (hypothesis.extra.array_api, built from pymetal's namespace): type
promotion and broadcasting of the binary elementwise functions over every pair
of the device's dtypes, values against NumPy. A fixed seed and a small number of
examples keep it to seconds; the exhaustive conformance run is the data-apis
suite (make array-api-tests-full)."""

import numpy as np
import pytest

import pymetal as pm

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.array_api import make_strategies_namespace  # noqa: E402

xps = make_strategies_namespace(pm, api_version="2024.12")
DTYPES = list(pm.__array_namespace_info__().dtypes().values())

# (function, dtype kinds it accepts): exact operations, so values compare exactly.
EXACT = {
    "add": "numeric", "subtract": "numeric", "multiply": "numeric", "maximum": "real",
    "minimum": "real", "equal": "any", "not_equal": "any", "less": "real", "greater_equal": "real",
    "logical_and": "bool", "logical_or": "bool", "bitwise_and": "integral or bool", "bitwise_xor": "integral or bool",
}
_KINDS = {"numeric": ("numeric",), "real": ("integral", "real floating"), "any": ("bool", "numeric"),
          "bool": ("bool",), "integral or bool": ("integral", "bool")}


def _promotable(pair):
    try:
        pm.result_type(*pair)
        return True
    except TypeError:
        return False


@st.composite
def operands(draw, kinds):
    ok = [d for d in DTYPES if pm.isdtype(d, kinds)]
    d1, d2 = draw(st.tuples(st.sampled_from(ok), st.sampled_from(ok)).filter(_promotable))
    s1, s2 = draw(xps.mutually_broadcastable_shapes(2, min_dims=0, max_side=4)).input_shapes
    # finite elements: the properties here are promotion, broadcasting and exact values
    x1 = draw(xps.arrays(d1, s1, elements={"allow_nan": False, "allow_infinity": False}))
    x2 = draw(xps.arrays(d2, s2, elements={"allow_nan": False, "allow_infinity": False}))
    return x1, x2


def _check(name, x1, x2):
    got = getattr(pm, name)(x1, x2)
    rt = pm.result_type(x1, x2)
    a, b = x1.numpy().astype(rt), x2.numpy().astype(rt)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    assert got.shape == np.broadcast_shapes(x1.shape, x2.shape)
    assert got.dtype == want.dtype, (name, x1.dtype, x2.dtype, got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_binary_promotion_broadcasting_values(dev, name):
    @seed(12)
    @settings(max_examples=25, deadline=None, database=None)
    @given(operands(_KINDS[EXACT[name]]))
    def run(xs):
        _check(name, *xs)

    run()


@seed(12)
@settings(max_examples=40, deadline=None, database=None)
@given(xps.arrays(st.sampled_from(DTYPES), xps.array_shapes(min_dims=0, max_side=5)), st.booleans())
def test_asarray_copy_semantics(dev, x, copy):
    before = x.numpy().copy()
    y = pm.asarray(x, copy=copy)
    np.testing.assert_array_equal(y.numpy(), before)
    assert (y is x) == (not copy)
    if copy:
        y[...] = 1  # writing the copy leaves x alone
        np.testing.assert_array_equal(x.numpy(), before)
    r = pm.reshape(x, (x.size,), copy=True)
    r[...] = 0
    np.testing.assert_array_equal(x.numpy(), before)
    assert pm.astype(x, x.dtype, copy=False) is x
    assert pm.astype(x, x.dtype) is not x
