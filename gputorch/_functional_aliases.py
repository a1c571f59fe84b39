"""The ``torch.<name>`` forms of ``nn.functional`` operations (``torch.conv2d``, ``torch.dropout``,
``torch.kl_div``...), with the positional signatures of PyTorch's top-level functions, which are
those of its ATen operators rather than of ``torch.nn.functional``:

- losses take ``reduction`` as an integer (0 none, 1 mean, 2 sum; any other value: no reduction)
  and no ``size_average``/``reduce`` flags. Left out, it is 0: PyTorch 2.13's schemas name mean
  as the default, but its Python bindings of these functions reduce nothing then;
- the dropouts take ``(input, p, train)``, all positional, and an out-of-range ``p`` is a
  RuntimeError; ``feature_dropout`` drops whole ``input[n, c]`` slices;
- ``embedding`` takes the weight first, ``padding_idx=-1`` meaning none; ``embedding_renorm_``
  is the renormalisation ``F.embedding(max_norm=)`` applies; ``embedding_bag`` takes the weight
  first, ``mode`` as 0 sum, 1 mean, 2 max, and returns ATen's four outputs (see its docstring);
- ``batch_norm`` takes its nine arguments in ATen's order (``cudnn_enabled`` is ignored);
- ``max_pool*d`` have no ``return_indices``; ``max_pool1d_with_indices`` and
  ``adaptive_max_pool1d`` always return ``(values, indices)``;
- the recurrent networks (``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu``) take the flat list of
  weights the modules keep, and either a padded input or a packed sequence's data and batch
  sizes; the cells (``lstm_cell``...) take the weights of one layer.

Each one is the functional itself underneath, so values and gradients are the functional's.
"""
import warnings

from . import _dtype
from ._dispatch import apply_inplace
from .autograd import no_grad as _no_grad
from .ops.creation import arange, tensor, zeros
from .ops.shape import stack
from ._tensor import Tensor
from .nn import functional as F
from .nn.functional.normalization import batch_norm_unchecked
from .nn.functional import recurrent as _recurrent
from .nn.functional import sparse as _sparse
from .nn.functional.dropout import _dropout_impl

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d", "dropout", "dropout_", "alpha_dropout",
           "alpha_dropout_", "feature_dropout", "feature_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "threshold",
           "threshold_", "hardshrink", "prelu", "embedding", "batch_norm", "bilinear", "kl_div",
           "binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
           "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "ctc_loss", "rms_norm",
           "embedding_renorm_", "embedding_bag",
           "lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]

# Same arguments at both levels.
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d
hardshrink, prelu, bilinear, rms_norm = F.hardshrink, F.prelu, F.bilinear, F.rms_norm


def _reduction(code):
    """ATen's reduction enum as the functional's string (values other than 1 and 2 reduce nothing)."""
    if isinstance(code, str) or not isinstance(code, int):
        raise TypeError(f"argument 'reduction' must be int, not {type(code).__name__}")
    return {1: "mean", 2: "sum"}.get(code, "none")


# ------------------------------------------------------------------------------- pooling
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``F.max_pool1d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``F.max_pool2d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``F.max_pool3d`` (an empty ``stride`` means the kernel size)."""
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``(values, indices)`` of a 1-d max pooling."""
    return tuple(F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                              return_indices=True))


def adaptive_max_pool1d(input, output_size):
    """``(values, indices)`` of a 1-d adaptive max pooling."""
    return tuple(F.adaptive_max_pool1d(input, output_size, return_indices=True))


# ------------------------------------------------------------------------------- dropout
def _checked_p(p):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


def dropout(input, p, train):
    """Zero each element with probability ``p`` (scaling the rest by ``1 / (1 - p)``) when ``train``."""
    return _dropout_impl(input, _checked_p(p), train, False, 0, False)


def dropout_(input, p, train):
    return _dropout_impl(input, _checked_p(p), train, True, 0, False)


def alpha_dropout(input, p, train):
    """SELU-preserving dropout of elements (``F.alpha_dropout``)."""
    return _dropout_impl(input, _checked_p(p), train, False, 0, True)


def alpha_dropout_(input, p, train):
    return _dropout_impl(input, _checked_p(p), train, True, 0, True)


def feature_dropout(input, p, train):
    """Dropout of whole ``input[n, c]`` slices (inputs of at least 2 dims)."""
    return _dropout_impl(input, _checked_p(p), train, False, 2, False)


def feature_dropout_(input, p, train):
    return _dropout_impl(input, _checked_p(p), train, True, 2, False)


def feature_alpha_dropout(input, p, train):
    """SELU-preserving dropout of whole ``input[n, c]`` slices."""
    return _dropout_impl(input, _checked_p(p), train, False, 2, True)


def feature_alpha_dropout_(input, p, train):
    return _dropout_impl(input, _checked_p(p), train, True, 2, True)


# ---------------------------------------------------------------------------- activations
def selu(input):
    return F.selu(input)


def selu_(input):
    return F.selu_(input)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def celu_(input, alpha=1.0):
    return F.celu_(input, alpha)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU (``F.rrelu``); slopes come from the device's default generator."""
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu_(input, lower, upper, training)


def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``, else ``input``."""
    return F.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return F.threshold_(input, threshold, value)


# ------------------------------------------------------------------- embedding, batch norm
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``indices``; a non-negative ``padding_idx`` gets no gradient."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding(): argument 'weight' (position 1) must be Tensor, not {type(weight).__name__}")
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """In place: each row of the 2-d ``input`` that ``indices`` names, whose ``norm_type``-norm
    exceeds ``max_norm``, is scaled to norm ``max_norm`` (what ``F.embedding(max_norm=)`` does)."""
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError("embedding_renorm_(): arguments 'input' and 'indices' must be Tensors")
    if indices.dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for "
                           "embedding_renorm_)")
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")
    return apply_inplace(_sparse.EmbeddingRenorm, input, indices, float(max_norm), float(norm_type))


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``(output, offset2bag, bag_size, max_indices)``: ``F.embedding_bag`` with the weight first
    and ``mode`` an integer, plus the bookkeeping outputs of PyTorch's CPU kernel.

    Shapes: ``weight`` ``(num_embeddings, D)``, ``indices`` ``(L,)``, ``offsets`` ``(B,)`` (``(B + 1,)``
    with ``include_last_offset``); ``output`` ``(B, D)`` is ``F.embedding_bag``'s, with its gradient.
    The other three are int64 and carry no gradient. Bag ``b`` of them spans positions
    ``offsets[b]`` up to the next offset, the last bag up to ``L`` (even with
    ``include_last_offset``, as PyTorch's kernel counts it), entries equal to ``padding_idx`` left out:

    - ``offset2bag`` ``(L,)``: the bag of each position; empty ``(0,)`` for sum over a float32
      weight without ``padding_idx`` (the kernel's fast path, which skips it);
    - ``bag_size`` ``(B,)``: each bag's entry count; zeros for sum;
    - ``max_indices``: for max ``(B, D)``, the weight row giving each maximum (the first on ties,
      0 for an empty bag); for mean a copy of ``bag_size``; for sum zeros ``(B,)``.

    Two differences with ``include_last_offset``: an ``offsets[-1]`` short of ``L`` is not checked
    (as in PyTorch), and ``output`` leaves the entries after it out where PyTorch's kernel adds them
    to the last bag; and for sum, the length of PyTorch's all-zero ``bag_size`` and ``max_indices``
    depends on its kernel's path (``B`` or ``B + 1``), here always ``B``.
    """
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding_bag(): argument 'weight' (position 1) must be Tensor, not {type(weight).__name__}")
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not {type(offsets).__name__}")
    if mode not in (0, 1, 2) or isinstance(mode, bool):
        raise RuntimeError(f"`mode` must be sum, mean, or max, got {mode}")
    output = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=_BAG_MODES[mode],
                             sparse=sparse, per_sample_weights=per_sample_weights,
                             include_last_offset=include_last_offset, padding_idx=padding_idx)
    with _no_grad():
        return (output,) + _bag_bookkeeping(weight.detach(), indices.reshape(-1), offsets, mode,
                                            include_last_offset, padding_idx)


def _bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, padding_idx):
    """``(offset2bag, bag_size, max_indices)`` of :func:`embedding_bag` (see there)."""
    length, device = indices.shape[0], weight.device
    starts = offsets.tolist()
    bags = len(starts) - 1 if include_last_offset else len(starts)
    spans = [(starts[b], starts[b + 1] if b + 1 < bags else length) for b in range(bags)]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if mode == 0 and padding_idx is None and weight.dtype == _dtype.float32:
        offset2bag = zeros(0, dtype=_dtype.int64, device=device)
    else:
        counts = tensor([end - start for start, end in spans], dtype=_dtype.int64, device=device)
        offset2bag = arange(bags, device=device).repeat_interleave(counts)
    if mode == 0:
        empty = zeros(bags, dtype=_dtype.int64, device=device)
        return offset2bag, empty, empty.clone()
    members = [indices[start:end] for start, end in spans]
    if padding_idx is not None:
        members = [rows[rows != padding_idx] for rows in members]
    sizes = [rows.shape[0] for rows in members]
    bag_size = tensor(sizes, dtype=_dtype.int64, device=device)
    if mode == 1:
        return offset2bag, bag_size, bag_size.clone()
    width = weight.shape[1]
    maxima = [rows[weight[rows].argmax(0)] if n else zeros(width, dtype=_dtype.int64, device=device)
              for rows, n in zip(members, sizes)]
    max_indices = stack(maxima) if maxima else zeros(0, width, dtype=_dtype.int64, device=device)
    return offset2bag, bag_size, max_indices.long()


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``F.batch_norm`` with ATen's argument order (``cudnn_enabled`` has no effect here)."""
    return batch_norm_unchecked(input, running_mean, running_var, weight, bias, training, momentum, eps)


# --------------------------------------------------------------------------------- losses
def kl_div(input, target, reduction=0, *, log_target=False):
    """``F.kl_div`` with an integer ``reduction`` (no ``'batchmean'``, and no warning for mean)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """``F.ctc_loss`` with an integer ``reduction`` (left out: the per-sample losses)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                      zero_infinity)


# ------------------------------------------------------------------------------ recurrent networks
def _recurrent_network(mode, name, args):
    """``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)``
    or, for packed sequences, ``(data, batch_sizes, hx, params, has_biases, num_layers, dropout,
    train, bidirectional)``; returns the output and the tuple of final states."""
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 positional arguments but {len(args)} were given")
    if isinstance(args[3], (list, tuple)):   # the weights come fourth in the packed form, third otherwise
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first, sizes = False, _recurrent.batch_size_list(batch_sizes)
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        sizes = None
    states = tuple(hx) if mode == "LSTM" else (hx,)
    return _recurrent.run_layers(mode, data, states, list(params), has_biases=has_biases, num_layers=num_layers,
                                 dropout=dropout, train=train, bidirectional=bidirectional, batch_first=batch_first,
                                 batch_sizes=sizes)


def lstm(*args):
    """``(output, h_n, c_n)`` of a stacked LSTM (see :func:`_recurrent_network` for the arguments)."""
    output, (h, c) = _recurrent_network("LSTM", "lstm", args)
    return output, h, c


def gru(*args):
    """``(output, h_n)`` of a stacked GRU."""
    output, (h,) = _recurrent_network("GRU", "gru", args)
    return output, h


def rnn_tanh(*args):
    """``(output, h_n)`` of a stacked Elman network with tanh."""
    output, (h,) = _recurrent_network("RNN_TANH", "rnn_tanh", args)
    return output, h


def rnn_relu(*args):
    """``(output, h_n)`` of a stacked Elman network with ReLU."""
    output, (h,) = _recurrent_network("RNN_RELU", "rnn_relu", args)
    return output, h


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: ``(h', c')`` from ``hx = (h, c)``."""
    return tuple(_recurrent.lstm_cell(input, tuple(hx), w_ih, w_hh, b_ih, b_hh))


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: ``h'``."""
    return _recurrent.gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return _recurrent.rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, "tanh")


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with ReLU."""
    return _recurrent.rnn_cell(input, hx, w_ih, w_hh, b_ih, b_hh, "relu")
