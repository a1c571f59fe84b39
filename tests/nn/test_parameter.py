"""nn.Parameter and nn.Buffer."""
import copy
import pickle

import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import to_numpy


def test_parameter_is_a_leaf_tensor_sharing_storage(device):
    data = gputorch.zeros(2, 3, device=device)
    p = nn.Parameter(data)
    assert isinstance(p, gputorch.Tensor) and isinstance(p, nn.Parameter)
    assert type(p) is nn.Parameter
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.shape == (2, 3) and p.dtype == gputorch.float32 and str(p.device).startswith(device)
    data.add_(1)  # shares storage with its data
    np.testing.assert_array_equal(to_numpy(p), np.ones((2, 3)))


def test_parameter_requires_grad_false_and_default_empty(device):
    p = nn.Parameter(gputorch.ones(3, device=device), requires_grad=False)
    assert not p.requires_grad
    empty = nn.Parameter()
    assert empty.shape == (0,) and empty.requires_grad


def test_parameter_from_non_leaf_is_a_new_leaf(device):
    x = gputorch.ones(2, device=device, requires_grad=True)
    y = x * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_parameter_integer_data_cannot_require_grad(device):
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(gputorch.arange(3, device=device))
    p = nn.Parameter(gputorch.arange(3, device=device), requires_grad=False)
    assert p.dtype == gputorch.int64


def test_parameter_rejects_non_tensor():
    with pytest.raises(TypeError, match="Tensor"):
        nn.Parameter([1.0, 2.0])


def test_ops_on_parameter_return_plain_tensors(device):
    p = nn.Parameter(gputorch.ones(2, device=device))
    for out in (p * 2, p + p, p.detach(), p.data, p.sum()):
        assert type(out) is gputorch.Tensor
    assert (p * 2).grad_fn is not None


def test_parameter_gradient_accumulates(device):
    p = nn.Parameter(gputorch.tensor([1.0, 2.0], device=device))
    (p * p).sum().backward()
    np.testing.assert_allclose(to_numpy(p.grad), [2.0, 4.0])
    assert type(p.grad) is gputorch.Tensor


def test_parameter_repr_matches_torch():
    torch = pytest.importorskip("torch")
    arr = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=np.float32)
    p = nn.Parameter(gputorch.tensor(arr))
    tp = torch.nn.Parameter(torch.tensor(arr))
    assert repr(p).startswith("Parameter containing:\n")
    assert repr(p) == repr(tp)
    q = nn.Parameter(gputorch.tensor(arr), requires_grad=False)
    assert repr(q) == repr(torch.nn.Parameter(torch.tensor(arr), requires_grad=False))


def test_parameter_deepcopy_keeps_type_and_copies_data(device):
    p = nn.Parameter(gputorch.tensor([1.0, 2.0], device=device))
    p.grad = gputorch.ones(2, device=device)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q is not p
    assert q.requires_grad and q.grad is None  # like torch: the grad is not copied
    np.testing.assert_array_equal(to_numpy(q), [1.0, 2.0])
    with gputorch.no_grad():
        p.mul_(3)
    np.testing.assert_array_equal(to_numpy(q), [1.0, 2.0])
    frozen = nn.Parameter(gputorch.ones(1, device=device), requires_grad=False)
    assert not copy.deepcopy(frozen).requires_grad
    memo_target = [p, p]
    copied = copy.deepcopy(memo_target)
    assert copied[0] is copied[1]


def test_parameter_pickle_round_trip():
    p = nn.Parameter(gputorch.tensor([1.0, -1.0]), requires_grad=False)
    p.tag = "w"
    p.grad = gputorch.ones(2)
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is nn.Parameter and not q.requires_grad and q.tag == "w" and q.grad is None
    np.testing.assert_array_equal(to_numpy(q), [1.0, -1.0])
    r = pickle.loads(pickle.dumps(nn.Parameter(gputorch.zeros(3))))
    assert r.requires_grad


def test_parameter_data_setter_keeps_identity(device):
    p = nn.Parameter(gputorch.zeros(2, device=device))
    p.data = gputorch.ones(2, dtype=gputorch.float64, device=device)
    assert type(p) is nn.Parameter and p.dtype == gputorch.float64
    np.testing.assert_array_equal(to_numpy(p), [1.0, 1.0])


def test_buffer_marks_a_detached_tensor(device):
    t = gputorch.ones(2, device=device)
    b = nn.Buffer(t)
    assert isinstance(b, nn.Buffer) and isinstance(b, gputorch.Tensor)
    assert not isinstance(t, nn.Buffer)
    assert b.persistent is True
    assert nn.Buffer(t, persistent=False).persistent is False
    assert not isinstance(nn.Parameter(t), nn.Buffer)
    x = gputorch.ones(2, device=device, requires_grad=True)
    bx = nn.Buffer(x * 2)
    assert bx.requires_grad and bx.is_leaf
