"""Minimal ctypes driver for a kernel library built from MSL (pm_kernel_abi.h).

Loads the .so, reads its kernel table through pm_cpu_library and runs a
dispatch over all threadgroups, on one or several OS threads (ctypes releases
the GIL during the call, so the threads really run in parallel).
"""
import ctypes as C
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PM_MAX_BUFFERS = 31
PM_MAX_THREADGROUP_ARGS = 31
PM_ERROR_CAPACITY = 512
ABI_VERSION = 3  # PM_KERNEL_ABI_VERSION in pm_kernel_abi.h


class Launch(C.Structure):
    _fields_ = [
        ("buffers", C.c_void_p * PM_MAX_BUFFERS),
        ("buffer_lengths", C.c_uint64 * PM_MAX_BUFFERS),
        ("threadgroup_lengths", C.c_uint32 * PM_MAX_THREADGROUP_ARGS),
        ("threads_per_grid", C.c_uint32 * 3),
        ("threads_per_threadgroup", C.c_uint32 * 3),
        ("threadgroups_per_grid", C.c_uint32 * 3),
        ("uniform", C.c_uint32),
        ("poison_threadgroup_memory", C.c_uint32),
    ]


class Status(C.Structure):
    _fields_ = [("code", C.c_int32), ("message", C.c_char * PM_ERROR_CAPACITY)]


RunFn = C.CFUNCTYPE(C.c_int32, C.POINTER(Launch), C.c_uint64, C.c_uint64, C.POINTER(Status))


class KernelDesc(C.Structure):
    _fields_ = [
        ("name", C.c_char_p),
        ("run", C.c_void_p),
        ("mode", C.c_uint32),
        ("max_total_threads", C.c_uint32),
        ("static_threadgroup_bytes", C.c_uint32),
    ]


class Kernel:
    def __init__(self, desc):
        self.name = desc.name.decode()
        self.run = RunFn(desc.run)
        self.mode = desc.mode
        self.max_total_threads = desc.max_total_threads
        self.static_bytes = desc.static_threadgroup_bytes


class Library:
    def __init__(self, path):
        self.dll = C.CDLL(path)
        fn = self.dll.pm_cpu_library
        fn.restype = C.c_uint32
        fn.argtypes = [C.POINTER(C.POINTER(KernelDesc)), C.POINTER(C.c_uint32)]
        table = C.POINTER(KernelDesc)()
        count = C.c_uint32()
        version = fn(C.byref(table), C.byref(count))
        assert version == ABI_VERSION, version
        self.kernels = {}
        for i in range(count.value):
            k = Kernel(table[i])
            self.kernels[k.name] = k

    def __getitem__(self, name):
        return self.kernels[name]


def _ceil_div(a, b):
    return (a + b - 1) // b


def make_launch(buffers, threads=None, groups=None, tpg=(1, 1, 1), tg_lengths=(), poison=0):
    """dispatchThreads(threads, tpg) or dispatchThreadgroups(groups, tpg)."""
    tpg = tuple(tpg) + (1,) * (3 - len(tpg))
    L = Launch()
    keep = []
    for i, b in enumerate(buffers):
        if b is None:
            continue
        if not isinstance(b, np.ndarray):
            b = np.asarray(b)
        assert b.flags["C_CONTIGUOUS"]
        keep.append(b)
        L.buffers[i] = b.ctypes.data
        L.buffer_lengths[i] = b.nbytes
    for i, n in enumerate(tg_lengths):
        L.threadgroup_lengths[i] = n
    if threads is not None:
        threads = tuple(threads) + (1,) * (3 - len(threads))
        ng = tuple(_ceil_div(threads[d], tpg[d]) for d in range(3))
        L.uniform = 0
    else:
        ng = tuple(groups) + (1,) * (3 - len(groups))
        threads = tuple(ng[d] * tpg[d] for d in range(3))
        L.uniform = 1
    for d in range(3):
        L.threads_per_grid[d] = threads[d]
        L.threads_per_threadgroup[d] = tpg[d]
        L.threadgroups_per_grid[d] = ng[d]
    L.poison_threadgroup_memory = poison
    L._keep = keep
    return L


def total_groups(L):
    return L.threadgroups_per_grid[0] * L.threadgroups_per_grid[1] * L.threadgroups_per_grid[2]


_pools = {}


def _pool(n):
    if n not in _pools:
        _pools[n] = ThreadPoolExecutor(max_workers=n)
    return _pools[n]


def run(kernel, L, nthreads=1, chunks=None):
    """Runs all groups; returns (rc, message) of the first failing chunk."""
    n = total_groups(L)
    if chunks is None:
        chunks = nthreads
    bounds = [n * i // chunks for i in range(chunks + 1)]
    results = [None] * chunks

    def work(i):
        st = Status()
        rc = kernel.run(C.byref(L), bounds[i], bounds[i + 1], C.byref(st))
        results[i] = (rc, st.message.decode(errors="replace"), st.code)

    if nthreads == 1:
        for i in range(chunks):
            work(i)
    else:
        # persistent OS threads, like MetalCPU's pool (the runtime keeps per-thread state)
        list(_pool(nthreads).map(work, range(chunks)))
    for rc, msg, code in results:
        if rc != 0:
            assert code != 0
            return rc, msg
    return 0, ""


def groups_of(L):
    """Yields (group position, actual size, [thread grid positions in linear thread-index order])."""
    grid = tuple(L.threads_per_grid)
    tpg = tuple(L.threads_per_threadgroup)
    ng = tuple(L.threadgroups_per_grid)
    for gz in range(ng[2]):
        for gy in range(ng[1]):
            for gx in range(ng[0]):
                g = (gx, gy, gz)
                org = tuple(g[d] * tpg[d] for d in range(3))
                size = tuple(min(tpg[d], grid[d] - org[d]) for d in range(3))
                ths = []
                for lz in range(size[2]):
                    for ly in range(size[1]):
                        for lx in range(size[0]):
                            ths.append((org[0] + lx, org[1] + ly, org[2] + lz))
                yield g, size, ths
