"""NumPy's functions on pymetal arrays (issue 23), NumPy as the oracle: dtypes, shapes
(empty, size 1, odd sizes), axes and special values."""

import math

import numpy as np
import pytest

import pymetal as pm
from npcompare import check, compare, data

NUM = [np.float32, np.int32, np.int64, np.uint8]
DT_IDS = lambda d: np.dtype(d).name  # noqa: E731


# ---- products --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64], ids=DT_IDS)
@pytest.mark.parametrize("sa,sb", [((), (3,)), ((5,), (5,)), ((1,), (1,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((2, 3), (3, 4)), ((2, 2, 3), (3, 5)), ((2, 3), (4, 3, 2)), ((0, 3), (3, 2))],
                         ids=str)
def test_dot_family(dtype, sa, sb):
    a, b = data(sa, dtype, 1, -3, 3), data(sb, dtype, 2, -3, 3)
    check(lambda xp, x, y: xp.dot(x, y), a, b, rtol=1e-5, atol=1e-4)
    check(lambda xp, x, y: xp.outer(x, y), a, b, rtol=1e-5)
    check(lambda xp, x, y: xp.kron(x, y), a, b, rtol=1e-5)
    if a.size == b.size:
        check(lambda xp, x, y: xp.vdot(x, y), a, b, rtol=1e-5, atol=1e-4)
    if not sa or not sb or sa[-1] == sb[-1]:
        check(lambda xp, x, y: xp.inner(x, y), a, b, rtol=1e-5, atol=1e-4)


def test_diagonal_is_a_read_only_view():
    x = pm.asarray(np.arange(9).reshape(3, 3))
    d = pm.diagonal(x)
    assert not d.flags.writeable and not np.diagonal(np.eye(2)).flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        d[0] = 5
    with pytest.raises(ValueError, match="read-only"):
        x.diagonal().fill(1)
    assert pm.linalg.diagonal(x).flags.writeable  # the standard's


def test_dot_out_and_mismatch():
    a = pm.ones((2, 3))
    out = pm.empty((2, 2))
    assert pm.dot(a, a.T, out=out) is out
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(ValueError):
        pm.dot(a, a)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,i", [(5,), (5,)]), ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->", [(4,), (4,), (4,)]), ("ijj->i", [(2, 3, 3)]), ("ij,ij->i", [(3, 4), (3, 4)]),
    ("i,ij->j", [(0,), (0, 3)]), ("ba,ab->", [(3, 2), (2, 3)]), ("...,...", [(2, 3), (3,)]),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=DT_IDS)
def test_einsum(subscripts, shapes, dtype):
    ops = [data(s, dtype, k, -3, 3) for k, s in enumerate(shapes)]
    check(lambda xp, *xs: xp.einsum(subscripts, *xs), *ops, rtol=1e-5, atol=1e-4)


def test_einsum_errors():
    a = pm.ones((2, 3))
    with pytest.raises(ValueError, match="operands"):
        pm.einsum("ij,jk", a)
    with pytest.raises(ValueError, match="labels"):
        pm.einsum("ijk", a)
    with pytest.raises(ValueError, match="sizes"):
        pm.einsum("ij,ij", a, pm.ones((3, 2)))
    with pytest.raises(TypeError, match="subscripts"):
        pm.einsum(a, [0, 1])


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (1, 1), (0, 3), (2, 3, 4)], ids=str)
def test_diag_trace_tri(shape):
    x = data(shape, np.int32)
    for k in (0, 1, -1, 5):
        check(lambda xp, a: xp.diagonal(a, k), x)
        check(lambda xp, a: xp.trace(a, k), x)
        check(lambda xp, a: xp.tril(a, k), x)
        check(lambda xp, a: xp.triu(a, k), x)
        if len(shape) == 2:
            check(lambda xp, a: xp.diag(a, k), x)
    if len(shape) == 3:
        check(lambda xp, a: xp.diagonal(a, 0, 2, 0), x)
        check(lambda xp, a: xp.trace(a, 1, axis1=1, axis2=2), x)
    v = data(shape[-1:], np.float32)
    for k in (0, 2, -1):
        check(lambda xp, a: xp.diag(a, k), v)
        check(lambda xp, a: xp.diagflat(a, k), v)


# ---- creation ------------------------------------------------------------------------------

def test_creation():
    check(lambda xp: xp.eye(3, 4, 1))
    check(lambda xp: xp.eye(3, k=-1, dtype=int))
    check(lambda xp: xp.identity(4))
    for args in [(0, 1), (0, 1, 5), (-2.5, 7, 1), (3, -3, 0), (0, 10, 7)]:
        check(lambda xp: xp.linspace(*args), rtol=1e-6, atol=1e-6)
        check(lambda xp: xp.linspace(*args, endpoint=False), rtol=1e-6, atol=1e-6)
        check(lambda xp: xp.logspace(*args), rtol=1e-5)
    got, step = pm.linspace(0, 1, 5, retstep=True)
    assert step == 0.25
    check(lambda xp, a, b: xp.linspace(a, b, 4), np.array([0.0, 1.0], np.float32), np.array([2.0, -1.0], np.float32),
          rtol=1e-6, atol=1e-6)
    check(lambda xp, a, b: xp.linspace(a, b, 3, axis=1), np.array([0.0, 1.0], np.float32),
          np.array([2.0, -1.0], np.float32), rtol=1e-6, atol=1e-6)
    check(lambda xp: xp.geomspace(1, 1000, 4), rtol=1e-6)
    check(lambda xp: xp.geomspace(-2, -162, 5), rtol=1e-5)
    check(lambda xp: xp.geomspace(1, 256, 9, endpoint=False), rtol=1e-5)
    with pytest.raises(ValueError, match="non-zero"):
        pm.geomspace(0, 1)
    for idx in ("xy", "ij"):
        check(lambda xp, a, b: xp.meshgrid(a, b, indexing=idx), np.arange(3), np.arange(4.0, dtype=np.float32))
        check(lambda xp, a, b, c: xp.meshgrid(a, b, c, indexing=idx, sparse=True), np.arange(3), np.arange(2),
              np.arange(4))
    check(lambda xp: xp.indices((2, 3)))
    check(lambda xp: xp.indices((3, 1, 2), sparse=True))


# ---- shapes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2,), (5,)], [(2, 3), (2, 3)], [(1, 2, 3), (1, 2, 3)], [(), ()],
                                    [(0,), (4,)], [(2, 3)]], ids=str)
def test_stacks(shapes):
    arrays = [data(s, np.int32, k) for k, s in enumerate(shapes)]
    for fn in ("hstack", "vstack", "dstack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d"):
        same = all(a.shape == arrays[0].shape for a in arrays)
        if fn in ("vstack", "dstack", "column_stack") and not same:
            continue
        if fn.startswith("atleast"):
            check(lambda xp, *xs: getattr(xp, fn)(*xs), *arrays)
        else:
            check(lambda xp, *xs: getattr(xp, fn)(list(xs)), *arrays)
    if all(a.shape == arrays[0].shape for a in arrays):
        check(lambda xp, *xs: xp.stack(xs, -1), *arrays)
    if arrays[0].ndim:
        check(lambda xp, *xs: xp.concatenate(xs, 0), *arrays)
        check(lambda xp, *xs: xp.concatenate(xs, None), *arrays)
        check(lambda xp, *xs: xp.concatenate(xs, dtype=xp.float32), *arrays)


def test_stack_errors():
    with pytest.raises(TypeError, match="sequence"):
        pm.hstack(pm.ones(3))
    with pytest.raises(ValueError, match="at least one"):
        pm.vstack([])


@pytest.mark.parametrize("n,sections", [(7, 3), (6, 3), (0, 2), (2, 5), (9, [2, 5]), (5, 1)], ids=str)
def test_array_split(n, sections):
    x = np.arange(n * 2).reshape(n, 2)
    check(lambda xp, a: xp.array_split(a, sections), x)
    check(lambda xp, a: xp.array_split(a.T, sections, axis=1), x)
    if isinstance(sections, int) and n % sections == 0:
        check(lambda xp, a: xp.split(a, sections), x)
    with pytest.raises(ValueError):
        pm.array_split(pm.asarray(x), 0)


@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (3, 4)], ids=str)
def test_append_insert_delete(shape):
    x = data(shape, np.int64)
    n = x.shape[0]
    check(lambda xp, a: xp.append(a, [7, 8]), x)
    if len(shape) == 2:
        check(lambda xp, a: xp.append(a, a[:1], axis=0), x)
        check(lambda xp, a: xp.insert(a, 1, 5, axis=1), x)
        check(lambda xp, a: xp.insert(a, [0, 2], [[1], [2], [3]], axis=1), x)
        check(lambda xp, a: xp.insert(a, 2, [9, 8, 7, 6], axis=0), x)
        check(lambda xp, a: xp.delete(a, 1, axis=1), x)
        check(lambda xp, a: xp.delete(a, [0, -1], axis=0), x)
    for obj in ([0], [n], [0, n, 0], slice(0, n, 2), -1 if n else 0):
        check(lambda xp, a: xp.insert(a, obj, 9), x)
    check(lambda xp, a: xp.insert(a, [0, n], [5, 6]), x)
    check(lambda xp, a: xp.insert(a, 0, [5, 6]), x)
    if n:
        for obj in (0, [0, n - 1], slice(None, None, 2), -1, np.arange(x.size) % 2 == 0):
            check(lambda xp, a: xp.delete(a, obj), x)
        with pytest.raises(IndexError):
            pm.delete(pm.asarray(x), x.size)
    with pytest.raises(IndexError, match="out of bounds"):
        pm.insert(pm.asarray(x), x.size + 1, 0)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("shape", [(1,), (4,), (3, 5), (2, 1, 3)], ids=str)
def test_pad(mode, shape):
    x = data(shape, np.float32)
    for width in (0, 1, 2, (1, 3), [(0, 2)] + [(1, 0)] * (len(shape) - 1), 7):
        if mode in ("reflect",) and width == 7 and min(shape) == 1:
            pass
        kw = {}
        check(lambda xp, a: xp.pad(a, width, mode, **kw), x)
    if mode == "constant":
        check(lambda xp, a: xp.pad(a, 2, constant_values=5), x)
        check(lambda xp, a: xp.pad(a, 1, constant_values=[(1, 2)] * len(shape)), x)


def test_pad_errors():
    with pytest.raises(ValueError, match="mode must be"):
        pm.pad(pm.ones(3), 1, "bogus")  # (median is supported: test_programs_pad.py)
    with pytest.raises(ValueError, match=">= 0"):
        pm.pad(pm.ones(3), -1)
    with pytest.raises(ValueError, match="empty"):
        pm.pad(pm.ones(0), 1, "edge")
    with pytest.raises(TypeError, match="unsupported"):
        pm.pad(pm.ones(3), 1, "edge", constant_values=2)


def test_shape_functions():
    x = data((2, 3, 4), np.int32)
    for k in (0, 1, 2, 3, -1, 5):
        check(lambda xp, a: xp.rot90(a, k), x)
        check(lambda xp, a: xp.rot90(a, k, (2, 0)), x)
    check(lambda xp, a: xp.swapaxes(a, 0, -1), x)
    check(lambda xp, a: xp.fliplr(a), x)
    check(lambda xp, a: xp.flipud(a), x)
    check(lambda xp, a: xp.flip(a, 1), x)
    check(lambda xp, a: xp.roll(a, 2, 1), x)
    check(lambda xp, a: xp.roll(a, -3), x)
    check(lambda xp, a: xp.take(a, [1, 0], 1), x)
    check(lambda xp, a: xp.repeat(a, 2, 2), x)
    check(lambda xp, a: xp.tensordot(a, a, 1), x[0, :, :3])
    check(lambda xp, a: xp.resize(a, (5, 7)), x)
    check(lambda xp, a: xp.resize(a, 3), x)
    check(lambda xp, a: xp.searchsorted(a, [1, 5], "right"), np.arange(10))
    assert pm.shape(pm.asarray(x)) == (2, 3, 4) and pm.ndim(pm.asarray(x)) == 3 and pm.size(pm.asarray(x), 1) == 3


# ---- logic -------------------------------------------------------------------------------------

def test_isclose_allclose_equal():
    a = np.array([1.0, 1.0001, np.nan, np.inf, -np.inf, 0.0, 1e-9], np.float32)
    b = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 1e-9, 0.0], np.float32)
    for en in (False, True):
        check(lambda xp, x, y: xp.isclose(x, y, equal_nan=en), a, b)
        check(lambda xp, x, y: xp.isclose(x, y, 1e-3, 0.0, en), a, b)
        check(lambda xp, x, y: xp.allclose(x, y, equal_nan=en), a, a)
        check(lambda xp, x, y: xp.array_equal(x, y, equal_nan=en), a, a)
    check(lambda xp, x, y: xp.allclose(x, y), a, b)
    check(lambda xp, x: xp.isclose(x, 1), np.arange(3))
    check(lambda xp, x, y: xp.array_equal(x, y), np.arange(3), np.arange(4))
    check(lambda xp, x, y: xp.array_equiv(x, y), np.ones((2, 3), np.float32), np.ones(3, np.float32))
    check(lambda xp, x, y: xp.array_equiv(x, y), np.ones((2, 3), np.float32), np.ones(2, np.float32))
    assert pm.allclose(pm.zeros(0), pm.zeros(0)) is True


@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 4)], ids=str)
def test_where_nonzero_family(shape):
    x = data(shape, np.int32, lo=-1, hi=1)
    if x.ndim:
        check(lambda xp, a: xp.where(a > 0), x)
    else:  # as NumPy: nonzero of a 0-d array is an error
        with pytest.raises(ValueError, match="0-d"):
            pm.where(pm.asarray(x) > 0)
    check(lambda xp, a: xp.where(a > 0, a, -a), x)
    check(lambda xp, a: xp.argwhere(a), x)
    check(lambda xp, a: xp.flatnonzero(a), x)
    check(lambda xp, a: xp.select([a < 0, a > 0], [a * 10, a + 100], 7), x)
    with pytest.raises(ValueError, match="both"):
        pm.where(pm.asarray(x), 1)


def test_nan_to_num():
    x = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    check(lambda xp, a: xp.nan_to_num(a), x)
    check(lambda xp, a: xp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), x)
    check(lambda xp, a: xp.nan_to_num(a), np.arange(3))


def test_unravel_ravel_multi_index():
    idx = np.array([0, 5, 11, 7])
    for order in ("C", "F"):
        check(lambda xp, i: xp.unravel_index(i, (3, 4), order=order), idx)
        check(lambda xp, i, j: xp.ravel_multi_index((i, j), (4, 5), order=order), np.array([0, 3, 1]),
              np.array([4, 0, 2]))
    check(lambda xp, i, j: xp.ravel_multi_index((i, j), (4, 5), mode="wrap"), np.array([0, 7, -1]), np.array([4, 0, 9]))
    check(lambda xp, i, j: xp.ravel_multi_index((i, j), (4, 5), mode="clip"), np.array([0, 7, -1]), np.array([4, 0, 9]))
    check(lambda xp, i: xp.unravel_index(i, (2, 3)), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="out of bounds"):
        pm.unravel_index(pm.asarray([12]), (3, 4))
    with pytest.raises(ValueError, match="invalid entry"):
        pm.ravel_multi_index((pm.asarray([4]), pm.asarray([0])), (4, 5))


# ---- NumPy's ufunc names and methods ----------------------------------------------------------

_BINARY_ALIASES = [(n, d) for n in ("power", "mod", "fmod", "fmax", "fmin", "divmod") for d in (np.float32, np.int32)] + [
    (n, np.float32) for n in ("arctan2", "true_divide", "heaviside")] + [(n, np.int32) for n in ("left_shift", "right_shift")]


@pytest.mark.parametrize("name,dtype", _BINARY_ALIASES, ids=lambda v: v if isinstance(v, str) else DT_IDS(v))
def test_binary_aliases(name, dtype):
    a = data((17,), dtype, 1, -9, 9)
    b = data((17,), dtype, 2, 1, 5)
    if dtype == np.float32 and name in ("fmax", "fmin"):
        a[3], b[4], a[5], b[5] = np.nan, np.nan, np.nan, np.nan
    if name in ("left_shift", "right_shift"):
        a = np.abs(a)
    check(lambda xp, x, y: getattr(xp, name)(x, y), a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute",
                                  "conjugate", "degrees", "radians", "deg2rad", "rad2deg", "fabs", "rint", "fix",
                                  "around", "round", "cbrt", "invert", "bitwise_not", "angle", "amax", "amin"])
def test_unary_aliases(name):
    x = np.array([-0.9, -0.5, 0.0, 0.25, 0.5, 0.99, 1.5, 2.5, -27.0, 8.0], np.float32)
    if name == "arccosh":
        x = np.abs(x) + 1
    if name in ("arcsin", "arccos", "arctanh"):
        x = x[np.abs(x) < 1]
    if name in ("invert", "bitwise_not"):
        x = np.arange(-3, 4, dtype=np.int32)
    check(lambda xp, a: getattr(xp, name)(a), x, rtol=1e-5, atol=1e-6)
    if name in ("fabs", "degrees", "fix", "cbrt", "amax", "rint", "absolute"):
        check(lambda xp, a: getattr(xp, name)(a), np.arange(-4, 5, dtype=np.int32) ** 3, rtol=1e-5, atol=1e-6)
    if name == "angle":
        check(lambda xp, a: xp.angle(a, deg=True), np.array([1j, -1, 1 + 1j, -1j], np.complex64), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_], ids=DT_IDS)
@pytest.mark.parametrize("shape", [(0,), (1,), (6,), (3, 4)], ids=str)
def test_ufunc_methods(dtype, shape):
    x = data(shape, dtype, lo=0, hi=4)
    names = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or"]
    for name in names:
        if x.size == 0 and name in ("maximum", "minimum"):
            continue
        check(lambda xp, a: getattr(xp, name).reduce(a), x)
        if len(shape) == 2:
            check(lambda xp, a: getattr(xp, name).reduce(a, 1), x)
            check(lambda xp, a: getattr(xp, name).reduce(a, axis=None, keepdims=True), x)
        check(lambda xp, a: getattr(xp, name).outer(a, a[:2]), x)
    if dtype != np.bool_:
        check(lambda xp, a: xp.add.reduce(a, initial=5), x)
        check(lambda xp, a: xp.add.accumulate(a), x)
        check(lambda xp, a: xp.multiply.accumulate(a, dtype=xp.int64), x)
        check(lambda xp, a: xp.subtract.outer(a, a), x)
    if dtype == np.float32 and x.size:
        check(lambda xp, a: xp.maximum.accumulate(a), x)  # NumPy's on the shared memory
        check(lambda xp, a: xp.add.reduceat(a, [0, 1] if a.shape[0] > 1 else [0]), x)
    # NumPy's ufuncs on pymetal arrays reach the same methods
    got = np.add.reduce(pm.asarray(x))
    compare(got, np.add.reduce(x))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8], ids=DT_IDS)
def test_ufunc_at(dtype):
    base = data((6, 3), dtype, lo=0, hi=5)
    idx = np.array([0, 2, 2, 5, 0, 0, -1])
    vals = data((7, 3), dtype, 3, 0, 3)
    for name in ("add", "subtract", "multiply", "maximum"):
        want = base.copy()
        getattr(np, name).at(want, idx, vals)
        got = pm.asarray(base.copy())
        assert getattr(pm, name).at(got, pm.asarray(idx), pm.asarray(vals)) is None
        compare(got, want)
        got2 = pm.asarray(base.copy())
        getattr(np, name).at(got2, idx, 1)  # NumPy's ufunc method through __array_ufunc__
        want2 = base.copy()
        getattr(np, name).at(want2, idx, 1)
        compare(got2, want2)
    empty = pm.asarray(base.copy())
    pm.add.at(empty, pm.asarray(np.zeros(0, np.int64)), 1)
    compare(empty, base)
    with pytest.raises(IndexError, match="out of bounds"):
        pm.add.at(pm.asarray(base.copy()), pm.asarray([6]), 1)
    with pytest.raises(TypeError, match="pymetal Array"):
        pm.add.at(base, [0], 1)
    with pytest.raises(ValueError, match="read-only"):
        pm.add.at(pm.broadcast_to(pm.asarray([1]), (3,)), pm.asarray([0]), 1)


def test_numpy_aliases_are_the_table_functions():
    assert pm.power is pm.pow and pm.arctan2 is pm.atan2 and pm.absolute is pm.abs and pm.mod is pm.remainder
    assert pm.amax is pm.max and pm.around is pm.round and pm.conjugate is pm.conj
    assert math.isclose(float(pm.degrees(pm.asarray(pm.pi))), 180.0, rel_tol=1e-6)


# ---- pm.lib.stride_tricks ------------------------------------------------------------------------

def test_sliding_window_view():
    from pymetal.lib.stride_tricks import sliding_window_view as pm_swv
    from numpy.lib.stride_tricks import sliding_window_view as np_swv
    x = data((5, 6), np.float32)
    for w, ax in [(3, None), ((2, 3), None), (2, 1), ((2, 2), (0, 1)), (5, 0), (1, -1)]:
        if ax is None and not isinstance(w, tuple):
            got, want = pm_swv(pm.asarray(x.reshape(-1)), w), np_swv(x.reshape(-1), w)
        else:
            got, want = pm_swv(pm.asarray(x), w, ax), np_swv(x, w, ax)
        compare(got, want)
        assert not got.flags.writeable
    a = pm.asarray(x)
    v = pm_swv(a, 2, 1, writeable=True)
    v[0, 0, 1] = 100.0
    assert float(a[0, 1]) == 100.0  # a view of a's memory
    with pytest.raises(ValueError, match="larger"):
        pm_swv(a, 7, 1)
    assert pm.lib.stride_tricks.sliding_window_view is pm_swv


def test_as_strided():
    from pymetal.lib.stride_tricks import as_strided
    x = pm.arange(12, dtype=pm.int32)
    compare(as_strided(x, (3, 4), (16, 4)), np.arange(12, dtype=np.int32).reshape(3, 4))
    compare(as_strided(x, (4, 3), (4, 4)), np.lib.stride_tricks.as_strided(np.arange(12, dtype=np.int32), (4, 3), (4, 4)))
    ro = as_strided(x, (2,), (4,), writeable=False)
    with pytest.raises(ValueError, match="read-only"):
        ro[0] = 1
    with pytest.raises(ValueError, match="outside"):
        as_strided(x, (3, 4), (4096 * 1024, 4))
    with pytest.raises(ValueError, match="outside"):
        as_strided(x[2:], (2,), (-16,))


def test_numpy_functions_dispatch_to_pymetal():
    # NEP 18: NumPy's functions on pymetal arrays run these and return pymetal arrays
    x = data((3, 4), np.float32)
    a = pm.asarray(x)
    for f in (lambda m, v: m.cumsum(v, 1), lambda m, v: m.einsum("ij->j", v), lambda m, v: m.linalg.norm(v, axis=0),
              lambda m, v: m.pad(v, 1, "edge"), lambda m, v: m.percentile(v, 50, 0), lambda m, v: m.diag(v),
              lambda m, v: m.unique(v, return_counts=True), lambda m, v: m.nanmax(v, 1)):
        got = f(np, a)
        compare(got, f(np, x), rtol=1e-5, atol=1e-5)
    # an argument pymetal does not take: NumPy's function runs on the shared memory (its array result
    # comes back as a pymetal array)
    got = np.unique(a, axis=0)
    assert isinstance(got, pm.Array)
    np.testing.assert_array_equal(got, np.unique(x, axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=DT_IDS)
def test_more_ufuncs(dtype):
    a = data((23,), dtype, 1, -20, 20)
    b = data((23,), dtype, 2, -20, 20)
    if dtype == np.int32:
        a[:3], b[3:5] = 0, 0
        for name in ("gcd", "lcm"):
            check(lambda xp, x, y: getattr(xp, name)(x, y), a, b)
            check(lambda xp, x, y: getattr(xp, name)(x, y), a.reshape(23, 1)[:4], b[:5])
        check(lambda xp, x, y: xp.ldexp(x.astype(xp.float32), y % 8), a, b)
        with pytest.raises(TypeError, match="integer"):
            pm.gcd(pm.asarray([1.0]), pm.asarray([2]))
    check(lambda xp, x: xp.float_power(x, 2), a, rtol=1e-6)
    check(lambda xp, x: xp.sinc(x / 7), a, rtol=1e-5, atol=1e-6)
    af = a.astype(np.float32) / 3
    check(lambda xp, x, y: xp.logaddexp2(x, y), af, b.astype(np.float32) / 3, rtol=1e-6, atol=1e-6)
    check(lambda xp, x: xp.modf(x), af, rtol=1e-6, atol=1e-6)
    check(lambda xp, x: xp.spacing(x), af)
    check(lambda xp, x: xp.unwrap(x), np.cumsum(af), rtol=1e-5, atol=1e-4)
    check(lambda xp, x: xp.unwrap(x.reshape(-1, 1) * [1, 2], axis=0), np.cumsum(af)[:10], rtol=1e-5, atol=1e-4)
    check(lambda xp, x: xp.real_if_close(x), (af + 1e-9j).astype(np.complex64))
    check(lambda xp, x: xp.real_if_close(x), (af + 1j).astype(np.complex64))


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (7, 3), (1, 1), (3, 3, 3)], ids=str)
def test_fill_diagonal_and_triangle_indices(shape):
    for val in (7, [1, 2], np.arange(1, 8)):
        for wrap in (False, True):
            want = np.zeros(shape, np.int32)
            np.fill_diagonal(want, val, wrap)
            got = pm.zeros(shape, pm.int32)
            assert pm.fill_diagonal(got, pm.asarray(np.asarray(val)) if not isinstance(val, int) else val, wrap) is None
            compare(got, want)
    if len(shape) == 2:
        n, m = shape
        for k in (0, 1, -1):
            check(lambda xp: xp.triu_indices(n, k, m))
            check(lambda xp: xp.tril_indices(n, k, m))
            check(lambda xp: xp.tri(n, m, k))
            check(lambda xp, a: xp.triu_indices_from(a, k), np.zeros(shape, np.float32))
            check(lambda xp, a: xp.tril_indices_from(a, k), np.zeros(shape, np.float32))
    check(lambda xp: xp.diag_indices(shape[0], len(shape)))
    with pytest.raises(ValueError, match="equal length"):
        pm.fill_diagonal(pm.zeros((2, 3, 4)), 1)
    with pytest.raises(TypeError, match="pymetal Array"):  # (float32: float64 data runs NumPy's, test_float64.py)
        pm.fill_diagonal(np.zeros((2, 2), np.float32), 1)


def test_trapezoid():
    y = data((4, 6), np.float32)
    x = np.sort(data((6,), np.float32, 3))
    check(lambda xp, v: xp.trapezoid(v), y, rtol=1e-5, atol=1e-5)
    check(lambda xp, v: xp.trapezoid(v, dx=0.5, axis=0), y, rtol=1e-5, atol=1e-5)
    check(lambda xp, v, w: xp.trapezoid(v, w), y, x, rtol=1e-5, atol=1e-4)
    check(lambda xp, v: xp.trapezoid(v), np.arange(5), rtol=1e-6)
    assert pm.trapz is pm.trapezoid


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.uint8], ids=DT_IDS)
@pytest.mark.parametrize("n1,n2", [(0, 0), (0, 5), (1, 1), (9, 12), (30, 4)], ids=str)
def test_set_functions(dtype, n1, n2):
    a, b = data((n1,), dtype, 1, 0, 8), data((n2,), dtype, 2, 0, 8)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        check(lambda xp, x, y: getattr(xp, name)(x, y), a, b)


@pytest.mark.parametrize("shape,axis", [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 2), ((2, 3, 4), 1), ((5,), 0), ((6,), None)],
                         ids=str)
def test_put_along_axis(shape, axis):
    x = data(shape, np.int32)
    n = x.size if axis is None else x.shape[axis]
    idx_shape = (2,) if axis is None else tuple(2 if d == axis else s for d, s in enumerate(shape))
    idx = (np.arange(int(np.prod(idx_shape))) % n).reshape(idx_shape)
    for values in (7, data(idx_shape, np.int32, 9)):
        want = x.copy()
        np.put_along_axis(want, idx, values, axis)
        got = pm.asarray(x.copy())
        assert pm.put_along_axis(got, pm.asarray(idx), pm.asarray(values) if isinstance(values, np.ndarray) else values,
                                 axis) is None
        compare(got, want)
    with pytest.raises(TypeError, match="pymetal Array"):
        pm.put_along_axis(x, idx, 1, axis)


def test_dtype_aliases_and_errstate():
    assert pm.int_ == np.int64 and pm.intp == np.int64 and pm.single == np.float32 and pm.bool_ == np.bool_
    assert pm.arange(3, dtype=pm.intc).dtype == np.int32
    with pm.errstate(divide="ignore"):
        r = pm.asarray([1.0]) / pm.asarray([0.0])
    assert float(r[0]) == np.inf


# ---- linalg.eig/eigvals/lstsq and fft2/ifft2/rfft2/irfft2: NumPy's names and signatures ----------

@pytest.mark.parametrize("n", [1, 3, 6])
def test_linalg_eig_eigvals(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    w, v = pm.linalg.eig(pm.asarray(a))
    wn = np.linalg.eig(a)[0]
    assert w.dtype == wn.dtype and v.dtype == wn.dtype  # float32 or complex64, as NumPy's
    # A v = v diag(w), and the eigenvalues are NumPy's (as a set)
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy(), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.sort_complex(w.numpy()), np.sort_complex(wn), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.sort_complex(pm.linalg.eigvals(pm.asarray(a)).numpy()), np.sort_complex(wn),
                               rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="square"):
        pm.linalg.eig(pm.ones((2, 3)))


@pytest.mark.parametrize("shape_b", [(7,), (7, 3)])
def test_linalg_lstsq(shape_b):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 4)).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    x, res, rank, s = pm.linalg.lstsq(pm.asarray(a), pm.asarray(b))
    xn, resn, rankn, sn = np.linalg.lstsq(a, b)
    assert rank == rankn and isinstance(rank, int)
    for g, w in ((x, xn), (res, resn), (s, sn)):
        assert g.dtype == np.float32 and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-4, atol=1e-4)
    # rank-deficient: the minimum-norm solution, no residuals
    d = np.ones((3, 2), np.float32)
    x, res, rank, _ = pm.linalg.lstsq(pm.asarray(d), pm.asarray(np.arange(3, dtype=np.float32)), rcond=None)
    assert rank == 1 and res.shape == (0,)
    np.testing.assert_allclose(x.numpy(), np.linalg.lstsq(d, np.arange(3, dtype=np.float32))[0], rtol=1e-4)
    with pytest.raises(np.linalg.LinAlgError, match="one matrix"):
        pm.linalg.lstsq(pm.ones((2, 3, 3)), pm.ones((2, 3)))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("shape", [(4, 6), (3, 5, 8), (1, 1)])
def test_fft2_family(name, shape):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape).astype(np.float32)
    if name == "irfft2":
        a = np.fft.rfft2(a).astype(np.complex64)
    f, g = getattr(pm.fft, name), getattr(np.fft, name)
    if name == "irfft2" and shape[-1] == 1:  # 2 * (1 - 1) output points: an error on both sides
        with pytest.raises(ValueError):
            g(a)
        with pytest.raises(ValueError, match="data points"):
            f(pm.asarray(a))
        return
    np.testing.assert_allclose(f(pm.asarray(a)).numpy(), g(a), rtol=1e-4, atol=1e-4)
    if len(shape) == 3 and name != "irfft2":  # NumPy's positional s and axes
        np.testing.assert_allclose(f(pm.asarray(a), (4, 4), (0, 2)).numpy(), g(a, (4, 4), (0, 2)),
                                   rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(f(pm.asarray(a), norm="ortho").numpy(), g(a, norm="ortho"), rtol=1e-4, atol=1e-4)


def test_fft_takes_numpy_positional_arguments():
    # NumPy code passes n, axis, norm (and fftfreq's d) by position; the standard's keyword
    # names still work
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 10)).astype(np.float32)
    x = pm.asarray(a)
    for name in ("fft", "ifft", "rfft", "ihfft"):
        f, g = getattr(pm.fft, name), getattr(np.fft, name)
        np.testing.assert_allclose(f(x, 16, 0, None).numpy(), g(a, 16, 0, None), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(f(x, 8, -1, "ortho").numpy(), g(a, 8, -1, "ortho"), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(f(x, n=8, axis=-1, norm="forward").numpy(), g(a, n=8, axis=-1, norm="forward"),
                                   rtol=1e-4, atol=1e-4)
    c = np.fft.rfft(a).astype(np.complex64)
    for name in ("irfft", "hfft"):
        np.testing.assert_allclose(getattr(pm.fft, name)(pm.asarray(c), 12, -1, None).numpy(),
                                   getattr(np.fft, name)(c, 12, -1, None), rtol=1e-4, atol=1e-4)
    for name in ("fftn", "ifftn", "rfftn"):
        np.testing.assert_allclose(getattr(pm.fft, name)(x, (4, 6), (0, 1), None).numpy(),
                                   getattr(np.fft, name)(a, (4, 6), (0, 1), None), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pm.fft.irfftn(pm.asarray(c), (4, 10), (0, 1)).numpy(), np.fft.irfftn(c, (4, 10), (0, 1)),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pm.fft.fftfreq(8, 0.1).numpy(), np.fft.fftfreq(8, 0.1), rtol=1e-6)
    np.testing.assert_allclose(pm.fft.rfftfreq(9, 0.5).numpy(), np.fft.rfftfreq(9, 0.5), rtol=1e-6)
    np.testing.assert_array_equal(pm.fft.fftshift(x, 1).numpy(), np.fft.fftshift(a, 1))
    np.testing.assert_array_equal(pm.fft.ifftshift(x, (0,)).numpy(), np.fft.ifftshift(a, (0,)))
    with pytest.raises(ValueError, match="norm"):
        pm.fft.fft(x, None, -1, "sideways")
