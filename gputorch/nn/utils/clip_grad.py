"""Gradient clipping: ``clip_grad_norm_`` (scale all gradients so that their joint norm is at most
``max_norm``), ``clip_grad_value_`` (clamp each gradient entry), and the two halves of the
first, ``get_total_norm`` and ``clip_grads_with_norm_``.

The joint norm is PyTorch's: the ``norm_type`` norm of the vector of per-tensor norms, and the
scale ``min(max_norm / (total_norm + 1e-6), 1)`` is applied to every gradient (on its device).
"""
import contextlib
import functools
import types
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def sum_of_squares_kernel(xp, arrays):
    """Backend hook (a key of ``backend.overrides``): the sum of the squares of every element of
    ``arrays`` (one device) as a 0-d array, computed in one pass (e.g. one multi-tensor kernel),
    or None to use the generic per-tensor norms. The generic version always declines."""
    return None


def _kernel_l2_norm(tensors):
    """The joint 2-norm from the backend's :func:`sum_of_squares_kernel`, or None."""
    dev = tensors[0]._device
    kernel = dev._backend.overrides.get(sum_of_squares_kernel)
    if kernel is None:
        return None
    for t in tensors:
        if t._device is not dev or not t.is_floating_point():
            return None
    from ... import _dtype
    ctx = dev._ctx
    with (ctx if ctx is not None else contextlib.nullcontext()):
        total = kernel(dev._backend.xp, [t._data for t in tensors])
        if total is None:
            return None
        total = dev._backend.xp.sqrt(total).astype(_dtype.result_dtype(tensors).np)
    return Tensor._make(total, dev)


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of ``tensors`` taken together (the norm of their norms), on the first
    tensor's device; ``tensor(0.)`` when there are none."""
    from ...linalg import vector_norm
    from ...ops.creation import tensor as make_tensor
    from ...ops.shape import stack
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return make_tensor(0.0)
    first_device = tensors[0].device
    total = _kernel_l2_norm(tensors) if norm_type == 2.0 else None
    if total is None:
        norms = [vector_norm(t, norm_type) for t in tensors]
        dtypes = {n.dtype for n in norms}
        if len(dtypes) > 1:
            from ... import _dtype
            common = _dtype.result_dtype(norms)
            norms = [n.to(common) for n in norms]
        total = vector_norm(stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot "
            "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Multiply every gradient of ``parameters`` by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    per_device = {}
    for g in grads:
        c = per_device.get(g.device)
        if c is None:
            c = per_device[g.device] = coef.to(g.device)
        g.mul_(c)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their joint ``norm_type`` norm is at
    most ``max_norm``; returns the joint norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated: use ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient entry of ``parameters`` to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
