"""pymetal arrays as Dask chunks: ``import pymetal.dask`` (or any Dask graph that tokenizes a
pymetal array, once pymetal is installed: see ``_dask_hook``) registers

- ``pm.Array`` as a Dask chunk type (dask arrays of NumPy and of pymetal chunks mix both ways);
- ``sizeof`` (the array's nbytes: worker memory limits and spilling see the real size) and a
  deterministic ``tokenize`` (the elements' hash, as Dask's for NumPy arrays);
- Dask's per-chunk lookups (concatenate, take, tensordot, einsum, empty, numel, percentile);
- the ``"pymetal"`` array backend: with ``dask.config.set({"array.backend": "pymetal"})``,
  ``da.ones/zeros/empty/full/arange`` and ``da.random.default_rng(seed)`` make pymetal chunks
  (random chunks from ``pm.random``'s Philox kernels: the same seed gives the same arrays),
  and ``x.to_backend("pymetal")`` / ``x.to_backend("numpy")`` convert.

Dask's scheduler, task graph, spilling and network stay Dask's; pymetal arrays travel between
processes by pickle protocol 5 (``Array.__reduce_ex__``), which dask.distributed sends out of band.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import dask.array as da
from dask import config
from dask.array import chunk_types as _chunk_types
from dask.array import dispatch as _dispatch
from dask.array.backends import ArrayBackendEntrypoint, array_creation_dispatch
from dask.sizeof import sizeof as _sizeof
from dask.tokenize import normalize_token as _normalize_token

import pymetal as pm
from . import dtypes as _dtypes
from . import random as _random
from .arrays.array import Array

__all__ = ["PymetalBackendEntrypoint", "Philox"]


# ---- chunk type, sizeof, tokenize

if Array not in _chunk_types._HANDLED_CHUNK_TYPES:
    _chunk_types.register_chunk_type(Array)


@_sizeof.register(Array)
def _array_sizeof(x):
    return x.nbytes


def token(x):
    """Array.__dask_tokenize__: the elements (hashed by Dask's NumPy normalizer over a zero-copy
    view), dtype and shape: equal arrays give equal tokens in every process, as NumPy arrays do."""
    return "pymetal.Array", _normalize_token(x.numpy())


# ---- per-chunk functions Dask looks up by chunk type

def _host(args):
    return [a.numpy() if isinstance(a, Array) else a for a in args]


def _einsum(*operands, **kwargs):
    kwargs.pop("casting", None)  # Dask passes NumPy's casting=/order=, which pymetal has no use for
    kwargs.pop("order", None)
    fn = getattr(pm, "einsum", None)
    if fn is not None:
        return fn(*operands, **kwargs)
    return pm.asarray(np.einsum(*_host(operands), **kwargs))  # no pymetal kernel yet: NumPy on the host


def _divide(a, b, dtype=None):
    # Dask passes dtype= (NumPy's ufunc keyword), "f8" by default when combining means and
    # moments: pymetal's widest device float is float32 (no float64 on Apple GPUs), so float64
    # means that, unless the chunks are float64 themselves (host arrays, the "host" float64
    # policy): their means stay float64, as Dask declares them.
    out = pm.divide(a, b)
    if dtype is None:
        return out
    dtype = np.dtype(dtype)
    if dtype == np.float64 and out.dtype != np.float64:
        dtype = np.dtype(np.float32)
    return out.astype(dtype, copy=False)


def _percentile(a, q, method="linear"):
    # Dask's chunk step (dask.array.percentile._percentile) on the device. Dask declares the
    # result's dtype as the chunk's float dtype (int chunks: int / 0.5, float32 here), while
    # NumPy's percentile follows q's dtype too: q in that precision keeps what Dask declares
    # when q holds NumPy float64 scalars (it gave float64 chunks in a float32 array).
    n = len(a)
    if not n:
        return None, n
    if not np.issubdtype(a.dtype, np.number):
        method = "nearest"  # (as Dask's: bools have no interpolation)
    q = pm.asarray(list(q) if isinstance(q, Iterator) else q)
    return pm.percentile(a, q.astype(a.dtype if a.dtype.kind == "f" else pm.float32), method=method), n


def _numel(x, **kwargs):
    from dask.array.backends import _numel_arraylike
    return _numel_arraylike(x, **kwargs)


def _nannumel(x, keepdims=False, axis=None, dtype=None, **kwargs):
    return pm.sum(~pm.isnan(x), axis=axis, keepdims=keepdims, dtype=dtype)


_dispatch.concatenate_lookup.register(Array, pm.concatenate)
_dispatch.take_lookup.register(Array, pm.take)
_dispatch.tensordot_lookup.register(Array, pm.tensordot)
_dispatch.einsum_lookup.register(Array, _einsum)
_dispatch.empty_lookup.register(Array, pm.empty)
_dispatch.divide_lookup.register(Array, _divide)
_dispatch.percentile_lookup.register(Array, _percentile)
_dispatch.numel_lookup.register(Array, _numel)
_dispatch.nannumel_lookup.register(Array, _nannumel)
_dispatch.to_numpy_dispatch.register(Array, lambda data, **kwargs: data.numpy().copy())


# ---- the "pymetal" array backend

class Philox(_random.Generator):
    """The bit generator Dask's ``da.random.default_rng`` spawns per chunk under the pymetal
    backend: a ``pm.random.Generator`` made from a seed (Dask calls ``Philox(seed_sequence)``
    and then ``pymetal.random.default_rng(bitgen)``, which returns it as it is).

    Examples:
        >>> import pymetal.dask
        >>> pymetal.dask.Philox(0).random(2)
        Array([0.12218684, 0.5622784 ], dtype=float32)
    """

    def __init__(self, seed: Any = None) -> None:
        super().__init__(seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed))


@_normalize_token.register(Philox)
def _philox_token(g):
    s = g._seed_seq
    return "pymetal.Philox", s.entropy, s.spawn_key, s.pool_size


_to_pymetal = _dispatch.Dispatch("to_pymetal_dispatch")
_to_pymetal.register(object, lambda data, **kwargs: pm.asarray(np.asarray(data), **kwargs))
_to_pymetal.register(Array, lambda data, **kwargs: data)


def _meta(meta):
    return pm.empty((0,), np.float32) if meta is None else meta


class PymetalBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's array backend ``"pymetal"`` (entry point ``dask.array.backends``).

    Examples:
        >>> import dask, dask.array as da, pymetal.dask
        >>> with dask.config.set({"array.backend": "pymetal"}):
        ...     x = da.ones(4, chunks=2)
        >>> type(x.compute()).__name__
        'Array'
    """

    @classmethod
    def to_backend_dispatch(cls):
        return _to_pymetal

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, Array):
            return data
        return data.map_blocks(_to_pymetal, meta=pm.asarray(np.asarray(data._meta)), **kwargs)

    @property
    def RandomState(self):
        return pm.random.RandomState

    @property
    def default_bit_generator(self):
        return Philox

    # Without a dtype, floats are float32 (as pm.ones, pm.full, pm.arange: no float64 on Apple GPUs).
    # ones/zeros/empty: dtype (and order) may come positionally, as np.ones(shape, dtype, order)
    # takes them (order: pymetal chunks are C-contiguous). (da.full passes shape and fill_value
    # by keyword.)
    @staticmethod
    def ones(shape, dtype=None, order="C", *, meta=None, **kwargs):
        return _numpy_backend("ones", shape, dtype=dtype or np.float32, meta=_meta(meta), **kwargs)

    @staticmethod
    def zeros(shape, dtype=None, order="C", *, meta=None, **kwargs):
        return _numpy_backend("zeros", shape, dtype=dtype or np.float32, meta=_meta(meta), **kwargs)

    @staticmethod
    def empty(shape, dtype=None, order="C", *, meta=None, **kwargs):
        return _numpy_backend("empty", shape, dtype=dtype or np.float32, meta=_meta(meta), **kwargs)

    @staticmethod
    def full(shape, fill_value, *, dtype=None, meta=None, **kwargs):
        # (da.full passes type(fill_value) when no dtype is given: Python's float is float32
        # in pymetal, as for pm.full; it made float64 chunks)
        if dtype is float or dtype is complex:
            dtype = _dtypes.check_dtype(dtype)
        dtype = dtype or pm.asarray(fill_value).dtype
        return _numpy_backend("full", shape, fill_value, dtype=dtype, meta=_meta(meta), **kwargs)

    @staticmethod
    def arange(*args, dtype=None, like=None, **kwargs):
        if dtype is None and args:  # (no arguments: Dask's own error)
            dtype = _arange_dtype(*args, **{k: kwargs[k] for k in ("stop", "step") if k in kwargs})
        return _numpy_backend("arange", *args, dtype=dtype, like=_meta(like), **kwargs)


def _arange_dtype(start, stop=None, step=1):
    # Dask's inference for NumPy (np.arange of the arguments' types: uint8s give int64, a uint64
    # and an int float64), with a float64 that no argument asked for (Python floats, NumPy's
    # promotions) made pymetal's default float32.
    if stop is None:
        start, stop = 0, start
    dt = np.arange(type(start)(0), type(stop)(0), step).dtype
    if dt == np.float64 and not any(np.asarray(a).dtype == np.float64 and type(a) is not float for a in (start, stop, step)):
        return np.dtype(np.float32)
    return dt


def _numpy_backend(function, /, *args, **kwargs):
    # Dask's own creation functions make chunks of the meta's type (as for CuPy). (`function`
    # positional-only: kwargs may hold Dask's own name=, the graph key's prefix.)
    with config.set({"array.backend": "numpy"}):
        return getattr(da, function)(*args, **kwargs)


array_creation_dispatch.register_backend("pymetal", PymetalBackendEntrypoint())
