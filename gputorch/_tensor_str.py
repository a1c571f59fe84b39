"""Printing tensors the way PyTorch does: ``tensor([1.5000, 2.0000], dtype=gputorch.float64)``.

All values are formatted on the host (one copy from the device); large tensors are
summarised with ``...`` past ``threshold`` elements. ``set_printoptions`` changes the
precision, summarisation and line width.
"""
import contextlib
import dataclasses
import math

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None     # None: decide from the values


PRINT_OPTS = _PrintOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set how tensors print.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: element count above which a tensor is summarised (default 1000).
        edgeitems: items shown at each end of a summarised dimension (default 3).
        linewidth: characters per line (default 80).
        profile: "default", "short" or "full" (sets the four above first).
        sci_mode: True/False forces scientific notation on/off; None decides from the values.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"Unknown profile {profile!r}: expected one of {sorted(_PROFILES)}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (keys as ``set_printoptions`` takes them)."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Set print options inside a ``with`` block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------- element formatting
class _Formatter:
    """Chooses one format for all printed elements: integer, fixed-point or scientific."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        vals = finite.tolist()
        self.int_mode = bool((finite == np.ceil(finite)).all())
        forced = PRINT_OPTS.sci_mode
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if forced is None else forced
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{precision}e}") for v in vals)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.max_width = max(len(f"{v:.{precision}f}") for v in vals)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = str(value)
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """Complex elements: the real parts and the imaginary parts each get their own
    :class:`_Formatter`; an element prints as ``<real>+<imag>j`` (the imaginary part unpadded)."""

    def __init__(self, values):
        self.real = _Formatter(values.real, True)
        self.imag = _Formatter(values.imag, True)

    def width(self):
        return self.real.width() + self.imag.width() + 1

    def format(self, value):
        imag = self.imag.format(value.imag).lstrip() + "j"
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


# ---------------------------------------------------------------- layout
def _summarized(a):
    """Only the elements that a summarised print shows (edge items of every dimension)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[(slice(0, 0),) * a.ndim]
    rows = list(range(edge)) + list(range(a.shape[0] - edge, a.shape[0])) \
        if a.shape[0] > 2 * edge else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(a, indent, summarize, fmt):
    element_length = fmt.width() + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in a[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-edge:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        slices = ([_array_str(a[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                  + [_array_str(a[i], indent + 1, summarize, fmt)
                     for i in range(a.shape[0] - edge, a.shape[0])])
    else:
        slices = [_array_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _contents_str(a, indent, floating):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    shown = _summarized(a) if summarize else a
    fmt = _ComplexFormatter(shown) if a.dtype.kind == "c" else _Formatter(shown, floating)
    return _array_str(a, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _shows_device(dev):
    from ._device_context import get_default_device
    if dev.type != get_default_device().type:
        return True
    if dev.type == "cuda":
        return dev.backend.current_index() != dev.index
    return False


def tensor_repr(t, tensor_contents=None):
    """PyTorch's ``repr`` of a tensor, with ``gputorch.`` as the dtype prefix."""
    from . import _dtype
    plain = type(t).__name__ in ("Tensor", "Parameter")
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes = []
    dev = t._device
    if _shows_device(dev):
        suffixes.append(f"device='{dev}'")
    dt = t._dtype
    default = _dtype.get_default_dtype()
    if dev.type == "meta":       # no values to show: "tensor(..., device='meta', size=(2, 3))"
        suffixes.append(f"size={tuple(t._data.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        text = "..."
        host = None
    else:
        host = dev.backend.to_numpy(t._data)
    if host is None:
        pass
    elif host.size == 0:
        if host.ndim != 1:
            suffixes.append(f"size={tuple(host.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        text = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(host.shape)}")
        if dt not in (default, default.to_complex(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={dt!r}")
        text = _contents_str(host, indent, dt.is_floating_point)
    if tensor_contents is not None:
        text = tensor_contents
    grad_fn = t._grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + text, suffixes, indent)
