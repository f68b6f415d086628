"""NumPy's names that NumPy programs use around the arithmetic: printing options, error
states, file input/output, ``np.ndenumerate``, ``np.block``, ``x.flat``, ``v in x``.

Printing goes through NumPy's formatter (Array's repr and str call np.array2string), so
``set_printoptions`` / ``printoptions`` are NumPy's own and apply to pymetal arrays.
Kernels never raise floating-point warnings: ``seterr`` / ``geterr`` / ``errstate`` are
NumPy's and affect only NumPy's own computations (pymetal's host paths among them).
Files are read and written by NumPy (the bytes are on the host anyway); what is read
becomes a pymetal array.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import numpy as np

from ..array import Array
from .. import elementwise as _ew
from .. import manipulation as _m
from ..construct import asarray

__all__ = [
    "seterr", "geterr", "set_printoptions", "get_printoptions", "printoptions", "array2string", "array_str",
    "array_repr", "format_float_positional", "format_float_scientific", "ndenumerate", "nditer", "block", "load", "save",
    "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt", "fromstring", "contains", "FLAT",
]

seterr, geterr = np.seterr, np.geterr
set_printoptions, get_printoptions, printoptions = np.set_printoptions, np.get_printoptions, np.printoptions
format_float_positional, format_float_scientific = np.format_float_positional, np.format_float_scientific


def _host(x: Any) -> Any:
    """A pymetal array as the NumPy array of its values (anything else unchanged)."""
    return x.numpy() if isinstance(x, Array) else x


def array2string(a: Any, *args: Any, **kwargs: Any) -> str:
    """NumPy's array2string of the array's values.

    Examples:
        >>> pm.array2string(pm.asarray([1.5, 2.0]), separator=", ")
        '[1.5, 2. ]'
    """
    return np.array2string(np.asarray(_host(a)), *args, **kwargs)


def array_str(a: Any, *args: Any, **kwargs: Any) -> str:
    """NumPy's array_str of the array's values (what str(x) gives).

    Examples:
        >>> pm.array_str(pm.asarray([1, 2]))
        '[1 2]'
    """
    return np.array_str(np.asarray(_host(a)), *args, **kwargs)


def array_repr(a: Any, *args: Any, **kwargs: Any) -> str:
    """repr(a) for a pymetal array (pymetal's repr); NumPy's array_repr of the values with options.

    Examples:
        >>> pm.array_repr(pm.asarray([1, 2]))
        'Array([1, 2], dtype=int64)'
    """
    return repr(a) if isinstance(a, Array) and not args and not kwargs else \
        np.array_repr(np.asarray(_host(a)), *args, **kwargs)


def ndenumerate(a: Any) -> Iterator[tuple[tuple[int, ...], Any]]:
    """(index, value) of every element in C order, as np.ndenumerate (values as NumPy scalars;
    the array is read once).

    Examples:
        >>> [(i, int(v)) for i, v in pm.ndenumerate(pm.asarray([[1, 2]]))]
        [((0, 0), 1), ((0, 1), 2)]
    """
    return np.ndenumerate(np.asarray(_host(a)))


def nditer(op: Any, *args: Any, **kwargs: Any) -> np.nditer:
    """NumPy's nditer over the arrays' values: pymetal arrays are iterated through their zero-copy
    NumPy views (x.numpy()), so writes through the iterator (op_flags=["readwrite"]) go to them;
    operands it allocates (None) are NumPy arrays, as NumPy's.

    Examples:
        >>> [int(v) for v in pm.nditer(pm.asarray([[1, 2], [3, 4]]))]
        [1, 2, 3, 4]
    """
    ops = [_host(o) for o in op] if isinstance(op, (list, tuple)) else _host(op)
    return np.nditer(ops, *args, **kwargs)


def block(arrays: Any) -> Array:
    """An array assembled from nested lists of blocks, as np.block: the innermost lists are
    joined along the last axis, the next along the one before, ...

    Examples:
        >>> pm.block([[pm.ones((2, 2)), pm.zeros((2, 1))], [pm.zeros((1, 3))]]).shape
        (3, 3)
    """
    def depth(a: Any, where: str) -> int:
        if isinstance(a, tuple):
            raise TypeError("block: %s is a tuple; only lists may be nested (np.block's rule)" % where)
        if isinstance(a, list):
            if not a:
                raise ValueError("block: %s is an empty list" % where)
            ds = {depth(x, "%s[%d]" % (where, i)) for i, x in enumerate(a)}
            if len(ds) != 1:
                raise ValueError("block: the lists at %s are nested to different depths" % where)
            return 1 + ds.pop()
        return 0

    d = depth(arrays, "arrays")
    leaves: list[Array] = []

    def collect(a: Any) -> None:
        if isinstance(a, list):
            for x in a:
                collect(x)
        else:
            leaves.append(_ew.as_array(a))
    collect(arrays)
    ndim = max([d] + [x.ndim for x in leaves])

    def join(a: Any, level: int) -> Array:
        if not isinstance(a, list):
            x = _ew.as_array(a)
            return _m.reshape(x, (1,) * (ndim - x.ndim) + tuple(x.shape))
        return _m.concat([join(x, level + 1) for x in a], axis=-(d - level))
    return join(arrays, 0)


def _device_result(r: Any) -> Any:
    """What NumPy read, with its arrays as pymetal arrays."""
    return asarray(r) if isinstance(r, np.ndarray) and r.dtype.kind in "biufc" else r


class _NpzFile:
    """np.load's NpzFile, giving pymetal arrays."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self.files = f.files

    def __getitem__(self, key: str) -> Any:
        return _device_result(self._f[key])

    def __contains__(self, key: str) -> bool:
        return key in self._f

    def __iter__(self) -> Iterator[str]:
        return iter(self._f)

    def __len__(self) -> int:
        return len(self._f)

    def keys(self) -> Any:
        return self._f.keys()

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self[k]) for k in self._f]

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> _NpzFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """np.load of NumPy's .npy / .npz data (a file object, or a file in NumPy's format), with
    arrays as pymetal arrays (.npz: a mapping of them); any other file is a Metal library, as
    before (a .metal file or a prebuilt library: pymetal.runtime.library.load and its options).

    Examples:
        >>> import io
        >>> f = io.BytesIO(); pm.save(f, pm.arange(3)); _ = f.seek(0)
        >>> pm.load(f)
        Array([0, 1, 2], dtype=int64)
    """
    if not _numpy_file(file):
        from ...runtime.library import load as load_library
        return load_library(file, *args, **kwargs)
    r = np.load(file, *args, **kwargs)
    return _NpzFile(r) if isinstance(r, np.lib.npyio.NpzFile) else _device_result(r)


def _numpy_file(file: Any) -> bool:
    """Whether pm.load's file is NumPy data: a file object, a .npy/.npz name, or a file starting
    with NumPy's magic (.npy) or a zip header (.npz); libraries start with neither."""
    if hasattr(file, "read"):
        return True
    try:
        path = os.fspath(file)
    except TypeError:
        return False
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if path.endswith((".npy", ".npz")):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError:
        return False
    return head.startswith((b"\x93NUMPY", b"PK\x03\x04"))


def save(file: Any, arr: Any, *args: Any, **kwargs: Any) -> None:
    """np.save of the array's values (.npy).

    Examples:
        >>> import io
        >>> f = io.BytesIO(); pm.save(f, pm.ones(2)); _ = f.seek(0)
        >>> np.load(f)
        array([1., 1.], dtype=float32)
    """
    np.save(file, _host(arr), *args, **kwargs)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """np.savez of the arrays' values (.npz; pm.load gives them back as pymetal arrays).

    Examples:
        >>> import io
        >>> f = io.BytesIO(); pm.savez(f, a=pm.arange(2)); _ = f.seek(0)
        >>> pm.load(f)["a"]
        Array([0, 1], dtype=int64)
    """
    np.savez(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file: Any, *args: Any, **kwds: Any) -> None:
    """np.savez_compressed of the arrays' values.

    Examples:
        >>> import io
        >>> f = io.BytesIO(); pm.savez_compressed(f, pm.arange(2)); _ = f.seek(0)
        >>> pm.load(f)["arr_0"]
        Array([0, 1], dtype=int64)
    """
    np.savez_compressed(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def loadtxt(*args: Any, **kwargs: Any) -> Any:
    """np.loadtxt, as a pymetal array (NumPy's dtype: float64 arrays follow the float64 policy).

    Examples:
        >>> import io
        >>> pm.loadtxt(io.StringIO("1 2\\n3 4"), dtype=pm.float32)
        Array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    return _device_result(np.loadtxt(*args, **kwargs))


def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0, *, like: Any = None) -> Any:
    """np.fromfile (raw bytes, or text with sep), as a pymetal array of NumPy's dtype (dtype=float
    reads float64, which follows the float64 policy).

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> pm.asarray([7, 8], dtype=pm.uint8).tofile(path)
        >>> pm.fromfile(path, dtype=pm.uint8)
        Array([7, 8], dtype=uint8)
    """
    return _device_result(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset))


def genfromtxt(*args: Any, **kwargs: Any) -> Any:
    """np.genfromtxt, as a pymetal array (missing values are NaN).

    Examples:
        >>> import io
        >>> pm.genfromtxt(io.StringIO("1,2\\n3,"), delimiter=",", dtype=pm.float32)
        Array([[ 1.,  2.],
               [ 3., nan]], dtype=float32)
    """
    return _device_result(np.genfromtxt(*args, **kwargs))


def fromstring(string: Any, dtype: Any = float, count: int = -1, *, sep: str, like: Any = None) -> Array:
    """np.fromstring of text (sep= is required, as in NumPy 2), as a pymetal array (dtype=float:
    float32, pymetal's default float).

    Examples:
        >>> pm.fromstring("1 2 3", sep=" ")
        Array([1., 2., 3.], dtype=float32)
    """
    from ... import dtypes as _dt
    return asarray(np.fromstring(string, dtype=_dt.check_dtype(dtype, "fromstring", host=True), count=count, sep=sep))


def savetxt(fname: Any, X: Any, *args: Any, **kwargs: Any) -> None:
    """np.savetxt of the array's values.

    Examples:
        >>> import io
        >>> f = io.StringIO(); pm.savetxt(f, pm.asarray([[1, 2]]), fmt="%d"); f.getvalue()
        '1 2\\n'
    """
    np.savetxt(fname, _host(X), *args, **kwargs)


def contains(self: Array, value: Any) -> bool:
    """``value in x``: whether any element equals value, as NumPy's ((x == value).any())."""
    return bool((self == value).any())


class _Flat:
    """``x.flat``: the elements in C order, to iterate, index and assign (as NumPy's flatiter).

    Examples:
        >>> x = pm.zeros((2, 2), pm.int64)
        >>> x.flat[3] = 5
        >>> x.flat[1:]
        Array([0, 0, 5], dtype=int64)
    """

    def __init__(self, a: Array) -> None:
        self.base = a

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self) -> Iterator[Array]:
        return iter(_m.reshape(self.base, (-1,)))

    def __getitem__(self, key: Any) -> Any:
        return _m.reshape(self.base, (-1,))[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        from .more import put
        from ..creation import arange
        idx = arange(self.base.size)[key]  # the flat positions the key selects, written in place
        put(self.base, idx, _ew.as_array(value) if not np.isscalar(value) else value, mode="raise")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.base.numpy().ravel()
        return a if dtype is None else a.astype(dtype)

    def copy(self) -> Array:
        return _m.reshape(self.base, (-1,)).copy()


def _flat_set(a: Array, value: Any) -> None:
    _Flat(a)[...] = value  # x.flat = v: every element, v's values repeated in C order (as NumPy's)


FLAT = property(_Flat, _flat_set, doc="x.flat: a 1-D iterator over the elements (index it, assign through it or to it)")
