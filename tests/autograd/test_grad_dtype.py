"""Tensor.grad_dtype: the dtype a leaf's incoming gradients are cast to (its own by default, any
with None), leaves only, as PyTorch's."""
import pytest

import gputorch


def test_gradients_are_cast_to_the_leaf_grad_dtype():
    x = gputorch.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad_dtype == gputorch.float32
    x.grad_dtype = gputorch.float16
    (x * 2).sum().backward()
    assert x.grad.dtype == gputorch.float16 and x.grad.tolist() == [2.0, 2.0]
    default = gputorch.tensor([1.0, 2.0], requires_grad=True)
    default.backward(gputorch.ones(2, dtype=gputorch.float64))
    assert default.grad.dtype == gputorch.float32        # cast to the leaf's own dtype
    anything = gputorch.tensor([1.0, 2.0], requires_grad=True)
    anything.grad_dtype = None
    anything.backward(gputorch.ones(2, dtype=gputorch.float64))
    assert anything.grad_dtype is None and anything.grad.dtype == gputorch.float64
    assert gputorch.tensor([1, 2]).grad_dtype == gputorch.int64


def test_grad_dtype_errors():
    x = gputorch.tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="can only be accessed on leaf tensors"):
        y.grad_dtype
    with pytest.raises(RuntimeError, match="can only be set on leaf tensors"):
        y.grad_dtype = gputorch.float64
    y.sum().backward()
    with pytest.raises(RuntimeError, match="already a gradient with dtype 'float'"):
        x.grad_dtype = gputorch.float64
    x.grad = None
    x.grad_dtype = gputorch.float64
    assert x.grad_dtype == gputorch.float64
