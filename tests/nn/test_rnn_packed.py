"""nn.utils.rnn (packing and padding) and RNN/LSTM/GRU over PackedSequence, against PyTorch."""
import pickle

import numpy as np
import pytest

import gputorch
from gputorch.nn.utils import rnn as R
from tests._helpers import assert_close
from tests.nn._models import copy_state

RTOL, ATOL = 1e-10, 1e-11


def _torch():
    return pytest.importorskip("torch")


def _pair(torch, array, device, requires_grad=True):
    return (gputorch.tensor(array, device=device, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _assert_packed(ours, theirs):
    assert isinstance(ours, R.PackedSequence)
    assert_close(ours.data, theirs.data, RTOL, ATOL)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert ours.batch_sizes.device.type == "cpu" and ours.batch_sizes.dtype == gputorch.int64
    for mine, ref in ((ours.sorted_indices, theirs.sorted_indices), (ours.unsorted_indices, theirs.unsorted_indices)):
        assert (mine is None) == (ref is None)
        if mine is not None:
            assert mine.tolist() == ref.tolist() and mine.device == ours.data.device


# ------------------------------------------------------------------------------------ pack / pad
@pytest.mark.parametrize("batch_first,enforce_sorted", [(False, True), (True, False), (False, False)])
def test_pack_pad_roundtrip_parity_and_grads(device, batch_first, enforce_sorted):
    torch = _torch()
    lengths = [5, 3, 2, 1] if enforce_sorted else [2, 5, 1, 3]
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    x, tx = _pair(torch, np.random.randn(*shape), device)
    packed = R.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=batch_first,
                                                      enforce_sorted=enforce_sorted)
    _assert_packed(packed, tpacked)
    padded, out_lengths = R.pad_packed_sequence(packed, batch_first=batch_first, padding_value=-2.5, total_length=6)
    tpadded, tout_lengths = torch.nn.utils.rnn.pad_packed_sequence(tpacked, batch_first=batch_first,
                                                                   padding_value=-2.5, total_length=6)
    assert_close(padded, tpadded, 0, 0)
    assert out_lengths.tolist() == tout_lengths.tolist() == lengths and out_lengths.device.type == "cpu"
    g = np.random.randn(*padded.shape)
    padded.backward(gputorch.tensor(g, device=device))
    tpadded.backward(torch.tensor(g))
    assert_close(x.grad, tx.grad, 0, 0)  # zero at the padding, the upstream gradient elsewhere


def test_pack_padded_sequence_tensor_lengths_and_trailing_dims(device):
    torch = _torch()
    x, tx = _pair(torch, np.random.randn(3, 2, 2, 2), device)
    packed = R.pack_padded_sequence(x, gputorch.tensor([3.0, 2.0]))  # float lengths are cast to int64
    _assert_packed(packed, torch.nn.utils.rnn.pack_padded_sequence(tx, torch.tensor([3.0, 2.0])))
    ints = R.pack_padded_sequence(gputorch.arange(6, device=device).view(3, 2), [3, 1])
    assert ints.data.dtype == gputorch.int64 and ints.data.tolist() == [0, 1, 2, 4]


def test_pad_sequence_parity(device):
    torch = _torch()
    arrays = [np.random.randn(n, 2) for n in (2, 4, 3)]
    pairs = [_pair(torch, a, device) for a in arrays]
    for batch_first in (False, True):
        for side in ("right", "left"):
            out = R.pad_sequence([p for p, _ in pairs], batch_first=batch_first, padding_value=7.0, padding_side=side)
            ref = torch.nn.utils.rnn.pad_sequence([t for _, t in pairs], batch_first=batch_first, padding_value=7.0,
                                                  padding_side=side)
            assert_close(out, ref, 0, 0)
    out.sum().backward()
    for p, _ in pairs:
        assert_close(p.grad, np.ones(p.shape), 0, 0)
    stacked = np.random.randn(2, 3)
    assert_close(R.pad_sequence(gputorch.tensor(stacked, device=device)),
                 torch.nn.utils.rnn.pad_sequence(torch.tensor(stacked)), 0, 0)


def test_pack_sequence_unpack_unpad(device):
    torch = _torch()
    arrays = [np.random.randn(n, 2) for n in (2, 4, 1)]
    seqs = [gputorch.tensor(a, device=device) for a in arrays]
    packed = R.pack_sequence(seqs, enforce_sorted=False)
    _assert_packed(packed, torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=False))
    for got, want in zip(R.unpack_sequence(packed), arrays):
        assert_close(got, want, 0, 0)
    padded = R.pad_sequence(seqs)
    for got, want in zip(R.unpad_sequence(padded, gputorch.tensor([2, 4, 1])), arrays):
        assert_close(got, want, 0, 0)
    for got, want in zip(R.unpad_sequence(padded.transpose(0, 1), [2, 4, 1], batch_first=True), arrays):
        assert_close(got, want, 0, 0)


def test_packed_sequence_class(device):
    data = gputorch.arange(6.0, device=device)
    packed = R.PackedSequence(data, gputorch.tensor([3, 2, 1]), gputorch.tensor([2, 0, 1], device=device))
    assert isinstance(packed, tuple) and len(packed) == 4 and packed[0] is data
    assert packed.unsorted_indices.tolist() == [1, 2, 0]
    assert R.invert_permutation(None) is None
    assert R.PackedSequence((data, gputorch.tensor([3, 2, 1]))).batch_sizes.tolist() == [3, 2, 1]
    with pytest.raises(AssertionError, match="Expected data to be a list or tuple of length 2"):
        R.PackedSequence(data)
    assert repr(packed).startswith("PackedSequence(data=tensor(")
    assert packed.double().data.dtype == gputorch.float64 and packed.long().data.dtype == gputorch.int64
    assert packed.to(data.device) is packed and packed.is_cuda == (device == "cuda")
    moved = packed.cpu()
    assert not moved.is_cuda and moved.sorted_indices.device.type == "cpu"
    assert moved.batch_sizes is packed.batch_sizes
    if device == "cuda":
        back = moved.cuda()
        assert back.is_cuda and back.unsorted_indices.is_cuda and not back.batch_sizes.is_cuda
    clone = pickle.loads(pickle.dumps(moved))
    assert isinstance(clone, R.PackedSequence) and clone.data.tolist() == data.tolist()


def test_pack_errors(device):
    x = gputorch.randn(3, 2, 4, device=device)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
        R.pack_padded_sequence(x, [2, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        R.pack_padded_sequence(x, [3, 0])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        R.pack_padded_sequence(x, [3, -1], enforce_sorted=False)
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 3 "):
        R.pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 tensor, but got 2D"):
        R.pack_padded_sequence(x, gputorch.tensor([[3, 2]]))
    if device == "cuda":
        with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda"):
            R.pack_padded_sequence(x, gputorch.tensor([3, 2], device=device))
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors."):
        R.pack_padded_sequence(gputorch.randn(0, 2, 4), [0, 0])
    packed = R.pack_padded_sequence(x, [3, 2])
    with pytest.raises(ValueError, match="but got total_length=2 and max sequence length being 3"):
        R.pad_packed_sequence(packed, total_length=2)
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, but got middle."):
        R.pad_sequence([x[0]], padding_side="middle")
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        R.pad_sequence([])
    if device == "cuda":
        with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
            R.PackedSequence(x, gputorch.tensor([2, 1], device=device))


# ------------------------------------------------------------------------------------ RNNs over packed input
RNN_CASES = {
    "rnn_tanh_bidirectional_2layers": ("RNN", {"num_layers": 2, "bidirectional": True}),
    "rnn_relu_batch_first": ("RNN", {"nonlinearity": "relu", "batch_first": True}),
    "gru_bidirectional": ("GRU", {"bidirectional": True}),
    "gru_2layers_batch_first": ("GRU", {"num_layers": 2, "batch_first": True}),
    "lstm_bidirectional_2layers": ("LSTM", {"num_layers": 2, "bidirectional": True}),
    "lstm_proj_bidirectional": ("LSTM", {"proj_size": 2, "bidirectional": True}),
}


def _states(torch, device, mode, module, batch):
    directions = 2 if module.bidirectional else 1
    out = module.proj_size if module.proj_size else module.hidden_size
    sizes = [out] + ([module.hidden_size] if mode == "LSTM" else [])
    pairs = [_pair(torch, np.random.randn(module.num_layers * directions, batch, s), device) for s in sizes]
    if mode == "LSTM":
        return pairs, tuple(p for p, _ in pairs), tuple(t for _, t in pairs)
    return pairs, pairs[0][0], pairs[0][1]


@pytest.mark.parametrize("case", list(RNN_CASES))
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_rnn_packed_parity(device, case, enforce_sorted):
    torch = _torch()
    mode, kwargs = RNN_CASES[case]
    theirs = getattr(torch.nn, mode)(3, 4, **kwargs).double()
    ours = getattr(gputorch.nn, mode)(3, 4, **kwargs).double().to(device)
    copy_state(theirs, ours, gputorch, device=device)
    bf = kwargs.get("batch_first", False)
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    x, tx = _pair(torch, np.random.randn(*((4, 5, 3) if bf else (5, 4, 3))), device)
    pairs, hx, thx = _states(torch, device, mode, ours, 4)
    packed = R.pack_padded_sequence(x, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
    out, h_n = ours(packed, hx)
    ref, th_n = theirs(tpacked, thx)
    _assert_packed(out, ref)
    h_n, th_n = (h_n, th_n) if mode == "LSTM" else ((h_n,), (th_n,))
    for mine, want in zip(h_n, th_n):
        assert_close(mine, want, RTOL, ATOL)
    padded, _ = R.pad_packed_sequence(out, batch_first=bf)
    tpadded, _ = torch.nn.utils.rnn.pad_packed_sequence(ref, batch_first=bf)
    weights = [np.random.randn(*t.shape) for t in (tpadded,) + tuple(th_n)]
    loss = sum((t * gputorch.tensor(w, device=device)).sum() for t, w in zip((padded,) + tuple(h_n), weights))
    tloss = sum((t * torch.tensor(w)).sum() for t, w in zip((tpadded,) + tuple(th_n), weights))
    loss.backward()
    tloss.backward()
    for mine, want in [(x, tx)] + pairs:
        assert_close(mine.grad, want.grad, RTOL, ATOL)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p.grad, tp.grad, RTOL, ATOL, check_dtype=False)


def test_rnn_packed_default_state_matches_per_sequence_runs(device):
    """With hx=None, each sequence's output and final state equal those of running it alone."""
    lstm = gputorch.nn.LSTM(2, 3, bidirectional=True).double().to(device)
    arrays = [np.random.randn(n, 2) for n in (2, 4, 3)]
    packed = R.pack_sequence([gputorch.tensor(a, device=device) for a in arrays], enforce_sorted=False)
    out, (h_n, c_n) = lstm(packed)
    outputs = R.unpack_sequence(out)
    for b, a in enumerate(arrays):
        alone, (h, c) = lstm(gputorch.tensor(a[:, None], device=device))
        assert_close(outputs[b], alone[:, 0], RTOL, ATOL)
        assert_close(h_n[:, b], h[:, 0], RTOL, ATOL)
        assert_close(c_n[:, b], c[:, 0], RTOL, ATOL)


def test_rnn_packed_equal_lengths_match_padded_run(device):
    gru = gputorch.nn.GRU(3, 4, bidirectional=True, batch_first=True).double().to(device)
    x = gputorch.tensor(np.random.randn(2, 5, 3), device=device)
    out, h_n = gru(R.pack_padded_sequence(x, [5, 5], batch_first=True))
    ref, ref_h = gru(x)
    assert_close(R.pad_packed_sequence(out, batch_first=True)[0], ref, RTOL, ATOL)
    assert_close(h_n, ref_h, RTOL, ATOL)


def test_rnn_packed_dropout_between_layers(device):
    gru = gputorch.nn.GRU(3, 4, num_layers=2, dropout=0.5).to(device)
    packed = R.pack_sequence([gputorch.randn(6, 3, device=device), gputorch.randn(4, 3, device=device)])
    gputorch.manual_seed(0)
    first, h_first = gru(packed)
    second, _ = gru(packed)
    assert not np.allclose(first.data.tolist(), second.data.tolist())
    gru.eval()
    assert gru(packed)[0].data.tolist() == gru(packed)[0].data.tolist()
    assert tuple(first.data.shape) == (10, 4) and tuple(h_first.shape) == (2, 2, 4)


def test_rnn_packed_errors():
    gru = gputorch.nn.GRU(3, 4)
    packed = R.pack_sequence([gputorch.randn(3, 3), gputorch.randn(2, 3)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        gru(packed, gputorch.zeros(1, 3, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 2"):
        gru(R.pack_sequence([gputorch.randn(3, 2)]))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 3\]"):
        gputorch.nn.LSTM(3, 4)(packed, (gputorch.zeros(1, 2, 4), gputorch.zeros(1, 2, 3)))
