"""Dropout: ``F.dropout``, ``F.dropout1d/2d/3d`` (whole channels), ``F.alpha_dropout`` and
``F.feature_alpha_dropout``.

As in PyTorch, dropout in training mode multiplies the input by a noise tensor:
``bernoulli(1 - p) / (1 - p)`` drawn from the default generator of the input's device
(so ``manual_seed`` makes it reproducible), one draw per element or, for the feature
variants, per ``(sample, channel)``. In evaluation mode, with ``p == 0`` or for an empty
input, the input itself is returned.
"""
import math
import warnings

from ..._tensor import Tensor
from ...ops.creation import empty, zeros
from . import _fused_dropout

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

_SELU_ALPHA_PRIME = 1.7580993408473766   # -selu_scale * selu_alpha: the value dropped units take


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, kept):
    """An uninitialised noise tensor: input-shaped (``kept == 0``), or for feature dropout the
    ``kept`` leading dims (``(N, C)`` batched, ``(C,)`` unbatched) followed by ones."""
    shape = input._data.shape
    if kept:
        if len(shape) < kept:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:kept] + (1,) * (len(shape) - kept)
    return empty(shape, dtype=input._dtype, device=input._device)


def _dropout_impl(input, p, training, inplace, kept, alpha):
    if not isinstance(input, Tensor):
        raise TypeError(f"dropout(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if p == 0 or not training or input._data.size == 0:
        return input
    if p == 1:
        gone = zeros((), dtype=input._dtype, device=input._device)
        return input.mul_(gone) if inplace else input * gone
    if not kept and not alpha and _fused_dropout.available(input):   # e.g. CUDA: a Philox kernel, no mask kept
        return _fused_dropout.dropout(input, p, inplace)
    noise = _noise(input, kept).bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME * _SELU_ALPHA_PRIME * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_SELU_ALPHA_PRIME * a).add_(_SELU_ALPHA_PRIME * a * p)
        noise.mul_(a)
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, 0, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value and an
    affine correction keeps the mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, 0, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, 2, True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs with probability ``p``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout_impl(input, p, training, inplace, ndim - 1, False)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, H, W)`` inputs with probability ``p`` (a 3-D input is
    taken as ``(N, C, L)``, as PyTorch does, with its warning)."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, 2, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs with probability ``p``."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, 1 if ndim == 4 else 2, False)
