"""Real Metal kernel files from projects other than MLX, candle and ggml (realmsl_sweep.py --project).

`python scripts/realmsl_sweep.py --project NAME=ROOT ...` compiles every `.metal` file under ROOT (with
ROOT, the file's folder, its parent and the folders under that parent that hold headers as include
dirs: Apple's samples keep their shared `AAPL*Types.h` beside the shaders or one folder up; PyTorch's
MPS kernels include `c10/metal/*.h` from the repository root). The checks below run a few kernels of
some projects on random data as the project's host code dispatches them and compare with NumPy; they
are found by project NAME and the file's path under ROOT, so give the names used here:

  pytorch    a PyTorch checkout (aten/src/ATen/native/mps/kernels/*.metal)
  tinygrad   a folder of MSL that tinygrad's MetalRenderer wrote (one kernel a file, named after the
             tensor expression, as `add_0.metal`, with `launch.json`: each file's function name and
             global / local sizes)
  ggml-old   ggml-metal.metal of an older llama.cpp / whisper.cpp (2023-2024: kernels take plain arguments)
  nbody      jrprice/NBody-Metal; apple: Apple's sample code; sph: Pierre-Joly/SPH-Fluid-Metal-GPU;
  sha256     flokiorg/grpc-miner (mining/metal); mandelbrot: a texture kernel, whose dispatch must fail clearly

No project code lives here: the script reads the files it is pointed at.
"""

import glob
import hashlib
import json
import os


def project_files(name, root):
    """Every .metal file under root, with its include dirs."""
    for path in sorted(glob.glob(os.path.join(root, "**", "*.metal"), recursive=True)):
        here = os.path.dirname(path)
        parent = os.path.dirname(here)
        headers = sorted({os.path.dirname(h) for h in glob.glob(os.path.join(parent, "**", "*.h"), recursive=True)})
        dirs = list(dict.fromkeys([root, here, parent] + headers))
        yield name, os.path.relpath(path, root), path, {"include_dirs": dirs}


def _np():
    import numpy as np
    return np


def _rng():
    from realmsl_sweep import _rng as shared
    return shared()


def _err(got, want, rtol, atol):
    from realmsl_sweep import _err as shared
    return shared(got, want, rtol, atol)


def needs_path(check):
    """A check that reads files beside the kernel file (tinygrad's launch.json): called as check(lib, path)."""
    check.needs_path = True
    return check


# ---------------------------------------------------------------- tinygrad (MetalRenderer output)

def _launch(path):
    with open(os.path.join(os.path.dirname(path), "launch.json")) as f:
        return json.load(f)[os.path.basename(path)]


def _tinygrad_run(lib, path, *buffers):
    meta = _launch(path)
    lib.function(meta["function"])(*buffers, groups=tuple(meta["global_size"]), threadgroup=tuple(meta["local_size"]))


@needs_path
def tinygrad_add(lib, path):
    np = _np()
    a, b = _rng().standard_normal((2, 1000)).astype(np.float32)
    out = np.zeros(1000, np.float32)
    _tinygrad_run(lib, path, out, a, b)
    return _err(out, a + b, 0, 1e-30)


def _tinygrad_matmul(lib, path, m, k, n, dtype, rtol, atol):
    np = _np()
    a = _rng().standard_normal((m, k)).astype(dtype)
    b = _rng().standard_normal((k, n)).astype(dtype)
    out = np.zeros((m, n), dtype)
    _tinygrad_run(lib, path, out, a, b)
    return _err(out, a.astype(np.float64) @ b.astype(np.float64), rtol, atol)


@needs_path
def tinygrad_matmul(lib, path):
    return _tinygrad_matmul(lib, path, 33, 47, 65, "float32", 1e-5, 1e-5)


@needs_path
def tinygrad_tc_matmul(lib, path):  # simdgroup_matrix (tensor cores) 8x8x8
    return _tinygrad_matmul(lib, path, 64, 64, 64, "float32", 1e-5, 1e-5)


@needs_path
def tinygrad_tc_matmul_half(lib, path):
    return _tinygrad_matmul(lib, path, 64, 64, 64, "float16", 1e-2, 3e-2)


@needs_path
def tinygrad_sum_axis(lib, path):
    np = _np()
    x = _rng().standard_normal((64, 300)).astype(np.float32)
    out = np.zeros(300, np.float32)
    _tinygrad_run(lib, path, out, x)
    return _err(out, x.astype(np.float64).sum(0), 1e-5, 1e-5)


@needs_path
def tinygrad_cumsum(lib, path):
    np = _np()
    x = _rng().standard_normal(100).astype(np.float32)
    out = np.zeros(100, np.float32)
    _tinygrad_run(lib, path, out, x)
    return _err(out, np.cumsum(x.astype(np.float64)), 1e-5, 1e-5)


@needs_path
def tinygrad_conv2d(lib, path):
    np = _np()
    x = _rng().standard_normal((3, 16, 16)).astype(np.float32)
    w = _rng().standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = np.zeros((4, 14, 14), np.float32)
    _tinygrad_run(lib, path, out, x, w)
    want = np.zeros((4, 14, 14))
    for dy in range(3):
        for dx in range(3):
            want += np.einsum("oc,chw->ohw", w[:, :, dy, dx], x[:, dy:dy + 14, dx:dx + 14].astype(np.float64))
    return _err(out, want, 1e-5, 1e-5)


@needs_path
def tinygrad_half_gelu(lib, path):
    np = _np()
    x = _rng().standard_normal(256).astype(np.float16)
    out = np.zeros(256, np.float16)
    _tinygrad_run(lib, path, out, x)
    v = x.astype(np.float64)
    want = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
    return _err(out, want, 2e-3, 2e-3)


# ---------------------------------------------------------------- PyTorch MPS kernels

def pytorch_rms_norm(lib):
    np = _np()
    errors = []
    for rows, axis in ((1, 1), (3, 7), (4, 100), (2, 512)):
        x = _rng().standard_normal((rows, axis)).astype(np.float32)
        w = _rng().standard_normal(axis).astype(np.float32)
        out = np.zeros_like(x)
        # as PyTorch's host code: a threadgroup per row, axis / 4 threads rounded up to a simdgroup
        tg = -(-(-(-axis // 4)) // 32) * 32
        lib.function("rms_norm_float")(x, w, out, np.float32(1e-5), np.uint32(axis), np.uint32(1),
                                       groups=rows, threadgroup=tg)
        v = x.astype(np.float64)
        want = w * v / np.sqrt((v * v).mean(1, keepdims=True) + 1e-5)
        errors.append(_err(out, want, 1e-5, 1e-6))
    return max(errors)


def pytorch_im2col(lib):
    np = _np()
    n, c, h, wd, kh, kw, pad, stride = 2, 3, 7, 6, 3, 2, 1, 2
    x = _rng().standard_normal((n, c, h, wd)).astype(np.float32)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, c * kh * kw, oh * ow), np.float32)
    u4, i4 = np.dtype((np.uint32, 4)), np.dtype((np.int32, 4))
    # uint4 kernel_dilation (kw, kh, dil_w, dil_h), int4 padding_stride (pad_w, pad_h, stride_w, stride_h),
    # input strides (x, y, c, n) and output strides (l, k, n, width), input sizes (w, h, c, n): elements
    lib.function("im2col_float_u32")(
        x, out, np.array([(kw, kh, 1, 1)], u4)[0], np.array([(pad, pad, stride, stride)], i4)[0],
        np.array([(1, wd, h * wd, c * h * wd)], u4)[0], np.array([(1, oh * ow, c * kh * kw * oh * ow, ow)], u4)[0],
        np.array([(wd, h, c, n)], i4)[0], grid=(oh * ow, c, n))
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    want = np.zeros_like(out)
    for ci in range(c):
        for i in range(kh):
            for j in range(kw):
                patch = padded[:, ci, i:i + stride * oh:stride, j:j + stride * ow:stride]
                want[:, (ci * kh + i) * kw + j, :] = patch.reshape(n, -1)
    return _err(out, want, 0, 1e-30)


# ---------------------------------------------------------------- older ggml-metal.metal (plain arguments)

def ggml_old_silu_gelu(lib):
    np = _np()
    x = _rng().standard_normal(1003).astype(np.float32)
    out = np.zeros_like(x)
    lib.function("kernel_silu")(x, out, grid=x.size)
    v = x.astype(np.float64)
    errors = [_err(out, v / (1 + np.exp(-v)), 1e-5, 1e-7)]
    out2 = np.zeros(1000, np.float32)
    # 2023: kernel_gelu takes float4; from 2024 it takes float and kernel_gelu_4 float4
    lib.function("kernel_gelu")(x[:1000], out2, grid=1000 if "kernel_gelu_4" in lib.functions else 250)
    v = x[:1000].astype(np.float64)
    want = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
    errors.append(_err(out2, want, 1e-4, 1e-6))
    return max(errors)


def ggml_old_scale(lib):
    np = _np()
    x = _rng().standard_normal(300).astype(np.float32)
    out = np.zeros_like(x)
    lib.function("kernel_scale")(x, out, np.float32(0.37), grid=x.size)
    return _err(out, x * np.float32(0.37), 1e-6, 0)


# ---------------------------------------------------------------- physics

def nbody_step(lib):
    np = _np()
    n = 128  # a multiple of its GROUPSIZE, 64: each group stages 64 bodies in threadgroup memory
    pos = _rng().standard_normal((n, 4)).astype(np.float32)
    pos[:, 3] = _rng().random(n) + 0.5  # mass
    vel = _rng().standard_normal((n, 4)).astype(np.float32)
    out = np.zeros_like(pos)
    v = vel.copy()
    params = np.array([(n, 0.01, 0.1)], np.dtype([("nbodies", "u4"), ("delta", "f4"), ("softening", "f4")]))
    lib.function("step")(pos, out, v, params, grid=n, threadgroup=64)
    d = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    dist = np.sqrt((d * d).sum(-1) + 0.1 ** 2)
    force = (pos[None, :, 3, None] * d / dist[..., None] ** 3).sum(1)
    want_v = vel[:, :3] + force * 0.01
    return max(_err(v[:, :3], want_v, 1e-4, 1e-5), _err(out[:, :3], pos[:, :3] + want_v * 0.01, 1e-5, 1e-6))


def apple_nbody(lib):
    np = _np()
    n, tg = 96, 32
    pos = _rng().standard_normal((n, 4)).astype(np.float32)
    pos[:, 3] = _rng().random(n) + 0.5
    vel = _rng().standard_normal((n, 4)).astype(np.float32)
    new_pos, new_vel = np.zeros_like(pos), np.zeros_like(vel)
    params = np.array([(0.01, 0.99, 0.05, n)],
                      np.dtype([("timestep", "f4"), ("damping", "f4"), ("softeningSqr", "f4"), ("numBodies", "u4")]))
    # arguments in order of [[buffer(n)]]: AAPLComputeBufferIndexOldPosition = 0, ... Params = 4
    lib.function("NBodySimulation")(pos.copy(), vel.copy(), new_pos, new_vel, params, groups=n // tg, threadgroup=tg,
                                    threadgroup_memory=[16 * tg])
    r = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    inv = 1 / np.sqrt((r * r).sum(-1) + 0.05)
    acc = (r * (pos[None, :, 3] * inv ** 3)[..., None]).sum(1)
    want_v = (vel[:, :3] + acc * 0.01) * 0.99
    return max(_err(new_vel[:, :3], want_v, 1e-4, 1e-5), _err(new_pos[:, :3], pos[:, :3] + want_v * 0.01, 1e-5, 1e-6))


def apple_add_arrays(lib):
    np = _np()
    a, b = _rng().standard_normal((2, 777)).astype(np.float32)
    out = np.zeros_like(a)
    lib.function("add_arrays")(a, b, out, grid=a.size)
    return _err(out, a + b, 0, 1e-30)


def sph_density(lib):
    """One grid cell holding every particle (cellStart 0, cellEnd n): the density sum over all pairs within h."""
    np = _np()
    n, size, stiffness, rest = 50, 0.05, 3.0, 1000.0
    pos = (_rng().random((n, 2)) * 0.4).astype(np.float32)
    dens, press = np.zeros(n, np.float32), np.zeros(n, np.float32)
    u, f = np.uint32, np.float32
    # arguments in order of [[buffer(n)]] (Common.h's BufferIndices): DensityBuffer 2, PressureBuffer 3,
    # NumParticlesBuffer 7, SortedPositionBuffer 8, PositionBuffer 13, ParticleIdsBuffer 21, CellStart 22, CellEnd 23,
    # GridRes 24, Origin 25, InvCell 26, ParticleSize 27, Stiffness 28, RestDensity 29
    lib.function("density")(dens, press, u(n), pos, pos, np.arange(n, dtype=u), np.array([0], u), np.array([n], u),
                            np.array([1, 1], u), np.zeros(2, f), f(1.0), f(size), f(stiffness), f(rest), grid=n)
    h = size * 4.0
    r2 = ((pos[:, None, :].astype(np.float64) - pos[None, :, :]) ** 2).sum(-1)
    kernel = 4.0 / (3.1415927 * h ** 8) * np.maximum(h * h - r2, 0) ** 3 * (r2 < h * h)
    want = (rest / n) * kernel.sum(1)
    return max(_err(dens, want, 1e-4, 1e-3), _err(press, stiffness * (want - rest), 1e-4, 1e-2))


def sha256_bytes(lib):
    np = _np()
    data = _rng().integers(0, 256, 80, dtype=np.uint8)
    out = np.zeros(32, np.uint8)
    lib.function("test_sha256_bytes_kernel")(data, out, grid=1)
    want = np.frombuffer(hashlib.sha256(data.tobytes()).digest(), np.uint8)
    out2 = np.zeros(32, np.uint8)
    lib.function("test_doubleSha256_bytes_kernel")(data, out2, grid=1)
    want2 = np.frombuffer(hashlib.sha256(hashlib.sha256(data.tobytes()).digest()).digest(), np.uint8)
    return max(_err(out, want, 0, 1e-30), _err(out2, want2, 0, 1e-30))


def refused_entry_points(lib):
    """A vertex or fragment function, or a kernel that binds a texture, is listed but refuses to run, saying why."""
    import pymetal as pm
    refused = [n for n in lib.functions if n in ("vert", "frag", "mandelbrot", "compute", "vertex_main")]
    for name in refused:
        try:
            lib.function(name)(grid=1)
            pm.synchronize()  # a dispatch without outputs reports its error at the next synchronisation
        except pm.Error as error:
            if "CPU backend runs compute kernels" not in str(error):
                raise AssertionError("%s: unclear error %s" % (name, error))
        else:
            raise AssertionError("%s ran" % name)
    if not refused:
        raise AssertionError("nothing refused among %s" % lib.functions)
    return 0.0


CHECKS = {
    ("tinygrad", "add_0.metal"): [tinygrad_add],
    ("tinygrad", "matmul_0.metal"): [tinygrad_matmul],
    ("tinygrad", "tc_matmul_0.metal"): [tinygrad_tc_matmul],
    ("tinygrad", "tc_matmul_half_0.metal"): [tinygrad_tc_matmul_half],
    ("tinygrad", "sum_axis_0.metal"): [tinygrad_sum_axis],
    ("tinygrad", "cumsum_0.metal"): [tinygrad_cumsum],
    ("tinygrad", "conv2d_0.metal"): [tinygrad_conv2d],
    ("tinygrad", "half_gelu_0.metal"): [tinygrad_half_gelu],
    ("pytorch", "aten/src/ATen/native/mps/kernels/RMSNorm.metal"): [pytorch_rms_norm],
    ("pytorch", "aten/src/ATen/native/mps/kernels/Im2Col.metal"): [pytorch_im2col],
    ("ggml-old", "ggml-metal.metal"): [ggml_old_silu_gelu, ggml_old_scale],
    ("nbody", "NBody-Metal/shaders.metal"): [nbody_step, refused_entry_points],
    ("apple", "Metal/SelectingDeviceObjectsForComputeProcessing/Simulation/AAPLKernels.metal"): [apple_nbody],
    ("apple", "Metal/PerformingCalculationsOnAGPU/MetalComputeBasic/add.metal"): [apple_add_arrays],
    ("sph", "SPH/Shaders/density.metal"): [sph_density],
    ("sha256", "sha256.metal"): [sha256_bytes],
    ("mandelbrot", "Mandelbrot/Mandelbrot.metal"): [refused_entry_points],
    ("mandelbrot", "Mandelbrot/Kernels.metal"): [refused_entry_points],
}
