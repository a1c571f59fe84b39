"""``torch.cuda.amp``: PyTorch's deprecated spellings of ``gputorch.amp.autocast("cuda")``,
``gputorch.amp.GradScaler("cuda")`` and ``gputorch.amp.custom_fwd/custom_bwd(device_type="cuda")``
(they warn, as PyTorch's do, and work)."""
import warnings

from .. import _dtype
from ..amp import custom_function as _custom
from ..amp.autocast_mode import autocast as _autocast
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype or _dtype.float16, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale=2.0**16, ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: ``gputorch.amp.custom_fwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.cuda.amp.custom_bwd``: ``gputorch.amp.custom_bwd(device_type="cuda")``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom.custom_bwd(bwd, device_type="cuda")
