"""AdaptiveLogSoftmaxWithLoss against torch after loading torch's state dict: outputs, loss,
parameter gradients, log_prob, predict (all three branches), unbatched input, errors."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close


def _pair(device, head_bias=True):
    torch = pytest.importorskip("torch")
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=head_bias).double()
    g = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=head_bias, device=device).double()
    assert list(g.state_dict()) == list(t.state_dict())
    g.load_state_dict({k: gputorch.tensor(v.numpy(), device=device) for k, v in t.state_dict().items()})
    return torch, g, t


def test_forward_loss_and_gradients(device):
    torch, g, t = _pair(device)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 8)), np.array([0, 4, 9, 2, 7, 5])
    out, expected = g(gputorch.tensor(x, device=device), gputorch.tensor(y, device=device)), \
        t(torch.tensor(x), torch.tensor(y))
    assert_close(out.output, expected.output, rtol=1e-12, atol=1e-14)
    assert_close(out.loss, expected.loss, rtol=1e-12, atol=1e-14)
    out.loss.backward()
    expected.loss.backward()
    for (name, p), (_, q) in zip(g.named_parameters(), t.named_parameters()):
        assert_close(p.grad, q.grad, rtol=1e-10, atol=1e-14)
    assert_close(g.log_prob(gputorch.tensor(x, device=device)), t.log_prob(torch.tensor(x)), rtol=1e-12, atol=1e-14)
    single = g(gputorch.tensor(x[0], device=device), gputorch.tensor(y[2], device=device))
    assert single.output.shape == ()
    assert_close(single.output, t(torch.tensor(x[0]), torch.tensor(y[2])).output, rtol=1e-12, atol=1e-14)
    assert repr(g) == repr(t)


@pytest.mark.parametrize("bias", [(5.0, 0.0, 0.0), (-5.0, 5.0, 5.0), (0.0, 0.0, 0.0)])
def test_predict_branches(bias, device):
    """Head biased towards the shortlist, towards the clusters, or neutral (a mix)."""
    torch, g, t = _pair(device)
    b = np.array([bias[0]] * 3 + [bias[1], bias[2]])
    with torch.no_grad():
        t.head.bias.copy_(torch.tensor(b))
    with gputorch.no_grad():
        g.head.bias.copy_(gputorch.tensor(b, device=device))
    x = np.random.default_rng(1).standard_normal((9, 8)) * 3
    assert_close(g.predict(gputorch.tensor(x, device=device)), t.predict(torch.tensor(x)), rtol=0, atol=0)


def test_errors(device):
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    with pytest.raises(ValueError, match="unique, positive integers sorted"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3], device=device)
    x = gputorch.randn(2, 4, device=device)
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 9\\]"):
        m(x, gputorch.tensor([1, 12], device=device))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(x, gputorch.tensor([1], device=device))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        m(x, gputorch.tensor([[1]], device=device))
