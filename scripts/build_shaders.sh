#!/usr/bin/env bash
# Builds pymetal's shader library from Shaders/ into .build/shaders/:
#   macOS: pymetal.metallib with xcrun metal + metallib (needs full Xcode, and on
#          Xcode 26 `xcodebuild -downloadComponent MetalToolchain`); without that
#          toolchain pymetal compiles Shaders/ at run time instead.
#   Linux: pymetal-cpu.metallib, a MetalCPU kernel library, with pymetal-metallib.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build/shaders"
mkdir -p "$out"
configuration="${CONFIGURATION:-release}"

if [[ "$(uname -s)" == "Darwin" ]]; then
    if ! xcrun -sdk macosx -f metal >/dev/null 2>&1; then
        echo "build_shaders: no Metal toolchain (install Xcode; on Xcode 26 run" \
             "'xcodebuild -downloadComponent MetalToolchain'); pymetal will compile Shaders/ at run time"
        exit 0
    fi
    rm -f "$out"/*.air
    for source in "$root"/Shaders/*.metal; do
        xcrun -sdk macosx metal -c -std=metal3.1 -O2 -I "$root/Shaders" "$source" \
            -o "$out/$(basename "${source%.metal}").air"
    done
    xcrun -sdk macosx metallib "$out"/*.air -o "$out/pymetal.metallib"
    echo "build_shaders: $out/pymetal.metallib"
else
    swift build --package-path "$root" -c "$configuration" --product pymetal-metallib >/dev/null
    "$root/.build/$configuration/pymetal-metallib" "$root/Shaders" "$out/pymetal-cpu.metallib"
fi
