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
