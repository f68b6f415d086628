#!/bin/sh
# Runs the data-apis array-api-tests suite (https://github.com/data-apis/array-api-tests)
# against pymetal's namespace.
#
#   scripts/array_api_tests.sh          quick run (make test): few Hypothesis examples
#   scripts/array_api_tests.sh full     exhaustive run (make array-api-tests-full)
#
# The suite is not on PyPI. It is fetched with git at one pinned commit (git checks
# the commit's hash, so the content is exactly that commit's, and its spec
# submodule is the one that commit records) into .build/, once; the checkout
# carries the suite's LICENSE. ARRAY_API_TESTS_DIR=path uses an existing checkout
# of that commit instead (for machines without access to GitHub).
#
# Where the suite cannot be fetched (no access to GitHub) the run is reported as
# NOT RUN, loudly, and exits 0 unless ARRAY_API_TESTS_REQUIRED=1 (set it in CI
# that has network access, so that a fetch failure fails the build).
set -eu

# The commit: the newest one of the suite that pymetal has been run against. On the
# machine this was written on (no access to GitHub) the suite was rebuilt from a
# reference copy whose files come from several commits; its newest module (the
# elementwise and operator tests, with the 2024.12 ones) is from this commit. The
# earlier pin (f11a6d0, 2022) predates 2024.12 and could not test this version.
COMMIT=019e060f003acfa2eec33761f0e948c937633443
REPO=https://github.com/data-apis/array-api-tests.git
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
DIR=${ARRAY_API_TESTS_DIR:-$ROOT/.build/array-api-tests-$COMMIT}
MODE=${1:-quick}

not_run() {
    echo "array-api-tests: NOT RUN: $1" >&2
    echo "  (pinned: $REPO at $COMMIT; set ARRAY_API_TESTS_DIR to a checkout of it)" >&2
    if [ "${ARRAY_API_TESTS_REQUIRED:-0}" = 1 ]; then exit 1; fi
    exit 0
}

if [ ! -f "$DIR/.pymetal-fetched" ] && [ -z "${ARRAY_API_TESTS_DIR:-}" ]; then
    tmp="$DIR.tmp"
    rm -rf "$tmp"
    if ! timeout 300 git clone --quiet --no-checkout "$REPO" "$tmp" 2>/dev/null; then
        rm -rf "$tmp"
        not_run "cannot clone $REPO (no access to GitHub from this machine?)"
    fi
    git -C "$tmp" checkout --quiet "$COMMIT"
    timeout 300 git -C "$tmp" submodule update --init --quiet
    [ "$(git -C "$tmp" rev-parse HEAD)" = "$COMMIT" ] || not_run "checkout is not at $COMMIT"
    touch "$tmp/.pymetal-fetched"
    rm -rf "$DIR"
    mv "$tmp" "$DIR"
fi
[ -d "$DIR/array_api_tests" ] || not_run "$DIR has no array_api_tests/"
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

cd "$DIR"
# float64 and complex128: Apple GPUs have no double precision (the device's
# __array_namespace_info__().dtypes() leaves them out). A fixed Hypothesis seed
# makes runs repeatable; no deadline (the first use of a kernel family may compile
# it); the xfails file lists what is known to fail, with why. The suite's reporting
# hooks need pytest-json-report active (--json-report; the report is not kept).
# --xfails-file=PATH as one word: as two, pytest takes PATH for a test path and
# roots the run at this repository.
ARRAY_API_TESTS_MODULE=pymetal \
ARRAY_API_TESTS_VERSION=2024.12 \
ARRAY_API_TESTS_SKIP_DTYPES=float64,complex128 \
PYMETAL_REQUIRE_LIBRARY=1 \
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" \
exec "$PY" -m pytest array_api_tests -q -p no:cacheprovider \
    --hypothesis-seed=0 --max-examples="$EXAMPLES" --hypothesis-disable-deadline \
    --json-report --json-report-file=/dev/null \
    --xfails-file="$ROOT/tests/array_api/xfails.txt" -rfE
