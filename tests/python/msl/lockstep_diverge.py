"""The runner the lockstep AST tests share (test_lockstep_ast*.py): a kernel `k(x, out, ...)` whose body ends
with a simdgroup whose lanes call different SIMD-group functions (`if (lane < 16) simd_sum(..) else
simd_max(..)`, DIVERGE), which lockstep runs (each branch with the mask of its lanes, MSL's active lanes)
and fibers refuse ("divergent control flow"). A kernel that returns the right numbers ran in lockstep.
Under PYMETAL_CLANG_AST=0 (the token reading, the documented fallback) the shapes only clang's AST lets
lockstep take stay on fibers, and the runner checks that they do.
"""

import os

import numpy as np
import pytest

import pymetal as pm

HEADER = "#include <metal_stdlib>\nusing namespace metal;\n"
DIVERGE = r"""
    float d;
    if (lane < 16) { d = simd_sum(x[gid]); } else { d = simd_max(x[gid]); }
    out[gid] = acc + d;
}
"""


def sums(x):
    """simd_sum(x) in every lane of each simdgroup of 32."""
    return np.repeat(x.reshape(-1, 32).sum(1), 32)


def diverged(x):
    """What DIVERGE adds: the sum of lanes 0-15 in those lanes, the max of lanes 16-31 in those."""
    groups = x.reshape(-1, 32)
    lane = np.arange(x.size) % 32
    return np.where(lane < 16, np.repeat(groups[:, :16].sum(1), 32), np.repeat(groups[:, 16:].max(1), 32))


def run_diverging(source, n, acc, *, ast_only=False, args=(), rtol=0.0):
    """Compiles `source` (a kernel k ending with DIVERGE), runs it on n threads in groups of 32 with
    x = n % 7 - 3, and checks `out` is acc(x) plus DIVERGE's part: in lockstep, since fibers refuse DIVERGE.
    `ast_only`: under PYMETAL_CLANG_AST=0 the kernel must stay on fibers instead (and raise)."""
    lib = pm.compile(source)
    x = (np.arange(n) % 7 - 3).astype(np.float32)
    out = np.zeros(n, np.float32)
    if ast_only and os.environ.get("PYMETAL_CLANG_AST") == "0":
        with pytest.raises(pm.KernelError, match="divergent control flow"):
            lib.k(x, out, *args, grid=n, threadgroup=32)
        return
    lib.k(x, out, *args, grid=n, threadgroup=32)  # fibers would raise: divergent SIMD-group calls
    np.testing.assert_allclose(out, acc(x) + diverged(x), rtol=rtol, atol=0)
