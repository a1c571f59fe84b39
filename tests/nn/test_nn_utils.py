"""nn.utils: clip_grad_norm_ / get_total_norm / clip_grads_with_norm_ / clip_grad_value_ and
parameters_to_vector / vector_to_parameters, against torch."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.nn.utils import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                               get_total_norm, parameters_to_vector, vector_to_parameters)
from tests._helpers import assert_close, to_numpy

RTOL, ATOL = 1e-12, 1e-14


def _torch():
    return pytest.importorskip("torch")


SHAPES = [(3, 4), (5,), (2, 3, 2), ()]


def _pair_with_grads(torch, device, scale=1.0, skip=()):
    ours, theirs = [], []
    for i, shape in enumerate(SHAPES):
        data, grad = np.random.randn(*shape), np.random.randn(*shape) * scale
        p = nn.Parameter(gputorch.tensor(data, device=device))
        tp = torch.nn.Parameter(torch.tensor(data))
        if i not in skip:
            p.grad = gputorch.tensor(grad, device=device)
            tp.grad = torch.tensor(grad)
        ours.append(p)
        theirs.append(tp)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, device):
    torch = _torch()
    ours, theirs = _pair_with_grads(torch, device, skip=(1,))
    total = clip_grad_norm_(ours, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert total.shape == () and total.dtype == gputorch.float64
    # torch's foreach norm sums p-th powers in its own order: the brief's 1e-10 tolerance
    assert_close(total, expected, 1e-10, ATOL)
    for p, tp in zip(ours, theirs):
        if tp.grad is None:
            assert p.grad is None
        else:
            assert_close(p.grad, tp.grad, 1e-10, ATOL)
    if max_norm == 0.5:
        clipped = get_total_norm([p.grad for p in ours if p.grad is not None], norm_type)
        assert abs(clipped.item() - 0.5) < 1e-5


def test_clip_grad_norm_accepts_one_tensor_and_generators(device):
    torch = _torch()
    ours, theirs = _pair_with_grads(torch, device, scale=5.0)
    total = clip_grad_norm_(ours[0], 1.0)
    assert_close(total, torch.nn.utils.clip_grad_norm_(theirs[0], 1.0), RTOL, ATOL)
    assert_close(ours[0].grad, theirs[0].grad, RTOL, ATOL)
    model = nn.Linear(3, 2, device=device)
    model(gputorch.randn(4, 3, device=device)).sum().backward()
    total = clip_grad_norm_(model.parameters(), 0.1)
    assert abs(get_total_norm([p.grad for p in model.parameters()]).item() - 0.1) < 1e-5
    assert total.item() > 0.1
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_without_grads_returns_zero(device):
    p = nn.Parameter(gputorch.ones(3, device=device))
    total = clip_grad_norm_([p], 1.0)
    assert total.item() == 0.0 and p.grad is None


def test_clip_grad_norm_nonfinite(device):
    p = nn.Parameter(gputorch.ones(3, device=device))
    p.grad = gputorch.tensor([1.0, float("inf"), 0.0], device=device)
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_([p], 1.0)
    assert total.item() == float("inf")


def test_get_total_norm_and_clip_with_norm(device):
    torch = _torch()
    ours, theirs = _pair_with_grads(torch, device)
    total = get_total_norm([p.grad for p in ours], 2.0)
    expected = torch.nn.utils.get_total_norm([p.grad for p in theirs], 2.0)
    assert_close(total, expected, RTOL, ATOL)
    clip_grads_with_norm_(ours, 1.0, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0, expected)
    for p, tp in zip(ours, theirs):
        assert_close(p.grad, tp.grad, RTOL, ATOL)


def test_deprecated_clip_grad_norm(device):
    p = nn.Parameter(gputorch.ones(3, device=device))
    p.grad = gputorch.ones(3, device=device)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        clip_grad_norm([p], 1.0)


def test_clip_grad_value_matches_torch(device):
    torch = _torch()
    ours, theirs = _pair_with_grads(torch, device, scale=2.0, skip=(2,))
    assert clip_grad_value_(ours, 0.7) is None
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for p, tp in zip(ours, theirs):
        if tp.grad is not None:
            assert_close(p.grad, tp.grad, 0, 0)
            assert np.abs(to_numpy(p.grad)).max() <= 0.7


def test_clipping_is_not_recorded(device):
    p = nn.Parameter(gputorch.ones(3, device=device))
    p.grad = gputorch.full((3,), 4.0, device=device, requires_grad=True) * 1.0
    clip_grad_norm_([p], 1.0)
    clip_grad_value_([p], 0.1)
    assert to_numpy(p.grad).max() <= 0.1


# ================================================================ flat vectors
def test_parameters_to_vector_and_back(device):
    torch = _torch()
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).to(device=device, dtype=gputorch.float64)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)).double()
    from tests.nn._models import copy_state
    copy_state(tmodel, model, gputorch, device)
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (26,)
    assert_close(vec, torch.nn.utils.parameters_to_vector(tmodel.parameters()), 0, 0)
    vec.sum().backward()       # differentiable
    assert (to_numpy(model[0].weight.grad) == 1).all()
    new = gputorch.arange(26, dtype=gputorch.float64, device=device)
    vector_to_parameters(new, model.parameters())
    assert_close(model[0].weight, np.arange(12.0).reshape(4, 3), 0, 0)
    assert_close(model[1].bias, [24.0, 25.0], 0, 0)
    with gputorch.no_grad():
        new[0] = 100.0             # the parameters share the vector's memory, as in torch
    assert model[0].weight[0, 0].item() == 100.0
    assert isinstance(model[0].weight, nn.Parameter)


def test_vector_to_parameters_errors(device):
    with pytest.raises(TypeError, match="expected torch.Tensor, but got"):
        vector_to_parameters([1.0, 2.0], [nn.Parameter(gputorch.ones(2))])


def test_parameters_on_different_devices(device):
    if device == "cpu" or gputorch.cuda.device_count() < 1:
        pytest.skip("needs a CUDA device")
    params = [nn.Parameter(gputorch.ones(2)), nn.Parameter(gputorch.ones(2, device=device))]
    with pytest.raises(TypeError, match="Found two parameters on different devices"):
        parameters_to_vector(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        total = clip_grad_norm_(params, 1.0)
    assert total.item() == 0.0
