"""The element types pymetal accepts, their MSL names, and type promotion.

Arrays hold bool, int8..int64, uint8..uint64, float16, bfloat16, float32 or
complex64 (and structured dtypes built from those, for arrays of structs passed
to kernels). float64 and complex128 are refused for arrays everywhere: Apple
GPUs have no double precision, and the CPU backend refuses it too so that code
behaves the same on every machine. ``float64`` and ``complex128`` exist here as
dtype objects (the namespace's ``pm.float64`` & co. are NumPy's scalar types, equal
to these; pymetal/_namespace.py) and the pure data-type
functions (result_type, can_cast, finfo, isdtype) accept them; the device's
``__array_namespace_info__().dtypes()`` does not list them, as the standard
allows for a device without double precision. NumPy has no bfloat16; pymetal
uses the one of the ``ml_dtypes`` package. complex64 is stored as NumPy's
(float32 real, float32 imaginary) pairs; kernels see it as ``cfloat``
(Shaders/complex.h).

Promotion follows the Python Array API standard's table within a kind (and
real floating with complex gives complex64). Across kinds (which the standard
leaves open): bool joins any type; an integer with a float gives that float (as PyTorch and MLX; NumPy would widen to float64);
bfloat16 with float16 gives float32; uint64 with a signed integer is refused
(no 128-bit integer holds both). Python scalars are "weak" as in NumPy 2: they
take the array's type when their kind allows (``x_f16 * 2.0`` stays float16),
an int scalar that does not fit the integer array's type is an OverflowError,
and a float scalar with an integer array gives the default float (float32).
"""

from __future__ import annotations

import numpy as np

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._typing import DTypeLike

try:
    import ml_dtypes as _ml_dtypes

    bfloat16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _ml_dtypes = None  # type: ignore[assignment]  # only when the dependency is missing
    bfloat16 = None

__all__ = [
    "SUPPORTED", "check_dtype", "MSL_TYPE_NAMES", "NAMES",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "result_type", "can_cast", "finfo", "iinfo", "isdtype",
    "default_float", "default_int", "default_index",
]

bool_ = np.dtype(np.bool_)
int8: np.dtype
int16: np.dtype
int32: np.dtype
int64: np.dtype
uint8: np.dtype
uint16: np.dtype
uint32: np.dtype
uint64: np.dtype
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32 = np.dtype(np.float16), np.dtype(np.float32)
complex64 = np.dtype(np.complex64)
# Named by the Array API namespace, never held by an array (no double precision on Apple GPUs).
float64, complex128 = np.dtype(np.float64), np.dtype(np.complex128)

default_float = float32
default_int = int64    # Python ints become int64 arrays, as in NumPy (sums and indices exact)
default_index = int64  # argmax, argsort, nonzero, ... (sizes over 2**31 stay exact)

_ALL = [bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, complex64]
if bfloat16 is not None:
    _ALL.insert(10, bfloat16)

SUPPORTED = frozenset(_ALL)

# The names in kernel host names ("add_float32") and their MSL types.
NAMES = {dt: ("bfloat16" if dt == bfloat16 else dt.name) for dt in _ALL}
MSL_TYPE_NAMES = {
    bool_: "bool", int8: "char", uint8: "uchar", int16: "short", uint16: "ushort",
    int32: "int", uint32: "uint", int64: "long", uint64: "ulong", float16: "half", float32: "float",
    complex64: "cfloat",
}
if bfloat16 is not None:
    MSL_TYPE_NAMES[bfloat16] = "bfloat"

_NO_FLOAT64 = (
    "{what} has dtype {dt}, which pymetal does not support: Apple GPUs have no "
    "float64 (double) arithmetic, and the CPU backend refuses it too so that code "
    "behaves the same everywhere; "
)


def _problem(dt):
    """None if dt is supported, else a description of the first unsupported part."""
    if dt in SUPPORTED:
        return None
    if dt.fields is not None:  # structured: every field must be supported
        for name in dt.names:
            p = _problem(dt.fields[name][0])
            if p is not None:
                return p
        return None
    if dt.subdtype is not None:  # e.g. ('f4', (3,)) inside a struct
        return _problem(dt.subdtype[0])
    return dt


def check_dtype(dtype: DTypeLike, what: str = "array", host: bool = False) -> np.dtype:
    """Returns np.dtype(dtype) if pymetal supports it, else raises TypeError.

    Python's float and complex types mean the default floating types (float32,
    complex64; NumPy's are float64, complex128), so NumPy code's dtype=float runs;
    an explicit np.float64 is refused, except with `host` (memory for the host's
    computations) under the "host" float64 policy (pymetal/arrays/float64.py)."""
    if dtype is float or dtype is complex:
        return default_float if dtype is float else complex64
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("%s: %r is not a NumPy dtype" % (what, dtype)) from None
    if dt in SUPPORTED:
        return dt
    bad = _problem(dt)
    if bad is None:
        return dt
    if (bad.kind == "f" and bad.itemsize >= 8) or (bad.kind == "c" and bad.itemsize >= 16):
        from .arrays import float64 as _float64  # at call time: the policy lives with the array library
        if host and _float64.host_dtype(dt):
            return dt
        raise TypeError(_NO_FLOAT64.format(what=what, dt=bad) + _float64.refusal_hint(bad))
    if bad.byteorder not in ("=", "|") and bad.newbyteorder("=") in SUPPORTED:
        raise TypeError(
            "%s has dtype %s in non-native byte order; convert with "
            ".astype(%s)" % (what, bad.str, bad.newbyteorder("=").name)
        )
    # Text, Python objects and dates have no kernels: say where they can live instead.
    hint = ("; keep %s in a NumPy array (numpy.asarray(...)) and give pymetal numbers (codes from "
            "numpy.unique(..., return_inverse=True), timestamps as int64)"
            % {"U": "strings", "S": "bytes", "O": "Python objects", "M": "dates", "m": "time deltas"}[bad.kind]
            if bad.kind in "USOMm" else "")
    raise TypeError(
        "%s has dtype %s, which pymetal does not support; supported dtypes: "
        "bool, int8..int64, uint8..uint64, float16, bfloat16, float32, complex64%s" % (what, bad, hint)
    )


def kind(dt: np.dtype) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' real floating (bfloat16 included), 'c' complex."""
    return "f" if dt == bfloat16 else dt.kind


def dtype_arg(dtype: Any, what: str) -> np.dtype:
    """np.dtype(dtype) for the pure data-type functions: the array dtypes plus
    float64 and complex128, which they describe although no array holds them."""
    dt = None if isinstance(dtype, type) else getattr(dtype, "dtype", None)  # np.float16 is a type
    if dt is None:
        try:
            dt = np.dtype(dtype)
        except TypeError:
            raise TypeError("%s: %r is not a dtype" % (what, dtype)) from None
    elif not isinstance(dt, np.dtype):
        raise TypeError("%s: %r is not a dtype or an array" % (what, dtype))
    if dt in (float64, complex128):
        return dt
    return check_dtype(dt, what)


def real_dtype(dt):
    """The real floating type of a complex type's parts (float32 for complex64)."""
    return {complex64: float32, complex128: float64}.get(dt, dt)


def complex_dtype(dt):
    """The complex type whose parts have real floating type dt (complex64 for float32 and below)."""
    return complex128 if dt == float64 else complex64


def is_float(dt):
    return dt == bfloat16 or dt.kind == "f"


# ---- promotion ------------------------------------------------------------------

_SIGNED = {1: int8, 2: int16, 4: int32, 8: int64}


def _promote_pair(a, b):
    if a == b:
        return a
    ka, kb = kind(a), kind(b)
    if ka == "b":
        return b
    if kb == "b":
        return a
    if ka == "c" or kb == "c":
        wide = float64 in (a, b) or complex128 in (a, b)
        return complex128 if wide else complex64
    if ka == "f" or kb == "f":
        if ka != "f":
            return b
        if kb != "f":
            return a
        if bfloat16 in (a, b):  # bfloat16 with float16 or float32
            return float32
        return a if a.itemsize >= b.itemsize else b
    if ka == kb:
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if ka == "u" else (b, a)
    if u.itemsize < s.itemsize:
        return s
    if u.itemsize == 8:
        raise TypeError(
            "no integer type holds both %s and %s values; cast one explicitly "
            "(e.g. x.astype(pm.int64))" % (a, b))
    return _SIGNED[u.itemsize * 2]


_PAIR_CACHE: dict = {}


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    key = (a, b)
    r = _PAIR_CACHE.get(key)
    if r is None:
        r = _PAIR_CACHE[key] = _promote_pair(a, b)
    return r


def int_in_range(value: int, dt: np.dtype) -> bool:
    """Whether Python int value is in the range of integer type dt."""
    info = np.iinfo(dt)
    return info.min <= value <= info.max


def _scalar_fits(value, dt):
    k = kind(dt)
    if k == "b":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return True
    if isinstance(value, complex):
        return k == "c"
    if k in "iu":
        if isinstance(value, float):
            return False
        if not int_in_range(value, dt):
            raise OverflowError(
                "Python integer %d is out of bounds for %s; use an array of a wider "
                "type (x.astype(pm.int64)) or a value in range" % (value, dt))
        return True
    return True  # any int/float/bool scalar with a float array


def scalar_result(dt: np.dtype, value: Any) -> np.dtype:
    """The dtype of (array of dt) op (Python scalar value), NumPy 2 style."""
    if _scalar_fits(value, dt):
        return dt
    # float scalar with an integer or bool array, or a number with a bool array
    if isinstance(value, complex):
        return complex_dtype(dt)
    if isinstance(value, float):
        return default_float
    return default_int


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype that results from combining arrays, dtypes and Python scalars.

    Python scalars are weak (they do not widen an array's type), as in the Array API.

    Examples:
        >>> pm.result_type(pm.int8, pm.int16)
        dtype('int16')
        >>> pm.result_type(pm.zeros(2, pm.float16), 1.5)
        dtype('float16')
        >>> pm.result_type(pm.uint8, pm.float32)
        dtype('float32')
    """
    dts = []
    scalars = []
    for x in arrays_and_dtypes:
        if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
            scalars.append(x)
            continue
        dts.append(dtype_arg(x, "result_type"))
    if not dts:
        if not scalars:
            raise ValueError("result_type() needs at least one array or dtype")
        dts.append(complex64 if any(isinstance(s, complex) for s in scalars)
                   else default_float if any(isinstance(s, float) for s in scalars)
                   else default_int if any(not isinstance(s, bool) for s in scalars) else bool_)
        scalars = scalars[1:]
    r = dts[0]
    for dt in dts[1:]:
        r = promote_types(r, dt)
    for s in scalars:
        r = scalar_result(r, s)
    return r


def can_cast(from_: Any, to: Any, /, casting: str | None = None) -> bool:
    """Whether from_ (a dtype or array) converts to `to` by the promotion rules; with NumPy's
    casting= ("no", "equiv", "safe", "same_kind", "unsafe"), by NumPy's rule of that name.

    Examples:
        >>> pm.can_cast(pm.int8, pm.int32), pm.can_cast(pm.float32, pm.int32)
        (True, False)
        >>> pm.can_cast(pm.float64, pm.float32, "same_kind")
        True
    """
    f = dtype_arg(from_, "can_cast")
    t = dtype_arg(to, "can_cast")
    if casting is not None:
        return bool(np.can_cast(f, t, casting))  # type: ignore[arg-type]  # (NumPy checks the name)
    try:
        return promote_types(f, t) == t
    except TypeError:
        return False


class finfo:
    """Machine limits of a floating type: bits, eps, max, min, smallest_normal, dtype.

    For a complex type they are those of its real parts (dtype float32 for complex64).

    Examples:
        >>> pm.finfo(pm.float16).bits, pm.finfo(pm.float32).eps
        (16, 1.1920928955078125e-07)
        >>> pm.finfo(pm.complex64).dtype
        dtype('float32')
    """

    def __init__(self, type: Any, /) -> None:
        dt = real_dtype(dtype_arg(type, "finfo"))
        if not is_float(dt):
            raise ValueError("finfo() needs a floating type, not %s (use iinfo for integers)" % dt)
        info = _ml_dtypes.finfo(dt) if dt == bfloat16 else np.finfo(dt)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = dt
        # NumPy's other names (np.finfo(np.float32).tiny, .precision, .resolution)
        self.tiny = self.smallest_normal
        self.smallest_subnormal = float(info.smallest_subnormal)
        self.epsneg = float(info.epsneg)
        self.resolution = float(info.resolution)
        self.precision, self.nexp, self.nmant = int(info.precision), int(info.nexp), int(info.nmant)
        self.maxexp, self.minexp = int(info.maxexp), int(info.minexp)

    def __repr__(self):
        return "finfo(bits=%d, eps=%g, max=%g, min=%g, smallest_normal=%g, dtype=%s)" % (
            self.bits, self.eps, self.max, self.min, self.smallest_normal, NAMES.get(self.dtype, self.dtype.name))


class iinfo:
    """Limits of an integer type: bits, max, min, dtype.

    Examples:
        >>> pm.iinfo(pm.int8).min, pm.iinfo(pm.uint16).max
        (-128, 65535)
    """

    def __init__(self, type: Any, /) -> None:
        dt = dtype_arg(type, "iinfo")
        if kind(dt) not in "iu":
            raise ValueError("iinfo() needs an integer type, not %s (use finfo for floats)" % dt)
        info = np.iinfo(dt)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), dt

    def __repr__(self):
        return "iinfo(bits=%d, max=%d, min=%d, dtype=%s)" % (self.bits, self.max, self.min, self.dtype)


_KIND_NAMES = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "numeric": "iufc", "complex floating": "c",
}


def isdtype(dtype: np.dtype, kind: str | np.dtype | tuple[str | np.dtype, ...]) -> bool:
    """Array API isdtype: dtype against a dtype, a kind name, or a tuple of those.

    Kinds: "bool", "signed integer", "unsigned integer", "integral", "real floating",
    "complex floating", "numeric".

    Examples:
        >>> pm.isdtype(pm.float32, "real floating"), pm.isdtype(pm.uint8, ("bool", "signed integer"))
        (True, False)
    """
    if not isinstance(dtype, np.dtype) and not (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        raise TypeError("isdtype(): %r is not a dtype" % (dtype,))  # pm.float32 is NumPy's scalar type
    dt = dtype_arg(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KIND_NAMES:
            raise ValueError("isdtype(): unknown kind %r; one of %s" % (kind, ", ".join(_KIND_NAMES)))
        return _kind_of(dt) in _KIND_NAMES[kind]
    return dt == dtype_arg(kind, "isdtype")


_kind_of = kind
