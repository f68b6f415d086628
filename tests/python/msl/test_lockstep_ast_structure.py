"""Lockstep's statement structure read from clang's AST (LockstepAST.structure): statement extents,
declarators, `for` headers, `if (c) return;`, barrier calls. Each kernel here must run in lockstep and
match NumPy.

How a test knows the mode: the kernel ends with a simdgroup whose lanes call different SIMD-group
functions (`if (lane < 16) simd_sum(..) else simd_max(..)`), which lockstep runs (each branch with the
mask of its lanes, MSL's active lanes) and fibers refuse ("divergent control flow"). Under
PYMETAL_CLANG_AST=0 (the token reading, the documented fallback) the shapes only the AST reads stay on
fibers, and the test checks that they do.
"""

import numpy as np
import pytest
from lockstep_diverge import DIVERGE, HEADER, run_diverging
from lockstep_diverge import sums as _sums

import pymetal as pm

SIGNATURE = r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
              uint tid [[thread_position_in_threadgroup]]) {
    float acc = 0.0f;
"""
# Each case: the body between SIGNATURE and DIVERGE, and acc as NumPy computes it from x.
CASES = {
    # `if (c) { return; }`: a return-only branch in braces leaves, as `if (c) return;` does.
    "return_in_braces": (r"""
    if (x[gid] > 100.0f) { return; }
    float s = simd_sum(x[gid]);
    acc += s;
""", lambda x: _sums(x)),
    # `if (c) return; else S`: the threads left run S.
    "return_else": (r"""
    if (x[gid] > 100.0f) return; else acc += 1.0f;
    float s = simd_sum(x[gid]);
    acc += s;
""", lambda x: _sums(x) + 1),
    # The same through a macro, and `{ return; }` with an else block.
    "return_macro_else_block": (r"""
#define LEAVE_IF(c) if (c) { return; } else { acc += 2.0f; }
    LEAVE_IF(x[gid] > 100.0f)
    float s = simd_sum(x[gid]);
    acc += s;
""", lambda x: _sums(x) + 2),
    # `metal::threadgroup_barrier` (qualified) between a write of threadgroup memory and a read of a
    # neighbour's element: a barrier, not a call lockstep does not know.
    "qualified_barrier": (r"""
    threadgroup float tg[32];
    tg[tid] = x[gid];
    metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);
    float s = metal::simd_sum(tg[(tid + 1) % 32]);
    acc += s + tg[(tid + 1) % 32];
""", lambda x: _sums(x) + np.roll(x.reshape(-1, 32), -1, axis=1).ravel()),
    # A barrier behind a macro.
    "macro_barrier": (r"""
#define SYNC() threadgroup_barrier(mem_flags::mem_threadgroup)
    threadgroup float tg[32];
    tg[31 - tid] = x[gid];
    SYNC();
    acc += tg[tid];
""", lambda x: x.reshape(-1, 32)[:, ::-1].ravel()),
    # A macro that hides simd_sum, and `metal::simd_sum`.
    "macro_and_qualified_sum": (r"""
#define REDUCE(v) simd_sum(v)
    float s = REDUCE(x[gid]);
    float t = metal::simd_sum(x[gid] * 2.0f);
    acc += s + t;
""", lambda x: _sums(x) * 3),
    # Comma declarators with a reference: `r` is bound to the thread's `t` (which is kept in place).
    "comma_reference": (r"""
    float t = x[gid], &r = t, s = 0;
    r *= 2.0f;
    s = simd_sum(t);
    acc += s + r;
""", lambda x: _sums(x) * 2 + x * 2),
    # A reference first, a const reference, and a reference into threadgroup memory.
    "references": (r"""
    threadgroup float tg[32];
    float t = x[gid];
    float &r = t, u = 1.0f;
    const float &c = u;
    threadgroup float &slot = tg[tid];
    slot = r + c;
    r += 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = simd_sum(t);
    acc += s + tg[tid];
""", lambda x: _sums(x) + 32 + x + 1),
    # A two-dimensional local: its extents are in clang's type (the tokens read one `[n]`).
    "two_dimensional_local": (r"""
    float m[2][3];
    for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) m[i][j] = x[gid] * float(i * 3 + j);
    float s = simd_sum(m[1][2]);
    acc += s;
""", lambda x: _sums(x) * 5),
    # Names shadowed in nested scopes: the inner `w`s are other variables.
    "shadowed_names": (r"""
    float w = 2.0f;
    { float w = 5.0f; acc += w * 0.0f; }
    for (int i = 0; i < 2; i++) { float w = float(i); acc += w; }
    float s = simd_sum(x[gid] * w);
    { int w = 3; acc += float(w); }
    acc += s;
""", lambda x: _sums(x) * 2 + 1 + 3),
    # A for header with commas and two variables, around a SIMD-group call.
    "for_two_variables": (r"""
    for (uint j = 0, k = 3; j < 3; j++, k--) {
        float s = simd_sum(x[gid] * float(j + k - 2));
        acc += s;
    }
""", lambda x: _sums(x) * 3),
    # A header whose condition reads the second variable, with an empty step written in the body.
    "for_second_variable_bound": (r"""
    for (int j = 0, m = 2; j < m;) {
        float s = simd_sum(x[gid]);
        acc += s;
        ++j;
    }
""", lambda x: _sums(x) * 2),
    # Statements whose clang range stops before their `;` (an expression ending in a brace, a do-while)
    # and a pragma that goes with the next statement.
    "statement_ends": (r"""
    float2 v;
    v = float2{x[gid], 1.0f};
    int q = 0;
    do { q++; } while (q < 3);
#pragma unroll
    for (int i = 0; i < 2; i++) acc += v.y;
    float s = simd_sum(v.x * float(q));
    acc += s;
""", lambda x: _sums(x) * 3 + 2),
}

# Shapes the token reading (PYMETAL_CLANG_AST=0) leaves on fibers.
AST_ONLY = {"return_in_braces", "return_else", "return_macro_else_block", "qualified_barrier", "comma_reference",
            "references", "two_dimensional_local"}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n", [32, 96])
def test_structure_read_from_the_ast(dev, case, n):
    body, acc = CASES[case]
    run_diverging(HEADER + SIGNATURE + body + DIVERGE, n, acc, ast_only=case in AST_ONLY, rtol=1e-6)


# Threads that leave by `if (c) { return; }` do not take part in the SIMD-group calls after it (MSL's
# active lanes): the sum is over the lanes that stayed.
LEAVERS = HEADER + r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    out[gid] = -1.0f;
    if (lane % 3 == 0) {
        return;
    }
    float s = simd_sum(x[gid]);
    out[gid] = s;
}
"""


@pytest.mark.parametrize("n", [32, 64])
def test_leaving_lanes_take_no_part(dev, n):
    lib = pm.compile(LEAVERS)
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    lib.k(x, out, grid=n, threadgroup=32)
    lane = np.arange(n) % 32
    stay = (lane % 3 != 0).reshape(-1, 32)
    sums = np.repeat((x.reshape(-1, 32) * stay).sum(1), 32)
    np.testing.assert_array_equal(out, np.where(lane % 3 == 0, -1.0, sums))


# References lockstep does not keep per thread (the kernels run as they are, on fibers, and match): one
# bound to a temporary (`const float &c = x * 2`: its life is the reference's), one bound to a position
# (a new value in each of lockstep's statements), `auto &` (no type to keep).
REFERENCES_LEFT_ALONE = {
    "temporary": ("    const float &c = x[gid] * 2.0f;\n", "c", lambda x: x * 2),
    "position": ("    const uint &g = gid;\n", "float(g) * 0.0f + x[gid]", lambda x: x),
    "auto": ("    float t = x[gid];\n    auto &a = t;\n    a += 1.0f;\n", "t", lambda x: x + 1),
}


@pytest.mark.parametrize("case", sorted(REFERENCES_LEFT_ALONE))
@pytest.mark.parametrize("n", [32, 64])
def test_references_left_alone(dev, case, n):
    body, value, want = REFERENCES_LEFT_ALONE[case]
    lib = pm.compile(HEADER + r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
""" + body + "    float s = simd_sum(" + value + ");\n    out[gid] = s;\n}\n")
    x = (np.arange(n) % 5).astype(np.float32)
    out = np.zeros(n, np.float32)
    lib.k(x, out, grid=n, threadgroup=32)
    np.testing.assert_array_equal(out, _sums(want(x)))
