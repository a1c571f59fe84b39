"""Training curves of the examples: each point goes to TensorBoard (``--tensorboard DIR``) and to the
memory profiler's report, whichever of the two a run has.

    curves = Curves(tensorboard="runs/cnn", profiler=prof)
    curves.add("loss", loss.item(), step)
    curves.close()
"""

__all__ = ["Curves", "TENSORBOARD_HELP"]

TENSORBOARD_HELP = "also log the training curves for TensorBoard into DIR (tensorboard --logdir DIR)"


class Curves:
    """Where an example's scalars go: a ``SummaryWriter`` on ``tensorboard`` (a folder, or None)
    and ``profiler.add_scalar`` (a running ``MemoryProfiler``, or None)."""

    def __init__(self, tensorboard=None, profiler=None):
        self.writer = None
        if tensorboard:
            try:
                from gputorch.utils.tensorboard import SummaryWriter
            except ImportError as e:
                raise ImportError(f"--tensorboard needs the tensorboard package: {e}") from None
            self.writer = SummaryWriter(tensorboard)
        self.profiler = profiler

    def add(self, tag, value, step):
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)
        if self.profiler is not None and self.profiler.running:
            self.profiler.add_scalar(tag, value, step)

    def close(self):
        if self.writer is not None:
            self.writer.close()
