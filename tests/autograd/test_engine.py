"""The backward engine: graph structure, backward/grad options, accumulation, higher order."""
import time

import numpy as np
import pytest

import gputorch
from gputorch.autograd import Function
from gputorch.autograd.node import AccumulateGrad, Node
from gputorch._dispatch import apply
from tests._helpers import assert_close


def leaf(values, device, dtype=gputorch.float64):
    return gputorch.tensor(values, dtype=dtype, device=device, requires_grad=True)


# ---------------------------------------------------------------- graph structure
def test_grad_fn_names_and_next_functions(device):
    x = leaf([1.0, 2.0], device)
    y = leaf([3.0, 4.0], device)
    p = x * y
    s = p + x
    assert type(p.grad_fn).__name__ == "MulBackward0"
    assert p.grad_fn.name() == "MulBackward0"
    assert type(s.grad_fn).__name__ == "AddBackward0"
    (n0, i0), (n1, i1) = p.grad_fn.next_functions
    assert isinstance(n0, AccumulateGrad) and isinstance(n1, AccumulateGrad)
    assert n0.variable is x and n1.variable is y
    assert (i0, i1) == (0, 0)
    assert s.grad_fn.next_functions[0] == (p.grad_fn, 0)
    # the accumulator of a leaf is shared by every node that uses it
    assert s.grad_fn.next_functions[1][0] is n0
    assert isinstance(p.grad_fn, Node) and isinstance(p.grad_fn, gputorch.autograd.graph.Node)


def test_next_functions_for_inputs_without_grad(device):
    x = leaf([1.0, 2.0], device)
    c = gputorch.tensor([5.0, 6.0], dtype=gputorch.float64, device=device)
    p = c * x
    assert p.grad_fn.next_functions[0] == (None, 0)
    assert p.grad_fn.next_functions[1][0].variable is x


def test_is_leaf_and_requires_grad_propagation(device):
    x = leaf([1.0, 2.0], device)
    c = gputorch.tensor([1.0, 1.0], dtype=gputorch.float64, device=device)
    assert x.is_leaf and c.is_leaf
    assert x.grad_fn is None
    y = x * c
    assert not y.is_leaf and y.requires_grad
    z = c * 2
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None
    with gputorch.no_grad():
        w = x * 2
    assert w.is_leaf and not w.requires_grad
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="floating point"):
        gputorch.tensor([1, 2], device=device).requires_grad_()
    # integer results of ops on tensors that require grad do not require grad
    assert not (x // 1).long().requires_grad


def test_requires_grad_setter_on_leaf(device):
    c = gputorch.tensor([1.0, 2.0], device=device)
    c.requires_grad = True
    assert c.requires_grad and c.is_leaf
    (c * 3).sum().backward()
    assert_close(c.grad, np.array([3.0, 3.0], dtype=np.float32))


# ---------------------------------------------------------------- backward()
def test_implicit_grad_only_for_scalars(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).sum().backward()
    assert_close(x.grad, np.array([2.0, 2.0]))


def test_backward_with_gradient_argument(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x * x
    y.backward(gradient=gputorch.tensor([1.0, 0.0, 2.0], dtype=gputorch.float64, device=device))
    assert_close(x.grad, np.array([2.0, 0.0, 12.0]))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(gputorch.ones(2, dtype=gputorch.float64, device=device))


def test_backward_on_tensor_without_grad_raises(device):
    t = gputorch.tensor([1.0], device=device)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        t.backward()


def test_gradients_accumulate_across_calls(device):
    x = leaf([1.0, 2.0], device)
    for _ in range(3):
        (x * 2).sum().backward()
    assert_close(x.grad, np.array([6.0, 6.0]))
    x.grad = None
    (x * 5).sum().backward()
    assert_close(x.grad, np.array([5.0, 5.0]))


def test_accumulated_grad_is_owned_by_the_leaf(device):
    # both inputs of an add get the same gradient tensor: later accumulation must not alias it
    x = leaf([1.0, 2.0], device)
    y = leaf([3.0, 4.0], device)
    (x + y).sum().backward()
    (x * 2).sum().backward()
    assert_close(x.grad, np.array([3.0, 3.0]))
    assert_close(y.grad, np.array([1.0, 1.0]))


def test_second_backward_after_graph_freed(device):
    x = leaf([1.0, 2.0], device)
    s = (x * x).sum()
    s.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        s.backward()


def test_retain_graph_allows_second_backward(device):
    x = leaf([1.0, 2.0], device)
    s = (x * x).sum()
    s.backward(retain_graph=True)
    s.backward()
    assert_close(x.grad, np.array([4.0, 8.0]))


def test_backward_inputs_restricts_accumulation(device):
    a = leaf([1.0, 2.0], device)
    b = leaf([3.0, 4.0], device)
    (a * b).sum().backward(inputs=[a])
    assert_close(a.grad, np.array([3.0, 4.0]))
    assert b.grad is None
    (a * b).sum().backward(inputs=b)
    assert_close(b.grad, np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * b).sum().backward(inputs=[])


def test_backward_inputs_non_leaf_gets_grad(device):
    a = leaf([1.0, 2.0], device)
    m = a * 3
    (m * 2).sum().backward(inputs=[m])
    assert_close(m.grad, np.array([2.0, 2.0]))
    assert a.grad is None
    # a retained non-leaf is not counted twice
    m = a * 3
    m.retain_grad()
    (m * 2).sum().backward(inputs=[m])
    assert_close(m.grad, np.array([2.0, 2.0]))


def test_autograd_backward_several_roots(device):
    v = leaf([1.0, 2.0], device)
    gputorch.autograd.backward([(v * 2).sum(), (v * 3).sum()])
    assert_close(v.grad, np.array([5.0, 5.0]))
    v.grad = None
    ones = gputorch.ones(2, dtype=gputorch.float64, device=device)
    gputorch.autograd.backward([v * 2, v * 3], [ones, ones * 2])
    assert_close(v.grad, np.array([8.0, 8.0]))


def test_root_depending_on_another_root(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    z = y * 3
    gputorch.autograd.backward([y, z], [gputorch.ones_like(y), gputorch.ones_like(z)])
    assert_close(x.grad, np.array([8.0, 8.0]))


# ---------------------------------------------------------------- autograd.grad
def test_grad_returns_without_accumulating(device):
    x = leaf([1.0, 2.0, 3.0], device)
    (gx,) = gputorch.autograd.grad((x ** 2).sum(), x)
    assert_close(gx, np.array([2.0, 4.0, 6.0]))
    assert x.grad is None
    assert not gx.requires_grad


def test_grad_wrt_non_leaf(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    (gy,) = gputorch.autograd.grad((y * y).sum(), y)
    assert_close(gy, np.array([6.0, 12.0]))


def test_grad_allow_unused_and_materialize(device):
    a = leaf([1.0, 2.0], device)
    b = leaf([3.0, 4.0], device)
    c = leaf([1.0, 1.0], device)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        gputorch.autograd.grad((a * b).sum(), [a, c])
    ga, gc = gputorch.autograd.grad((a * b).sum(), [a, c], allow_unused=True)
    assert_close(ga, np.array([3.0, 4.0]))
    assert gc is None
    ga, gc = gputorch.autograd.grad((a * b).sum(), [a, c], materialize_grads=True)
    assert_close(gc, np.zeros(2))
    with pytest.raises(ValueError, match="allow_unused"):
        gputorch.autograd.grad((a * b).sum(), [a, c], allow_unused=False, materialize_grads=True)


def test_grad_errors(device):
    a = leaf([1.0, 2.0], device)
    plain = gputorch.tensor([1.0], device=device)
    with pytest.raises(RuntimeError, match="does not require grad"):
        gputorch.autograd.grad((a * 1).sum(), plain)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        gputorch.autograd.grad(plain * 2, a)


def test_grad_with_grad_outputs(device):
    x = leaf([1.0, 2.0], device)
    y = x * x
    go = gputorch.tensor([1.0, -1.0], dtype=gputorch.float64, device=device)
    (gx,) = gputorch.autograd.grad(y, x, grad_outputs=go)
    assert_close(gx, np.array([2.0, -4.0]))


def test_grad_only_runs_the_needed_part(device):
    calls = []

    class Spy(Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g

    x = leaf([1.0, 2.0], device)
    y = leaf([1.0, 2.0], device)
    out = (Spy.apply(x) + y * 2).sum()
    (gy,) = gputorch.autograd.grad(out, y)
    assert_close(gy, np.array([2.0, 2.0]))
    assert calls == []


# ---------------------------------------------------------------- higher order
def test_second_and_third_derivative_of_cube(device):
    x = leaf([2.0, -1.0], device)
    y = (x ** 3).sum()
    (g1,) = gputorch.autograd.grad(y, x, create_graph=True)
    assert g1.requires_grad and g1.grad_fn is not None
    (g2,) = gputorch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = gputorch.autograd.grad(g2.sum(), x)
    assert_close(g1, np.array([12.0, 3.0]))
    assert_close(g2, np.array([12.0, -6.0]))
    assert_close(g3, np.array([6.0, 6.0]))


def test_backward_create_graph_gives_differentiable_grad(device):
    x = leaf([2.0], device)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.backward()
    assert_close(x.grad, np.array([12.0]))


def test_mixed_partial_derivative(device):
    x = leaf([1.5], device)
    y = leaf([2.0], device)
    f = x * x * y
    (gx,) = gputorch.autograd.grad(f, x, create_graph=True)   # 2xy
    (gxy,) = gputorch.autograd.grad(gx, y)                     # 2x
    assert_close(gxy, np.array([3.0]))


# ---------------------------------------------------------------- graph shapes
def test_diamond_shared_subgraph(device):
    x = leaf([1.0], device)
    a = x * 2
    b = a * 3
    c = a * 4
    (b + c).backward()
    assert_close(x.grad, np.array([14.0]))


def test_same_tensor_used_twice_in_one_op(device):
    x = leaf([3.0], device)
    (x * x).backward()
    assert_close(x.grad, np.array([6.0]))


def test_broadcast_gradients_reduce_to_input_shape(device):
    a = leaf(np.ones((2, 3)), device)
    b = leaf([1.0, 2.0, 3.0], device)
    (a * b).sum().backward()
    assert_close(b.grad, np.array([2.0, 2.0, 2.0]))
    assert_close(a.grad, np.tile([1.0, 2.0, 3.0], (2, 1)))


class TwoScalesBackward(Node):
    """A two-output op for these tests: (2x, 3x)."""

    def forward(ctx, x):
        return x._data * 2, x._data * 3

    def backward(ctx, g2, g3):
        return g2 * 2 + g3 * 3


def test_multi_output_node(device):
    x = leaf([1.0, 2.0], device)
    a, b = apply(TwoScalesBackward, x)
    assert a.grad_fn is b.grad_fn
    assert (a.output_nr, b.output_nr) == (0, 1)
    (a.sum() + b.sum()).backward()
    assert_close(x.grad, np.array([5.0, 5.0]))
    # an unused output gets a zero gradient
    x.grad = None
    a, b = apply(TwoScalesBackward, x)
    b.sum().backward()
    assert_close(x.grad, np.array([3.0, 3.0]))


def test_execution_order_most_recent_first(device):
    order = []
    x = leaf([1.0], device)
    a = x * 2
    b = x * 3
    a.grad_fn.register_prehook(lambda g: order.append("a"))
    b.grad_fn.register_prehook(lambda g: order.append("b"))
    (a + b).backward()
    assert order == ["b", "a"]


def test_long_chain_no_recursion_error(device):
    x = leaf([1.0], device)
    y = x
    n = 100_000
    start = time.perf_counter()
    for _ in range(n):
        y = y + 1.0
    y.backward()
    elapsed = time.perf_counter() - start
    assert_close(x.grad, np.array([1.0]))
    assert_close(y.detach(), np.array([1.0 + n]))
    assert elapsed < 60


# ---------------------------------------------------------------- in-place rules
def test_inplace_on_saved_tensor_is_detected(device):
    x = leaf([1.0, 2.0], device)
    q = x * 1
    r = q * q
    q.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        r.sum().backward()
    assert "is at version 1; expected version 0" in str(info.value)


def test_inplace_on_leaf_requiring_grad(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)
    with gputorch.no_grad():
        x.add_(1)
    assert_close(x.detach(), np.array([2.0, 3.0]))
    assert x._version == 1


def test_inplace_on_non_leaf_records_history(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    y.mul_(3)
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert y._version == 1
    y.sum().backward()
    assert_close(x.grad, np.array([6.0, 6.0]))


def test_inplace_with_grad_requiring_operand(device):
    x = leaf([1.0, 2.0], device)
    w = gputorch.tensor([5.0, 5.0], dtype=gputorch.float64, device=device)
    w.add_(x)
    assert w.requires_grad and not w.is_leaf
    w.sum().backward()
    assert_close(x.grad, np.array([1.0, 1.0]))


# ---------------------------------------------------------------- parity
def test_parity_with_torch_grads_and_double_backward(device):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).uniform(0.5, 2.0, (3, 4))
    wdata = np.random.default_rng(1).uniform(-1.0, 1.0, (4,))

    def f(lib, x, w):
        h = (x * w + 1.0) ** 2
        return (h / (x + 3.0)).sum() - (h * w).mean()

    gx = gputorch.tensor(data, device=device, requires_grad=True)
    gw = gputorch.tensor(wdata, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    tw = torch.tensor(wdata, requires_grad=True)
    g_out = f(gputorch, gx, gw)
    t_out = f(torch, tx, tw)
    assert_close(g_out, t_out)
    g1 = gputorch.autograd.grad(g_out, [gx, gw], create_graph=True)
    t1 = torch.autograd.grad(t_out, [tx, tw], create_graph=True)
    for a, b in zip(g1, t1):
        assert_close(a, b, rtol=1e-10, atol=1e-12)
    g2 = gputorch.autograd.grad((g1[0] * g1[0]).sum() + g1[1].sum(), [gx, gw])
    t2 = torch.autograd.grad((t1[0] * t1[0]).sum() + t1[1].sum(), [tx, tw])
    for a, b in zip(g2, t2):
        assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_create_graph_grads_are_owned_by_each_leaf(device):
    x = leaf([1.0, 1.0, 1.0], device)
    y = leaf([1.0, 1.0, 1.0], device)
    (x + y).sum().backward(create_graph=True)   # both leaves get the same (broadcast) gradient
    assert x.grad is not y.grad
    with gputorch.no_grad():
        x.grad.zero_()
    assert_close(x.grad, np.zeros(3))
    assert_close(y.grad, np.ones(3))


def test_create_graph_grad_keeps_history(device):
    x = leaf([2.0], device)
    (x ** 3).backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (g2,) = gputorch.autograd.grad(x.grad, x)
    assert_close(g2, np.array([12.0]))
