"""Tracing: run a function or module once on example inputs and record every op it runs.

The dispatcher records each op into the :class:`~gputorch.jit._graph.Graph` that ``_tracing.STATE``
holds; forward hooks on every submodule keep the module path of each op. Python control flow
that reads a tensor's value (``if x.sum() > 0``, ``int(x)``, ``x.item()``) is recorded as taken:
it warns with a :class:`TracerWarning`, as PyTorch's tracer does.
"""
import warnings

from .. import _tracing
from .._tensor import Tensor
from ._graph import Graph

__all__ = ["TracerWarning", "trace_graph"]


class TracerWarning(Warning):
    """A traced value was converted to a Python value: the trace is only valid for this input."""


def warn_value_read(what):
    """Called by Tensor when a traced tensor's value leaves the graph."""
    warnings.warn(f"Converting a tensor to a Python {what} might cause the trace to be incorrect. We can't "
                  "record the data flow of Python values, so this value will be treated as a constant in the "
                  "future. This means that the trace might not generalize to other inputs!", TracerWarning,
                  stacklevel=3)


def _as_tuple(args):
    return args if isinstance(args, tuple) else (args,)


def trace_graph(fn, example_inputs, module=None):
    """``(graph, outputs)``: ``fn(*example_inputs)`` run once with its ops recorded. ``module``'s
    parameters and buffers become graph params under their ``state_dict`` names."""
    inputs = _as_tuple(example_inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"trace: example input {i} must be a Tensor, got {type(x).__name__}")
    graph = Graph()
    for i, x in enumerate(inputs):
        graph.add_input(x, f"input{i}")
    handles = []
    if module is not None:
        for name, p in module.named_parameters():
            graph.add_param(p, name)
        for name, b in module.named_buffers():
            if b is not None:
                graph.add_param(b, name)
        def leave(mod, args, out):
            graph.scope.pop()      # returns None: a forward hook's return value would replace the output

        for path, sub in module.named_modules():
            handles.append(sub.register_forward_pre_hook(lambda m, a, p=path: graph.scope.append(p)))
            handles.append(sub.register_forward_hook(leave))
    if _tracing.STATE.graph is not None:
        raise RuntimeError("trace: already tracing (nested traces are not supported)")
    _tracing.STATE.graph = graph
    try:
        outputs = fn(*inputs)
    finally:
        _tracing.STATE.graph = None
        for h in handles:
            h.remove()
    flat = _as_tuple(outputs)
    for i, o in enumerate(flat):
        if not isinstance(o, Tensor):
            raise TypeError(f"trace: output {i} is a {type(o).__name__}; only tensors (or a tuple of them) can be "
                            f"traced")
    graph.finish(flat)
    return graph, outputs
