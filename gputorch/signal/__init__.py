"""``gputorch.signal``: signal processing; so far the window functions of ``signal.windows``."""
from . import windows  # noqa: F401

__all__ = ["windows"]
