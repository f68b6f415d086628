"""The kernel sanitizer (PYMETAL_VALIDATION=1) on multi-dimensional threadgroup arrays and on
`auto`-deduced pointers: correct kernels run clean with NumPy's results, with and without
validation, in both execution modes (lockstep and fibers, msl_kernels.MODES); real races and
bad indices are still reported with the element's indices and the line.

Validation is read from the environment when the library loads, so each case runs in a child
process (the kernels are compiled by the first child, then come from the disk cache)."""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

KERNELS = r'''
#include <metal_stdlib>
using namespace metal;
// ---- correct: threadgroup arrays of 2 and 3 dimensions ----
kernel void transpose_tile(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                           constant uint2 &shape [[buffer(2)]],          // rows, columns of a
                           uint2 g [[thread_position_in_grid]], uint2 t [[thread_position_in_threadgroup]],
                           uint2 tg [[threadgroup_position_in_grid]]) {
    threadgroup float tile[8][9];                                       // padded rows
    tile[t.y][t.x] = g.x < shape.y && g.y < shape.x ? a[g.y * shape.y + g.x] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint ox = tg.y * 8 + t.x, oy = tg.x * 8 + t.y;
    if (ox < shape.x && oy < shape.y) out[oy * shape.x + ox] = tile[t.x][t.y];
}
kernel void small_2x2(device float *out [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]],
                      uint2 g [[thread_position_in_grid]], uint2 n [[threads_per_grid]]) {
    threadgroup float p[2][2];
    p[t.y][t.x] = float(g.y * n.x + g.x);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    auto& row = p[1 - t.y];                                             // a row by reference
    out[g.y * n.x + g.x] = row[1 - t.x];
}
kernel void cube_float4(device const float4 *a [[buffer(0)]], device float4 *out [[buffer(1)]],
                        uint3 t [[thread_position_in_threadgroup]], uint3 g [[thread_position_in_grid]],
                        uint3 n [[threads_per_grid]]) {
    threadgroup float4 c[2][3][4];                                      // z, y, x of the group
    uint i = (g.z * n.y + g.y) * n.x + g.x;
    c[t.z][t.y][t.x] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = c[1 - t.z][2 - t.y][3 - t.x] + c[t.z][t.y][t.x].yzwx;
}
kernel void lanes_float4(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                         uint2 t [[thread_position_in_threadgroup]], uint2 g [[thread_position_in_grid]]) {
    threadgroup float4 v[8][4];                                         // each thread its own float4
    v[t.y][t.x].x = a[g.y * 4 + g.x];
    v[t.y][t.x].yzw = float3(1, 2, 3);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[g.y * 4 + g.x] = v[7 - t.y][t.x].x + v[t.y][3 - t.x].w;
}
float row_sum(threadgroup const float *r, uint n) {
    float s = 0;
    for (uint k = 0; k < n; k++) s += r[k];
    return s;
}
float corners(threadgroup float (&m)[4][4]) { return m[0][0] + m[3][3]; }
kernel void rows_to_helpers(device float *out [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]],
                            uint2 g [[thread_position_in_grid]]) {
    threadgroup float m[4][4];
    m[t.y][t.x] = float(t.y * 4 + t.x);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[g.y * 4 + g.x] = row_sum(m[t.y], 4) + corners(m);
}
kernel void param_as_2d(device float *out [[buffer(0)]], threadgroup float *s [[threadgroup(0)]],
                        uint2 t [[thread_position_in_threadgroup]], uint2 g [[thread_position_in_grid]]) {
    s[t.y * 4 + t.x] = float(g.y * 4 + g.x);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[g.y * 4 + g.x] = s[t.x * 4 + t.y];
}
kernel void matrix_to_rows(device const float *a [[buffer(0)]], device float *out [[buffer(1)]],
                           uint t [[thread_position_in_threadgroup]]) {
    threadgroup float tile[2][8][8], flat[64];
    simdgroup_float8x8 m;
    simdgroup_load(m, a, 8);
    simdgroup_store(m, &tile[1][0][0], 8);                             // through an element's address
    simdgroup_store(m, tile[0][0], 8);                                  // through a row
    simdgroup_store(m, &flat[0], 8);                                    // (once a false race between lanes)
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = tile[1][t / 8][t % 8] + tile[0][7 - t / 8][t % 8];
    out[t + 32] = tile[1][4 + t / 8][t % 8] + flat[32 + t];
}
// ---- correct: `auto` from checked pointers (MLX's gemv.h) ----
kernel void autos(const device float *a [[buffer(0)]], device float *out [[buffer(1)]],
                  const constant long *strides [[buffer(2)]], constant uint &n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    const constant auto* s0 = strides;
    const constant auto* s1 = strides + 1;
    device auto* q = out + i;
    auto p = a;
    auto& r = out[i];
    decltype(a) b = a + 1;
    auto const* d = a;
    device auto * const e = out;
    float v = p[i] + d[i] + float(s0[0]) + float(s1[0]);
    for (const device auto* it = a + i; it != a + n; ++it) v += *it;
    if (i + 1 < n) v += b[i];
    *q = v;
    r += 1.0f;
    auto z = n > 100 ? nullptr : a;                                     // a checked pointer against nullptr
    e[i] += z[0];
}
kernel void tg_or_null(device float *out [[buffer(0)]], uint t [[thread_position_in_threadgroup]],
                    uint g [[thread_position_in_grid]]) {
    threadgroup float sh[32];
    sh[t] = float(g);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup float *maybe = t < 64 ? sh : nullptr;                   // the array against nullptr (MLX's gemv)
    out[g] = maybe[31 - t];
}
// ---- buggy ----
kernel void same_element(device float *out [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]],
                         uint2 g [[thread_position_in_grid]]) {
    threadgroup float p[2][2];
    p[t.y][0] = float(t.x);                                             // (0,y) and (1,y) write [y][0]
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[g.y * 2 + g.x] = p[t.y][0];
}
kernel void neighbour_early(device float *out [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]],
                            uint2 g [[thread_position_in_grid]]) {
    threadgroup float p[2][2];
    p[t.y][t.x] = float(g.x);
    if (t.x == 1) out[g.y * 2 + g.x] = p[t.y][0];                       // before the barrier
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
kernel void cube_race(device float *out [[buffer(0)]], uint3 t [[thread_position_in_threadgroup]]) {
    threadgroup float c[2][2][2];
    c[t.z][t.y][0] = float(t.x);                                        // [1][1][0] by (0,1,1) and (1,1,1)
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[0] = c[0][0][0];
}
kernel void column_past(device float *out [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]]) {
    threadgroup float p[2][2];
    p[t.y][t.x] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t.y * 2 + t.x] = p[0][t.x + t.y * t.x];                         // (1,1): inside the array, past its row
}
kernel void row_past(device float *out [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]]) {
    threadgroup float p[2][3];
    p[t.y][t.x] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t.y * 2 + t.x] = p[t.y * (1 + t.x)][t.x];                       // (1,1): p[2][1]
}
template <typename T>
[[kernel]] void past_t(device T *b [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    b[i + 1] = T(1);
}
template [[host_name("past_deduced")]] [[kernel]] void past_t(device float *b [[buffer(0)]],
                                                             uint i [[thread_position_in_grid]]);
kernel void auto_past(const constant long *strides [[buffer(0)]], device float *out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    const constant auto* s1 = strides + 1;
    out[i] = float(s1[i + 1]);
}
'''


def line_of(text):
    """'line N of program_source' for the first source line holding text."""
    n = next(i for i, l in enumerate(KERNELS.split("\n"), 1) if text in l)
    return "line %d of program_source" % n


PRELUDE = '''
import numpy as np, pymetal as pm
SRC = %r
LIBS = {m: pm.compile(SRC, defines={"PM_NO_LOCKSTEP": None} if m == "fibers" else None)
        for m in ("default", "fibers")}
def report(mode, name, call):
    try:
        call(getattr(LIBS[mode], name))
        pm.synchronize()
    except pm.KernelError as e:
        print("REPORT", mode, name, str(e), flush=True)
    else:
        print("CLEAN", mode, name, flush=True)
''' % KERNELS


def run_child(body, validation):
    env = dict(os.environ)
    env.pop("PYMETAL_VALIDATION", None)
    if validation is not None:
        env["PYMETAL_VALIDATION"] = validation
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "child failed (%d):\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr[-4000:])
    return proc.stdout


CORRECT = r'''
rng = np.random.default_rng(0)
for mode in LIBS:
    lib = LIBS[mode]
    for rows, cols in ((1, 1), (5, 3), (8, 8), (13, 21)):
        a = rng.standard_normal((rows, cols)).astype(np.float32); out = np.zeros((cols, rows), np.float32)
        grid = ((cols + 7) // 8 * 8, (rows + 7) // 8 * 8)
        lib.transpose_tile(a, out, np.array([rows, cols], np.uint32), grid=grid, threadgroup=(8, 8))
        np.testing.assert_array_equal(out, a.T)
    out = np.zeros((4, 6), np.float32)
    lib.small_2x2(out, grid=(6, 4), threadgroup=(2, 2))
    idx = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = idx.reshape(2, 2, 3, 2)[:, ::-1, :, ::-1].reshape(4, 6)     # each 2x2 block turned around
    np.testing.assert_array_equal(out, want)
    for groups in (1, 3):
        a = rng.standard_normal((2, 3, 4 * groups, 4)).astype(np.float32); out = np.zeros_like(a)
        lib.cube_float4(a, out, grid=(4 * groups, 3, 2), threadgroup=(4, 3, 2))
        blocks = a.reshape(2, 3, groups, 4, 4)
        want = blocks[::-1, ::-1, :, ::-1] + np.roll(blocks, -1, axis=-1)
        np.testing.assert_array_equal(out, want.reshape(a.shape))
    a = rng.standard_normal((16, 4)).astype(np.float32); out = np.zeros_like(a)
    lib.lanes_float4(a, out, grid=(4, 16), threadgroup=(4, 8))
    np.testing.assert_array_equal(out, a.reshape(2, 8, 4)[:, ::-1].reshape(16, 4) + 3)
    out = np.zeros((8, 4), np.float32)
    lib.rows_to_helpers(out, grid=(4, 8), threadgroup=(4, 4))
    np.testing.assert_array_equal(out, np.tile(16 * np.arange(4) + 6 + 15, (4, 2)).T.astype(np.float32))
    a = rng.standard_normal(64).astype(np.float32); out = np.zeros(64, np.float32)
    lib.matrix_to_rows(a, out, grid=32, threadgroup=32)
    m = a.reshape(8, 8)
    np.testing.assert_array_equal(out, np.concatenate([(m + m[::-1])[:4].ravel(), 2 * m[4:].ravel()]))
    out = np.zeros((4, 4), np.float32)
    lib.param_as_2d(out, grid=(4, 4), threadgroup=(4, 4), threadgroup_memory={0: 16 * 4})
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32).reshape(4, 4).T)
    for n in (1, 2, 7):
        a = rng.standard_normal(n).astype(np.float32); out = np.zeros(n, np.float32)
        s = np.array([10, 20], np.int64)
        lib.autos(a, out, s, np.uint32(n), grid=n)
        want = 2 * a + 30 + np.cumsum(a[::-1])[::-1] + np.append(a[1:], 0) + 1 + a[0]
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    out = np.zeros(64, np.float32)
    lib.tg_or_null(out, grid=64, threadgroup=32)
    np.testing.assert_array_equal(out, [g * 32 + 31 - t for g in range(2) for t in range(32)])
    pm.synchronize()
    print("OK", mode, flush=True)
'''


@pytest.mark.parametrize("validation", [None, "1", "1,race,nan"])
def test_correct_kernels_match_numpy_and_run_clean(dev, validation):
    out = run_child(CORRECT, validation)
    for mode in ("default", "fibers"):
        assert "OK %s" % mode in out, out


# name: (the launch, words the report must hold)
BUGGY = {
    "same_element": ("k(np.zeros(4, np.float32), grid=(2, 2), threadgroup=(2, 2))",
                     ["data race on element 0 ([0][0]) of the threadgroup array `p`", line_of("p[t.y][0] = float(t.x);"),
                      "the thread at position (1,0,0) in the grid writes it", "(0,0,0) wrote it"]),
    "neighbour_early": ("k(np.zeros(4, np.float32), grid=(2, 2), threadgroup=(2, 2))",
                        ["data race on element 0 ([0][0]) of the threadgroup array `p`",
                         "(1,0,0) in the grid reads it at " + line_of("if (t.x == 1) out[g.y * 2 + g.x] = p[t.y][0];"),
                         "(0,0,0) wrote it at " + line_of("p[t.y][t.x] = float(g.x);").split(" of ")[0]]),
    "cube_race": ("k(np.zeros(1, np.float32), grid=(2, 2, 2), threadgroup=(2, 2, 2))",
                  ["data race on element 0 ([0][0][0]) of the threadgroup array `c`", line_of("c[t.z][t.y][0] = float(t.x);")]),
    "column_past": ("k(np.zeros(4, np.float32), grid=(2, 2), threadgroup=(2, 2))",
                    ["out of bounds: index 2 of dimension 2 (of 2) of the threadgroup array `p`", "of shape [2][2]",
                     line_of("out[t.y * 2 + t.x] = p[0][t.x + t.y * t.x];"), "(1,1,0)"]),
    "row_past": ("k(np.zeros(4, np.float32), grid=(2, 2), threadgroup=(2, 2))",
                 ["out of bounds: index 2 of dimension 1 (of 2) of the threadgroup array `p`", "of shape [2][3]",
                  line_of("out[t.y * 2 + t.x] = p[t.y * (1 + t.x)][t.x];"), "(1,1,0)"]),
    # an instantiation that names no template arguments (MLX's conv.metal) keeps its checked pointers
    "past_deduced": ("k(np.zeros(3, np.float32), grid=3)",
                     ["out of bounds: element 3 of `b` [[buffer(0)]]", "3 elements of 4 bytes",
                      line_of("b[i + 1] = T(1);"), "(2,0,0)"]),
    "auto_past": ("k(np.array([10, 20], np.int64), np.zeros(2, np.float32), grid=2)",
                  ["out of bounds: element 2 of `strides` [[buffer(0)]]", "2 elements of 8 bytes",
                   line_of("out[i] = float(s1[i + 1]);"), "(0,0,0)"]),
}


def test_buggy_kernels_are_reported(dev):
    body = "".join("for mode in LIBS: report(mode, %r, lambda k: %s)\n" % (name, call)
                   for name, (call, _) in sorted(BUGGY.items()))
    out = run_child(body, "1")
    for name, (_, words) in BUGGY.items():
        for mode in ("default", "fibers"):
            line = next((l for l in out.splitlines() if l.startswith("REPORT %s %s " % (mode, name))), None)
            assert line is not None, (name, mode, out)
            for w in words:
                assert w in line, (mode, w, line)


def test_simdgroup_gemm_staging_rows_runs_clean(dev):
    # tests/python/msl/kernels/simdgroup_gemm.metal stages B through `threadgroup float tb[4][64]` and
    # loads it with simdgroup_load(b, &tb[sg][0]): clean under validation, NumPy's product, both modes
    src = "#include <metal_stdlib>\n#include <metal_simdgroup_matrix>\nusing namespace metal;\n" + open(
        os.path.join(ROOT, "tests", "python", "msl", "kernels", "simdgroup_gemm.metal")).read()
    out = run_child("""
        gsrc = %r
        rng = np.random.default_rng(3)
        for mode in ("default", "fibers"):
            g = pm.compile(gsrc, defines={"PM_NO_LOCKSTEP": None} if mode == "fibers" else None)
            for M, N, K in ((8, 8, 8), (40, 24, 16)):
                A = rng.standard_normal((M, K)).astype(np.float32); B = rng.standard_normal((K, N)).astype(np.float32)
                C = np.zeros((M, N), np.float32)
                g.sgm_gemm(A, B, C, np.uint32(M), np.uint32(N), np.uint32(K), np.uint32(0),
                           groups=(-(-N // 16), -(-M // 16)), threadgroup=128)
                pm.synchronize()
                np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
            print("OK", mode, flush=True)
        """ % src, "1")
    assert "OK default" in out and "OK fibers" in out, out
