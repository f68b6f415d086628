"""The lean hot paths for small arrays (issue 25, item 1): host reads through
np.asarray / .numpy() / float(), and the one-pass reductions' direct dispatch
(Function._run_reduce), give what the general paths give, bit for bit, and keep
the host-view rule (a kernel call on memory with live views completes on return)."""

import gc

import numpy as np
import pytest

import pymetal as pm
from pymetal.arrays import reduce as _reduce
from pymetal.arrays import small as _small

SIZES = [0, 1, 15, 16383, 16384, 16385, (1 << 20) + 3]


def _data(dt, n, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dt).kind == "f":
        return (rng.standard_normal(n) * 100).astype(dt)
    if np.dtype(dt).kind == "b":
        return rng.random(n) < 0.5
    return rng.integers(-100, 100, n).astype(dt)


@pytest.mark.parametrize("name,dt,n", [(name, dt, n) for name in ("sum", "max", "min", "prod")
                                       for dt in (np.float32, np.float64, np.float16, np.int8, np.int32, np.uint16,
                                                  np.bool_)
                                       for n in SIZES if n or name not in ("max", "min")])  # (empty: below)
def test_whole_reduction_fast_path_equals_general_path(dev, name, dt, n):
    data = _data(dt, n, n + 7)
    if name == "prod" and np.dtype(dt).kind == "f":
        data = (1 + data / 1e4).astype(dt)  # products that stay finite
    x = pm.asarray(data)
    fast = getattr(pm, name)(x)                    # axis=None on a contiguous array: the direct dispatch
    general = getattr(pm, name)(x, axis=0)         # the general path: _run, the same kernel geometry
    f, g = np.asarray(fast), np.asarray(general)
    assert f.dtype == g.dtype and f.shape == g.shape == ()
    assert f.tobytes() == g.tobytes()
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(np.asarray(x))
    if np.dtype(dt).kind == "f":
        np.testing.assert_allclose(f.astype(np.float64), ref.astype(np.float64), rtol=2e-2 if dt == np.float16 else 1e-4,
                                   atol=1e-2 * max(1, n) ** 0.5)
    else:
        assert f == ref.astype(f.dtype)


def test_small_whole_reductions_take_the_direct_dispatch(dev):
    x = pm.asarray(np.arange(1000, dtype=np.float32))
    key = ("sum", x.dtype, 1000, x.device, None)  # (the last: reduce.GPU_SHAPES, None unless a test forces it)
    assert float(pm.sum(x)) == 499500.0
    plan = _reduce._FAST[key]
    assert plan and plan[0]._run_reduce  # (kernel, dtype, parameters, launch configuration)


def test_empty_max_raises(dev):
    with pytest.raises(ValueError, match="zero-size"):
        pm.max(pm.asarray(np.zeros(0, np.float32)))


def test_reduction_of_memory_with_live_views_completes_on_return(dev):
    x = pm.asarray(_data(np.float32, 5000, 1)) + 0.0
    v = np.asarray(x)  # a live view of x: work that uses x completes before the call returns
    s = pm.sum(x)
    assert s._buf.epoch <= dev.synced and x._buf.epoch <= dev.synced
    assert float(s) == float(pm.sum(x, axis=0))
    del v


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.uint8, np.bool_, np.complex64])
def test_asarray_views_are_counted_and_show_the_data(dev, dt):
    base = dev.host_shared
    x = pm.asarray(_data(dt, 100, 3))
    a = np.asarray(x)
    b = x.numpy()
    assert a is not b and x._buf.views == 2 and dev.host_shared == base + 2
    assert np.array_equal(a, _data(dt, 100, 3)) and a.dtype == np.dtype(dt)
    a[0] = b[1]  # writes through to the array
    assert np.asarray(x)[0] == b[1]
    w = a[1:]
    del a, b
    gc.collect()
    assert x._buf.views == 1  # w still views the memory
    del w
    gc.collect()
    assert x._buf.views == 0 and dev.host_shared == base


def test_asarray_of_views_at_offsets_and_strides(dev):
    x = pm.asarray(np.arange(60, dtype=np.float32).reshape(6, 10))
    ref = np.arange(60, dtype=np.float32).reshape(6, 10)
    for key in [(slice(1, 4), slice(2, 9, 3)), (3,), (slice(None), 7), (slice(None, None, -1), slice(None, None, 2))]:
        assert np.array_equal(np.asarray(x[key]), ref[key])
    y = x[2:]
    y2 = np.asarray(y)
    x2 = np.asarray(x)
    assert y2.ctypes.data == x2.ctypes.data + 2 * 10 * 4


def test_asarray_of_read_only_array_is_read_only(dev):
    x = pm.asarray(np.arange(5, dtype=np.float32))
    x.flags.writeable = False
    assert not np.asarray(x).flags.writeable


def test_asarray_after_queued_work_waits_for_it(dev, monkeypatch):
    monkeypatch.setattr(_small, "LIMIT", 0)  # the host path off: kernels, queued
    x = pm.asarray(np.ones(100_000, np.float32))
    y = x
    for _ in range(10):
        y = y + x
    assert np.array_equal(np.asarray(y), np.full(100_000, 11, np.float32))


def test_bfloat16_reads_take_the_general_view(dev):
    x = pm.asarray(np.arange(4, dtype=np.float32)).astype(pm.bfloat16)
    assert float(x[3]) == 3.0
    assert np.asarray(x).view(np.uint16).tolist() == [0, 0x3F80, 0x4000, 0x4040]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.float16])
def test_scalar_reads_of_fresh_and_offset_arrays(dev, dt):
    data = _data(dt, 33, 5)
    x = pm.asarray(data)
    for i in (0, 1, 32):
        assert float(x[i]) == float(data[i]) and int(x[i]) == int(data[i]) and bool(x[i]) == bool(data[i])
        assert x[i].item() == data[i].item()
    s = pm.sum(x)
    assert float(s) == float(np.asarray(pm.sum(x, axis=0)))
    with pytest.raises(TypeError, match="size-1"):
        float(x)

# Failed work's errors through every read (np.asarray, float, ...): runtime/test_async_coherence.py::_reads.
