"""Lockstep's uniformity facts and "which statements meet other threads" read from clang's AST
(Sources/MetalCPU/Compiler/LockstepUniformity.swift), against NumPy.

Every kernel here that ends with DIVERGE (lockstep_diverge.py) must run in lockstep (fibers refuse it).
What the AST decides better than the token reading shows in two ways:
- a loop index or local the group shares is declared once for the group, not kept per thread: with a
  per-thread ballast that fills lockstep's budget (512 bytes a thread) to the byte, the kernel fits only
  when the AST found the index and the local uniform; the token reading keeps them per thread, goes over
  and leaves the kernel on fibers (which refuse DIVERGE: checked under PYMETAL_CLANG_AST=0);
- a statement that names a helper without calling it (a local of the same name), or calls an overload
  that meets nobody, is no SIMD-group statement: lockstep takes the kernel (the token reading, by name,
  left it on fibers).
The other cases guard the analyses: a local that only some threads change, a parameter hidden by a
thread's local, a stride the loop changes must not be taken for values the group shares, and a helper that
meets other threads (a SIMD-group call or barrier in a function, a template, a method, behind a macro)
keeps the kernel on fibers, correct.
"""

import numpy as np
import pytest
from lockstep_diverge import DIVERGE, HEADER, run_diverging, sums

import pymetal as pm

N = 4  # the kernels' parameter n

SIGNATURE = r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
              uint tid [[thread_position_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
              uint tgp [[threadgroup_position_in_grid]]) {
    float acc = 0.0f;
"""

# Per thread: acc, e, pad (496 bytes), the s of a SIMD-group statement and DIVERGE's d: 512 bytes, lockstep's
# budget. A loop index or local kept per thread (4 bytes more) leaves the kernel on fibers.
BALLAST = r"""
    float e = 1.0f;
    e += 1.0f;
    float4 pad[31];
    pad[lane % 31u] = float4(x[gid]);
    acc += pad[lane % 31u].x * 0.0f;
"""

# Each case: the body between SIGNATURE and DIVERGE, acc as NumPy computes it from x, and whether only the AST
# lets lockstep take it.
CASES = {
    # The index shadowed by a thread's `j` in a nested block, which changes it: the index itself is never
    # changed, so the loop is the group's (by name, the token reading saw `j += 3u` and kept j per thread).
    "index_shadowed_in_nested_scope": (BALLAST + r"""
    for (uint j = 0; j < n; j++) {
        { uint j = lane; j += 3u; acc += float(j) * 0.0f; }
        float s = simd_sum(x[gid] * float(j));
        acc += s;
    }
    acc += e;
""", lambda x: sums(x) * (N * (N - 1) / 2) + 2, True),
    # A local set once from a parameter, then a loop bound: declared once for the group, and the loop on it is
    # the group's (the token reading took only `const` locals of literals for the group's).
    "local_from_parameter_bounds_a_loop": (BALLAST + r"""
    uint m = n * 2u;
    for (uint j = 0; j < m; j++) {
        float s = simd_sum(x[gid] * float(j));
        acc += s;
    }
    acc += e;
""", lambda x: sums(x) * (2 * N * (2 * N - 1) / 2) + 2, True),
    # A local that the lanes below 16 change: not the group's. Lanes 0-15 take n steps, the others 2; in steps
    # 2.. only lanes 0-15 are active and simd_sum adds theirs (wrong if the bound were taken for the group's).
    "local_changed_by_some_threads": (r"""
    uint m = 2u;
    if (lane < 16u) m = n;
    for (uint j = 0; j < m; j++) {
        float s = simd_sum(x[gid]);
        acc += s;
    }
""", lambda x: 2 * sums(x) + np.where(np.arange(x.size) % 32 < 16, (N - 2) * _low(x), 0), False),
    # A const local set from the lane: not the group's either.
    "const_from_position": (r"""
    const uint m = lane < 16u ? 3u : 1u;
    for (uint j = 0; j < m; j++) {
        float s = simd_sum(x[gid]);
        acc += s;
    }
""", lambda x: sums(x) + np.where(np.arange(x.size) % 32 < 16, 2 * _low(x), 0), False),
    # A thread's `n` in a nested block hides the parameter n: its loop is no group loop (lanes take 0, 1 or 2
    # steps; simd_sum(1) counts the lanes still in it: 21, then 10).
    "parameter_hidden_by_a_local": (r"""
    for (uint j = 0; j < n; j++) { float s = simd_sum(x[gid]); acc += s; }
    {
        uint n = lane % 3u;
        for (uint j = 0; j < n; j++) { float s = simd_sum(1.0f); acc += s; }
    }
""", lambda x: N * sums(x) + _by_lane(x, lambda lane: 21.0 * (lane % 3 >= 1) + 10.0 * (lane % 3 == 2)), False),
    # A local the group declares once (never changed) hiding a thread's `w` in a block with a SIMD-group call;
    # after the block, `w` is the thread's again.
    "group_local_hides_a_threads": (r"""
    float w = x[gid];
    {
        float w = 2.0f;
        float s = simd_sum(x[gid] * w);
        acc += s;
    }
    acc += w;
""", lambda x: sums(x) * 2 + x, False),
    # A bound set from the group's position: each group takes its own number of steps.
    "local_from_the_groups_position": (r"""
    uint reps = tgp % 2u + 1u;
    for (uint j = 0; j < reps; j++) {
        float s = simd_sum(x[gid]);
        acc += s;
    }
""", lambda x: sums(x) * (np.arange(x.size) // 32 % 2 + 1), False),
    # Macros that hide simd_sum and barriers (`metal::` inside: a barrier the token reading did not know), and a
    # bound behind a macro.
    "macros": (r"""
#define BOUND (n + 1u)
#define SYNC() metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup)
#define REDUCE(v) metal::simd_sum(v)
    threadgroup float tg[32];
    for (uint j = 0; j < BOUND; j++) {
        tg[tid] = x[gid] * float(j);
        SYNC();
        float s = REDUCE(tg[31u - tid]);
        acc += s;
        SYNC();
    }
""", lambda x: sums(x) * (N * (N + 1) / 2), True),
    # A grid-stride loop whose start and stride are locals set through `metal::` functions (invariant: the body
    # never changes them; the start is the thread's).
    "stride_in_a_local": (r"""
    const uint stride = metal::max(tpg, 1u);
    uint base = metal::min(tid, 1000u);
    for (uint i = base; i < 96u; i += stride) acc += float(i);
""", lambda x: _by_lane(x, lambda t: 3.0 * t + 96.0), False),
    # A stride the loop body changes: not invariant (each step is its own).
    "stride_changed_in_the_loop": (r"""
    uint st = 32u;
    for (uint i = tid; i < 200u; i += st) { acc += float(i); st += 32u; }
""", lambda x: _by_lane(x, _growing_steps), False),
    # A local named like a helper that meets other threads (`reduce`, which another kernel calls): a value,
    # not a call (by name, the token reading took every statement naming it for a SIMD-group statement).
    "local_named_like_a_helper": (r"""
    float reduce = x[gid] * 2.0f;
    float s = simd_sum(reduce);
    acc += s + reduce;
""", lambda x: sums(x) * 2 + x * 2, True),
    # The overload of `twice` that meets nobody (the other one shuffles).
    "overload_that_meets_nobody": (r"""
    float t = twice(x[gid]);
    float s = simd_sum(t);
    acc += s;
""", lambda x: sums(x) * 2, True),
}

HELPERS = r"""
float reduce(float v) { return simd_sum(v); }
float twice(float v) { return v * 2.0f; }
float twice(float v, uint l) { return simd_shuffle(v, l); }
kernel void other(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], uint gid [[thread_position_in_grid]]) {
    out[gid] = reduce(x[gid]) + twice(x[gid], 0u);
}
"""


def _by_lane(x, f):
    return np.array([f(i % 32) for i in range(x.size)], np.float32)


def _low(x):
    return np.repeat(x.reshape(-1, 32)[:, :16].sum(1), 32)


def _growing_steps(t):
    total, i, st = 0.0, t, 32
    while i < 200:
        total += i
        st += 32
        i += st
    return total


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n", [32, 96])
def test_uniformity_and_calls_read_from_the_ast(dev, case, n):
    body, acc, ast_only = CASES[case]
    run_diverging(HEADER + HELPERS + SIGNATURE + body + DIVERGE, n, acc, ast_only=ast_only, args=(np.uint32(N),))


# Helpers that meet other threads: the kernel runs on fibers (lockstep would run the call thread by thread),
# correct. Each kernel reads the group's x through threadgroup memory and sums it.
MEETING_HELPERS = {
    "simd_sum_in_a_function": ("float red(float v) { return metal::simd_sum(v); }", "red(tg[31u - tid])"),
    "simd_sum_in_a_template": ("template <typename T> T red(T v) { return simd_sum(v); }", "red<float>(tg[31u - tid])"),
    "simd_sum_in_a_method": ("struct R { float go(float v) const { return simd_sum(v); } };", "R().go(tg[31u - tid])"),
    "helper_behind_a_macro": ("float red(float v) { return simd_sum(v); }\n#define RED(v) red(v)", "RED(tg[31u - tid])"),
    "barrier_in_a_function": ("void sync() { threadgroup_barrier(mem_flags::mem_threadgroup); }\n"
                              "float red(float v) { sync(); return simd_sum(v); }", "red(tg[31u - tid])"),
}


def _meeting(case, diverge):
    helper, call = MEETING_HELPERS[case]
    return HEADER + helper + r"""
kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
              uint gid [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
              uint tid [[thread_position_in_threadgroup]]) {
    threadgroup float tg[32];
    tg[tid] = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = """ + call + ";\n" + (DIVERGE if diverge else "    out[gid] = acc;\n}\n")


@pytest.mark.parametrize("case", sorted(MEETING_HELPERS))
@pytest.mark.parametrize("n", [32, 96])
def test_helpers_that_meet_keep_fibers(dev, case, n):
    lib = pm.compile(_meeting(case, diverge=False))
    x = (np.arange(n) % 7 - 3).astype(np.float32)
    out = np.zeros(n, np.float32)
    lib.k(x, out, grid=n, threadgroup=32)
    np.testing.assert_array_equal(out, sums(x))
    # The same kernel with DIVERGE: fibers refuse it, so the kernel is on fibers (not in lockstep, where the
    # helper's simd_sum would run thread by thread).
    lib = pm.compile(_meeting(case, diverge=True))
    with pytest.raises(pm.KernelError, match="divergent control flow"):
        lib.k(x, out, grid=n, threadgroup=32)


def compile_time_sources():
    """The sources of this file's kernels (scripts measuring pm.compile time)."""
    return [HEADER + HELPERS + SIGNATURE + body + DIVERGE for body, _, _ in CASES.values()] + [
        _meeting(case, diverge=False) for case in MEETING_HELPERS]
