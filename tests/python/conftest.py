"""Shared fixtures for pymetal's Python tests.

Tests that need libPyMetal take the ``dev`` fixture (directly or through a
module-scoped library fixture). When the library has not been built they are
skipped, unless PYMETAL_REQUIRE_LIBRARY=1 is set (CI), which makes them fail.

The CPU backend compiles each distinct MSL source with clang (about a second
the first time, then from a disk cache), so test modules compile their kernels
once, in module-scoped fixtures.
"""

import os
import shutil
import sys

# scikit-learn on pymetal arrays (test_sklearn.py) needs SciPy's array API support, which
# SciPy reads from the environment when it is first imported: set it before any test imports it.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import pymetal as pm  # noqa: E402
import msl_kernels  # noqa: E402

PAGE = 16384


def _device_or_skip():
    try:
        return pm.device()
    except pm.LibraryError as e:
        if os.environ.get("PYMETAL_REQUIRE_LIBRARY"):
            pytest.fail("libPyMetal is required (PYMETAL_REQUIRE_LIBRARY is set): %s" % e)
        pytest.skip("libPyMetal is not available: %s" % e)


@pytest.fixture(scope="session")
def dev():
    """The default pymetal device (skips the test when libPyMetal is missing)."""
    return _device_or_skip()


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


def _aligned_empty(shape, dtype=np.float32, alignment=None):
    """A NumPy array whose data starts on a page boundary (pm_buffer_wrap-able)."""
    if alignment is None:
        try:
            alignment = pm.device().page_size
        except pm.Error:
            alignment = PAGE
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = (-raw.ctypes.data) % alignment
    a = raw[start:start + nbytes].view(dtype).reshape(shape)
    assert a.ctypes.data % alignment == 0
    return a


def _unaligned_copy(a):
    """A C-contiguous copy of `a` whose data is deliberately not page-aligned."""
    a = np.asarray(a)
    size = max(a.dtype.itemsize, 1)
    raw = np.empty(a.nbytes + 256 + size, dtype=np.uint8)
    base = raw.ctypes.data
    start = (-base) % 64 + 64  # 64-byte aligned, never the first byte of raw
    if (base + start) % PAGE == 0:
        start += 64
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


@pytest.fixture
def aligned_empty():
    return _aligned_empty


@pytest.fixture
def unaligned_copy():
    return _unaligned_copy


def rss_bytes():
    """Resident set size of this process (Linux /proc, else ru_maxrss as a bound)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r if sys.platform == "darwin" else r * 1024


@pytest.fixture
def rss():
    return rss_bytes


# ---- kernels shared by the test_api_* modules (compiled once per session) ------

BASIC_SRC = r"""
#include <metal_stdlib>
using namespace metal;

kernel void add(device const float* a [[buffer(0)]],
                device const float* b [[buffer(1)]],
                device float* out [[buffer(2)]],
                uint i [[thread_position_in_grid]]) {
    out[i] = a[i] + b[i];
}

kernel void add_n(device const float* a [[buffer(0)]],
                  device const float* b [[buffer(1)]],
                  device float* out [[buffer(2)]],
                  constant uint& n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = a[i] + b[i];
}

kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y [[buffer(1)]],
                  constant float& alpha [[buffer(2)]],
                  uint i [[thread_position_in_grid]]) {
    y[i] = alpha * x[i] + y[i];
}

kernel void scale(device float* x [[buffer(0)]],
                  constant float& s [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    x[i] = x[i] * s;
}

kernel void iota(device uint* out [[buffer(0)]],
                 uint i [[thread_position_in_grid]]) {
    out[i] = i;
}

kernel void echo_scalars(device int* oi [[buffer(0)]],
                         device uint* ou [[buffer(1)]],
                         device float* of [[buffer(2)]],
                         device uchar* ob [[buffer(3)]],
                         device long* ol [[buffer(4)]],
                         device ulong* oul [[buffer(5)]],
                         device half* oh [[buffer(6)]],
                         device short* os [[buffer(7)]],
                         constant int& i [[buffer(8)]],
                         constant uint& u [[buffer(9)]],
                         constant float& f [[buffer(10)]],
                         constant bool& b [[buffer(11)]],
                         constant long& l [[buffer(12)]],
                         constant ulong& ul [[buffer(13)]],
                         constant half& h [[buffer(14)]],
                         constant short& s [[buffer(15)]],
                         uint tid [[thread_position_in_grid]]) {
    if (tid == 0) {
        oi[0] = i; ou[0] = u; of[0] = f; ob[0] = b ? 1 : 0;
        ol[0] = l; oul[0] = ul; oh[0] = h; os[0] = s;
    }
}

struct Params {
    float scale;
    int offset;
    uint n;
};

kernel void affine(device const float* x [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   constant Params& p [[buffer(2)]],
                   uint i [[thread_position_in_grid]]) {
    if (i < p.n) out[i] = x[i] * p.scale + float(p.offset);
}

kernel void index2d(device uint* out [[buffer(0)]],
                    constant uint& width [[buffer(1)]],
                    uint2 gid [[thread_position_in_grid]]) {
    out[gid.y * width + gid.x] = gid.y * 10000 + gid.x;
}

kernel void index3d(device uint* out [[buffer(0)]],
                    constant uint& width [[buffer(1)]],
                    constant uint& height [[buffer(2)]],
                    uint3 gid [[thread_position_in_grid]]) {
    out[(gid.z * height + gid.y) * width + gid.x] = gid.z * 1000000 + gid.y * 1000 + gid.x;
}

kernel void group_ids(device uint* out [[buffer(0)]],
                      uint group [[threadgroup_position_in_grid]],
                      uint lid [[thread_position_in_threadgroup]],
                      uint i [[thread_position_in_grid]]) {
    out[i] = group * 100000 + lid;
}

kernel void tg_size(device uint* out [[buffer(0)]],
                    uint3 tpg [[threads_per_threadgroup]],
                    uint i [[thread_position_in_grid]]) {
    if (i == 0) { out[0] = tpg.x; out[1] = tpg.y; out[2] = tpg.z; }
}

kernel void tg_size2d(device uint* out [[buffer(0)]],
                      uint3 tpg [[threads_per_threadgroup]],
                      uint2 gid [[thread_position_in_grid]]) {
    if (gid.x == 0 && gid.y == 0) { out[0] = tpg.x; out[1] = tpg.y; out[2] = tpg.z; }
}

kernel void nop(device float* x [[buffer(0)]],
                uint i [[thread_position_in_grid]]) {
}
"""

_TYPES = [
    ("bool", "bool"), ("int8", "char"), ("uint8", "uchar"), ("int16", "short"),
    ("uint16", "ushort"), ("int32", "int"), ("uint32", "uint"), ("int64", "long"),
    ("uint64", "ulong"), ("float16", "half"), ("float32", "float"),
]

TYPED_SRC = "#include <metal_stdlib>\nusing namespace metal;\n\n" + "\n".join(
    "kernel void add_%s(device const %s* a [[buffer(0)]], device const %s* b [[buffer(1)]], "
    "device %s* out [[buffer(2)]], uint i [[thread_position_in_grid]]) { out[i] = a[i] %s b[i]; }"
    % (name, t, t, t, "||" if t == "bool" else "+")
    for name, t in _TYPES
) + "\n"

TYPED_NAMES = [name for name, _ in _TYPES]


@pytest.fixture(scope="session")
def basic_lib(dev):
    return pm.compile(BASIC_SRC)


@pytest.fixture(scope="session")
def typed_lib(dev):
    return pm.compile(TYPED_SRC)


# ---- MSL run both ways the CPU backend runs a kernel (msl_kernels.py) ----------
# `mode`: a test once with lockstep, once with fibers; `both_ways`: runs a kernel both
# ways and compares (here, not in msl/conftest.py: tests import this module as `conftest`).

@pytest.fixture(params=msl_kernels.MODES)
def mode(request):
    return request.param


@pytest.fixture
def both_ways():
    return msl_kernels.run_both_ways


# ---- clang++ runs counted (the CPU backend's compile cache across processes) ------

class ClangRuns:
    """clang++ behind a wrapper script (PYMETAL_CLANG) that logs each run's arguments, and a cache
    folder of its own: `env` is for the child processes, `lines()` the runs logged so far."""

    def __init__(self, tmp_path, clang):
        self.log = tmp_path / "clang.log"
        self.cache = tmp_path / "cache"
        wrapper = tmp_path / "clang++"
        wrapper.write_text('#!/bin/sh\necho "$@" >> "%s"\nexec "%s" "$@"\n' % (self.log, clang))
        wrapper.chmod(0o755)
        self.env = dict(os.environ, PYMETAL_CLANG=str(wrapper), XDG_CACHE_HOME=str(self.cache))

    def lines(self):
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def clang_runs(dev, tmp_path):
    if dev.backend != "cpu":
        pytest.skip("the CPU backend's compile cache")
    clang = shutil.which("clang++")
    if clang is None:
        pytest.skip("no clang++ on PATH to wrap")
    return ClangRuns(tmp_path, clang)


# ---- backend-aware skips -------------------------------------------------------
# @pytest.mark.cpu_backend: the test checks what the CPU backend does where a GPU
# has undefined behaviour or no check (poisoned threadgroup memory, errors for a
# divergent barrier, values of inactive lanes); on Metal it is skipped, not run.

def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_backend: CPU-backend behaviour a GPU does not have (skipped on Metal)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("cpu_backend") is not None:
        backend = _device_or_skip().backend
        if backend != "cpu":
            pytest.skip("CPU backend behaviour; undefined or unchecked on a %s device" % backend)


@pytest.fixture
def float64_error():
    """The "error" float64 policy (float64 refused, as before issue 23) for one test."""
    old = pm.get_float64_policy()
    pm.set_float64_policy("error")
    yield
    pm.set_float64_policy(old)


@pytest.fixture(params=[0, 1 << 30], ids=["kernels", "host-small"])
def small_paths(request, monkeypatch):
    """Runs a test twice: every op on its kernel (the host path for small arrays
    off), and every op the host path takes on the host (pymetal/arrays/small.py)."""
    from pymetal.arrays import small as _small
    monkeypatch.setattr(_small, "LIMIT", request.param)
    return request.param
