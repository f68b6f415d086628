"""Which of NumPy's main-namespace functions that CuPy implements pymetal has (issue 23).

The list below is CuPy's comparison table (docs.cupy.dev, "Comparison Table", module level),
the functions CuPy implements, without strings, datetimes, file I/O, masked arrays, polynomials,
dtype classes, constants and NumPy's configuration/introspection helpers (the issue's scope).
A name counts as present when ``getattr(pymetal, name)`` is callable.

    python scripts/numpy_coverage.py                       # this checkout: counts, then the missing names
    python scripts/numpy_coverage.py --rev c8dbd90 --rev HEAD   # a table over git revisions
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CUPY = {
    "creation": """empty empty_like eye identity ones ones_like zeros zeros_like full full_like array asarray
        asanyarray ascontiguousarray asfortranarray asarray_chkfinite copy frombuffer fromfunction fromiter
        arange linspace logspace geomspace meshgrid mgrid ogrid diag diagflat tri tril triu vander""",
    "manipulation": """copyto shape reshape ravel moveaxis rollaxis swapaxes transpose permute_dims atleast_1d
        atleast_2d atleast_3d broadcast_to broadcast_arrays broadcast_shapes expand_dims squeeze asfarray
        concatenate concat stack vstack hstack dstack column_stack row_stack split array_split dsplit hsplit
        vsplit unstack tile repeat delete insert append resize trim_zeros unique flip fliplr flipud roll rot90
        require astype matrix_transpose""",
    "binary": """bitwise_and bitwise_or bitwise_xor invert bitwise_not left_shift right_shift bitwise_invert
        bitwise_left_shift bitwise_right_shift bitwise_count packbits unpackbits binary_repr""",
    "indexing": """c_ r_ s_ nonzero where indices ix_ ravel_multi_index unravel_index diag_indices
        diag_indices_from mask_indices tril_indices tril_indices_from triu_indices triu_indices_from take
        take_along_axis choose compress diagonal select place put put_along_axis putmask fill_diagonal
        flatiter nditer ndindex iterable""",
    "linalg": """dot vdot inner outer matmul tensordot einsum kron trace vecdot matvec vecmat""",
    "logic": """all any isfinite isinf isnan isneginf isposinf iscomplex iscomplexobj isreal isrealobj isscalar
        isfortran logical_and logical_or logical_not logical_xor allclose isclose array_equal array_equiv
        greater greater_equal less less_equal equal not_equal""",
    "math": """sin cos tan arcsin arccos arctan hypot arctan2 degrees radians unwrap deg2rad rad2deg asin acos
        atan atan2 sinh cosh tanh arcsinh arccosh arctanh asinh acosh atanh round around rint fix floor ceil
        trunc prod sum nanprod nansum cumprod cumsum nancumprod nancumsum diff ediff1d gradient cross trapezoid
        trapz cumulative_sum cumulative_prod exp expm1 exp2 log log10 log2 log1p logaddexp logaddexp2 i0 sinc
        signbit copysign frexp ldexp nextafter spacing lcm gcd add reciprocal positive negative multiply divide
        power pow subtract true_divide floor_divide float_power fmod mod modf remainder divmod angle real imag
        conj conjugate convolve clip sqrt cbrt square absolute abs fabs sign heaviside maximum minimum fmax fmin
        nan_to_num real_if_close interp""",
    "sorting": """sort lexsort argsort msort sort_complex partition argpartition argmax nanargmax argmin
        nanargmin argwhere flatnonzero searchsorted extract count_nonzero""",
    "statistics": """ptp percentile nanpercentile quantile nanquantile median average mean std var nanmedian
        nanmean nanstd nanvar corrcoef correlate cov histogram histogram2d histogramdd bincount digitize amin
        amax max min nanmax nanmin""",
    "sets": """unique unique_all unique_counts unique_inverse unique_values in1d isin intersect1d setdiff1d
        setxor1d union1d""",
    "misc": """apply_along_axis apply_over_axes piecewise vectorize pad bartlett blackman hamming hanning
        kaiser result_type can_cast min_scalar_type common_type promote_types finfo iinfo isdtype issubdtype
        may_share_memory shares_memory""",
}


def names():
    out = {}
    for group, text in CUPY.items():
        for n in text.split():
            out.setdefault(n, group)
    return out


def present(listed):
    """The listed names pymetal (as imported here) has, as callables or index helpers (c_, mgrid)."""
    import pymetal as pm
    have = []
    for n in listed:
        try:
            v = getattr(pm, n)
        except Exception:
            continue
        if callable(v) or hasattr(v, "__getitem__"):
            have.append(n)
    return have


def at_revision(rev):
    """present() for pymetal's Python package as of git revision `rev` (in a subprocess)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "pymetal"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        env = dict(os.environ, PYTHONPATH=tmp)
        code = "import sys, json; sys.path.insert(0, %r); from numpy_coverage import present, names; " \
               "print(json.dumps(present(names())))" % os.path.join(ROOT, "scripts")
        r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("numpy_coverage: %s: %s" % (rev, r.stderr[-2000:]))
        return set(json.loads(r.stdout.strip().splitlines()[-1]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rev", action="append", help="a git revision to compare (repeatable)")
    args = p.parse_args()
    listed = names()
    groups = list(CUPY)
    if not args.rev:
        have = set(present(listed))
        cols = [("this checkout", have)]
    else:
        cols = [(rev, at_revision(rev)) for rev in args.rev]
    print("NumPy functions CuPy implements (scope of issue 23): %d" % len(listed))
    print("| group | CuPy | " + " | ".join(name for name, _ in cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for g in groups + ["total"]:
        in_g = [n for n, gg in listed.items() if gg == g or g == "total"]
        print("| %s | %d | " % (g, len(in_g)) + " | ".join(str(len(set(in_g) & have)) for _, have in cols) + " |")
    last = cols[-1][1]
    missing = sorted(set(listed) - last)
    print("\nmissing in %s (%d): %s" % (cols[-1][0], len(missing), " ".join(missing)))
    if len(cols) > 1:
        added = sorted(last - cols[0][1])
        print("\nadded since %s (%d): %s" % (cols[0][0], len(added), " ".join(added)))


if __name__ == "__main__":
    main()
