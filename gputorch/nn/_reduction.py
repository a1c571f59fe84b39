"""The ``reduction`` argument of the losses, and the legacy ``size_average``/``reduce`` flags.

``reduction`` is one of ``"none"``, ``"mean"``, ``"sum"`` (``"elementwise_mean"`` is an old
spelling of ``"mean"``). Before it existed, losses took ``size_average`` and ``reduce``
booleans; either one given (not None) overrides ``reduction``, with a deprecation warning.
"""
import warnings

_ENUMS = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction):
    """The integer code of ``reduction`` (0 none, 1 mean, 2 sum); ValueError for others."""
    code = _ENUMS.get(reduction) if isinstance(reduction, str) else None
    if code is not None:
        return code
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=4)
        return 1
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The ``reduction`` string that the legacy ``size_average``/``reduce`` flags stand for
    (an unset flag counts as True)."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if not reduce:
        result = "none"
    else:
        result = "mean" if size_average else "sum"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{result}' "
                      "instead.", stacklevel=4)
    return result


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))


def resolve(size_average, reduce, reduction):
    """The reduction a loss call uses, as ``"none"``, ``"mean"`` or ``"sum"`` (checked)."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    if reduction in _ENUMS:
        return reduction
    return ("none", "mean", "sum")[get_enum(reduction)]
