"""The kernel sanitizer (PYMETAL_VALIDATION=1, CPU backend): realistic buggy
kernels are reported with their exact phrase, the kernel, the parameter's
name, the source line and a thread position; correct kernels and the array
library's own operations run clean.

Validation is read from the environment when the library loads, so every
case runs in a child process of its own (the kernels are compiled once, by
the first child, then come from the disk cache)."""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

KERNELS = r'''
#include <metal_stdlib>
using namespace metal;
// ---- buggy ----
kernel void reduce_no_barrier(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                              uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]],
                              uint g [[threadgroup_position_in_grid]]) {
    threadgroup float sh[64];
    sh[t] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = 32; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];   // no barrier between the steps
    }
    if (t == 0) out[g] = sh[0];
}
kernel void matmul_wrong_bound(device const float *A [[buffer(0)]], device const float *B [[buffer(1)]],
                               device float *C [[buffer(2)]], constant uint &n [[buffer(3)]],
                               uint2 gid [[thread_position_in_grid]], uint2 tid [[thread_position_in_threadgroup]]) {
    threadgroup float ta[8][8], tb[8][8];
    float acc = 0;
    for (uint k0 = 0; k0 < n; k0 += 8) {
        // wrong bound: loads whole tiles although n is not a multiple of 8
        ta[tid.y][tid.x] = A[gid.y * n + k0 + tid.x];
        tb[tid.y][tid.x] = B[(k0 + tid.y) * n + gid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < 8; k++) acc += ta[tid.y][k] * tb[k][tid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (gid.x < n && gid.y < n) C[gid.y * n + gid.x] = acc;
}
kernel void histogram_no_atomics(device const uint *v [[buffer(0)]], device uint *hist [[buffer(1)]],
                                 uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]]) {
    threadgroup uint local[16];
    if (t < 16) local[t] = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    local[v[i] % 16] += 1;               // not atomic: threads of the group collide
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (t < 16) atomic_fetch_add_explicit((device atomic_uint *)&hist[t], local[t], memory_order_relaxed);
}
kernel void scan_unwritten(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                           uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]]) {
    threadgroup float sh[64];
    if (t > 0) sh[t] = a[i];             // element 0 is never written
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = 0;
    for (uint j = 0; j <= t; j++) s += sh[j];
    out[i] = s;
}
kernel void early_return(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                         constant uint &n [[buffer(2)]],
                         uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]]) {
    threadgroup float sh[64];
    if (i >= n) return;                  // before the barrier
    sh[t] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = sh[63 - t];
}
kernel void if_else_barriers(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]],
                             uint t [[thread_position_in_threadgroup]]) {
    threadgroup float sh[64];
    sh[t] = i;
    if (t < 16) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out[i] = sh[t + 1];
    } else {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out[i] = sh[t - 1];
    }
}
kernel void stencil_edge(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
    float right = a[i + 1];              // off by one at the last element
    out[i] = (i > 0 ? a[i - 1] : 0.0f) + a[i] + right;
}
kernel void write_past(device float *b [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    b[i + 1] = 1.0f;
}
kernel void read_constant_past(constant float *c [[buffer(0)]], device float *out [[buffer(1)]],
                               uint i [[thread_position_in_grid]]) {
    out[i] = c[i + 1];
}
kernel void tg_param_past(device float *out [[buffer(0)]], threadgroup float *s [[threadgroup(0)]],
                          uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]]) {
    s[t + 1] = i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = s[t];
}
kernel void global_histogram_no_atomics(device const uint *v [[buffer(0)]], device uint *hist [[buffer(1)]],
                                        uint i [[thread_position_in_grid]]) {
    hist[v[i] % 8] += 1;                 // threads of the dispatch collide in device memory
}
kernel void log_of_negative(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
    float x = a[i] - 1.0f;               // negative for a[i] < 1
    out[i] = log(x);
}
// ---- correct ----
kernel void reduce_ok(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                      uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]],
                      uint g [[threadgroup_position_in_grid]]) {
    threadgroup float sh[64];
    sh[t] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = 32; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (t == 0) out[g] = sh[0];
}
kernel void matmul_ok(device const float *A [[buffer(0)]], device const float *B [[buffer(1)]],
                      device float *C [[buffer(2)]], constant uint &n [[buffer(3)]],
                      uint2 gid [[thread_position_in_grid]], uint2 tid [[thread_position_in_threadgroup]]) {
    threadgroup float ta[8][8], tb[8][8];
    float acc = 0;
    for (uint k0 = 0; k0 < n; k0 += 8) {
        uint ka = k0 + tid.x, kb = k0 + tid.y;
        ta[tid.y][tid.x] = gid.y < n && ka < n ? A[gid.y * n + ka] : 0.0f;
        tb[tid.y][tid.x] = kb < n && gid.x < n ? B[kb * n + gid.x] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < 8; k++) acc += ta[tid.y][k] * tb[k][tid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (gid.x < n && gid.y < n) C[gid.y * n + gid.x] = acc;
}
kernel void histogram_ok(device const uint *v [[buffer(0)]], device atomic_uint *hist [[buffer(1)]],
                         constant uint &n [[buffer(2)]],
                         uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]]) {
    threadgroup atomic_uint local[16];
    if (t < 16) atomic_store_explicit(&local[t], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (i < n) atomic_fetch_add_explicit(&local[v[i] % 16], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (t < 16) atomic_fetch_add_explicit(&hist[t], atomic_load_explicit(&local[t], memory_order_relaxed),
                                          memory_order_relaxed);
}
kernel void scan_ok(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                    constant uint &n [[buffer(2)]],
                    uint i [[thread_position_in_grid]], uint t [[thread_position_in_threadgroup]]) {
    threadgroup float buf[2][64];        // Hillis-Steele, double buffered
    uint src = 0;
    buf[0][t] = i < n ? a[i] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint d = 1; d < 64; d <<= 1) {
        buf[1 - src][t] = buf[src][t] + (t >= d ? buf[src][t - d] : 0.0f);
        src = 1 - src;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (i < n) out[i] = buf[src][t];
}
kernel void simd_reduce(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                        constant uint &n [[buffer(2)]],
                        uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]], uint g [[threadgroup_position_in_grid]],
                        uint t [[thread_position_in_threadgroup]]) {
    threadgroup float part[2];
    float v = simd_sum(i < n ? a[i] : 0.0f);
    if (lane == 0) part[sg] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (t == 0) out[g] = part[0] + part[1];
}
kernel void grid_stride(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                        constant uint &n [[buffer(2)]],
                        uint i [[thread_position_in_grid]], uint total [[threads_per_grid]]) {
    for (uint j = i; j < n; j += total) out[j] = a[j] * 2.0f;
}
kernel void scale_half(device const half *a [[buffer(0)]], device half *out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    out[i] = a[i] * 2.0h;                // passes NaNs it reads on: not reported
}
kernel void global_histogram_cast_atomics(device const uint *v [[buffer(0)]], device uint *hist [[buffer(1)]],
                                          constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) atomic_fetch_add_explicit((device atomic_uint *)&hist[v[i] % 8], 1u, memory_order_relaxed);
}
kernel void stencil_ok(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                       constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float left = i > 0 ? a[i - 1] : 0.0f, right = i + 1 < n ? a[i + 1] : 0.0f;
    out[i] = left + a[i] + right;
}
'''

PRELUDE = '''
import sys, numpy as np, pymetal as pm
lib = pm.compile(%r)
def run(fn):
    try:
        fn()
        pm.synchronize()
    except pm.KernelError as e:
        print("KERNEL-ERROR", str(e), flush=True)
    else:
        print("CLEAN", flush=True)
    # the process survives and the next kernel runs
    a = np.arange(64, dtype=np.float32); out = np.zeros(1, np.float32)
    lib.reduce_ok(a, out, grid=64, threadgroup=64)
    assert out[0] == a.sum(), out
    print("NEXT-OK", flush=True)
''' % KERNELS


def run_child(body, validation="1", timeout=300):
    env = dict(os.environ, PYMETAL_REQUIRE_LIBRARY="1")
    env.pop("PYMETAL_VALIDATION", None)
    if validation is not None:
        env["PYMETAL_VALIDATION"] = validation
    code = PRELUDE + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, "child failed (%d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert "NEXT-OK" in proc.stdout, proc.stdout
    return proc.stdout


def kernel_error(out):
    line = next((l for l in out.splitlines() if l.startswith(("KERNEL-ERROR", "CLEAN"))), "")
    assert line.startswith("KERNEL-ERROR"), "no KernelError:\n" + out
    return line


F32 = "np.float32"


def line_of(text):
    """'line N of program_source' for the first source line holding text."""
    n = next(i for i, l in enumerate(KERNELS.split("\n"), 1) if text in l)
    return "line %d of program_source" % n

# name: (the call, words the message must hold)
BUGGY = {
    "reduce_missing_barrier": (
        "lib.reduce_no_barrier(np.arange(128, dtype=%s), np.zeros(2, %s), grid=128, threadgroup=64)" % (F32, F32),
        ["reduce_no_barrier", "data race", "`sh`", line_of("sh[t] += sh[t + s];   // no barrier"), "position ("]),
    "tiled_matmul_wrong_bound": (
        "n = 13; A = pm.asarray(np.ones((n, n), %s)); B = pm.asarray(np.ones((n, n), %s)); C = pm.zeros((n, n), %s)\n"
        "    lib.matmul_wrong_bound(A, B, C, np.uint32(n), grid=(16, 16), threadgroup=(8, 8))" % (F32, F32, F32),
        ["matmul_wrong_bound", "out of bounds", "169 elements of 4 bytes", "position ("]),
    "histogram_without_atomics": (
        "lib.histogram_no_atomics(np.arange(64, dtype=np.uint32) % 3, np.zeros(16, np.uint32), grid=64, "
        "threadgroup=64)",
        ["histogram_no_atomics", "data race", "`local`", line_of("local[v[i] % 16] += 1;")]),
    "global_histogram_without_atomics": (
        "lib.global_histogram_no_atomics(np.arange(100, dtype=np.uint32), np.zeros(8, np.uint32), grid=100, "
        "threadgroup=32)",
        ["global_histogram_no_atomics", "data race", "`hist` [[buffer(1)]]", "without atomics",
         line_of("hist[v[i] % 8] += 1;")]),
    "scan_reads_unwritten_shared_memory": (
        "lib.scan_unwritten(np.ones(64, %s), np.zeros(64, %s), grid=64, threadgroup=64)" % (F32, F32),
        ["scan_unwritten", "uninitialized", "element 0 of the threadgroup array `sh`", line_of("for (uint j = 0; j <= t; j++) s += sh[j];"),
         "position ("]),
    "early_return_before_barrier": (
        "lib.early_return(np.ones(50, %s), np.zeros(50, %s), np.uint32(50), grid=64, threadgroup=64)" % (F32, F32),
        ["early_return", "barrier divergence", "returned early"]),
    "if_else_different_barriers": (
        "lib.if_else_barriers(np.zeros(64, %s), grid=64, threadgroup=64)" % F32,
        ["if_else_barriers", "barrier divergence"]),
    # pymetal rounds this array's buffer up to a size class: only the exact range catches it
    "stencil_off_by_one_pymetal_array": (
        "a = pm.asarray(np.ones(10, %s)); o = pm.zeros(10, %s)\n"
        "    lib.stencil_edge(a, o, grid=10)" % (F32, F32),
        ["stencil_edge", "out of bounds", "element 10 of `a` [[buffer(0)]]", "10 elements of 4 bytes",
         line_of("float right = a[i + 1];"), "(9,0,0)"]),
    "stencil_off_by_one_numpy_size_1": (
        "lib.stencil_edge(np.ones(1, %s), np.zeros(1, %s), grid=1)" % (F32, F32),
        ["out of bounds", "element 1 of `a`", "1 elements of 4 bytes", "(0,0,0)"]),
    "write_one_past_odd_size": (
        "b = np.zeros(17, %s)\n    lib.write_past(b, grid=17)" % F32,
        ["write_past", "out of bounds", "element 17 of `b` [[buffer(0)]]", "17 elements", line_of("b[i + 1] = 1.0f;"), "(16,0,0)"]),
    "write_past_a_view_at_an_offset": (
        "base = pm.zeros(64, %s); v = base[3:8]\n    lib.write_past(v, grid=5)" % F32,
        ["out of bounds", "element 5 of `b`", "5 elements", "(4,0,0)"]),
    "write_past_a_numpy_view_at_an_offset": (
        "base = np.zeros(1 << 16, %s); v = base[3:20]\n    lib.write_past(v, grid=17)" % F32,
        ["out of bounds", "element 17 of `b`", "17 elements"]),
    "constant_buffer_one_past": (
        "lib.read_constant_past(np.ones(7, %s), np.zeros(7, %s), grid=7)" % (F32, F32),
        ["read_constant_past", "out of bounds", "element 7 of `c` [[buffer(0)]]", line_of("out[i] = c[i + 1];")]),
    "threadgroup_parameter_one_past": (
        "lib.tg_param_past(np.zeros(32, %s), grid=32, threadgroup=32, threadgroup_memory={0: 32 * 4})" % F32,
        ["tg_param_past", "out of bounds", "element 32 of `s` [[threadgroup(0)]]", "(31,0,0)"]),
}




@pytest.mark.parametrize("case", sorted(BUGGY))
def test_buggy_kernel_is_reported(dev, case):
    call, words = BUGGY[case]
    line = kernel_error(run_child("def case():\n    %s\nrun(case)\n" % call,
                                  validation="1"))
    for w in words:
        assert w in line, (w, line)


def test_barrier_divergence_also_without_validation(dev):
    # the same check in both modes (validation used to lose the if/else case): simdgroups waiting
    # at different barriers would pair them up wrongly on a GPU
    for validation in (None, "1"):
        line = kernel_error(run_child("run(lambda: lib.if_else_barriers(np.zeros(64, np.float32), grid=64, "
                                      "threadgroup=64))\n", validation=validation))
        assert "barrier divergence" in line, line


def test_early_return_before_barrier_only_reported_by_validation(dev):
    # Apple GPUs let threads that returned stay out of later barriers (MLX's gemv and
    # col_reduce_small rely on it), so a normal run gives the GPU's answer; validation keeps
    # MSL's rule that every thread reaches the barrier (runtime_common.h, gpu_barriers)
    call = ("a = np.arange(64, dtype=np.float32); out = np.zeros(64, np.float32)\n"
            "run(lambda: lib.early_return(a, out, np.uint32(50), grid=64, threadgroup=64))\n"
            "print('OUT', ' '.join(str(v) for v in out.tolist()))\n")
    line = kernel_error(run_child(call, validation="1"))
    assert "barrier divergence" in line and "returned early" in line, line
    plain = run_child(call, validation=None)
    assert "CLEAN" in plain, plain
    got = next(l for l in plain.splitlines() if l.startswith("OUT")).split()[1:]
    # out[i] = sh[63 - t]: only the threads whose mirror ran (i < 50 and 63 - i < 50) read a written value
    want = [str(float(63 - i)) for i in range(14, 50)]
    assert got[14:50] == want, got


CORRECT = r'''
rng = np.random.default_rng(0)
for n in (1, 13, 64, 100):
    a = rng.standard_normal(n * 64).astype(np.float32)
    out = np.zeros(n, np.float32)
    lib.reduce_ok(a, out, grid=n * 64, threadgroup=64)
    np.testing.assert_allclose(out, a.reshape(n, 64).sum(1), rtol=1e-5, atol=1e-4)
for n in (1, 5, 8, 13, 20):
    A = rng.standard_normal((n, n)).astype(np.float32); B = rng.standard_normal((n, n)).astype(np.float32)
    C = pm.zeros((n, n), np.float32)
    g = (n + 7) // 8 * 8
    lib.matmul_ok(pm.asarray(A), pm.asarray(B), C, np.uint32(n), grid=(g, g), threadgroup=(8, 8))
    np.testing.assert_allclose(C.numpy(), A @ B, rtol=1e-4, atol=1e-4)
for n in (1, 17, 100, 1000):
    v = rng.integers(0, 1000, n).astype(np.uint32)
    h = np.zeros(16, np.uint32)
    lib.histogram_ok(v, h, np.uint32(n), grid=(n + 63) // 64 * 64, threadgroup=64)
    assert (h == np.bincount(v % 16, minlength=16)).all(), h
for n in (1, 7, 64):
    a = rng.standard_normal(n).astype(np.float32); out = np.zeros(n, np.float32)
    lib.scan_ok(a, out, np.uint32(n), grid=64, threadgroup=64)
    np.testing.assert_allclose(out, np.cumsum(a), rtol=1e-5, atol=1e-5)
for n in (1, 33, 64, 100):
    a = rng.standard_normal(n).astype(np.float32); groups = (n + 63) // 64
    out = np.zeros(groups, np.float32)
    lib.simd_reduce(a, out, np.uint32(n), grid=groups * 64, threadgroup=64)
    np.testing.assert_allclose(out, np.pad(a, (0, groups * 64 - n)).reshape(groups, 64).sum(1), rtol=1e-5, atol=1e-5)
for n in (1, 10, 1000, 4099):
    a = rng.standard_normal(n).astype(np.float32); out = np.zeros(n, np.float32)
    lib.grid_stride(a, out, np.uint32(n), grid=min(n, 96), threadgroup=32)   # partial threadgroups too
    np.testing.assert_allclose(out, 2 * a)
    x = pm.asarray(a); o = pm.zeros(n, np.float32)                          # exact ranges of pymetal arrays
    lib.stencil_ok(x, o, np.uint32(n), grid=n)
    e = a.copy(); e[1:] += a[:-1]; e[:-1] += a[1:]
    np.testing.assert_allclose(o.numpy(), e, rtol=1e-5, atol=1e-5)
for n in (1, 100, 5000):
    v = rng.integers(0, 1000, n).astype(np.uint32); h = np.zeros(8, np.uint32)
    lib.global_histogram_cast_atomics(v, h, np.uint32(n), grid=(n + 63) // 64 * 64, threadgroup=64)
    assert (h == np.bincount(v % 8, minlength=8)).all(), h
print("CORRECT-OK", flush=True)
'''


@pytest.mark.parametrize("validation", ["1", "1,race,nan"])
def test_correct_kernels_run_clean(dev, validation):
    out = run_child(CORRECT + "run(lambda: None)\n", validation=validation)
    assert "CORRECT-OK" in out, out


ARRAY_OPS = r'''
rng = np.random.default_rng(1)
for n in (1, 7, 1000):
    x = rng.standard_normal(n).astype(np.float32); y = rng.standard_normal(n).astype(np.float32)
    a, b = pm.asarray(x), pm.asarray(y)
    np.testing.assert_allclose((a + b * 2).numpy(), x + y * 2, rtol=1e-6)
    np.testing.assert_allclose(pm.exp(a).numpy(), np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(float(pm.sum(a)), x.sum(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(pm.max(a)), x.max())
    assert int(pm.argmax(a)) == int(x.argmax())
    np.testing.assert_allclose(pm.sort(a).numpy(), np.sort(x))
    np.testing.assert_allclose(pm.cumsum(a).numpy(), np.cumsum(x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(a[::2].numpy(), x[::2])
    np.testing.assert_allclose(pm.where(a > 0, a, b).numpy(), np.where(x > 0, x, y))
m = rng.standard_normal((33, 17)).astype(np.float32); k = rng.standard_normal((17, 5)).astype(np.float32)
np.testing.assert_allclose((pm.asarray(m) @ pm.asarray(k)).numpy(), m @ k, rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(pm.asarray(m).T.copy().numpy(), m.T)
np.testing.assert_allclose(pm.mean(pm.asarray(m), axis=0).numpy(), m.mean(0), rtol=1e-5, atol=1e-6)
print("ARRAY-OK", flush=True)
'''


@pytest.mark.parametrize("validation", ["1", "1,race,nan"])
def test_array_library_runs_clean(dev, validation):
    out = run_child(ARRAY_OPS + "run(lambda: None)\n", validation=validation)
    assert "ARRAY-OK" in out, out


def test_nan_from_log_of_a_negative(dev):
    call = "run(lambda: lib.log_of_negative(np.array([3, 2, 0.5, 4], np.float32), np.zeros(4, np.float32), grid=4))\n"
    for mode in ("nan", "1,nan"):
        line = kernel_error(run_child(call, validation=mode))
        for w in ("log_of_negative", "NaN", "element 2 of `out` [[buffer(1)]]", line_of("out[i] = log(x);"),
                  "(2,0,0)"):
            assert w in line, (w, line)
    # without nan in PYMETAL_VALIDATION, NaNs are a kernel's business
    assert "CLEAN" in run_child(call, validation="1")


def test_nan_read_from_the_input_is_not_reported(dev):
    out = run_child("""
        a = np.array([1, np.nan, np.inf, -2], np.float16); o = np.zeros(4, np.float16)
        run(lambda: lib.scale_half(a, o, grid=4))
        np.testing.assert_array_equal(o, a * 2)
        """, validation="nan")
    assert "CLEAN" in out, out


def test_validation_levels(dev):
    # `1` (and its old spelling `race`) checks device memory for races too; `bounds` is the cheap
    # level: bounds alone (no race, no uninitialized read)
    call = ("run(lambda: lib.global_histogram_no_atomics(np.arange(100, dtype=np.uint32), np.zeros(8, np.uint32), "
            "grid=100, threadgroup=32))\n")
    assert "data race" in kernel_error(run_child(call, validation="1"))
    assert "data race" in kernel_error(run_child(call, validation="race"))
    assert "CLEAN" in run_child(call, validation="bounds")
    past = "run(lambda: lib.stencil_edge(np.ones(10, np.float32), np.zeros(10, np.float32), grid=10))\n"
    assert "out of bounds" in kernel_error(run_child(past, validation="bounds"))


HELPERS = r'''
#include <metal_stdlib>
using namespace metal;
void fill(threadgroup float *p, uint t, float v) { p[t] = v; }
kernel void via_helper(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]],
                       uint t [[thread_position_in_threadgroup]]) {
    threadgroup float sh[32];
    fill(sh, t, float(i));              // written through a plain pointer: not seen, not judged
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = sh[31 - t];
}
kernel void sgm(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                uint t [[thread_position_in_threadgroup]]) {
    threadgroup float tile[64];
    simdgroup_float8x8 m;
    simdgroup_load(m, a, 8);
    simdgroup_store(m, tile, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = tile[t] + tile[63 - t];
}
'''


def test_threadgroup_memory_written_through_plain_pointers_is_no_false_report(dev):
    out = run_child("""
        h = pm.compile(%r)
        o = np.zeros(64, np.float32)
        h.via_helper(o, grid=64, threadgroup=32)
        np.testing.assert_array_equal(o, [g * 32 + 31 - t for g in range(2) for t in range(32)])
        a = np.arange(64, dtype=np.float32); o = np.zeros(64, np.float32)
        run(lambda: h.sgm(a, o, grid=32, threadgroup=32))
        np.testing.assert_array_equal(o[:32], a[:32] + a[::-1][:32])
        """ % HELPERS, validation="1,race,nan")
    assert "CLEAN" in out, out
