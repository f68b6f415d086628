"""Fuzzes libPyMetal's C ABI: random, stale and wrong-kind handles, NULL
outputs, extreme sizes, malformed strings and macro lists, random argument
records and dispatch shapes. Every call must return a status (with a message
when it fails); a crash, a hang or an error without a message is a bug.

    python scripts/fuzz_abi.py [--calls N] [--seed S]     (make fuzz runs a long one)

tests/python/runtime/test_c_abi.py runs a bounded number of calls in a subprocess.
Pointers given to the library are NULL or point at memory of the size the
header asks for: a wild pointer would be the caller's bug, not the library's.
"""

import argparse
import ctypes
import random
import sys
import time

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), ".."))

from pymetal.runtime import native as N  # noqa: E402

# The kernels touch no memory: the fuzzer checks the library's checks, and a
# kernel that writes past what it was given is the kernel's bug.
KERNELS = rb"""
kernel void k(device const uint* o [[buffer(0)]], constant uint& n [[buffer(1)]],
              threadgroup uint* t [[threadgroup(0)]], uint i [[thread_index_in_threadgroup]]) {}
kernel void nothing(uint i [[thread_position_in_grid]]) {}
"""

SIZES = [0, 1, 3, 4, 16, 4095, 4096, 4097, 1 << 20, (1 << 31) - 1, 1 << 32, 1 << 62, 1 << 63, (1 << 64) - 1]
DIMS = [0, 1, 2, 3, 32, 64, 1000, 1025]
STRINGS = [b"", b"=", b"==", b"\n", b"=1\n", b"A", b"A=", b"A=1\n=2", b" =3", b"\xff\xfe", b"k", b"nothing",
           b"missing", b"A=1\nB\n\n  \nC=x=y", b"\xc3\x28" * 100]


class Fuzzer:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lib = N.lib()
        self.device = N.out_u64(self.lib.pm_device_default)
        self.live = {"device": [self.device], "buffer": [], "library": [], "kernel": [], "stream": []}
        self.dead = []
        self.scratch = ctypes.create_string_buffer(1 << 16)  # bytes for PM_ARG_BYTES and wrapping
        self.page = N.out_i64(self.lib.pm_device_page_size, self.device)
        self.calls = 0
        self.ok = {}  # successful calls by function: the fuzzer must reach real work too
        self.library = N.out_u64(self.lib.pm_library_compile, self.device, KERNELS, None, 0)
        self.live["library"].append(self.library)
        for name in (b"k", b"nothing"):
            self.live["kernel"].append(N.out_u64(self.lib.pm_kernel_new, self.library, name))
        self.live["stream"].append(N.out_u64(self.lib.pm_stream_new, self.device))

    def handle(self):
        """A handle of any kind, live or released, or garbage."""
        r = self.rng.random()
        if r < 0.6:
            kind = self.rng.choice([k for k, v in self.live.items() if v])
            return self.rng.choice(self.live[kind])
        if r < 0.75 and self.dead:
            return self.rng.choice(self.dead)
        return self.rng.choice([0, 1, 0xFFFFFFFFFFFFFFFF, self.rng.getrandbits(64), self.rng.getrandbits(32)])

    def out(self, ctype):
        return None if self.rng.random() < 0.1 else ctypes.byref(ctype())

    def check(self, status, what):
        self.calls += 1
        self.ok[what] = self.ok.get(what, 0) + (status == 0)
        if status not in range(0, 7):
            raise AssertionError("%s returned status %d" % (what, status))
        if status and not N.last_error():
            raise AssertionError("%s failed (%d) without a message" % (what, status))
        return status

    def record(self, kind, status, out):
        if status == 0 and out is not None:
            self.live[kind].append(out._obj.value)

    def step(self):
        lib, rng = self.lib, self.rng
        op = rng.randrange(12)
        c_u64, c_i64 = ctypes.c_uint64, ctypes.c_int64
        if op == 0:
            out = self.out(c_u64)
            length = rng.choice(SIZES[:9])
            self.record("buffer", self.check(lib.pm_buffer_new(out, self.handle(), length), "pm_buffer_new"), out)
        elif op == 1:
            base = ctypes.addressof(self.scratch)
            ptr = rng.choice([None, base + (-base) % self.page, base + 1])
            out = self.out(c_u64)
            st = self.check(lib.pm_buffer_wrap(out, self.handle(), ptr, rng.choice(SIZES + [self.page])), "pm_buffer_wrap")
            self.record("buffer", st, out)
        elif op == 2:
            self.check(lib.pm_buffer_length(self.out(c_u64), self.handle()), "pm_buffer_length")
            self.check(lib.pm_buffer_contents(self.out(ctypes.c_void_p), self.handle()), "pm_buffer_contents")
        elif op == 3:
            self.release()
        elif op == 4:
            name = rng.choice(STRINGS + [None])
            out = self.out(c_u64)
            self.record("kernel", self.check(lib.pm_kernel_new(out, self.handle(), name), "pm_kernel_new"), out)
        elif op == 5:
            info = N.PmArgumentInfo()
            self.check(lib.pm_kernel_argument(ctypes.byref(info) if rng.random() < 0.9 else None, self.handle(),
                                              rng.choice([-1, 0, 1, 2, 3, 1 << 40])), "pm_kernel_argument")
            self.check(lib.pm_kernel_argument_count(self.out(c_i64), self.handle()), "pm_kernel_argument_count")
            self.check(lib.pm_kernel_buffer_access(self.out(ctypes.c_int32), self.handle(), rng.choice([-1, 0, 30, 31])),
                       "pm_kernel_buffer_access")
        elif op == 6:
            size = (ctypes.c_uint32 * 3)(*[rng.choice(DIMS + [0xFFFFFFFF]) for _ in range(3)])
            self.check(lib.pm_kernel_default_threadgroup((ctypes.c_uint32 * 3)(), self.handle(), size, rng.randrange(2)),
                       "pm_kernel_default_threadgroup")
        elif op in (7, 8, 9):
            self.dispatch()
        elif op == 10:
            self.check(lib.pm_stream_synchronize(self.handle()), "pm_stream_synchronize")
            self.check(lib.pm_stream_commit(self.handle()), "pm_stream_commit")
        else:
            self.check(lib.pm_library_function_name(self.out(ctypes.c_char_p), self.handle(),
                                                    rng.choice([-1, 0, 1, 2, 1 << 40])), "pm_library_function_name")
            self.check(lib.pm_device_name(self.out(ctypes.c_char_p), self.handle()), "pm_device_name")
            self.check(lib.pm_device_max_threadgroup_memory(self.out(c_i64), self.handle()), "pm_device_max_threadgroup_memory")

    def release(self):
        kind = self.rng.choice(["buffer", "buffer", "kernel", "stream", "library"])
        fn = getattr(self.lib, "pm_%s_release" % kind)
        pool = self.live[kind]
        if pool and self.rng.random() < 0.7 and (kind != "library" or self.rng.random() < 0.1):
            h = pool.pop(self.rng.randrange(len(pool)))
        else:
            h = self.handle()
        if self.check(fn(h), "pm_%s_release" % kind) == 0:
            self.dead.append(h)
        if not self.live["stream"]:
            self.live["stream"].append(N.out_u64(self.lib.pm_stream_new, self.device))
        if not self.live["kernel"]:
            self.library = N.out_u64(self.lib.pm_library_compile, self.device, KERNELS, None, 0)
            self.live["library"].append(self.library)
            self.live["kernel"].append(N.out_u64(self.lib.pm_kernel_new, self.library, b"k"))

    def dispatch(self):
        rng = self.rng
        count = rng.choice([0, 1, 2, 3, 4, 64, 65, -1])
        records = (N.PmArg * max(count, 1))()
        for r in records:
            r.kind = rng.choice([0, 0, 1, 1, 2, 3, -1])
            r.index = rng.choice([0, 1, 0, 1, 2, 30, 31, -1, 1 << 30])
            r.buffer = self.handle()
            r.offset = rng.choice([0, 0, 4, 4096, 1 << 63, (1 << 64) - 1])
            r.bytes = None if rng.random() < 0.1 else ctypes.addressof(self.scratch)
            r.length = rng.choice([0, 1, 4, 16, 4096, 4097, 1 << 20, 1 << 40, (1 << 64) - 1])
        plausible = rng.random() < 0.4 and self.live["buffer"]
        if plausible:  # a valid dispatch of k with at most one field changed: reaches the engine's own checks
            count = 3
            records = (N.PmArg * 3)(
                N.PmArg(N.PM_ARG_BUFFER, 0, rng.choice(self.live["buffer"]), 0, None, 0),
                N.PmArg(N.PM_ARG_BYTES, 1, 0, 0, ctypes.addressof(self.scratch), 4),
                N.PmArg(N.PM_ARG_THREADGROUP_MEMORY, 0, 0, 0, None, 16))
            if rng.random() < 0.5:
                r = rng.choice(records)
                field = rng.choice(["kind", "index", "buffer", "offset", "length"])
                setattr(r, field, rng.choice([0, 1, 2, 31, 4096, 1 << 40, self.handle()]) % (1 << 31 if field in ("kind", "index") else 1 << 64))
        ctypes.memmove(self.scratch, (7).to_bytes(4, "little"), 4)
        size = (ctypes.c_uint32 * 3)(*[rng.choice(DIMS) for _ in range(3)])
        if rng.random() < 0.05:
            size = (ctypes.c_uint32 * 3)(0xFFFFFFFF, 0xFFFFFFFF, rng.choice([1, 0xFFFFFFFF]))
        group = None if rng.random() < 0.3 else (ctypes.c_uint32 * 3)(*[rng.choice(DIMS + [0xFFFFFFFF]) for _ in range(3)])
        by_groups = rng.randrange(2)
        threads = size[0] * size[1] * size[2] * (group[0] * group[1] * group[2] if by_groups and group else 1)
        if (1 << 16) < threads < (1 << 48):
            size[1] = size[2] = 1  # keep valid dispatches small: the fuzzer wants errors, not work
            if by_groups and group:
                group[1] = group[2] = 1
        args = ctypes.addressof(records) if rng.random() < 0.95 else None
        stream, kernel = self.handle(), self.handle()
        if plausible:
            stream, kernel = self.live["stream"][0], self.live["kernel"][0]
        self.check(self.lib.pm_dispatch(stream, kernel, args, count, size, group, by_groups), "pm_dispatch")


def strings(fuzzer, every):
    """Malformed sources, macro lists, names and paths (each compile may run clang:
    the bounded run takes those the C ABI refuses before compiling, and two sources)."""
    lib = fuzzer.lib
    for macros in STRINGS if every else [b"=1\n", b"A=1\n=2", b" =3"]:
        fuzzer.check(lib.pm_library_compile(fuzzer.out(ctypes.c_uint64), fuzzer.device, KERNELS, macros, 0),
                     "pm_library_compile")
    for source in STRINGS if every else [b"\xff\xfe", b"kernel void"]:
        fuzzer.check(lib.pm_library_compile(fuzzer.out(ctypes.c_uint64), fuzzer.device, source, None, 0),
                     "pm_library_compile")
    for path in STRINGS + [None, b"/", b"/nonexistent/x.metallib"]:
        fuzzer.check(lib.pm_library_load(fuzzer.out(ctypes.c_uint64), fuzzer.device, path), "pm_library_load")
    fuzzer.check(lib.pm_library_compile(None, fuzzer.device, None, None, 0), "pm_library_compile")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--all-strings", action="store_true", help="every malformed string, some of which compile")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    fuzzer = Fuzzer(seed)
    start = time.time()
    strings(fuzzer, args.all_strings)
    while fuzzer.calls < args.calls:
        fuzzer.step()
    status = fuzzer.lib.pm_stream_synchronize(fuzzer.live["stream"][0])
    print("fuzz ok: %d calls, seed %d, %.1f s (last synchronize: %d); successful: %s" % (
        fuzzer.calls, seed, time.time() - start, status,
        ", ".join("%s %d" % (k[3:], v) for k, v in sorted(fuzzer.ok.items()) if v)))


if __name__ == "__main__":
    main()
