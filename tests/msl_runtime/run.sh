#!/bin/sh
# Builds kernels.cpp the way MetalCPU builds a kernel library, runs the runtime
# checks (test_runtime.py), the header hygiene checks (hygiene.sh) and the
# benchmarks (bench.py). Exits non-zero on failure.
#   CXX=...      clang++ to use (default /opt/swift/usr/bin/clang++, else clang++)
#   NO_BENCH=1   skip the benchmarks
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/toolchain.sh"  # root, CXX, build
so="$build/kernels.so"

echo "== build $so"
"$CXX" -std=c++20 -O2 -march=native -fno-exceptions -shared -fPIC \
    -isystem "$root/Sources/MetalCPU/MSL" -isystem "$root/Sources/CMetalCPU/include" \
    -include pm_msl/prelude.h -Werror=unknown-attributes \
    "$here/kernels.cpp" -o "$so"

export OPENBLAS_NUM_THREADS=1 PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
echo "== checks"
# a hang is a failure too
timeout 600 python3 "$here/test_runtime.py" "$so"
CXX="$CXX" BUILD_DIR="$build" timeout 600 sh "$here/hygiene.sh"
if [ -z "${NO_BENCH:-}" ]; then
    echo "== benchmarks"
    timeout 600 python3 "$here/bench.py" "$so"
fi
