"""The element types pymetal accepts and how Python values map to them.

Arrays may hold bool, int8..int64, uint8..uint64, float16 or float32 (and
structured dtypes built from those, for arrays of structs). float64 is refused
everywhere: Apple GPUs have no double precision, and the CPU backend refuses it
too so that code behaves the same on every machine.

MSL names: bool, char/uchar, short/ushort, int/uint, long/ulong, half, float.
"""

import numpy as np

__all__ = ["SUPPORTED", "check_dtype", "MSL_TYPE_NAMES"]

SUPPORTED = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8, np.int16, np.int32, np.int64,
        np.uint8, np.uint16, np.uint32, np.uint64,
        np.float16, np.float32,
    )
)

MSL_TYPE_NAMES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "char",
    np.dtype(np.uint8): "uchar",
    np.dtype(np.int16): "short",
    np.dtype(np.uint16): "ushort",
    np.dtype(np.int32): "int",
    np.dtype(np.uint32): "uint",
    np.dtype(np.int64): "long",
    np.dtype(np.uint64): "ulong",
    np.dtype(np.float16): "half",
    np.dtype(np.float32): "float",
}

_NO_FLOAT64 = (
    "{what} has dtype {dt}, which pymetal does not support: Apple GPUs have no "
    "float64 (double) arithmetic, and the CPU backend refuses it too so that code "
    "behaves the same everywhere; convert with .astype(np.float32)"
)


def _problem(dt):
    """None if dt is supported, else a description of the first unsupported part."""
    if dt in SUPPORTED:
        return None
    if dt.fields is not None:  # structured: every field must be supported
        for name in dt.names:
            sub = dt.fields[name][0]
            p = _problem(sub)
            if p is not None:
                return p
        return None
    if dt.subdtype is not None:  # e.g. ('f4', (3,)) inside a struct
        return _problem(dt.subdtype[0])
    return dt


def check_dtype(dtype, what="array"):
    """Returns np.dtype(dtype) if pymetal supports it, else raises TypeError."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("%s: %r is not a NumPy dtype" % (what, dtype)) from None
    if dt in SUPPORTED:
        return dt
    bad = _problem(dt)
    if bad is None:
        return dt
    if bad.kind == "f" and bad.itemsize >= 8:
        raise TypeError(_NO_FLOAT64.format(what=what, dt=bad))
    if bad.kind == "c":
        raise TypeError(
            "%s has dtype %s: pymetal does not support complex numbers (Apple GPUs "
            "have no complex type); store real and imaginary parts as float32 pairs, "
            "e.g. a.view(np.float32) of a complex64 array" % (what, bad)
        )
    if bad.byteorder not in ("=", "|") and bad.newbyteorder("=") in SUPPORTED:
        raise TypeError(
            "%s has dtype %s in non-native byte order; convert with "
            ".astype(%s)" % (what, bad.str, bad.newbyteorder("=").name)
        )
    raise TypeError(
        "%s has dtype %s, which pymetal does not support; supported dtypes: "
        "bool, int8..int64, uint8..uint64, float16, float32" % (what, bad)
    )
