"""Shared test fixtures: every device test runs on each available device."""
import numpy as np
import pytest

import gputorch


def available_devices():
    devices = ["cpu"]
    if gputorch.cuda.is_available():
        devices.append("cuda")
    return devices


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """The device under test; CUDA cases skip where no (real or simulated) GPU is present."""
    if request.param == "cuda" and not gputorch.cuda.is_available():
        pytest.skip("CUDA is not available")
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    yield
