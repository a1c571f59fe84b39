"""Tensors saved for backward: version checks, saved_tensors_hooks, save_on_cpu."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import Function
from gputorch.autograd.graph import (disable_saved_tensors_hooks, get_gradient_edge, increment_version,
                                     save_on_cpu, saved_tensors_hooks)
from tests._helpers import assert_close


def leaf(values, device):
    return gputorch.tensor(values, dtype=gputorch.float64, device=device, requires_grad=True)


class Counting:
    """pack/unpack hooks that record what they see."""

    def __init__(self):
        self.packed = []
        self.unpacked = 0

    def pack(self, t):
        self.packed.append(t)
        return t

    def unpack(self, t):
        self.unpacked += 1
        return t

    def __call__(self):
        return saved_tensors_hooks(self.pack, self.unpack)


class SaveInputAndOutput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 3
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y / x


# ---------------------------------------------------------------- version checks
def test_saved_input_modified_in_place(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    b = a * a
    a.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        b.sum().backward()


def test_saved_output_modified_in_place(device):
    x = leaf([1.0, 2.0], device)
    r = x.reciprocal()   # saves its output
    r.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()


def test_increment_version_invalidates_saved(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    b = a * a
    increment_version(a)
    assert a._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()
    increment_version([a, a])
    assert a._version == 3


def test_unmodified_saved_tensor_unpacks_to_same_object(device):
    x = leaf([1.0, 2.0], device)
    y = SaveInputAndOutput.apply(x)
    saved_x, saved_y = y.grad_fn.saved_tensors
    assert saved_x is x
    assert saved_y is not y and saved_y.grad_fn is y.grad_fn


# ---------------------------------------------------------------- saved_tensors_hooks
def test_hooks_see_each_saved_tensor_once(device):
    x = leaf([1.0, 2.0], device)
    w = leaf([3.0, 4.0], device)
    hooks = Counting()
    with hooks():
        y = x * w            # saves both operands
    assert len(hooks.packed) == 2
    assert {id(t) for t in hooks.packed} == {id(x), id(w)}
    hooks.packed.clear()
    with hooks():
        r = x.reciprocal()   # saves its output only
    assert len(hooks.packed) == 1 and hooks.packed[0] is r
    hooks.packed.clear()
    with hooks():
        p = x ** 3           # saves its input only
    assert len(hooks.packed) == 1 and hooks.packed[0] is x
    assert hooks.unpacked == 0
    (y.sum() + r.sum() + p.sum()).backward()
    assert hooks.unpacked == 4
    assert_close(x.grad, np.array([3.0, 4.0]) - 1 / np.array([1.0, 4.0]) + 3 * np.array([1.0, 4.0]))


def test_hooks_for_custom_function_inputs_and_outputs(device):
    x = leaf([1.0, 2.0], device)
    hooks = Counting()
    with hooks():
        y = SaveInputAndOutput.apply(x)
    assert len(hooks.packed) == 2
    assert hooks.packed[0] is x
    assert hooks.packed[1] is y     # the output, with its history
    y.sum().backward()
    assert hooks.unpacked == 2
    assert_close(x.grad, np.array([3.0, 3.0]))


def test_hooks_only_apply_inside_context(device):
    x = leaf([1.0], device)
    hooks = Counting()
    with hooks():
        pass
    y = x * x
    y.backward()
    assert hooks.packed == [] and hooks.unpacked == 0


def test_innermost_hooks_win(device):
    x = leaf([1.0], device)
    order = []
    with saved_tensors_hooks(lambda t: order.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: order.append("inner") or t, lambda t: t):
            x.reciprocal()
        x.reciprocal()
    assert order == ["inner", "outer"]


def test_pack_to_other_object_and_back(device):
    x = leaf([1.0, 2.0], device)
    store = {}

    def pack(t):
        key = len(store)
        store[key] = t.detach().tolist()
        return key

    def unpack(key):
        return gputorch.tensor(store[key], dtype=gputorch.float64, device=device)

    with saved_tensors_hooks(pack, unpack):
        y = x ** 3
    y.sum().backward()
    assert_close(x.grad, np.array([3.0, 12.0]))


def test_unpacked_tensor_keeps_history_for_double_backward(device):
    x = leaf([1.0, 2.0], device)
    with saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
        z = x ** 3
    (g,) = gputorch.autograd.grad(z.sum(), x, create_graph=True)
    (g2,) = gputorch.autograd.grad(g.sum(), x)
    assert_close(g, np.array([3.0, 12.0]))
    assert_close(g2, np.array([6.0, 12.0]))


def test_hooks_skip_version_check(device):
    # as in PyTorch: with hooks the saved value is whatever unpack returns
    x = leaf([1.0, 2.0], device)
    w = leaf([1.0, 1.0], device)
    a = x * 1
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        c = a * w
    a.add_(1)
    c.sum().backward()
    assert_close(w.grad, np.array([2.0, 3.0]))


def test_unpack_must_return_tensor(device):
    x = leaf([1.0], device)
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x * x
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        y.backward()


def test_pack_hook_must_not_modify_input(device):
    x = leaf([1.0], device)
    a = x * 1

    def bad_pack(t):
        t.mul_(2)
        return t

    with saved_tensors_hooks(bad_pack, lambda t: t):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            a * a


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks allowed"):
            with disable_saved_tensors_hooks("no hooks allowed"):
                pass

    @disable_saved_tensors_hooks("decorated")
    def f():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    with pytest.raises(RuntimeError, match="decorated"):
        f()
    with saved_tensors_hooks(lambda t: t, lambda t: t):   # enabled again
        pass


# ---------------------------------------------------------------- save_on_cpu
def test_save_on_cpu_gradients_match(device):
    x = leaf([1.0, 2.0, 3.0], device)
    w = leaf([0.5, -1.0, 2.0], device)
    with save_on_cpu():
        y = ((x * w) ** 2).sum()
    y.backward()
    assert_close(x.grad, 2 * np.array([1.0, 2.0, 3.0]) * np.array([0.5, -1.0, 2.0]) ** 2)
    assert x.grad.device == x.device


def test_save_on_cpu_packs_host_copies(device):
    x = leaf([1.0, 2.0], device)
    packed = []
    hooks = save_on_cpu()
    pack = hooks.pack_hook
    hooks.pack_hook = lambda t: packed.append(pack(t)) or packed[-1]
    with hooks:
        y = x * x
    assert all(p[1].device.type == "cpu" for p in packed)
    assert all(p[1] is not x for p in packed)
    y.sum().backward()
    assert_close(x.grad, np.array([2.0, 4.0]))


def test_save_on_cpu_double_backward(device):
    x = leaf([1.0, 2.0], device)
    w = x * 2
    with save_on_cpu():
        z = w ** 3                 # saves a non-leaf
        r = x.reciprocal()         # saves an output
    (g,) = gputorch.autograd.grad(z.sum() + r.sum(), x, create_graph=True)
    (g2,) = gputorch.autograd.grad(g.sum(), x)
    xs = np.array([1.0, 2.0])
    assert_close(g, 24 * xs ** 2 - 1 / xs ** 2)
    assert_close(g2, 48 * xs + 2 / xs ** 3)


# ---------------------------------------------------------------- gradient edges
def test_get_gradient_edge(device):
    x = leaf([1.0], device)
    y = x * 2
    edge = get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    leaf_edge = get_gradient_edge(x)
    assert leaf_edge.node is y.grad_fn.next_functions[0][0]
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(gputorch.ones(1, device=device))


def test_parity_save_on_cpu_with_torch():
    torch = pytest.importorskip("torch")
    data = [0.5, 1.5, -2.0]

    def run(lib):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            z = (x ** 3 * x).sum()
        (g,) = lib.autograd.grad(z, x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        return g, g2

    for a, b in zip(run(gputorch), run(torch)):
        assert_close(a, b)


def test_in_place_op_under_hooks_saves_old_value(device):
    x = leaf([1.0, 2.0], device)
    w = leaf([3.0, 4.0], device)
    a = x * 1
    hooks = Counting()
    with hooks():
        a.mul_(w)         # d/dw needs a's value before the in-place update
    assert len(hooks.packed) == 2
    a.sum().backward()
    assert_close(w.grad, np.array([1.0, 2.0]))
    assert_close(x.grad, np.array([3.0, 4.0]))
