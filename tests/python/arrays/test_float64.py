"""float64 and complex128 (issue 23, pymetal/arrays/float64.py): the "host" policy computes them with
NumPy on the host over the shared memory; "downcast" converts to float32 with one warning;
"error" refuses. NumPy is the oracle."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pymetal as pm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SHAPES = [(), (0,), (1,), (7,), (3, 5), (1001,), (33, 65)]


@pytest.fixture
def policy(dev):
    """Sets a policy for one test and restores the previous one."""
    old = pm.get_float64_policy()

    def set_(p):
        pm.set_float64_policy(p)
    yield set_
    pm.set_float64_policy(old)


@pytest.fixture
def host(policy):
    policy("host")


def _data(shape, rng, dtype=np.float64):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a, dtype=dtype)


def _check(x, expected, rtol=1e-12):
    assert isinstance(x, pm.Array), type(x)
    expected = np.asarray(expected)
    assert x.dtype == expected.dtype, (x.dtype, expected.dtype)
    assert x.shape == expected.shape
    np.testing.assert_allclose(x.numpy(), expected, rtol=rtol, atol=1e-300)


def _run(code, env=None):
    """Runs code in a fresh interpreter (per-process state: the env var, the one warning)."""
    e = dict(os.environ, **(env or {}))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=e, capture_output=True,
                       text=True, timeout=300)
    return r


# ---- the settings -----------------------------------------------------------------------------------

def test_policy_setting(policy):
    assert pm.get_float64_policy() in ("host", "downcast", "error")
    for p in ("error", "downcast", "host"):
        policy(p)
        assert pm.get_float64_policy() == p
    with pytest.raises(ValueError, match="host.*downcast.*error"):
        pm.set_float64_policy("cpu")
    assert pm.get_float64_policy() == "host"


def test_env_var_and_default():
    code = """
        import numpy as np, pymetal as pm
        print(pm.get_float64_policy(), pm.asarray(np.zeros(2)).dtype if pm.get_float64_policy() != "error" else "-")
    """
    assert _run(code, {"PYMETAL_FLOAT64": ""}).stdout.split() == ["host", "float64"]
    assert _run(code, {"PYMETAL_FLOAT64": "downcast"}).stdout.split() == ["downcast", "float32"]
    assert _run(code, {"PYMETAL_FLOAT64": "error"}).stdout.split() == ["error", "-"]
    r = _run(code, {"PYMETAL_FLOAT64": "double"})
    assert r.returncode != 0 and "PYMETAL_FLOAT64='double'" in r.stderr and "host, downcast, error" in r.stderr


def test_downcast_warns_once_per_process():
    r = _run("""
        import warnings, numpy as np, pymetal as pm
        pm.set_float64_policy("downcast")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = pm.ones(3) / np.float64(2)
            y = pm.asarray(np.arange(4.0))
            z = pm.zeros(2, dtype=np.complex128) + 1
        print(x.dtype, y.dtype, z.dtype, float(x[0]), len(w), w[0].category.__name__, w[0].filename.endswith("<string>"))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float32", "float32", "complex64", "0.5", "1", "UserWarning", "True"]


def test_error_policy_refuses_naming_the_setting(policy):
    policy("error")
    for make in (lambda: pm.ones(3) / np.float64(2), lambda: pm.asarray(np.zeros(3)),
                 lambda: pm.zeros(2, dtype=pm.float64), lambda: pm.ones(2).astype(np.complex128)):
        with pytest.raises(TypeError, match=r"set_float64_policy\('host'\)"):
            make()
    _check(pm.ones(2) / 2.0, np.full(2, 0.5, np.float32))  # Python floats are unaffected


# ---- host: NumPy's results ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_elementwise(host, rng, shape, dtype):
    a, b = _data(shape, rng, dtype), _data(shape, rng, dtype)
    x, y = pm.asarray(a), pm.asarray(b)
    assert x.dtype == dtype
    _check(x + y, a + b)
    _check(x * y - 1.5, a * b - 1.5)
    _check(x / y, a / b)
    _check(pm.exp(x), np.exp(a))
    _check(pm.sqrt(pm.abs(x)), np.sqrt(np.abs(a)))
    _check(-x, -a)
    _check(abs(x), np.abs(a))
    _check(x == y, a == b)
    _check(pm.where(pm.abs(x) > 0.5, x, y), np.where(np.abs(a) > 0.5, a, b))
    if dtype == np.float64:
        _check(pm.maximum(x, y), np.maximum(a, b))
        _check(pm.atan2(x, y), np.arctan2(a, b))
        _check(pm.floor(x), np.floor(a))


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5), (33, 65)])
def test_reductions_and_methods(host, rng, shape):
    a = _data(shape, rng)
    x = pm.asarray(a)
    _check(pm.sum(x), np.sum(a))
    _check(x.sum(0), a.sum(0))
    _check(pm.cumsum(x, axis=0), np.cumsum(a, axis=0))
    if a.size:
        _check(pm.mean(x), np.mean(a))
        _check(x.std(0, ddof=0), a.std(0))
        _check(pm.max(x, axis=0), np.max(a, axis=0))
        _check(pm.argmax(x), np.argmax(a))
        _check(pm.median(x), np.median(a))
        _check(pm.percentile(x, 30), np.percentile(a, 30))
    assert x.sum().item() == pytest.approx(float(a.sum()), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [1, 3, 64])
def test_matmul_and_linalg(host, rng, n):
    a = _data((n, n), rng) + n * np.eye(n)
    b = _data((n, 2), rng)
    x, y = pm.asarray(a), pm.asarray(b)
    _check(x @ y, a @ b)
    _check(pm.matmul(x, pm.asarray(b.astype(np.float32))), a @ b.astype(np.float32))  # mixed: float64
    _check(pm.linalg.solve(x, y), np.linalg.solve(a, b), rtol=1e-9)
    _check(pm.linalg.inv(x), np.linalg.inv(a), rtol=1e-9)
    _check(pm.linalg.norm(x), np.linalg.norm(a))
    _check(pm.linalg.det(x), np.linalg.det(a), rtol=1e-9)
    s = pm.linalg.svd(x, compute_uv=False)
    _check(s, np.linalg.svd(a, compute_uv=False), rtol=1e-9)
    q, r = pm.linalg.qr(x)
    np.testing.assert_allclose((q @ r).numpy(), a, rtol=1e-9, atol=1e-9)
    _check(pm.dot(x, y), np.dot(a, b))
    _check(pm.einsum("ij,jk->ik", x, y), np.einsum("ij,jk->ik", a, b))


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (1001,)])
def test_sort_and_search(host, rng, shape):
    a = _data(shape, rng)
    x = pm.asarray(a)
    _check(pm.sort(x), np.sort(a))
    _check(pm.argsort(x), np.argsort(a))
    _check(pm.unique(x), np.unique(a))
    y = pm.asarray(a.copy())
    y.sort()  # in place, as ndarray.sort
    _check(y, np.sort(a))
    _check(pm.searchsorted(pm.sort(x), pm.asarray(np.array([0.0, 0.5]))),
           np.searchsorted(np.sort(a), [0.0, 0.5]))


def test_indexing_and_setitem(host, rng):
    a = _data((6, 5), rng)
    x = pm.asarray(a)
    v = x[1:3]  # basic indexing: a view of the same memory, as NumPy's
    _check(v, a[1:3])
    v[0, 0] = 42.0
    assert x[1, 0].item() == 42.0
    a[1, 0] = 42.0
    _check(x[pm.asarray([0, 5])], a[[0, 5]])
    _check(x[x > 0], a[a > 0])
    _check(x.T, a.T)
    _check(x.reshape(5, 6), a.reshape(5, 6))
    x[:, 1] = pm.arange(6, dtype=pm.float32)  # float32 data into a float64 array
    a[:, 1] = np.arange(6)
    _check(x, a)
    z = pm.zeros(3)  # float32: a float64 value is stored as float32, as NumPy's
    z[1] = np.float64(0.1)
    _check(z, np.array([0, 0.1, 0], np.float32))
    assert x[2, 2].dtype == np.float64 and float(x[2, 2]) == a[2, 2]


def test_creation_and_astype(host, rng):
    _check(pm.zeros(3, dtype=pm.float64), np.zeros(3))
    _check(pm.ones((2, 0), dtype=np.float64), np.ones((2, 0)))
    _check(pm.full(4, 0.1, dtype="float64"), np.full(4, 0.1))
    _check(pm.empty(5, np.complex128) * 0, np.zeros(5, np.complex128))
    _check(pm.arange(5, dtype=np.float64), np.arange(5, dtype=np.float64))
    _check(pm.linspace(0, 1, 7, dtype=np.float64), np.linspace(0, 1, 7))
    _check(pm.eye(3, dtype=np.float64), np.eye(3))
    _check(pm.asarray([0.1, 0.2], dtype=np.float64), np.array([0.1, 0.2]))
    _check(pm.asarray([0.1, 0.2]), np.array([0.1, 0.2], np.float32))  # Python data: float32 default
    a = rng.random(5)
    _check(pm.asarray(a), a)
    _check(pm.asarray(np.float64(2.5)), np.asarray(2.5))
    f = pm.asarray(a.astype(np.float32))
    _check(f.astype(np.float64), a.astype(np.float32).astype(np.float64))
    _check(pm.asarray(a).astype(np.float32), a.astype(np.float32))
    _check(pm.asarray(a).astype(pm.int32), a.astype(np.int32))
    _check(pm.astype(f, pm.complex128), a.astype(np.float32).astype(np.complex128))
    _check(pm.zeros_like(pm.asarray(a)), np.zeros(5))


def test_page_aligned_float64_is_shared(host, dev):
    buf = np.zeros(dev.page_size // 8 * 2 + 8)
    off = (-buf.ctypes.data % dev.page_size) // 8
    a = buf[off:off + dev.page_size // 8]  # page-aligned, contiguous, writeable
    x = pm.asarray(a)
    x[3] = 7.5
    assert a[3] == 7.5  # zero-copy: the same memory
    y = x * 2  # results are pymetal memory
    assert y.dtype == np.float64 and not np.shares_memory(y.numpy(), a)


def test_promotion(host):
    f32, f16 = pm.ones(3), pm.ones(3, pm.float16)
    i64, c64 = pm.arange(3), pm.ones(3, pm.complex64)
    f64 = pm.ones(3, pm.float64)
    table = [
        (f32 / np.float64(2.0), np.float64),  # NEP 50: a NumPy float64 scalar is not weak
        (f32 / 2.0, np.float32),  # Python floats are weak
        (f32 * np.float32(2), np.float32),
        (f16 * np.float64(2), np.float64),
        (i64 + np.float64(0.5), np.float64),
        (c64 * np.complex128(1j), np.complex128),
        (c64 * np.float64(2), np.complex128),
        (f32 + f64, np.float64),
        (f64 + 1, np.float64),
        (f64 + i64, np.float64),
        (f64 * 1j, np.complex128),
        (f32 + np.ones(3), np.float64),
        (np.ones(3) + f32, np.float64),
        (np.float64(2.0) * f32, np.float64),
        (f32 - np.sqrt(8), np.float64),  # np.sqrt(8) is a float64 scalar
    ]
    for r, dt in table:
        assert isinstance(r, pm.Array) and r.dtype == dt, (r, dt)
    np.testing.assert_allclose((f32 / np.float64(3.0)).numpy(), np.ones(3, np.float32) / np.float64(3.0), rtol=0)


def test_in_place_operators(host):
    x = pm.arange(4, dtype=pm.float32)
    y = x
    x += np.float64(0.5)  # same_kind: stays float32, in place
    assert x is y and x.dtype == np.float32
    _check(x, np.arange(4, dtype=np.float32) + 0.5)
    z = pm.asarray(np.arange(4.0))
    w = z
    z *= pm.ones(4)
    assert z is w
    _check(z, np.arange(4.0))
    with pytest.raises(TypeError):
        i = pm.arange(3)
        i += np.float64(1.5)  # NumPy's same_kind refusal


def test_numpy_functions_on_float64_arrays(host, rng):
    a = _data((4, 3), rng)
    x = pm.asarray(a)
    _check(np.mean(x, axis=0), np.mean(a, axis=0))
    _check(np.exp(x), np.exp(a))
    _check(np.add(np.ones(3), pm.ones(3)), np.full(3, 2.0))
    _check(np.concatenate([x, x]), np.concatenate([a, a]))
    _check(pm.concatenate([x, pm.ones((1, 3))]), np.concatenate([a, np.ones((1, 3))]))
    _check(pm.stack([x[0], pm.ones(3)]), np.stack([a[0], np.ones(3)]))


def test_random_float64(host):
    r = pm.random.default_rng(7)
    u = r.random(100_000, dtype=np.float64)
    assert u.dtype == np.float64 and 0 <= float(pm.min(u)) and float(pm.max(u)) < 1
    assert abs(float(pm.mean(u)) - 0.5) < 0.01
    # 53-bit values: far more distinct values than float32 could give in [0, 1)
    assert len(np.unique(u.numpy())) == 100_000
    n = r.standard_normal((300, 300), dtype="float64")
    assert n.dtype == np.float64 and abs(float(pm.std(n)) - 1) < 0.02
    g = r.standard_gamma(pm.asarray([0.5, 2.0]), dtype=np.float64)
    assert g.shape == (2,) and g.dtype == np.float64
    # reproducible for a seed
    np.testing.assert_array_equal(pm.random.default_rng(3).random(5, dtype=np.float64).numpy(),
                                  pm.random.default_rng(3).random(5, dtype=np.float64).numpy())
    out = pm.zeros(4, dtype=np.float64)
    assert r.standard_exponential(dtype=np.float64, out=out) is out and float(pm.min(out)) > 0


def test_fft_float64(host, rng):
    for n in (1, 7, 64):
        a = _data(n, rng)
        _check(pm.fft.fft(pm.asarray(a)), np.fft.fft(a))
        _check(pm.fft.rfft(pm.asarray(a)), np.fft.rfft(a))
        c = _data(n, rng, np.complex128)
        _check(pm.fft.ifft(pm.asarray(c)), np.fft.ifft(c))


def test_complex128_parts(host, rng):
    c = _data(5, rng, np.complex128)
    z = pm.asarray(c)
    _check(z.real, c.real)
    _check(z.imag, c.imag)
    _check(pm.real(z), c.real)
    _check(pm.conj(z), np.conj(c))
    z.imag = pm.zeros(5, dtype=pm.float64)
    assert float(pm.max(pm.abs(z.imag))) == 0


def test_ordering_with_pending_device_work(host):
    n = 1 << 22
    for _ in range(3):
        x = pm.arange(n, dtype=pm.float32)
        x += 1  # queued on the device, writes x
        x *= 3
        y = x * np.float64(0.5)  # host: after the device work that writes x
        expected = (np.arange(n, dtype=np.float32) + 1) * 3 * 0.5
        np.testing.assert_array_equal(y.numpy(), expected)
        # write after read: the device reads x, then the host writes it
        z = x * 2
        x[...] = np.float64(-1.0)
        np.testing.assert_array_equal(z.numpy(), (np.arange(n, dtype=np.float32) + 1) * 6)
        assert float(pm.max(x)) == -1.0


def test_custom_kernel_refuses_float64(host, dev):
    lib = pm.compile("""
        #include <metal_stdlib>
        using namespace metal;
        kernel void twice(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2; }
    """)
    with pytest.raises(TypeError, match="float64 array for x: device float"):  # Metal has no double
        lib.twice(pm.zeros(4, dtype=pm.float64), grid=4)


def test_downcast_policy(policy, rng):
    policy("downcast")
    a = rng.random(5)
    x = pm.asarray(a)
    assert x.dtype == np.float32
    _check(x, a.astype(np.float32))
    _check(pm.ones(3) / np.float64(4), np.full(3, 0.25, np.float32))
    _check(pm.zeros(2, dtype=np.float64), np.zeros(2, np.float32))
    _check(pm.asarray(a.astype(np.complex128)), a.astype(np.complex64))
    assert pm.random.default_rng(0).random(3, dtype=np.float64).dtype == np.float32


def test_namespace_info_describes_the_device(host):
    info = pm.__array_namespace_info__()
    assert "float64" not in info.dtypes() and "complex128" not in info.dtypes()
    assert info.default_dtypes()["real floating"] == pm.float32


def test_identity_python_data_and_ufunc_methods(host, rng):
    a = rng.random((3, 4))
    x = pm.asarray(a)
    assert pm.asarray(x) is x and x.astype(np.float64, copy=False) is x
    assert pm.asarray([[1.0, 2.0], [3.0, 4.0]]).dtype == np.float32  # Python data: the device's default
    _check(pm.asarray([x[0], x[1]]), a[:2])  # a list of float64 arrays stays float64
    _check(pm.add.reduce(x, 1), np.add.reduce(a, 1))
    _check(np.add.reduce(x, axis=0), np.add.reduce(a, axis=0))
    _check(pm.multiply.outer(x[0], x[1]), np.multiply.outer(a[0], a[1]))
    y, b = pm.zeros(4, dtype=pm.float64), np.zeros(4)
    pm.add.at(y, pm.asarray([0, 0, 3]), 0.25)
    np.add.at(b, [0, 0, 3], 0.25)
    _check(y, b)
    assert pm.power is pm.pow and pm.absolute is pm.abs  # aliases stay one function
    _check(pm.power(x, 2), a ** 2)


def test_pickle_float64(host, rng):
    import pickle
    a = rng.random(5)
    x = pickle.loads(pickle.dumps(pm.asarray(a), protocol=5))
    _check(x, a)


def test_msl_double_is_a_compile_error(dev):
    # Metal has no double: a custom kernel declaring one is refused by the compiler (as before)
    with pytest.raises(pm.CompileError, match="double"):
        pm.compile("kernel void k(device double* x [[buffer(0)]], uint i [[thread_position_in_grid]]) "
                   "{ x[i] *= 2; }")
