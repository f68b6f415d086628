"""The op table: every built-in elementwise op and reduction in one place.

A row names the op, its MSL functor (Shaders/ops.h, reduce.h), the dtype kinds
it accepts and what it returns. From the table come the kernel host names,
the MSL instantiation lines (precompiled into the shader library for the
common dtypes, compiled on first use for the others: see kernels/lookup.py), the module
functions, the operators and ``__array_ufunc__``. A new elementwise op is one
functor and one row here.

Kinds: b bool, i signed, u unsigned, f floating (float16, bfloat16, float32),
c complex (complex64).
Results: "same" (the computation dtype), "bool", "real" (the real type of a
complex computation dtype: real, imag); abs of a complex array is real too.
Ops marked float-only compute integer and bool inputs in float32.
"""

from collections import namedtuple

from .. import dtypes as _dt

Op = namedtuple("Op", "name functor kinds result float_only numpy")

# name, functor, kinds, result, float_only, numpy name (None: same as name)
_UNARY = [
    ("abs", "Abs", "biufc", "same", False, "absolute"),
    ("negative", "Negate", "iufc", "same", False, None),
    ("positive", "Identity", "iufc", "same", False, None),
    ("sign", "Sign", "iufc", "same", False, None),
    ("square", "Square", "iufc", "same", False, None),
    ("sqrt", "Sqrt", "fc", "same", True, None),
    ("rsqrt", "Rsqrt", "f", "same", True, None),
    ("reciprocal", "Reciprocal", "fc", "same", True, None),
    ("exp", "Exp", "fc", "same", True, None),
    ("exp2", "Exp2", "f", "same", True, None),
    ("expm1", "Expm1", "fc", "same", True, None),
    ("log", "Log", "fc", "same", True, None),
    ("log2", "Log2", "fc", "same", True, None),
    ("log10", "Log10", "fc", "same", True, None),
    ("log1p", "Log1p", "fc", "same", True, None),
    ("sin", "Sin", "fc", "same", True, None),
    ("cos", "Cos", "fc", "same", True, None),
    ("tan", "Tan", "fc", "same", True, None),
    ("asin", "Asin", "fc", "same", True, "arcsin"),
    ("acos", "Acos", "fc", "same", True, "arccos"),
    ("atan", "Atan", "fc", "same", True, "arctan"),
    ("sinh", "Sinh", "fc", "same", True, None),
    ("cosh", "Cosh", "fc", "same", True, None),
    ("tanh", "Tanh", "fc", "same", True, None),
    ("asinh", "Asinh", "fc", "same", True, "arcsinh"),
    ("acosh", "Acosh", "fc", "same", True, "arccosh"),
    ("atanh", "Atanh", "fc", "same", True, "arctanh"),
    ("erf", "Erf", "f", "same", True, None),
    ("floor", "Floor", "f", "same", False, None),
    ("ceil", "Ceil", "f", "same", False, None),
    ("round", "Rint", "fc", "same", False, "rint"),
    ("trunc", "Trunc", "f", "same", False, None),
    ("isnan", "IsNan", "fc", "bool", False, None),
    ("isinf", "IsInf", "fc", "bool", False, None),
    ("isfinite", "IsFinite", "fc", "bool", False, None),
    ("signbit", "Signbit", "f", "bool", True, None),
    ("logical_not", "LogicalNot", "biuf", "bool", False, None),
    ("bitwise_invert", "BitwiseInvert", "biu", "same", False, "invert"),
    ("conj", "Conj", "iufc", "same", False, "conjugate"),  # real numbers: themselves
    ("real", "Real", "c", "real", False, None),
    ("imag", "Imag", "c", "real", False, None),
    # activations (pymetal.nn)
    ("relu", "Relu", "iuf", "same", False, None),
    ("sigmoid", "Sigmoid", "f", "same", True, None),
    ("softplus", "Softplus", "f", "same", True, None),
    ("silu", "Silu", "f", "same", True, None),
    ("gelu", "Gelu", "f", "same", True, None),
    ("gelu_tanh", "GeluTanh", "f", "same", True, None),
]

_BINARY = [
    ("add", "Add", "biufc", "same", False, None),
    ("subtract", "Sub", "iufc", "same", False, None),
    ("multiply", "Mul", "biufc", "same", False, None),
    ("divide", "Div", "fc", "same", True, None),
    ("floor_divide", "FloorDivide", "iuf", "same", False, None),
    ("remainder", "Remainder", "iuf", "same", False, None),
    ("pow", "Pow", "iufc", "same", False, "power"),
    ("atan2", "Atan2", "f", "same", True, "arctan2"),
    ("hypot", "Hypot", "f", "same", True, None),
    ("copysign", "Copysign", "f", "same", True, None),
    ("nextafter", "NextAfter", "f", "same", True, None),
    ("maximum", "Max", "biuf", "same", False, None),
    ("minimum", "Min", "biuf", "same", False, None),
    ("logaddexp", "LogAddExp", "f", "same", True, None),
    ("equal", "Equal", "biufc", "bool", False, None),
    ("not_equal", "NotEqual", "biufc", "bool", False, None),
    ("less", "Less", "biuf", "bool", False, None),
    ("less_equal", "LessEqual", "biuf", "bool", False, None),
    ("greater", "Greater", "biuf", "bool", False, None),
    ("greater_equal", "GreaterEqual", "biuf", "bool", False, None),
    ("logical_and", "LogicalAnd", "biuf", "bool", False, None),
    ("logical_or", "LogicalOr", "biuf", "bool", False, None),
    ("logical_xor", "LogicalXor", "biuf", "bool", False, None),
    ("bitwise_and", "BitwiseAnd", "biu", "same", False, None),
    ("bitwise_or", "BitwiseOr", "biu", "same", False, None),
    ("bitwise_xor", "BitwiseXor", "biu", "same", False, None),
    ("bitwise_left_shift", "LeftShift", "iu", "same", False, "left_shift"),
    ("bitwise_right_shift", "RightShift", "iu", "same", False, "right_shift"),
    ("leaky_relu", "LeakyRelu", "f", "same", True, None),
]

UNARY = {row[0]: Op(*row) for row in _UNARY}
# Unary ops whose result for integers (and bool, for the predicates) needs no kernel: isnan,
# isinf, isfinite are known; floor, ceil, trunc, round return the values (the Array API
# defines them for every real dtype).
NO_KERNEL_ON_INTEGERS = ("isnan", "isinf", "isfinite", "floor", "ceil", "trunc", "round")
BINARY = {row[0]: Op(*row) for row in _BINARY}

# Reductions: name -> (functor, accumulator rule). "sum": 64-bit integers
# (NumPy's), float32 for half/bfloat; "same": the input type; "bool".
REDUCE = {
    "sum": ("RSum", "sum"),
    "prod": ("RProd", "sum"),
    "max": ("RMax", "same"),
    "min": ("RMin", "same"),
    "all": ("RAll", "bool"),
    "any": ("RAny", "bool"),
}
ARGREDUCE = {"argmax": "ArgMax", "argmin": "ArgMin"}
TERNARY = {"where": "Where", "clip": "Clip"}

_KIND_DTYPES: dict[str, list] = {
    "b": [_dt.bool_],
    "i": [_dt.int8, _dt.int16, _dt.int32, _dt.int64],
    "u": [_dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64],
    "f": [_dt.float16, _dt.bfloat16, _dt.float32],
    "c": [_dt.complex64],
}
ALL_DTYPES = [d for k in "biufc" for d in _KIND_DTYPES[k]]
# Reductions defined for complex arrays (no ordering: no max/min/argmax/argmin).
COMPLEX_REDUCE = ("sum", "prod", "all", "any")


def dtypes_of(kinds):
    return [d for k in kinds for d in _KIND_DTYPES[k]]


def accumulator(rule, dt):
    if rule == "bool":
        return _dt.bool_
    if rule == "same":
        return dt
    k = _dt.kind(dt)
    if k == "c":
        return dt
    if k == "f":
        return _dt.float32
    return _dt.uint64 if k == "u" else _dt.int64


# ---- host names and instantiation lines ------------------------------------------

def _msl(dt):
    return _dt.MSL_TYPE_NAMES[dt]


def _line(name, template, args):
    spec = "%s<%s>" % (template, ", ".join(args))
    return 'template [[host_name("%s")]] [[kernel]] decltype(%s) %s;' % (name, spec, spec)


def unary_name(layout, op, dt):
    return "unary_%s_%s_%s" % (layout, op, _dt.NAMES[dt])


def binary_name(layout, op, dt):
    return "binary_%s_%s_%s" % (layout, op, _dt.NAMES[dt])


def ternary_name(op, dt):
    return "ternary_g_%s_%s" % (op, _dt.NAMES[dt])


def copy_name(layout, src, dst):
    return "copy_%s_%s_%s" % (layout, _dt.NAMES[src], _dt.NAMES[dst])


def fill_name(layout, dt):
    return "fill_%s_%s" % (layout, _dt.NAMES[dt])


def glue_name(family, variant, suffix):
    """A built-in kernel's name: <family>_<variant>_<suffix>, without the parts that are None
    (Shaders/matmul.metal, sort, scan, random, fft: precompiled only)."""
    return "_".join(p for p in (family, variant, suffix) if p)


def index_name(kind, dt):
    """gather_<dtype>, scatter_<dtype>, compact_<dtype> (the copy family)."""
    return "%s_%s" % (kind, _dt.NAMES[dt])


def range_name(dt):
    return "range_v_%s" % _dt.NAMES[dt]


def reduce_name(shape, op, dt):
    return "reduce_%s_%s_%s" % (shape, op, _dt.NAMES[dt])


def argreduce_name(shape, op, dt, has_idx):
    return "argreduce_%s_%s_%s%s" % (shape, op, _dt.NAMES[dt], "_i" if has_idx else "")


def result_dtype(op, dt):
    """The dtype op returns when it computes in dt."""
    if op.result == "bool":
        return _dt.bool_
    if op.result == "real" or (op.name == "abs" and _dt.kind(dt) == "c"):
        return _dt.real_dtype(dt)
    return dt


def _result_msl(op, dt):
    return _msl(result_dtype(op, dt))


def family_lines(family, dt):
    """{host name: instantiation line} of every kernel of `family` for dtype dt.

    Families are the unit of compilation on first use: all ops of one kind for
    one dtype are compiled together (one clang run, not one per op)."""
    t = _msl(dt)
    out = {}
    if family == "unary":
        for op in UNARY.values():
            if dt in dtypes_of(op.kinds):
                for layout in ("v", "g"):
                    out[unary_name(layout, op.name, dt)] = _line(
                        unary_name(layout, op.name, dt), "unary_" + layout, [t, _result_msl(op, dt), op.functor])
    elif family == "binary":
        for op in BINARY.values():
            if dt in dtypes_of(op.kinds):
                for layout in ("vv", "vs", "sv", "g"):
                    out[binary_name(layout, op.name, dt)] = _line(
                        binary_name(layout, op.name, dt), "binary_" + layout, [t, _result_msl(op, dt), op.functor])
    elif family == "copy":  # conversions from dt to every type, fills, ranges, ternaries
        for dst in ALL_DTYPES:
            for layout in ("v", "g"):
                out[copy_name(layout, dt, dst)] = _line(copy_name(layout, dt, dst), "copy_" + layout, [t, _msl(dst)])
        for layout in ("v", "g"):
            out[fill_name(layout, dt)] = _line(fill_name(layout, dt), "fill_" + layout, [t])
        if dt != _dt.bool_ and _dt.kind(dt) != "c":
            acc = "float" if _dt.kind(dt) == "f" else t
            out[range_name(dt)] = _line(range_name(dt), "range_v", [t, acc])
        for kind in ("gather", "scatter", "compact"):
            out["%s_%s" % (kind, _dt.NAMES[dt])] = _line("%s_%s" % (kind, _dt.NAMES[dt]), kind, [t])
        out[ternary_name("where", dt)] = _line(ternary_name("where", dt), "ternary_g", ["bool", t, "Where"])
        if dt != _dt.bool_ and _dt.kind(dt) != "c":
            out[ternary_name("clip", dt)] = _line(ternary_name("clip", dt), "ternary_g", [t, t, "Clip"])
    elif family == "reduce":
        for name, (functor, rule) in REDUCE.items():
            if _dt.kind(dt) == "c" and name not in COMPLEX_REDUCE:
                continue
            acc = _msl(accumulator(rule, dt))
            for shape, template, extra in (("row", "reduce_row", []), ("row_simd", "reduce_row_simd", []),
                                           ("col", "reduce_col", ["64"]), ("col1", "reduce_col", ["1"])):
                out[reduce_name(shape, name, dt)] = _line(reduce_name(shape, name, dt), template, [t, acc, functor] + extra)
        if dt != _dt.bool_ and _dt.kind(dt) != "c":
            for name, functor in ARGREDUCE.items():
                for shape in ("row", "col"):
                    for has_idx in (False, True):
                        n = argreduce_name(shape, name, dt, has_idx)
                        out[n] = _line(n, "argreduce_" + shape, [t, functor, "true" if has_idx else "false"])
    else:
        raise ValueError("unknown kernel family %r" % family)
    return out


FAMILIES = ("unary", "binary", "copy", "reduce")
HEADERS = {"unary": "elementwise.h", "binary": "elementwise.h", "copy": "elementwise.h", "reduce": "reduce.h"}

# Precompiled into the shader library (Shaders/array_kernels.metal); the other
# dtypes' families compile on first use and stay in the disk cache.
PRECOMPILED = [_dt.float32, _dt.int32, _dt.int64, _dt.bool_]


def precompiled_source():
    """The text of Shaders/array_kernels.metal (scripts/gen_array_kernels.py writes it)."""
    lines = [
        "// Generated by scripts/gen_array_kernels.py from pymetal/_ops.py: do not edit.",
        "// The array library's kernels for the precompiled dtypes (%s);"
        % ", ".join(_dt.NAMES[d] for d in PRECOMPILED),
        "// other dtypes are instantiated from the same templates on first use.",
        '#include "elementwise.h"',
        '#include "reduce.h"',
        "",
    ]
    for family in FAMILIES:
        for dt in PRECOMPILED:
            lines.extend(family_lines(family, dt).values())
    return "\n".join(lines) + "\n"
