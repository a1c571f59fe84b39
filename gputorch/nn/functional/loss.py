"""Loss functions: ``F.mse_loss``, ``F.cross_entropy``, ``F.nll_loss``, ``F.binary_cross_entropy``, ...

The losses that PyTorch computes with a kernel of their own are one op each here (a Node with
forward on arrays and backward in Tensor ops, named like PyTorch's grad_fn), so that a backend
can override them: mse, smooth L1, Huber, soft margin, binary cross entropy (plain and with
logits), NLL, and cross entropy with class indices (one fused op: log-softmax, gather, ignored
targets, class weights and label smoothing). The others are compositions of core ops, as in
PyTorch. Formulas follow PyTorch's floating-point order, so float64 losses and gradients agree
with PyTorch's to the last bits or nearly.

Shapes of the classification losses: input ``(N, C)``, ``(N, C, d1, d2, ...)`` or ``(C,)``
(unbatched); class-index target ``(N,)``, ``(N, d1, d2, ...)`` or ``()``; a target of the input's
shape holds class probabilities (cross_entropy only).
"""
import contextlib
import math
import warnings
import weakref

import numpy as np

from ... import _dtype
from ..._broadcast import broadcast_pair
from ..._dispatch import apply
from ...amp.autocast_mode import autocast_function
from ..._tensor import _LEGACY_NAMES, Tensor
from ...autograd import grad_mode
from ...autograd.grad_mode import no_grad
from ...autograd.node import AccumulateGrad, Node
from ...ops._common import grad_for, operand_arrays, quiet_errors, xp_of
from ...ops._reducing import const, create_graph
from ...ops.class_targets import checked_targets as _checked_targets, reduce_terms as _reduce_terms
from ...ops.class_targets import total as _total
from ...ops.comparison import where
from ...ops.creation import ones_like, zeros_like
from ...ops.pointwise import xlogy
from ...ops.shape import broadcast_tensors
from .. import _reduction
from .activation import log_softmax, logsigmoid
from .distance import pairwise_distance

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy",
           "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
           "cosine_embedding_loss", "hinge_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "ctc_loss"]

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_INT64 = np.dtype(np.int64)
_GRAD_ENABLED = grad_mode.GRAD_ENABLED


# ----------------------------------------------------------------------------- shared helpers
def _reduce_array(xp, loss, reduction):
    """``loss`` reduced on arrays: itself, its sum or its mean (NaN for an empty mean)."""
    if reduction == "none":
        return loss
    total = _total(loss)
    if reduction == "mean":
        n = loss.size
        total = total / n if n else total * float("nan")
    return xp.asarray(total).astype(loss.dtype, copy=False)


def _mean_scale(ctx):
    """The factor that a mean reduction puts on every element's gradient."""
    if ctx.reduction != "mean":
        return 1.0
    return 1.0 / ctx.numel if ctx.numel else 0.0


def _reduce(loss, reduction):
    """``loss`` reduced with Tensor ops."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _checked(reduction):
    return _reduction.resolve(None, None, reduction)


def _legacy_name(dt):
    return _LEGACY_NAMES[dt]


def _not_implemented(kernel, dt):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy_name(dt)}'")


def _not_differentiable(function, arg, t):
    """PyTorch's error for a weight that requires grad where the loss has no gradient for it."""
    if t is not None and t._requires_grad and _GRAD_ENABLED.value:
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _warn_target_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _check_broadcast_into(shape, a_shape, b_shape):
    """Check that ``a_shape`` and ``b_shape`` broadcast together to no more than ``shape`` (PyTorch's
    messages for an in-place op that writes into a tensor of ``shape``)."""
    out = broadcast_pair(a_shape, b_shape)
    if out != tuple(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(out)}")


def _tensor_grads(ctx, *grads):
    """One entry per tensor argument of the op: ``grads`` for the first ones, None for the rest."""
    return grads + (None,) * (len(ctx.next_functions) - len(grads))


def _on_device(t):
    """The device context of ``t`` (for arrays made in backward, outside the dispatcher)."""
    ctx = t._device._ctx
    return contextlib.nullcontext() if ctx is None else ctx


# ----------------------------------------------------------------------------- regression losses
class MseLossBackward0(Node):
    """``(input - target) ** 2``, reduced."""

    def forward(ctx, input, target, reduction):
        x, y, dt = operand_arrays(input, target)
        if dt._category != 2:
            raise _not_implemented("mse_cpu", dt)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.numel = reduction, x.size
        diff = x - y
        return _reduce_array(xp_of(input), diff * diff, reduction)

    def backward(ctx, grad):
        input, target = ctx.saved_values
        # computed in the forward's promoted dtype (a bool or integer target counts as numbers of
        # input's dtype); each gradient then takes its own input's dtype
        common = (_dtype.promote_types(input._dtype, target._dtype) if target._dtype._category == 2
                  else input._dtype)
        x, y = (t if t._dtype is common else t.to(common) for t in (input, target))
        g = (x - y) * (2.0 * _mean_scale(ctx)) * grad
        return _pair_grads(ctx, g, input, target)


def _pair_grads(ctx, g, input, target):
    """Gradients of a loss of ``input - target``: ``g`` for the input, ``-g`` for the target."""
    need = ctx.needs_input_grad
    return (grad_for(g, input) if need[0] else None,
            grad_for(-g, target) if need[1] else None)


class SmoothL1LossBackward0(Node):
    """``0.5 * z * z / beta`` where ``z = |input - target| < beta``, else ``z - 0.5 * beta``."""

    def forward(ctx, input, target, reduction, beta):
        x, y, dt = operand_arrays(input, target)
        if dt._category != 2:
            raise _not_implemented("smooth_l1_cpu", dt)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.numel, ctx.beta = reduction, input._data.size, beta
        xp = xp_of(input)
        z = xp.abs(x - y)
        with quiet_errors():
            loss = xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
        return _reduce_array(xp, loss, reduction)

    def backward(ctx, grad):
        input, target = ctx.saved_values
        beta = ctx.beta
        g = (input - target).clamp(-beta, beta) * _mean_scale(ctx) * grad / beta
        return _pair_grads(ctx, g, input, target)


class HuberLossBackward0(Node):
    """``0.5 * z * z`` where ``z = |input - target| < delta``, else ``delta * (z - 0.5 * delta)``."""

    def forward(ctx, input, target, reduction, delta):
        x, y, dt = operand_arrays(input, target)
        if dt._category != 2:
            raise _not_implemented("huber_cpu", dt)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.numel, ctx.delta = reduction, input._data.size, delta
        xp = xp_of(input)
        z = xp.abs(x - y)
        loss = xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
        return _reduce_array(xp, loss, reduction)

    def backward(ctx, grad):
        input, target = ctx.saved_values
        delta = ctx.delta
        g = (input - target).clamp(-delta, delta) * _mean_scale(ctx) * grad
        return _pair_grads(ctx, g, input, target)


class SoftMarginLossBackward0(Node):
    """``log(1 + exp(-target * input))``, reduced (targets are 1 or -1)."""

    def forward(ctx, input, target, reduction):
        x, y, dt = operand_arrays(input, target)
        if dt._category != 2:
            raise _not_implemented("soft_margin_loss", dt)
        xp = xp_of(input)
        with quiet_errors():
            loss = xp.log1p(xp.exp(-x * y))
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.numel = reduction, loss.size
        return _reduce_array(xp, loss, reduction)

    def backward(ctx, grad):
        input, target = ctx.saved_values
        z = (-target * input).exp()
        return grad_for(target * z * -_mean_scale(ctx) / (z + 1) * grad, input), None


def _weighted(loss, weight, reduction, mean_by_weight):
    """The ``weight=`` form of the pointwise regression losses."""
    if weight.shape != loss.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum() if mean_by_weight else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2``; with ``weight`` (input's shape) the mean is
    ``sum(weight * error) / sum(weight)``."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    input, target = broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((input - target) ** 2, weight, reduction, True)
    return apply(MseLossBackward0, input, target, _checked(reduction))


@autocast_function("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``; with ``weight`` the mean is weighted like mse_loss."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    input, target = broadcast_tensors(input, target)
    if weight is not None:
        return _weighted((input - target).abs(), weight, reduction, True)
    return _reduce((input - target).abs(), _checked(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta``, linear above (``beta=0`` is the L1 loss)."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    input, target = broadcast_tensors(input, target)
    if beta == 0.0:
        return _reduce((input - target).abs(), _checked(reduction))
    reduction = _checked(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return apply(SmoothL1LossBackward0, input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below ``delta``, ``delta``-scaled linear above; ``weight`` multiplies the
    elementwise loss (then a plain mean)."""
    _warn_target_size(input, target)
    input, target = broadcast_tensors(input, target)
    if weight is None:
        reduction = _checked(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        loss = apply(HuberLossBackward0, input, target, "none", delta)
        return _weighted(loss, weight, reduction, False)
    return apply(HuberLossBackward0, input, target, reduction, delta)


@autocast_function("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))`` (targets 1 or -1)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _not_differentiable("soft_margin_loss", "target", target)
    if target._dtype is _dtype.bool:   # PyTorch negates the target first
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return apply(SoftMarginLossBackward0, input, target, reduction)


# ----------------------------------------------------------------------------- binary cross entropy
class BinaryCrossEntropyBackward0(Node):
    """``-(target * log(input) + (1 - target) * log(1 - input))``, logs clamped at -100."""

    def forward(ctx, input, target, weight, reduction):
        if target._dtype is not input._dtype:
            raise RuntimeError(f"Found dtype {_legacy_name(target._dtype)} but expected "
                               f"{_legacy_name(input._dtype)}")
        if input._dtype._category != 2:
            raise _not_implemented("binary_cross_entropy", input._dtype)
        xp = xp_of(input)
        x, y = input._data, target._data
        if not bool(((x >= 0) & (x <= 1)).all()):
            raise RuntimeError("all elements of input should be between 0 and 1")
        if not bool(((y >= 0) & (y <= 1)).all()):
            raise RuntimeError("all elements of target should be between 0 and 1")
        with quiet_errors():
            log_x = xp.maximum(xp.log(x), -100)
            log_1mx = xp.maximum(xp.log1p(-x), -100)
        loss = (y - 1) * log_1mx - y * log_x
        if weight is not None:
            loss = (loss * weight._data).astype(x.dtype, copy=False)
        ctx.save_for_backward(input, target, weight)
        ctx.reduction, ctx.numel = reduction, x.size
        return _reduce_array(xp, loss, reduction)

    def backward(ctx, grad):
        input, target, weight = ctx.saved_values
        need = ctx.needs_input_grad
        gi = gt = None
        if need[0]:
            gi = grad * (input - target) / ((1 - input) * input).clamp_min(1e-12)
            gi = _scaled(ctx, gi, weight, input)
        if need[1]:
            gt = -(input / (1 - input)).log() * grad
            gt = _scaled(ctx, gt, weight, target)
        return _tensor_grads(ctx, gi, gt)


def _scaled(ctx, g, weight, like):
    """``g`` times the weight and divided by the element count for a mean, as ``like``'s grad."""
    if weight is not None:
        g = g * weight
    if ctx.reduction == "mean":
        g = g / ctx.numel
    return grad_for(g, like)


def _log_sigmoid(x):
    """``log(sigmoid(x))`` in Tensor ops, without overflow."""
    return x.clamp_max(0) - (-x.abs()).exp().log1p()


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """``(1 - target) * input - log_sigmoid(input) * (1 + (pos_weight - 1) * target)``, weighted."""

    def forward(ctx, input, target, weight, pos_weight, reduction):
        if input._dtype._category != 2:
            raise _not_implemented("log_sigmoid_cpu", input._dtype)
        tensors = [t for t in (input, target, weight, pos_weight) if t is not None]
        dt = _dtype.result_dtype(tensors)
        if target._dtype._category != 2:
            raise RuntimeError(f"result type {_legacy_name(_dtype.result_dtype((input, target)))} can't be "
                               f"cast to the desired output type {_legacy_name(target._dtype)}")
        xp = xp_of(input)
        x = input._data.astype(dt.np, copy=False)
        y = target._data.astype(dt.np, copy=False)
        with quiet_errors():
            log_sig = xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))
        if pos_weight is not None:
            _check_broadcast_into(x.shape, pos_weight._data.shape, y.shape)
            log_sig = log_sig * ((pos_weight._data.astype(dt.np, copy=False) - 1) * y + 1)
        loss = (1 - y) * x - log_sig
        if weight is not None:
            _check_broadcast_into(x.shape, x.shape, weight._data.shape)
            loss = loss * weight._data.astype(dt.np, copy=False)
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction, ctx.numel = reduction, x.size
        return _reduce_array(xp, loss, reduction)

    def backward(ctx, grad):
        input, target, weight, pos_weight = ctx.saved_values
        need = ctx.needs_input_grad
        gi = gt = None
        if need[0]:
            if pos_weight is not None:
                t = pos_weight * target
                gi = (t + 1 - target) * input.sigmoid() - t
            else:
                gi = input.sigmoid() - target
            gi = _scaled(ctx, gi * grad, weight, input)
        if need[1]:
            if pos_weight is not None:
                gt = _log_sigmoid(-input) - _log_sigmoid(input) * pos_weight
            else:
                gt = -input
            gt = _scaled(ctx, gt * grad, weight, target)
        return _tensor_grads(ctx, gi, gt)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy between probabilities ``input`` and ``target`` (same shape and dtype);
    ``weight`` broadcasts to the target's shape."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        _not_differentiable("binary_cross_entropy", "weight", weight)
        _check_broadcast_into(target.shape, target.shape, weight.shape)
        weight = weight.expand(target.shape)
    return apply(BinaryCrossEntropyBackward0, input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy in one numerically stable formula; ``pos_weight`` weighs the
    positive term per class (broadcast along the last dim), ``weight`` every element."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    _not_differentiable("binary_cross_entropy_with_logits", "weight", weight)
    _not_differentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return apply(BinaryCrossEntropyWithLogitsBackward0, input, target, weight, pos_weight, reduction)


# ----------------------------------------------------------------------------- class-index losses
def _check_class_args(input, target, weight):
    """PyTorch's shape and dtype checks of nll_loss / cross_entropy with class-index targets."""
    nd = input._data.ndim
    shape, tshape = input._data.shape, target._data.shape
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and (tshape[0] if tshape else 0) != shape[0]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                         f"({tshape[0] if tshape else 0}).")
    if nd <= 2:
        if len(tshape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1 and len(tshape) == 1 and tshape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {tshape[0]}")
    elif nd == 4:
        if len(tshape) != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets "
                               f"of dimension: {len(tshape)}")
        if tshape[1:] != shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: {list(tshape)}")
    elif tshape[1:] != shape[2:]:
        raise RuntimeError(f"Expected target size {[shape[0], *shape[2:]]}, got {list(tshape)}")
    n_classes = shape[0 if nd == 1 else 1]
    if weight is not None and (weight._data.ndim != 1 or weight._data.size != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight._data.shape)}")
    if target._dtype is not _dtype.int64 and target._dtype is not _dtype.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_legacy_name(target._dtype)}")
    if weight is not None and weight._dtype is not input._dtype:
        raise RuntimeError(f"expected scalar type {_legacy_name(input._dtype)} but found "
                           f"{_legacy_name(weight._dtype)}")


def _class_terms(ctx, xp, logp, target, weight, ignore_index):
    """Per-target terms ``-weight[t] * logp[t]`` (0 where ignored), shaped like the target.

    Records on ``ctx`` what backward needs: the class axis, the safe targets, the mask of the
    non-ignored ones (or None), the per-target weights (or None when all are 1), the class weights
    and the total weight (the mean's denominator)."""
    cax = 0 if logp.ndim == 1 else 1
    t = target._data
    if logp.ndim == 1:
        t = t.reshape(())
    if t.dtype != _INT64:
        t = t.astype(_INT64)
    safe, valid = _checked_targets(xp, t, logp.shape[cax], ignore_index)
    picked = xp.take_along_axis(logp, xp.expand_dims(safe, cax), axis=cax).squeeze(cax)
    w = None
    if weight is not None:
        w = weight._data[safe]
        if valid is not None:
            w = w * valid
        loss = -(picked * w)
    else:
        loss = -picked
        if valid is not None:
            w = valid.astype(logp.dtype)
    if valid is not None:
        loss = xp.where(valid, loss, 0).astype(logp.dtype, copy=False)
    ctx.cax, ctx.safe, ctx.valid, ctx.w = cax, safe, valid, w
    ctx.class_weight = None if weight is None else weight._data
    ctx.total_weight = loss.size if w is None else _total(w)
    return loss


def _target_distribution(ctx, xp, dtype, shape, smoothing):
    """``(G, rowsum)``: the weighted target distribution of every element along the class axis
    (one-hot of the target times its weight, mixed with the smoothing term), scaled for a mean
    reduction, and its sum over the classes. The loss's gradient with respect to the
    log-probabilities is ``-G * grad_output``."""
    cax = ctx.cax
    n_classes = shape[cax]
    class_shape = [1] * len(shape)
    class_shape[cax] = n_classes
    safe = xp.expand_dims(ctx.safe, cax)
    g = (xp.arange(n_classes).reshape(class_shape) == safe).astype(dtype)
    w = None if ctx.w is None else xp.expand_dims(ctx.w, cax)
    if w is not None:
        g *= w
    valid = None if ctx.valid is None else xp.expand_dims(ctx.valid, cax)
    if smoothing > 0:
        g *= 1 - smoothing
        spread = smoothing / n_classes
        if ctx.class_weight is not None:
            spread = spread * ctx.class_weight.reshape(class_shape)
        g += spread if valid is None else spread * valid
        rowsum = g.sum(axis=cax, keepdims=True)
    else:
        rowsum = 1.0 if w is None else w
    if ctx.reduction == "mean":
        with quiet_errors():  # no total weight (all ignored, or zero weights): inf, then NaN grads
            scale = xp.true_divide(1.0, xp.asarray(ctx.total_weight, dtype=dtype))
        if valid is not None:  # ignored targets get exactly 0, even when the scale is inf
            scale = xp.where(valid, scale, 0)
        with quiet_errors():
            g = g * scale
            rowsum = rowsum * scale
    return g, rowsum


def _reduced_grad(ctx, grad):
    """``grad_output`` shaped to broadcast against the input (class axis put back for 'none')."""
    if ctx.reduction == "none" and ctx.cax == 1:
        return grad.unsqueeze(1)
    return grad


def _with_history_of(t, edge):
    """``t``'s data with the autograd history of the op input reached through ``edge``: what a
    function of ``t`` computes then backpropagates into that input."""
    fn, nr = edge
    if fn is None:
        return t
    if type(fn) is AccumulateGrad:
        alias = t._detached_alias()
        alias._requires_grad = True
        alias._grad_acc = weakref.ref(fn)
        return alias
    return t._alias_with_history(fn, nr, True)


def _log_softmax_array(xp, x, axis):
    """``log_softmax`` along ``axis`` on arrays: ``(x - max) - log(sum(exp(x - max)))`` (float16
    computed in float32, the result in ``x``'s dtype)."""
    acc = x.astype(_F32) if x.dtype == _F16 else x
    with quiet_errors():
        shifted = acc - acc.max(axis=axis, keepdims=True)
        shifted -= xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted.astype(x.dtype, copy=False)


class NllLossBackward0(Node):
    """Negative log-likelihood of class-index targets given log-probabilities."""

    def forward(ctx, input, target, weight, reduction, ignore_index):
        xp = xp_of(input)
        x = input._data
        ctx.reduction, ctx.shape, ctx.dtype = reduction, x.shape, x.dtype
        with quiet_errors():
            loss = _class_terms(ctx, xp, x, target, weight, ignore_index)
            out = _reduce_terms(loss, ctx.total_weight, reduction)
        return xp.asarray(out).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return _tensor_grads(ctx, None)
        xp = xp_of(grad)
        with _on_device(grad):
            g, _ = _target_distribution(ctx, xp, ctx.dtype, ctx.shape, 0.0)
            g = const(-g, grad)
        return _tensor_grads(ctx, g * _reduced_grad(ctx, grad))


class NllLoss2DBackward0(NllLossBackward0):
    """nll_loss of inputs with spatial dims ``(N, C, d1, ...)`` (PyTorch's name for them)."""


def cross_entropy_grad_kernel(xp, ctx, logp, grad_output):
    """Backend hook (a key of ``backend.overrides``): cross entropy's input gradient as one array,
    ``(softmax * sum(G) - G) * grad_output``, from the saved log-probabilities and what the
    forward recorded on ``ctx``; None to use the generic computation. The generic version always
    declines; a backend's kernel replaces it. Only consulted when backward is not recorded."""
    return None


class CrossEntropyLossBackward0(Node):
    """Cross entropy of class-index targets, fused: log-softmax (stable logsumexp), the weighted
    target log-probabilities with ignored targets and label smoothing, and the reduction.

    Backward is ``(softmax * sum(G) - G) * grad_output`` with ``G`` the (weighted, smoothed)
    target distribution; the softmax comes from the saved log-probabilities, and under
    ``create_graph`` it is a differentiable function of the input's history."""

    def forward(ctx, input, target, weight, reduction, ignore_index, label_smoothing):
        xp = xp_of(input)
        x = input._data
        ctx.reduction, ctx.smoothing = reduction, label_smoothing
        cax = 0 if x.ndim == 1 else 1
        logp = _log_softmax_array(xp, x, cax)
        with quiet_errors():
            nll = _class_terms(ctx, xp, logp, target, weight, ignore_index)
            out = _reduce_terms(nll, ctx.total_weight, reduction)
            if label_smoothing > 0:
                out = (1 - label_smoothing) * out + _smoothing_term(ctx, xp, logp, weight, reduction) * (
                    label_smoothing / logp.shape[cax])
        if ctx.needs_input_grad:
            ctx.save_for_backward(Tensor._make(logp, input._device))
        return xp.asarray(out).astype(x.dtype, copy=False)

    def backward(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return _tensor_grads(ctx, None)
        (logp,) = ctx.saved_values
        xp = xp_of(logp)
        lp = logp._data
        kernel = logp._device._backend.overrides.get(cross_entropy_grad_kernel)
        if kernel is not None and not create_graph():
            with _on_device(logp):
                gi = kernel(xp, ctx, lp, grad._data)
            if gi is not None:
                return _tensor_grads(ctx, const(gi, logp))
        with _on_device(logp):
            g, rowsum = _target_distribution(ctx, xp, lp.dtype, lp.shape, ctx.smoothing)
            if create_graph():
                z = _with_history_of(logp, ctx.next_functions[0])
                softmax = (z - z.logsumexp(ctx.cax, keepdim=True)).exp()
                gi = softmax * const(xp.asarray(rowsum, dtype=lp.dtype), logp) - const(g, logp)
            else:
                gi = const(xp.exp(lp) * rowsum - g, logp)
        return _tensor_grads(ctx, gi * _reduced_grad(ctx, grad))


def _smoothing_term(ctx, xp, logp, weight, reduction):
    """The label-smoothing part of cross entropy before its ``smoothing / C`` factor: minus the
    (class-weighted) sum of the log-probabilities, 0 for ignored targets, reduced."""
    cax = ctx.cax
    if weight is not None:
        shape = [1] * logp.ndim
        shape[cax] = logp.shape[cax]
        smooth = -(logp * weight._data.reshape(shape)).sum(axis=cax)
    else:
        smooth = -logp.sum(axis=cax)
    if ctx.valid is not None:
        smooth = xp.where(ctx.valid, smooth, 0).astype(logp.dtype, copy=False)
    return _reduce_terms(smooth, ctx.total_weight, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood: ``-weight[t] * input[n, t]`` for each target class ``t``;
    targets equal to ``ignore_index`` count for nothing (and the mean divides by the summed
    weights of the others)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_class_args(input, target, weight)
    _not_differentiable("nll_loss_forward", "weight", weight)
    spatial = input._data.ndim >= 3
    if input._dtype._category != 2:
        kernel = "nll_loss2d_forward_out_frame" if spatial else "nll_loss_out_frame"
        raise _not_implemented(kernel, input._dtype)
    op = NllLoss2DBackward0 if spatial else NllLossBackward0
    return apply(op, input, target, weight, reduction, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy between the logits ``input`` and ``target``: class indices (int64 or uint8)
    or, when ``target`` has the input's shape, class probabilities."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if target.shape == input.shape:
        if target._dtype._category != 2:
            raise RuntimeError("Expected floating point type for target with class probabilities, got "
                               f"{_legacy_name(target._dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_smoothing(label_smoothing)
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    _check_smoothing(label_smoothing)
    if input._dtype._category != 2:
        raise _not_implemented("log_softmax_lastdim_kernel_impl", input._dtype)
    _check_class_args(input, target, weight)
    _not_differentiable("nll_loss_forward", "weight", weight)
    return apply(CrossEntropyLossBackward0, input, target, weight, reduction, ignore_index,
                 max(float(label_smoothing), 0.0))


def _check_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing):
    cax = 0 if input.dim() == 1 else 1
    n_classes = input.shape[cax]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, cax)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    terms = logp * target
    if weight is not None:
        terms = terms * (weight.view([n_classes if d == cax else 1 for d in range(input.dim())])
                         if input.dim() > 1 else weight)
    if reduction == "none":
        return -terms.sum(cax)
    total = -terms.sum()
    if reduction == "sum":
        return total
    n = input.numel() // n_classes if n_classes else 0
    return total / n if n else total * float("nan")


# ----------------------------------------------------------------------------- composite losses
@autocast_function("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``target * (log(target) - input)`` with ``input`` in log space
    (and ``target`` too with ``log_target``). ``reduction='batchmean'`` divides the sum by the
    batch size, which is the mathematical KL divergence."""
    if size_average is not None or reduce is not None:
        applied = _reduction.legacy_get_string(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support "
                          "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                          "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                          "major release.", stacklevel=2)
        applied = "sum" if reduction == "batchmean" else _checked(reduction)
    if input._dtype._category != 2 or target._dtype._category != 2:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = target.exp() * (target - input)
    else:
        out = xlogy(target, target) - target * input
    reduced = _reduce(out, applied)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size(0)
    return reduced


@autocast_function("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of a Poisson target: ``exp(input) - target * input`` (log-rate
    input) or ``input - target * log(input + eps)``; ``full`` adds the Stirling term."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = xlogy(target, target) - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under ``N(input, var)``: ``0.5 * (log(var) +
    (input - target) ** 2 / var)``; ``var`` is clamped at ``eps`` (without affecting its gradient)
    and may omit, or be 1 in, one dim of the input's shape (shared variance)."""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (var.dim() == input.dim()
                  and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@autocast_function("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ranks ``input1`` above ``input2`` where
    ``target`` is 1 (below where -1)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got "
                           f"sizes: input1: {input1.size()}, input2: {input2.size()}, target: "
                           f"{target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@autocast_function("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(input1, input2)`` where ``target`` is 1, ``max(0, cos - margin)`` where -1;
    rows of 2-D inputs with a 1-D target, or 1-D inputs with a 0-D target."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    need = 2 if tdim == 1 else 1
    if input1.dim() != need or input2.dim() != need:
        raise RuntimeError(f"{tdim}D target tensor expects {need}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = float(np.float32(1e-12))      # PyTorch keeps this epsilon in a float (single precision)
    prod_sum = (input1 * input2).sum(tdim)
    mag_square1 = (input1 * input1).sum(tdim) + eps
    mag_square2 = (input2 * input2).sum(tdim) + eps
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = zeros_like(cos)
    pos = where(target == 1, 1 - cos, zeros)
    neg = where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


@autocast_function("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (other target
    values add both terms). Shapes: ``input`` and ``target`` broadcastable."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if input._dtype._category == 1:   # integer input: PyTorch casts the margin to its dtype (truncating)
        margin = int(margin)
    zeros = zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


@autocast_function("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``pairwise_distance`` (``p``, ``eps``);
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance. Shapes: ``(N, D)`` or ``(D,)``."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = dist_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` for any ``distance_function`` (default
    ``pairwise_distance``); ``swap`` as in ``triplet_margin_loss``; ``margin`` must be positive."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def _reduce_rows(per_sample, reduction):
    """``_reduce`` for the margin losses, whose mean over no samples is 0 in PyTorch (not NaN)."""
    if reduction == "mean" and per_sample.numel() == 0:
        return per_sample.sum()
    return _reduce(per_sample, reduction)


def _check_margin_input(input):
    """Rows ``(N, C)`` of a ``(C,)`` or ``(N, C)`` input (``N`` may be 0) and their target shape."""
    if input.dim() > 2 or (input.dim() == 2 and input.shape[1] == 0) or (input.dim() == 1 and input.numel() == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if input.dim() == 0:
        return input.reshape(1, 1)
    return input if input.dim() == 2 else input.unsqueeze(0)


@autocast_function("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: for each sample, ``sum over j != y of w[y] * max(0, margin - x[y] +
    x[j]) ** p / C`` (``p`` 1 or 2). Shapes: input ``(N, C)`` or ``(C,)``, target ``(N,)`` or ``()``
    class indices, ``weight`` ``(C,)``."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    rows = _check_margin_input(input)
    n, c = rows.shape
    if target._dtype not in (_dtype.int64,):
        raise RuntimeError(f"expected scalar type Long but found {_legacy_name(target._dtype)}")
    if target.numel() != n or (input.dim() == 2 and target.dim() != 1):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    y = target.reshape(n, 1)
    if n and (bool((y._data < 0).any()) or bool((y._data >= c).any())):
        raise RuntimeError("target out of range")
    z = margin - rows.gather(1, y) + rows
    # a term counts where z > 0, as PyTorch's kernel tests it: a NaN z (NaN input) adds nothing
    counted = ones_like(z, dtype=_dtype.bool).scatter(1, y, False).logical_and(z > 0)
    h = where(counted, z, zeros_like(z))
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[y]
    per_sample = h.sum(1) / c
    if input.dim() < 2:
        per_sample = per_sample.reshape(())
    return _reduce_rows(per_sample, reduction)


@autocast_function("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: for each sample, ``sum over targets j and non-targets k of
    max(0, 1 - (x[j] - x[k])) / C``. ``target`` (int64, the input's shape) lists the target classes
    and ends at its first -1. Shapes: input ``(N, C)`` or ``(C,)``."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    rows = _check_margin_input(input)
    if target._dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_legacy_name(target._dtype)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    n, c = rows.shape
    y = target.reshape(n, c)
    xp = xp_of(y)
    labels = y._data
    if labels.size and (bool((labels < -1).any()) or bool((labels >= c).any())):
        raise RuntimeError("multilabel_margin_loss: target out of range")
    # a label counts until the first -1 of its row
    valid = xp.cumprod(labels != -1, axis=1).astype(bool)
    safe = xp.where(valid, labels, 0)
    is_target = xp.zeros((n, c), dtype=bool)
    if labels.size:
        hits = xp.zeros((n, c), dtype=np.int64)
        xp.add.at(hits, (xp.repeat(xp.arange(n), c), safe.reshape(-1)), valid.reshape(-1).astype(np.int64))
        is_target = hits > 0
    pairs = valid[:, :, None] & ~is_target[:, None, :]
    x_target = rows.gather(1, const(safe, y))
    z = (1 - (x_target.unsqueeze(2) - rows.unsqueeze(1))).clamp_min(0)
    per_sample = where(const(pairs, z), z, zeros_like(z)).sum((1, 2)) / c
    if input.dim() < 2:
        per_sample = per_sample.reshape(())
    return _reduce_rows(per_sample, reduction)


@autocast_function("multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """One-vs-all logistic loss averaged over the classes (the last dim):
    ``-mean_c(w_c * (y_c * log(sigmoid(x_c)) + (1 - y_c) * log(sigmoid(-x_c))))``."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# ----------------------------------------------------------------------------- CTC
def _log_add3(xp, a, b, c):
    """``log(exp(a) + exp(b) + exp(c))`` as PyTorch's CTC kernel computes it (max shifted, a max
    of -inf taken as 0)."""
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(m == -xp.inf, 0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _shifted(xp, a, k):
    """``a`` (N, S) moved ``k`` places right along S, -inf coming in."""
    out = xp.full(a.shape, -xp.inf, dtype=a.dtype)
    if k < a.shape[1]:
        out[:, k:] = a[:, :a.shape[1] - k]
    return out


def _shifted_left(xp, a, k):
    """``a`` (N, S) moved ``k`` places left along S, -inf coming in."""
    out = xp.full(a.shape, -xp.inf, dtype=a.dtype)
    if k < a.shape[1]:
        out[:, :a.shape[1] - k] = a[:, k:]
    return out


class CtcLossBackward0(Node):
    """Per-sample CTC negative log-likelihood ``(N,)`` of padded ``targets`` ``(N, L)`` under
    ``log_probs`` ``(T, N, C)``: the log-space forward (alpha) recursion over the extended label
    sequence (blanks between and around the labels), vectorised over the batch and the positions.

    Backward runs the beta recursion and returns PyTorch's gradient,
    ``(exp(log_probs) - exp(log(alpha * beta) + nll - log_probs)) * grad``, which is the gradient
    with respect to the logits of a ``log_softmax`` that produced ``log_probs`` (both agree after
    that log_softmax's backward); zero past each input length."""

    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        xp = xp_of(log_probs)
        lp = log_probs._data
        t_max, n, _ = lp.shape
        il = xp.asarray(input_lengths, dtype=np.int64)
        tl = xp.asarray(target_lengths, dtype=np.int64)
        s_len = 2 * targets._data.shape[1] + 1
        ext = xp.full((n, s_len), blank, dtype=np.int64)
        ext[:, 1::2] = targets._data
        positions = xp.arange(s_len)
        s_valid = positions[None, :] < (2 * tl + 1)[:, None]
        skip = xp.zeros((n, s_len), dtype=bool)
        skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
        lpe = lp[:, xp.arange(n)[:, None], ext]                      # (T, N, S)
        ninf = xp.asarray(-xp.inf, dtype=lp.dtype)
        alpha = xp.full((t_max, n, s_len), -xp.inf, dtype=lp.dtype)
        with quiet_errors():
            if t_max:
                first = xp.where(positions[None, :] == 0, lpe[0], ninf)
                first = xp.where((positions[None, :] == 1) & (tl[:, None] > 0), lpe[0], first)
                alpha[0] = first
            for t in range(1, t_max):
                prev = alpha[t - 1]
                la3 = xp.where(skip, _shifted(xp, prev, 2), ninf)
                alpha[t] = xp.where(s_valid, _log_add3(xp, prev, _shifted(xp, prev, 1), la3) + lpe[t], ninf)
            rows = xp.arange(n)
            t_end = xp.maximum(il - 1, 0)
            l1 = alpha[t_end, rows, 2 * tl]
            l2 = xp.where(tl > 0, alpha[t_end, rows, xp.maximum(2 * tl - 1, 0)], ninf)
            m = xp.maximum(l1, l2)
            m = xp.where(m == -xp.inf, 0, m)
            log_likelihood = xp.log(xp.exp(l1 - m) + xp.exp(l2 - m)) + m
            # no input frames: only an empty target is possible
            empty = xp.where(tl == 0, xp.asarray(0, dtype=lp.dtype), ninf)
            nll = -xp.where(il == 0, empty, log_likelihood)
        ctx.arrays = (alpha, lpe, ext, skip, s_valid, il, tl, nll)
        ctx.zero_infinity = zero_infinity
        ctx.save_for_backward(log_probs)
        return nll

    def backward(ctx, grad):
        (log_probs,) = ctx.saved_values
        alpha, lpe, ext, skip, s_valid, il, tl, nll = ctx.arrays
        xp = xp_of(log_probs)
        lp = log_probs._data
        t_max, n, c = lp.shape
        s_len = ext.shape[1]
        rows = xp.arange(n)
        positions = xp.arange(s_len)
        ninf = xp.asarray(-xp.inf, dtype=lp.dtype)
        last = (positions[None, :] == 2 * tl[:, None]) | ((positions[None, :] == 2 * tl[:, None] - 1)
                                                         & (tl[:, None] > 0))
        skip_ahead = xp.zeros_like(skip)          # whether position s may skip to s + 2
        skip_ahead[:, :-2] = skip[:, 2:]
        betas = xp.full((t_max, n, s_len), -xp.inf, dtype=lp.dtype)
        beta_next = xp.full((n, s_len), -xp.inf, dtype=lp.dtype)
        with quiet_errors():
            for t in range(t_max - 1, -1, -1):
                lb3 = xp.where(skip_ahead, _shifted_left(xp, beta_next, 2), ninf)
                step = _log_add3(xp, beta_next, _shifted_left(xp, beta_next, 1), lb3) + lpe[t]
                beta = xp.where((t < il - 1)[:, None] & s_valid, step, ninf)
                beta = xp.where((t == il - 1)[:, None] & last, lpe[t], beta)
                betas[t] = beta
                beta_next = beta
            # log(alpha * beta) summed per character, over the positions in PyTorch's order (last first)
            ab = alpha + betas
            lcab = xp.full((t_max, n, c), -xp.inf, dtype=lp.dtype)
            for s in range(s_len - 1, -1, -1):
                ch = ext[:, s]
                acc = lcab[:, rows, ch]
                new = ab[:, :, s]
                m = xp.maximum(acc, new)
                merged = xp.log(xp.exp(acc - m) + xp.exp(new - m)) + m
                lcab[:, rows, ch] = xp.where(acc == -xp.inf, new, merged)
            d = xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)
        live = xp.arange(t_max)[:, None] < il[None, :]
        if ctx.zero_infinity:
            live = live & (nll != xp.inf)[None, :]
        d = xp.where(live[:, :, None], d, xp.zeros((), dtype=lp.dtype))
        return const(d, log_probs) * grad.reshape(1, n, 1)


def _lengths(name, lengths, n):
    """``input_lengths``/``target_lengths`` (a tensor or a sequence of ints) as a tuple of ints."""
    if isinstance(lengths, Tensor):
        values = lengths.reshape(-1).tolist()
    else:
        values = [int(v) for v in (lengths if isinstance(lengths, (list, tuple)) else [lengths])]
    if len(values) != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return tuple(int(v) for v in values)


def _padded_targets(targets, target_lengths, n):
    """``targets`` as an ``(N, max target length)`` tensor: from padded ``(N, S)`` targets or from
    all targets concatenated (1-D)."""
    longest = max(target_lengths, default=0)
    xp = xp_of(targets)
    t = targets._data
    if targets.dim() == 2 and n:
        if t.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{t.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)")
        padded = t[:, :longest]
    else:
        total = sum(target_lengths)
        if t.shape[0] < total:
            raise RuntimeError(f"Expected tensor to have size at least {total} at dimension 0, but got size "
                               f"{t.shape[0]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_cpu)")
        starts = np.cumsum((0,) + target_lengths[:-1])
        index = np.minimum(starts[:, None] + np.arange(longest)[None, :], max(total - 1, 0))
        padded = t[xp.asarray(index)] if total else xp.zeros((n, longest), dtype=t.dtype)
    lengths = xp.asarray(target_lengths, dtype=np.int64)
    padded = xp.where(xp.arange(longest)[None, :] < lengths[:, None], padded, 0)
    return Tensor._make(padded.astype(np.int64), targets._device)


@autocast_function("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist Temporal Classification loss.

    Shapes: ``log_probs`` ``(T, N, C)`` (or ``(T, C)`` unbatched), log-probabilities such as a
    ``log_softmax`` output; ``targets`` ``(N, S)`` padded, or 1-D with all targets concatenated;
    ``input_lengths`` and ``target_lengths`` ``(N,)`` (tensors or sequences). ``zero_infinity``:
    infinite losses (impossible alignments) and their gradients become 0. ``reduction='mean'``
    divides each loss by its target length (at least 1) and averages over the batch.
    """
    if reduction not in ("none", "mean", "sum"):
        _reduction.get_enum(reduction)
        reduction = _checked(reduction)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be Tensors or both be "
                        "sequences of ints")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.dim() == 1:
            targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be a 2-D or 3-D tensor, but got {log_probs.dim()}-D")
    t_max, n, n_classes = log_probs.shape
    if not 0 <= blank < n_classes:
        raise RuntimeError("blank must be in label range")
    il = _lengths("input_lengths", input_lengths, n)
    tl = _lengths("target_lengths", target_lengths, n)
    for length in il:
        if length > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {length} "
                               "(while checking arguments for ctc_loss_cpu)")
    padded = _padded_targets(targets, tl, n)
    nll = apply(CtcLossBackward0, log_probs, padded, il, tl, blank, zero_infinity)
    if zero_infinity:
        nll = where(nll == float("inf"), zeros_like(nll), nll)
    if reduction == "mean":
        dev = nll._device
        lengths = Tensor._make(dev._backend.xp.asarray(tl, dtype=nll._data.dtype), dev).clamp_min(1)
        return (nll / lengths).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
