"""pm.Array through pickle (protocols 2-5, out-of-band buffers), copy/deepcopy and
process pools (spawn, fork, ProcessPoolExecutor)."""

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pymetal as pm

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float16, np.float32, np.complex64]


def _views():
    base = np.arange(60).reshape(5, 12)
    x = pm.asarray(base.astype(np.float32))
    return {
        "0-d": pm.asarray(np.float32(2.5)),
        "empty": pm.zeros((0, 3)),
        "size 1": pm.asarray([7]),
        "odd": pm.arange(13),
        "strided": x[:, ::3],
        "transposed": x.T,
        "offset": x[2:, 5:],
        "negative stride": pm.arange(9)[::-2],
        "broadcast": pm.broadcast_to(pm.asarray([1.0, 2.0]), (3, 2)),
    }


def _same(a, b):
    assert type(b) is pm.Array
    assert b.shape == a.shape and b.dtype == a.dtype
    np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickle_dtypes(dtype, protocol):
    a = pm.asarray((np.arange(11) % 3).astype(dtype))
    _same(a, pickle.loads(pickle.dumps(a, protocol=protocol)))


@pytest.mark.parametrize("name", list(_views()))
@pytest.mark.parametrize("protocol", [2, 5])
def test_pickle_views(name, protocol):
    a = _views()[name]
    b = pickle.loads(pickle.dumps(a, protocol=protocol))
    _same(a, b)
    assert b.flags.c_contiguous and b.flags.writeable  # a new array, as NumPy's unpickle gives
    assert b.size == 0 or not np.shares_memory(b.numpy(), a.numpy())  # independent of the original


@pytest.mark.parametrize("name", list(_views()))
def test_copy_deepcopy(name):
    a = _views()[name]
    for b in (copy.copy(a), copy.deepcopy(a), copy.deepcopy([a, {"k": a}])[1]["k"]):
        _same(a, b)
        assert b.size == 0 or not np.shares_memory(b.numpy(), a.numpy())


def test_out_of_band_buffers_without_copy():
    a = pm.arange(4096, dtype=pm.float32)
    buffers = []
    data = pickle.dumps(a, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 400  # the elements travel out of band
    # the sender's buffer is the array's own memory (no copy made to pickle it)
    assert np.shares_memory(np.asarray(buffers[0].raw()).view(np.float32), a.numpy())
    # A receiver whose memory is page-aligned and writeable gets an array over it (no copy).
    page = pm.device().page_size
    raw = np.zeros(a.nbytes + page, np.uint8)
    start = (-raw.ctypes.data) % page
    aligned = raw[start:start + a.nbytes]
    aligned[:] = np.asarray(buffers[0].raw())
    b = pickle.loads(data, buffers=[aligned])
    _same(a, b)
    assert np.shares_memory(b.numpy(), aligned)
    # An unaligned or read-only one is copied into pymetal memory.
    c = pickle.loads(data, buffers=[bytes(aligned)])
    _same(a, c)


def test_buffer_refuses_pickle_and_a_failed_pickle_prints_nothing():
    # Before: pickling failed with "ctypes objects containing pointers cannot be pickled" and
    # the half-made Buffer then printed an AttributeError from Buffer.__del__.
    code = textwrap.dedent("""
        import pickle, gc, pymetal as pm
        a = pm.arange(3)
        try:
            pickle.dumps(a._buf)
        except TypeError as e:
            print("ok:", e)
        gc.collect()
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=_root())
    assert r.returncode == 0, r.stderr
    assert "ok: a pymetal Buffer cannot be pickled" in r.stdout
    assert r.stderr == ""


def _root():
    return os.path.dirname(os.path.dirname(pm.__file__))


POOL = textwrap.dedent("""
    import sys, multiprocessing as mp, concurrent.futures as cf
    import numpy as np, pymetal as pm

    def work(x):  # a worker's task: pymetal arrays in, a pymetal array computed in the worker out
        return x * 2 + 1

    if __name__ == "__main__":
        ctx = mp.get_context(sys.argv[1])
        xs = [pm.arange(n, dtype=pm.float32) for n in (0, 1, 5, 1000)]
        with ctx.Pool(2) as pool:
            got = pool.map(work, xs)
        with cf.ProcessPoolExecutor(2, mp_context=ctx) as ex:
            got2 = list(ex.map(work, xs))
        for x, g, g2 in zip(xs, got, got2):
            assert type(g) is pm.Array and type(g2) is pm.Array
            np.testing.assert_array_equal(g.numpy(), x.numpy() * 2 + 1)
            np.testing.assert_array_equal(g2.numpy(), x.numpy() * 2 + 1)
        print("pool ok", (pm.arange(3) + 1).tolist())  # the parent still computes
""")


def _pool(tmp_path, method, timeout):
    script = tmp_path / "pool.py"
    script.write_text(POOL)
    env = dict(os.environ, PYTHONPATH=_root())  # the children import this pymetal
    return subprocess.run([sys.executable, str(script), method], capture_output=True, text=True,
                          timeout=timeout, cwd=str(tmp_path), env=env)


def test_process_pools_spawn(tmp_path):
    r = _pool(tmp_path, "spawn", 120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "pool ok [1, 2, 3]" in r.stdout


def test_process_pools_fork(tmp_path):
    # After fork the child must either compute or raise a clear pymetal error: never hang
    # (the timeout) and never corrupt the parent (it computes afterwards).
    try:
        r = _pool(tmp_path, "fork", 90)
    except subprocess.TimeoutExpired:
        pytest.fail("a fork-started pool hung (the engine is not fork-safe on this branch; "
                    "to be validated after the merge of the fork-safety work)")
    if r.returncode != 0:
        assert "pymetal" in r.stderr and ("fork" in r.stderr.lower()), r.stderr[-3000:]
    else:
        assert "pool ok [1, 2, 3]" in r.stdout
