"""The default device for factory functions (``gputorch.set_default_device`` and
``with gputorch.device(...)``)."""
_stack = []
_default = [None]


def push(dev):
    _stack.append(dev)


def pop():
    _stack.pop()


def default_device():
    """The device new tensors get when no ``device=`` is given (None means CPU)."""
    return _stack[-1] if _stack else _default[0]


def set_default_device(dev):
    from ._device import device
    _default[0] = None if dev is None else device(dev)


def get_default_device():
    from ._device import device
    return default_device() or device("cpu")
