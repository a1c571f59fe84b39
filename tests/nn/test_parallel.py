"""nn.parallel on one device: DataParallel wraps a module as PyTorch's does (``module.`` state_dict
keys, same outputs and gradients) and says once that it does not split batches;
DistributedDataParallel needs a process group, and equals single-process training under MPI."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close
from tests.distributed._launch import assert_all_passed, backends, run_workers


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


def test_distributed_data_parallel_needs_a_process_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))


@pytest.mark.parametrize("backend", backends())
def test_distributed_data_parallel_equals_single_process_training(backend):
    """MLP, CNN with SyncBatchNorm and LSTM on 2 processes, several buckets, no_sync, fp16 compression,
    unused parameters: see tests/distributed/workers/data_parallel.py."""
    assert_all_passed(run_workers("data_parallel.py", backend, timeout=300))


def test_buckets_fill_in_reverse_registration_order():
    from gputorch.nn.parallel._reducer import assign_buckets
    params = [gputorch.zeros(n) for n in (100, 300, 200, 50)]          # float32: 4 bytes each
    assert assign_buckets(params, cap_bytes=1000, first_cap_bytes=600) == [[3, 2], [1], [0]]
    assert assign_buckets(params, cap_bytes=10 ** 6) == [[3, 2, 1, 0]]
    mixed = [gputorch.zeros(4), gputorch.zeros(4, dtype=gputorch.float64), gputorch.zeros(4)]
    assert assign_buckets(mixed, cap_bytes=10 ** 6) == [[2], [1], [0]]   # one dtype per bucket
