#!/bin/sh
# Runs the data-apis array-api-tests suite (https://github.com/data-apis/array-api-tests)
# against pymetal's namespace.
#
#   scripts/array_api_tests.sh          quick run (make test): few Hypothesis examples
#   scripts/array_api_tests.sh full     exhaustive run (make array-api-tests-full)
#
# The suite is not on PyPI. Where it comes from, first found wins:
#   1. ARRAY_API_TESTS_DIR=path, a copy of the pinned commit;
#   2. ../shared/array-api-tests beside the checkout (the project's machines and CI,
#      which cannot reach GitHub, keep a copy of the pinned commit there);
#   3. a git clone of the pinned commit into .build/, once (git checks the commit's
#      hash, and its spec submodule is the one that commit records).
# Either way it is run from a temporary copy: the shared copy is read-only and the
# suite writes caches beside itself.
#
# A suite that cannot be found or fetched is a failure in CI (CI=true, which GitHub
# Actions sets, or ARRAY_API_TESTS_REQUIRED=1); elsewhere it is reported as NOT RUN,
# loudly, and the script exits 0.
set -eu

# The pinned commit (2026-04-03, the 2024.12 specification; its array-api submodule
# is at 5f847a3). A copy without .git says which commit it is in its ORIGIN file.
COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b
SHORT=$(printf %s "$COMMIT" | cut -c1-7)
REPO=https://github.com/data-apis/array-api-tests.git
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
SHARED=$ROOT/../shared/array-api-tests
FETCHED=$ROOT/.build/array-api-tests-$COMMIT
MODE=${1:-quick}

required() {
    [ "${CI:-}" = true ] || [ "${ARRAY_API_TESTS_REQUIRED:-0}" = 1 ]
}

not_run() {
    echo "array-api-tests: NOT RUN: $1" >&2
    echo "  (pinned: $REPO at $COMMIT; put a copy of it in $SHARED" >&2
    echo "   or set ARRAY_API_TESTS_DIR to one)" >&2
    if required; then
        echo "array-api-tests: the suite is required here (CI=true or ARRAY_API_TESTS_REQUIRED=1): failing" >&2
        exit 1
    fi
    exit 0
}

# Is $1 a copy of the pinned commit? A git checkout says so by its HEAD, a plain
# copy by its ORIGIN file naming the commit's short hash.
at_pin() {
    if [ -e "$1/.git" ]; then
        [ "$(git -C "$1" rev-parse HEAD 2>/dev/null)" = "$COMMIT" ]
    else
        grep -q "$SHORT" "$1/ORIGIN" 2>/dev/null
    fi
}

fetch() {
    tmp="$FETCHED.tmp"
    rm -rf "$tmp"
    if ! timeout 300 git clone --quiet --no-checkout "$REPO" "$tmp" 2>/dev/null; then
        rm -rf "$tmp"
        return 1
    fi
    git -C "$tmp" checkout --quiet "$COMMIT"
    timeout 300 git -C "$tmp" submodule update --init --quiet
    touch "$tmp/.pymetal-fetched"
    rm -rf "$FETCHED"
    mv "$tmp" "$FETCHED"
}

if [ -n "${ARRAY_API_TESTS_DIR:-}" ]; then
    DIR=$ARRAY_API_TESTS_DIR
    if [ ! -d "$DIR/array_api_tests" ]; then
        echo "array-api-tests: ARRAY_API_TESTS_DIR=$DIR has no array_api_tests/ (unset it, or point it at a copy of $COMMIT)" >&2
        exit 1
    fi
elif [ -d "$SHARED/array_api_tests" ]; then
    DIR=$(cd "$SHARED" && pwd)
else
    DIR=$FETCHED
    if [ ! -f "$DIR/.pymetal-fetched" ]; then
        fetch || not_run "no suite in $SHARED and cannot clone $REPO (no access to GitHub from this machine?)"
    fi
fi
if ! at_pin "$DIR"; then
    echo "array-api-tests: $DIR is not the pinned commit $COMMIT" >&2
    echo "  (another commit of the suite: run it against pymetal, then update COMMIT in scripts/array_api_tests.sh)" >&2
    exit 1
fi
[ -f "$DIR/array-api/src/array_api_stubs/__init__.py" ] ||
    not_run "$DIR has no array-api/ (the suite's spec submodule)"
# What the suite imports comes from pyproject's test extras (hypothesis, ndindex,
# pytest-json-report): `make build` installs them with `pip install -e '.[test]'`.
if ! "$PY" -c "import hypothesis, ndindex, pytest_jsonreport" 2>/dev/null; then
    echo "array-api-tests: missing test requirements: $PY -m pip install -e '$ROOT[test]'" >&2
    exit 1
fi
[ -f "$DIR/LICENSE" ] || echo "array-api-tests: warning: $DIR has no LICENSE" >&2

if [ "$MODE" = full ]; then
    EXAMPLES=${ARRAY_API_TESTS_MAX_EXAMPLES:-200}
else
    # 2 cores, a few minutes: a handful of examples per test
    EXAMPLES=${ARRAY_API_TESTS_MAX_EXAMPLES:-8}
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pymetal-array-api-tests.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -R "$DIR/." "$WORK/"
chmod -R u+w "$WORK"
cd "$WORK"
echo "array-api-tests: $DIR (at $SHORT), $EXAMPLES examples per test, run in $WORK"
# float64 and complex128: Apple GPUs have no double precision (the device's
# __array_namespace_info__().dtypes() leaves them out). A fixed Hypothesis seed
# makes runs repeatable; no deadline (the first use of a kernel family may compile
# it); the xfails file lists what is known to fail, with why (it is empty), the
# skips file the suite's own flawed cases, with why. The suite's reporting
# hooks need pytest-json-report active (--json-report; the report is not kept).
# --xfails-file=PATH as one word: as two, pytest takes PATH for a test path and
# roots the run at this repository.
ARRAY_API_TESTS_MODULE=pymetal \
ARRAY_API_TESTS_VERSION=2024.12 \
ARRAY_API_TESTS_SKIP_DTYPES=float64,complex128 \
PYMETAL_REQUIRE_LIBRARY=1 \
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" \
"$PY" -m pytest array_api_tests -q -p no:cacheprovider \
    --hypothesis-seed=0 --max-examples="$EXAMPLES" --hypothesis-disable-deadline \
    --json-report --json-report-file=/dev/null \
    --xfails-file="$ROOT/tests/array_api/xfails.txt" --skips-file="$ROOT/tests/array_api/skips.txt" -rfE
