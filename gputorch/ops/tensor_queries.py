"""Questions about a tensor that PyTorch also asks as functions: ``is_tensor``, ``numel``,
``is_floating_point``, ``is_complex``, ``is_nonzero``, ``is_signed``, ``is_inference``,
``get_device``; and the function forms of ``detach``/``detach_``."""
from .._tensor import Tensor
from ._common import require_tensor
from .registry import tensor_method

__all__ = ["is_tensor", "numel", "is_floating_point", "is_complex", "is_nonzero", "is_signed", "is_inference",
           "get_device", "detach", "detach_"]


def is_tensor(obj):
    """Whether ``obj`` is a gputorch tensor (Parameters included)."""
    return isinstance(obj, Tensor)


def numel(input):
    """The number of elements of ``input``."""
    require_tensor("numel", input)
    return input.numel()


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating-point type."""
    require_tensor("is_floating_point", input)
    return input.dtype.is_floating_point


@tensor_method("is_complex")
def is_complex(input):
    """Whether ``input``'s dtype is complex (complex64 or complex128)."""
    require_tensor("is_complex", input)
    return input._dtype.is_complex


@tensor_method("is_nonzero")
def is_nonzero(input):
    """The truth value of a one-element tensor (PyTorch's errors for none or several elements)."""
    require_tensor("is_nonzero", input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_signed(input):
    """Whether ``input``'s dtype holds negative values (False for bool and uint8)."""
    require_tensor("is_signed", input)
    return input.is_signed()


def is_inference(input):
    """Whether ``input`` is an inference tensor (never, in gputorch: see ``Tensor.is_inference``)."""
    require_tensor("is_inference", input)
    return input.is_inference()


def get_device(input):
    """The CUDA device index holding ``input``; -1 on the CPU."""
    require_tensor("get_device", input)
    return input.get_device()


def detach(input):
    """``input.detach()``: the same data, outside the graph."""
    require_tensor("detach", input)
    return input.detach()


def detach_(input):
    """``input.detach_()``: takes ``input`` itself out of the graph."""
    require_tensor("detach_", input)
    return input.detach_()
