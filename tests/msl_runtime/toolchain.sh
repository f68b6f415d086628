# Sourced by run.sh and hygiene.sh, after they set `here` (this folder): the
# clang++ to use (CXX=..., default /opt/swift/usr/bin/clang++, else clang++),
# the build folder (BUILD_DIR=..., made here) and the repository's root.
root=$(cd "$here/../.." && pwd)
if [ -z "${CXX:-}" ]; then
    if [ -x /opt/swift/usr/bin/clang++ ]; then CXX=/opt/swift/usr/bin/clang++; else CXX=clang++; fi
fi
build=${BUILD_DIR:-"${TMPDIR:-/tmp}/pm_msl_runtime_test"}
mkdir -p "$build"
