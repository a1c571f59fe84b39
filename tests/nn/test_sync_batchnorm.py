"""SyncBatchNorm in one process: without a process group it is BatchNorm, and
``convert_sync_batchnorm`` swaps every batch-norm layer keeping its parameters and statistics.
(Across processes: tests/distributed/workers/data_parallel.py.)"""
import numpy as np

import gputorch
from gputorch import nn
from tests._helpers import assert_close


def test_without_a_process_group_it_is_batch_norm(device):
    gputorch.manual_seed(0)
    bn = nn.BatchNorm1d(3).to(device)
    sync = nn.SyncBatchNorm(3).to(device)
    x = gputorch.tensor(np.random.default_rng(0).standard_normal((6, 3, 4)), dtype=gputorch.float32, device=device)
    assert_close(sync(x), bn(x), 1e-6, 1e-6)
    assert_close(sync.running_mean, bn.running_mean, 1e-6, 1e-6)
    assert_close(sync.running_var, bn.running_var, 1e-6, 1e-6)


def test_convert_keeps_parameters_and_statistics(device):
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm2d(4))).to(device)
    with gputorch.no_grad():
        model[1].weight.fill_(2.0)
        model[1].running_mean.fill_(0.5)
    weight = model[1].weight
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm and type(converted[2][0]) is nn.SyncBatchNorm
    assert type(converted[0]) is nn.Conv2d
    assert converted[1].weight is weight
    assert float(converted[1].running_mean[0]) == 0.5
    assert list(converted.state_dict()) == list(model.state_dict())
