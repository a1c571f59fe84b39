"""MemoryProfiler: exact bytes per category, phases, steps, modules, peak, checkpointing."""
import pytest

import gputorch
import gputorch.nn as nn
import gputorch.nn.functional as F
from gputorch import _tensor
from gputorch.autograd import engine, node
from gputorch.autograd.graph import saved_tensors_hooks
from gputorch.profiler import CATEGORIES, PHASES, MemoryProfiler
from gputorch.utils.checkpoint import checkpoint
from tests.profiler._workloads import (batch, graph_saved_bytes, mlp, param_bytes, storage_bytes, storage_key,
                                       torch_adam_state_bytes)

SIZES = (32, 64, 48, 10)


def _adam_state_closed_form(model):
    """exp_avg + exp_avg_sq per parameter, plus a 0-d float32 step counter (4 B) per parameter."""
    return 2 * param_bytes(model) + 4 * len(list(model.parameters()))


# ---------------------------------------------------------------- exact numbers
def test_mlp_adam_exact_bytes(device):
    model = mlp(device, SIZES)
    opt = gputorch.optim.Adam(model.parameters(), lr=1e-3)
    pbytes = param_bytes(model)
    assert pbytes == sum(p.numel() * 4 for p in model.parameters())
    params = {storage_key(p) for p in model.parameters()}
    with MemoryProfiler(model=model, optimizer=opt) as prof:
        for step in range(2):
            x, y = batch(device)
            loss = F.cross_entropy(model(x), y)
            now = prof.current()
            assert now["parameters"] == pbytes
            assert now["gradients"] == 0
            assert now["activations"] == graph_saved_bytes(loss.grad_fn, exclude=params) > 0
            loss.backward()
            now = prof.current()
            assert now["gradients"] == pbytes
            assert now["activations"] == 0
            opt.step()
            now = prof.current()
            assert now["optimizer_state"] == _adam_state_closed_form(model)
            assert now["parameters"] == pbytes
            opt.zero_grad()
            assert prof.current()["gradients"] == 0
    report = prof.report()
    assert report.steps == 2
    assert report.current["parameters"] == pbytes
    assert report.current["optimizer_state"] == _adam_state_closed_form(model)
    assert report.peak["parameters"] == pbytes
    assert report.peak["optimizer_state"] == _adam_state_closed_form(model)   # with Adam's state: step 1
    assert report.peak_step == 1 and report.peak_phase == "backward"
    assert report.category_peaks["gradients"] == pbytes


def test_adam_state_is_pytorch_size():
    pytest.importorskip("torch")
    model = mlp("cpu", SIZES)
    opt = gputorch.optim.Adam(model.parameters())
    with MemoryProfiler(model=model, optimizer=opt) as prof:
        x, y = batch("cpu")
        F.cross_entropy(model(x), y).backward()
        opt.step()
    assert prof.report().current["optimizer_state"] == torch_adam_state_bytes(SIZES)


def test_device_filter_excludes_cpu_step_counters(device):
    if device == "cpu":
        pytest.skip("the step counters live on the CPU: only a CUDA run can leave them out")
    model = mlp(device, SIZES)
    opt = gputorch.optim.Adam(model.parameters())
    with MemoryProfiler(model=model, optimizer=opt, device="cuda") as prof:
        x, y = batch(device)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    report = prof.report()
    assert report.current["optimizer_state"] == 2 * param_bytes(model)
    assert set(report.current_by_device) == {"cuda:0"}


def test_activations_equal_saved_tensors_hooks_count(device):
    """An independent count: the storages a pack hook sees, without the profiler."""
    model = mlp(device, SIZES)
    params = {storage_key(p) for p in model.parameters()}
    x, y = batch(device)
    packed = {}

    def pack(t):
        packed[storage_key(t)] = t
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        F.cross_entropy(model(x), y)
    expected = sum(t._data.base.nbytes if t._data.base is not None else t._data.nbytes
                   for k, t in packed.items() if k not in params)
    with MemoryProfiler(model=model) as prof:
        loss = F.cross_entropy(model(x), y)
        assert prof.current()["activations"] == expected
        del loss
    assert prof.report().current["activations"] == 0


def test_parameter_saved_for_backward_stays_a_parameter(device):
    lin = nn.Linear(8, 4).to(device)
    x = gputorch.randn(3, 8, device=device)
    with MemoryProfiler(model=lin) as prof:
        out = lin(x)            # saves x and the weight
        now = prof.current()
    assert now["parameters"] == param_bytes(lin)
    assert now["activations"] == storage_bytes(x)
    assert out.grad_fn is not None


def test_views_counted_once(device):
    with MemoryProfiler(scan_existing=False) as prof:
        a = gputorch.zeros(64, device=device)
        views = [a.view(8, 8), a[3:10], a.reshape(4, 16).t(), a.detach()]
        assert sum(prof.current().values()) == 64 * 4
    assert len(views) == 4


def test_activation_kept_by_user_becomes_other_after_backward(device):
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh()).to(device)
    with MemoryProfiler(model=model, scan_existing=False) as prof:
        x = gputorch.randn(4, 8, device=device)
        y = model(x)                      # tanh saves its result: y is an activation
        assert prof.current()["activations"] >= y.numel() * 4
        y.sum().backward()
        now = prof.current()
    assert now["activations"] == 0
    assert now["other"] >= storage_bytes(y) + storage_bytes(x)    # alive, no longer held by a graph


def test_temporaries_die_inside_their_module(device):
    class Scale(nn.Module):
        def forward(self, x):
            t = x * 2.0                   # made and freed inside this call
            return t.sum(1)

    with MemoryProfiler(scan_existing=False) as prof:
        x = gputorch.randn(6, 5, device=device)
        with gputorch.no_grad():
            out = Scale()(x)
    report = prof.report()
    assert report.category_peaks["temporaries"] == x.numel() * 4
    assert report.current["temporaries"] == 0
    assert report.current["other"] == storage_bytes(x) + storage_bytes(out)


def test_backward_outputs_are_not_temporaries(device):
    with MemoryProfiler(scan_existing=False) as prof:
        x = gputorch.randn(5, 3, device=device, requires_grad=True)
        (g,) = gputorch.autograd.grad((x * x).sum(), x)
    report = prof.report()
    assert report.current["temporaries"] == 0
    assert report.current["other"] == storage_bytes(x) + storage_bytes(g)
    assert g.shape == x.shape


# ---------------------------------------------------------------- report structure
def test_report_structure_and_consistency(device):
    model = mlp(device, SIZES)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with MemoryProfiler(model=model, optimizer=opt) as prof:
        for _ in range(3):
            x, y = batch(device)
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    r = prof.report()
    assert r.steps == 3
    assert set(r.peak) == set(CATEGORIES) and sum(r.peak.values()) == r.peak_bytes
    assert r.peak_phase in PHASES
    totals = [sum(s[c] for c in CATEGORIES) for s in r.timeline]
    assert max(totals) == r.peak_bytes
    assert all(set(s) == {"t", "step", "phase", *CATEGORIES} for s in r.timeline)
    assert [s["t"] for s in r.timeline] == sorted(s["t"] for s in r.timeline)
    assert {s["phase"] for s in r.timeline} >= {"forward", "backward", "optimizer"}
    assert sorted({s["step"] for s in r.timeline}) == [0, 1, 2, 3]
    for c in CATEGORIES:
        assert sum(m[c] for m in r.by_module.values()) == r.peak[c]
        assert sum(d[c] for d in r.by_device.values()) == r.peak[c]
        assert r.category_peaks[c] >= r.peak[c]
    # parameters, gradients and momentum buffers belong to their Linear
    lin0 = model[0]
    assert r.by_module["0"]["parameters"] == param_bytes(lin0)
    assert r.current["optimizer_state"] == param_bytes(model)     # SGD keeps one buffer per parameter
    assert r.largest[0]["bytes"] == max(d["bytes"] for d in r.largest)
    assert any(d["name"] in ("0.weight", "2.weight") and d["category"] == "parameters" for d in r.largest)
    text = str(r)
    for word in ("Peak", *CATEGORIES, "Leak check: nothing found"):
        assert word in text


def test_module_paths_nested_and_loss_module(device):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            return self.head(self.encoder(x))

    net = Net().to(device)
    loss_fn = nn.CrossEntropyLoss()
    x, y = gputorch.randn(4, 8, device=device), gputorch.tensor([0, 1, 2, 0], device=device)
    with MemoryProfiler() as prof:          # no model given: the first module called is the model
        loss = loss_fn(net(x), y)
        loss.backward()
    r = prof.report()
    assert {"encoder.0", "head"} <= set(r.by_module)
    assert r.by_module["encoder.0"]["parameters"] == param_bytes(net.encoder[0])
    assert r.current_by_module["head"]["gradients"] == param_bytes(net.head)
    assert r.current_by_module["encoder.0"]["parameters"] == param_bytes(net.encoder[0])
    inclusive, own = r.module_totals(inclusive=True), r.module_totals()
    assert inclusive[""] == sum(b for p, b in own.items() if not p.startswith("<")) >= param_bytes(net)
    assert inclusive["encoder"] == own.get("encoder", 0) + own.get("encoder.0", 0) + own.get("encoder.1", 0)
    saved_by_loss = [d for d in r.largest if d["module"] == "<CrossEntropyLoss>"]
    assert all(d["category"] in CATEGORIES for d in saved_by_loss)


def test_hooks_removed_and_nothing_left_running(device):
    before = (list(_tensor.CREATION_HOOKS), list(node.SAVE_HOOKS), list(engine.RUN_HOOKS))
    model = mlp(device, SIZES)
    with MemoryProfiler(model=model):
        F.cross_entropy(model(batch(device)[0]), batch(device)[1]).backward()
    assert (list(_tensor.CREATION_HOOKS), list(node.SAVE_HOOKS), list(engine.RUN_HOOKS)) == before
    assert not gputorch.nn.modules.module._global_forward_hooks
    assert not gputorch.nn.modules.module._global_forward_pre_hooks
    assert not gputorch.optim.optimizer._global_step_post_hooks
    assert all(not p._post_acc_hooks for p in model.parameters())


def test_profilers_do_not_nest():
    with MemoryProfiler():
        with pytest.raises(RuntimeError, match="another MemoryProfiler"):
            MemoryProfiler().start()


def test_report_before_running_raises():
    with pytest.raises(RuntimeError, match="has not run"):
        MemoryProfiler().report()


def test_core_does_not_import_the_profiler():
    import subprocess
    import sys
    code = ("import sys, gputorch, gputorch.nn as nn\n"
            "m = nn.Linear(3, 2); o = gputorch.optim.Adam(m.parameters())\n"
            "m(gputorch.randn(4, 3)).sum().backward(); o.step()\n"
            "print('gputorch.profiler' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- checkpointing
class _Net(nn.Module):
    def __init__(self, hidden, use_checkpoint, reentrant=False):
        super().__init__()
        self.inp = nn.Linear(16, hidden)
        self.block = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, hidden))
        self.head = nn.Linear(hidden, 4)
        self.use_checkpoint = use_checkpoint
        self.reentrant = reentrant

    def forward(self, x):
        h = self.inp(x)
        h = checkpoint(self.block, h, use_reentrant=self.reentrant) if self.use_checkpoint else self.block(h)
        return self.head(h)


def _activation_run(device, use_checkpoint, batch_size, hidden, reentrant=False):
    gputorch.manual_seed(0)
    net = _Net(hidden, use_checkpoint, reentrant).to(device)
    x = gputorch.randn(batch_size, 16, device=device)
    with MemoryProfiler(model=net) as prof:
        loss = net(x).square().mean()
        at_end_of_forward = prof.current()["activations"]
        loss.backward()
    return prof.report(), at_end_of_forward, [p.grad for p in net.parameters()]


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpointing_a_block_lowers_the_activation_peak(device, reentrant):
    B, H = 8, 24
    plain, plain_fwd, plain_grads = _activation_run(device, False, B, H)
    ckpt, ckpt_fwd, ckpt_grads = _activation_run(device, True, B, H, reentrant)
    # Inside the block only tanh's output (saved by tanh and by the block's second Linear) is
    # held for ops of the block alone; the block's input and output are saved by ops outside it.
    expected = B * H * 4
    assert plain.checkpoint_savings["block"] == expected              # predicted from the plain run
    assert plain_fwd - ckpt_fwd == expected
    assert plain.category_peaks["activations"] - ckpt.category_peaks["activations"] == expected
    assert "block" not in ckpt.checkpoint_savings or ckpt.checkpoint_savings["block"] == 0
    for a, b in zip(plain_grads, ckpt_grads):
        assert gputorch.allclose(a, b)
