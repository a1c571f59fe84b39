"""nn.parallel on one device: DataParallel wraps a module as PyTorch's does (``module.`` state_dict
keys, same outputs and gradients) and says once that it does not split batches;
DistributedDataParallel cannot be built without process groups."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close


def test_data_parallel_is_the_module_on_one_device(device):
    torch = pytest.importorskip("torch")
    inner = nn.Linear(3, 2).to(device)
    wrapped = nn.DataParallel(inner)
    reference = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(wrapped.state_dict()) == list(reference.state_dict()) == ["module.weight", "module.bias"]
    x = gputorch.tensor(np.random.randn(4, 3), dtype=gputorch.float32, device=device)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        out = wrapped(x)
    assert_close(out, inner(x), 0, 0)
    out.sum().backward()
    assert_close(inner.weight.grad, x.sum(0).reshape(1, 3).expand(2, 3), 1e-6, 1e-6)
    assert_close(nn.parallel.data_parallel(inner, x), inner(x), 0, 0)


def test_distributed_data_parallel_needs_process_groups():
    with pytest.raises(RuntimeError, match="process groups"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))


def test_distributed_is_unavailable_and_says_so():
    assert gputorch.distributed.is_available() is False
    assert gputorch.distributed.is_initialized() is False
    with pytest.raises(RuntimeError, match="not available"):
        gputorch.distributed.init_process_group("gloo")
