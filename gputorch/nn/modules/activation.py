"""Activation modules: thin wrappers that hold an activation's options and call ``nn.functional``.

Every module takes PyTorch's constructor arguments (``inplace=`` where PyTorch has it) and
prints like PyTorch's (``extra_repr``). Shapes: input ``(*)``, output ``(*)`` unless noted.
"""
import warnings

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Tanh", "SiLU", "Mish", "Hardsigmoid",
           "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "RReLU", "LogSigmoid",
           "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d",
           "LogSoftmax"]


def _inplace_str(inplace):
    return ", inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Threshold(Module):
    """``value`` where ``input <= threshold``, else ``input``."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class ReLU(_InplaceActivation):
    """``max(0, x)``."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class SiLU(_InplaceActivation):
    """``x * sigmoid(x)``."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6``."""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""  # PyTorch prints no options for Hardsigmoid


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6``."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""  # PyTorch prints no options for Hardswish


class ELU(Module):
    """``x`` if positive, else ``alpha * (exp(x) - 1)``."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_InplaceActivation):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    """``a * sigmoid(b)`` for the two halves of the input along ``dim``.
    Shape: ``(*1, N, *2)`` -> ``(*1, N / 2, *2)``."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """``x * Phi(x)``; ``approximate='tanh'`` for the tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    """``x`` if positive, else ``negative_slope * x``."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class RReLU(Module):
    """Randomized leaky ReLU: slopes for non-positive inputs drawn from U(lower, upper) in training,
    ``(lower + upper) / 2`` in evaluation."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """``x -/+ lambd`` outside ``[-lambd, lambd]``, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """``x`` if positive, else ``weight * x``; ``weight`` (``num_parameters``: 1 or the number of
    channels, dim 1 of the input) is learnt, initialised to ``init``."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxFamily(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxFamily):
    """``softmax(-x)`` along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxFamily):
    """``exp(x) / sum(exp(x))`` along ``dim``."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxFamily):
    """``log(softmax(x))`` along ``dim``, computed stably."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


def __getattr__(name):
    """``MultiheadAttention`` under this module's path too (PyTorch defines it in activation.py;
    programs and pickles name it there), without importing transformer.py at import time."""
    if name == "MultiheadAttention":
        from .transformer import MultiheadAttention
        return MultiheadAttention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
