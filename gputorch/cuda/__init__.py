"""``gputorch.cuda``: CUDA device management (availability, current device, RNG state)."""
from ..backends import get_backend


def _backend():
    return get_backend("cuda")


def is_available():
    """True when CuPy is installed and at least one GPU is visible."""
    return _backend().is_available()


def device_count():
    return _backend().device_count()
