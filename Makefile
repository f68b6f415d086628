# pymetal: two commands do everything on a fresh machine.
#   make demo   builds libPyMetal, the shader library and the Python package, then runs every example
#   make test   the same build, then the Swift tests, the MSL runtime checks and the Python tests
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: all build swift shaders python demo test swift-test runtime-test python-test bench clean fuzz

all: demo

build: swift shaders python

swift:
	swift build -c release

shaders: swift
	CONFIGURATION=release scripts/build_shaders.sh

# A virtual environment that reuses the machine's NumPy/pytest when present.
$(PY):
	$(PYTHON) -m venv --system-site-packages $(VENV)

python: $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'

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
	$(PY) -m pymetal._jit 2
	PYMETAL_REQUIRE_LIBRARY=1 $(PY) -m pytest tests/python -q

test: build swift-test runtime-test python-test

bench: build
	$(PY) scripts/bench_overhead.py
	$(PY) scripts/bench_split.py
	$(PY) scripts/bench_cpu_backend.py
	$(PY) scripts/bench_numpy_args.py
	$(PY) scripts/bench_math.py
	$(PY) scripts/bench_gpu_patterns.py
	$(PY) scripts/bench_kernels.py
	$(PY) scripts/bench_array.py

# A long fuzz of the C ABI (tests/python/test_c_abi.py runs a short one): a crash fails it.
fuzz: build
	$(PY) scripts/fuzz_abi.py --calls 300000 --all-strings

clean:
	rm -rf .build $(VENV)
