"""Shader logging: os_log in kernels compiled with pm.compile(..., logging=True)
reaches Python's logging (logger "pymetal.kernel"), one record per message,
printf-formatted, in order per thread, in every execution mode."""

import logging
import os
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


# ---- through Metal's shader-logging API (MTLLogState on each stream's queue) ----

LEVELS = r'''
#include <metal_stdlib>
#include <metal_logging>
using namespace metal;
constant os_log lg("org.pymetal.test", "levels");
kernel void levels(device int *o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    lg.log("notice %u", i);
    lg.log_info("info %u", i);
    lg.log_debug("debug %u", i);
    lg.log_error("error %u", i);
    lg.log_fault("fault %u", i);
    o[i] = 1;
}
kernel void many(device int *o [[buffer(0)]], constant uint &n [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    for (uint k = 0; k < n; k++) os_log_default.log("t%u k%u", i, k);
    o[i] = 1;
}
kernel void wide(device int *o [[buffer(0)]], constant uint &n [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    for (uint k = 0; k < n; k++) os_log_default.log("t%05u k%03u %s", i, k, "-------------------------------------------");
    o[i] = 1;
}
kernel void then_fault(device int *o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    os_log_default.log("before %u", i);
    if (i == 3) __builtin_trap();
    o[i] = 1;
}
'''


@pytest.fixture(scope="module")
def lv(dev):
    return pm.compile(LEVELS, logging=True)


def test_levels_map_to_python_levels(lv, records):
    lv.levels(np.zeros(1, np.int32), grid=1)
    got = [(r.getMessage(), r.levelno, r.subsystem, r.category) for r in records]
    assert got == [("notice 0", logging.INFO, "org.pymetal.test", "levels"),
                   ("info 0", logging.INFO, "org.pymetal.test", "levels"),
                   ("debug 0", logging.DEBUG, "org.pymetal.test", "levels"),
                   ("error 0", logging.ERROR, "org.pymetal.test", "levels"),
                   ("fault 0", logging.CRITICAL, "org.pymetal.test", "levels")]


@pytest.mark.parametrize("threads,per", [(1, 5), (7, 3), (64, 2)])
def test_each_threads_messages_in_order(lv, records, threads, per):
    lv.many(np.zeros(threads, np.int32), np.uint32(per), grid=threads, threadgroup=min(threads, 32))
    msgs = [r.getMessage() for r in records]
    assert sorted(msgs) == sorted("t%d k%d" % (t, k) for t in range(threads) for k in range(per))
    for t in range(threads):
        mine = [m for m in msgs if m.startswith("t%d " % t)]
        assert mine == ["t%d k%d" % (t, k) for k in range(per)]


def test_two_python_threads_get_all_their_messages(lv, records):
    import threading
    errors = []

    def work(tag):
        try:
            for _ in range(5):
                o = np.zeros(16, np.int32)
                lv.many(o, np.uint32(2), grid=16)
                assert o.sum() == 16
        except Exception as e:  # reported below: an assertion in a thread would be lost
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    pm.synchronize()
    assert not errors, errors
    msgs = [r.getMessage() for r in records]
    assert len(msgs) == 2 * 5 * 16 * 2
    for t in range(16):  # each kernel thread's k0 comes before its k1 in every run
        mine = [m for m in msgs if m.startswith("t%d " % t)]
        assert mine.count("t%d k0" % t) == 10 and mine.count("t%d k1" % t) == 10
        depth = 0
        for m in mine:
            depth += 1 if m.endswith("k0") else -1
            assert depth >= 0, mine


def test_messages_logged_before_a_fault_arrive(lv, records):
    with pytest.raises(pm.KernelError):
        lv.then_fault(np.zeros(8, np.int32), grid=8, threadgroup=8)
    assert "before 3" in [r.getMessage() for r in records]
    records.clear()
    lv.levels(np.zeros(1, np.int32), grid=1)  # the next kernel logs as before
    assert [r.getMessage() for r in records][0] == "notice 0"


def test_messages_past_the_buffer_are_dropped_as_metal_does(lv, records):
    # One command buffer's messages take their text, subsystem and category with NULs
    # (here len(text) + 3 bytes); past 1 MB (KernelLog.bufferSize) they are dropped.
    # (58-byte messages: the ~18000 kept are fewer than the 65536 records that may wait for Python.)
    n, per = 1024, 40
    lv.wide(np.zeros(n, np.int32), np.uint32(per), grid=n)
    msgs = [r.getMessage() for r in records]
    assert {len(m) for m in msgs} == {55}
    assert 0 < len(msgs) < n * per
    assert (1 << 20) - 64 < sum(len(m) + 3 for m in msgs) <= 1 << 20  # filled up to the limit
    records.clear()
    lv.levels(np.zeros(1, np.int32), grid=1)  # the next command buffer has the whole buffer again
    assert len(records) == 5


def test_logging_needs_metal_3_2(dev):
    with pytest.raises(ValueError, match="needs Metal 3.2"):
        pm.compile(LEVELS, logging=True, language_version="3.1")


def test_load_with_logging(dev, records, tmp_path):
    path = tmp_path / "k.metal"
    path.write_text(LEVELS)
    pm.load(str(path), logging=True).levels(np.zeros(1, np.int32), grid=1)
    assert [r.getMessage() for r in records][-1] == "fault 0"
    records.clear()
    pm.load(str(path)).levels(np.zeros(1, np.int32), grid=1)  # compiled without logging
    pm.synchronize()
    assert records == []


def test_load_a_prebuilt_library_with_logging(dev, records, tmp_path, monkeypatch):
    """A library built with logging logs when loaded; one built without does not (on a Mac:
    a metallib built with -fmetal-enable-logging or not)."""
    import glob
    import shutil
    import uuid
    # A cache of its own (read at each compile), so another process's new files are not taken for this one's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache = pm.kernel_cache_info()["path"]
    if cache is None:
        pytest.skip("Metal keeps no library file pymetal can load back")
    assert cache.startswith(str(tmp_path)), cache
    for logged in (True, False):
        source = LEVELS + "\n// %s %s\n" % (uuid.uuid4().hex, logged)  # a new library, not a cached one
        before = set(glob.glob(os.path.join(cache, "**", "*.so"), recursive=True))
        pm.compile(source, logging=logged)
        new = set(glob.glob(os.path.join(cache, "**", "*.so"), recursive=True)) - before
        assert len(new) == 1, new
        copy = tmp_path / ("prebuilt-%s.so" % logged)
        shutil.copy(new.pop(), copy)
        records.clear()
        pm.load(str(copy), logging=True).levels(np.zeros(1, np.int32), grid=1)
        pm.synchronize()
        assert len(records) == (5 if logged else 0)
