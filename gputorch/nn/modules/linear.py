"""Linear-family modules: ``Identity``, ``Linear`` (``x @ W.T + b``) and ``Bilinear``
(``x1^T W x2 + b``), with PyTorch's parameter layouts and default initialisation."""
import math

from ..._tensor import Tensor
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments.

    Shape: input ``(*)``, output ``(*)`` (the same tensor).
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Parameters: ``weight`` ``(out_features, in_features)`` and ``bias`` ``(out_features)``
    (absent with ``bias=False``), both drawn from U(-1/sqrt(in_features), 1/sqrt(in_features))
    (``kaiming_uniform_(a=sqrt(5))`` for the weight), as in PyTorch.

    Shape: input ``(*, in_features)``, output ``(*, out_features)``.
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        try:
            return F.linear(input, self.weight, self.bias)
        except RuntimeError as e:
            if isinstance(input, Tensor) and (input.dim() == 0 or input.shape[-1] != self.in_features):
                raise RuntimeError(
                    f"{self._get_name()}({self.extra_repr()}): expected input of shape (*, {self.in_features}) "
                    f"(last dimension {self.in_features}), got input of shape {list(input.shape)} ({e})") from None
            raise

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1^T A x2 + b``.

    Parameters: ``weight`` ``(out_features, in1_features, in2_features)`` and ``bias``
    ``(out_features)``, both from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    Shape: inputs ``(*, in1_features)`` and ``(*, in2_features)`` (same leading dims), output
    ``(*, out_features)``.
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        try:
            return F.bilinear(input1, input2, self.weight, self.bias)
        except RuntimeError as e:
            if "size does not match weight size" in str(e) or "do not match" in str(e):
                raise RuntimeError(
                    f"{self._get_name()}({self.extra_repr()}): expected inputs of shapes (*, {self.in1_features}) "
                    f"and (*, {self.in2_features}) with the same leading dims, got {list(input1.shape)} and "
                    f"{list(input2.shape)} ({e})") from None
            raise

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear of ``MultiheadAttention.out_proj`` (its own class name and module path, as in
    PyTorch, so that pickled models and ``safe_globals`` lists name it the same way)."""
