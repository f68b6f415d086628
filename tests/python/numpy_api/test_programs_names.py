"""NumPy names that real programs use around the arithmetic (found by scripts/numpy_programs.py):
scalar types (np.float64(2.5)), `v in x`, round(), divmod(), x.flat, ndenumerate, nditer,
block, file input/output, printing options, unique(axis=), gradient with coordinates,
linalg.cond / multi_dot, and clear errors for what has no kernels."""

import io
import os

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, compare, data

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
         "float32", "float64", "complex64", "complex128", "bool_", "int_", "intp", "single", "half", "double",
         "csingle", "cdouble", "uint", "long", "ulong", "byte", "ubyte", "short", "ushort", "intc", "uintc",
         "longlong", "ulonglong", "uintp"]


@pytest.mark.parametrize("name", NAMES)
def test_dtype_names_are_numpys_scalar_types(name):
    t = getattr(pm, name)
    assert isinstance(t, type) and issubclass(t, np.generic)  # callable and isinstance-able, as NumPy's
    assert np.dtype(t) == np.dtype(getattr(np, name))
    assert np.dtype(t) == t
    if name not in ("float64", "complex128", "double", "cdouble"):
        assert pm.zeros(2, dtype=t).dtype == t
        assert pm.asarray([1, 0]).astype(t).dtype == np.dtype(t)


def test_bfloat16_is_a_scalar_type():
    assert pm.zeros(3, pm.bfloat16).dtype == pm.bfloat16
    assert float(pm.bfloat16(1.5)) == 1.5
    assert pm.isdtype(pm.bfloat16, "real floating")


def test_scalar_types_in_programs():
    a = pm.arange(3)
    r = pm.float64(2.5) * pm.arange(3.0)  # a float64 scalar is strong, as in NumPy: the float64 policy's host path
    assert r.dtype == pm.float64
    compare(r, np.float64(2.5) * np.arange(3.0), check_dtype=False)
    compare(pm.float32(1.5) * a, np.float32(1.5) * np.arange(3), check_dtype=False)
    assert (pm.asarray([250], dtype=pm.uint8) + pm.uint8(10)).tolist() == [4]  # uint8 wraps, as NumPy
    assert isinstance(pm.int64(7), pm.integer) and isinstance(pm.float32(1), pm.floating)
    assert pm.issubdtype(pm.zeros(2).dtype, pm.floating) and pm.issubdtype(a.dtype, pm.signedinteger)
    assert not pm.issubdtype(a.dtype, pm.floating) and pm.issubdtype(pm.complex64, pm.complexfloating)
    assert pm.isdtype(pm.float32, "real floating") and not pm.isdtype(pm.int8, "real floating")
    assert pm.isdtype(pm.asarray([1]).dtype, "integral")
    assert pm.finfo(pm.float32).eps == np.finfo(np.float32).eps and pm.iinfo(pm.int16).max == 32767
    assert pm.result_type(pm.int8, pm.float16) == pm.float16 and pm.can_cast(pm.int8, pm.int32)
    assert pm.__array_namespace_info__().dtypes()["float32"] == pm.float32
    with pytest.raises(TypeError, match="isdtype"):
        pm.isdtype("float32", "real floating")
    assert isinstance(a, pm.ndarray) and pm.dtype("float32") == pm.float32


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5)], ids=str)
def test_contains(dtype, shape):
    x = data(shape, dtype, lo=0, hi=5)
    a = pm.asarray(x)
    for v in (0, 1, 3, 7, True):
        assert (v in a) is (v in x)


def test_round_and_divmod():
    x = pm.asarray([3.0, 1.0, 4.5])
    assert round(x.mean(), 2).item() == pytest.approx(round(float(np.mean([3.0, 1.0, 4.5])), 2), abs=1e-6)
    r = round(pm.asarray(2.5))
    assert r == 2 and type(r) is int  # a 0-d array rounds as NumPy's scalars: to even, an int
    with pytest.raises(TypeError, match="pm.round"):
        round(x)
    check(lambda xp, a: divmod(a, 4), data((2, 5), np.int64))
    check(lambda xp, a: divmod(7, a), data((6,), np.int64, lo=1, hi=5))
    check(lambda xp, a: divmod(a, 1.5), data((6,), np.float32))


@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (3, 4), (2, 3, 2)], ids=str)
def test_flat(shape):
    x = data(shape, np.int64)
    a = pm.asarray(x)
    assert [int(v) for v in a.flat] == x.flat[:].tolist() and len(a.flat) == x.size
    if x.size:
        assert int(a.flat[x.size - 1]) == x.flat[x.size - 1]
        compare(a.flat[1:], x.flat[1:])
        a.flat[0] = 99
        x.flat[0] = 99
        a.flat[[x.size - 1]] = -5
        x.flat[[x.size - 1]] = -5
        a.flat[::2] = 7
        x.flat[::2] = 7
    compare(a, x)
    compare(a.flat.copy(), x.flat.copy())


def test_flat_of_a_view_writes_the_array():
    x = np.arange(20).reshape(4, 5)
    a = pm.asarray(x)
    v, w = a[1:3, ::2], x[1:3, ::2]
    v.flat[[0, 5]] = -1
    w.flat[[0, 5]] = -1
    compare(a, x)
    with pytest.raises(IndexError):
        a.flat[100] = 1


def test_ndenumerate_and_nditer():
    x = data((2, 3), np.float32)
    assert [(i, float(v)) for i, v in pm.ndenumerate(pm.asarray(x))] == [(i, float(v)) for i, v in np.ndenumerate(x)]
    assert list(pm.ndenumerate(pm.zeros((0, 2)))) == []
    a, b = pm.arange(3).reshape(3, 1), pm.arange(3).reshape(1, 3)
    it = pm.nditer([a, b, None])
    for p, q, r in it:
        r[...] = p + q
    np.testing.assert_array_equal(it.operands[2], np.arange(3)[:, None] + np.arange(3))
    c = pm.zeros(4, pm.int64)
    with pm.nditer(c, op_flags=["readwrite"]) as it2:
        for v in it2:
            v[...] = 5
    assert c.tolist() == [5, 5, 5, 5]  # writes go to the pymetal array


@pytest.mark.parametrize("case", range(6))
def test_block(case):
    A, B = np.ones((2, 2)), np.zeros((2, 1))
    C, D = np.full((1, 2), 3.0), np.full((1, 1), 4.0)
    cases = [lambda xp, a, b, c, d: xp.block([[a, b], [c, d]]),
             lambda xp, a, b, c, d: xp.block([a[0], b[:, 0], d[0]]),
             lambda xp, a, b, c, d: xp.block([[a], [c]]),
             lambda xp, a, b, c, d: xp.block([[[a]], [[a]]]),
             lambda xp, a, b, c, d: xp.block(a),
             lambda xp, a, b, c, d: xp.block([[1, 2], [3, 4]])]
    check(cases[case], A, B, C, D, check_dtype=False)


def test_block_errors():
    with pytest.raises(ValueError, match="depth"):
        pm.block([[pm.ones(2)], pm.ones(2)])
    with pytest.raises(TypeError, match="tuple"):
        pm.block((pm.ones(2), pm.ones(2)))
    with pytest.raises(ValueError, match="empty"):
        pm.block([])


def test_files_round_trip(tmp_path):
    x = data((3, 4), np.float32)
    path = str(tmp_path / "a.npy")
    pm.save(path, pm.asarray(x))
    compare(pm.load(path), x)
    pm.savez(str(tmp_path / "b.npz"), first=pm.asarray(x), second=pm.arange(3))
    with pm.load(str(tmp_path / "b.npz")) as z:
        assert sorted(z.files) == ["first", "second"]
        compare(z["first"], x)
        compare(z["second"], np.arange(3))
    f = io.BytesIO()
    pm.savez_compressed(f, pm.asarray(x))
    f.seek(0)
    compare(pm.load(f)["arr_0"], x)
    txt = str(tmp_path / "a.txt")
    pm.savetxt(txt, pm.asarray(x), fmt="%.6f")
    compare(pm.loadtxt(txt, dtype=np.float32), np.loadtxt(txt, dtype=np.float32))
    compare(pm.genfromtxt(io.StringIO("1,2\n3,"), delimiter=",", dtype=np.float32),
            np.genfromtxt(io.StringIO("1,2\n3,"), delimiter=",", dtype=np.float32))
    compare(pm.fromstring("1 2 3", sep=" "), np.fromstring("1 2 3", sep=" ").astype(np.float32))
    with pytest.raises(FileNotFoundError):
        pm.load(str(tmp_path / "missing.npy"))


def test_load_still_loads_metal_libraries(tmp_path):
    path = os.path.join(str(tmp_path), "twice.metal")
    with open(path, "w") as f:
        f.write("kernel void twice(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2.0f; }")
    x = pm.asarray([1.0, 5.0])
    pm.load(path).twice(x, grid=2)
    assert x.tolist() == [2.0, 10.0]
    with pytest.raises(FileNotFoundError):
        pm.load(os.path.join(str(tmp_path), "nothing.metal"))


def test_printing_options():
    x = pm.asarray([1 / 3, 2 / 3])
    with pm.printoptions(precision=3):
        assert str(x) == "[0.333 0.667]" and "0.333" in repr(x)
    old = pm.get_printoptions()["precision"]
    pm.set_printoptions(precision=2)
    try:
        assert str(x) == "[0.33 0.67]"
    finally:
        pm.set_printoptions(precision=old)
    assert pm.array2string(x, precision=1) == "[0.3 0.7]" and pm.array_str(pm.asarray([1, 2])) == "[1 2]"
    assert pm.array_repr(pm.asarray([1, 2])) == repr(pm.asarray([1, 2]))
    old_err = pm.seterr(all="ignore")
    assert pm.geterr()["divide"] == "ignore"
    pm.seterr(**old_err)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("shape", [(0, 3), (1, 2), (7, 2), (5, 3), (4, 3, 2), (3, 0)], ids=str)
def test_unique_axis(dtype, shape):
    x = data(shape, dtype, lo=0, hi=1)  # few values: many equal sub-arrays
    for axis in range(-len(shape), len(shape)):
        check(lambda xp, a: xp.unique(a, axis=axis), x)
        check(lambda xp, a: xp.unique(a, True, True, True, axis=axis), x)


def test_unique_axis_nan_rows_are_distinct():
    x = np.array([[np.nan, 1], [np.nan, 1], [0, 1]], np.float32)
    check(lambda xp, a: xp.unique(a, axis=0, return_counts=True), x)
    with pytest.raises(np.exceptions.AxisError):
        pm.unique(pm.ones((2, 2)), axis=2)


@pytest.mark.parametrize("n, edge_order", [(2, 1), (3, 1), (8, 1), (17, 1), (3, 2), (8, 2), (17, 2)])
def test_gradient_coordinates(n, edge_order):
    rng = np.random.default_rng(n)
    xs = np.cumsum(rng.random(n) + 0.1).astype(np.float32)
    f1 = data((n,), np.float32)
    check(lambda xp, f, c: xp.gradient(f, c, edge_order=edge_order), f1, xs, rtol=1e-3, atol=1e-3)
    f2 = data((n, 4), np.float32)
    check(lambda xp, f, c: xp.gradient(f, c, 0.5, edge_order=edge_order), f2, xs, rtol=1e-3, atol=1e-3)
    check(lambda xp, f, c: xp.gradient(f, c, axis=0, edge_order=edge_order), f2, xs, rtol=1e-3, atol=1e-3)
    check(lambda xp, f, c: xp.gradient(f, c.astype(np.int64), axis=0), f2, np.arange(n) * 2, rtol=1e-3, atol=1e-3)


def test_gradient_coordinate_errors():
    with pytest.raises(ValueError, match="coordinate array"):
        pm.gradient(pm.ones(4), pm.arange(3.0))
    with pytest.raises(TypeError, match="one per axis"):
        pm.gradient(pm.ones((3, 3)), pm.arange(3.0))
    with pytest.raises(ValueError, match="edge_order"):
        pm.gradient(pm.ones(2), pm.arange(2.0), edge_order=2)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, -np.inf, "fro"])
def test_cond(p):
    a = data((4, 4), np.float32) + 10 * np.eye(4, dtype=np.float32)
    check(lambda xp, m: xp.linalg.cond(m, p), a, rtol=1e-3, atol=1e-3)
    check(lambda xp, m: xp.linalg.cond(m, p), np.stack([a, a.T]), rtol=1e-3, atol=1e-3)
    with pytest.raises(pm.linalg.LinAlgError):
        pm.linalg.cond(pm.ones(3))


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 4)], [(2, 3), (3, 4), (4, 5)], [(9, 2), (2, 9), (9, 3)],
                                    [(3,), (3, 4), (4,)], [(3,), (3, 2), (2, 2), (2, 1)]], ids=str)
def test_multi_dot(shapes):
    arrays = [data(s, np.float32, seed=i) for i, s in enumerate(shapes)]
    check(lambda xp, *ms: xp.linalg.multi_dot(list(ms)), *arrays, rtol=1e-4, atol=1e-3)
    out = pm.empty(np.linalg.multi_dot(arrays).shape, pm.float32)
    assert pm.linalg.multi_dot([pm.asarray(a) for a in arrays], out=out) is out
    with pytest.raises(ValueError, match="two"):
        pm.linalg.multi_dot([pm.ones((2, 2))])
    with pytest.raises(ValueError, match="2-D"):
        pm.linalg.multi_dot([pm.ones((2, 2)), pm.ones(2), pm.ones((2, 2))])


@pytest.mark.parametrize("make, what", [
    (lambda: pm.asarray(["a", "b"]), "strings"), (lambda: pm.asarray([1, "a"], dtype=object), "Python objects"),
    (lambda: pm.arange(3).astype(str), "strings"), (lambda: pm.zeros(2, dtype="datetime64[s]"), "dates")])
# (pm.random.choice of strings gives a NumPy array: tests/python/arrays/test_random_distributions.py)
def test_no_kernels_for_text_objects_dates(make, what):
    with pytest.raises(TypeError, match="keep %s in a NumPy array" % what):
        make()


def test_lists_where_numpy_takes_them():
    check(lambda xp: xp.var([1, 2, 3, 4], ddof=1))
    check(lambda xp: xp.std([[1.0, 2.0], [4.0, 8.0]], axis=0))
    for like in ("zeros_like", "ones_like", "empty_like"):
        got, want = getattr(pm, like)([[1, 2]]), getattr(np, like)([[1, 2]])
        assert got.shape == want.shape and got.dtype == want.dtype
    check(lambda xp: xp.full_like([1.5, 2.5], 3), check_dtype=False)
    assert pm.zeros_like([1.5]).dtype == pm.float32  # Python floats: the default float


def test_histogram_returns_integer_edges_as_given():
    check(lambda xp, a: xp.histogram(a, bins=[0, 1, 2, 3]), np.array([1, 2, 2, 3]))
    check(lambda xp, a: xp.histogram(a, bins=[0.0, 1.5, 3.0]), np.array([1, 2, 2, 3]))


def test_compress_and_choose_methods():
    check(lambda xp, a: a.compress([True, False, True]), np.array([1, 2, 3]))
    check(lambda xp, a: a.compress([False, True], axis=1), np.arange(6).reshape(3, 2))
    check(lambda xp, a: a.choose([[10, 11, 12], [20, 21, 22], [30, 31, 32]]), np.array([0, 1, 2]))
    check(lambda xp, a: a.choose([5, 7], mode="clip"), np.array([-1, 0, 1, 2]))


@pytest.mark.parametrize("key", [[True, False, True], ([True, False], slice(None)), (slice(None), [False, True, True]),
                                 ([True, True], [0, 2]), [np.True_, np.False_, np.True_]], ids=str)
def test_lists_of_bools_are_masks(key):
    x = np.arange(6).reshape(2, 3) if isinstance(key, tuple) else np.arange(3)
    check(lambda xp, a: a[key], x)

    def put(xp, a):
        a[key] = -1
        return a
    check(put, x)
    check(lambda xp, a: a[[1, 0]], x)  # integer lists stay integer indices
    check(lambda xp, a: a[[]], x)


def test_struct_arrays_fill_and_name_their_fields():
    d = np.dtype([("x", np.float32), ("y", np.int32)])
    for make in (lambda xp: xp.zeros(3, d), lambda xp: xp.ones((2, 2), d), lambda xp: xp.full(2, 5, d)):
        got, want = make(pm), make(np)
        assert got.dtype == d and got.shape == want.shape
        assert got.numpy().tolist() == want.tolist()
    z = pm.zeros(3, d)
    z.numpy()["y"][:] = 4  # NumPy's view writes reach the array
    assert z.numpy()["y"].tolist() == [4, 4, 4] and z["y"].numpy().tolist() == [4, 4, 4]


@pytest.mark.parametrize("name, what", [("ma", "nan-functions"), ("matrix", "@"), ("datetime64", "int64"),
                                        ("char", "numpy.char"), ("strings", "numpy.strings"), ("longdouble", "float64")])
def test_numpy_names_pymetal_lacks_say_what_to_do(name, what):
    with pytest.raises(AttributeError, match="NumPy's %s is not in pymetal:.*%s" % (name, what)):
        getattr(pm, name)
    assert not hasattr(pm, name)
    with pytest.raises(AttributeError, match="^module 'pymetal' has no attribute 'nonsense'$"):
        pm.nonsense  # noqa: B018
