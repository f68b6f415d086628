"""Sweep real projects' Metal kernel files through pymetal: compile, time, run against NumPy.

Usage:
  python scripts/realmsl_sweep.py [--mlx ROOT] [--candle ROOT] [--ggml ROOT] [--mfa ROOT]
                                  [--project NAME=ROOT ...] [--only SUBSTRING,...] [--no-runs] [--validation] [--timeout S]

ROOT is a checkout of the project (MLX: the repository root, whose
`mlx/backend/metal/kernels/**.metal` are compiled one by one with
`include_dirs=[ROOT]`, as MLX's build does; candle: the repository root,
`candle-metal-kernels/src/**.metal`; ggml: a ggml or llama.cpp root, its
`ggml-metal.metal` compiled as one file with the folders of `ggml-common.h`
and `ggml-metal-impl.h` as include dirs and GGML_METAL_HAS_BF16=1, as
ggml-metal-device.m does; metal-flash-attention: its `.metal` files, if any;
it generates its MSL from Swift strings at run time, so usually there are
none and the script says so). No project code lives here: the script reads
the files it is pointed at.

Each file is measured in a fresh process with an empty cache (a fresh
XDG_CACHE_HOME, so the headers' precompiled header is built too: "cold"):
`compile` is `pm.compile` (for big libraries the whole-file check) in
wall seconds, `cpu` the CPU seconds it took (this process and its clang
runs: the figure to compare on a loaded machine), `first` the time until one kernel is callable (`lib.function(name)`, with
default values for the function constants it needs). Then, for the files
listed in CHECKS, a few kernels are run on random data as the project's
host code dispatches them and compared with a NumPy reference written here.
The table goes to stdout; exit status 1 if a file failed or a check did not match.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- file lists

def mlx_files(root):
    kernels = os.path.join(root, "mlx", "backend", "metal", "kernels")
    for path in sorted(glob.glob(os.path.join(kernels, "**", "*.metal"), recursive=True)):
        yield "mlx", os.path.relpath(path, kernels), path, {"include_dirs": [root]}


def candle_files(root):
    src = os.path.join(root, "candle-metal-kernels", "src")
    for path in sorted(glob.glob(os.path.join(src, "**", "*.metal"), recursive=True)):
        yield "candle", os.path.basename(path), path, {}


def ggml_files(root):
    found = sorted(glob.glob(os.path.join(root, "**", "ggml-metal.metal"), recursive=True))
    for path in found:
        folder = os.path.dirname(path)
        dirs = [folder] + [os.path.dirname(p) for p in glob.glob(os.path.join(root, "**", "ggml-common.h"), recursive=True)]
        yield "ggml", os.path.basename(path), path, {"include_dirs": dirs, "defines": {"GGML_METAL_HAS_BF16": 1}}


def mfa_files(root):
    for path in sorted(glob.glob(os.path.join(root, "**", "*.metal"), recursive=True)):
        yield "mfa", os.path.relpath(path, root), path, {}


# ---------------------------------------------------------------- the probe (runs in a fresh process)

PROBE = r'''
import json, resource, sys, time
import numpy as np
import pymetal as pm
sys.path.insert(0, %(scripts)r)
import realmsl_sweep as sweep
project, name, path, options, runs = json.loads(sys.argv[1])
out = {"ok": False}
with open(path) as f:
    text = f.read()
def cpu():  # this process's and its clang runs' CPU time: what the compile costs on a loaded machine
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
start, start_cpu = time.perf_counter(), cpu()
try:
    lib = pm.compile(text, **options)
except pm.CompileError as error:
    out["error"] = str(error)
    print(json.dumps(out)); sys.exit(0)
out["compile"] = time.perf_counter() - start
out["cpu"] = cpu() - start_cpu
out["kernels"] = len(lib.functions)
out["ok"] = True
if lib.functions:
    first = lib.functions[0]
    start = time.perf_counter()
    try:
        lib.function(first, constants=sweep.default_constants(lib, first))
        out["first"] = time.perf_counter() - start
    except pm.Error as error:
        out["ok"] = False
        out["error"] = "first kernel %%s: %%s" %% (first, error)
if runs:
    out["checks"] = []
    for check in sweep.CHECKS.get((project, name), []):
        try:
            worst = check(lib, path) if getattr(check, "needs_path", False) else check(lib)
            out["checks"].append([check.__name__, worst, worst <= 1.0])
        except Exception as error:  # report and go on: one failing run must not hide the others
            out["checks"].append([check.__name__, repr(error)[:300], False])
print(json.dumps(out))
'''


def default_constants(lib, name):
    """Values for the function constants `name` needs: False / 0 (any value compiles it)."""
    values = {}
    for constant in lib.function_constants(name):
        if constant.get("required"):
            values[constant["name"]] = False if constant["type"] == "bool" else 0
    return values


# ---------------------------------------------------------------- checks: host layouts of each project, NumPy references

rng = None


def _rng():
    global rng
    import numpy as np
    if rng is None:
        rng = np.random.default_rng(26)
    return rng


def _err(got, want, rtol, atol):
    """Worst |got - want| relative to atol + rtol * |want|: <= 1 passes."""
    import numpy as np
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return float("inf")
    if got.size == 0:
        return 0.0
    return float(np.max(np.abs(got - want) / (atol + rtol * np.abs(want))))


def _worst(*errors):
    return max(errors)


def _q4_0_blocks(rows, cols):
    """Random ggml block_q4_0 data (half d; uchar qs[16]) and its dequantized floats."""
    import numpy as np
    r = _rng()
    nb = cols // 32
    d = (r.random((rows, nb)) * 0.1 + 0.01).astype(np.float16)
    qs = r.integers(0, 256, (rows, nb, 16), dtype=np.uint8)
    raw = np.zeros((rows, nb, 18), np.uint8)
    raw[:, :, :2] = d.view(np.uint8).reshape(rows, nb, 2)
    raw[:, :, 2:] = qs
    lo = (qs & 0xF).astype(np.float32) - 8
    hi = (qs >> 4).astype(np.float32) - 8
    values = np.concatenate([lo, hi], axis=2) * d.astype(np.float32)[:, :, None]
    return raw.reshape(rows, nb * 18), values.reshape(rows, cols)


# MLX

def mlx_unary_exp(lib):
    import numpy as np
    errors = []
    for n in (0, 1, 7, 1000):
        x = _rng().standard_normal(n).astype(np.float32)
        out = np.zeros(n, np.float32)
        if n:
            lib.function("v_Expfloat32float32")(x, out, np.uint32(n), grid=n)
        errors.append(_err(out, np.exp(x.astype(np.float64)), 1e-5, 1e-30))
    return max(errors)


def mlx_softmax(lib):
    import numpy as np
    errors = []
    for rows, axis in ((1, 1), (3, 7), (5, 100), (2, 1000)):
        x = _rng().standard_normal((rows, axis)).astype(np.float32) * 4
        out = np.zeros_like(x)
        tg = -(-(-(-axis // 4)) // 32) * 32  # MLX: threads for axis/N_READS, rounded up to a simdgroup
        lib.function("block_softmax_float32")(x, out, np.int32(axis), groups=rows, threadgroup=tg)
        e = np.exp(x - x.max(1, keepdims=True))
        errors.append(_err(out, e / e.sum(1, keepdims=True), 1e-5, 1e-7))
        out2 = np.zeros_like(x)
        lib.function("looped_softmax_float32")(x, out2, np.int32(axis), groups=rows, threadgroup=1024)  # MLX: the pipeline's maximum (every simdgroup writes its slot of local_max)
        errors.append(_err(out2, e / e.sum(1, keepdims=True), 1e-5, 1e-7))
    return max(errors)


def mlx_rope(lib):
    import numpy as np
    errors = []
    for traditional in (False, True):
        rows, dims, offset, scale, base = 5, 64, 3, 1.0, 10000.0
        x = _rng().standard_normal((rows, dims)).astype(np.float32)
        out = np.zeros_like(x)
        fn = lib.function("rope_single_float32", constants={"forward": True, "traditional": traditional, "hs_transpose": False})
        fn(x, out, np.int32(offset), np.float32(scale), np.int64(dims), np.float32(np.log2(base)), grid=(dims // 2, rows))
        inv = base ** (-np.arange(dims // 2) / (dims // 2))
        theta = scale * offset * inv
        if traditional:
            x1, x2 = x[:, 0::2], x[:, 1::2]
        else:
            x1, x2 = x[:, : dims // 2], x[:, dims // 2:]
        r1, r2 = x1 * np.cos(theta) - x2 * np.sin(theta), x1 * np.sin(theta) + x2 * np.cos(theta)
        want = np.empty_like(x)
        if traditional:
            want[:, 0::2], want[:, 1::2] = r1, r2
        else:
            want[:, : dims // 2], want[:, dims // 2:] = r1, r2
        errors.append(_err(out, want, 1e-3, 1e-4))  # fast::cos / fast::sin
    return max(errors)


def mlx_gemv(lib):
    import numpy as np
    errors = []
    for m, k in ((1, 1), (16, 32), (37, 100), (64, 513)):
        a = _rng().standard_normal((m, k)).astype(np.float32)
        x = _rng().standard_normal(k).astype(np.float32)
        out = np.zeros(m, np.float32)
        one32, zero64 = np.array([1], np.int32), np.zeros(1, np.int64)
        # bm4 bn1 sm1 sn32 tn4: bm * tm rows per threadgroup of (32, bn, bm) threads. As MLX's
        # host code (matmul.cpp: tm = out_vector_len < tm ? 1 : tm): with fewer rows than tm
        # the kernel's tail shift (out_row = out_vec_size - TM) would write before out_vec.
        tm = 1 if m < 4 else 4
        lib.function("gemv_float32_bm4_bn1_sm1_sn32_tm%d_tn4_nc0_axpby0" % tm)(
            a, x, out, out, np.int32(k), np.int32(m), np.int32(k), np.float32(1), np.float32(0),
            np.int32(1), one32, zero64, zero64, zero64, np.int32(0),
            groups=(-(-m // (4 * tm)), 1, 1), threadgroup=(32, 1, 4))
        errors.append(_err(out, a.astype(np.float64) @ x, 1e-4, 1e-4))
    return max(errors)


def mlx_dequantize(lib):
    import numpy as np
    rows, cols, gs = 3, 128, 64
    w = _rng().integers(0, 256, (rows, cols // 2), dtype=np.uint8)
    scales = _rng().random((rows, cols // gs)).astype(np.float32)
    biases = _rng().standard_normal((rows, cols // gs)).astype(np.float32)
    out = np.zeros((rows, cols), np.float32)
    lib.function("affine_dequantize_float_gs_64_b_4")(w, scales, biases, out, grid=(cols // 2, rows))
    q = np.stack([w & 0xF, w >> 4], axis=2).reshape(rows, cols).astype(np.float32)
    want = q * np.repeat(scales, gs, 1) + np.repeat(biases, gs, 1)
    return _err(out, want, 1e-6, 1e-6)


# candle

def candle_unary_exp(lib):
    import numpy as np
    errors = []
    for n in (1, 7, 1000):
        x = _rng().standard_normal(n).astype(np.float32)
        out = np.zeros(n, np.float32)
        lib.function("exp_f32")(np.uint64(n), x, out, grid=-(-n // 2))  # work_per_thread<float> = 2
        errors.append(_err(out, np.exp(x.astype(np.float64)), 1e-5, 1e-30))
    return max(errors)


def candle_softmax(lib):
    import numpy as np
    errors = []
    for rows, axis, tg in ((1, 1, 1), (3, 7, 32), (4, 100, 64), (2, 1000, 256)):
        x = _rng().standard_normal((rows, axis)).astype(np.float32) * 4
        out = np.zeros_like(x)
        lib.function("softmax_f32")(np.uint32(x.size), np.uint32(axis), x, out, groups=rows, threadgroup=tg)
        e = np.exp(x - x.max(1, keepdims=True))
        errors.append(_err(out, e / e.sum(1, keepdims=True), 1e-4, 1e-7))
    return max(errors)


def candle_rope(lib):
    import numpy as np
    bh, t, d = 3, 5, 16
    x = _rng().standard_normal((bh, t, d)).astype(np.float32)
    cos = _rng().standard_normal((t, d // 2)).astype(np.float32)
    sin = _rng().standard_normal((t, d // 2)).astype(np.float32)
    out = np.zeros_like(x)
    lib.function("rope_f32")(np.uint64(bh), np.uint64(t * d), np.uint64(d), np.uint64(0), x, cos, sin, out,
                             grid=bh * t * d // 2)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    want = np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    return _err(out, want, 1e-5, 1e-6)


def candle_q4_0_matvec(lib):
    import numpy as np
    errors = []
    for m, n, k in ((1, 8, 32), (3, 13, 64), (2, 64, 256)):
        raw, w = _q4_0_blocks(n, k)
        x = _rng().standard_normal((m, k)).astype(np.float32)
        out = np.zeros((m, n), np.float32)
        i64, u64 = np.int64, np.uint64
        lib.function("kernel_mul_mv_q4_0_f32")(
            raw, x, out, i64(k), i64(n), i64(1), u64(0), u64(0), u64(0), i64(k), i64(m), i64(1),
            u64(0), u64(0), u64(0), i64(n), i64(m), np.uint32(1), np.uint32(1),
            groups=(-(-n // 8), m, 1), threadgroup=(8, 8, 1))
        errors.append(_err(out, x.astype(np.float64) @ w.T, 1e-3, 1e-3))
    return max(errors)


def candle_gemm(lib):
    import numpy as np
    errors = []
    for m, n, k in ((1, 1, 1), (32, 32, 16), (33, 47, 70)):
        a = _rng().standard_normal((m, k)).astype(np.float32)
        b = _rng().standard_normal((k, n)).astype(np.float32)
        out = np.zeros((m, n), np.float32)
        constants = {"has_batch": False, "use_out_source": False, "do_axpby": False,
                     "align_M": m % 32 == 0, "align_N": n % 32 == 0, "align_K": k % 16 == 0, "do_gather": False}
        fn = lib.function("gemm_nn_f32_f32_32_32_16_2_2", constants=constants)
        params = _gemm_params(m, n, k)
        fn(a, b, out, params, groups=(-(-n // 32), -(-m // 32), 1), threadgroup=(32, 2, 2))
        errors.append(_err(out, a.astype(np.float64) @ b, 1e-4, 1e-4))
    return max(errors)


def _gemm_params(m, n, k):
    """MLX steel GEMMParams (candle's mlx_gemm.rs fills it the same way): a buffer of one."""
    import numpy as np
    dtype = np.dtype([("M", "i4"), ("N", "i4"), ("K", "i4"), ("lda", "i4"), ("ldb", "i4"), ("ldd", "i4"),
                      ("tiles_n", "i4"), ("tiles_m", "i4"), ("batch_stride_a", "i8"), ("batch_stride_b", "i8"),
                      ("batch_stride_d", "i8"), ("swizzle_log", "i4"), ("gemm_k_iterations_aligned", "i4"),
                      ("batch_ndim", "i4")], align=True)
    return np.array([(m, n, k, k, n, n, -(-n // 32), -(-m // 32), m * k, k * n, m * n, 0, k // 16, 1)], dtype)


# ggml

def _ggml_struct(fields, values):
    import numpy as np
    return np.array(tuple(values), np.dtype(fields, align=True))[()]


def ggml_unary_silu(lib):
    import numpy as np
    rows, cols = 3, 300
    x = _rng().standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    names = [("ne0%d" % i, "i4") for i in range(4)] + [("nb0%d" % i, "u8") for i in range(4)] \
        + [("ne%d" % i, "i4") for i in range(4)] + [("nb%d" % i, "u8") for i in range(4)] \
        + [(f, "f4") for f in ("slope", "scale", "bias", "val", "min", "max")]
    nb = (4, 4 * cols, 4 * cols * rows, 4 * cols * rows)
    args = _ggml_struct(names, (cols, rows, 1, 1) + nb + (cols, rows, 1, 1) + nb + (0, 0, 0, 0, 0, 0))
    fn = lib.function("kernel_unary_f32_f32", constants={1200: 106, 1201: False})  # FC_UNARY: OP_UNARY_NUM_SILU, not cnt
    nth = min(cols, 256)
    fn(args, x, out, groups=(-(-cols // nth) * rows, 1, 1), threadgroup=(nth, 1, 1))
    return _err(out, x / (1 + np.exp(-x.astype(np.float64))), 1e-5, 1e-7)


def ggml_soft_max(lib):
    import numpy as np
    errors = []
    for rows, cols in ((1, 1), (3, 50), (4, 1000)):
        x = _rng().standard_normal((rows, cols)).astype(np.float32)
        out = np.zeros_like(x)
        names = [("ne00", "i4"), ("ne01", "i4"), ("ne02", "i4"), ("nb01", "u8"), ("nb02", "u8"), ("nb03", "u8"),
                 ("ne11", "i4"), ("ne12", "i4"), ("ne13", "i4"), ("nb11", "u8"), ("nb12", "u8"), ("nb13", "u8"),
                 ("nb1", "u8"), ("nb2", "u8"), ("nb3", "u8"), ("scale", "f4"), ("max_bias", "f4"),
                 ("m0", "f4"), ("m1", "f4"), ("n_head_log2", "i4")]
        row = 4 * cols
        args = _ggml_struct(names, (cols, rows, 1, row, row * rows, row * rows, rows, 1, 1, row, row * rows, row * rows,
                                    row, row * rows, row * rows, 0.5, 0.0, 1.0, 1.0, 1))
        nth = 32
        while nth < cols and nth * rows < 256:
            nth *= 2
        # no mask, no sinks: ggml binds src0 for both, and the kernel compares the pointers
        lib.function("kernel_soft_max_f32")(args, x, x, x, out, groups=(rows, 1, 1), threadgroup=(nth, 1, 1),
                                            threadgroup_memory=[32 * 4])
        e = np.exp(0.5 * x.astype(np.float64) - (0.5 * x).max(1, keepdims=True))
        errors.append(_err(out, e / e.sum(1, keepdims=True), 1e-5, 1e-7))
    return max(errors)


def ggml_get_rows_q4_0(lib):
    import numpy as np
    rows, cols = 7, 256
    raw, w = _q4_0_blocks(rows, cols)
    idx = np.array([3, 0, 6, 3], np.int32)
    out = np.zeros((len(idx), cols), np.float32)
    names = [("ne00t", "i4"), ("ne00", "i4"), ("nb01", "u8"), ("nb02", "u8"), ("nb03", "u8"), ("ne10", "i4"),
             ("nb10", "u8"), ("nb11", "u8"), ("nb12", "u8"), ("nb1", "u8"), ("nb2", "u8"), ("nb3", "u8")]
    ne00t = cols // 16
    rb = raw.shape[1]
    args = _ggml_struct(names, (ne00t, cols, rb, rb * rows, rb * rows, len(idx), 4, 4 * len(idx), 4 * len(idx),
                                4 * cols, 4 * cols * len(idx), 4 * cols * len(idx)))
    nth = ne00t
    lib.function("kernel_get_rows_q4_0")(args, raw, idx, out, groups=(len(idx), 1, 1), threadgroup=(nth, 1, 1))
    return _err(out, w[idx], 1e-6, 1e-6)


CHECKS = {
    ("mlx", "unary.metal"): [mlx_unary_exp],
    ("mlx", "softmax.metal"): [mlx_softmax],
    ("mlx", "rope.metal"): [mlx_rope],
    ("mlx", "gemv.metal"): [mlx_gemv],
    ("mlx", "quantized.metal"): [mlx_dequantize],
    ("candle", "unary.metal"): [candle_unary_exp],
    ("candle", "reduce.metal"): [candle_softmax, candle_rope],
    ("candle", "quantized.metal"): [candle_q4_0_matvec],
    ("candle", "mlx_gemm.metal"): [candle_gemm],
    ("ggml", "ggml-metal.metal"): [ggml_unary_silu, ggml_soft_max, ggml_get_rows_q4_0],
}
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realmsl_others  # noqa: E402  (other projects' files: --project NAME=ROOT)
CHECKS.update(realmsl_others.CHECKS)


# ---------------------------------------------------------------- driver

def measure(project, name, path, options, runs, timeout):
    cache = tempfile.mkdtemp(prefix="realmsl-sweep-")
    try:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        argument = json.dumps([project, name, path, options, runs])
        start = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-c", PROBE % {"scripts": os.path.join(HERE, "scripts")}, argument],
                                  cwd=HERE, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": "timed out after %d s" % timeout}
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            return {"ok": False, "error": "probe died (%d): %s" % (done.returncode, done.stderr[-2000:])}
        result = json.loads(lines[-1])
        result["wall"] = time.perf_counter() - start
        return result
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlx")
    parser.add_argument("--candle")
    parser.add_argument("--ggml")
    parser.add_argument("--mfa")
    parser.add_argument("--project", action="append", default=[], metavar="NAME=ROOT",
                        help="every .metal file under ROOT, checked as project NAME (scripts/realmsl_others.py)")
    parser.add_argument("--only", help="only files whose project/name contains one of these (comma-separated)")
    parser.add_argument("--no-runs", action="store_true", help="compile and time only")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--validation", action="store_true", help="compile with shader validation (PM_VALIDATION)")
    args = parser.parse_args()
    files = []
    for flag, lister in (("mlx", mlx_files), ("candle", candle_files), ("ggml", ggml_files), ("mfa", mfa_files)):
        root = getattr(args, flag)
        if root:
            listed = list(lister(os.path.abspath(root)))
            if not listed:
                print("%s: no .metal files under %s%s" % (flag, root, " (metal-flash-attention generates its MSL from Swift strings at run time)" if flag == "mfa" else ""))
            files += listed
    for spec in args.project:
        name, _, root = spec.partition("=")
        if not root:
            parser.error("--project takes NAME=ROOT, as --project pytorch=~/src/pytorch")
        files += list(realmsl_others.project_files(name, os.path.abspath(root)))
    if args.only:
        files = [f for f in files if any(part in "%s/%s" % (f[0], f[1]) for part in args.only.split(","))]
    if args.validation:
        files = [(p, n, path, dict(o, defines=dict(o.get("defines", {}), PM_VALIDATION=1))) for p, n, path, o in files]
    failed = 0
    print("%-7s %-44s %-4s %7s %9s %7s %8s  %s" % ("project", "file", "ok", "kernels", "compile s", "cpu s", "first s",
                                                  "checks (worst error / tolerance; <= 1 passes)"), flush=True)
    for project, name, path, options in files:
        r = measure(project, name, path, options, not args.no_runs, args.timeout)
        checks = r.get("checks", [])
        bad = not r["ok"] or any(not passed for _, _, passed in checks)
        failed += bad
        shown = ", ".join("%s %s%s" % (c, ("%.2g" % w) if isinstance(w, float) else w, "" if ok else " FAIL") for c, w, ok in checks)
        print("%-7s %-44s %-4s %7s %9s %7s %8s  %s" % (
            project, name, "yes" if r["ok"] else "NO", r.get("kernels", "-"),
            "%.1f" % r["compile"] if "compile" in r else "-", "%.1f" % r["cpu"] if "cpu" in r else "-",
            "%.2f" % r["first"] if "first" in r else "-", shown), flush=True)
        if "error" in r:
            print("        " + r["error"][:1500].replace("\n", "\n        "), flush=True)
    print("%d of %d files failed or mismatched" % (failed, len(files)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
