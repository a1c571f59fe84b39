"""The leak check: planted leaks are found with their origin; clean loops stay silent."""
import gputorch
import gputorch.nn.functional as F
from gputorch.profiler import MemoryProfiler
from tests.profiler._workloads import batch, mlp, param_bytes


def _loop(device, steps=4, accumulate=None, zero_grad=True, keep=None, micro_batches=1):
    model = mlp(device)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.01)
    total = 0.0
    with MemoryProfiler(model=model, optimizer=opt) as prof:
        for step in range(steps):
            if zero_grad:
                opt.zero_grad()
            for micro in range(micro_batches):
                x, y = batch(device, seed=step * 10 + micro)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                if accumulate == "tensor":
                    total += loss                 # the planted leak: keeps every step's graph
                elif accumulate == "item":
                    total += loss.item()
            opt.step()
            if keep is not None:                  # an evaluation forward with grad, kept around
                keep.append(model(batch(device, seed=99)[0]))
    return prof.report(), model


def test_clean_loop_is_silent(device):
    report, _ = _loop(device, accumulate="item")
    assert report.leaks == []
    assert "Leak check: nothing found" in str(report)


def test_gradient_accumulation_within_a_step_is_silent(device):
    report, _ = _loop(device, micro_batches=3)
    assert report.leaks == []


def test_loss_accumulated_as_tensor_is_found(device):
    report, _ = _loop(device, accumulate="tensor")
    graphs = [leak for leak in report.leaks if leak["kind"] == "graph_kept_alive"]
    assert len(graphs) == 1                       # reported once, when first seen
    leak = graphs[0]
    assert leak["step"] == 1                      # end of step 1: step 0's graph is still reachable
    assert leak["op"] == "AddBackward0"
    assert leak["module"] is None                 # made by top-level code, not inside a module
    assert leak["shape"] == []
    assert "step 0" in leak["message"] and ".item()" in leak["message"]
    assert "graph_kept_alive" in str(report)


def test_activations_held_across_steps_are_found(device):
    kept = []
    report, model = _loop(device, keep=kept)
    held = [leak for leak in report.leaks if leak["kind"] == "activations_held"]
    assert held, report.leaks
    first = held[0]
    assert first["step"] == 2          # kept after step 0's optimizer step, i.e. in step 1; still held after step 2
    assert first["module"] in {"0", "1", "2", "3", "4"} or first["module"] is None
    assert first["bytes"] > 0 and first["count"] >= 1
    assert "held by an autograd graph" in first["message"]
    assert len(kept) == 4


def test_gradients_not_cleared_is_a_notice(device):
    report, model = _loop(device, zero_grad=False)
    notes = [leak for leak in report.leaks if leak["kind"] == "gradients_not_cleared"]
    assert len(notes) == 1
    assert notes[0]["step"] == 1
    assert notes[0]["count"] == len(list(model.parameters()))
    assert notes[0]["bytes"] == param_bytes(model)
    assert "zero_grad" in notes[0]["message"]


def test_leak_check_can_be_off(device):
    model = mlp(device)
    opt = gputorch.optim.SGD(model.parameters(), lr=0.01)
    total = 0
    with MemoryProfiler(model=model, optimizer=opt, check_leaks=False) as prof:
        for step in range(3):
            loss = F.cross_entropy(model(batch(device)[0]), batch(device)[1])
            loss.backward()
            opt.step()
            total = total + loss
    assert prof.report().leaks == []
