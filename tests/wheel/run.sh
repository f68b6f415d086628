#!/usr/bin/env bash
# make wheel-test: builds the wheel (pip wheel), and the sdist and a wheel from
# it; installs each into a new virtual environment outside the checkout and runs
# smoke.py there with the Swift toolchain off PATH: with no clang++ at all, and
# (the checkout's wheel) with PYMETAL_CLANG.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
python="${PYTHON:-python3}"
clang="$(command -v clang++ || true)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "wheel-test: building the wheel (swift build into .build/wheel, shader library)"
"$python" -m pip wheel --quiet --no-deps --disable-pip-version-check -w "$work/dist" "$root"
wheel="$(ls "$work"/dist/*.whl)"
echo "wheel-test: $(basename "$wheel"): $(du -k "$wheel" | cut -f1) KiB"
case "$(basename "$wheel")" in *-py3-none-linux_*|*-py3-none-macosx_*) ;; *) echo "wheel-test: unexpected tag"; exit 1;; esac

# NumPy from the machine's site-packages (no download); everything else from the wheel.
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"

# The sdist builds from source: a wheel built from it carries the same files.
echo "wheel-test: the sdist (python -m build --sdist), then a wheel built from it (a cold swift build)"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check build
"$work/venv/bin/python" -m build --sdist --outdir "$work/sdist" "$root" >/dev/null
sdist="$(ls "$work"/sdist/*.tar.gz)"
"$python" -m pip wheel --quiet --no-deps --disable-pip-version-check -w "$work/from-sdist" "$sdist"
"$python" - "$wheel" "$work"/from-sdist/*.whl <<'PY'
import sys, zipfile
a, b = (sorted(zipfile.ZipFile(w).namelist()) for w in sys.argv[1:])
assert a == b, "the wheel built from the sdist differs: %s" % sorted(set(a) ^ set(b))
print("wheel-test: the wheel built from the sdist has the same %d files" % len(a))
PY
"$python" -m venv --system-site-packages "$work/venv-sdist"
"$work/venv-sdist/bin/python" -m pip install --quiet --disable-pip-version-check "$work"/from-sdist/*.whl

cd "$work"   # away from the checkout, so `import pymetal` cannot find it
empty="$work/empty-path" && mkdir "$empty"
ln -s "$work/venv/bin/python" "$empty/python"
export XDG_CACHE_HOME="$work/cache"   # a real compile, not the developer's cache
unset PYMETAL_LIBRARY PYMETAL_CLANG PYMETAL_MSL_HEADERS PYMETAL_SHADER_LIBRARY PYMETAL_SHADERS LD_LIBRARY_PATH
env PATH="$empty" "$work/venv/bin/python" "$root/tests/wheel/smoke.py" no-clang
env PATH="$empty" "$work/venv-sdist/bin/python" "$root/tests/wheel/smoke.py" no-clang
if [[ "$(uname -s)" == "Linux" ]]; then
    [[ -n "$clang" ]] || { echo "wheel-test: needs a clang++ on PATH for the compile check"; exit 1; }
    # PATH without the Swift toolchain (clang++ still needs the system's linker from it).
    stripped="$(tr ':' '\n' <<<"$PATH" | grep -v -e '^/opt/swift' -e "$(dirname "$clang")" | paste -sd: -)"
    env PATH="$stripped" PYMETAL_CLANG="$clang" "$work/venv/bin/python" "$root/tests/wheel/smoke.py" clang
fi
