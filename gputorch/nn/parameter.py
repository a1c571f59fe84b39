"""``Parameter`` and ``Buffer``: tensors that a Module registers when they are assigned to it.

A :class:`Parameter` is a Tensor subclass sharing its data's storage; it is a leaf that
requires grad by default, and assigning one to a Module attribute adds it to the module's
parameters. Ops on a Parameter return plain Tensors (the dispatcher always wraps results
as ``Tensor``), as in PyTorch.

``Buffer(t)`` returns a detached plain Tensor marked as a buffer (``isinstance(x, Buffer)``
holds for it); assigning it to a Module attribute registers it as a buffer.
"""
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that is a module parameter.

    Args:
        data (Tensor): the parameter's data (shared, not copied). Default: an empty tensor.
        requires_grad (bool): whether the parameter requires gradient (not affected by
            ``no_grad``). Default: ``True``.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        return cls._make_subclass(data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        known = memo.get(id(self))
        if known is not None:
            return known
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        state = dict(self.__dict__)
        for transient in ("_grad", "_grad_acc", "_hooks", "_post_acc_hooks", "_base", "_retains_grad"):
            state.pop(transient, None)
        return (_rebuild_parameter, (self.data, self.requires_grad, state))


def _rebuild_parameter(data, requires_grad, state=None):
    """Unpickling: a Parameter over ``data`` (hooks are not serialized, as in PyTorch)."""
    param = Parameter(data, requires_grad)
    if state:
        param.__dict__.update(state)
    return param


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` holds for the tensors that ``Buffer(...)`` returned."""

    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and bool(getattr(instance, "_is_buffer", False))
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that is module state but not a parameter (e.g. BatchNorm's running mean).

    Args:
        data (Tensor): buffer tensor (shared, not copied). Default: an empty tensor.
        persistent (bool): whether the buffer is part of the module's ``state_dict``. Default: ``True``.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param):
    """Whether ``param`` is an uninitialized (lazy) parameter; gputorch has none."""
    return False
