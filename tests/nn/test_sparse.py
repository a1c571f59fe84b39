"""Embedding and F.embedding: parity with torch (lookups, weight gradients with padding_idx and
scale_grad_by_freq, max_norm renormalisation), gradcheck/gradgradcheck w.r.t. the weight,
initialisation, from_pretrained, reprs and errors."""
import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.autograd import gradcheck, gradgradcheck
from gputorch.nn import functional as F
from tests._helpers import assert_close, to_numpy
from tests.nn._models import copy_state

RTOL, ATOL = 1e-12, 1e-14


def _torch():
    return pytest.importorskip("torch")


INDICES = np.array([[1, 2, 4, 2], [4, 3, 2, 0], [1, 1, 1, 6]])


@pytest.mark.parametrize("padding_idx", [None, 1, -3])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_parity(padding_idx, scale, index_dtype, device):
    torch = _torch()
    wdata = np.random.randn(7, 5)
    w = gputorch.tensor(wdata, device=device, requires_grad=True)
    tw = torch.tensor(wdata, requires_grad=True)
    idx = gputorch.tensor(INDICES.astype(index_dtype), device=device)
    tidx = torch.tensor(INDICES.astype(index_dtype))
    out = F.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale)
    ref = torch.nn.functional.embedding(tidx, tw, padding_idx=padding_idx, scale_grad_by_freq=scale)
    assert out.grad_fn.name() == ref.grad_fn.name() == "EmbeddingBackward0"
    assert_close(out, ref, 0, 0)
    g = np.random.randn(*ref.shape)
    out.backward(gputorch.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    assert_close(w.grad, tw.grad, RTOL, ATOL)


def test_embedding_gradcheck_wrt_weight(device):
    w = gputorch.tensor(np.random.randn(7, 3), device=device, requires_grad=True)
    idx = gputorch.tensor(INDICES, device=device)
    fn = lambda weight: F.embedding(idx, weight)  # noqa: E731
    assert gradcheck(fn, (w,))
    assert gradgradcheck(fn, (w,))


@pytest.mark.parametrize("padding_idx,scale", [(None, False), (2, False), (None, True), (4, True)])
def test_embedding_weight_gradient_op_is_differentiable(padding_idx, scale, device):
    # With padding_idx / scale_grad_by_freq the weight "gradient" is PyTorch's modified one, not the
    # true derivative; the op computing it is linear in the output gradient, and its own backward
    # (double backward) must be that map's exact adjoint.
    w = gputorch.tensor(np.random.randn(7, 3), device=device, requires_grad=True)
    idx = gputorch.tensor(INDICES, device=device)

    def weight_grad(g):
        out = F.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale)
        return gputorch.autograd.grad(out, w, g, create_graph=True)[0]

    g = gputorch.tensor(np.random.randn(3, 4, 3), device=device, requires_grad=True)
    assert weight_grad(g).grad_fn.name() == "EmbeddingDenseBackward0"
    assert gradcheck(weight_grad, (g,))
    assert gradgradcheck(weight_grad, (g,))


def test_embedding_double_backward_matches_torch(device):
    torch = _torch()
    wdata = np.random.randn(7, 3)
    w = gputorch.tensor(wdata, device=device, requires_grad=True)
    tw = torch.tensor(wdata, requires_grad=True)
    idx, tidx = gputorch.tensor(INDICES, device=device), torch.tensor(INDICES)
    out = (F.embedding(idx, w, padding_idx=2) ** 2).sum()
    ref = (torch.nn.functional.embedding(tidx, tw, padding_idx=2) ** 2).sum()
    (g,) = gputorch.autograd.grad(out, w, create_graph=True)
    (tg,) = torch.autograd.grad(ref, tw, create_graph=True)
    assert_close(g, tg, RTOL, ATOL)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    assert_close(w.grad, tw.grad, RTOL, ATOL)


def test_embedding_shapes(device):
    w = gputorch.randn(5, 3, device=device)
    assert F.embedding(gputorch.tensor(2, device=device), w).shape == (3,)
    assert F.embedding(gputorch.zeros(0, 4, dtype=gputorch.int64, device=device), w).shape == (0, 4, 3)
    idx = gputorch.tensor([[0, 1], [2, 3]], device=device).t()   # non-contiguous indices
    assert_close(F.embedding(idx, w), to_numpy(w)[to_numpy(idx)], 0, 0)


def test_embedding_max_norm_renormalises_in_place_like_torch(device):
    torch = _torch()
    wdata = np.random.randn(6, 4) * 2
    for norm_type in (2.0, 1.0, 3.0, float("inf")):
        w = gputorch.tensor(wdata, device=device, requires_grad=True)
        tw = torch.tensor(wdata, requires_grad=True)
        idx = gputorch.tensor([1, 1, 3, 5], device=device)
        out = F.embedding(idx, w, max_norm=1.5, norm_type=norm_type)
        ref = torch.nn.functional.embedding(torch.tensor([1, 1, 3, 5]), tw, max_norm=1.5, norm_type=norm_type)
        assert_close(out, ref, RTOL, ATOL)
        assert_close(w, tw, RTOL, ATOL)        # rows 1, 3, 5 renormalised in place, the others kept
        assert w._version == tw._version == 1
        out.sum().backward()
        ref.sum().backward()
        assert_close(w.grad, tw.grad, RTOL, ATOL)


def test_embedding_errors(device):
    w = gputorch.randn(5, 3, device=device)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got torch.FloatTensor instead"):
        F.embedding(gputorch.tensor([1.0, 2.0], device=device) if device == "cpu" else
                    gputorch.tensor([1.0, 2.0]), w.cpu())
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(gputorch.tensor([1, 5], device=device), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(gputorch.tensor([-1], device=device), w)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(gputorch.tensor([1], device=device), gputorch.randn(5, device=device))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(gputorch.tensor([1], device=device), w, padding_idx=5)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=-6)


# ================================================================ nn.Embedding
def test_module_init_padding_and_grads(device):
    gputorch.manual_seed(0)
    m = nn.Embedding(1000, 64, padding_idx=3, device=device, dtype=gputorch.float64)
    w = to_numpy(m.weight)
    assert m.weight.shape == (1000, 64) and m.weight.device.type == device
    assert (w[3] == 0).all()
    rest = np.delete(w, 3, axis=0)
    assert abs(rest.mean()) < 0.01 and abs(rest.std() - 1) < 0.01     # N(0, 1)
    out = m(gputorch.tensor([[3, 4, 3], [5, 3, 4]], device=device))
    assert (to_numpy(out)[0, 0] == 0).all()
    out.sum().backward()
    g = to_numpy(m.weight.grad)
    assert (g[3] == 0).all() and (g[4] == 2).all() and (g[5] == 1).all()
    assert nn.Embedding(5, 3, padding_idx=-2).padding_idx == 3


def test_module_parity_and_state_dict(device):
    torch = _torch()
    ref = torch.nn.Embedding(10, 4, padding_idx=0, scale_grad_by_freq=True).double()
    ours = nn.Embedding(10, 4, padding_idx=0, scale_grad_by_freq=True, device=device, dtype=gputorch.float64)
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["weight"]
    copy_state(ref, ours, gputorch, device)
    idx = np.random.randint(0, 10, (4, 6))
    out, expected = ours(gputorch.tensor(idx, device=device)), ref(torch.tensor(idx))
    assert_close(out, expected, 0, 0)
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    assert_close(ours.weight.grad, ref.weight.grad, RTOL, ATOL)


def test_module_repr_matches_torch():
    torch = _torch()
    for args, kwargs in [((5, 3), {}), ((5, 3), {"padding_idx": 1, "max_norm": 2.0, "norm_type": 3.0,
                                                 "scale_grad_by_freq": True, "sparse": True}),
                         ((5, 3), {"norm_type": 2})]:
        with pytest.warns(UserWarning) if kwargs.get("sparse") else _no_warning():
            ours = nn.Embedding(*args, **kwargs)
            if kwargs.get("sparse"):
                ours(gputorch.tensor([1]))
        assert repr(ours) == repr(torch.nn.Embedding(*args, **kwargs))


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_from_pretrained(device):
    data = gputorch.randn(4, 3, dtype=gputorch.float64, device=device)
    m = nn.Embedding.from_pretrained(data, padding_idx=1)
    assert not m.weight.requires_grad
    assert m.weight.data_ptr() == data.data_ptr()      # shared, not copied
    assert (to_numpy(m.weight)[1] != 0).any()          # the padding row is not zeroed
    assert m.padding_idx == 1 and m.num_embeddings == 4 and m.embedding_dim == 3
    trainable = nn.Embedding.from_pretrained(data.clone(), freeze=False)
    trainable(gputorch.tensor([0, 1], device=device)).sum().backward()
    assert trainable.weight.grad is not None
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(gputorch.randn(5, device=device))
    with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings and embedding_dim"):
        nn.Embedding(5, 3, _weight=gputorch.randn(5, 4, device=device))


def test_module_max_norm(device):
    torch = _torch()
    ref = torch.nn.Embedding(6, 3, max_norm=1.0).double()
    ours = nn.Embedding(6, 3, max_norm=1.0, device=device, dtype=gputorch.float64)
    copy_state(ref, ours, gputorch, device)
    idx = [[0, 2], [2, 5]]
    assert_close(ours(gputorch.tensor(idx, device=device)), ref(torch.tensor(idx)), RTOL, ATOL)
    assert_close(ours.weight, ref.weight, RTOL, ATOL)
    norms = np.linalg.norm(to_numpy(ours.weight), axis=1)
    assert (norms[[0, 2, 5]] <= 1.0 + 1e-12).all()
