#!/bin/sh
# Header hygiene of the MSL headers (Sources/MetalCPU/MSL), run by run.sh:
#  1. hygiene.cpp builds and runs with every one- and two-letter upper-case
#     name and common template-parameter words defined as macros (a user may
#     pass any -D to an MSL compile);
#  2. <metal_stdlib> includes no system header beyond what <stdint.h> and
#     <stddef.h> include themselves (no <stdlib.h>, <stdio.h>, <string.h>,
#     <sys/mman.h>, libstdc++ ...: their global names would take part in the
#     overload resolution of user code, e.g. libc's ::abs(int) beating metal::abs).
#   CXX=...  clang++ to use (default /opt/swift/usr/bin/clang++, else clang++)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/toolchain.sh"  # root, CXX, build
inc="-isystem $root/Sources/MetalCPU/MSL -isystem $root/Sources/CMetalCPU/include -include pm_msl/prelude.h"

# Every macro expands to `)`: any use of the name in a header is a syntax error.
macros="$build/hygiene_macros.txt"
python3 - "$macros" <<'EOF'
import itertools, string, sys
up = string.ascii_uppercase
names = list(up) + ["".join(p) for p in itertools.product(up, repeat=2)]
names += """Op Kernel Binds Mode Sig Inv Src Up Kind Inclusive Cols Rows SITE EXPR NAME OP UP SRC PARAM INCL
  Args Fn Func Type Size Value Index Width Count Dim Elem Vec Mat Tile Block Acc Lanes Mask
  TILE BLOCK WIDTH HEIGHT SIZE COUNT DIM NUM MAX MIN ALIGN DEBUG LANES THREADS STRIDE OFFSET TYPE VALUE
  INDEX DTYPE ITYPE OTYPE MODE SIMD FIBERS LOOP KERNEL WARP GROUP SCALE ELEM VEC MASK""".split()
with open(sys.argv[1], "w") as f:
    f.write("\n".join("-D%s=)" % n for n in names) + "\n")
EOF

so="$build/hygiene.so"
echo "== header hygiene: build with $(wc -l < "$macros") macros"
# shellcheck disable=SC2086
"$CXX" -std=c++20 -O1 -fno-exceptions -shared -fPIC $inc -Werror=unknown-attributes \
    @"$macros" "$here/hygiene.cpp" -o "$so"

echo "== header hygiene: run"
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" python3 - "$so" "$(wc -l < "$macros")" <<'EOF'
import sys
import numpy as np
import pmrt

lib = pmrt.Library(sys.argv[1])
n = 200
data = np.arange(n, dtype=np.float32)
rc = pmrt.run(lib["hy_scale"], pmrt.make_launch([data], threads=(n,), tpg=(32,)))
assert rc == (0, ""), rc
assert (data == 2 * np.arange(n)).all()

out = np.zeros(n, np.float32)
counter = np.zeros(1, np.uint32)
fsum = np.zeros(1, np.float32)
params = np.array([(n, 0.5)], dtype=[("count", np.uint32), ("scale", np.float32)])
ints = np.zeros(n, np.int32)
L = pmrt.make_launch([out, counter, fsum, params, ints], threads=(n,), tpg=(64,), tg_lengths=(128,))
rc = pmrt.run(lib["hy_everything"], L, nthreads=2)
assert rc == (0, ""), rc
assert counter[0] == n and fsum[0] == n, (counter, fsum)
# abs(neg) * 2 + min(neg, 0) + max(neg, 0) + clamp(neg, -1, 1) + popcount(7) + clz(1) + all + any
want = np.where(np.arange(n) % 2 == 0, 37, 38)
assert (ints == want).all(), ints
assert np.isfinite(out).all()
print("ok   kernels build and run with %s macros defined" % sys.argv[2])
EOF

echo "== header hygiene: system headers"
headers() { # the files a translation unit includes (from its line markers)
    sed -n 's/^# [0-9]* "\([^"]*\)".*/\1/p' | grep -v '^<' | sort -u
}
printf '#include <stdint.h>\n#include <stddef.h>\n' | "$CXX" -std=c++20 -E -x c++ - | headers > "$build/hygiene_base.txt"
printf '#include <metal_stdlib>\n' | "$CXX" -std=c++20 -E $inc -x c++ - | headers |
    grep -v "^$root/Sources/" > "$build/hygiene_msl.txt"
extra=$(comm -23 "$build/hygiene_msl.txt" "$build/hygiene_base.txt")
if [ -n "$extra" ]; then
    echo "FAIL <metal_stdlib> includes system headers beyond <stdint.h> / <stddef.h>:"
    echo "$extra"
    exit 1
fi
echo "ok   <metal_stdlib> includes no system header beyond <stdint.h> / <stddef.h> ($(wc -l < "$build/hygiene_base.txt") files)"
