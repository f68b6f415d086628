"""Lockstep's reading of kernel bodies from clang's AST (Sources/MetalCPU/Compiler/LockstepAST.swift),
and the mode of each instantiation of overloaded kernel templates, against NumPy.

How a test knows the mode a kernel ran in: a simdgroup whose lanes call different SIMD-group
functions (`if (lane < 16) simd_sum(..) else simd_max(..)`) runs under lockstep (each branch
with the mask of its lanes, MSL's active lanes) and is refused by fibers ("divergent control
flow"); a private array larger than a fiber's stack (128 KiB) runs in loop mode (a kernel
that meets no other thread) and overruns a fiber's stack.
"""

import numpy as np
import pytest
from lockstep_diverge import DIVERGE, HEADER, run_diverging, sums

import pymetal as pm

# ---------------------------------------------------------------------------
# Overloaded kernel templates: each instantiation takes the mode of its own template's body
# ---------------------------------------------------------------------------

# The last overload meets other threads (simd_sum); the first is a plain kernel whose 256 KiB private
# array only fits a loop-mode thread's stack. Before, every instantiation of the name took the mode of
# the last template's body: the first one ran on fibers and overran their stack.
OVERLOADS = HEADER + r"""
template <typename T, int N>
[[kernel]] void pick(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    volatile T big[65536];                     // 256 KiB for float: more than a fiber's stack
    big[(i * 977) % 65536] = x[i] * T(N);
    y[i] = big[(i * 977) % 65536];
}
template <typename T, int N, bool sum>
[[kernel]] void pick(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
    y[i] = sum ? simd_sum(x[i]) * T(N) : x[i];
}
template [[host_name("plain")]] [[kernel]] decltype(pick<float, 3>) pick<float, 3>;
template [[host_name("summed")]] [[kernel]] decltype(pick<float, 2, true>) pick<float, 2, true>;
"""


@pytest.mark.parametrize("n", [1, 31, 64, 100])
def test_overloads_take_their_own_mode(dev, n):
    lib = pm.compile(OVERLOADS)
    x = np.arange(n, dtype=np.float32) - 7
    y = np.zeros_like(x)
    lib.plain(x, y, grid=n, threadgroup=32)           # loop mode: the big array fits
    np.testing.assert_array_equal(y, x * 3)
    lib.summed(x, y, grid=n, threadgroup=32)
    pad = np.zeros(-n % 32, np.float32)
    group_sums = np.repeat(np.concatenate([x, pad]).reshape(-1, 32).sum(1), 32)[:n]
    np.testing.assert_array_equal(y, group_sums * 2)


# ---------------------------------------------------------------------------
# Uses that change a variable, as clang reads them (LockstepAST.use): spellings the token reading missed
# ---------------------------------------------------------------------------

# Each kernel ends with DIVERGE (lockstep_diverge.py): lanes 0-15 and 16-31 call different SIMD-group
# functions, which lockstep runs and fibers refuse.
SIGNATURE = r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    float acc = 0.0f;
"""

CHANGES = {
    # `&(j)`: the loop index's address, taken in parentheses. The token reading kept j per thread as a copy
    # made for each statement (it saw no `&j`), so p pointed at a copy gone after the statement and the
    # loop took 8 steps instead of 4.
    "address_in_parens": (r"""
    for (uint j = 0; j < 8; j++) {
        float s = simd_sum(x[gid] * float(j));
        acc += s;
        thread uint *p = &(j);
        *p += 1;
    }
""", [0, 2, 4, 6]),
    # `&(v)` of a local at the body's level, written through the pointer in a later statement.
    "address_of_local": (r"""
    float v = 1.0f;
    thread float *q = &(v);
    *q += 2.0f;
    float s = simd_sum(x[gid] * v);
    acc += s;
""", [3]),
    # `(j) += 1` and `++(j)`: the index changes in the body, so the loop is no group-wide loop.
    "assigned_in_parens": (r"""
    for (uint j = 0; j < 12; j++) {
        float s = simd_sum(x[gid] * float(j));
        acc += s;
        (j) += 1;
        ++(j);
    }
""", [0, 3, 6, 9]),
    # `>>=` on the index, and an index passed by value to a function (read: it stays one loop for the group).
    "shift_assign": (r"""
    for (uint j = 64; j > 1; j >>= 1) {
        float s = simd_sum(x[gid] * float(max(j, 2u) / 2));
        acc += s;
    }
""", [32, 16, 8, 4, 2, 1]),
    # `metal::simd_sum` through a macro, and a block that shadows a name of the body's level.
    "qualified_macro_shadow": (r"""
    #define REDUCE(v) metal::simd_sum(v)
    float w = 2.0f;
    { float w = 5.0f; acc += w * 0.0f; }
    float s = REDUCE(x[gid] * w);
    acc += s;
""", [2]),
    # Locals of typedef'd array types (1-D, 2-D, half): their size is in clang's type, not in the tokens.
    "typedef_arrays": (r"""
    typedef float row[4];
    typedef float tile[2][3];
    typedef half hrow[2];
    row a;
    tile t;
    hrow h;
    for (int j = 0; j < 4; j++) a[j] = x[gid] * float(j);
    t[1][2] = x[gid] * 3.0f;
    t[0][0] = x[gid];
    h[0] = half(x[gid]);
    h[1] = h[0] * 2.0h;
    float s = simd_sum(a[1] + a[3] + (t[1][2] - t[0][0]) + float(h[1]));
    acc += s;
""", [4, 2, 2]),
    # A lambda that captures nothing, declared once for the group (its body returns: not a thread leaving).
    "lambda": (r"""
    auto twice = [](float a) { return a * 2.0f; };
    auto scale = [=](float a, float k) -> float { if (k < 0.0f) return 0.0f; return a * k; };
    float v = twice(x[gid]);
    float w = scale(v, 1.5f);            // (not inside the simd_sum statement, which runs twice: LAMBDA_EFFECT)
    float s = simd_sum(w);
    acc += s;
""", [3]),
}


# Shapes only clang's AST lets lockstep take: the token reading (PYMETAL_CLANG_AST=0) leaves them on fibers.
AST_ONLY = {"typedef_arrays", "lambda"}


@pytest.mark.parametrize("case", sorted(CHANGES))
@pytest.mark.parametrize("n", [32, 96])
def test_changes_read_from_the_ast(dev, case, n):
    body, factors = CHANGES[case]
    run_diverging(HEADER + SIGNATURE + body + DIVERGE, n, lambda x: sums(x) * sum(factors), ast_only=case in AST_ONLY)


# A position parameter changed in parentheses: lockstep recomputes positions for each statement, so such a
# kernel must not be rewritten (the token reading missed `(lane) ^= 1` and lost the change).
POSITION = HEADER + r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    (lane) ^= 1u;
    float v = simd_shuffle(x[gid], lane);
    out[gid] = v;
}
"""


@pytest.mark.parametrize("n", [32, 64])
def test_position_changed_in_parentheses(dev, n):
    lib = pm.compile(POSITION)
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    lib.k(x, out, grid=n, threadgroup=32)
    np.testing.assert_array_equal(out, x[np.arange(n) ^ 1])


# Lambdas lockstep must not take as they are (the kernels stay on fibers and match):
# - one that meets other threads is no value of the group's (a call would run it thread by thread);
# - one with a side effect in a statement with a SIMD-group call, which runs twice in lockstep (operands,
#   then results): the lambda counts as a function that may not be pure. `bump` adds 1 to out[gid] once.
LAMBDAS = {
    "calls_simd_sum": r"""
    auto reduce = [](float a) { return simd_sum(a); };
    float s = reduce(x[gid]);
""",
    "side_effect": r"""
    auto bump = [](device float* p, float v) { *p += 1.0f; return v; };
    float s = simd_sum(bump(out + gid, x[gid]));
""",
}


@pytest.mark.parametrize("case", sorted(LAMBDAS))
@pytest.mark.parametrize("n", [32, 64])
def test_lambdas_lockstep_leaves_alone(dev, case, n):
    lib = pm.compile(HEADER + r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], device float* sums [[buffer(2)]],
              uint gid [[thread_position_in_grid]]) {""" + LAMBDAS[case] + "    sums[gid] = s;\n}\n")
    x = (np.arange(n) % 5).astype(np.float32)
    out = np.zeros(n, np.float32)
    sums = np.zeros(n, np.float32)
    lib.k(x, out, sums, grid=n, threadgroup=32)
    np.testing.assert_array_equal(out, np.full(n, 1.0 if case == "side_effect" else 0.0, np.float32))
    np.testing.assert_array_equal(sums, np.repeat(x.reshape(-1, 32).sum(1), 32))
