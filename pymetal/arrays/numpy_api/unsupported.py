"""NumPy's names that pymetal does not have, with what to do instead: the hint of the
AttributeError that ``pm.<name>`` raises (pymetal/__init__.py). Masked arrays, matrices, text,
dates and objects have no kernels; NumPy keeps them, on the same memory (x.numpy())."""

from __future__ import annotations

_HINTS = {
    "ma": "masked arrays are not supported: use NaN with the nan-functions (pm.nanmean, ...) or "
          "pm.where, or numpy.ma on x.numpy()",
    "matrix": "use 2-D arrays and @ (NumPy recommends this too)",
    "asmatrix": "use 2-D arrays and @ (NumPy recommends this too)",
    "bmat": "use pm.block",
    "char": "strings have no kernels: use NumPy's numpy.char on NumPy arrays",
    "strings": "strings have no kernels: use NumPy's numpy.strings on NumPy arrays",
    "rec": "record arrays are not supported: use a struct dtype (pm.zeros(n, [('x', pm.float32), ...])) "
           "and x.numpy()['x'] for a field",
    "recarray": "record arrays are not supported: use a struct dtype and x.numpy()['field']",
    "datetime64": "dates have no kernels: keep them in NumPy, or give pymetal int64 timestamps "
                  "(d.astype('datetime64[s]').astype(np.int64))",
    "timedelta64": "time deltas have no kernels: give pymetal int64 counts (d.astype(np.int64))",
    "busday_count": "dates have no kernels: use numpy.busday_count",
    "busday_offset": "dates have no kernels: use numpy.busday_offset",
    "is_busday": "dates have no kernels: use numpy.is_busday",
    "busdaycalendar": "dates have no kernels: use numpy.busdaycalendar",
    "isnat": "dates have no kernels: keep them in NumPy (numpy.isnat), or give pymetal int64 timestamps",
    "datetime_as_string": "dates have no kernels: use numpy.datetime_as_string on NumPy arrays",
    "datetime_data": "dates have no kernels: use numpy.datetime_data",
    "str_": "strings have no kernels: keep them in a NumPy array",
    "bytes_": "bytes have no kernels: keep them in a NumPy array",
    "object_": "Python objects have no kernels: keep them in a NumPy array",
    "void": "use a struct dtype (np.dtype([...])) for arrays of structs",
    "memmap": "use numpy.memmap and pm.asarray the part you compute on",
    "longdouble": "no extended precision: float32 on the device, float64 on the host (the float64 policy)",
    "float128": "no extended precision: float32 on the device, float64 on the host (the float64 policy)",
    "clongdouble": "no extended precision: complex64 on the device",
    "complex256": "no extended precision: complex64 on the device",
}


def hint(name: str) -> str:
    """'; <what to do>' for a NumPy name pymetal does not have, '' for any other."""
    h = _HINTS.get(name)
    return "; NumPy's %s is not in pymetal: %s" % (name, h) if h else ""
