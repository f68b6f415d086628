"""Many Python threads running kernels at once."""

import threading

import numpy as np

import pymetal as pm

THREADS = 8


def _run_threads(target):
    errors = []
    barrier = threading.Barrier(THREADS)

    def wrapper(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as e:  # reported in the main thread
            errors.append((k, e))

    threads = [threading.Thread(target=wrapper, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise AssertionError("thread failures: %r" % errors) from errors[0][1]


def test_threads_numpy_sync_calls(basic_lib):
    add, scale = basic_lib.add, basic_lib.scale

    def work(k):
        rng = np.random.default_rng(k)
        for it in range(40):
            n = int(rng.integers(1, 20000))
            a = rng.standard_normal(n).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32)
            out = np.empty(n, np.float32)
            add(a, b, out, grid=n)
            np.testing.assert_array_equal(out, a + b)
            scale(out, float(k + 1), grid=n)
            np.testing.assert_allclose(out, (a + b) * np.float32(k + 1), rtol=1e-6)

    _run_threads(work)


def test_threads_pymetal_async_calls(basic_lib):
    add, scale = basic_lib.add, basic_lib.scale

    def work(k):
        rng = np.random.default_rng(100 + k)
        n = 50000 + 1000 * k
        a = rng.standard_normal(n).astype(np.float32)
        x = pm.asarray(a)
        y = pm.zeros(n, np.float32)
        for it in range(20):
            add(y, x, y, grid=n)  # y += x
        scale(y, 0.5, grid=n)
        np.testing.assert_allclose(y.numpy(), a * 10, rtol=1e-5, atol=1e-5)

    _run_threads(work)


def test_threads_share_one_function_and_arrays(basic_lib):
    n = 1 << 16
    src = pm.asarray(np.arange(n, dtype=np.float32))
    outs = [pm.zeros(n, np.float32) for _ in range(THREADS)]
    add = basic_lib.add

    def work(k):
        for _ in range(25):
            add(src, src, outs[k], grid=n, threadgroup=64 if k % 2 else None)
            assert outs[k].numpy()[n - 1] == 2 * (n - 1)

    _run_threads(work)
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), 2 * np.arange(n, dtype=np.float32))


def test_threads_allocate_and_release(dev, basic_lib):
    def work(k):
        for i in range(200):
            x = pm.full(1000 + i, float(k))
            basic_lib.scale(x, 2.0, grid=x.size)
            assert x.numpy()[-1] == 2.0 * k
            del x

    _run_threads(work)
