"""The stack of active ``saved_tensors_hooks`` (pack, unpack) pairs, one stack per thread
(as in PyTorch: hooks set in one thread do not apply to graphs recorded in another)."""
import threading


class _HookStack(threading.local):
    def __init__(self):
        self.stack = []


STATE = _HookStack()
