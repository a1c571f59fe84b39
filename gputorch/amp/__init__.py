"""Mixed precision: ``autocast`` regions and ``GradScaler`` (``torch.amp``)."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from .custom_function import custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype", "custom_fwd", "custom_bwd",
           "is_autocast_available"]
