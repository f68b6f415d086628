"""Shader logging: os_log in kernels compiled with pm.compile(..., logging=True)
reaches Python's logging (logger "pymetal.kernel"), one record per message,
printf-formatted, in order per thread, in every execution mode."""

import logging
import re

import numpy as np
import pytest

import pymetal as pm

SOURCE = r'''
#include <metal_stdlib>
#include <metal_logging>
using namespace metal;
constant os_log stats("com.example.k", "stats");
kernel void plain(device const float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    os_log_default.log("i=%d v=%.2f", i, a[i]);
    if (i == 2) stats.log_error("bad %u %s", i, "thing");
    if (i == 0) stats.log_debug("h=%.2f b=%d", 1.5h, true);
}
kernel void twice(device float *o [[buffer(0)]], uint i [[thread_position_in_grid]],
                  uint t [[thread_position_in_threadgroup]]) {
    threadgroup float sh[8];
    os_log_default.log("%u first", i);
    sh[t] = i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    os_log_default.log("%u second %.0f", i, sh[7 - t]);
    o[i] = sh[7 - t];
}
kernel void simd(device const float *a [[buffer(0)]], device float *o [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    stats.log_info("%u sum %.1f", i, simd_sum(a[i]));
    o[i] = a[i];
}
'''


@pytest.fixture(scope="module")
def lib(dev):
    return pm.compile(SOURCE, logging=True)


@pytest.fixture
def records():
    got = []

    class Keep(logging.Handler):
        def emit(self, record):
            got.append(record)

    log = logging.getLogger("pymetal.kernel")
    h, old = Keep(level=logging.DEBUG), log.level
    log.addHandler(h)
    log.setLevel(logging.DEBUG)
    yield got
    log.removeHandler(h)
    log.setLevel(old)


@pytest.mark.parametrize("n", [1, 4, 33])
def test_default_logger_and_objects(lib, records, n):
    a = np.arange(n, dtype=np.float32) / 4
    lib.plain(a, grid=n)
    msgs = [r.getMessage() for r in records]
    assert sorted(m for m in msgs if m.startswith("i=")) == sorted("i=%d v=%.2f" % (i, a[i]) for i in range(n))
    errors = [r for r in records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == (["bad 2 thing"] if n > 2 else [])
    for r in errors:
        assert (r.subsystem, r.category, r.name) == ("com.example.k", "stats", "pymetal.kernel")
    debug = [r.getMessage() for r in records if r.levelno == logging.DEBUG]
    assert debug == ["h=1.50 b=1"]
    assert all(r.subsystem == "" for r in records if r.getMessage().startswith("i="))


def test_order_per_thread_across_a_barrier(lib, records):
    out = pm.zeros(16, np.float32)  # asynchronous: the records come at the synchronisation
    lib.twice(out, grid=16, threadgroup=8)
    pm.synchronize()
    msgs = [r.getMessage() for r in records]
    assert len(msgs) == 32, msgs
    for i in range(16):
        first, second = msgs.index("%d first" % i), msgs.index("%d second %d" % (i, i // 8 * 8 + 7 - i % 8))
        assert first < second
    np.testing.assert_array_equal(out.numpy(), [g * 8 + 7 - t for g in range(2) for t in range(8)])


@pytest.mark.parametrize("n", [1, 32, 40])
def test_simd_statement_logs_once_with_the_result(lib, records, n):
    a = np.ones(n, np.float32)
    lib.simd(a, np.zeros(n, np.float32), grid=n, threadgroup=n)
    msgs = [r.getMessage() for r in records]
    expect = ["%d sum %.1f" % (i, min(32, n - i // 32 * 32)) for i in range(n)]
    assert sorted(msgs) == sorted(expect), msgs
    assert all(r.levelno == logging.INFO and r.category == "stats" for r in records)


def test_without_logging_the_calls_do_nothing(dev, records):
    quiet = pm.compile(SOURCE)
    quiet.plain(np.ones(4, np.float32), grid=4)
    pm.synchronize()
    assert records == []


def test_a_vector_argument_is_refused(dev):
    with pytest.raises(pm.CompileError, match="log a vector's components one by one"):
        pm.compile(r'''
#include <metal_stdlib>
#include <metal_logging>
using namespace metal;
kernel void k(device const float4 *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    os_log_default.log("%f", a[i]);
}''', logging=True)


def test_defines_in_either_form_keep_working(dev, records):
    src = SOURCE.replace('"i=%d v=%.2f"', 'PREFIX "i=%d v=%.2f"')
    for defines in ({"PREFIX": '"x "'}, ['PREFIX="x "']):
        records.clear()
        pm.compile(src, defines=defines, logging=True).plain(np.ones(1, np.float32), grid=1)
        assert any(re.fullmatch(r"x i=0 v=1\.00", r.getMessage()) for r in records), [r.getMessage() for r in records]
