"""``autograd.Variable``: PyTorch's legacy alias (every tensor is one; calling it detaches and sets
requires_grad), and ``Tensor._is_view``, as the torchviz package uses them."""
import pytest

import gputorch
from gputorch.autograd import Variable


def test_variable_is_the_legacy_alias(device):
    t = gputorch.ones(2, device=device)
    v = Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and not t.requires_grad and v.is_leaf
    assert isinstance(t, Variable) and isinstance(v, Variable) and not isinstance(1.0, Variable)
    v.data.add_(1)                     # shares t's data
    assert t.tolist() == [2.0, 2.0]
    assert Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0])


def test_is_view(device):
    base = gputorch.ones(4, device=device)
    assert not base._is_view() and base[1:]._is_view() and base.view(2, 2)._is_view()
    assert not base.clone()._is_view()
