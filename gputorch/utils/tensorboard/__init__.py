"""``torch.utils.tensorboard``: :class:`SummaryWriter` writes TensorBoard event files.

Needs the ``tensorboard`` package (``pip install 'gputorch[tensorboard]'``), whose event-file writer
and protocol buffers it uses, as PyTorch's does; ``add_figure`` also needs matplotlib (in the same
extra).
"""
try:
    import tensorboard  # noqa: F401
except ImportError as e:   # pragma: no cover - exercised by a test that hides the package
    raise ImportError("gputorch.utils.tensorboard needs the tensorboard package: "
                      "pip install 'gputorch[tensorboard]'") from e

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
