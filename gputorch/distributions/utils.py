"""Helpers shared by the distributions: parameter broadcasting, probabilities <-> logits,
clamping away from 0 and 1, and ``lazy_property``."""
import numbers

import numpy as np

from .._tensor import Tensor
from .._type_info import finfo

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tiny", "eps", "sum_rightmost"]


def broadcast_all(*values):
    """Tensors of one broadcast shape from tensors and Python numbers (numbers become tensors of
    the first tensor's dtype and device, or of the default dtype)."""
    from .. import broadcast_tensors, get_default_dtype, tensor
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        dt = get_default_dtype()
        return tuple(tensor(float(v), dtype=dt) for v in values)
    values = [v if isinstance(v, Tensor) else tensor(v, dtype=like.dtype, device=like.device) for v in values]
    return broadcast_tensors(*values)


def eps(dtype):
    """Machine epsilon of a floating gputorch dtype."""
    return finfo(dtype).eps


def tiny(dtype):
    """The smallest positive normal number of a floating gputorch dtype."""
    return finfo(dtype).tiny


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]``."""
    e = eps(probs.dtype)
    return probs.clamp(min=e, max=1 - e)


def logits_to_probs(logits, is_binary=False):
    """Sigmoid of binary logits, else softmax over the last dimension."""
    if is_binary:
        return logits.sigmoid()
    from ..nn.functional import softmax
    return softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """``log(p) - log1p(-p)`` for binary probabilities, else ``log(p)`` (both clamped)."""
    p = clamp_probs(probs)
    if is_binary:
        return p.log() - (-p).log1p()
    return p.log()


def sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


class lazy_property:
    """A property computed on first access and then stored on the instance (so that it appears in
    ``__dict__``, as PyTorch's distributions expect)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        from ..autograd import enable_grad
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


_sum_rightmost = sum_rightmost   # torch.distributions.utils' private name, used by some programs
