"""Stop-gaps: main-namespace pieces scikit-learn needs that the `arrayapi` branch owns.

The linalg branch needs these to run scikit-learn on pymetal arrays; the
`arrayapi` branch implements the real ones (issue 12). Each is installed only
when pymetal does not define it already, so whichever implementation is
merged first is kept and this module can be deleted once `arrayapi` is in.
"""

import numpy as np

import pymetal as _pm
from . import dtypes as _dt
from .array import Array, asarray


def _array_namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError("pymetal implements the Array API 2024.12, not %r" % (api_version,))
    return _pm


class _Info:
    """__array_namespace_info__(): what this namespace supports (one device, no float64)."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return _pm.device()

    def devices(self):
        return [_pm.device()]

    def default_dtypes(self, *, device=None):
        return {"real floating": _dt.float32, "complex floating": None,
                "integral": _dt.default_int, "indexing": _dt.default_index}

    def dtypes(self, *, device=None, kind=None):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32"]
        return {n: np.dtype(n) for n in names
                if kind is None or _dt.isdtype(np.dtype(n), kinds)}


def _unique_host(x, **flags):
    x = x if isinstance(x, Array) else asarray(x)
    return np.unique(x.numpy().reshape(-1), **flags), x


def unique_inverse(x, /):
    """(values, inverse_indices): sorted unique values and, per element of x, its index in them."""
    (values, inverse), x = _unique_host(x, return_inverse=True)
    return _pm_tuple("UniqueInverseResult", ["values", "inverse_indices"],
                     values, inverse.reshape(x.shape).astype(np.int64))


def unique_counts(x, /):
    """(values, counts) of the sorted unique values."""
    (values, counts), _ = _unique_host(x, return_counts=True)
    return _pm_tuple("UniqueCountsResult", ["values", "counts"], values, counts.astype(np.int64))


def _pm_tuple(name, fields, *arrays):
    from collections import namedtuple
    return namedtuple(name, fields)(*(asarray(np.ascontiguousarray(a)) for a in arrays))


_GAPS = {
    "__array_api_version__": "2024.12",
    "__array_namespace_info__": _Info,
    "unique_inverse": unique_inverse,
    "unique_counts": unique_counts,
    # scikit-learn compares dtypes with xp.float64; arrays of it are still refused.
    "float64": np.dtype(np.float64),
}


def install():
    for name, value in _GAPS.items():
        if not hasattr(_pm, name):
            setattr(_pm, name, value)
    if not hasattr(Array, "__array_namespace__"):
        Array.__array_namespace__ = _array_namespace
