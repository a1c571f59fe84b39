"""F.affine_grid and F.grid_sample (gputorch/nn/functional/grid_sampling.py) and F.gumbel_softmax
(gumbel.py): values and gradients against PyTorch for every mode, padding and corner alignment,
gradcheck, errors."""
import itertools
import warnings

import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(10)
X2, G2 = RNG.standard_normal((2, 3, 4, 5)), RNG.uniform(-1.3, 1.3, (2, 3, 6, 2))
X3, G3 = RNG.standard_normal((1, 2, 3, 4, 5)), RNG.uniform(-1.3, 1.3, (1, 2, 3, 2, 3))


@pytest.mark.parametrize("dims,mode,padding_mode,align_corners", list(itertools.product(
    (2, 3), ("bilinear", "nearest"), ("zeros", "border", "reflection"), (True, False))))
def test_grid_sample_matches_torch(device, dims, mode, padding_mode, align_corners):
    x, g = (X2, G2) if dims == 2 else (X3, G3)
    xi = gputorch.tensor(x, device=device, requires_grad=True)
    gi = gputorch.tensor(g, device=device, requires_grad=True)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    out = F.grid_sample(xi, gi, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    tout = TF.grid_sample(tx, tg, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    assert_close(out, tout, 1e-12, 1e-12)
    weights = np.arange(out.numel()).reshape(tuple(out.shape)) % 7 - 3.0
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    assert_close(xi.grad, tx.grad, 1e-12, 1e-12)
    assert_close(gi.grad, tg.grad, 1e-10, 1e-10)      # zeros for nearest, as torch's


def test_grid_sample_gradcheck(device):
    x = gputorch.tensor(X2[:1, :2, :3, :4], device=device, requires_grad=True)
    g = gputorch.tensor(G2[:1, :2, :3], device=device, requires_grad=True)
    for padding_mode in ("zeros", "border", "reflection"):
        assert gradcheck(lambda a, b: F.grid_sample(a, b, padding_mode=padding_mode, align_corners=False), (x, g))


@pytest.mark.parametrize("size,align_corners", [((2, 3, 4, 5), True), ((2, 3, 4, 5), False), ((2, 1, 1, 5), False),
                                                ((2, 1, 2, 3, 4), True), ((2, 1, 2, 3, 4), False)])
def test_affine_grid_matches_torch(device, size, align_corners):
    theta = RNG.standard_normal((2, len(size) - 2, len(size) - 1))
    t, tt = gputorch.tensor(theta, device=device, requires_grad=True), torch.tensor(theta, requires_grad=True)
    out = F.affine_grid(t, size, align_corners=align_corners)
    tout = TF.affine_grid(tt, size, align_corners=align_corners)
    assert_close(out, tout, 1e-12, 1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    assert_close(t.grad, tt.grad, 1e-12, 1e-12)


def test_spatial_transformer_errors_and_default_warning(device):
    theta = gputorch.zeros(1, 2, 3, device=device)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        grid = F.affine_grid(theta, (1, 1, 2, 2))
    with pytest.raises(NotImplementedError, match="only supports 4D and 5D sizes"):
        F.affine_grid(theta, (1, 2, 3), align_corners=False)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(theta[:, :1], (1, 2, 3, 4), align_corners=False)
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(theta.long(), (1, 2, 3, 4), align_corners=False)
    x = gputorch.ones(1, 1, 2, 2, device=device)
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic'"):
        F.grid_sample(x, grid, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, grid, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x[0], grid, align_corners=False)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.grid_sample(x.long(), grid.long(), align_corners=False)


def test_grid_sample_outside_points_read_zero_even_next_to_infinities(device):
    x = gputorch.tensor([[[[-float("inf")], [1.0], [2.0]]]], dtype=gputorch.float64, device=device)
    grid = gputorch.tensor([[[[-0.84, -1.06], [0.0, float("nan")]]]], dtype=gputorch.float64, device=device)
    tx, tgrid = torch.tensor(x.cpu()._data), torch.tensor(grid.cpu()._data)
    assert_close(F.grid_sample(x, grid, align_corners=False), TF.grid_sample(tx, tgrid, align_corners=False), 0, 0)


def test_gumbel_softmax(device):
    logits = gputorch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], device=device, requires_grad=True)
    gputorch.manual_seed(0)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert_close(soft.sum(-1), torch.ones(2), 1e-6, 1e-6)
    gputorch.manual_seed(0)
    assert_close(F.gumbel_softmax(logits, tau=0.5), soft, 0, 0)       # the default generator's noise
    hard = F.gumbel_softmax(logits, hard=True, dim=1)
    assert sorted(hard.detach().reshape(-1).tolist()) == [0.0] * 4 + [1.0] * 2
    (hard * gputorch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0   # the soft sample's gradient
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.gumbel_softmax(logits, eps=1e-5)
    assert "`eps` parameter is deprecated" in str(caught[0].message)
