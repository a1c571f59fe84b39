"""Padding layers over ``F.pad``: Zero/Constant/Reflection/Replication/CircularPad 1d, 2d and 3d.

Each layer pads the last 1, 2 or 3 dims. ``padding`` is an int (the same on every side) or a
tuple in ``F.pad``'s order, last dim first: ``(left, right)``, ``(left, right, top, bottom)`` or
``(left, right, top, bottom, front, back)``; it is stored as the full tuple.
"""
from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


def _sides(padding, dims):
    """``padding`` as ``2 * dims`` ints (an int pads every side alike; a tuple is kept as given)."""
    if isinstance(padding, (list, tuple)):
        return tuple(padding)
    return (padding,) * (2 * dims)


class _PadNd(Module):
    """A padding layer: ``F.pad(input, self.padding, mode)``."""
    __constants__ = ["padding"]
    _dims = 1
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(padding, self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]
    _mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim of ``(N, C, W)`` or ``(C, W)`` with ``value``."""
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims of ``(N, C, H, W)`` or ``(C, H, W)`` with ``value``."""
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` with ``value``."""
    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Mirrors ``(N, C, W)`` or ``(C, W)`` at its edges, without repeating the edge; each pad must be
    smaller than the padded size."""
    _dims = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Mirrors the last two dims of ``(N, C, H, W)`` or ``(C, H, W)``."""
    _dims = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    """Mirrors the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    _dims = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Repeats the edge values of ``(N, C, W)`` or ``(C, W)``."""
    _dims = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Repeats the edge values of the last two dims of ``(N, C, H, W)`` or ``(C, H, W)``."""
    _dims = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    """Repeats the edge values of the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    _dims = 3
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        n = self._dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Wraps ``(N, C, W)`` or ``(C, W)`` around: the left pad is copied from the right end and vice versa."""
    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Wraps the last two dims of ``(N, C, H, W)`` or ``(C, H, W)`` around."""
    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Wraps the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` around."""
    _dims = 3
