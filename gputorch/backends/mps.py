"""``gputorch.backends.mps``: Apple's Metal backend, which gputorch does not have.

Device-selection code commonly asks ``torch.backends.mps.is_available()``; here it is
always False (gputorch's devices are "cpu" and "cuda"), so such code falls through to
CUDA or CPU. Imports nothing beyond the standard library.
"""

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer"]


def is_available():
    """False: gputorch has no MPS device."""
    return False


def is_built():
    """False: gputorch is not built with MPS support."""
    return False


def is_macos_or_newer(major, minor):
    """False: only meaningful with an MPS device."""
    return False


def is_macos13_or_newer(minor=0):
    """False: only meaningful with an MPS device."""
    return False
