"""Layouts and memory formats as PyTorch names them (``torch.strided``, ``torch.channels_last``).

gputorch's dense tensors are row-major (sparse COO tensors have the ``sparse_coo`` layout), and every
``memory_format=`` argument is accepted and leaves the data row-major (README, "Known differences").
The names exist so that programs passing them run.
"""
import math

__all__ = ["layout", "strided", "sparse_coo", "memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format", "legacy_contiguous_format", "pi", "e", "inf", "nan", "newaxis"]


class layout:
    """A tensor layout: ``strided`` (dense) or ``sparse_coo``."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


class memory_format:
    """A memory format (accepted everywhere; gputorch stores every tensor row-major)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")   # the layout of ``ops/sparse_coo.py``'s tensors
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format

# the mathematical constants torch exports
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None
