"""Custom autograd Functions: ctx API, output wiring, gradient checks, once_differentiable."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import Function, FunctionCtx, gradcheck, gradgradcheck
from gputorch.autograd.function import once_differentiable
from tests._helpers import assert_close


def leaf(values, device, dtype=gputorch.float64):
    return gputorch.tensor(values, dtype=dtype, device=device, requires_grad=True)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class ScaleBy(Function):
    """y = x * k with a Python number k (which gets no gradient)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_apply_forward_backward_and_grad_fn(device):
    x = leaf([1.0, 2.0], device)
    y = Cube.apply(x)
    assert type(y.grad_fn).__name__ == "CubeBackward"
    assert y.grad_fn.name() == "CubeBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    assert isinstance(y.grad_fn, gputorch.autograd.graph.Node)
    assert isinstance(y.grad_fn, FunctionCtx)
    y.sum().backward()
    assert_close(x.grad, np.array([3.0, 12.0]))


def test_gradcheck_and_gradgradcheck_through_function(device):
    x = leaf([0.5, -1.5, 2.0], device)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))


def test_forward_runs_without_grad(device):
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(gputorch.is_grad_enabled())
            y = x * 2
            seen.append(y.requires_grad)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    Probe.apply(leaf([1.0], device))
    assert seen == [False, False]
    assert gputorch.is_grad_enabled()


def test_needs_input_grad_has_one_flag_per_argument(device):
    flags = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, k, b, name=None):
            flags.append(ctx.needs_input_grad)
            return a * k + b

        @staticmethod
        def backward(ctx, g):
            flags.append(ctx.needs_input_grad)
            return g, None, None

    a = leaf([1.0], device)
    b = gputorch.tensor([2.0], dtype=gputorch.float64, device=device)
    F.apply(a, 3.0, b).backward()
    assert flags == [(True, False, False), (True, False, False)]


def test_non_tensor_arguments_and_outputs(device):
    class F(Function):
        @staticmethod
        def forward(ctx, x, k):
            return 1, x * k, "tag", x * 3

        @staticmethod
        def backward(ctx, g0, g1, g2, g3):
            assert g0 is None and g2 is None
            return g1 * 2 + g3 * 3, None

    x = leaf([1.0, 2.0], device)
    one, a, tag, b = F.apply(x, 2.0)
    assert one == 1 and tag == "tag"
    assert (a.output_nr, b.output_nr) == (1, 3)
    assert a.grad_fn is b.grad_fn
    b.sum().backward()   # a's gradient is materialised as zeros
    assert_close(x.grad, np.array([3.0, 3.0]))


def test_kwargs_reach_forward(device):
    class F(Function):
        @staticmethod
        def forward(ctx, x, k=2.0):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = leaf([1.0], device)
    F.apply(x, k=5.0).backward()
    assert_close(x.grad, np.array([5.0]))


def test_setup_context_style(device):
    calls = []

    class F(Function):
        @staticmethod
        def forward(x, k=2.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            calls.append((len(inputs), inputs[1], gputorch.is_grad_enabled(), ctx.needs_input_grad))
            ctx.k = inputs[1]
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k + x * 0, None

    x = leaf([1.0, 2.0], device)
    y = F.apply(x)
    assert calls == [(2, 2.0, False, (True, False))]
    y.sum().backward()
    assert_close(x.grad, np.array([2.0, 2.0]))
    F.apply(x, k=4.0)
    assert calls[-1][1] == 4.0


def test_saved_tensors_input_output_and_intermediate(device):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 3
            tmp = x * 2
            ctx.save_for_backward(x, y, tmp, None)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y, tmp, nothing = ctx.saved_tensors
            assert nothing is None
            assert type(y.grad_fn).__name__ == "FBackward"   # the saved output has this node as grad_fn
            assert_close(tmp, x.detach() * 2)
            return g * y / x

    x = leaf([1.0, 2.0], device)
    y = F.apply(x)
    y.sum().backward(retain_graph=True)
    assert_close(x.grad, np.array([3.0, 3.0]))
    saved_out = y.grad_fn.saved_tensors[1]
    assert saved_out is not y and saved_out.grad_fn is y.grad_fn


def test_save_for_backward_rejects_non_tensors(device):
    class F(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x, k)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, None

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        F.apply(leaf([1.0], device), 3)


def test_saved_tensors_freed_after_backward(device):
    x = leaf([1.0], device)
    y = Cube.apply(x)
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors


def test_function_without_saved_tensors_can_backward_twice(device):
    x = leaf([1.0], device)
    y = ScaleBy.apply(x, 2.0)
    y.backward()
    y.backward()
    assert_close(x.grad, np.array([4.0]))


def test_saved_input_modified_in_place_is_detected(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    y = Cube.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---------------------------------------------------------------- returned inputs, dirty tensors
class Identity(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_returning_an_input_gives_a_new_alias(device):
    x = leaf([1.0, 2.0], device)
    y = Identity.apply(x)
    assert y is not x
    assert y._base is x
    assert type(y.grad_fn).__name__ == "IdentityBackward"
    y.sum().backward()
    assert_close(x.grad, np.array([3.0, 3.0]))
    # it shares storage and version counter with the input
    with gputorch.no_grad():
        x.add_(1)
    assert y._version == x._version
    assert_close(y.detach(), np.array([2.0, 3.0]))


def test_returning_an_input_without_grad(device):
    c = gputorch.ones(2, device=device)
    y = Identity.apply(c)
    assert y is not c and not y.requires_grad and y.grad_fn is None
    x = leaf([1.0], device)
    with gputorch.no_grad():
        z = Identity.apply(x)
    assert z is not x and not z.requires_grad and z.grad_fn is None


class DoubleInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_rebases_history(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    assert a._version == 0
    b = DoubleInPlace.apply(a)
    assert b is a
    assert type(a.grad_fn).__name__ == "DoubleInPlaceBackward"
    assert a._version == 2   # once for mul_, once for mark_dirty (as PyTorch)
    assert_close(a.detach(), np.array([2.0, 4.0]))
    a.sum().backward()
    assert_close(x.grad, np.array([2.0, 2.0]))


def test_mark_dirty_on_leaf_requiring_grad(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place"):
        DoubleInPlace.apply(x)


def test_mark_dirty_invalidates_earlier_saves(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    y = a * a          # saves a
    DoubleInPlace.apply(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_dirty_tensor_must_be_returned(device):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not returned"):
        F.apply(leaf([1.0], device) * 1)


# ---------------------------------------------------------------- non-differentiable outputs, materialize
def test_mark_non_differentiable(device):
    got = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            a = x * 2
            idx = x.long()
            c = x * 3
            ctx.mark_non_differentiable(c)
            return a, idx, c

        @staticmethod
        def backward(ctx, ga, gidx, gc):
            got.append((gidx.dtype, gidx.tolist(), gc.tolist()))
            return ga * 2

    x = leaf([1.0, 2.0], device)
    a, idx, c = F.apply(x)
    assert a.requires_grad
    assert not idx.requires_grad and idx.grad_fn is None
    assert not c.requires_grad and c.grad_fn is None
    a.sum().backward()
    assert got == [(gputorch.int64, [0, 0], [0.0, 0.0])]
    assert_close(x.grad, np.array([2.0, 2.0]))
    with pytest.raises(RuntimeError, match="does not require grad"):
        c.sum().backward()


def test_set_materialize_grads_false(device):
    got = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got.append(gb)
            return ga * 2

    x = leaf([1.0], device)
    a, _ = F.apply(x)
    a.backward()
    assert got == [None]
    assert_close(x.grad, np.array([2.0]))


# ---------------------------------------------------------------- backward results checking
def _fn_returning(grads, nargs=2):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k=None):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return grads(g)

    return Bad


def test_too_many_gradients(device):
    F = _fn_returning(lambda g: (g, g, g))
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 3\)"):
        F.apply(leaf([1.0], device), 2.0).backward()


def test_extra_none_gradients_are_allowed(device):
    F = _fn_returning(lambda g: (g * 2, None, None))
    x = leaf([1.0], device)
    F.apply(x, 2.0).backward()
    assert_close(x.grad, np.array([2.0]))


def test_too_few_gradients(device):
    F = _fn_returning(lambda g: g)
    with pytest.raises(RuntimeError, match=r"FBackward|BadBackward"):
        F.apply(leaf([1.0], device), 2.0).backward()
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 1\)"):
        F.apply(leaf([1.0], device), 2.0).backward()


def test_gradient_for_non_tensor_argument(device):
    F = _fn_returning(lambda g: (g, g))
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2, but the "
                                           "corresponding forward input was not a Variable"):
        F.apply(leaf([1.0], device), 2.0).backward()


def test_wrong_shape_gradient(device):
    F = _fn_returning(lambda g: (gputorch.ones(3, dtype=gputorch.float64, device=g.device), None))
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[3\] but expected shape "
                                           r"compatible with \[2\]"):
        F.apply(leaf([1.0, 2.0], device), 2.0).sum().backward()


def test_broadcastable_gradient_is_reduced_and_cast(device):
    F = _fn_returning(lambda g: (gputorch.ones(4, 2, dtype=gputorch.float32, device=g.device), None))
    x = leaf([1.0, 2.0], device)
    F.apply(x, 2.0).sum().backward()
    assert x.grad.dtype == gputorch.float64
    assert_close(x.grad, np.array([4.0, 4.0]))


def test_non_tensor_gradient(device):
    F = _fn_returning(lambda g: (3, None))
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got int\)"):
        F.apply(leaf([1.0], device), 2.0).backward()


def test_missing_backward_and_forward():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    class NoForward(Function):
        pass

    x = gputorch.tensor([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="must implement either the backward or vjp"):
        NoBackward.apply(x).backward()
    with pytest.raises(NotImplementedError, match="must implement the forward"):
        NoForward.apply(x)


def test_vjp_alias_and_both_defined():
    class WithVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 5

    class Both(WithVjp):
        @staticmethod
        def backward(ctx, g):
            return g

    x = gputorch.tensor([1.0], requires_grad=True)
    WithVjp.apply(x).backward()
    assert x.grad.item() == 5.0
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).backward()


def test_legacy_instantiation():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Cube()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        f(gputorch.ones(1))


# ---------------------------------------------------------------- graph integration
def test_function_inside_larger_graph_and_double_backward(device):
    x = leaf([1.0, 2.0], device)
    y = Cube.apply(x * 2)           # (2x)^3 = 8x^3
    (g1,) = gputorch.autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = gputorch.autograd.grad(g1.sum(), x)
    assert_close(g1, np.array([24.0, 96.0]))
    assert_close(g2, np.array([48.0, 96.0]))


def test_no_graph_when_no_input_requires_grad(device):
    c = gputorch.ones(2, device=device)
    y = Cube.apply(c)
    assert not y.requires_grad and y.grad_fn is None
    x = leaf([1.0], device)
    with gputorch.no_grad():
        z = Cube.apply(x)
    assert not z.requires_grad and z.grad_fn is None


def test_node_hooks_on_function_node(device):
    x = leaf([1.0], device)
    y = Cube.apply(x)
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.backward()
    assert_close(x.grad, np.array([6.0]))


def test_parity_with_torch_custom_function(device):
    torch = pytest.importorskip("torch")

    def make(lib):
        class Softplusish(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                y = x * x * w + 1.0
                ctx.save_for_backward(x, w, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, w, y = ctx.saved_tensors
                return g * 2 * x * w, (g * x * x).sum(0)
        return Softplusish

    data = np.random.default_rng(0).normal(size=(3, 2))
    wd = np.random.default_rng(1).normal(size=(2,))
    gx, gw = (gputorch.tensor(d, device=device, requires_grad=True) for d in (data, wd))
    tx, tw = (torch.tensor(d, requires_grad=True) for d in (data, wd))
    gy = make(gputorch).apply(gx, gw)
    ty = make(torch).apply(tx, tw)
    assert_close(gy, ty)
    (gy ** 2).sum().backward()
    (ty ** 2).sum().backward()
    assert_close(gx.grad, tx.grad)
    assert_close(gw.grad, tw.grad)


# ---------------------------------------------------------------- once_differentiable
class OnceSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        assert not gputorch.is_grad_enabled()
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_once_differentiable_first_order(device):
    x = leaf([1.0, 3.0], device)
    OnceSquare.apply(x).sum().backward()
    assert_close(x.grad, np.array([2.0, 6.0]))


def test_once_differentiable_double_backward_raises(device):
    x = leaf([1.0, 2.0], device)
    y = OnceSquare.apply(x)
    (gx,) = gputorch.autograd.grad((y * y).sum(), x, create_graph=True)
    assert gx.requires_grad and gx.grad_fn.name() == "Error"
    assert_close(gx, np.array([4.0, 32.0]))
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        gx.sum().backward()


def test_once_differentiable_with_grad_outputs_not_requiring_grad(device):
    x = leaf([1.0, 2.0], device)
    (gx,) = gputorch.autograd.grad(OnceSquare.apply(x).sum(), x, create_graph=True)
    assert not gx.requires_grad
    assert_close(gx, np.array([2.0, 4.0]))


def test_function_ctx_standalone():
    ctx = FunctionCtx()
    a = gputorch.ones(1)
    ctx.save_for_backward(a)
    ctx.mark_dirty(a)
    ctx.mark_non_differentiable(a)
    ctx.set_materialize_grads(False)
    assert ctx.to_save == (a,) and ctx.dirty_tensors == (a,) and ctx.non_differentiable == (a,)
    assert ctx.materialize_grads is False


def test_warning_free_normal_use(device):
    x = leaf([1.0], device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Cube.apply(x).backward()
