"""Batched matmul with Shaders/matmul.metal: out[b] = a[b] @ b[b].

Two kernel variants: "cpu" (pack A and B into panels, then a register-blocked
tile per thread; no barriers; matrix-vector products read the operands in
place instead) and "gpu" (simdgroup_matrix 8x8 tiles through threadgroup
memory; float32, float16, bfloat16). By default the CPU backend uses "cpu" and
Metal uses "gpu"; integer and bool matmuls always use "cpu" (wrapping around
like NumPy; bool is logical or of ands).
"""

import itertools
import math

import numpy as np

from ..elementwise import elem_strides
from . import Plan, dtype_name, kernel, plan, signature

__all__ = ["matmul"]

MAX_BATCH = 4  # PM_MATMUL_MAX_BATCH in Shaders/matmul.h
TM, TN = 6, 16  # PM_MATMUL_TM / PM_MATMUL_TN in Shaders/matmul.metal
ROW_TN = 64  # PM_MATMUL_ROW_TN
BM, BN = 32, 32  # PM_MATMUL_BM / PM_MATMUL_BN: C tile of one "gpu" threadgroup
CPU_GROUP = 16  # row tiles per threadgroup of the "cpu" variant (they share a B panel)

PARAMS = np.dtype([  # struct MatmulParams, field by field
    ("M", "<i4"), ("N", "<i4"), ("K", "<i4"), ("batch_ndim", "<i4"),
    ("batch_shape", "<i4", (MAX_BATCH,)),
    ("a_off", "<i8"), ("b_off", "<i8"), ("c_off", "<i8"),
    ("a_row", "<i8"), ("a_col", "<i8"), ("b_row", "<i8"), ("b_col", "<i8"),
    ("a_batch", "<i8", (MAX_BATCH,)), ("b_batch", "<i8", (MAX_BATCH,)),
    ("pa_batch", "<i8", (MAX_BATCH,)), ("pb_batch", "<i8", (MAX_BATCH,)),
], align=True)

_FLOATS = ("float32", "float16", "bfloat16")


def _matrix_strides(shape, strides, what):
    """Element strides (row, col) of the inner two dims; one must be unit (the
    kernels take any strides, but would read memory far apart)."""
    (rows, cols), (row, col) = shape, strides
    if rows <= 1:
        row = 1  # never stepped over: any value is right
    if cols <= 1:
        col = 1
    if col != 1 and row != 1:
        raise ValueError("matmul: %s has no unit stride in its last two dimensions "
                         "(element strides %r); it needs a copy" % (what, strides))
    return row, col


def _collapse(shape, *strides):
    """Merges batch dims that are contiguous in every operand; drops size-1 dims."""
    dims = [(n,) + tuple(s[d] for s in strides) for d, n in enumerate(shape) if n != 1]
    out: list = []
    for dim in dims:
        if out and all(prev == cur * dim[0] for prev, cur in zip(out[-1][1:], dim[1:])):
            out[-1] = (out[-1][0] * dim[0],) + dim[1:]
        else:
            out.append(dim)
    return out


_plans: dict = {}


def matmul(a, b, out, *, variant=None):
    """out[..., :, :] = a @ b for pymetal arrays already broadcast to one batch shape.

    a: (*batch, M, K), b: (*batch, K, N), out: (*batch, M, N) C-contiguous, one
    dtype. a and b may be strided views (any batch strides, including 0 for
    broadcast) if each has a unit stride in its last two dimensions; otherwise
    ValueError("... needs a copy"). Returns out; the work is asynchronous.
    """
    dev = out._buf.device
    key = (signature(a, b, out), variant, dev)
    plan(_plans, key, lambda: _plan(a, b, out, variant, dev)).run(a=a, b=b, out=out)
    return out


def _plan(a, b, out, variant, dev):
    dt = a._dtype
    if b._dtype != dt or out._dtype != dt:
        raise TypeError("matmul: operands must have one dtype, got %s, %s and %s" % (dt, b._dtype, out._dtype))
    name = dtype_name(dt, "matmul")
    sa, sb, so = a._shape, b._shape, out._shape
    if len(sa) < 2 or len(sb) < 2 or len(so) != len(sa) or len(sb) != len(sa):
        raise ValueError("matmul: a, b and out need the same number (>= 2) of dimensions, got "
                         "shapes %r, %r and %r" % (sa, sb, so))
    *batch, M, K = sa
    if tuple(sb[:-2]) != tuple(batch) or tuple(so[:-2]) != tuple(batch) or sb[-2] != K or so[-2:] != (M, sb[-1]):
        raise ValueError("matmul: shapes %r @ %r -> %r do not match (*batch, M, K) @ (*batch, K, N) -> "
                         "(*batch, M, N)" % (sa, sb, so))
    N = sb[-1]
    ea, eb, eo = elem_strides(a), elem_strides(b), elem_strides(out)
    if not out._cc:
        raise ValueError("matmul: out must be C-contiguous, has element strides %r" % (eo,))
    if variant is None:
        variant = "gpu" if dev.backend == "metal" and name in _FLOATS else "cpu"
    if variant not in ("cpu", "gpu"):
        raise ValueError("matmul: variant must be 'cpu' or 'gpu', not %r" % (variant,))
    if variant == "gpu" and name not in _FLOATS:
        raise ValueError("matmul: the 'gpu' variant is for float32, float16 and bfloat16, not %s" % name)
    a_row, a_col = _matrix_strides((M, K), ea[-2:], "a")
    b_row, b_col = _matrix_strides((K, N), eb[-2:], "b")
    result = Plan(dev)
    if M == 0 or N == 0 or 0 in batch:
        return result
    if max(M, N, K) >= 1 << 31:
        raise ValueError("matmul: matrices of 2**31 rows or columns or more are not supported")

    # C's batch stride is M*N; dims beyond MAX_BATCH are launched one by one.
    dims = _collapse(batch, ea[:-2], eb[:-2], eo[:-2])
    outer, inner = dims[:-MAX_BATCH] if len(dims) > MAX_BATCH else [], dims[-MAX_BATCH:]
    p = np.zeros((), PARAMS)
    p["M"], p["N"], p["K"] = M, N, K
    p["a_row"], p["a_col"], p["b_row"], p["b_col"] = a_row, a_col, b_row, b_col
    p["batch_ndim"] = len(inner)
    for d, (n, sa_, sb_, _) in enumerate(inner):
        p["batch_shape"][d], p["a_batch"][d], p["b_batch"][d] = n, sa_, sb_
    count = math.prod(d[0] for d in inner)
    for index in itertools.product(*(range(d[0]) for d in outer)):
        p["a_off"] = sum(i * d[1] for i, d in zip(index, outer))
        p["b_off"] = sum(i * d[2] for i, d in zip(index, outer))
        p["c_off"] = sum(i * d[3] for i, d in zip(index, outer))
        if variant == "cpu" and min(M, N) == 1:
            _plan_row(result, name, p, count)
        elif variant == "cpu":
            _plan_cpu(result, name, dt.itemsize, p, inner, count)
        else:
            result.launch(kernel("matmul", "gpu", name, dev), ("a", "b", "out"), p.tobytes(),
                          groups=(-(-N // BN), -(-M // BM), count), threadgroup=(128, 1, 1))
    return result


def _plan_pack(result, name, itemsize, p, inner, which):
    """Packs B (which "b") or A, as B = A^T (which "a"), into panels for
    matmul_cpu, once per batch element the operand really has (its broadcast
    dims are left out), into the scratch role "pack_<which>". Sets
    p["pa_batch"] / p["pb_batch"]."""
    M, N, K = int(p["M"]), int(p["N"]), int(p["K"])
    q = p.copy()
    if which == "a":
        width, cols, pos = TM, M, 1
        q["N"], q["b_row"], q["b_col"], q["b_off"] = M, p["a_col"], p["a_row"], p["a_off"]
    else:
        width, cols, pos = TN, N, 2
    kept = [(d[0], d[pos]) for d in inner if d[pos] != 0]
    q["batch_ndim"] = len(kept)
    q["batch_shape"][:] = 0
    q["b_batch"][:] = 0
    for d, (n, stride) in enumerate(kept):
        q["batch_shape"][d], q["b_batch"][d] = n, stride
    panels = -(-cols // width)
    step, strides = panels * K * width, []
    for d in reversed(inner):  # packed batch strides: dense over the kept dims
        strides.append(step if d[pos] != 0 else 0)
        step *= d[0] if d[pos] != 0 else 1
    p["p%s_batch" % which][:len(inner)] = strides[::-1]
    count = math.prod(n for n, _ in kept)
    acc_size = 4 if name in _FLOATS or itemsize < 8 else 8  # MatmulAcc<T>
    role = "pack_" + which
    result.temp(role, count * panels * K * width * acc_size)
    if K:
        # Threads go along the unit stride (see matmul_pack); a group is one
        # stretch of them, so that it reads one stretch of memory.
        grid = (panels, K, count) if q["b_col"] == 1 else (K, panels, count)
        result.launch(kernel("matmul", "pack" + which, name, result.device), (which, role), q.tobytes(),
                      grid=grid, threadgroup=(min(grid[0], 256), 1, 1))


def _plan_cpu(result, name, itemsize, p, inner, count):
    M, N = int(p["M"]), int(p["N"])
    _plan_pack(result, name, itemsize, p, inner, "a")
    _plan_pack(result, name, itemsize, p, inner, "b")
    tiles = -(-M // TM)
    result.launch(kernel("matmul", "cpu", name, result.device), ("pack_a", "pack_b", "out"), p.tobytes(),
                  grid=(-(-N // TN), tiles, count), threadgroup=(1, min(tiles, CPU_GROUP), 1))


def _plan_row(result, name, p, count):
    """Matrix-vector products: matmul_row over a row of A (M == 1), or over
    out^T = b^T @ a^T when N == 1 (out's memory is the same)."""
    M, N = int(p["M"]), int(p["N"])
    roles = ("a", "b", "out")
    if M != 1:
        q = p.copy()
        q["M"], q["N"] = N, M
        for x, y in (("a", "b"), ("b", "a")):
            q[x + "_off"], q[x + "_batch"] = p[y + "_off"], p[y + "_batch"]
            q[x + "_row"], q[x + "_col"] = p[y + "_col"], p[y + "_row"]
        p, M, N, roles = q, N, M, ("b", "a", "out")
    groups = -(-N // ROW_TN)
    result.launch(kernel("matmul", "row", name, result.device), roles, p.tobytes(),
                  grid=(groups, M, count), threadgroup=(min(groups, 16), 1, 1))
