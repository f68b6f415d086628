# pymetal: two commands do everything on a fresh machine.
#   make demo   builds libPyMetal, the shader library and the Python package, then runs every example
#   make test   the same build, then the Swift tests, the MSL runtime checks and the Python tests
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: all build swift shaders python demo test swift-test runtime-test python-test bench clean

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

python-test: build
	PYMETAL_REQUIRE_LIBRARY=1 $(PY) -m pytest tests/python -q

test: build swift-test runtime-test python-test

bench: build
	$(PY) scripts/bench_overhead.py
	$(PY) scripts/bench_split.py
	$(PY) scripts/bench_cpu_backend.py

clean:
	rm -rf .build $(VENV)
