"""A big MLX-style kernel file for the lazy-compile tests and scripts/bench_compile.py.

One templated scan kernel (threadgroup-cooperative, simd shuffles, a carry across
chunks, like MLX's scan.metal) instantiated for every op x type x inclusive x
reverse x N_READS with `template [[host_name(...)]] [[kernel]] decltype(...)`.
"""

import itertools

OPS = ("sum", "prod", "max", "min")
TYPES = ("float", "half", "int", "uint", "short", "ushort", "char", "uchar")
READS = (1, 2, 4)

HEADER = r"""
#include <metal_stdlib>
using namespace metal;

struct Sum { template <typename T> T operator()(T a, T b) const { return a + b; }
             template <typename T> static T init() { return T(0); } };
struct Prod { template <typename T> T operator()(T a, T b) const { return a * b; }
              template <typename T> static T init() { return T(1); } };
struct Max { template <typename T> T operator()(T a, T b) const { return a > b ? a : b; }
             template <typename T> static T init() { return numeric_limits<T>::lowest(); } };
struct Min { template <typename T> T operator()(T a, T b) const { return a < b ? a : b; }
             template <typename T> static T init() { return numeric_limits<T>::max(); } };

// One threadgroup scans one row of n elements; each thread takes N_READS at a time.
template <typename T, typename Op, bool inclusive, bool reverse, int N_READS>
[[kernel]] void scan(const device T* in [[buffer(0)]], device T* out [[buffer(1)]],
                     const constant uint& n [[buffer(2)]],
                     uint row [[threadgroup_position_in_grid]],
                     uint lid [[thread_position_in_threadgroup]],
                     uint lsize [[threads_per_threadgroup]],
                     uint lane [[thread_index_in_simdgroup]],
                     uint width [[threads_per_simdgroup]],
                     uint sg [[simdgroup_index_in_threadgroup]],
                     uint groups [[simdgroups_per_threadgroup]]) {
  Op op;
  threadgroup T totals[32];
  in += row * n;
  out += row * n;
  T carry = Op::template init<T>();
  for (uint base = 0; base < n; base += lsize * N_READS) {
    T vals[N_READS];
    for (int k = 0; k < N_READS; k++) {
      uint i = base + lid * N_READS + k;
      vals[k] = i < n ? in[reverse ? n - 1 - i : i] : Op::template init<T>();
    }
    for (int k = 1; k < N_READS; k++) vals[k] = op(vals[k - 1], vals[k]);
    T scanned = vals[N_READS - 1];
    for (uint d = 1; d < width; d <<= 1) {
      T other = simd_shuffle_up(scanned, ushort(d));
      if (lane >= d) scanned = op(other, scanned);
    }
    T before = simd_shuffle_up(scanned, ushort(1));
    if (lane == 0) before = Op::template init<T>();
    if (lane == width - 1) totals[sg] = scanned;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    T group_prefix = Op::template init<T>();
    T chunk = Op::template init<T>();
    for (uint s = 0; s < groups; s++) {
      if (s < sg) group_prefix = op(group_prefix, totals[s]);
      chunk = op(chunk, totals[s]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    T prefix = op(carry, op(group_prefix, before));
    for (int k = 0; k < N_READS; k++) {
      uint i = base + lid * N_READS + k;
      if (i < n) out[reverse ? n - 1 - i : i] = inclusive ? op(prefix, vals[k]) : (k == 0 ? prefix : op(prefix, vals[k - 1]));
    }
    carry = op(carry, chunk);
  }
}

#define instantiate_scan(name, T, Op, inc, rev, nr) \
  template [[host_name(name)]] [[kernel]] decltype(scan<T, Op, inc, rev, nr>) scan<T, Op, inc, rev, nr>;
"""


def kernel_name(op, type_, inclusive, reverse, reads):
    return "scan_%s_%s_%s_%s_%d" % (op, type_, "inclusive" if inclusive else "exclusive",
                                   "reverse" if reverse else "forward", reads)


def combinations():
    return list(itertools.product(OPS, TYPES, (True, False), (False, True), READS))


def source(extra="", kernels=None):
    """The file (384 kernels, or the first `kernels` of them); `extra` is appended (a deliberate error, say)."""
    lines = [HEADER]
    for op, type_, inclusive, reverse, reads in combinations()[:kernels]:
        lines.append('instantiate_scan("%s", %s, %s, %s, %s, %d)' % (
            kernel_name(op, type_, inclusive, reverse, reads), type_, op.capitalize(),
            "true" if inclusive else "false", "true" if reverse else "false", reads))
    return "\n".join(lines) + "\n" + extra


NUMPY_TYPES = {"float": "float32", "half": "float16", "int": "int32", "uint": "uint32", "short": "int16",
               "ushort": "uint16", "char": "int8", "uchar": "uint8"}


def reference(x, op, inclusive, reverse):
    """What scan_<op>_... computes for each row of the 2-D NumPy array x."""
    import numpy as np
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    data = x[:, ::-1] if reverse else x
    out = ufunc.accumulate(data, axis=1, dtype=x.dtype)
    if not inclusive:
        if op == "sum":
            init = 0
        elif op == "prod":
            init = 1
        elif op == "max":
            init = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        else:
            init = np.finfo(x.dtype).max if x.dtype.kind == "f" else np.iinfo(x.dtype).max
        out = np.concatenate([np.full((x.shape[0], 1), init, x.dtype), out[:, :-1]], axis=1)
    return out[:, ::-1] if reverse else out


def run(library, op, type_, inclusive, reverse, reads, rows=3, n=131, threads=64, seed=0):
    """Runs one kernel of the file on random small values; returns (result, expected)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    dtype = np.dtype(NUMPY_TYPES[type_])
    # small values: sums and products stay exact (products of 1s and 2s, few 2s) in every dtype
    values = rng.integers(1, 3, size=(rows, n)) if op == "prod" else rng.integers(-3 if dtype.kind != "u" else 0, 4, size=(rows, n))
    if op == "prod":
        values[rng.random((rows, n)) < 0.93] = 1
    x = values.astype(dtype)
    out = np.zeros_like(x)
    library.function(kernel_name(op, type_, inclusive, reverse, reads))(x, out, np.uint32(n), groups=rows, threadgroup=threads)
    return out, reference(x, op, inclusive, reverse)
