"""``Variable._execution_engine.queue_callback``: callbacks run once the running backward has
executed its whole graph (DistributedDataParallel finishes its buckets there)."""
import pytest

import gputorch
from gputorch.autograd import Variable


def test_callbacks_run_after_every_gradient_in_queue_order(device):
    a = gputorch.ones(3, requires_grad=True, device=device)
    b = gputorch.ones(3, requires_grad=True, device=device)
    events = []

    def on_a(grad):
        events.append("hook a")
        Variable._execution_engine.queue_callback(lambda: events.append(("first", b.grad is not None)))
        Variable._execution_engine.queue_callback(
            lambda: (events.append("second"), Variable._execution_engine.queue_callback(
                lambda: events.append("queued by a callback"))))
    a.register_hook(on_a)
    ((a * 2).sum() + (b * 3).sum()).backward()
    assert events[0] == "hook a"
    assert events[1:] == [("first", True), "second", "queued by a callback"]


def test_callbacks_belong_to_one_backward(device):
    x = gputorch.ones(2, requires_grad=True, device=device)
    calls = []
    x.register_hook(lambda g: Variable._execution_engine.queue_callback(lambda: calls.append(1)))
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert calls == [1, 1]


def test_outside_backward_is_an_error():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        Variable._execution_engine.queue_callback(lambda: None)
