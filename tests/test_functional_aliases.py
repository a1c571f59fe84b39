"""The ``torch.<name>`` forms of nn.functional ops (``gputorch/_functional_aliases.py``): ATen's
positional signatures, integer reductions, dropout's ``(input, p, train)``, against PyTorch (the
differential suite draws random cases of each)."""
import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

torch = pytest.importorskip("torch")


def _pair(device, data, **kw):
    """The same data as a gputorch tensor on ``device`` and a torch tensor (floats in float64)."""
    double = np.asarray(data).dtype.kind == "f"
    ours = gputorch.tensor(data, device=device, **({"dtype": gputorch.float64} if double else {}), **kw)
    return ours, torch.tensor(data, **({"dtype": torch.float64} if double else {}), **kw)


def test_losses_take_integer_reductions_and_reduce_nothing_by_default(device):
    rng = np.random.default_rng(0)
    x, tx = _pair(device, rng.standard_normal((3, 4)).tolist(), requires_grad=True)
    p, tp = _pair(device, rng.uniform(0.1, 0.9, (3, 4)).tolist())
    sign, tsign = _pair(device, [1.0, -1.0, 1.0])
    for code in (None, 0, 1, 2, 5):
        extra = () if code is None else (code,)
        ours = [gputorch.kl_div(x.log_softmax(-1), p, *extra),
                gputorch.binary_cross_entropy_with_logits(x, p, None, None, *extra),
                gputorch.hinge_embedding_loss(x, p * 2 - 1, 1.0, *extra),
                gputorch.margin_ranking_loss(x[:, 0], x[:, 1], sign, 0.5, *extra),
                gputorch.cosine_embedding_loss(x, x.flip(0), sign, 0.0, *extra)]
        theirs = [torch.kl_div(tx.log_softmax(-1), tp, *extra),
                  torch.binary_cross_entropy_with_logits(tx, tp, None, None, *extra),
                  torch.hinge_embedding_loss(tx, tp * 2 - 1, 1.0, *extra),
                  torch.margin_ranking_loss(tx[:, 0], tx[:, 1], tsign, 0.5, *extra),
                  torch.cosine_embedding_loss(tx, tx.flip(0), tsign, 0.0, *extra)]
        for a, e in zip(ours, theirs):
            assert_close(a, e, 1e-12, 1e-12)
        sum(o.sum() for o in ours).backward()
        sum(t.sum() for t in theirs).backward()
        assert_close(x.grad, tx.grad, 1e-12, 1e-12)
        x.grad, tx.grad = None, None
    assert gputorch.kl_div(x, p).shape == (3, 4)     # left out: no reduction, as torch 2.13 does
    with pytest.raises(TypeError, match="reduction"):
        gputorch.kl_div(x, p, reduction="mean")


def test_poisson_triplet_and_ctc_losses(device):
    rng = np.random.default_rng(1)
    x, tx = _pair(device, rng.standard_normal((2, 3)).tolist())
    k, tk = _pair(device, rng.integers(0, 4, (2, 3)).astype(float).tolist())
    assert_close(gputorch.poisson_nll_loss(x, k, True, True, 1e-8, 1),
                 torch.poisson_nll_loss(tx, tk, True, True, 1e-8, 1), 1e-12, 1e-12)
    assert_close(gputorch.triplet_margin_loss(x, k, x.flip(0), 1.0, 2.0, 1e-6, True, 2),
                 torch.triplet_margin_loss(tx, tk, tx.flip(0), 1.0, 2.0, 1e-6, True, 2), 1e-12, 1e-12)
    lp = rng.standard_normal((5, 2, 3))
    lp, tlp = _pair(device, lp.tolist())
    targets, ttargets = _pair(device, [[1, 2], [1, 1]])
    for extra in ((), (0, 1), (0, 2)):
        assert_close(gputorch.ctc_loss(lp.log_softmax(2), targets, [5, 5], [2, 2], *extra),
                     torch.ctc_loss(tlp.log_softmax(2), ttargets, [5, 5], [2, 2], *extra), 1e-10, 1e-10)


def test_dropout_takes_p_and_train_positionally(device):
    x = gputorch.ones(4, 3, 2, device=device)
    assert gputorch.dropout(x, 0.5, False) is x
    assert float(gputorch.dropout(x, 1.0, True).abs().sum()) == 0.0
    gputorch.manual_seed(0)
    kept = gputorch.feature_dropout(x, 0.5, True)
    # whole (n, c) slices are zeroed or scaled by 2
    slices = kept.reshape(12, 2)
    assert all(float(s[0]) == float(s[1]) and float(s[0]) in (0.0, 2.0) for s in slices)
    y = gputorch.ones(3, 2, device=device)
    assert gputorch.alpha_dropout_(y, 0.0, True) is y
    with pytest.raises(RuntimeError, match="between 0 and 1, but got 1.5"):
        gputorch.dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        gputorch.feature_dropout(gputorch.ones(3, device=device), 0.5, True)
    z = gputorch.ones(5, device=device)
    gputorch.dropout_(z, 1.0, True)
    assert float(z.sum()) == 0.0


def test_embedding_batch_norm_and_pooling_signatures(device):
    rng = np.random.default_rng(2)
    w, tw = _pair(device, rng.standard_normal((5, 3)).tolist(), requires_grad=True)
    idx, tidx = _pair(device, [[0, 2, 2], [4, 1, 0]])
    for extra in ((), (-1,), (2,)):
        out, tout = gputorch.embedding(w, idx, *extra), torch.embedding(tw, tidx, *extra)
        assert_close(out, tout, 0, 0)
        out.sum().backward()
        tout.sum().backward()
        assert_close(w.grad, tw.grad, 0, 0)      # padding row 2 gets no gradient with padding_idx=2
        w.grad, tw.grad = None, None

    x, tx = _pair(device, rng.standard_normal((4, 2, 3)).tolist())
    mean, tmean = _pair(device, [0.5, -0.5])
    var, tvar = _pair(device, [1.5, 0.5])
    scale, tscale = _pair(device, [2.0, 0.5])
    out = gputorch.batch_norm(x, scale, None, mean, var, True, 0.3, 1e-5, True)
    tout = torch.batch_norm(tx, tscale, None, tmean, tvar, True, 0.3, 1e-5, True)
    assert_close(out, tout, 1e-12, 1e-12)
    assert_close(mean, tmean, 1e-12, 1e-12)      # running statistics updated in place

    values, indices = gputorch.max_pool1d_with_indices(x, 2)
    tvalues, tindices = torch.max_pool1d_with_indices(tx, 2)
    assert_close(values, tvalues, 0, 0)
    assert_close(indices, tindices, 0, 0)
    pooled = gputorch.adaptive_max_pool1d(x, 2)
    assert isinstance(pooled, tuple) and len(pooled) == 2
    assert_close(pooled[0], torch.adaptive_max_pool1d(tx, 2)[0], 0, 0)
    assert_close(gputorch.max_pool2d(x.unsqueeze(0), 2, (), 0, 1, True),
                 torch.max_pool2d(tx.unsqueeze(0), 2, (), 0, 1, True), 0, 0)
    with pytest.raises(TypeError):
        gputorch.max_pool2d(x.unsqueeze(0), 2, return_indices=True)


def test_activation_forms(device):
    x, tx = _pair(device, [-2.0, -0.25, 0.0, 0.75, float("nan")])
    assert_close(gputorch.threshold(x, 0.0, -7.0), torch.threshold(tx, 0.0, -7.0), 0, 0)
    assert_close(gputorch.celu(x, 2.0), torch.celu(tx, 2.0), 1e-7, 1e-7)
    assert_close(gputorch.selu(x), torch.selu(tx), 1e-7, 1e-7)
    assert_close(gputorch.rrelu(x), torch.rrelu(tx), 1e-7, 1e-7)
    assert_close(gputorch.hardshrink(x, 0.5), torch.hardshrink(tx, 0.5), 0, 0)
    y = x.clone()
    assert gputorch.threshold_(y, 0.0, 1.0) is y
    with pytest.raises(TypeError):
        gputorch.selu(x, inplace=True)


def test_rrelu_evaluation_gradient_at_nan_is_the_slope(device):
    """Evaluation-mode rrelu is leaky_relu: a NaN input takes the mean slope in backward."""
    x, tx = _pair(device, [float("nan"), -1.0, 2.0], requires_grad=True)
    gputorch.nn.functional.rrelu(x).sum().backward()
    torch.nn.functional.rrelu(tx).sum().backward()
    assert_close(x.grad, tx.grad, 1e-7, 1e-7)


@pytest.mark.parametrize("name,gates", [("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)])
def test_recurrent_networks_take_flat_weights(device, name, gates):
    """Two bidirectional layers with biases, batch-first: outputs, final states and every gradient
    as torch's; the packed-data form agrees too."""
    rng = np.random.default_rng(3)
    hidden, size, layers = 3, 2, 2
    shapes = []
    for layer in range(layers):
        for _ in range(2):
            shapes += [(gates * hidden, size if layer == 0 else 2 * hidden), (gates * hidden, hidden),
                       (gates * hidden,), (gates * hidden,)]
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [gputorch.tensor(a, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    x = rng.standard_normal((2, 4, size))
    h0 = [rng.standard_normal((2 * layers, 2, hidden)) for _ in range(2 if name == "lstm" else 1)]
    hx = [gputorch.tensor(h, device=device) for h in h0]
    thx = [torch.tensor(h) for h in h0]
    if name != "lstm":
        hx, thx = hx[0], thx[0]
    out = getattr(gputorch, name)(gputorch.tensor(x, device=device), hx, ours, True, layers, 0.0, True, True, True)
    tout = getattr(torch, name)(torch.tensor(x), thx, theirs, True, layers, 0.0, True, True, True)
    assert len(out) == len(tout)
    for a, e in zip(out, tout):
        assert_close(a, e, 1e-12, 1e-12)
    sum((o * o).sum() for o in out).backward()
    sum((o * o).sum() for o in tout).backward()
    for a, e in zip(ours, theirs):
        assert_close(a.grad, e.grad, 1e-10, 1e-10)
    # packed data: sequences of lengths 2 and 1, one layer, one direction
    data = rng.standard_normal((3, size))
    first = ours[:4]
    tfirst = [t.detach() for t in theirs[:4]]
    state = [gputorch.zeros(1, 2, hidden, dtype=gputorch.float64, device=device) for _ in range(len(h0))]
    tstate = [torch.zeros(1, 2, hidden, dtype=torch.float64) for _ in range(len(h0))]
    if name != "lstm":
        state, tstate = state[0], tstate[0]
    packed = getattr(gputorch, name)(gputorch.tensor(data, device=device), gputorch.tensor([2, 1]), state, first,
                                     True, 1, 0.0, False, False)
    tpacked = getattr(torch, name)(torch.tensor(data), torch.tensor([2, 1]), tstate, tfirst, True, 1, 0.0, False,
                                   False)
    for a, e in zip(packed, tpacked):
        assert_close(a, e, 1e-12, 1e-12)


def test_recurrent_cells(device):
    rng = np.random.default_rng(4)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    for name, gates in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)):
        w = [rng.standard_normal((gates * 4, 3)), rng.standard_normal((gates * 4, 4)), rng.standard_normal(gates * 4)]
        state = [gputorch.tensor(h, device=device)] * (2 if name == "lstm_cell" else 1)
        tstate = [torch.tensor(h)] * (2 if name == "lstm_cell" else 1)
        ours = getattr(gputorch, name)(gputorch.tensor(x, device=device), state if name == "lstm_cell" else state[0],
                                       *[gputorch.tensor(a, device=device) for a in w])
        theirs = getattr(torch, name)(torch.tensor(x), tstate if name == "lstm_cell" else tstate[0],
                                      *[torch.tensor(a) for a in w])
        for a, e in zip(ours if name == "lstm_cell" else (ours,), theirs if name == "lstm_cell" else (theirs,)):
            assert_close(a, e, 1e-12, 1e-12)


def test_embedding_bag_returns_atens_four_outputs(device):
    """Output, offset2bag, bag_size and max_indices per mode, written out by hand (bag 1 empty)."""
    weight = gputorch.tensor([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0], [2.0, 2.0]], dtype=gputorch.float64,
                             device=device, requires_grad=True)
    indices = gputorch.tensor([0, 1, 2, 3, 1], device=device)
    offsets = gputorch.tensor([0, 3, 3], device=device)
    out, offset2bag, bag_size, max_indices = gputorch.embedding_bag(weight, indices, offsets, False, 2)
    assert_close(out, [[3.0, 4.0], [0.0, 0.0], [3.0, 2.0]])
    assert offset2bag.tolist() == [0, 0, 0, 2, 2] and bag_size.tolist() == [3, 0, 2]
    assert max_indices.tolist() == [[1, 2], [0, 0], [1, 3]] and max_indices.dtype == gputorch.int64
    out, offset2bag, bag_size, max_indices = gputorch.embedding_bag(weight, indices, offsets, False, 1,
                                                                    False, None, False, 2)
    assert_close(out, [[2.0, -0.75], [0.0, 0.0], [2.5, 1.25]])
    assert bag_size.tolist() == [2, 0, 2] and max_indices.tolist() == [2, 0, 2]
    out, offset2bag, bag_size, max_indices = gputorch.embedding_bag(weight.float(), indices, offsets)
    assert offset2bag.shape == (0,) and bag_size.tolist() == [0, 0, 0] and max_indices.tolist() == [0, 0, 0]
    gputorch.embedding_bag(weight, indices, offsets, False, 0)[0].sum().backward()
    assert_close(weight.grad, [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0], [1.0, 1.0]])


def test_embedding_bag_matches_torch_and_refuses_bad_modes(device):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 3))
    idx, offs = [5, 0, 2, 2, 4, 1, 3], [0, 2, 2, 7]
    for mode in (1, 2):
        ours = gputorch.embedding_bag(gputorch.tensor(w, device=device), gputorch.tensor(idx, device=device),
                                      gputorch.tensor(offs, device=device), False, mode, False, None, True, 4)
        theirs = torch.embedding_bag(torch.tensor(w), torch.tensor(idx), torch.tensor(offs), False, mode, False,
                                     None, True, 4)
        for a, b in zip(ours, theirs):
            assert_close(a, b.numpy())
    with pytest.raises(RuntimeError, match="mode"):
        gputorch.embedding_bag(gputorch.tensor(w), gputorch.tensor(idx), gputorch.tensor(offs), False, 3)
    with pytest.raises(TypeError, match="offsets"):
        gputorch.embedding_bag(gputorch.tensor(w), gputorch.tensor(idx), None)
