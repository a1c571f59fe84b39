"""``gputorch.jit``: tracing into a small graph IR, traced modules that replay it, and a safe file
format for them (no pickle: the graph as JSON and the tensors as ``.npy`` arrays in one zip).

``trace(model, example_inputs)`` runs the model once and records every op; the result runs the
recorded ops directly, without the model's Python class or its module calls. Only what ran is
recorded: branches on tensor values warn (:class:`TracerWarning`) and are fixed to the branch
taken, and sizes read as Python numbers are fixed to the traced sizes.
"""
from ._graph import Graph, GraphNode  # noqa: F401
from ._serialization import load, save  # noqa: F401
from ._traced_module import TracedModule  # noqa: F401
from ._tracer import TracerWarning, trace_graph  # noqa: F401

__all__ = ["trace", "save", "load", "TracedModule", "TracerWarning", "ScriptModule", "is_tracing"]

ScriptModule = TracedModule


def trace(func, example_inputs=None, *, check_trace=False, strict=True, example_kwarg_inputs=None):
    """The traced form of ``func`` (an ``nn.Module`` or a function) on ``example_inputs`` (a tensor or a
    tuple of tensors). Runs ``func`` once, under ``no_grad`` for modules' parameters as traced
    values (gradients still flow when the traced module is called)."""
    from .. import nn
    if example_kwarg_inputs is not None:
        raise NotImplementedError("trace: example_kwarg_inputs is not supported; pass positional inputs")
    module = func if isinstance(func, nn.Module) else None
    graph, outputs = trace_graph(func, example_inputs, module)
    return TracedModule(graph, not isinstance(outputs, tuple))


def is_tracing():
    """Whether a trace is being recorded now."""
    from .. import _tracing
    return _tracing.STATE.graph is not None
