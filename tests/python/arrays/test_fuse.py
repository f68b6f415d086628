"""pm.fuse: one kernel for a function of elementwise ops and trailing reductions.

Fused results are compared with the same function run unfused (the array library's
kernels): bit-equal where the op order is the same (elementwise ops; reductions over
rows the library reduces in one chunk, n <= 512); within stated bounds otherwise.
"""

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import fusion as _fusion

RNG = np.random.default_rng(7)


def _np(x):
    return x.numpy() if isinstance(x, pm.Array) else np.asarray(x)


def _data(shape, dt):
    dt = np.dtype(dt) if dt != "bfloat16" else pm.bfloat16
    if dt == np.bool_:
        return pm.asarray(RNG.random(shape) > 0.5)
    if np.dtype(dt).kind in "iu":
        return pm.asarray(RNG.integers(-50, 50, shape).astype(dt))
    return pm.asarray((RNG.standard_normal(shape) * 3).astype(dt))


def check(fn, *args, exact=True, rtol=0.0, atol=0.0, ulps=0):
    """fn fused vs unfused: same dtypes and shapes; bit-equal, or within rtol/atol, or for
    float results within `ulps` units in the last place of their dtype."""
    want = fn(*args)
    got = pm.fuse(fn)(*args)
    many = isinstance(want, tuple)
    want, got = (want, got) if many else ((want,), (got,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, pm.Array)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        gn, wn = _np(g), _np(w)
        if ulps and w.dtype in (pm.float32, pm.float16, pm.bfloat16):
            eps = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[w.dtype.name]
            np.testing.assert_allclose(gn.astype(np.float64), wn.astype(np.float64), rtol=ulps * eps, atol=0)
        elif exact:
            np.testing.assert_array_equal(gn, wn)
        else:
            np.testing.assert_allclose(gn.astype(np.float64), wn.astype(np.float64), rtol=rtol, atol=atol)
    return got


# ---- elementwise -----------------------------------------------------------------------------

def chain10(x, y):
    a = x * 1.5 + y
    b = pm.exp(-pm.abs(a)) - 0.25
    c = pm.maximum(b, y * 0.5)
    d = pm.sqrt(pm.abs(c) + 1.0)
    return d / (1.0 + pm.tanh(a)) - x


@pytest.mark.parametrize("n", [0, 1, 7, 256, 1000, 4097])
def test_chain_float32_bit_equal(n):
    check(chain10, _data(n, np.float32), _data(n, np.float32))


@pytest.mark.parametrize("dt", [np.float32, np.float16, "bfloat16", np.int32, np.int64, np.uint8, np.bool_])
def test_arithmetic_over_dtypes(dt):
    def f(x, y):
        return (x + y) * x, x == y, pm.where(x > y, x, y), pm.sign(x) if x.dtype != pm.bool else x | y
    check(f, _data((3, 5), dt), _data((3, 5), dt))


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int16, np.bool_])
def test_float_functions_of_any_dtype(dt):
    # Float-only ops compute integers and bool in float32, as the library does. Within
    # 1 ulp: on the CPU backend clang vectorises a kernel or not depending on its whole
    # body, and its vector and scalar sin differ in the last bit (a one-op fused kernel is
    # bit-equal, test_one_op_kernels_bit_equal).
    def f(x):
        return pm.exp(x * 0.1), pm.sin(x), pm.isnan(x), pm.floor(x), pm.log1p(pm.abs(x))
    check(f, _data((4, 3), dt), ulps=1)


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "log1p", "sqrt", "erf", "sigmoid", "gelu", "expm1"])
@pytest.mark.parametrize("dt", [np.float32, np.float16])
def test_one_op_kernels_bit_equal(name, dt):
    from pymetal.arrays import elementwise as _ew
    f = _ew.FUNCTIONS[name]
    check(lambda x: f(x), _data(1000, dt))


@pytest.mark.parametrize("pair", [(np.int32, np.float32), (np.float16, np.float32), (np.int8, np.int32),
                                  (np.uint8, np.int16), (np.bool_, np.int32), (np.float16, np.int64),
                                  ("bfloat16", np.float16)])
def test_mixed_dtypes_promote_as_the_library(pair):
    def f(x, y):
        return x + y, x * y - 1, x / (y + 100)
    check(f, _data(9, pair[0]), _data(9, pair[1]))


def test_python_and_numpy_scalars():
    x = _data(11, np.float16)
    i = _data(11, np.int32)
    check(lambda x: x * 2 + 1.5, x)  # weak Python scalars keep float16
    check(lambda x: x * np.float32(2.0), x)  # a NumPy scalar is not weak: float32
    check(lambda i: i // 3 + i % -4 + (i << 2), i)  # integer division and shifts, NumPy's rules
    check(lambda i: i + 2.5, i)  # int array and a Python float: float32
    check(lambda i: (i > 7) & True, i)
    check(lambda x, a: x * a + a, x, 3.0)
    check(lambda x, a: x * a, x, 7)


def test_scalar_arguments_are_kernel_parameters():
    f = pm.fuse(lambda x, a: x * a + 1.0)
    x = _data(10, np.float32)
    for a in (2.0, -0.0, float("nan"), 1e30):
        np.testing.assert_array_equal(f(x, a).numpy(), (x * a + 1.0).numpy())
    assert f.traces == 4  # a new value retraces ...
    assert len({id(p.fn) for p in f._plans.values()}) == 1  # ... and runs the same kernel


def test_out_of_range_python_int_is_an_error_as_unfused():
    x = _data(5, np.int8)
    with pytest.raises(OverflowError):
        x + 1000
    with pytest.raises(OverflowError):
        pm.fuse(lambda x: x + 1000)(x)
    check(lambda x: x < 1000, x)  # comparisons are exact, as the library's


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((), (6,)),
                                    ((1,), (2, 3)), ((0, 3), (3,)), ((4, 0), (1, 0)), ((5, 1, 7), (3, 1)),
                                    ((2, 3, 4, 5), (3, 1, 5)), ((1000, 3), (3,)), ((3, 1000), (3, 1))])
def test_broadcasting(shapes):
    x, y = _data(shapes[0], np.float32), _data(shapes[1], np.float32)
    check(lambda x, y: pm.where(x > y, x - y, y * 2.0), x, y)


def test_zero_d_and_size_one():
    check(lambda x, y: x * y + 1.0, _data((), np.float32), _data((), np.float32))
    check(lambda x: pm.exp(x) - x, _data((1, 1, 1), np.float32))


def test_non_contiguous_inputs():
    base = _data((6, 8), np.float32)
    t = base.T  # transposed
    s = pm.asarray(RNG.standard_normal((6, 16)).astype(np.float32))[:, ::2]  # strided
    check(lambda a, b: a * 2.0 - b, t, _data((8, 6), np.float32))
    check(lambda a: pm.exp(a) + 1.0, s)
    check(lambda a: pm.sum(a * a, axis=-1), s)
    p = pm.asarray(RNG.standard_normal((4, 5, 6)).astype(np.float32)).permute_dims((2, 0, 1))
    check(lambda a, b: a * b + 1.0, p, _data((6, 4, 5), np.float32))
    check(lambda a: pm.max(a, axis=-1, keepdims=True) - a, p)


def test_astype_and_where_with_scalars():
    x = _data(13, np.float32)
    check(lambda x: (x * 4).astype(pm.int32) + pm.astype(x > 0, pm.int8), x)
    check(lambda x: pm.where(x > 0, 1, 0), x)
    check(lambda x: pm.where(x > 0, x, 0.0), _data(13, np.float16))
    check(lambda x: pm.clip(x, -1.0, 1.0), x)


def test_numpy_array_arguments():
    x = RNG.standard_normal(9).astype(np.float32)
    got = pm.fuse(lambda a: a * 2.0)(x)
    np.testing.assert_array_equal(got.numpy(), x * 2.0)


def test_captured_arrays_are_read_at_every_call():
    w = pm.asarray(np.ones(4, np.float32))
    f = pm.fuse(lambda x: x * w)
    x = _data(4, np.float32)
    np.testing.assert_array_equal(f(x).numpy(), x.numpy())
    w[...] = 3.0
    np.testing.assert_array_equal(f(x).numpy(), x.numpy() * 3)


def test_several_outputs_and_the_same_argument_twice():
    x = _data(10, np.float32)
    got = pm.fuse(lambda a, b: [a + b, a * b])(x, x)
    assert isinstance(got, list)
    np.testing.assert_array_equal(got[0].numpy(), (x + x).numpy())
    np.testing.assert_array_equal(got[1].numpy(), (x * x).numpy())


# ---- reductions ------------------------------------------------------------------------------

RED = {
    "sum": lambda x, **k: pm.sum(x * 2.0 - 1.0, **k),
    "mean": lambda x, **k: pm.mean(pm.exp(x * 0.1), **k),
    "max": lambda x, **k: pm.max(pm.abs(x), **k),
    "min": lambda x, **k: x.min(**k),
    "var": lambda x, **k: pm.var(x + 1.0, **k),
    "std": lambda x, **k: pm.std(x, **k),
    "prod": lambda x, **k: pm.prod(x * 0.01 + 1.0, **k),
    "any": lambda x, **k: pm.any(x > 2.0, **k),
    "all": lambda x, **k: pm.all(x > -5.0, **k),
}


@pytest.mark.parametrize("name", list(RED))
@pytest.mark.parametrize("shape", [(3, 5), (4, 37), (1, 1), (2, 3, 17), (5, 512)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_row_reductions_bit_equal(name, shape, keepdims):
    # rows of up to 512 elements: the library reduces each in one chunk of 16 lanes, as pm.fuse
    check(lambda x: RED[name](x, axis=-1, keepdims=keepdims), _data(shape, np.float32))


@pytest.mark.parametrize("name", list(RED))
def test_reductions_over_all_axes(name):
    x = _data((7, 9), np.float32)
    check(lambda x: RED[name](x), x)
    check(lambda x: RED[name](x, axis=None, keepdims=True), x)
    check(lambda x: RED[name](x, axis=(-2, -1)), _data((3, 4, 5), np.float32))


@pytest.mark.parametrize("dt", [np.float16, np.int32, np.int8, np.uint8, np.bool_, np.int64])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "var", "std"])
def test_reductions_over_dtypes(dt, name):
    x = _data((3, 33), dt)
    if name in ("var", "std") and dt == np.bool_:
        return
    check(lambda x: getattr(pm, name)(x, axis=-1), x)
    check(lambda x: getattr(pm, name)(x, axis=-1, keepdims=True) * 2, x)


def test_long_rows_within_float32_bounds():
    # rows the library splits into chunks (n > 512 with few rows): another summation order
    x = _data((3, 20000), np.float32)
    check(lambda x: pm.sum(x, axis=-1), x, exact=False, rtol=2e-6, atol=1e-3)
    check(lambda x: pm.std(x, axis=-1), x, exact=False, rtol=2e-6)
    check(lambda x: pm.max(x, axis=-1), x)  # max is exact in any order


def test_long_sums_are_blocked():
    # 4M positive values in one row: a serial 16-lane sum would drift (262144 adds per lane);
    # blocks of 1024 keep each chain short, as the library's passes of chunks do
    a = RNG.random(1 << 22).astype(np.float32) + 1.0
    exact = a.astype(np.float64).sum()
    got = float(pm.fuse(lambda x: pm.sum(x))(pm.asarray(a)))
    lib = float(pm.sum(pm.asarray(a)))
    assert abs(got - exact) / exact < 2e-7, (got, exact)
    assert abs(got - exact) <= 4 * abs(lib - exact) + exact * 6e-8


def test_reductions_of_empty_arrays():
    check(lambda x: pm.sum(x, axis=-1) + 1.0, _data((3, 0), np.float32))
    check(lambda x: pm.mean(x * 2.0, axis=-1, keepdims=True), _data((3, 0), np.float32))
    check(lambda x: pm.sum(x, axis=-1), _data((0, 4), np.float32))
    check(lambda x: x - pm.max(x, axis=-1, keepdims=True), _data((0, 4), np.float32))
    with pytest.raises(ValueError, match="no identity"):
        pm.fuse(lambda x: pm.max(x, axis=-1))(_data((3, 0), np.float32))


def layer_norm(x, w, b):
    m = pm.mean(x, axis=-1, keepdims=True)
    v = pm.var(x, axis=-1, keepdims=True)
    return (x - m) / pm.sqrt(v + 1e-5) * w + b


def rms_norm(x, w):
    return x * pm.rsqrt(pm.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (64, 384), (2, 5, 33)])
def test_normalisations(shape):
    x = _data(shape, np.float32)
    w, b = _data(shape[-1], np.float32), _data(shape[-1], np.float32)
    check(layer_norm, x, w, b)
    check(rms_norm, x, w)
    check(lambda x: pm.nn.softmax(x), x)
    check(lambda x: pm.nn.log_softmax(x), x)
    check(lambda x: pm.logsumexp(x, axis=-1), x)
    check(lambda x: (pm.std(x, axis=-1), pm.mean(x, axis=-1)), x)


def test_row_values_with_per_row_inputs():
    x, s = _data((5, 8), np.float32), _data((5, 1), np.float32)
    check(lambda x, s: pm.sum(x, axis=-1, keepdims=True) * s + s, x, s)
    t = _data(5, np.float32)
    check(lambda x, t: pm.max(x, axis=-1) - t, x, t)  # without keepdims: shape (5,) values


def test_float16_layer_norm():
    x = _data((6, 40), np.float16)
    check(layer_norm, x, _data(40, np.float16), _data(40, np.float16))


def test_variance_of_huge_values_does_not_overflow():
    x = pm.asarray(np.array([[1e20, -1e20, 3e19], [1.0, 2.0, 4.0]], np.float32))
    got = check(lambda x: pm.std(x, axis=-1), x)
    assert np.isfinite(got[0].numpy()).all()


# ---- caching ----------------------------------------------------------------------------------

def test_cache_per_signature():
    f = pm.fuse(lambda x, y: pm.exp(x) * y - x)
    x, y = _data((4, 6), np.float32), _data((4, 6), np.float32)
    f(x, y)
    n_kernels = len(_fusion._kernels)
    plan = next(iter(f._plans.values()))
    f(x, y)
    f(_data((4, 6), np.float32), _data((4, 6), np.float32))
    assert f.traces == 1 and len(_fusion._kernels) == n_kernels
    f(_data((9, 2), np.float32), _data((9, 2), np.float32))  # a new shape: traced again, same kernel
    assert f.traces == 2 and len(_fusion._kernels) == n_kernels
    assert {id(p.fn) for p in f._plans.values()} == {id(plan.fn)}
    f(_data((4, 6), np.float16), _data((4, 6), np.float16))  # a new dtype: a new kernel
    assert f.traces == 3 and len(_fusion._kernels) == n_kernels + 1
    f(_data((4, 6), np.float32), _data(6, np.float32))  # a new broadcast pattern: a new kernel
    assert len(_fusion._kernels) == n_kernels + 2


# ---- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, match", [
    (lambda x: x[0] * 2, "indexing"),
    (lambda x: x * 2 if x > 0 else x, "branch"),
    (lambda x: x.reshape(-1), "reshape"),
    (lambda x: pm.sum(x, axis=0), "trailing"),
    (lambda x: pm.argmax(x, axis=-1), "not supported|reshape"),
    (lambda x: pm.exp(x, out=x), "out="),
    (lambda x: 3.0, "must return"),
    (lambda x: (pm.sum(x, axis=-1), pm.sum(x)), "same"),
    (lambda x: x - pm.sum(x, axis=-1), "keepdims"),
    (lambda x: pm.sum(pm.sum(x, axis=-1, keepdims=True)), "reduction of a reduction|same"),
    (lambda x: x.matmul(x), "not supported"),
    (lambda x: float(x), "Python number"),
    (lambda x: pm.sort(x), "not supported"),
    (lambda x: pm.concat([x, x]), "not elementwise"),
    (lambda x: pm.cumsum(x), "not elementwise"),
])
def test_unsupported_constructs_raise(fn, match):
    with pytest.raises(_fusion.FuseError, match=match):
        pm.fuse(fn)(_data((4, 4), np.float32))


def test_fuse_error_is_a_type_error_and_exported():
    assert issubclass(_fusion.FuseError, TypeError)
    with pytest.raises(TypeError, match="decorates a function"):
        pm.fuse(3)
    with pytest.raises(TypeError, match="hashable"):
        pm.fuse(lambda x, s: x)(_data(3, np.float32), [1, 2])


def test_decorator_keeps_the_name():
    @pm.fuse
    def my_function(x):
        """Doc."""
        return x + 1

    assert my_function.__name__ == "my_function" and my_function.__doc__ == "Doc."


# ---- pm.nn on the fused kernel ------------------------------------------------------------------

def _softmax_passes(x):
    e = pm.exp(x - pm.max(x, axis=-1, keepdims=True))
    return e / pm.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 4, 300), (1, 1)])
@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32])
def test_nn_softmax_fused_equals_its_passes(shape, dt):
    x = _data(shape, dt)
    xf = x.astype(pm.float32)
    want = _softmax_passes(xf)
    got = pm.nn.softmax(x)
    assert got.dtype == (x.dtype if dt != np.int32 else pm.float32)
    np.testing.assert_array_equal(got.numpy(), want.astype(got.dtype).numpy())
    lw = xf - pm.logsumexp(xf, axis=-1, keepdims=True)
    np.testing.assert_array_equal(pm.nn.log_softmax(x).numpy(), lw.astype(got.dtype).numpy())


def test_nn_softmax_long_rows_and_other_axes():
    a = RNG.standard_normal((3, 5000)).astype(np.float32)
    e = np.exp(a - a.max(-1, keepdims=True))
    np.testing.assert_allclose(pm.nn.softmax(pm.asarray(a)).numpy(), e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(pm.nn.softmax(pm.asarray(a.T), axis=0).numpy().T, e / e.sum(-1, keepdims=True),
                               rtol=2e-6, atol=1e-9)


def test_complex64():
    z = pm.asarray((RNG.standard_normal((3, 7)) + 1j * RNG.standard_normal((3, 7))).astype(np.complex64))
    check(lambda z: (pm.exp(z) * (1 + 2j) + z, pm.abs(z), pm.real(z) + 1.0, z == z), z)
    check(lambda z: pm.sum(z * z, axis=-1), z)
    check(lambda z: pm.mean(z, axis=-1, keepdims=True) - z, z)


def test_keyword_and_static_arguments():
    f = pm.fuse(lambda x, *, w, axis, eps=1e-5: pm.sum(x * w, axis=axis, keepdims=True) + eps)
    x, w = _data((4, 6), np.float32), _data(6, np.float32)
    for axis in (-1, None):
        np.testing.assert_array_equal(f(x, w=w, axis=axis).numpy(),
                                      (pm.sum(x * w, axis=axis, keepdims=True) + 1e-5).numpy())
    assert f.traces == 2


def test_traced_arrays_do_not_escape_as_other_objects():
    with pytest.raises(TypeError):
        pm.fuse(lambda x: x @ x)(_data((3, 3), np.float32))
    with pytest.raises(_fusion.FuseError, match="NumPy"):
        pm.fuse(lambda x: np.asarray(x) * 2)(_data(3, np.float32))


def test_fused_method():
    class Scale:
        def __init__(self, k):
            self.k = k

        @pm.fuse
        def apply(self, x):
            return x * self.k

    x = _data(5, np.float32)
    np.testing.assert_array_equal(Scale(3.0).apply(x).numpy(), (x * 3.0).numpy())


def test_nested_fused_functions_fuse_into_one():
    inner = pm.fuse(lambda x: pm.exp(x) - 1.0)
    outer = pm.fuse(lambda x, y: inner(x) * y)
    x, y = _data(9, np.float32), _data(9, np.float32)
    np.testing.assert_array_equal(outer(x, y).numpy(), ((pm.exp(x) - 1.0) * y).numpy())
    assert inner.traces == 0 and outer.traces == 1


def test_unary_operators():
    check(lambda x: (-x, +x, abs(x)), _data(7, np.float32))
    check(lambda i, b: (~i, -i, ~b), _data(7, np.int16), _data(7, np.bool_))
    with pytest.raises(TypeError, match="not supported for bool"):
        pm.fuse(lambda b: -b)(_data(3, np.bool_))


def test_threads_share_a_fused_function():
    from concurrent.futures import ThreadPoolExecutor

    f = pm.fuse(layer_norm)
    inputs = [(_data((i + 1, 5 + i % 3), np.float32),) for i in range(12)]
    inputs = [(x, _data(x.shape[-1], np.float32), _data(x.shape[-1], np.float32)) for (x,) in inputs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda a: f(*a).numpy(), inputs * 2))
    for g, a in zip(got, inputs * 2):
        np.testing.assert_array_equal(g, layer_norm(*a).numpy())


def test_numpy_ufuncs_on_traced_arrays():
    x = _data(8, np.float32)
    check(lambda x: np.exp(x) * np.float32(2) + np.maximum(x, 0.5), x)
    with pytest.raises(_fusion.FuseError):
        pm.fuse(lambda x: np.sort(x))(x)
