"""Random programs of array-library operations, run on pymetal and on NumPy (the oracle).

A program starts from one to three random arrays and applies a chain of steps
(elementwise functions and operators, comparisons, reductions, indexing and
assignment through views, manipulation, sorting, matmul, astype, ...), each
chosen for the shapes and dtypes the program holds at that point. Every step
runs on both sides and its result is compared at once; at the end every array
the program holds is compared again (a write through a view must show in the
arrays that share its memory, and nowhere else).

The rules of the comparison (what counts as the same result):

- dtype and shape must be equal. NumPy's dtype is taken after pymetal's
  documented deviations: no float64 (NumPy's float64 is float32, complex128 is
  complex64; an integer or bool input of a function with float results gives
  float32), an integer with a float gives that float, float16 with bfloat16
  gives float32, uint64 with a signed integer is refused (TypeError), and a
  Python float with an integer array gives float32. The oracle computes
  float16 and bfloat16 in float32 and rounds once.
- bool and integer values must be equal. Float and complex values (each part)
  must agree within a bound per dtype (RTOL, relative to the value, or for sums
  to the sum of the magnitudes that went in); NaN must meet NaN, infinities
  must be equal; the sign of zero is not compared.
- Where NumPy raises, pymetal must raise one of ACCEPTED (any pm.Error,
  ValueError, TypeError, IndexError, OverflowError, ZeroDivisionError, ...
  subclass); anything else it raises (AttributeError, RuntimeError, a crash) is
  a failure. Where NumPy gives a result and pymetal raises, that is a failure
  unless REFUSED says pymetal refuses it by design (complex in functions the
  standard defines for real numbers only, complex to real astype, uint64 with
  a signed integer).
- Cases the standard leaves undefined are not generated (float to integer
  casts of NaN, infinities and out-of-range values, shifts by negative or too
  large amounts, negative integer powers of integers, the order of NaNs in a
  descending sort); a Python int out of an integer array's range may be
  refused (OverflowError) or computed as NumPy does. In matmul, where both
  results are non-finite (inf or NaN, in either part) they count as equal.

After a float step passes, the NumPy side takes pymetal's values (written into
the NumPy array's own memory, so that views of it see them), so that each step
is checked on identical inputs and rounding differences do not grow along the
chain.

``run_program(data)`` draws and checks one program with Hypothesis' ``data``
object; a failure raises ``Mismatch`` whose message is a runnable reproduction.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import strategies as st

import pymetal as pm

BF16 = np.dtype(pm.bfloat16)
F16, F32, C64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
BOOL = np.dtype(np.bool_)
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                              np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [F16, BF16, F32]
DTYPES = [BOOL] + INTS + FLOATS + [C64]
HALF = (F16, BF16)

# Relative bound per dtype: a few units in the last place of the result, for
# pymetal's float32 libm against NumPy's (transcendental functions are within
# a few ulps, not correctly rounded, on either side).
RTOL = {F32: 8 * 2.0 ** -23, C64: 8 * 2.0 ** -23, F16: 2 * 2.0 ** -10, BF16: 2 * 2.0 ** -7}
EPS32 = 2.0 ** -23
# The smallest normal number per dtype: subnormal results may flush to zero on either side.
TINY = {F32: 2.0 ** -126, C64: 2.0 ** -126, F16: 2.0 ** -14, BF16: 2.0 ** -126}

# What pymetal may raise for bad input: a clear Python exception of these kinds.
ACCEPTED = (pm.Error, ValueError, TypeError, IndexError, OverflowError,
            ZeroDivisionError, NotImplementedError, KeyError)


class Mismatch(AssertionError):
    """pymetal and NumPy disagree; the message reproduces the program."""


class Undefined(Exception):
    """The oracle met a case the standard leaves undefined: the step is dropped."""


def name(dt):
    return "bfloat16" if dt == BF16 else np.dtype(dt).name


# ---- the oracle's dtype rules (pymetal's documented deviations from NumPy)

def promote(a, b):
    """The result dtype of two array dtypes, or TypeError where pymetal refuses."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    if a == BOOL or b == BOOL:
        return b if a == BOOL else a
    if a.kind in "iu" and b.kind in "iu":
        if np.dtype(np.uint64) in (a, b) and "i" in (a.kind, b.kind):
            raise TypeError("uint64 with a signed integer")
        return np.result_type(a, b)
    if C64 in (a, b):
        return C64
    if a.kind in "iu" or b.kind in "iu":
        return a if a.kind == "f" or a == BF16 else b
    if {a, b} <= {F16, BF16, F32}:
        return F32 if F32 in (a, b) or {a, b} == {F16, BF16} else a
    return np.result_type(a, b)


def is_float(dt):
    return dt in FLOATS


def canon(r, inexact_of=None):
    """NumPy's result in pymetal's dtypes (float64 -> float32, complex128 -> complex64)."""
    r = np.asarray(r)
    if r.dtype == np.float64:
        r = r.astype(F32)
    elif r.dtype == np.complex128:
        r = r.astype(C64)
    elif r.dtype == F16 and inexact_of is not None and not is_float(inexact_of):
        r = r.astype(F32)  # NumPy gives float16 for int8 inputs; pymetal float32
    return r


def np_apply(fn, args, float_result=False):
    """fn on NumPy arrays and Python scalars, with pymetal's promotion: the arrays
    are cast to the common dtype (float32 for float16/bfloat16: one rounding at
    the end), scalars stay weak."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    p = arrays[0].dtype
    for a in arrays[1:]:
        p = promote(p, a.dtype)
    for s in args:
        if isinstance(s, np.ndarray):
            continue
        if isinstance(s, complex) and p.kind != "c":
            p = C64
        elif isinstance(s, float) and not isinstance(s, bool) and p.kind in "biu":
            p = F32
        elif isinstance(s, int) and not isinstance(s, bool) and p == BOOL:
            p = np.dtype(np.int64)
    if float_result and p.kind in "biu":
        p = F32
    compute = F32 if p in HALF else p

    def conv(a):
        if isinstance(a, np.ndarray):
            return a.astype(p).astype(compute)  # int32 -> float16 may overflow, as in pymetal
        if p in HALF and not isinstance(a, (bool, complex)):
            # NumPy rounds a weak scalar to the array's dtype first (1e30 -> inf in float16)
            with np.errstate(all="ignore"):
                return np.array(a, dtype=p).astype(F32)
        return a
    conv = [conv(a) for a in args]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = canon(fn(*conv))
    if p in HALF and r.dtype == F32:
        r = r.astype(p)
    return r


# ---- values

def elements(dt):
    dt = np.dtype(dt)
    if dt == BOOL:
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        small = st.integers(max(info.min, -10), min(info.max, 10))
        return st.one_of(small, small, small, st.sampled_from([info.min, info.max]),
                         st.integers(info.min, info.max))
    width = 16 if dt == F16 else 32
    special = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan])
    small = st.floats(-8, 8, width=width)
    anyf = st.floats(width=width, allow_nan=True, allow_infinity=True)
    real = st.one_of(small, small, special, anyf)
    if dt == C64:
        return st.builds(complex, real, real)
    return real


@st.composite
def shapes(draw):
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from([(17,), (33,), (130,), (3, 41)]))  # more than a few threads
    return draw(st.lists(st.integers(0, 5) if kind < 3 else st.integers(1, 5),
                         min_size=0, max_size=3).map(tuple))


@st.composite
def arrays(draw, dt=None, shape=None):
    dt = np.dtype(draw(st.sampled_from(DTYPES)) if dt is None else dt)
    shape = draw(shapes()) if shape is None else shape
    n = int(np.prod(shape, dtype=np.int64))
    # Hypothesis draws lists of a few thousand elements at most: a larger array repeats its values
    k = min(n, 1000)
    vals = draw(st.lists(elements(dt), min_size=k, max_size=k))
    if dt in (F16, BF16, F32):
        a = np.array(vals, dtype=np.float64).astype(F32).astype(dt)
    else:
        a = np.array(vals, dtype=dt)
    return np.resize(a, n).reshape(shape) if k < n else a.reshape(shape)


def literal(a):
    """Python source for a NumPy array (the reproduction's inputs)."""
    if a.dtype == BF16:
        return "np.array(%r, dtype=np.float32).astype(pm.bfloat16)" % (a.astype(F32).tolist(),)
    return "np.array(%r, dtype=np.%s)" % (a.tolist(), a.dtype.name)


def scalar_src(s):
    if isinstance(s, float) and not math.isfinite(s):
        return "float(%r)" % repr(s)
    if isinstance(s, complex):
        return "complex(%r, %r)" % (s.real, s.imag)
    return repr(s)


# ---- the program

class Var:
    def __init__(self, npv, pmv):
        self.np, self.pm = npv, pmv


class Program:
    def __init__(self, known=None):
        self.vars = []
        self.lines = ["import numpy as np, pymetal as pm"]
        self.known = known  # a set of failure signatures to pass over (scripts/fuzz_arrays.py)

    def fail(self, sig, what):
        if self.known is not None and sig in self.known:
            raise Undefined("known: %s" % (sig,))
        e = Mismatch("%s\n--- reproduction (pymetal side; NumPy is the oracle) ---\n%s\n--- signature: %s"
                     % (what, "\n".join(self.lines), sig))
        e.sig = sig
        raise e

    def add_input(self, a):
        i = len(self.vars)
        self.lines.append("v%d = pm.asarray(%s)" % (i, literal(a)))
        # separate copies: pm.asarray of page-aligned memory shares it
        self.vars.append(Var(a.copy(), pm.asarray(a.copy())))

    # one step: code (the pymetal spelling), pm and NumPy callables of the variables
    def step(self, op, code, pm_fn, np_fn, mutates=None, refused=False, bound=None, loose=False, ignore=None):
        try:
            want = np_fn([v.np for v in self.vars])
            np_err = None
        except Undefined:
            return
        except OverflowError as e:
            if "too large to convert to C long" in str(e):
                return  # NumPy's own limit (uint64 with 2**63 in logical ops), not a rule pymetal copies
            want, np_err = None, e
        except Exception as e:  # noqa: BLE001 - the oracle's error is what pymetal must match
            want, np_err = None, e
        line = ("%s  # mutates v%d" % (code, mutates)) if mutates is not None else code
        self.lines.append(line if mutates is not None else "v%d = %s" % (len(self.vars), code))
        try:
            got = pm_fn([v.pm for v in self.vars])
            got_np = None if mutates is not None else to_numpy(got)
            pm_err = None
        except ACCEPTED as e:
            got, pm_err = None, e
        except Exception as e:  # noqa: BLE001 - any other exception is a bug
            self.fail((op, "crash", type(e).__name__),
                      "pymetal raised %s: %s (not a clear error of an accepted kind; NumPy: %s)"
                      % (type(e).__name__, e, "raises %r" % np_err if np_err else "succeeds"))
        if np_err is not None:
            if pm_err is None:
                self.fail((op, "no-raise", type(np_err).__name__), "NumPy raises %s: %s\npymetal gives: %r"
                          % (type(np_err).__name__, np_err, got_np if mutates is None else "(assignment done)"))
            self.lines[-1] += "  # raises %s" % type(pm_err).__name__
            self.check_all(op)
            return
        if pm_err is not None:
            if refused:
                self.lines[-1] += "  # refused by design: %s" % type(pm_err).__name__
                return
            self.fail((op, "raise", type(pm_err).__name__), "pymetal raises %s: %s\nNumPy gives: %r"
                      % (type(pm_err).__name__, pm_err, want))
        if mutates is not None:
            self.check_all(op)
            return
        want = canon(want)
        compare(self, op, got, got_np, want, bound, loose=loose, ignore=ignore)
        self.vars.append(Var(want, got))
        self.resync(len(self.vars) - 1)

    def resync(self, i):
        """The NumPy side takes pymetal's (checked) float values."""
        v = self.vars[i]
        if v.np.dtype.kind in "fcV" or v.np.dtype == BF16:
            if v.np.flags.writeable and v.np.base is None:
                v.np[...] = to_numpy(v.pm)

    def check_all(self, op):
        for i, v in enumerate(self.vars):
            got_np = to_numpy(v.pm)
            compare(self, op, v.pm, got_np, v.np, None, "v%d after the step" % i)


def to_numpy(x):
    if isinstance(x, pm.Array):
        return x.numpy()
    return np.asarray(x)


def compare(prog, op, got, g, w, bound=None, what="the result", loose=False, ignore=None):
    if not isinstance(got, pm.Array):
        prog.fail((op, "type"), "%s is a %s, not a pymetal Array" % (what, type(got).__name__))
    if g.dtype != w.dtype or g.shape != w.shape:
        prog.fail((op, "dtype/shape"),
                  "%s: pymetal %s %s, NumPy %s %s\npymetal: %r\nNumPy:   %r"
                  % (what, name(g.dtype), g.shape, name(w.dtype), w.shape, g, w))
    floaty = g.dtype.kind in "fc" or g.dtype == BF16  # (bfloat16's kind is "V")
    if ignore is not None and floaty and np.any(ignore):
        # elements whose values the conformance suite checks against the standard instead
        # (complex special values, where NumPy and C99 / the standard differ)
        m = np.broadcast_to(ignore, g.shape)
        g, w = np.where(m, np.nan, g).astype(g.dtype), np.where(m, np.nan, w).astype(w.dtype)
    if g.dtype.kind in "biu":
        if not np.array_equal(g, w):
            prog.fail((op, "value"), "%s differs\npymetal: %r\nNumPy:   %r" % (what, g, w))
        return
    if loose and floaty:
        # sums of products with infinities: which non-finite value comes out
        # (inf or NaN, in which part) depends on the order of the operations
        nf = ~np.isfinite(g) & ~np.isfinite(w)
        g, w = np.where(nf, np.nan, g).astype(g.dtype), np.where(nf, np.nan, w).astype(w.dtype)
    if g.dtype.kind == "c":
        # a complex number with a NaN part is NaN (C99, the standard): where
        # both are NaN the other part does not count
        both = np.isnan(g) & np.isnan(w)
        g, w = np.where(both, np.nan, g).astype(g.dtype), np.where(both, np.nan, w).astype(w.dtype)
    parts = [(g.real, w.real), (g.imag, w.imag)] if g.dtype.kind == "c" else [(g, w)]
    rtol = RTOL[w.dtype]
    # a complex result's parts are within its magnitude's bound (log1p(0.28j)'s
    # real part 0.038 is computed from the whole number, not on its own)
    scale = np.abs(w.astype(np.complex128)) if w.dtype.kind == "c" else None
    for gp, wp in parts:
        gp, wp = gp.astype(np.float64), wp.astype(np.float64)
        nan_ok = np.isnan(gp) == np.isnan(wp)
        fin = np.isfinite(wp) & np.isfinite(gp)
        inf_ok = np.where(~np.isfinite(wp) & ~np.isnan(wp), gp == wp, True)
        tol = rtol * (np.abs(wp) if scale is None else np.nan_to_num(scale)) + (0.0 if bound is None else np.broadcast_to(bound, wp.shape))
        # the smallest normal of the dtype: denormals may flush on either side
        tiny = TINY[w.dtype]
        with np.errstate(invalid="ignore"):
            close = np.where(fin, np.abs(gp - wp) <= tol + tiny, True)
        # a finite value against an infinite one is only close if both are
        # at the dtype's edge (rounding to infinity)
        mixed = np.isfinite(wp) != np.isfinite(gp)
        if not (nan_ok.all() and inf_ok.all() and close.all() and not (mixed & ~np.isnan(wp) & ~np.isnan(gp)).any()):
            prog.fail((op, "value"), "%s differs\npymetal: %r\nNumPy:   %r" % (what, g, w))


# ---- operations

UNARY_FLOAT = ["sqrt", "exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "asinh", "atanh", "acos"]
UNARY_SAME = ["abs", "negative", "positive", "square", "sign", "floor", "ceil", "trunc", "round"]
UNARY_BOOL = ["isnan", "isinf", "isfinite", "signbit"]
NP_NAME = {"acos": "arccos", "asinh": "arcsinh", "atanh": "arctanh", "atan2": "arctan2",
           "pow": "power", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "concat": "concatenate"}
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow",
          "maximum", "minimum", "atan2", "hypot", "logaddexp",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
          "logical_and", "logical_or", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
BINARY_FLOAT = {"divide", "atan2", "hypot", "logaddexp"}
OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
             "remainder": "%", "pow": "**", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
             "bitwise_left_shift": "<<", "bitwise_right_shift": ">>", "equal": "==", "not_equal": "!=",
             "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}
# Real-only functions: pymetal raises TypeError for complex input by design.
REAL_ONLY = {"maximum", "minimum", "atan2", "hypot", "logaddexp", "floor_divide", "remainder",
             "less", "less_equal", "greater", "greater_equal", "floor", "ceil", "trunc", "signbit",
             "max", "min", "argmax", "argmin", "sort", "argsort", "clip", "searchsorted"}


def _complex_accurate(f, exact, special):
    """NumPy's complex log1p and expm1 are log(1 + z) and exp(z) - 1, which lose
    everything for tiny z (log1p(1e-31+0j) is 0): where both parts are finite the
    oracle uses the accurate formula in float64 instead; elsewhere `special`, from
    NumPy's cexp / clog, which follow C99's (and the standard's) special values
    (NumPy's own expm1(-inf - infj) is nan+nanj, C99's and the standard's -1 + 0j)."""
    def g(z):
        if z.dtype.kind != "c":
            return f(z)
        z2 = z.astype(np.complex128)
        fin = np.isfinite(z2.real) & np.isfinite(z2.imag)
        with np.errstate(all="ignore"):
            return np.where(fin, exact(np.where(fin, z2, 0)), special(z2)).astype(f(z).dtype)
    return g


def _complex(re, im):
    """re + im j without re + 1j * im (1j * inf is nan + infj)."""
    out = np.empty(np.broadcast(re, im).shape, np.complex128)
    out.real, out.imag = re, im
    return out


def _log1p_c(z):
    # near 0 log1p of |1 + z|^2 - 1; farther out log|1 + z| (1 + x of float32 data is exact in
    # float64), which does not cancel near z = -1 as x (2 + x) + y^2 does (log1p(-1 + 7e-28j))
    x, y = z.real, z.imag
    re = np.where(np.abs(z) < 0.5, 0.5 * np.log1p(x * (2 + x) + y * y), np.log(np.hypot(1 + x, y)))
    return _complex(re, np.arctan2(y, 1 + x))


def _expm1_c(z):
    # on the real axis the imaginary part is y itself (C99's cexp: exp(x) + 0i, never inf * 0)
    x, y = z.real, z.imag
    return _complex(np.expm1(x) * np.cos(y) - 2 * np.sin(y / 2) ** 2, np.where(y == 0, y, np.exp(x) * np.sin(y)))


def _floor_divide(a, b):
    """NumPy's floor_divide, with the standard's (2024.12) infinities where NumPy's differ:
    inf // finite is an inf of the quotient's sign (NumPy: NaN), finite // inf a zero of
    the quotient's sign (NumPy floors 3 // -inf to -1)."""
    with np.errstate(all="ignore"):
        w = np.floor_divide(a, b)
        if w.dtype.kind != "f":
            return w
        a, b = np.broadcast_arrays(np.asarray(a, w.dtype), np.asarray(b, w.dtype))
        sign = np.copysign(1, a) * np.copysign(1, b)
        w = np.where(np.isinf(a) & np.isfinite(b) & (b != 0), sign * np.inf, w)
        w = np.where(np.isfinite(a) & np.isinf(b), sign * 0.0, w)
    return np.asarray(w, dtype=np.result_type(a, b))


def _pow(a, b):
    """NumPy's power, with the standard's (and C99's) -inf ** y = +inf for y > 0 not an odd
    integer (NumPy's float32 power gives NaN)."""
    with np.errstate(all="ignore"):
        w = np.power(a, b)
        if w.dtype.kind != "f":
            return w
        a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
        odd = (np.mod(b, 2) == 1)
        return np.asarray(np.where(np.isneginf(a) & (b > 0) & ~odd, np.inf, w), dtype=w.dtype)


def _sign(z):
    """NumPy's sign, with the standard's NaN + NaN j for a complex number with a NaN part
    (NumPy's sign(inf + nan j) is 1)."""
    w = np.sign(z)
    if w.dtype.kind != "c":
        return w
    bad = np.isnan(z.real) | np.isnan(z.imag)
    return np.where(bad, np.complex64(complex(np.nan, np.nan)), w).astype(w.dtype)


def _wide_complex(f):
    """f in complex128, rounded to complex64: NumPy's complex64 division and power lose
    everything through intermediates that overflow or underflow (0j / 3.5e-40j is nan+nanj)."""
    def g(a, b):
        if np.asarray(a).dtype.kind != "c" and np.asarray(b).dtype.kind != "c":
            return f(a, b)  # as given: a Python scalar stays weak (NEP 50)
        out = np.result_type(a, b)
        with np.errstate(all="ignore"):
            return np.asarray(f(np.asarray(a, np.complex128), np.asarray(b, np.complex128))).astype(out)
    return g


ORACLE = {"log1p": _complex_accurate(np.log1p, _log1p_c, lambda z: np.log(1 + z)),
          "expm1": _complex_accurate(np.expm1, _expm1_c, lambda z: np.exp(z) - 1),
          "floor_divide": _floor_divide, "pow": _wide_complex(_pow), "sign": _sign,
          "divide": _wide_complex(np.divide)}


def npf(op):
    return ORACLE.get(op) or getattr(np, NP_NAME.get(op, op))


# Functions the standard defines for bool: the others are numeric-only, and
# pymetal refuses bool input to them (TypeError) where NumPy computes in int8.
BOOL_OK = {"logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_invert", "equal", "not_equal", "isnan", "isinf", "isfinite", "where", "astype"}


def refused_for(op, *dts):
    if all(np.dtype(d) == BOOL for d in dts) and op not in BOOL_OK:
        return True
    return any(np.dtype(d).kind == "c" for d in dts) and op in REAL_ONLY


def pick(draw, prog, pred=lambda v: True):
    idx = [i for i, v in enumerate(prog.vars) if pred(v)]
    if not idx:
        return None
    return draw(st.sampled_from(idx))


def _special(x):
    """Where a complex operand has an infinite or NaN part (None if nowhere, or not complex):
    the values there are the standard's special cases, which the data-apis suite checks;
    NumPy's often differ from them (sign(inf + nan j) is 1, expm1(-inf - inf j) nan + nan j)."""
    if x.dtype.kind != "c":
        return None
    m = ~(np.isfinite(x.real) & np.isfinite(x.imag))
    return m if m.any() else None


def op_unary(draw, prog):
    i = pick(draw, prog)
    x = prog.vars[i].np
    op = draw(st.sampled_from(UNARY_FLOAT + UNARY_SAME + UNARY_BOOL + ["logical_not", "bitwise_invert"]
                              + (["conj", "real", "imag"] if x.dtype == C64 else [])))
    fl = op in UNARY_FLOAT
    refused = refused_for(op, x.dtype) or (op == "logical_not" and x.dtype != BOOL)

    def np_fn(V):
        r = np_apply(npf(op), [V[i]], float_result=fl)
        if op in UNARY_SAME and x.dtype.kind in "biu":
            r = r.astype(x.dtype)  # NumPy's round(bool) is float16; the standard keeps the dtype
        return r
    prog.step(op, "pm.%s(v%d)" % (op, i), lambda V: getattr(pm, op)(V[i]), np_fn, refused=refused,
              ignore=_special(x))


def scalar_for(draw, dt):
    dt = np.dtype(dt)
    if dt == BOOL:
        return draw(st.booleans())
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return draw(st.one_of(st.integers(-3, 7), st.integers(info.min, info.max), st.integers(-300, 300),
                              st.sampled_from([2.5, -0.5])))  # a Python float: float32 results
    if dt == C64:
        return draw(st.builds(complex, st.sampled_from([0.5, -2.0, 0.0]), st.sampled_from([1.0, -0.5])))
    # exact and inexact in float16 (0.1, 1/3: one rounding, not two), beyond
    # float16's range (65520 rounds to inf), subnormal in bfloat16 and float32,
    # and imaginary (x * 1j makes complex64)
    return draw(st.sampled_from([0.5, -2.25, 3.0, 0.0, -0.0, math.inf, -math.inf, math.nan, 1e30, 7,
                                 0.1, 1 / 3, 65520.0, 1e-39, 1j, -0.5j]))


def out_of_range(dt, *scalars):
    """A Python int out of an integer array's range: the standard leaves the result
    unspecified; pymetal raises OverflowError, NumPy 2 computes some (x < 300,
    x / 300, clip(x, -300), where(c, x, -1)), so either is accepted."""
    return dt.kind in "iu" and any(type(s) is int and not np.iinfo(dt).min <= s <= np.iinfo(dt).max
                                   for s in scalars)


def broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def op_binary(draw, prog):
    i = pick(draw, prog)
    x = prog.vars[i].np
    op = draw(st.sampled_from(BINARY))
    form = draw(st.sampled_from(["array", "array", "scalar", "rscalar"]))
    j = pick(draw, prog, lambda v: broadcastable(v.np.shape, x.shape)) if form == "array" else None
    if form == "array":
        y = prog.vars[j].np
        if op in ("bitwise_left_shift", "bitwise_right_shift") and (y.dtype.kind not in "iu" or
                                                                    not ((y >= 0) & (y < 8 * y.dtype.itemsize)).all()):
            return  # a negative or too large shift is undefined
        if op == "pow" and y.dtype.kind in "iu" and x.dtype.kind in "biu" and (y < 0).any():
            return  # NumPy raises for negative integer powers only sometimes; left out
        args_src = ("v%d" % i, "v%d" % j)
        pm_args = lambda V: (V[i], V[j])  # noqa: E731
        np_args = lambda V: [V[i], V[j]]  # noqa: E731
        dts = (x.dtype, y.dtype)
    else:
        s = scalar_for(draw, x.dtype)
        if op in ("bitwise_left_shift", "bitwise_right_shift") and not (
                isinstance(s, int) and 0 <= s < 8 * x.dtype.itemsize) and form == "scalar":
            return
        if op in ("bitwise_left_shift", "bitwise_right_shift", "pow") and form == "rscalar":
            return
        if op == "pow" and x.dtype.kind in "biu" and type(s) is int and s < 0:
            return  # a negative integer power of an integer is unspecified (NumPy raises)
        ss = scalar_src(s)
        if form == "scalar":
            args_src, pm_args, np_args = ("v%d" % i, ss), (lambda V: (V[i], s)), (lambda V: [V[i], s])
        else:
            args_src, pm_args, np_args = (ss, "v%d" % i), (lambda V: (s, V[i])), (lambda V: [s, V[i]])
        dts = (x.dtype, C64) if isinstance(s, complex) else (x.dtype,)
    use_op = op in OPERATORS and draw(st.booleans())
    if use_op or form == "rscalar":
        if op not in OPERATORS:
            return
        sym = OPERATORS[op]
        code = "%s %s %s" % (args_src[0], sym, args_src[1])
        pyop = _pyop(sym)
        pm_fn = lambda V: pyop(*pm_args(V))  # noqa: E731
    else:
        code = "pm.%s(%s, %s)" % (op, args_src[0], args_src[1])
        pm_fn = lambda V: getattr(pm, op)(*pm_args(V))  # noqa: E731
    refused = refused_for(op, *dts) or (op.startswith("logical") and any(d != BOOL for d in dts))
    if form != "array" and out_of_range(x.dtype, s):
        refused = True
    try:
        if len(dts) == 2:
            promote(*dts)
    except TypeError:
        # uint64 with a signed integer: NumPy gives float64, pymetal must refuse it
        prog.step(op, code, pm_fn, lambda V: (_ for _ in ()).throw(TypeError("uint64 with a signed integer")))
        return
    bound = None
    if op == "pow" and any(np.dtype(d).kind == "c" for d in dts):
        # exp(b log a) in float32: the error grows with |b log a| (on either side)
        a, b = (np.asarray(v).astype(np.complex128) for v in np_args([v.np for v in prog.vars]))
        with np.errstate(all="ignore"):
            bound = np.nan_to_num(np.abs(a ** b) * (1 + np.abs(b * np.log(a))) * 8 * EPS32, posinf=0.0)
            # a power whose magnitude overflows: the directions of its infinite parts come
            # from the order of the multiplications ((-128 + 0j)**127: -inf+infj or -inf-infj)
            over = np.abs(a ** b) > float(np.finfo(F32).max) / 2
    ignore = None
    if any(np.dtype(d).kind == "c" for d in dts):
        ops_np = np_args([v.np for v in prog.vars])
        masks = [_special(np.asarray(v)) for v in ops_np]
        masks = [m for m in masks if m is not None]
        if masks:
            ignore = np.logical_or.reduce(np.broadcast_arrays(*masks)) if len(masks) > 1 else masks[0]
        if op == "pow":
            ignore = over if ignore is None else ignore | over
    prog.step(op, code, pm_fn, lambda V: np_apply(npf(op), np_args(V), float_result=op in BINARY_FLOAT),
              refused=refused, bound=bound, ignore=ignore)


def _pyop(sym):
    import operator as o
    return {"+": o.add, "-": o.sub, "*": o.mul, "/": o.truediv, "//": o.floordiv, "%": o.mod,
            "**": o.pow, "&": o.and_, "|": o.or_, "^": o.xor, "<<": o.lshift, ">>": o.rshift,
            "==": o.eq, "!=": o.ne, "<": o.lt, "<=": o.le, ">": o.gt, ">=": o.ge}[sym]


def axes_for(draw, ndim, multi=True):
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return None
    if kind == 1 or not multi:
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=0, max_size=ndim))))


def op_reduce(draw, prog):
    i = pick(draw, prog)
    x = prog.vars[i].np
    op = draw(st.sampled_from(["sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin",
                               "var", "std", "cumulative_sum"]))
    kw = {}
    if op in ("argmax", "argmin"):
        axis = axes_for(draw, x.ndim, multi=False)
    elif op == "cumulative_sum":
        if x.ndim == 0:
            return  # the standard's cumulative_sum needs one or more axes
        axis = draw(st.integers(-x.ndim, x.ndim - 1)) if x.ndim > 1 else draw(st.sampled_from([None, 0]))
        if draw(st.booleans()):
            kw["include_initial"] = True
    else:
        axis = axes_for(draw, x.ndim)
    if axis is not None:
        kw["axis"] = axis
    if op != "cumulative_sum" and draw(st.booleans()):
        kw["keepdims"] = True
    if op in ("sum", "prod", "cumulative_sum") and draw(st.integers(0, 2)) == 0:
        kw["dtype"] = np.dtype(draw(st.sampled_from([d for d in DTYPES if d != BOOL])))
    via_numpy = op in ("sum", "prod", "max", "min", "mean") and draw(st.integers(0, 4)) == 0
    if via_numpy:
        op_id = "np." + op
        # NEP-18: NumPy's function on a pymetal array, arguments by position
        pos = [kw.pop("axis", None)]
        if "dtype" in kw:
            pos.append(kw.pop("dtype"))
        code = "np.%s(v%d, %s%s)" % (op, i, ", ".join(_src(p) for p in pos),
                                     "".join(", %s=%s" % (k, _src(v)) for k, v in kw.items()))
        rest = dict(kw)
        pm_fn = lambda V: getattr(np, op)(V[i], *pos, **rest)  # noqa: E731
        kw = dict(kw, axis=pos[0], **({"dtype": pos[1]} if len(pos) > 1 else {}))
    else:
        op_id = op
        code = "pm.%s(v%d%s)" % (op, i, "".join(", %s=%s" % (k, _src(v)) for k, v in kw.items()))
        pm_fn = lambda V: getattr(pm, op)(V[i], **kw)  # noqa: E731
    refused = refused_for(op, x.dtype) or (op in ("max", "min", "argmax", "argmin") and x.dtype.kind == "c")
    if "dtype" in kw and x.dtype.kind == "c" and kw["dtype"].kind != "c":
        refused = True  # complex to real: astype refuses it, so does a reduction's dtype
    # complex products with infinities: which non-finite value comes out depends on the order
    # (NumPy's prod([inf j]) is (1 + 0j) * inf j = nan + inf j; pymetal's, inf j itself)
    # (the accumulation dtype decides: a real array multiplied in complex64 is a complex product)
    acc = kw.get("dtype") or x.dtype
    loose = op in ("prod", "cumulative_prod") and np.dtype(acc).kind == "c"
    ignore = None
    if op == "prod" and x.size:
        # where the factors of magnitude above 1 multiply past the largest float, a partial
        # product overflows in some order and not in another (NumPy's is one order, pymetal's
        # a tree: [3.2e36j, 0.5j, 106j] is finite one way, inf the other): either is right
        with np.errstate(all="ignore"):
            mag = np.prod(np.maximum(np.abs(x.astype(np.complex128)), 1.0), axis=kw.get("axis"),
                          keepdims=bool(kw.get("keepdims", False)))
            # and the same below 1: where the factors of magnitude below 1 multiply under the
            # smallest normal float, a partial product is subnormal (a few bits) in some orders:
            # [0.09375, 16777268, 2.2e-44] is 3.53e-38 one way, 4.70e-38 another (seed 9105)
            tiny = np.prod(np.minimum(np.abs(x.astype(np.complex128)), 1.0), axis=kw.get("axis"),
                           keepdims=bool(kw.get("keepdims", False)))
        ignore = (mag > float(np.finfo(F32).max) / 2) | ((tiny > 0) & (tiny < 2 * float(np.finfo(F32).tiny)))
    prog.step(op_id, code, pm_fn, lambda V: oracle_reduce(op, V[i], kw), refused=refused,
              bound=reduce_bound(op, x, kw), loose=loose, ignore=ignore)


def _src(v):
    if isinstance(v, np.dtype):
        return "pm.%s" % name(v)
    return repr(v)


def oracle_reduce(op, x, kw):
    kw = dict(kw)
    dt = kw.pop("dtype", None)
    if dt is not None and dt.kind in "iu" and x.dtype.kind not in "biu":
        check_int_cast(x, dt)
    if dt is not None and dt in HALF and x.dtype != dt:
        # finite elements beyond the half type's range: whether they become inf before
        # they are added (pymetal, and NumPy's astype) or after (NumPy's float16 loops add
        # in float32) is not specified
        f = (x.real if x.dtype.kind == "c" else x).astype(np.float64)
        top = float(np.finfo(F32 if dt == BF16 else dt).max)
        if np.any(np.isfinite(f) & (np.abs(f) > top)):
            raise Undefined("an element beyond the range of dtype=")
        with np.errstate(all="ignore"):
            if op in ("sum", "cumulative_sum") and np.nansum(np.abs(f)) > top / 2:
                raise Undefined("a sum near the overflow of a half dtype=: rounding order decides inf")
    acc = x.dtype if dt is None else dt
    if op == "cumulative_sum":
        if dt is None and x.dtype.kind in "biu":
            return np.cumulative_sum(x, **kw)  # int64 or uint64, as the standard says
        f = lambda a: np.cumulative_sum(a, dtype=dt if dt is None or dt not in HALF else F32, **kw)  # noqa: E731
        return _reduce_float(f, x, acc, dt)
    if op in ("var", "std", "mean"):
        wide = np.complex128 if x.dtype.kind == "c" else np.float64
        # var and std of complex numbers are real (NumPy's): float32 of complex64
        out = F32 if x.dtype.kind in "biu" else np.empty(0, x.dtype).real.dtype if op != "mean" else x.dtype
        return _reduce_float(lambda a: getattr(np, op)(a.astype(wide), **kw), x, out, None)
    if op == "prod" and (dt or x.dtype).kind in "fc" or op == "prod" and (dt or x.dtype) == BF16:
        # a zero among factors whose other partial products overflow: inf * 0 is NaN in some
        # orders of the multiplications and 0 in others (NumPy's and pymetal's differ)
        f = np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
        top = float(np.finfo(F32).max) if (dt or x.dtype) in (BF16, F32, C64) else float(np.finfo(dt or x.dtype).max)
        with np.errstate(all="ignore"):
            if np.any(f == 0) and np.prod(np.where(f == 0, 1.0, f)) > top:
                raise Undefined("a zero among factors whose product overflows")
    if op in ("sum", "prod"):
        if dt is not None and dt in HALF:
            return _reduce_float(lambda a: getattr(np, op)(a.astype(np.float64), **kw), x, dt, dt)
        if dt is None and x.dtype in HALF:
            return _reduce_float(lambda a: getattr(np, op)(a.astype(np.float64), **kw), x, x.dtype, x.dtype)
        if dt is None and x.dtype == F32:
            return np.asarray(getattr(np, op)(x.astype(np.float64), **kw)).astype(F32)
        if dt is None and x.dtype == C64:
            return np.asarray(getattr(np, op)(x.astype(np.complex128), **kw)).astype(C64)
        with np.errstate(all="ignore"):
            return np.asarray(getattr(np, op)(x, dtype=dt, **kw))
    if op in ("argmax", "argmin"):
        return np.asarray(getattr(np, op)(x.astype(F32) if x.dtype in HALF else x, **kw)).astype(np.int64)
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, op)(x, **kw))


def _reduce_float(f, x, acc, dt):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = x.astype(np.float64) if x.dtype in HALF else x
        r = np.asarray(f(src))
    out = np.dtype(acc if dt is None else dt)
    if out.kind in "biu" and r.dtype.kind == "f":
        out = F32
    return r.astype(out) if r.dtype != out else r


def reduce_bound(op, x, kw):
    """Sums and products are not one serial chain on either side: the bound is
    the terms' magnitudes times the float32 accumulation's rounding."""
    acc = np.dtype(kw["dtype"]) if kw.get("dtype") is not None else x.dtype
    if op in ("mean", "var", "std") and acc.kind in "biu":
        acc = F32  # pymetal's integer means and moments are float32 computations (the README says so)
    if op not in ("sum", "mean", "var", "std", "cumulative_sum") or acc.kind not in "fcV" and acc != BF16:
        return None
    a = np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    a = np.where(np.isfinite(a), a, 0)
    kw = {k: v for k, v in kw.items() if k != "dtype"}
    n = max(x.size, 1)
    # elements converted to a half-precision dtype= first are rounded in it (int16 32767 is 32768 in float16)
    eps = {F16: 2.0 ** -10, BF16: 2.0 ** -7}[acc] if acc in (F16, BF16) and x.dtype != acc else EPS32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op == "cumulative_sum":
            m = np.cumulative_sum(a, **kw)
        elif op == "sum":
            m = np.sum(a, **kw)
        elif op == "mean":
            m = np.mean(a, **kw)
        else:
            m = np.mean(a * a, **kw) * 4
            if op == "std":
                return np.sqrt(np.nan_to_num(m * 2 * n * eps)) + 0
    return np.nan_to_num(np.asarray(m) * 2 * n * eps)


# indexing

@st.composite
def index_for(draw, shape, arrays_ok=True):
    """A NumPy index for shape: ints (also negative, sometimes out of range),
    slices with steps (also negative), None, Ellipsis, integer arrays (also
    apart, like x[0, :, idx]) and boolean masks."""
    if shape and arrays_ok and draw(st.integers(0, 5)) == 0:
        m = draw(arrays(BOOL, shape[:draw(st.integers(1, len(shape)))]))
        return (m,) if draw(st.booleans()) else m
    out = []
    n_arrays = 0
    for n in shape:
        k = draw(st.integers(0, 9))
        if k < 2 and n > 0:
            out.append(draw(st.integers(-n, n - 1)))
        elif k == 2:
            out.append(draw(st.integers(-n - 2, n + 2)))  # may be out of range
        elif k < 5 and arrays_ok and n_arrays < 2 and n > 0:
            ln = draw(st.integers(0, 4))
            out.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=ln, max_size=ln)), dtype=np.int64))
            n_arrays += 1
        else:
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
            out.append(slice(start, stop, step))
    # two integer arrays must broadcast together
    arr = [a for a in out if isinstance(a, np.ndarray)]
    if len(arr) == 2 and not broadcastable(arr[0].shape, arr[1].shape):
        out = [slice(None) if e is arr[1] else e for e in out]
    if out and draw(st.integers(0, 4)) == 0:
        out.insert(draw(st.integers(0, len(out))), None)
    if out and draw(st.integers(0, 4)) == 0:
        p = draw(st.integers(0, len(out) - 1))
        out = out[:p] + [Ellipsis] + out[p + 1:]
    if len(out) == 1 and draw(st.booleans()):
        return out[0]
    return tuple(out)


def idx_src(ix):
    def one(e):
        if e is None:
            return "None"
        if e is Ellipsis:
            return "..."
        if isinstance(e, slice):
            return "%s:%s%s" % ("" if e.start is None else e.start, "" if e.stop is None else e.stop,
                                "" if e.step is None else ":%d" % e.step)
        if isinstance(e, np.ndarray):
            return "pm.asarray(%s)" % literal(e)
        return repr(e)
    if isinstance(ix, tuple):
        return ", ".join(one(e) for e in ix) if ix else "()"
    return one(ix)


def pm_index(ix):
    conv = lambda e: pm.asarray(e.copy()) if isinstance(e, np.ndarray) else e  # noqa: E731
    return tuple(conv(e) for e in ix) if isinstance(ix, tuple) else conv(ix)


def op_getitem(draw, prog):
    i = pick(draw, prog)
    x = prog.vars[i].np
    ix = draw(index_for(x.shape))
    pix = pm_index(ix)

    def np_fn(V):
        r = V[i][ix]
        if not isinstance(r, np.ndarray):
            # NumPy gives a scalar for x[1, 2], a copy; pymetal a 0-d array holding a copy
            r = np.array(r)
        return r
    prog.step("getitem", "v%d[%s]" % (i, idx_src(ix)), lambda V: V[i][pix], np_fn)


def op_setitem(draw, prog):
    i = pick(draw, prog)
    x = prog.vars[i].np
    ix = draw(index_for(x.shape))
    try:
        target_shape = x[ix].shape
    except Exception:  # noqa: BLE001 - a bad index: pymetal must raise as NumPy does
        target_shape = ()
    kind = draw(st.integers(0, 2))
    if kind == 0:
        s = scalar_for(draw, x.dtype)
        if x.dtype.kind in "biu" and isinstance(s, float):
            return
        val_src, pm_val, np_val = scalar_src(s), (lambda V: s), (lambda V: s)
    else:
        # a variable (often the target itself, or a view of it: overlapping memory)
        j = pick(draw, prog, lambda v: broadcastable(v.np.shape, target_shape)
                 and len(np.broadcast_shapes(v.np.shape, target_shape)) == len(target_shape)
                 and np.broadcast_shapes(v.np.shape, target_shape) == target_shape
                 and np.can_cast(v.np.dtype, x.dtype, "same_kind"))
        if j is None:
            return
        y = prog.vars[j].np
        if y.dtype.kind == "f" and x.dtype.kind in "iu":
            return
        val_src, pm_val, np_val = "v%d" % j, (lambda V: V[j]), (lambda V: V[j])
    pix = pm_index(ix)

    def pm_fn(V):
        V[i][pix] = pm_val(V)

    def np_fn(V):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = np_val(V)
            if isinstance(v, np.ndarray) and v.dtype in HALF and x.dtype != v.dtype:
                v = v.astype(F32)
            if isinstance(v, np.ndarray) and np.may_share_memory(v, V[i]):
                # the value is read before the target is written (pymetal's rule; NumPy's
                # boolean-mask assignment from an overlapping view reads values it already wrote)
                v = v.copy()
            V[i][ix] = v
    prog.step("setitem", "v%d[%s] = %s" % (i, idx_src(ix), val_src), pm_fn, np_fn, mutates=i)


def reshape_target(draw, shape):
    n = int(np.prod(shape, dtype=np.int64))
    dims = []
    rest = n
    for _ in range(draw(st.integers(0, 3))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1, 2]
        d = draw(st.sampled_from(divs[:8]))
        dims.append(d)
        rest = rest // d if d else rest
    if rest != 1 or not dims:
        dims.append(rest if n else 0)
    if n and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


def op_manip(draw, prog):
    i = pick(draw, prog)
    x = prog.vars[i].np
    op = draw(st.sampled_from(["reshape", "permute_dims", "broadcast_to", "expand_dims", "squeeze",
                               "flip", "concat", "stack", "mT", "T", "astype", "where", "clip"]))
    V_ = "v%d" % i
    if op == "reshape":
        shp = reshape_target(draw, x.shape)
        prog.step(op, "pm.reshape(%s, %r)" % (V_, shp), lambda V: pm.reshape(V[i], shp),
                  lambda V: np.reshape(V[i], shp))
    elif op == "permute_dims":
        p = tuple(draw(st.permutations(range(x.ndim))))
        prog.step(op, "pm.permute_dims(%s, %r)" % (V_, p), lambda V: pm.permute_dims(V[i], p),
                  lambda V: np.transpose(V[i], p))
    elif op in ("mT", "T"):
        if op == "T" and x.ndim != 2:
            return
        prog.step(op, "%s.%s" % (V_, op), lambda V: getattr(V[i], op), lambda V: getattr(V[i], op))
    elif op == "broadcast_to":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        shp = lead + tuple(draw(st.sampled_from([n, 3])) if n == 1 else n for n in x.shape)
        prog.step(op, "pm.broadcast_to(%s, %r)" % (V_, shp), lambda V: pm.broadcast_to(V[i], shp),
                  lambda V: np.broadcast_to(V[i], shp))
    elif op == "expand_dims":
        ax = draw(st.integers(-x.ndim - 1, x.ndim))
        prog.step(op, "pm.expand_dims(%s, axis=%d)" % (V_, ax), lambda V: pm.expand_dims(V[i], axis=ax),
                  lambda V: np.expand_dims(V[i], ax))
    elif op == "squeeze":
        ones = [k for k, n in enumerate(x.shape) if n == 1]
        ax = tuple(draw(st.sets(st.sampled_from(ones)))) if ones else ()
        prog.step(op, "pm.squeeze(%s, axis=%r)" % (V_, ax), lambda V: pm.squeeze(V[i], axis=ax),
                  lambda V: np.squeeze(V[i], axis=ax))
    elif op == "flip":
        ax = axes_for(draw, x.ndim)
        # (NumPy's flip of a 0-d array is a scalar; pymetal's a view, as x[...] is)
        prog.step(op, "pm.flip(%s, axis=%r)" % (V_, ax), lambda V: pm.flip(V[i], axis=ax),
                  lambda V: np.flip(V[i], axis=ax) if V[i].ndim else V[i][...])
    elif op in ("concat", "stack"):
        if op == "concat" and x.ndim == 0:
            return
        ax = draw(st.integers(-x.ndim - (op == "stack"), x.ndim - 1 + (op == "stack")))
        if op == "concat":
            ok = lambda v: v.np.ndim == x.ndim and all(a == b for k, (a, b) in enumerate(zip(v.np.shape, x.shape))  # noqa: E731
                                                       if k != ax % x.ndim)
        else:
            ok = lambda v: v.np.shape == x.shape  # noqa: E731
        j = pick(draw, prog, ok)
        ks = [i, j] if draw(st.booleans()) else [j, i, i]
        try:
            p = x.dtype
            for k in ks:
                p = promote(p, prog.vars[k].np.dtype)
        except TypeError:
            return

        def np_fn(V):
            # every part in the common dtype first (NumPy cannot promote int16 with
            # bfloat16), float16/bfloat16 through float32 (exact)
            parts = [V[k].astype(p).astype(F32) if p in HALF else V[k].astype(p) for k in ks]
            r = canon(npf(op)(parts, axis=ax))
            return r.astype(p) if p in HALF else r
        prog.step(op, "pm.%s([%s], axis=%d)" % (op, ", ".join("v%d" % k for k in ks), ax),
                  lambda V: getattr(pm, op)([V[k] for k in ks], axis=ax), np_fn)
    elif op == "astype":
        dt = np.dtype(draw(st.sampled_from(DTYPES)))
        copy = draw(st.booleans())

        def np_fn(V):
            a = V[i]
            if dt.kind in "iu" and a.dtype.kind not in "biu":
                check_int_cast(a, dt)
            if a.dtype.kind == "c" and dt == BOOL:
                return a.astype(dt)  # nonzero, either part (as NumPy's)
            if a.dtype.kind == "c" and dt.kind != "c":
                return a.real.astype(dt)  # pymetal refuses this by design
            if a.dtype == dt and not copy:
                return a  # the same array, as NumPy's (writes to one show in the other)
            if a.dtype in HALF and dt in HALF:
                return a.astype(F32).astype(dt)
            return a.astype(dt, copy=copy)
        prog.step(op, "pm.astype(%s, pm.%s, copy=%r)" % (V_, name(dt), copy),
                  lambda V: pm.astype(V[i], dt, copy=copy), np_fn,
                  refused=x.dtype.kind == "c" and dt.kind != "c" and dt != BOOL)
    elif op == "where":
        c = pick(draw, prog, lambda v: v.np.dtype == BOOL and broadcastable(v.np.shape, x.shape))
        if c is None:
            return
        other = scalar_for(draw, x.dtype) if draw(st.booleans()) else None
        if other is None:
            j = pick(draw, prog, lambda v: broadcastable(v.np.shape, np.broadcast_shapes(x.shape, prog.vars[c].np.shape)))
            o_src, pm_o, np_o = "v%d" % j, (lambda V: V[j]), (lambda V: V[j])
        else:
            o_src, pm_o, np_o = scalar_src(other), (lambda V: other), (lambda V: other)
        prog.step(op, "pm.where(v%d, %s, %s)" % (c, V_, o_src), lambda V: pm.where(V[c], V[i], pm_o(V)),
                  lambda V: np_apply(lambda a, b: np.where(V[c], a, b), [V[i], np_o(V)]),
                  refused=out_of_range(x.dtype, other))
    elif op == "clip":
        lo = scalar_for(draw, x.dtype) if draw(st.booleans()) else None
        hi = scalar_for(draw, x.dtype) if draw(st.booleans()) else None
        if x.dtype == BOOL or any(isinstance(s, float) and math.isnan(s) for s in (lo, hi)):
            return
        if x.dtype.kind in "iu" and any(isinstance(s, float) for s in (lo, hi)):
            return
        prog.step(op, "pm.clip(%s, min=%s, max=%s)" % (V_, scalar_src(lo), scalar_src(hi)),
                  lambda V: pm.clip(V[i], min=lo, max=hi),
                  lambda V: np_clip(V[i], lo, hi),
                  refused=x.dtype.kind == "c" or isinstance(lo, complex) or isinstance(hi, complex)
                  or out_of_range(x.dtype, lo, hi))


def check_int_cast(a, dt):
    """A float to integer cast of NaN, an infinity or a value out of range is undefined."""
    f = a.real.astype(np.float64)
    # (bounds as exact powers of two: float(2**64 - 1) is 2**64, which is out of range)
    lo, hi = float(np.iinfo(dt).min - 1), float(np.iinfo(dt).max + 1)
    if not (np.isfinite(f).all() and (f > lo).all() and (f < hi).all()):
        raise Undefined("float to integer cast out of range")


def np_clip(x, lo, hi):
    with np.errstate(all="ignore"):
        r = x.astype(F32) if x.dtype in HALF else x
        if lo is not None or hi is not None:
            r = np.clip(r, lo, hi)
        return np.asarray(r).astype(x.dtype)


def op_sort(draw, prog):
    i = pick(draw, prog, lambda v: v.np.ndim > 0)
    if i is None:
        return
    x = prog.vars[i].np
    op = draw(st.sampled_from(["sort", "argsort", "searchsorted"]))
    if op == "searchsorted":
        i1 = pick(draw, prog, lambda v: v.np.ndim == 1)
        if i1 is None:
            return
        a = prog.vars[i1].np
        side = draw(st.sampled_from(["left", "right"]))
        if draw(st.booleans()):
            s = scalar_for(draw, a.dtype)
            x2_src, pm_x2, np_x2 = scalar_src(s), (lambda V: s), (lambda V: s)
            x2_dtype = np.dtype(np.complex64) if isinstance(s, complex) else a.dtype
        else:
            x2_src, pm_x2, np_x2 = "v%d" % i, (lambda V: V[i]), (lambda V: V[i])
            x2_dtype = x.dtype

        def np_fn(V):
            s1 = np.sort(V[i1].astype(F32) if V[i1].dtype in HALF else V[i1])
            if s1.dtype.kind == "f" and np.isnan(s1).any():
                raise Undefined("NaN in a sorted array")
            x2 = np_x2(V)
            if isinstance(x2, np.ndarray):
                # both sides in the promoted dtype first (int16 -257 is -256 in bfloat16: pymetal's
                # rule, an integer with a float gives that float), then half types widened to compare
                p = promote(V[i1].dtype, x2.dtype)
                s1, x2 = s1.astype(p), x2.astype(p)
                s1, x2 = (s1.astype(F32), x2.astype(F32)) if p in HALF else (s1, x2)
            elif not isinstance(x2, complex) and (V[i1].dtype.kind == "f" or V[i1].dtype == BF16):
                # a Python number with a float array becomes the array's dtype (the standard's
                # rule: 1e-39 is 0 in float16), where NumPy compares it in float64; a float with
                # an integer array is compared as the number it is, on both sides
                x2 = np.asarray(x2).astype(V[i1].dtype)
                x2 = x2.astype(F32) if V[i1].dtype in HALF else x2
            return np.asarray(np.searchsorted(s1, x2, side=side)).astype(np.int64)
        prog.step(op, "pm.searchsorted(pm.sort(v%d), %s, side=%r)" % (i1, x2_src, side),
                  lambda V: pm.searchsorted(pm.sort(V[i1]), pm_x2(V), side=side), np_fn,
                  refused=refused_for(op, a.dtype, x2_dtype))
        return
    ax = draw(st.integers(-x.ndim, x.ndim - 1))
    desc = draw(st.booleans())

    def np_fn(V):
        a = V[i].astype(F32) if V[i].dtype in HALF else V[i]
        if desc and a.dtype.kind in "fc" and np.isnan(a).any():
            raise Undefined("NaN order in a descending sort")
        if op == "sort":
            r = np.flip(np.sort(a, axis=ax, kind="stable"), axis=ax) if desc else np.sort(a, axis=ax, kind="stable")
            return r.astype(V[i].dtype)
        if not desc:
            return np.argsort(a, axis=ax, kind="stable").astype(np.int64)
        n = a.shape[ax]
        return (n - 1 - np.flip(np.argsort(np.flip(a, axis=ax), axis=ax, kind="stable"), axis=ax)).astype(np.int64)
    prog.step(op, "pm.%s(v%d, axis=%d, descending=%r)" % (op, i, ax, desc),
              lambda V: getattr(pm, op)(V[i], axis=ax, descending=desc), np_fn, refused=x.dtype.kind == "c")


def op_matmul(draw, prog):
    i = pick(draw, prog, lambda v: v.np.ndim > 0)
    if i is None:
        return
    x = prog.vars[i].np

    def ok(v):
        b = v.np
        if b.ndim == 0:
            return False
        k = x.shape[-1]
        kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
        return k == kb and broadcastable(x.shape[:-2], b.shape[:-2])
    j = pick(draw, prog, ok)
    if j is None:
        if x.ndim < 2:
            return
        j_src, pm_b, np_b = "v%d.mT" % i, (lambda V: V[i].mT), (lambda V: np.swapaxes(V[i], -1, -2))
    else:
        j_src, pm_b, np_b = "v%d" % j, (lambda V: V[j]), (lambda V: V[j])
    y_dt = prog.vars[j].np.dtype if j is not None else x.dtype
    try:
        p = promote(x.dtype, y_dt)
    except TypeError:
        return

    def np_fn(V):
        a, b = V[i], np_b(V)
        if p in HALF:
            for m in (a, b):
                if m.dtype.kind in "iu" and m.size and np.abs(m.astype(np.float64)).max() > float(np.finfo(
                        F32 if p == BF16 else p).max):
                    raise Undefined("integers beyond the half type they promote to (they become inf)")
        if p.kind in "fc" or p == BF16:
            c = np.complex128 if p.kind == "c" else np.float64
            r = np.matmul(a.astype(c), b.astype(c))
            return r.astype(p)
        with np.errstate(all="ignore"):
            return np.matmul(a.astype(p), b.astype(p))
    bound = None
    if p.kind in "fc" or p == BF16:
        with np.errstate(all="ignore"):
            aa = np.nan_to_num(np.abs(x.astype(np.complex128)), posinf=0)
            bb = np.nan_to_num(np.abs(np_b([v.np for v in prog.vars]).astype(np.complex128)), posinf=0)
            try:
                bound = np.matmul(aa, bb) * 4 * x.shape[-1] * EPS32 * (4 if p.kind == "c" else 1)
            except ValueError:
                bound = None
    # where the sum of |products| passes the largest float, a partial sum may overflow in one
    # summation order and not in another (BLAS reorders too): inf and a finite value both right
    ignore = None
    if bound is not None:
        big = float(np.finfo(F32 if p == BF16 else p).max) / 8
        ignore = bound / (4 * x.shape[-1] * EPS32 * (4 if p.kind == "c" else 1)) > big
    prog.step("matmul", "%s @ %s" % ("v%d" % i, j_src), lambda V: V[i] @ pm_b(V), np_fn, bound=bound, loose=True,
              ignore=ignore)


OPS = [(op_unary, 3), (op_binary, 5), (op_reduce, 3), (op_getitem, 3), (op_setitem, 3),
       (op_manip, 4), (op_sort, 1), (op_matmul, 1)]
_WEIGHTED = [f for f, w in OPS for _ in range(w)]


def run_program(data, max_steps=8, known=None):
    """Draw a program with Hypothesis' data object and check it step by step."""
    prog = Program(known)
    for _ in range(data.draw(st.integers(1, 3), label="inputs")):
        prog.add_input(data.draw(arrays(), label="input"))
    try:
        for _ in range(data.draw(st.integers(1, max_steps), label="steps")):
            data.draw(st.sampled_from(_WEIGHTED), label="op")(data.draw, prog)
        prog.check_all("end")
    except Undefined:
        pass  # a known failure (fuzz driver): the rest of the program is not checked
    return prog
