"""The exceptions of ``gputorch.distributed`` (RuntimeError subclasses, as in PyTorch)."""

__all__ = ["DistError", "DistBackendError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """A failure in distributed communication."""


class DistBackendError(DistError):
    """A collective failed or did not complete within the process group's timeout."""


class DistNetworkError(DistError):
    """The communication engine could not reach a peer."""


class DistStoreError(DistError):
    """A key-value store for rendezvous failed (gputorch's rendezvous is MPI's; kept for PyTorch code)."""
