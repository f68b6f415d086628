"""An empty array bound to a kernel has no element: in validation mode
(PYMETAL_VALIDATION=1) any access to it is "out of bounds", for NumPy and
pymetal arrays and views of either at an offset, reads and writes. (Its binding
once passed length 0, which means "the whole buffer", so the checks judged
accesses against the buffer behind it.) Validation is read when the library
loads: each case runs in a child process."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

CHILD = r'''
import sys, numpy as np, pymetal as pm
lib = pm.compile("""
kernel void rd(device const uchar *a [[buffer(0)]], device uchar *o [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    o[i] = a[i];
}
kernel void wr(device float *b [[buffer(0)]], uint i [[thread_position_in_grid]]) { b[i] = 1.0f; }
""")
base, fbase = pm.zeros(64, np.uint8), pm.zeros(64, np.float32)
cases = {
    "rd numpy": lambda: lib.rd(np.zeros(0, np.uint8), np.zeros(1, np.uint8), grid=1),
    "rd pymetal": lambda: lib.rd(pm.zeros(0, np.uint8), np.zeros(1, np.uint8), grid=1),
    "rd pymetal view": lambda: lib.rd(base[5:5], np.zeros(1, np.uint8), grid=1),
    "rd numpy view": lambda: lib.rd(np.zeros(100, np.uint8)[7:7], np.zeros(1, np.uint8), grid=1),
    "wr numpy": lambda: lib.wr(np.zeros(0, np.float32), grid=1),
    "wr pymetal view": lambda: lib.wr(fbase[3:3], grid=1),
    "rd size 1 (in bounds)": lambda: lib.rd(np.ones(1, np.uint8), np.zeros(1, np.uint8), grid=1),
}
for name, call in cases.items():
    try:
        call()
        pm.synchronize()
        print(name, "| CLEAN", flush=True)
    except pm.KernelError as e:
        print(name, "| ERROR", str(e).replace("\n", " "), flush=True)
'''


def run_child(validation):
    env = dict(os.environ, PYMETAL_REQUIRE_LIBRARY="1")
    env.pop("PYMETAL_VALIDATION", None)
    if validation:
        env["PYMETAL_VALIDATION"] = validation
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(line.split(" | ", 1) for line in proc.stdout.splitlines() if " | " in line)


@pytest.mark.parametrize("validation", ["1", "bounds"])
def test_any_access_to_an_empty_array_is_out_of_bounds(dev, validation):
    if dev.backend != "cpu":
        pytest.skip("shader validation is the CPU backend's")
    got = run_child(validation)
    assert got.pop("rd size 1 (in bounds)") == "CLEAN"
    assert len(got) == 6, got
    for name, result in got.items():
        param = "`a` [[buffer(0)]]" if name.startswith("rd") else "`b` [[buffer(0)]]"
        assert result.startswith("ERROR"), (name, result)
        for words in ("out of bounds", "element 0 of " + param, "which has 0 elements", "(0,0,0)"):
            assert words in result, (name, words, result)


def test_without_validation_empty_arrays_still_bind(dev):
    got = run_child(None)
    assert set(got.values()) == {"CLEAN"}, got
