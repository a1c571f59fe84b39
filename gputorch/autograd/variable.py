"""``Variable``: PyTorch's legacy name for a tensor in the graph, kept for old programs (torchviz).

``Variable(tensor, requires_grad=False)`` returns a new tensor sharing ``tensor``'s data, outside
its graph, with ``requires_grad`` set; every tensor is an instance of ``Variable``.
"""

from .engine import ENGINE

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        from .._tensor import Tensor
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from .._tensor import Tensor
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad_(bool(requires_grad))
        return out

    # ``Variable._execution_engine.queue_callback(fn)``: run ``fn`` at the end of the running backward.
    _execution_engine = ENGINE
