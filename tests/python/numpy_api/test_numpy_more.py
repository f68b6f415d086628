"""More of NumPy's namespace (numpy_api/more.py, issue 23), NumPy as the oracle."""

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, compare, data

DT_IDS = lambda d: np.dtype(d).name  # noqa: E731
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]
DTYPES = [np.float32, np.int32, np.int64, np.uint8, np.bool_]


def test_grids():
    for key in [np.s_[0:3], np.s_[0:2, 0:3], np.s_[1:7:2, 0:3, -2:2], np.s_[0:1:5j, 0:2], np.s_[0:0, 0:3],
                np.s_[0.5:2.5:0.5, 0:1]]:
        compare(pm.mgrid[key], np.mgrid[key])
        got, want = pm.ogrid[key], np.ogrid[key]
        compare(list(got) if isinstance(got, tuple) else got, want)


def test_r_c_():
    a, b = np.array([1, 2, 3]), np.array([4, 5, 6])
    pa, pb = pm.asarray(a), pm.asarray(b)
    compare(pm.r_[pa, pb], np.r_[a, b])
    compare(pm.r_[pa, 0, 1:4], np.r_[a, 0, 1:4])
    compare(pm.r_[0:1:4j], np.r_[0:1:4j])
    compare(pm.c_[pa, pb], np.c_[a, b])
    m = np.arange(6).reshape(2, 3)
    compare(pm.c_[pm.asarray(m), pm.asarray(m)], np.c_[m, m])
    compare(pm.r_["1", pm.asarray(m), pm.asarray(m)], np.r_["1", m, m])
    compare(pm.r_["0,2", pa, pb], np.r_["0,2", a, b])
    compare(pm.r_["0,2,0", pa, pb], np.r_["0,2,0", a, b])
    compare(pm.r_["1,2,0", pa, pb], np.r_["1,2,0", a, b])
    with pytest.raises(ValueError, match="directive"):
        pm.r_["r", pa]
    assert pm.s_[1:2] == np.s_[1:2]
    with pytest.raises(TypeError, match="slices"):
        pm.mgrid[0:2, 3]


def test_ix_():
    x = np.arange(20).reshape(4, 5)
    rows, cols = np.array([0, 3]), np.array([True, False, True, True, False])
    compare(list(pm.ix_(pm.asarray(rows), pm.asarray(cols))), list(np.ix_(rows, cols)))
    compare(pm.asarray(x)[pm.ix_(pm.asarray(rows), pm.asarray(cols))], x[np.ix_(rows, cols)])
    compare(list(pm.ix_([1, 2], [])), list(np.ix_([1, 2], [])))
    with pytest.raises(ValueError, match="1 dimensional"):
        pm.ix_(pm.ones((2, 2)))


@pytest.mark.parametrize("shape", [(0, 4, 2), (1, 2, 4), (4, 6, 4)], ids=str)
def test_splits(shape):
    x = data(shape, np.float32)
    check(lambda xp, a: xp.hsplit(a, 2), x)
    check(lambda xp, a: xp.vsplit(a, [1, 3]), x)
    check(lambda xp, a: xp.dsplit(a, 2), x)
    check(lambda xp, a: xp.hsplit(a, [1, 5]), data((shape[2] * 2,), np.int32))
    with pytest.raises(ValueError):
        pm.vsplit(pm.ones(4), 2)
    with pytest.raises(ValueError):
        pm.dsplit(pm.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="equal division"):
        pm.hsplit(pm.ones((2, 3)), 2)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_type_tests(shape):
    x = data(shape, np.float32)
    x.ravel()[::3] = np.inf
    x.ravel()[1::3] = -np.inf
    check(lambda xp, a: xp.isposinf(a), x)
    check(lambda xp, a: xp.isneginf(a), x)
    check(lambda xp, a: xp.isneginf(a), data(shape, np.int32))
    z = data(shape, np.complex64)
    z.ravel()[::2] = z.ravel()[::2].real
    for v in (z, x, data(shape, np.int32)):
        check(lambda xp, a: xp.iscomplex(a), v)
        check(lambda xp, a: xp.isreal(a), v)
        check(lambda xp, a: xp.iscomplexobj(a), v)
        check(lambda xp, a: xp.isrealobj(a), v)
    with pytest.raises(TypeError):
        pm.isposinf(pm.asarray(z))


def test_metadata_helpers():
    x = pm.asarray([1.0, 2.0])
    assert pm.isscalar(3.0) and not pm.isscalar(x)
    assert pm.issubdtype(x.dtype, np.floating)
    assert pm.iterable(x) and not pm.iterable(3)
    assert pm.promote_types(pm.int8, pm.uint8) == np.int16
    assert pm.common_type(x) is np.float32 and pm.common_type(pm.asarray([1])) is np.float64
    assert pm.min_scalar_type(300) == np.uint16 and pm.min_scalar_type(x) == np.float32
    assert pm.binary_repr(-5, width=8) == np.binary_repr(-5, width=8)
    assert list(pm.ndindex(2, 2)) == list(np.ndindex(2, 2))
    y = pm.arange(10)
    assert pm.may_share_memory(y[:5], y[4:]) and not pm.may_share_memory(y[:5], y[5:])
    assert not pm.shares_memory(y, pm.arange(10))
    assert pm.may_share_memory(np.zeros(2), np.zeros(2)) is False


@pytest.mark.parametrize("dtype", DTYPES[:4], ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ediff1d_extract_compress(dtype, shape):
    x = data(shape, dtype)
    check(lambda xp, a: xp.ediff1d(a), x)
    begin, end = np.array([0, 1], dtype), np.array(5, dtype)
    check(lambda xp, a, b, e: xp.ediff1d(a, to_begin=b, to_end=e), x, begin, end)
    if np.dtype(dtype).kind in "iu":
        with pytest.raises(TypeError):
            pm.ediff1d(pm.asarray(x), to_begin=pm.asarray([0.5]))
    c = data(shape, np.bool_, seed=3)
    check(lambda xp, a, b: xp.extract(b, a), x, c)
    check(lambda xp, a, b: xp.extract(b, a), x, c.astype(np.int32))
    check(lambda xp, a: xp.compress(np.arange(a.size) % 2 == 0 if xp is np else pm.asarray(np.arange(a.size) % 2 == 0), a), x)
    if len(shape) > 1:
        cond = np.array([True, False, True][:shape[1]])
        check(lambda xp, a, b: xp.compress(b, a, axis=1), x, cond)
        check(lambda xp, a, b: xp.compress(b, a, axis=-1), x, np.array([False, True]))
    with pytest.raises(IndexError):
        pm.compress(pm.asarray([False] * (x.size + 1) + [True]), pm.asarray(x))
    with pytest.raises(TypeError):
        pm.ediff1d(pm.asarray(np.array([1, 2], np.int32)), to_end=pm.asarray([1.5]))


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_in_place(dtype, shape):
    x = data(shape, dtype)
    n = x.size
    mask = data(shape, np.bool_, seed=4)
    vals = data((3,), dtype, seed=5)
    for f in (lambda xp, a: xp.putmask(a, mask if xp is np else pm.asarray(mask), vals if xp is np else pm.asarray(vals)),
              lambda xp, a: xp.place(a, mask if xp is np else pm.asarray(mask), vals),
              lambda xp, a: xp.copyto(a, vals[:1] if xp is np else pm.asarray(vals[:1])),
              lambda xp, a: xp.copyto(a, vals[0] if xp is np else pm.asarray(vals[0]), where=mask if xp is np else pm.asarray(mask)),
              lambda xp, a: xp.put(a, [0, n - 1, -2 % max(n, 1)][:min(n, 3)] if n > 2 else list(range(n)), vals),
              lambda xp, a: xp.put(a, [n + 1, -n - 3], vals[:2], mode="wrap") if n else None,
              lambda xp, a: xp.put(a, [n + 1, -n - 3], vals[:2], mode="clip") if n else None):
        want, got = x.copy(), pm.asarray(x.copy())
        assert f(np, want) is None and f(pm, got) is None
        compare(got, want)
    if n:
        with pytest.raises(IndexError):
            pm.put(pm.asarray(x), [n], vals)
        with pytest.raises(ValueError, match="empty"):
            pm.place(pm.asarray(x), pm.ones(shape, dtype=pm.bool), [])
    with pytest.raises(TypeError, match="pymetal Array"):
        pm.put(x, [0], vals)


def test_in_place_strided_and_casting():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    want, base = x.copy(), pm.asarray(x.copy())
    got = base[:, ::2]
    np.put(want[:, ::2], [1, 5], [-1, -2])
    pm.put(got, [1, 5], [-1, -2])
    compare(base, want)
    np.putmask(want[1:3], want[1:3] > 10, [7])
    pm.putmask(base[1:3], base[1:3] > 10, [7])
    compare(base, want)
    i = pm.zeros(3, dtype=pm.int32)
    with pytest.raises(TypeError):
        pm.copyto(i, pm.asarray([1.5, 2.5, 3.5]))
    with pytest.raises(TypeError):
        pm.copyto(i, 1.5)
    pm.copyto(i, pm.asarray([1.5, 2.5, 3.5]), casting="unsafe")
    compare(i, np.array([1, 2, 3], np.int32))
    y = pm.arange(6)
    pm.copyto(y[1:], y[:-1])  # overlapping: NumPy's result (a temporary)
    compare(y, np.array([0, 0, 1, 2, 3, 4]))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_choose(shape):
    idx = data(shape, np.int64, lo=0, hi=2)
    c = [data(shape, np.float32, seed=s) for s in range(3)]
    check(lambda xp, i, a, b, d: xp.choose(i, [a, b, d]), idx, *c)
    check(lambda xp, i, a: xp.choose(i, [a, 0, 5]), idx, c[0])
    check(lambda xp, i: xp.choose(i, [[1, 2, 3, 4, 5, 6, 7][:i.shape[-1]]] * 3), idx)  # nested lists
    check(lambda xp, i, a, b: xp.choose(i, [a, b], mode="wrap"), idx + 3, *c[:2])
    check(lambda xp, i, a, b: xp.choose(i, [a, b], mode="clip"), idx - 1, *c[:2])
    check(lambda xp, i, a, b: xp.choose(i, [a, b]), idx[..., :1] * 0 + 1 if idx.size else idx,
          data(shape, np.int32), data(shape, np.uint8))
    if idx.size:
        with pytest.raises(ValueError, match="invalid entry"):
            pm.choose(pm.asarray(idx + 3), [pm.asarray(a) for a in c])


@pytest.mark.parametrize("dtype", DTYPES, ids=DT_IDS)
def test_trim_zeros(dtype):
    for v in ([0, 0, 1, 2, 0, 3, 0], [], [0], [1], [0, 0], [3, 0, 0]):
        x = np.array(v).astype(dtype)
        for trim in ("fb", "f", "b", "B"):
            check(lambda xp, a: xp.trim_zeros(a, trim), x)
    with pytest.raises(ValueError):
        pm.trim_zeros(pm.asarray([0, 1]), "x")


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8, np.bool_, np.complex64], ids=DT_IDS)
@pytest.mark.parametrize("n", [0, 1, 5])
def test_vander(dtype, n):
    x = data((n,), dtype, lo=-3, hi=3)
    check(lambda xp, a: xp.vander(a), x, rtol=1e-5, atol=1e-4)
    check(lambda xp, a: xp.vander(a, 3, increasing=True), x, rtol=1e-5, atol=1e-4)
    check(lambda xp, a: xp.vander(a, 0), x)
    with pytest.raises(ValueError):
        pm.vander(pm.ones((2, 2)))


@pytest.mark.parametrize("dtype", DTYPES[:4], ids=DT_IDS)
@pytest.mark.parametrize("n", [0, 1, 9])
def test_sort_complex(dtype, n):
    check(lambda xp, a: xp.sort_complex(a), data((n,), dtype), check_dtype=dtype in (np.float32, np.uint8))


def test_rollaxis():
    x = data((2, 3, 4, 5), np.float32)
    for axis in range(-4, 4):
        for start in range(-4, 5):
            check(lambda xp, a: xp.rollaxis(a, axis, start), x)
    with pytest.raises(np.exceptions.AxisError):
        pm.rollaxis(pm.asarray(x), 0, 5)
    with pytest.raises(np.exceptions.AxisError):
        pm.rollaxis(pm.asarray(x), 4)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4)], ids=str)
def test_apply_along_axis(shape):
    x = data(shape, np.float32)
    for axis in range(-len(shape), len(shape)):
        check(lambda xp, a: xp.apply_along_axis(xp.sum, axis, a), x, rtol=1e-5, atol=1e-5)
        check(lambda xp, a: xp.apply_along_axis(lambda v: xp.stack([v[0], v[-1]]), axis, a), x)
        check(lambda xp, a: xp.apply_along_axis(lambda v, k: xp.outer(v, v)[:k], axis, a, 1), x)
    with pytest.raises(ValueError, match="iteration"):
        pm.apply_along_axis(pm.sum, 1, pm.ones((0, 3)))


def test_vectorize_fromfunction():
    f = lambda a, b: a - b if a > b else a + b  # noqa: E731
    x = data((3, 4), np.int32)
    check(lambda xp, a: xp.vectorize(f)(a, 2), x)
    check(lambda xp, a: xp.vectorize(f, otypes=[np.float32])(a, 2.5), x)
    check(lambda xp, a: xp.vectorize(lambda v: (v, v * 2))(a), x)
    check(lambda xp, a: xp.vectorize(lambda v: v.sum(), signature="(n)->()")(a), x)
    check(lambda xp: xp.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int))
    check(lambda xp: xp.fromfunction(lambda i, j: i + j, (0, 2), dtype=np.int32))
    check(lambda xp: xp.fromfunction(lambda i: i / 2, (5,)))


def test_from_buffer_iter_and_as():
    b = np.arange(10, dtype=np.int16).tobytes()
    check(lambda xp: xp.frombuffer(b, dtype=np.int16))
    check(lambda xp: xp.frombuffer(b, dtype=np.int16, count=3, offset=4))
    check(lambda xp: xp.frombuffer(np.arange(3, dtype=np.float32).tobytes(), dtype=np.float32))
    check(lambda xp: xp.frombuffer(np.linspace(0, 1, 5).tobytes()))  # dtype=float: NumPy's bytes, float32 values
    with pytest.raises(ValueError):
        pm.frombuffer(b"abc", dtype=pm.int16)
    check(lambda xp: xp.fromiter((i * i for i in range(5)), dtype=np.int32))
    check(lambda xp: xp.fromiter(iter([]), dtype=np.float32))
    check(lambda xp: xp.fromiter(range(10), dtype=np.uint8, count=4))
    check(lambda xp: xp.asanyarray([[1, 2]], dtype=np.float32))
    check(lambda xp: xp.asarray_chkfinite([1.0, 2.0]))
    check(lambda xp: xp.asarray_chkfinite([], dtype=np.float32))
    for bad in ([1.0, np.nan], [np.inf]):
        with pytest.raises(ValueError, match="infs or NaNs"):
            pm.asarray_chkfinite(bad)


def test_indices_helpers():
    for shape in [(3, 3), (1, 1), (2, 2, 2), (0, 0)]:
        check(lambda xp, a: xp.diag_indices_from(a), np.zeros(shape, np.float32))
    for bad in [(2, 3), (4,)]:
        with pytest.raises(ValueError):
            pm.diag_indices_from(pm.zeros(bad))
    for n in (0, 1, 4):
        for k in (-1, 0, 2):
            got = pm.mask_indices(n, pm.triu, k)
            compare(list(got), list(np.mask_indices(n, np.triu, k)))
            compare(list(pm.mask_indices(n, pm.tril, k)), list(np.mask_indices(n, np.tril, k)))


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 5, 12, 51])
def test_windows(M):
    for name in ("hamming", "hanning", "bartlett", "blackman"):
        check(lambda xp: getattr(xp, name)(M), rtol=1e-5, atol=2e-6)
    with pytest.raises(TypeError):
        pm.hamming(2.5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64], ids=DT_IDS)
def test_matvec_vecmat(dtype):
    for ms, vs in [((3, 4), (4,)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4)), ((0, 2, 3), (3,)), ((1, 1), (1,))]:
        a, v = data(ms, dtype), data(vs, dtype, seed=1)
        check(lambda xp, m, w: xp.matvec(m, w), a, v, rtol=1e-5, atol=1e-4)
        vt = data(vs[:-1] + (ms[-2],), dtype, seed=2)
        check(lambda xp, m, w: xp.vecmat(w, m), a, vt, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError):
        pm.matvec(pm.ones(3), pm.ones(3))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32, np.int64], ids=DT_IDS)
@pytest.mark.parametrize("shape", [(0,), (1,), (13,), (3, 9), (2, 3, 8)], ids=str)
def test_packbits(dtype, shape):
    x = data(shape, dtype, lo=0, hi=2)
    for order in ("big", "little"):
        check(lambda xp, a: xp.packbits(a, bitorder=order), x)
        for axis in range(len(shape)):
            check(lambda xp, a: xp.packbits(a, axis=axis, bitorder=order), x)
    u = data(shape, np.uint8, lo=0, hi=255)
    for order in ("big", "little"):
        check(lambda xp, a: xp.unpackbits(a, bitorder=order), u)
        for axis in range(len(shape)):
            check(lambda xp, a: xp.unpackbits(a, axis=axis, bitorder=order), u)
            for count in (0, 3, -2, 20):
                if count < -u.shape[axis] * 8:
                    with pytest.raises(ValueError, match="-count"):
                        pm.unpackbits(pm.asarray(u), axis=axis, count=count)
                    continue
                if not u.size:  # NumPy leaves the padding of an empty input uninitialized
                    r = pm.unpackbits(pm.asarray(u), axis=axis, count=count)
                    assert r.shape[axis] == count and not r.numpy().any()
                    continue
                check(lambda xp, a: xp.unpackbits(a, axis=axis, count=count), u)
    with pytest.raises(TypeError):
        pm.packbits(pm.ones(3))
    with pytest.raises(TypeError):
        pm.unpackbits(pm.ones(3, dtype=pm.int32))


def test_numpy_dispatch_and_float64():
    # np.<name>(pymetal array) runs pymetal's (interop's NEP 18 table)
    x = pm.asarray([[1.0, 2.0], [3.0, 4.0]])
    r = np.vander(pm.asarray([1, 2, 3]))
    assert isinstance(r, pm.Array)
    assert isinstance(np.rollaxis(x, 1), pm.Array)
    assert isinstance(np.trim_zeros(pm.asarray([0, 1, 0])), pm.Array)
    y = pm.zeros(3)
    np.copyto(y, pm.asarray([1.0, 2.0, 3.0]))
    compare(y, np.array([1.0, 2.0, 3.0], np.float32))
    # float64 data goes through the float64 policy
    old = pm.get_float64_policy()
    try:
        pm.set_float64_policy("host")
        d = np.array([0.0, 1.0, 3.0, 6.0 + 1e-12])
        r = pm.ediff1d(d)
        assert np.asarray(r).dtype == np.float64
        np.testing.assert_array_equal(np.asarray(r), np.ediff1d(d))
    finally:
        pm.set_float64_policy(old)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16], ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_i0(dtype, shape):
    x = data(shape, dtype, lo=-30, hi=30)
    check(lambda xp, a: xp.i0(a), x, rtol=2e-5 if dtype != np.float16 else 2e-3, check_dtype=dtype == np.float32)
    with pytest.raises(TypeError):
        pm.i0(pm.asarray([1j]))


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 7, 50])
@pytest.mark.parametrize("beta", [0.0, 5.0, 14.0])
def test_kaiser(M, beta):
    check(lambda xp: xp.kaiser(M, beta), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_frexp(dtype, shape):
    x = data(shape, dtype, lo=-1000, hi=1000)
    if dtype != np.int32 and x.size:
        f = x.ravel()
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, 2.0 ** -10, 1e-40, 3.4e38, -0.75])
        f[:min(f.size, special.size)] = special[:f.size].astype(dtype)
    m, e = pm.frexp(pm.asarray(x))
    want_dtype = np.float32 if dtype == np.int32 else dtype
    mn, en = np.frexp(x.astype(want_dtype))
    compare(m, mn)
    compare(e, en)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint64, np.bool_], ids=DT_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_bitwise_count(dtype, shape):
    x = data(shape, dtype, lo=-(2 ** 62), hi=2 ** 62)
    if x.size and dtype != np.bool_:
        x.ravel()[0] = np.iinfo(dtype).min
        x.ravel()[-1] = np.iinfo(dtype).max
    check(lambda xp, a: xp.bitwise_count(a), x)
    with pytest.raises(TypeError):
        pm.bitwise_count(pm.ones(2))


def test_layouts():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    p = pm.asarray(x)
    for v, pv in [(x, p), (x.T, p.T), (x[:, ::2], p[:, ::2]), (x[0], p[0])]:
        f = pm.asfortranarray(pv)
        assert pm.isfortran(f) == np.isfortran(np.asfortranarray(v))
        compare(f, np.asfortranarray(v))
        assert pm.isfortran(pv) == np.isfortran(v)
    compare(pm.asfortranarray(3.0), np.asfortranarray(np.float32(3.0)))
    r = pm.require(p.T, dtype=pm.int32, requirements=["C", "W"])
    assert r.is_contiguous
    compare(r, np.require(x.T, np.int32, ["C"]))
    assert pm.require(p) is p and pm.require(p, requirements="O") is not p
    assert pm.isfortran(pm.require(p, requirements="F"))
    with pytest.raises(ValueError):
        pm.require(p, requirements=["C", "F"])
    with pytest.raises(KeyError):
        pm.require(p, requirements=["X"])


def test_apply_over_axes_in1d():
    x = data((2, 3, 4), np.float32)
    for axes in ([0], [0, 2], [-1], (1, 2)):
        check(lambda xp, a: xp.apply_over_axes(xp.sum, a, axes), x, rtol=1e-5, atol=1e-5)
    check(lambda xp, a: xp.apply_over_axes(lambda v, ax: xp.cumsum(v, axis=ax), a, [1]), x, rtol=1e-5, atol=1e-5)
    a, b = data((3, 4), np.int32, lo=0, hi=5), data((3,), np.int32, seed=1, lo=0, hi=5)
    for invert in (False, True):
        compare(pm.in1d(pm.asarray(a), pm.asarray(b), invert=invert), np.isin(a.ravel(), b, invert=invert))
    compare(pm.in1d(pm.asarray(a[:0]), pm.asarray(b)), np.isin(a[:0].ravel(), b))


@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (3, 4)], ids=str)
def test_piecewise(shape):
    x = data(shape, np.float32)
    if not x.size:  # NumPy's piecewise fails on empty input (IndexError); pymetal's gives the empty result
        compare(pm.piecewise(pm.asarray(x), [pm.asarray(x) < 0], [lambda v: -v, 1.0]), x)
        return
    if x.ndim > 1:  # a 2-D condition array is a list of row conditions (NumPy's rule)
        for xp in (np, pm):
            with pytest.raises(ValueError):
                xp.piecewise(xp.asarray(x), xp.asarray(x) > 0, [1])
        x = x.ravel()
    check(lambda xp, a: xp.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v * 2]), x)
    check(lambda xp, a: xp.piecewise(a, [a < -3, a > 3], [-1, lambda v: v + 1, 7]), x)
    check(lambda xp, a: xp.piecewise(a, a > 0, [1]), x)
    check(lambda xp, a: xp.piecewise(a, [a > 0, a > 5], [1, 2]), data(shape, np.int32))
    check(lambda xp, a: xp.piecewise(a, [a > 0], [lambda v, k: v * k], 3), x)
    with pytest.raises(ValueError, match="functions"):
        pm.piecewise(pm.asarray(x), [pm.asarray(x) > 0], [1, 2, 3])


@pytest.mark.parametrize("n", [0, 1, 50])
def test_histogramdd(n):
    pts = data((n, 3), np.float32, seed=2)
    w = data((n,), np.float32, seed=3, lo=0, hi=2)
    f32 = dict(rtol=1e-5, atol=1e-5)
    edges = [np.linspace(-10, 10, 4, dtype=np.float32), np.array([-10, 0, 10], np.float32),
             np.array([-5, -1, 2, 3, 8], np.float32)]
    check(lambda xp, p: xp.histogramdd(p, bins=edges), pts, **f32)
    check(lambda xp, p: xp.histogramdd(p, bins=(2, 3, 4), range=[(-10, 10), (-5, 5), (0, 10)]), pts, **f32)
    check(lambda xp, p, ww: xp.histogramdd(p, bins=edges, weights=ww), pts, w, **f32)
    check(lambda xp, p: xp.histogramdd(p, bins=edges, density=True), pts, **f32)
    check(lambda xp, p: xp.histogramdd([p[:, 0], p[:, 1]], bins=edges[:2]), pts, **f32)
    if n:
        x, y = pts[:, 0], pts[:, 1]
        # integer bins: pymetal's float32 edges over the data's min/max; NumPy counts the same over them
        h, ex, ey = pm.histogram2d(pm.asarray(x), pm.asarray(y), bins=3)
        want = np.histogram2d(x, y, bins=[ex.numpy(), ey.numpy()])[0]
        compare(h, want)
        check(lambda xp, a, b: xp.histogram2d(a, b, bins=edges[0], range=None), x, y, **f32)
        check(lambda xp, a, b: xp.histogram2d(a, b, bins=[edges[0], edges[1]], density=True), x, y, **f32)
    with pytest.raises(ValueError):
        pm.histogramdd(pm.asarray(pts), bins=[2, 3])
    with pytest.raises(ValueError):
        pm.histogram2d(pm.ones(3), pm.ones(2))
