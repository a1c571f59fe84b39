"""torch.vander (gputorch/ops/polynomials.py): decreasing and increasing powers, dtypes, sizes,
gradient (gradcheck: torch 2.13's own vander backward fails) and errors."""
import pytest

import gputorch
from gputorch.autograd import gradcheck
from tests._helpers import assert_close

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("args", [(), (2,), (4, True), (0,), (1,)])
def test_vander_matches_torch(device, args):
    for data in ([1.5, -2.0, 3.0], [1, 2, 3], [True, False]):
        ours = gputorch.vander(gputorch.tensor(data, device=device), *args)
        theirs = torch.vander(torch.tensor(data), *args)
        assert_close(ours, theirs, 0, 0)


def test_vander_gradient_and_errors(device):
    x = gputorch.tensor([1.5, -2.0, 0.0, 0.5], dtype=gputorch.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: gputorch.vander(t, 5), (x,))
    assert gradcheck(lambda t: gputorch.vander(t, increasing=True), (x,))
    with pytest.raises(RuntimeError, match="one-dimensional"):
        gputorch.vander(gputorch.ones(2, 2, device=device))
    with pytest.raises(RuntimeError, match="N must be non-negative"):
        gputorch.vander(gputorch.ones(2, device=device), -1)
