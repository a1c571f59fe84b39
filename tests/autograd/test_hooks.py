"""Tensor hooks, retain_grad, post-accumulate hooks and graph node hooks."""
import warnings

import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close


def leaf(values, device):
    return gputorch.tensor(values, dtype=gputorch.float64, device=device, requires_grad=True)


# ---------------------------------------------------------------- .grad on leaves and non-leaves
def test_grad_only_on_leaves_with_warning_for_non_leaf(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.sum().backward()
    assert_close(x.grad, np.array([2.0, 2.0]))
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None


def test_retain_grad(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(y.grad, np.array([4.0, 8.0]))
    x.retain_grad()  # no-op on a leaf
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        gputorch.ones(2, device=device).retain_grad()


def test_retained_grad_accumulates(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.retain_grad()
    s = y.sum()
    s.backward(retain_graph=True)
    s.backward()
    assert_close(y.grad, np.array([2.0, 2.0]))
    assert_close(x.grad, np.array([4.0, 4.0]))


def test_retain_grad_sees_hook_modified_grad(device):
    # the retain_grad hook always runs after the tensor's other hooks
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    (y * 1).sum().backward()
    assert_close(y.grad, np.array([3.0, 3.0]))
    assert_close(x.grad, np.array([6.0, 6.0]))


# ---------------------------------------------------------------- tensor hooks
def test_non_leaf_hook_replaces_gradient(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    assert_close(x.grad, np.array([20.0, 20.0]))


def test_hooks_run_in_registration_order_and_chain(device):
    x = leaf([1.0], device)
    y = x * 1
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: g * 10)
    y.backward()
    assert_close(x.grad, np.array([20.0]))


def test_hook_handle_remove(device):
    x = leaf([1.0, 2.0], device)
    h = x.register_hook(lambda g: g * 100)
    (x * 1).sum().backward()
    assert_close(x.grad, np.array([100.0, 100.0]))
    h.remove()
    h.remove()  # idempotent
    x.grad = None
    (x * 1).sum().backward()
    assert_close(x.grad, np.array([1.0, 1.0]))


def test_hook_handle_as_context_manager(device):
    x = leaf([1.0], device)
    with x.register_hook(lambda g: g * 5):
        (x * 1).backward()
    (x * 1).backward()
    assert_close(x.grad, np.array([6.0]))


def test_leaf_hook_runs_before_accumulation(device):
    x = leaf([1.0, 2.0], device)
    calls = []

    def hook(g):
        calls.append(None if x.grad is None else x.grad.tolist())
        return g * 2

    x.register_hook(hook)
    (x * 3).sum().backward()
    assert calls == [None]
    assert_close(x.grad, np.array([6.0, 6.0]))


def test_leaf_hook_applies_to_autograd_grad(device):
    x = leaf([1.0, 2.0], device)
    x.register_hook(lambda g: g * 10)
    (g,) = gputorch.autograd.grad((x * 2).sum(), x)
    assert_close(g, np.array([20.0, 20.0]))
    assert x.grad is None


def test_non_leaf_hook_applies_to_autograd_grad(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    (gy,) = gputorch.autograd.grad((y * 3).sum(), y)
    assert_close(gy, np.array([30.0, 30.0]))


def test_hook_on_tensor_without_grad_raises(device):
    t = gputorch.ones(2, device=device)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        t.register_hook(lambda g: g)


def test_hook_called_once_per_backward_with_summed_grad(device):
    x = leaf([1.0], device)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.item()))
    (y * 3 + y * 4).backward()
    assert seen == [7.0]


# ---------------------------------------------------------------- post accumulate grad hooks
def test_post_accumulate_grad_hook(device):
    x = leaf([1.0, 2.0], device)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * 3).sum().backward()
    (x * 1).sum().backward()
    assert seen == [(True, [3.0, 3.0]), (True, [4.0, 4.0])]
    h.remove()
    (x * 1).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_grad_hook_only_on_leaves(device):
    x = leaf([1.0], device)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_hook_not_called_by_autograd_grad(device):
    x = leaf([1.0], device)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(1))
    gputorch.autograd.grad(x * 2, x)
    assert seen == []


# ---------------------------------------------------------------- node hooks
def test_node_prehook_and_hook_see_gradients(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    log = []
    y.grad_fn.register_prehook(lambda go: log.append(("pre", [g.tolist() for g in go])))
    y.grad_fn.register_hook(
        lambda gi, go: log.append(("post", [None if g is None else g.tolist() for g in gi],
                                   [g.tolist() for g in go])))
    y.sum().backward()
    assert log == [("pre", [[1.0, 1.0]]), ("post", [[2.0, 2.0]], [[1.0, 1.0]])]


def test_node_hooks_replace_gradients(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
    y.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g + 1 for g in gi))
    y.sum().backward()
    assert_close(x.grad, np.array([11.0, 11.0]))


def test_node_hook_handle_remove(device):
    x = leaf([1.0], device)
    y = x * 2
    h = y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
    h.remove()
    y.backward()
    assert_close(x.grad, np.array([2.0]))


def test_accumulate_grad_node_hooks(device):
    x = leaf([1.0], device)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    seen = []
    acc.register_prehook(lambda go: seen.append(go[0].item()))
    y.backward()
    assert seen == [2.0]


def test_node_metadata_and_name(device):
    x = leaf([1.0], device)
    y = x * 2
    y.grad_fn.metadata["tag"] = 7
    assert y.grad_fn.metadata == {"tag": 7}
    assert y.grad_fn.name() == "MulBackward0"
    assert "MulBackward0" in repr(y.grad_fn)


def test_parity_hooks_with_torch(device):
    torch = pytest.importorskip("torch")

    def run(lib, make):
        x = make([1.0, -2.0, 3.0])
        y = x * x
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: g + 1)
        z = (y * x).sum()
        z.backward()
        return x.grad, y.grad

    gx, gy = run(gputorch, lambda v: gputorch.tensor(v, dtype=gputorch.float64, device=device,
                                                     requires_grad=True))
    tx, ty = run(torch, lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True))
    assert_close(gx, tx)
    assert_close(gy, ty)


def test_retain_grad_follows_in_place_ops(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * 5).sum().backward()
    assert_close(y.grad, np.array([5.0, 5.0]))   # gradient of y's latest value
    assert_close(x.grad, np.array([30.0, 30.0]))


def test_hook_registered_before_in_place_sees_old_value_grad(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.mul_(3)
    (y * 5).sum().backward()
    assert seen == [[15.0, 15.0]]


def test_retain_grad_follows_mark_dirty(device):
    class Double(gputorch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(2)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf([1.0], device)
    y = x * 1
    y.retain_grad()
    Double.apply(y)
    (y * 7).backward()
    assert_close(y.grad, np.array([7.0]))
    assert_close(x.grad, np.array([14.0]))
