"""Lazy modules: layers that infer their input size from the first input they see.

A lazy layer starts with :class:`~gputorch.nn.parameter.UninitializedParameter` (and
``UninitializedBuffer``) placeholders. A forward pre-hook runs ``initialize_parameters(input)``
at the first call: it materializes the placeholders with the inferred shapes (the same objects,
so an optimizer built earlier keeps working), initialises them exactly as the ordinary layer
does, removes the hook, and turns the module into that ordinary class (``cls_to_become``:
``LazyLinear`` becomes ``Linear``). Loading a state dict into a lazy layer materializes the
placeholders with the saved shapes first.

Layers: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d,
LazyInstanceNorm1d/2d/3d.
"""
from ... import _dtype
from ...autograd.grad_mode import no_grad
from ..._tensor import Tensor
from ...ops.creation import tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d)

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mixed in before a Module class: shape inference at the first call (see the module docstring).

    Subclasses define ``initialize_parameters(*args, **kwargs)`` and set ``cls_to_become``.
    """
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Found again by identity when it removes itself (no handle kept: modules stay picklable
        # and deep copies keep their own hook).
        self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module is still a placeholder."""
        return any(is_lazy(t) for t in self._parameters.values()) or \
            any(is_lazy(t) for t in self._buffers.values())

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # Placeholders cannot be detached: they are saved as they are.
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Placeholders that ``state_dict`` has initialized values for take their shapes first.
        for name, tensor in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and is_lazy(tensor):
                value = state_dict[key]
                if isinstance(value, Tensor) and not is_lazy(value):
                    with no_grad():
                        tensor.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


def _infer_parameters(module, args, kwargs=None):
    """The forward pre-hook: initialize from the first input, then become the ordinary class."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    hooks = module._forward_pre_hooks
    for key in [key for key, hook in hooks.items() if hook is _infer_parameters]:
        del hooks[key]
        module._forward_pre_hooks_with_kwargs.pop(key, None)
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


# ---------------------------------------------------------------- linear
class LazyLinear(LazyModuleMixin, Linear):
    """:class:`Linear` whose ``in_features`` is the size of the last dim of the first input."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


# ---------------------------------------------------------------- convolutions
class _LazyConvMixin(LazyModuleMixin):
    """In/out channels inferred from the input's channel dim (dim 1 batched, 0 unbatched)."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _in_channels(self, input):
        n = self._dims
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batch mode) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == n + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            with no_grad():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    """:class:`Conv1d` whose ``in_channels`` is inferred from the first input."""
    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    """:class:`Conv2d` whose ``in_channels`` is inferred from the first input."""
    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    """:class:`Conv3d` whose ``in_channels`` is inferred from the first input."""
    cls_to_become = Conv3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    """:class:`ConvTranspose1d` whose ``in_channels`` is inferred from the first input."""
    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    """:class:`ConvTranspose2d` whose ``in_channels`` is inferred from the first input."""
    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    """:class:`ConvTranspose3d` whose ``in_channels`` is inferred from the first input."""
    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


# ---------------------------------------------------------------- normalization
class _LazyNormMixin(LazyModuleMixin):
    """``num_features`` inferred from the input's channel dim."""

    def _lazy_init(self, affine, track_running_stats, device, dtype):
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dtype.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()



class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    """:class:`BatchNorm1d` whose ``num_features`` is inferred from the first input."""
    cls_to_become = BatchNorm1d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_init(affine, track_running_stats, device, dtype)


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    """:class:`BatchNorm2d` whose ``num_features`` is inferred from the first input."""
    cls_to_become = BatchNorm2d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_init(affine, track_running_stats, device, dtype)


class LazyBatchNorm3d(_LazyNormMixin, BatchNorm3d):
    """:class:`BatchNorm3d` whose ``num_features`` is inferred from the first input."""
    cls_to_become = BatchNorm3d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_init(affine, track_running_stats, device, dtype)


class LazyInstanceNorm1d(_LazyNormMixin, InstanceNorm1d):
    """:class:`InstanceNorm1d` whose ``num_features`` is inferred from the first input (note PyTorch's
    defaults here: ``affine=True``, ``track_running_stats=True``)."""
    cls_to_become = InstanceNorm1d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_init(affine, track_running_stats, device, dtype)


class LazyInstanceNorm2d(_LazyNormMixin, InstanceNorm2d):
    """:class:`InstanceNorm2d` whose ``num_features`` is inferred from the first input."""
    cls_to_become = InstanceNorm2d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_init(affine, track_running_stats, device, dtype)


class LazyInstanceNorm3d(_LazyNormMixin, InstanceNorm3d):
    """:class:`InstanceNorm3d` whose ``num_features`` is inferred from the first input."""
    cls_to_become = InstanceNorm3d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self._lazy_init(affine, track_running_stats, device, dtype)
