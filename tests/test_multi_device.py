"""Tensors on several CUDA devices (real GPUs, or GPUTORCH_SIMULATE_CUDA=2)."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

pytestmark = pytest.mark.skipif(gputorch.cuda.device_count() < 2, reason="needs two CUDA devices")


def test_tensor_on_cuda1_stays_there():
    a = gputorch.tensor([1.0, 2.0, 3.0], device="cuda:1", requires_grad=True)
    b = gputorch.ones(3, device="cuda:1")
    y = (a * b + a).sum()
    assert y.device == gputorch.device("cuda:1")
    y.backward()
    assert a.grad.device == gputorch.device("cuda:1")
    assert_close(a.grad, np.full(3, 2.0, dtype=np.float32))


def test_mixing_devices_names_both():
    a = gputorch.ones(2, device="cuda:0")
    b = gputorch.ones(2, device="cuda:1")
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        a + b
    with pytest.raises(RuntimeError, match="cpu and cuda:1|cuda:1 and cpu"):
        gputorch.ones(2) + b


def test_zero_dim_cpu_tensor_is_allowed():
    b = gputorch.ones(2, device="cuda:1")
    s = gputorch.tensor(3.0, requires_grad=True)
    out = b * s
    assert out.device == gputorch.device("cuda:1")
    out.sum().backward()
    assert s.grad.device == gputorch.device("cpu") and s.grad.item() == 2.0


def test_moves_between_devices_keep_values_and_grads():
    x = gputorch.tensor([1.0, -2.0], requires_grad=True)
    y = x.to("cuda:1") * 3
    z = y.to("cuda:0").cpu()
    z.sum().backward()
    assert_close(x.grad, np.full(2, 3.0, dtype=np.float32))
    assert x.cuda(1).device.index == 1 and x.cuda().device.index == 0


def test_nested_device_contexts_restore_the_outer_device():
    """An op inside another op's device context (a hook inside backward, an op inside a forward)
    must leave the outer device current when it ends, and the caller's device at the end."""
    assert gputorch.cuda.current_device() == 0
    ctx = gputorch.device("cuda:1")._ctx
    with ctx:
        assert gputorch.cuda.current_device() == 1
        with ctx:
            assert gputorch.cuda.current_device() == 1
        assert gputorch.cuda.current_device() == 1
        x = gputorch.ones(3, device="cuda:1") * 2     # an op entering the same context
        assert gputorch.cuda.current_device() == 1 and x.device == gputorch.device("cuda:1")
    assert gputorch.cuda.current_device() == 0


def test_array_gradients_inside_hooks_on_the_second_device():
    """Backward on cuda:1 with a tensor hook that runs ops, then a product's gradient computed on the
    arrays: the arrays meet on the current device (CuPy refuses others)."""
    x = gputorch.randn(3, 6, device="cuda:1", requires_grad=True)
    w = gputorch.randn(6, 6, device="cuda:1", requires_grad=True)
    h = x * 1.5
    h.register_hook(lambda g: g.exp() - 1)
    ((h @ w) * x).sum().backward()
    assert x.grad.device == gputorch.device("cuda:1") and w.grad.device == gputorch.device("cuda:1")
    assert gputorch.cuda.current_device() == 0
