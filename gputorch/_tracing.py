"""The tracing switch the dispatcher consults (``gputorch.jit`` sets it while it traces).

``STATE.graph`` is None outside a trace; inside one it is the graph being recorded, an object with
``record(cls, args, params, result)`` (an op ran) and ``rebind(tensor, result)`` (an in-place op
made ``tensor`` hold ``result``'s value). Kept apart from ``gputorch.jit`` so that the dispatcher
(a low layer) depends on this flag only.
"""


class _State:
    __slots__ = ("graph",)

    def __init__(self):
        self.graph = None


STATE = _State()
