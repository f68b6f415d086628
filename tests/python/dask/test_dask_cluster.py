"""pymetal chunks on dask.distributed: a LocalCluster of 2 worker processes (shared by the
module's tests: starting one costs seconds) and a scheduler plus workers started with the
`dask scheduler` / `dask worker` command-line tools, all on 127.0.0.1 and torn down."""

import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402
import dask.array as da  # noqa: E402

import pymetal as pm  # noqa: E402
import pymetal.dask  # noqa: E402,F401

ROOT = os.path.dirname(os.path.dirname(pm.__file__))


@pytest.fixture(scope="module")
def client():
    # Worker processes import this worktree's pymetal (spawned children inherit the environment).
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + ([old] if old else []))
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None,
                                      worker_dashboard_address=None) as cluster, \
                distributed.Client(cluster, timeout=60) as c:
            yield c
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def _workers_ran_pymetal(c):
    return c.run(lambda: "pymetal.dask" in sys.modules)


def test_reductions_on_two_workers(client):
    n = np.random.default_rng(0).standard_normal((4000, 50)).astype(np.float32)
    x = da.from_array(pm.asarray(n), chunks=(500, 50))
    mean, std = dask.compute(x.mean(axis=0), x.std(axis=0))
    assert type(mean) is pm.Array and type(std) is pm.Array
    np.testing.assert_allclose(mean.numpy(), n.mean(0), atol=1e-5)
    np.testing.assert_allclose(std.numpy(), n.std(0), rtol=1e-4)
    # Both workers held pymetal chunks (and registered pymetal's Dask integration on their own).
    assert all(_workers_ran_pymetal(client).values())
    # ... and size pymetal chunks by their bytes (memory limits and spilling see them)
    assert set(client.run(_sizeof_on_worker).values()) == {4000}


def _sizeof_on_worker():
    from dask.sizeof import sizeof
    return sizeof(pm.zeros(1000, pm.float32))


def test_random_backend_on_cluster_is_reproducible(client):
    with dask.config.set({"array.backend": "pymetal"}):
        x = da.random.default_rng(7).standard_normal((20000, 8), chunks=(2500, 8), dtype=np.float32)
    a = x.sum(axis=0).compute()
    b = x.sum(axis=0).compute()
    assert type(a) is pm.Array
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # and the same numbers as computing in this process
    local = x.sum(axis=0).compute(scheduler="sync")
    np.testing.assert_allclose(a.numpy(), local.numpy(), rtol=1e-5, atol=1e-3)


def test_futures_scatter_gather(client):
    x = pm.arange(1000, dtype=pm.float32)
    fut = client.scatter(x)
    y = client.submit(lambda a: a * 2, fut).result(timeout=60)
    assert type(y) is pm.Array
    np.testing.assert_array_equal(y.numpy(), np.arange(1000, dtype=np.float32) * 2)


def test_worker_error_reaches_client(client):
    def bad(a):
        return pm.asarray(a.numpy().astype(object))  # pymetal refuses object arrays on the worker

    fut = client.submit(bad, pm.arange(3, dtype=pm.float32))
    with pytest.raises(TypeError, match="object"):
        fut.result(timeout=60)


def test_matmul_persist_and_from_array_on_two_workers(client):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((300, 70)).astype(np.float32), rng.standard_normal((70, 90)).astype(np.float32)
    x = da.from_array(pm.asarray(a), chunks=(100, 35))
    y = da.from_array(pm.asarray(b), chunks=(35, 45))
    z = (x @ y).persist()  # the chunks stay on the workers, as pymetal arrays
    distributed.wait(z)
    assert set(client.run(_pymetal_arrays_held).values()) != {0}
    r = z.compute()
    assert type(r) is pm.Array and r.dtype == np.float32
    np.testing.assert_allclose(r.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((z.T @ z).sum(axis=1).compute().numpy(), ((a @ b).T @ (a @ b)).sum(1), rtol=1e-3)
    # a dask array made from a pymetal array the workers were sent (scatter), and its dtype kept
    fut = client.scatter(pm.asarray(np.arange(24, dtype=np.int16).reshape(4, 6)))
    d = da.from_delayed(fut, shape=(4, 6), dtype=np.int16, meta=pm.empty((0, 0), pm.int16))
    s = d.sum(axis=0, dtype=np.int32).compute()
    assert type(s) is pm.Array and s.dtype == np.int32
    np.testing.assert_array_equal(s.numpy(), np.arange(24).reshape(4, 6).sum(0))


def _pymetal_arrays_held(dask_worker):
    return sum(type(v) is pm.Array for v in dask_worker.data.values())


KERNEL = """
#include <metal_stdlib>
using namespace metal;
kernel void axpb(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) { y[i] = a * x[i] + B; }
"""


def test_map_blocks_with_a_custom_kernel_on_two_workers(client):
    # The kernel travels in the graph (pm.Function pickles its library's source and defines) and
    # each worker compiles it once and runs it on its chunks (the client runs no task).
    axpb = pm.compile(KERNEL, defines={"B": "1.0f"}).axpb

    def block(c, a):
        out = pm.empty(c.shape, pm.float32)
        if c.size:
            axpb(pm.ascontiguousarray(c), out, a, grid=c.size)
        return out

    n = np.arange(0, 1003, dtype=np.float32) / 7
    x = da.from_array(pm.asarray(n), chunks=250)
    y = x.map_blocks(block, 2.0, dtype=np.float32, meta=pm.empty((0,), pm.float32))
    r = y.compute()
    assert type(r) is pm.Array
    np.testing.assert_allclose(r.numpy(), 2.0 * n + 1.0, rtol=1e-6)
    assert float(y.sum().compute()) == pytest.approx(float((2.0 * n + 1.0).sum()), rel=1e-5)


def test_to_zarr_and_back_on_two_workers(client, tmp_path):
    pytest.importorskip("zarr")
    n = np.arange(60, dtype=np.float32).reshape(6, 10)
    da.from_array(pm.asarray(n), chunks=(3, 5)).to_zarr(str(tmp_path / "z.zarr"))
    back = da.from_zarr(str(tmp_path / "z.zarr")).map_blocks(pm.asarray, meta=pm.empty((0, 0), pm.float32))
    r = back.compute()
    assert type(r) is pm.Array
    np.testing.assert_array_equal(r.numpy(), n)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_command_line_scheduler_and_workers(tmp_path):
    dask_cli = shutil.which("dask", path=os.path.dirname(sys.executable))
    assert dask_cli, "the dask command-line tool is installed with distributed"
    port = _free_port()
    address = "tcp://127.0.0.1:%d" % port
    env = dict(os.environ, PYTHONPATH=ROOT)
    procs = []
    try:
        procs.append(subprocess.Popen([dask_cli, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--no-dashboard"], env=env, cwd=str(tmp_path),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(2):
            procs.append(subprocess.Popen([dask_cli, "worker", address, "--nthreads", "1",
                                           "--resources", "GPU=1", "--no-dashboard", "--host", "127.0.0.1"],
                                          env=env, cwd=str(tmp_path),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=90)
            n = np.arange(30000, dtype=np.float32).reshape(3000, 10)
            x = da.from_array(pm.asarray(n), chunks=(500, 10))
            with dask.annotate(resources={"GPU": 1}):
                y = (x * 2).sum(axis=0)
            r = y.compute()
            assert type(r) is pm.Array
            np.testing.assert_allclose(r.numpy(), (n * 2).sum(0), rtol=1e-5)
    finally:
        for p in reversed(procs):
            p.terminate()
        deadline = time.monotonic() + 30
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
