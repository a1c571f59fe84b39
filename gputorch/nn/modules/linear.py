"""Linear-family modules: ``Identity`` (``Linear`` and ``Bilinear`` follow it in this file)."""
from .module import Module

__all__ = ["Identity"]


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments.

    Shape: input ``(*)``, output ``(*)`` (the same tensor).
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input
