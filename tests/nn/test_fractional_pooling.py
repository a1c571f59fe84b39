"""F.fractional_max_pool2d/3d (gputorch/nn/functional/fractional_pooling.py) and the
FractionalMaxPool2d/3d modules: windows placed from the random samples as PyTorch places them,
values, indices and gradients against PyTorch, and the errors."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from tests._helpers import assert_close

torch = pytest.importorskip("torch")
TF = torch.nn.functional


@pytest.mark.parametrize("dims,sizes,kernel,out", [
    (2, (7, 9), (2, 2), (3, 4)), (2, (5, 6), (1, 3), (5, 4)),
    (3, (5, 6, 7), (2, 2, 2), (2, 3, 4)), (3, (4, 5, 6), (1, 2, 3), (1, 3, 2))])
def test_matches_torch(device, dims, sizes, kernel, out):
    rng = np.random.default_rng(17)
    x = rng.standard_normal((2, 3) + sizes)
    samples = rng.uniform(0, 1, (2, 3, dims))
    xi, tx = gputorch.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = getattr(F, f"fractional_max_pool{dims}d")(xi, kernel, output_size=out, return_indices=True,
                                                      _random_samples=gputorch.tensor(samples, device=device))
    theirs = getattr(TF, f"fractional_max_pool{dims}d")(tx, kernel, output_size=out, return_indices=True,
                                                         _random_samples=torch.tensor(samples))
    assert_close(ours[0], theirs[0], 0, 0)
    assert_close(ours[1], theirs[1], 0, 0)
    weights = np.arange(ours[0].numel()).reshape(tuple(ours[0].shape)) % 5 + 1.0
    (ours[0] * gputorch.tensor(weights, device=device)).sum().backward()
    (theirs[0] * torch.tensor(weights)).sum().backward()
    assert_close(xi.grad, tx.grad, 0, 0)


def test_modules_unbatched_input_and_ratio(device):
    rng = np.random.default_rng(18)
    x = rng.standard_normal((3, 8, 8))
    samples = rng.uniform(0, 1, (1, 3, 2))
    pool = gputorch.nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=gputorch.tensor(samples)).to(device)
    tpool = torch.nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=torch.tensor(samples))
    assert_close(pool(gputorch.tensor(x, device=device)), tpool(torch.tensor(x)), 0, 0)
    gputorch.manual_seed(0)
    y = gputorch.nn.FractionalMaxPool3d(2, output_size=2)(gputorch.ones(1, 2, 4, 4, 4, device=device))
    assert y.shape == (1, 2, 2, 2, 2) and float(y.sum()) == 16.0


def test_errors(device):
    x = gputorch.ones(1, 1, 7, 7, device=device)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 7"):
        F.fractional_max_pool2d(x, 3, output_size=(6, 4))
    with pytest.raises(RuntimeError, match="Expect _random_samples.size\\(2\\) equals to 2; got 3"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=gputorch.rand(1, 1, 3, device=device))
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        gputorch.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        gputorch.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
