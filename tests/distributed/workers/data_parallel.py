"""DistributedDataParallel equals single-process training on the concatenated batch (float64).

Every rank also trains the reference model on the whole batch itself; the DDP replica sees only
its rank's rows. Models: an MLP, a CNN with batch norm (SyncBatchNorm), an LSTM regressor.
``argv[1]``: the backend ("mpi" by default, or "nccl").
"""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import passed, setup  # noqa: E402

import gputorch as torch  # noqa: E402
import gputorch.distributed as dist  # noqa: E402
from gputorch import nn  # noqa: E402
from gputorch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from gputorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

rank, n, dev = setup(sys.argv[1] if len(sys.argv) > 1 else "mpi")
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(1234)


class LSTMRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True)
        self.head = nn.Linear(5, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2)),
            (6,)),
    "cnn_bn": (lambda: nn.Sequential(nn.Conv1d(2, 4, 3), nn.BatchNorm1d(4), nn.ReLU(), nn.Flatten(),
                                     nn.Linear(4 * 6, 2)), (2, 8)),
    "lstm": (LSTMRegressor, (4, 3)),
}


def fresh(name):
    torch.manual_seed(7)
    return MODELS[name][0]().to(dev)


def batches(name, steps, per_rank):
    shape = MODELS[name][1]
    return [(rng.standard_normal((per_rank * n,) + shape), rng.standard_normal((per_rank * n, 2)))
            for _ in range(steps)]


def max_diff(a, b):
    return max(float((x - y).abs().max()) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def train_both(name, steps=4, per_rank=3, bucket_cap_mb=None, hook=None, **ddp_kwargs):
    reference = fresh(name)
    replica = fresh(name)
    if name == "cnn_bn":
        replica = nn.SyncBatchNorm.convert_sync_batchnorm(replica)
    if rank != 0:                                    # DDP must start every replica from rank 0's values
        with torch.no_grad():
            for p in replica.parameters():
                p.mul_(-2.0)
    model = DDP(replica, bucket_cap_mb=bucket_cap_mb, **ddp_kwargs)
    if hook is not None:
        model.register_comm_hook(None, hook)
    opt_ref = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in batches(name, steps, per_rank):
        x, y = torch.tensor(x, device=dev), torch.tensor(y, device=dev)
        opt_ref.zero_grad()
        nn.functional.mse_loss(reference(x), y).backward()
        opt_ref.step()
        mine = slice(rank * per_rank, (rank + 1) * per_rank)
        opt.zero_grad()
        nn.functional.mse_loss(model(x[mine]), y[mine]).backward()
        opt.step()
    return reference, model


for name in MODELS:
    for cap in (None, 0.0005):                        # one big bucket; many small ones
        ref, model = train_both(name, bucket_cap_mb=cap)
        diff = max_diff(ref, model.module)
        assert diff < 1e-9, (name, cap, diff)
    assert list(model.state_dict())[0].startswith("module."), list(model.state_dict())

ref, model = train_both("mlp", gradient_as_bucket_view=True, bucket_cap_mb=0.0005)
assert max_diff(ref, model.module) < 1e-9
ref, model = train_both("mlp", steps=2, hook=default_hooks.fp16_compress_hook)
assert 0 < max_diff(ref, model.module) < 2e-3, max_diff(ref, model.module)   # float16 on the wire

# no_sync: two local micro-batches accumulate, then one synced backward equals the whole batch.
reference, replica = fresh("mlp"), fresh("mlp")
model = DDP(replica, bucket_cap_mb=0.0005)
x, y = (torch.tensor(a, device=dev) for a in batches("mlp", 1, 4)[0])
nn.functional.mse_loss(reference(x), y).backward()
first, second = slice(rank * 4, rank * 4 + 2), slice(rank * 4 + 2, rank * 4 + 4)
with model.no_sync():
    (nn.functional.mse_loss(model(x[first]), y[first]) / 2).backward()
    local = [p.grad.clone() for p in replica.parameters()]
(nn.functional.mse_loss(model(x[second]), y[second]) / 2).backward()
for p, q in zip(reference.parameters(), replica.parameters()):
    assert float((p.grad - q.grad).abs().max()) < 1e-12
others = [None] * n
dist.all_gather_object(others, float(local[0].sum()))
assert len(set(others)) == n                       # inside no_sync the gradients were not averaged


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(3, 2)
        self.spare = nn.Linear(3, 2)

    def forward(self, x, use_spare=False):
        return self.spare(x) if use_spare else self.used(x)


model = DDP(TwoHeads().to(dev))
try:
    model(torch.ones(2, 3, device=dev)).sum().backward()
except RuntimeError as e:
    assert "spare.weight, spare.bias" in str(e) and "find_unused_parameters=True" in str(e), e
else:
    raise AssertionError("a parameter without gradient did not raise")

net = TwoHeads().to(dev)
model = DDP(net, find_unused_parameters=True)
model(torch.ones(2, 3, device=dev), use_spare=rank == 1).sum().backward()
# used on rank 0 only / spare on rank 1 only: each gets its gradient averaged over ranks (zero elsewhere)
np.testing.assert_allclose(net.used.weight.grad.cpu().numpy(), np.full((2, 3), 2.0 / n))
np.testing.assert_allclose(net.spare.weight.grad.cpu().numpy(), np.full((2, 3), 2.0 * (n > 1) / n))
net2 = TwoHeads().to(dev)
model = DDP(net2, find_unused_parameters=True)
model(torch.ones(2, 3, device=dev)).sum().backward()
assert net2.spare.weight.grad is None             # unused on every rank: no gradient at all

# device_ids=[i] (one device per process): inputs are moved to that device, as in PyTorch.
if dev.type == "cuda":
    model = DDP(nn.Linear(3, 2).to(dev), device_ids=[dev.index])
    out = model(torch.ones(4, 3))                          # a CPU batch
    assert out.device == dev, out.device
    out.sum().backward()

# DistributedSampler reads rank and world size from the group.
sampler = torch.utils.data.DistributedSampler(list(range(10)), shuffle=False)
assert list(sampler) == list(range(10))[rank::n]
passed(rank)
