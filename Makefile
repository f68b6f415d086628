# pymetal: two commands do everything on a fresh machine.
#   make demo   builds libPyMetal, the shader library and the Python package, then runs every example
#   make test   the same build, then the Swift tests, the MSL runtime checks and the Python tests
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: all build swift shaders python demo test swift-test runtime-test python-test typecheck bench clean array-api-test array-api-tests-full wheel-test docs fuzz fuzz-arrays

all: demo

build: swift shaders python

# Stamps make a built checkout's `make demo` skip both steps (SwiftPM's own
# up-to-date check and the shader library's load cost about 3 s); any change
# under Sources/ or Shaders/ runs them again.
# Sources/Tools (pymetal-info) is a package of its own, linked against libPyMetal
# (Sources/Tools/Package.swift says why), built into the same folder so that the
# tool finds the library beside it. Tools first: SwiftPM would reuse the last
# build plan of a shared folder for the root package, so the root's plan is made last.
SWIFT_STAMP  := .build/.pymetal-swift
SHADER_STAMP := .build/.pymetal-shaders
swift: $(SWIFT_STAMP)
$(SWIFT_STAMP): Package.swift $(shell find Sources -type f)
	@echo "swift: swift build -c release (a few minutes the first time)"
	swift build -c release --package-path Sources/Tools --scratch-path .build
	swift build -c release --disable-build-manifest-caching
	touch $@

shaders: $(SHADER_STAMP)
$(SHADER_STAMP): $(SWIFT_STAMP) scripts/build_shaders.sh $(shell find Shaders -type f)
	CONFIGURATION=release scripts/build_shaders.sh
	touch $@

# A virtual environment that reuses the machine's NumPy/pytest when present.
$(PY):
	$(PYTHON) -m venv --system-site-packages $(VENV)

# The editable install only changes with pyproject.toml (Python sources are
# used in place), so it runs again only then: `make demo` on a built checkout
# goes straight to the examples.
STAMP := $(VENV)/.pymetal-installed
python: $(STAMP)
$(STAMP): pyproject.toml | $(PY)
	@echo "python: pip install -e '.[test]' into $(VENV)"
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

demo: build
	$(PY) examples/run_all.py

swift-test: swift
	swift test

# The MSL runtime's own checks (fibers, SIMD functions, error paths), without the front end.
runtime-test:
	NO_BENCH=1 sh tests/msl_runtime/run.sh

# Kernel families that are not precompiled are compiled once, on both cores,
# before the tests use them (a later first use loads them from the disk cache).
python-test: build
	$(PY) -m pymetal.arrays.kernels.lookup 2
	PYMETAL_REQUIRE_LIBRARY=1 $(PY) -m pytest tests/python -q

test: build swift-test runtime-test typecheck python-test array-api-test

# mypy over the package and examples/ (configuration: [tool.mypy] in pyproject.toml).
typecheck: $(STAMP)
	$(PY) -m mypy

# ---- Array API conformance (arrayapi): the data-apis array-api-tests suite at a
# pinned commit (from ../shared/array-api-tests when it is there, else fetched),
# 8 examples per test in `make test` (about 1 min), 200 in the exhaustive run.
# In CI (CI=true) a suite that is neither there nor fetchable fails the build.
array-api-test: build
	scripts/array_api_tests.sh

array-api-tests-full: build
	scripts/array_api_tests.sh full

BENCHES := bench_startup bench_overhead bench_split bench_cpu_backend bench_numpy_args bench_math bench_gpu_patterns bench_kernels bench_array bench_linalg bench_fft bench_faults

# Every benchmark script (each prints ratios against NumPy), then pymetal vs
# NumPy by size with PNG plots in output/bench/ (matplotlib: the `plots` extra).
bench: build
	@i=0; for b in $(BENCHES); do i=$$((i + 1)); \
	    echo "== bench $$i/$(words $(BENCHES)): $$b"; $(PY) scripts/$$b.py || exit 1; done
	@echo "== bench plots: python -m pymetal bench --plot output/bench"
	@$(PY) -c "import matplotlib" 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,plots]'
	$(PY) -m pymetal bench --plot output/bench

# The wheel as a user gets it: pip wheel, a new venv outside the checkout, a
# smoke test without the Swift toolchain on PATH (~1 min once .build/wheel exists);
# then the sdist, a wheel built from it (a cold swift build, ~2 min) and the same smoke test.
wheel-test:
	PYTHON=$(PYTHON) tests/wheel/run.sh

# The user guide and API reference (docs/, mkdocs.yml) into site/; any warning fails.
docs: $(STAMP)
	@$(PY) -c "import mkdocs, mkdocstrings" 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,docs]'
	$(PY) -m mkdocs build --strict

# A long fuzz of the C ABI (tests/python/runtime/test_c_abi.py runs a short one): a crash fails it.
fuzz: build
	$(PY) scripts/fuzz_abi.py --calls 300000 --all-strings

# A long differential fuzz of the array library against NumPy (tests/python/arrays/
# test_differential.py runs a fixed sample): FUZZ_MINUTES (default 30) of random
# programs; each distinct failure is printed once as a minimal reproduction.
fuzz-arrays: build
	$(PY) scripts/fuzz_arrays.py

clean:
	rm -rf .build $(VENV) site
