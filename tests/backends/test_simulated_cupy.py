"""The simulated CuPy used for CUDA tests without a GPU: device tagging and checks."""
import numpy as np
import pytest

from gputorch.backends import simulated_cupy as scp


@pytest.fixture
def two_devices(monkeypatch):
    monkeypatch.setenv("GPUTORCH_SIMULATE_CUDA", "2")
    scp.cuda.runtime.setDevice(0)
    yield
    scp.cuda.runtime.setDevice(0)


def test_arrays_live_on_the_current_device(two_devices):
    a = scp.ones(3)
    assert isinstance(a, scp.ndarray) and a.device.id == 0
    with scp.cuda.Device(1):
        b = scp.arange(3.0)
        c = b * 2 + scp.exp(b)
        assert b.device.id == 1 and c.device.id == 1
        assert scp.cuda.runtime.getDevice() == 1
    assert scp.cuda.runtime.getDevice() == 0
    np.testing.assert_allclose(scp.asnumpy(c), np.arange(3.0) * 2 + np.exp(np.arange(3.0)))
    assert type(scp.asnumpy(c)) is np.ndarray


def test_ops_on_another_device_raise(two_devices):
    with scp.cuda.Device(1):
        b = scp.ones(2)
    with pytest.raises(ValueError, match="current device"):
        b + 1
    with pytest.raises(ValueError, match="current device"):
        scp.sum(b)


def test_views_and_methods_keep_the_device(two_devices):
    with scp.cuda.Device(1):
        b = scp.ones((2, 3))
        assert b.T.device.id == 1 and b.reshape(6).device.id == 1 and b.astype("float32").device.id == 1
        assert scp.asarray(b) is b
    moved = scp.asarray(b)  # copy onto device 0
    assert moved.device.id == 0


def test_invalid_device(two_devices):
    with pytest.raises(RuntimeError, match="invalid device"):
        scp.cuda.runtime.setDevice(2)
