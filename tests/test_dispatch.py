"""The dispatcher's error translation (gputorch/_dispatch.py): a dtype refusal on operands whose
shapes do not broadcast reports the shapes first, as PyTorch does; any other NotImplementedError
(a library refusing work, e.g. cuBLAS during a CUDA graph capture) keeps its own words."""
import pytest

import gputorch
from gputorch._dispatch import apply
from gputorch.autograd.node import Node


class _RefusesDtype(Node):
    def forward(ctx, a, b):
        raise NotImplementedError("\"add_stub\" not implemented for 'Bool'")


class _RefusesWork(Node):
    def forward(ctx, a, b):
        raise NotImplementedError("this library cannot run here")


def test_dtype_refusal_reports_the_shapes_first(device):
    a, b = gputorch.ones(2, 3, device=device), gputorch.ones(3, 4, device=device)
    with pytest.raises(RuntimeError, match="must match the size"):
        apply(_RefusesDtype, a, b)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        apply(_RefusesDtype, a, gputorch.ones(1, 3, device=device))


def test_other_not_implemented_errors_keep_their_message(device):
    a, b = gputorch.ones(2, 3, device=device), gputorch.ones(3, 4, device=device)
    with pytest.raises(NotImplementedError, match="this library cannot run here"):
        apply(_RefusesWork, a, b)


def test_ops_give_inf_and_nan_without_numpy_warnings(device):
    """PyTorch computes overflow, 0/0 and log(0) silently; every op runs with NumPy's floating-point
    errors ignored (a sum or mean past the largest float used to warn)."""
    import warnings
    big = gputorch.tensor([3e38, 3e38], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert big.sum().item() == float("inf") and big.mean().item() == float("inf")
        assert big.reshape(1, 2).sum(1).item() == float("inf")
        assert gputorch.tensor([0.0], device=device).log().item() == float("-inf")
        assert gputorch.tensor([1e300], dtype=gputorch.float64, device=device).float().item() == float("inf")
        x = gputorch.zeros(1, device=device)
        assert (x / x).isnan().item()
