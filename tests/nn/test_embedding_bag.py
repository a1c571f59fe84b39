"""F.embedding_bag and nn.EmbeddingBag against torch: every mode, offsets (with and without the
last offset), 2-D input, per_sample_weights, padding_idx, max_norm, scale_grad_by_freq,
from_pretrained; outputs and the gradients of the weight (and of per_sample_weights); errors."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from gputorch import nn
from tests._helpers import assert_close


def _torch():
    return pytest.importorskip("torch")


WEIGHT = np.random.default_rng(0).standard_normal((6, 3))
INDICES = np.array([1, 2, 4, 4, 3, 0, 5, 2])


def _parity(device, kwargs, indices=INDICES, offsets=(0, 3, 3, 5), psw=None, weight=WEIGHT):
    torch = _torch()
    gw = gputorch.tensor(weight, device=device, requires_grad=True)
    tw = torch.tensor(weight, requires_grad=True)
    gi, ti = gputorch.tensor(indices, device=device), torch.tensor(indices)
    go = gt = None
    if offsets is not None:
        go, gt = gputorch.tensor(np.array(offsets), device=device), torch.tensor(np.array(offsets))
    gp = tp = None
    if psw is not None:
        gp = gputorch.tensor(psw, device=device, requires_grad=True)
        tp = torch.tensor(psw, requires_grad=True)
    out = F.embedding_bag(gi, gw, go, per_sample_weights=gp, **kwargs)
    expected = torch.nn.functional.embedding_bag(ti, tw, gt, per_sample_weights=tp, **kwargs)
    assert_close(out, expected, rtol=1e-12, atol=1e-14)
    grad = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(grad, device=device))
    expected.backward(torch.tensor(grad))
    assert_close(gw.grad, tw.grad, rtol=1e-12, atol=1e-14)
    if psw is not None:
        assert_close(gp.grad, tp.grad, rtol=1e-12, atol=1e-14)
    assert_close(gw.detach(), tw.detach(), rtol=1e-12, atol=1e-14)    # max_norm's in-place renorm


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4, -1])
def test_offsets_with_an_empty_bag(mode, padding_idx, device):
    _parity(device, dict(mode=mode, padding_idx=padding_idx))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_include_last_offset_and_2d_input(mode, device):
    _parity(device, dict(mode=mode, include_last_offset=True), offsets=(0, 2, 2, 6, 8))
    _parity(device, dict(mode=mode), indices=INDICES.reshape(4, 2), offsets=None)


def test_per_sample_weights_and_scale_grad_by_freq(device):
    psw = np.random.default_rng(2).uniform(0.5, 2.0, INDICES.shape)
    _parity(device, dict(mode="sum", padding_idx=2), psw=psw)
    _parity(device, dict(mode="sum"), indices=INDICES.reshape(2, 4), offsets=None, psw=psw.reshape(2, 4))


def test_scale_grad_by_freq_divides_by_each_index_count(device):
    """torch's own embedding_bag backward reads the counts of the wrong rows here (an indexing
    slip in its CPU kernel: the k-th distinct index gets the count of the k-th sorted index), so
    the reference is torch's embedding with scale_grad_by_freq, averaged per bag."""
    torch = _torch()
    gw = gputorch.tensor(WEIGHT, device=device, requires_grad=True)
    tw = torch.tensor(WEIGHT, requires_grad=True)
    out = F.embedding_bag(gputorch.tensor(INDICES, device=device), gw, gputorch.tensor([0, 3, 5], device=device),
                          mode="mean", scale_grad_by_freq=True)
    rows = torch.nn.functional.embedding(torch.tensor(INDICES), tw, scale_grad_by_freq=True)
    expected = torch.stack([rows[0:3].mean(0), rows[3:5].mean(0), rows[5:].mean(0)])
    assert_close(out, expected, rtol=1e-12, atol=1e-14)
    grad = np.random.default_rng(3).standard_normal((3, 3))
    out.backward(gputorch.tensor(grad, device=device))
    expected.backward(torch.tensor(grad))
    assert_close(gw.grad, tw.grad, rtol=1e-12, atol=1e-14)


def test_max_norm_renormalises_the_used_rows(device):
    _parity(device, dict(mode="mean", max_norm=1.0))
    _parity(device, dict(mode="sum", max_norm=0.5, norm_type=1.0))


def test_module_and_from_pretrained(device):
    torch = _torch()
    w = gputorch.tensor(WEIGHT, device=device)
    bag = nn.EmbeddingBag.from_pretrained(w, mode="max", padding_idx=1)
    assert not bag.weight.requires_grad
    tbag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(WEIGHT), mode="max", padding_idx=1)
    idx, off = np.array([1, 0, 3, 1]), np.array([0, 2])
    assert_close(bag(gputorch.tensor(idx, device=device), gputorch.tensor(off, device=device)),
                 tbag(torch.tensor(idx), torch.tensor(off)), rtol=0, atol=0)
    assert repr(bag) == repr(tbag)
    fresh = nn.EmbeddingBag(5, 2, padding_idx=-2, device=device)
    assert fresh.padding_idx == 3 and float(fresh.weight[3].abs().sum()) == 0.0
    assert nn.EmbeddingBag.from_pretrained(w, freeze=False).weight.requires_grad
    sd = torch.nn.EmbeddingBag(6, 3).state_dict()
    assert list(nn.EmbeddingBag(6, 3).state_dict()) == list(sd)


def test_errors(device):
    w = gputorch.tensor(WEIGHT, device=device)
    i = gputorch.tensor(INDICES, device=device)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(i, w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(i.reshape(2, 4), w, gputorch.tensor([0], device=device))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(i, w, gputorch.tensor([0], device=device), mode="x")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(i, w, gputorch.tensor([0], device=device), per_sample_weights=w[0, 0].expand(8))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(i, w, gputorch.tensor([1, 3], device=device))
    with pytest.raises(RuntimeError, match="can not be greater than input's length 8 but got offsets\\[-1\\] of 9"):
        F.embedding_bag(i, w, gputorch.tensor([0, 9], device=device))
    with pytest.raises(RuntimeError, match="Index 1 of input takes value 7 which is not in the valid range \\[0, 6\\)"):
        F.embedding_bag(gputorch.tensor([1, 7], device=device), w, gputorch.tensor([0], device=device))
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of embeddings, -6 through 5"):
        F.embedding_bag(i, w, gputorch.tensor([0], device=device), padding_idx=7)
    with pytest.raises(ValueError, match="max mode does not support scaling"):
        F.embedding_bag(i, w, gputorch.tensor([0], device=device), mode="max", scale_grad_by_freq=True)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(3, 2, padding_idx=3)
