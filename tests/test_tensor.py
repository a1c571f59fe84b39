"""Core Tensor behaviour: metadata, NumPy sharing, views, version counter, detach/.data, moves."""
import copy
import pickle

import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close


def test_metadata(device):
    x = gputorch.zeros(2, 3, 4, device=device)
    assert x.shape == (2, 3, 4) and x.size() == gputorch.Size([2, 3, 4]) and x.size(-1) == 4
    assert x.dim() == x.ndim == 3 and x.numel() == 24 and x.element_size() == 4 and x.nbytes == 96
    assert x.stride() == (12, 4, 1) and x.is_contiguous()
    assert x.dtype is gputorch.float32 and str(x.device).startswith(device)
    assert x.is_cuda == (device == "cuda")
    assert repr(x.shape) == "gputorch.Size([2, 3, 4])"
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(3)


def test_numpy_shares_memory_on_cpu():
    a = np.arange(6, dtype=np.float32)
    t = gputorch.from_numpy(a)
    a[0] = 42
    assert t[0].item() == 42 if hasattr(t, "__getitem__") else t._data[0] == 42
    n = t.numpy()
    n[1] = -1
    assert a[1] == -1
    with pytest.raises(RuntimeError, match="requires grad"):
        gputorch.ones(2, requires_grad=True).numpy()
    assert gputorch.ones(2, requires_grad=True).detach().numpy().tolist() == [1.0, 1.0]


def test_item_tolist_bool(device):
    assert gputorch.tensor(2.5, device=device).item() == 2.5
    assert gputorch.tensor([[1, 2], [3, 4]], device=device).tolist() == [[1, 2], [3, 4]]
    assert isinstance(gputorch.tensor([7], device=device).item(), int)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        gputorch.ones(2, device=device).item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(gputorch.ones(2, device=device))
    assert float(gputorch.tensor([3.0], device=device)) == 3.0 and int(gputorch.tensor(4, device=device)) == 4


def test_requires_grad_rules(device):
    x = gputorch.ones(2, device=device)
    assert not x.requires_grad and x.is_leaf
    x.requires_grad_()
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="floating point"):
        gputorch.ones(2, dtype=gputorch.int64, device=device).requires_grad_()
    with gputorch.no_grad():
        z = x * 2
    assert not z.requires_grad and z.grad_fn is None
    assert (gputorch.ones(2, dtype=gputorch.int64, device=device) * x).requires_grad


def test_views_share_storage_and_version(device):
    base = gputorch.zeros(2, 3, device=device)
    v = base.view(6)
    r = base.reshape(3, 2)
    e = gputorch.zeros(3, device=device).expand(2, 3)
    assert e.shape == (2, 3)
    v.add_(1)
    assert_close(base, np.ones((2, 3), dtype=np.float32))
    assert base._version == v._version == r._version == 1
    assert v._base is base and r._base is base


def test_detach_and_data(device):
    x = gputorch.ones(3, device=device, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)                       # shares storage and version counter with y
    assert y._version == 1
    assert_close(y.detach(), np.full(3, 3.0, dtype=np.float32))
    raw = y.data
    raw.add_(1)                     # .data has its own version counter
    assert y._version == 1
    assert_close(y.detach(), np.full(3, 4.0, dtype=np.float32))
    y2 = x * 3
    y2.detach_()
    assert y2.is_leaf and not y2.requires_grad


def test_data_setter_keeps_identity(device):
    p = gputorch.zeros(3, device=device, requires_grad=True)
    ident = id(p)
    p.data = gputorch.ones(3, dtype=gputorch.float64, device=device)
    assert id(p) == ident and p.dtype is gputorch.float64 and p.requires_grad


def test_to_dtype_device_and_copy(device):
    x = gputorch.tensor([1.5, 2.5], device=device, requires_grad=True)
    assert x.to(device) is x and x.to(x.dtype) is x
    assert x.to(device, copy=True) is not x
    y = x.to(gputorch.float64)
    assert y.dtype is gputorch.float64 and y.grad_fn.name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.dtype is gputorch.float32
    assert x.double().dtype is gputorch.float64 and x.long().dtype is gputorch.int64
    assert x.to(dtype=gputorch.float16).half().dtype is gputorch.float16
    other = gputorch.zeros(1, dtype=gputorch.int32, device=device)
    assert x.to(other).dtype is gputorch.int32 and x.type_as(other).dtype is gputorch.int32
    assert x.cpu().device == gputorch.device("cpu")
    assert x.type() == ("torch.cuda.FloatTensor" if device == "cuda" else "torch.FloatTensor")


def test_cuda_unavailable_errors():
    if gputorch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        gputorch.ones(2).cuda()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        gputorch.ones(2).to("cuda:1")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        gputorch.zeros(2, device="cuda")


def test_pickle_and_deepcopy(device):
    x = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.requires_grad and y.tolist() == [1.0, 2.0] and y.device == x.device
    z = copy.deepcopy(x)
    assert z is not x and z.requires_grad and z.tolist() == [1.0, 2.0]
    z._data[0] = 5
    assert x.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2)


def test_tensor_constructor_forms():
    assert gputorch.Tensor(2, 3).shape == (2, 3) and gputorch.Tensor(2, 3).dtype is gputorch.float32
    t = gputorch.Tensor([1, 2])
    assert t.dtype is gputorch.float32 and t.tolist() == [1.0, 2.0]
    assert isinstance(gputorch.ones(1), gputorch.Tensor)


def test_len_and_hash(device):
    x = gputorch.zeros(4, 2, device=device)
    assert len(x) == 4
    assert len({x, x, gputorch.zeros(1, device=device)}) == 2
    with pytest.raises(TypeError):
        len(gputorch.tensor(1.0, device=device))
