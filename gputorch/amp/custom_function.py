"""``custom_fwd`` / ``custom_bwd``: autocast for the forward and backward of a custom
``autograd.Function``, and ``is_autocast_available``.

A Function's ``backward`` runs outside autocast (the engine switches it off), so a Function whose
forward ran in a region would see other dtypes in its backward. ``custom_fwd`` records the region's
state on ``ctx`` and ``custom_bwd`` restores it around ``backward``. With ``cast_inputs=dtype``,
``custom_fwd`` instead runs the forward with autocast off, its floating-point tensor arguments of
the region's device cast to ``dtype`` (when the region is on; otherwise it runs as written).
"""
import functools

from .. import _dtype
from .autocast_mode import _cast_all, autocast, get_autocast_dtype, is_autocast_enabled

__all__ = ["custom_fwd", "custom_bwd", "is_autocast_available"]


def is_autocast_available(device_type):
    """Whether ``autocast`` supports ``device_type`` here ("cpu" and "cuda")."""
    return device_type in ("cpu", "cuda")


def _check_device_type(who, device_type):
    if not is_autocast_available(device_type):
        raise RuntimeError(f"{who}: autocast is not available for device type '{device_type}'")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward(ctx, ...)`` of a custom Function (see the module docstring)."""
    _check_device_type("custom_fwd", device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx, *args, **kwargs):
        ctx._amp_dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._amp_enabled = is_autocast_enabled(device_type)
            return fwd(ctx, *args, **kwargs)
        ctx._amp_enabled = False   # the forward runs without autocast, and so does the backward
        if not is_autocast_enabled(device_type):
            return fwd(ctx, *args, **kwargs)
        target = _dtype.to_dtype(cast_inputs)
        args = _cast_all(args, device_type, target, lambda dt: dt._category == 2)
        kwargs = dict(zip(kwargs, _cast_all(tuple(kwargs.values()), device_type, target,
                                            lambda dt: dt._category == 2)))
        with autocast(device_type, enabled=False):
            return fwd(ctx, *args, **kwargs)
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward(ctx, ...)`` of a custom Function whose forward carries
    :func:`custom_fwd`: the backward runs under the forward's autocast state."""
    _check_device_type("custom_bwd", device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(ctx, *grads):
        with autocast(device_type, dtype=ctx._amp_dtype, enabled=ctx._amp_enabled):
            return bwd(ctx, *grads)
    return backward
