#!/usr/bin/env bash
# Builds pymetal's shader library from Shaders/ into .build/shaders/ (or $SHADERS_OUT):
#   macOS: pymetal.metallib with xcrun metal + metallib (needs full Xcode, and on
#          Xcode 26 `xcodebuild -downloadComponent MetalToolchain`); without that
#          toolchain pymetal compiles Shaders/ at run time instead.
#   Linux: pymetal-cpu.metallib, a MetalCPU kernel library, with pymetal-metallib
#          ($PYMETAL_METALLIB, else built here).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${SHADERS_OUT:-$root/.build/shaders}"
mkdir -p "$out"
configuration="${CONFIGURATION:-release}"

if [[ "$(uname -s)" == "Darwin" ]]; then
    # `xcrun -f metal` succeeds on Xcode 26 even without the separately downloaded
    # Metal toolchain, so probe by compiling something; `if` keeps a failure from
    # ending the script under `set -e`.
    probe="$(mktemp -d)"
    trap 'rm -rf "$probe"' EXIT
    echo 'kernel void probe() {}' > "$probe/probe.metal"
    if ! xcrun -sdk macosx metal -c "$probe/probe.metal" -o "$probe/probe.air" >/dev/null 2>&1; then
        echo "build_shaders: no Metal toolchain (install Xcode; on Xcode 26 run" \
             "'xcodebuild -downloadComponent MetalToolchain'); pymetal will compile Shaders/ at run time"
        exit 0
    fi
    # MSL 3.1 (bfloat) is the language of macOS 14, the deployment target in
    # Package.swift; -fno-fast-math because Apple's compiler defaults to fast
    # math and pymetal promises safe math on both platforms.
    rm -f "$out"/*.air
    for source in "$root"/Shaders/*.metal; do
        echo "build_shaders: $(basename "$source")"
        xcrun -sdk macosx metal -c -std=metal3.1 -mmacosx-version-min=14.0 -fno-fast-math -O2 \
            -I "$root/Shaders" "$source" -o "$out/$(basename "${source%.metal}").air"
    done
    xcrun -sdk macosx metallib "$out"/*.air -o "$out/pymetal.metallib"
    rm -f "$out"/*.air
    echo "build_shaders: $out/pymetal.metallib"
else
    metallib="${PYMETAL_METALLIB:-}"
    if [[ -z "$metallib" ]]; then
        swift build --package-path "$root" -c "$configuration" --product pymetal-metallib >/dev/null
        metallib="$root/.build/$configuration/pymetal-metallib"
    fi
    echo "build_shaders: Shaders/ for the CPU backend (about two minutes the first time; cached after)"
    # One clang++ run over all of Shaders/ gives no progress of its own: say
    # every 15 s that it is still going (a cached build returns at once).
    "$metallib" "$root/Shaders" "$out/pymetal-cpu.metallib" &
    pid=$!
    start=$SECONDS next=15
    while kill -0 "$pid" 2>/dev/null; do
        sleep 0.25
        if (( SECONDS - start >= next )); then
            echo "build_shaders: still compiling Shaders/ ($((SECONDS - start)) s)"
            next=$((next + 15))
        fi
    done
    wait "$pid"
fi
