"""pymetal's command line: `python -m pymetal` or the `pymetal` console script.

    pymetal info                          device, backend, versions, kernel cache, self-check
    pymetal compile FILE.metal [-I DIR] [-D NAME=VALUE] [--fast-math]
                                          checks a Metal file as `xcrun metal` would: diagnostics,
                                          then each kernel with its buffer arguments
    pymetal cache {info,clear}            the disk cache of compiled kernels
    pymetal bench [--plot DIR]            pymetal arrays against NumPy by size (PNG plots need matplotlib)
"""

import argparse
import concurrent.futures
import os
import platform
import sys

import pymetal as pm
from pymetal.runtime import native as _native

SELF_CHECK = """
#include <metal_stdlib>
using namespace metal;
kernel void axpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
"""


def cache_summary():
    """One line on the disk cache of compiled kernels (pm.kernel_cache_info())."""
    info = pm.kernel_cache_info()
    if info["path"] is None:
        return "none here (Metal caches compiled kernels itself)"
    return "%s: %d files, %.1f MiB of at most %.0f MiB%s" % (
        info["path"], info["entries"], info["bytes"] / 2**20, info["max_bytes"] / 2**20,
        "" if info["persistent"] else " (this process only)")


def self_check():
    """Compiles and runs a kernel, and an array op from the shader library; returns a list of problems."""
    import numpy as np

    problems = []
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    pm.compile(SELF_CHECK).axpy(x, y, np.float32(2), grid=1000)
    if not np.array_equal(y, 2 * x + 1):
        problems.append("compiled kernel: wrong results")
    a = pm.arange(10000, dtype=pm.float32)
    if float(pm.sum(a * 2)) != float(np.sum(np.arange(10000, dtype=np.float64) * 2)):
        problems.append("shader library (sum of a * 2): wrong result")
    return problems


def cmd_info(args):
    dev = pm.device()
    import numpy as np

    rows = [
        ("device", dev.name),
        ("backend", dev.backend),
        ("unified memory", dev.unified_memory),
        ("threads/group max", dev.max_threads_per_threadgroup),
        ("max buffer", "%d MiB" % (dev.max_buffer_length >> 20)),
        ("pymetal", "%s (C ABI %d)" % (pm.__version__, pm.ABI_VERSION)),
        ("libPyMetal", pm.library_path()),
        ("python", "%s (%s)" % (platform.python_version(), sys.executable)),
        ("numpy", np.__version__),
        ("kernel cache", cache_summary()),
    ]
    for key, value in rows:
        print("%-18s %s" % (key + ":", value))
    problems = self_check()
    print("%-18s %s" % ("self-check:", "ok" if not problems else "FAILED: " + "; ".join(problems)))
    return 1 if problems else 0


def buffer_access(fn):
    """{index: 'read' | 'read-write'} for the buffers the kernel uses (pipeline reflection)."""
    names = {_native.PM_ACCESS_READ_ONLY: "read", _native.PM_ACCESS_READ_WRITE: "read-write"}
    query = _native.lib().pm_kernel_buffer_access
    found = {}
    for index in range(31):  # [[buffer(0)]] .. [[buffer(30)]]
        access = _native.out_i32(query, fn._handle, index)
        if access in names:
            found[index] = names[access]
    return found


def cmd_compile(args):
    if not os.path.isfile(args.file):
        print("pymetal compile: %s: no such file" % args.file, file=sys.stderr)
        return 2
    try:  # diagnostics name the file, as `xcrun metal`'s do
        lib = pm.load(args.file, defines=args.define or None, include_dirs=args.include or None,
                      fast_math=args.fast_math)
    except pm.CompileError as e:
        print(e, file=sys.stderr)
        return 1
    print("%s: ok, %d kernel%s" % (args.file, len(lib.functions), "" if len(lib.functions) == 1 else "s"))
    # a big library compiles each kernel when it is first asked for: all of them at once, over the cores
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        functions = list(pool.map(lib.function, lib.functions))
    for name, fn in zip(lib.functions, functions):
        if fn.arguments is not None:  # the kernel's signature, with each argument's binding
            signature = ", ".join("%r [[%s(%d)]]" % (a, a.binding, a.index) for a in fn.arguments)
        else:  # no reflection: the buffers the pipeline reports
            signature = ", ".join("buffer(%d) %s" % item for item in sorted(buffer_access(fn).items()))
        print("  %s(%s)" % (name, signature))
        print("      max threads/group %d, execution width %d, static threadgroup memory %d bytes"
              % (fn.max_threads_per_threadgroup, fn.execution_width, fn.static_threadgroup_memory))
    return 0


def cmd_cache(args):
    if args.action == "clear":
        print("cleared %d kernel libraries" % pm.clear_kernel_cache())
    print(cache_summary())
    return 0


def cmd_bench(args):
    from . import _bench  # at call time: benchmarks only (imports the arrays, NumPy)

    results = _bench.run(quick=args.quick)
    if args.plot:
        _bench.plot(results, args.plot)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="pymetal", description="pymetal: Metal compute from Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="device, backend, versions, kernel cache, self-check")
    p = sub.add_parser("compile", help="check a .metal file: diagnostics, then its kernels and their arguments")
    p.add_argument("file")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="include directory")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]", help="macro")
    p.add_argument("--fast-math", action="store_true", help="compile in fast math mode (default: safe)")
    p = sub.add_parser("cache", help="the disk cache of compiled kernels")
    p.add_argument("action", choices=["info", "clear"])
    p = sub.add_parser("bench", help="pymetal arrays against NumPy by size")
    p.add_argument("--plot", metavar="DIR", help="also write one PNG per operation there (needs matplotlib)")
    p.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    args = parser.parse_args(argv)
    command = {"info": cmd_info, "compile": cmd_compile, "cache": cmd_cache, "bench": cmd_bench}[args.command]
    try:
        return command(args)
    except pm.Error as e:
        print("pymetal %s: %s" % (args.command, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
