"""Fixtures of the MSL tests: `mode` runs a test once per way the CPU backend runs a kernel
(lockstep, fibers); `both_ways` runs a kernel both ways and compares (msl_kernels.py)."""

import pytest

import msl_kernels


@pytest.fixture(params=msl_kernels.MODES)
def mode(request):
    return request.param


@pytest.fixture
def both_ways():
    return msl_kernels.run_both_ways
