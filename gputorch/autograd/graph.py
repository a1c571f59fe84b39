"""The autograd graph API: saved-tensor hooks and gradient edges.

``saved_tensors_hooks(pack, unpack)`` changes how ops save tensors for backward:
``pack(tensor)`` runs when a tensor is saved and may return any object; ``unpack(obj)``
runs when backward needs it and must return a tensor with the same content.
``save_on_cpu`` is the ready-made pair that keeps saved tensors in host memory.
"""
from collections import namedtuple

from . import saved_hooks
from .node import Node, grad_accumulator

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks"]

_DISABLED = [None]   # the error message while saved-tensor hooks are disabled


GradientEdge = namedtuple("GradientEdge", ("node", "output_nr"))
GradientEdge.__doc__ = "A (node, output_nr) pair: where a tensor's gradient enters the graph."


def get_gradient_edge(tensor):
    """The edge through which the gradient of ``tensor`` flows (its grad_fn or AccumulateGrad)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not "
                           "require gradients")
    if tensor.grad_fn is not None:
        return GradientEdge(tensor.grad_fn, tensor.output_nr)
    return GradientEdge(grad_accumulator(tensor), 0)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor in an iterable), as an in-place
    change outside gputorch's ops would."""
    tensors = (tensor,) if hasattr(tensor, "_vc") else tensor
    for t in tensors:
        t._vc[0] += 1


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through ``pack_hook`` and come back
    through ``unpack_hook``. Nested contexts: the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _DISABLED[0] is not None:
            raise RuntimeError(_DISABLED[0])
        saved_hooks.STATE.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        saved_hooks.STATE.stack.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep tensors saved for backward in CPU memory; they return to their device when unpacked."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor._device, tensor.detach().to("cpu", copy=True)

        def unpack(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager (and decorator) under which using ``saved_tensors_hooks`` raises
    ``RuntimeError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if saved_hooks.STATE.stack:
            raise RuntimeError(self.error_message)
        self._prev = _DISABLED[0]
        _DISABLED[0] = self.error_message
        return self

    def __exit__(self, *exc):
        _DISABLED[0] = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper
