"""gradcheck / gradgradcheck: they must pass correct gradients and catch wrong ones."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import Function, gradcheck, gradgradcheck
from gputorch.autograd.gradcheck import GradcheckError


def rand(*shape, device, seed=0, requires_grad=True):
    data = np.random.default_rng(seed).uniform(0.5, 2.0, shape)
    return gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


class WrongCube(Function):
    """forward x**3 with a backward off by a factor (3x^2 * 1.01)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.03 * x ** 2


class WrongSecondOrder(Function):
    """Correct first derivative of x**3 whose own backward treats 3x^2 as a constant."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (3 * x.detach() ** 2)


class NonReentrant(Function):
    calls = [0]

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        NonReentrant.calls[0] += 1
        return g * (2 + 1e-3 * (NonReentrant.calls[0] % 2))


def test_passes_for_correct_gradients(device):
    a = rand(2, 3, device=device)
    b = rand(3, device=device, seed=1)
    assert gradcheck(lambda x, y: (x * y) ** 2 / (x + y), (a, b))
    assert gradgradcheck(lambda x, y: (x * y) ** 2 / (x + y), (a, b))


def test_catches_wrong_first_derivative(device):
    x = rand(3, device=device)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0") as info:
        gradcheck(WrongCube.apply, (x,))
    assert "worst entry" in str(info.value)
    assert gradcheck(WrongCube.apply, (x,), raise_exception=False) is False


def test_catches_wrong_second_derivative(device):
    x = rand(3, device=device)
    assert gradcheck(WrongSecondOrder.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(WrongSecondOrder.apply, (x,))
    assert gradgradcheck(WrongSecondOrder.apply, (x,), raise_exception=False) is False


def test_non_contiguous_inputs(device):
    base = rand(3, 4, device=device)
    t = base.detach().transpose(0, 1) if hasattr(base, "transpose") else None
    if t is None:
        pytest.skip("transpose not available yet")
    t.requires_grad_(True)
    assert not t.is_contiguous()
    assert gradcheck(lambda x: x * x.sum(), (t,))
    w = gputorch.tensor(np.random.default_rng(2).uniform(0.5, 2, (4, 6)), device=device)[:, ::2]
    w.requires_grad_(True)
    assert not w.is_contiguous()
    assert gradcheck(lambda x: (x ** 2).mean(0), (w,))
    # the inputs are left unchanged
    np.testing.assert_array_equal(np.asarray(base.detach().cpu()._data).T, np.asarray(t.detach().cpu()._data))


def test_rejects_zero_stride_inputs(device):
    x = rand(3, device=device).detach().expand(2, 3)
    x.requires_grad_(True)
    with pytest.raises(ValueError, match="stride 0"):
        gradcheck(lambda t: t * 2, (x,))


def test_zero_dim_and_multiple_outputs(device):
    x = gputorch.tensor(1.5, dtype=gputorch.float64, device=device, requires_grad=True)
    y = rand(2, device=device)
    assert gradcheck(lambda a, b: (a * b, a ** 2, b * 3), (x, y))


def test_non_tensor_and_non_differentiable_inputs(device):
    x = rand(3, device=device)
    c = rand(3, device=device, requires_grad=False)
    assert gradcheck(lambda a, k, b: a * k + b * a, (x, 2.5, c))


def test_nondeterministic_backward(device):
    x = rand(3, device=device)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(NonReentrant.apply, (x,), atol=1e-2)
    assert gradcheck(NonReentrant.apply, (x,), atol=1e-2, nondet_tol=1e-2)


def test_requires_an_input_requiring_grad(device):
    x = rand(3, device=device, requires_grad=False)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (x,))


def test_non_double_inputs_warn(device):
    x = gputorch.tensor([1.0, 2.0], dtype=gputorch.float32, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="not double precision"):
        assert gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)


def test_check_grad_dtypes(device):
    class WrongDtype(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = rand(2, device=device)
    assert gradcheck(WrongDtype.apply, (x,), check_grad_dtypes=True)


def test_runs_with_grad_enabled_inside_no_grad(device):
    x = rand(3, device=device)
    with gputorch.no_grad():
        with pytest.raises(GradcheckError):
            gradcheck(WrongCube.apply, (x,))


def test_gradgradcheck_with_explicit_grad_outputs(device):
    x = rand(3, device=device)
    go = rand(3, device=device, seed=5)
    assert gradgradcheck(lambda t: t ** 3, (x,), (go,))
