"""Statistics and bookkeeping shared by the normalization ops' forwards.

Used by the generic forwards in ``nn.functional.normalization`` and by the backends' fused
forwards (the CUDA backend's layer/RMS/batch norm kernels), which must leave the same state
behind: the accumulation dtype, ``rstd``, the running statistics' update and what ``ctx``
records about the affine parameters.
"""
import numpy as np

from .._tensor import Tensor
from ._common import quiet_errors

__all__ = ["accumulated", "wrap_like", "rstd", "record_affine", "update_running"]

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def accumulated(x):
    """An array in its accumulation dtype (float32 for float16)."""
    return x.astype(_F32) if x.dtype == _F16 else x


def wrap_like(array, like):
    """``array`` as a tensor on the device of the tensor ``like``."""
    return Tensor._make(array, like._device)


def rstd(xp, var, eps):
    """The reciprocal standard deviation ``1 / sqrt(var + eps)``."""
    with quiet_errors():
        return 1.0 / xp.sqrt(var + eps)


def record_affine(ctx, input, weight, bias):
    """Note on ``ctx`` which of weight/bias were given and need gradients (they follow ``input``
    among the op's tensor arguments), and the dtypes of the tensors given."""
    need = ctx.needs_input_grad
    ctx.has_w, ctx.has_b = weight is not None, bias is not None
    ctx.need_w = ctx.has_w and len(need) > 1 and need[1]
    ctx.need_b = ctx.has_b and len(need) > 1 + ctx.has_w and need[1 + ctx.has_w]
    ctx.dtypes = tuple(t._dtype for t in (input, weight, bias) if t is not None)


def update_running(stat, batch_value, momentum):
    """``stat = momentum * batch_value + (1 - momentum) * stat`` in place (PyTorch's order) on
    the running-statistics tensor ``stat``, bumping its version."""
    old = stat._data
    new = momentum * batch_value.reshape(old.shape) + (1 - momentum) * accumulated(old)
    old[...] = new.astype(old.dtype, copy=False)
    stat._vc[0] += 1
