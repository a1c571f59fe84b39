"""Normalization layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm.

Parameter and buffer names, shapes, defaults and state dict layout are PyTorch's
(``weight``, ``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``), so state
dicts interchange with it. The math lives in ``nn.functional.normalization``.
"""
import numbers
import warnings

from ... import _dtype
from ...ops.creation import empty, ones, tensor, zeros
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "LayerNorm", "GroupNorm", "RMSNorm"]


class _NormBase(Module):
    """Shared state of batch and instance norm: affine parameters and running statistics."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, **factory))
            if bias:
                self.bias = Parameter(empty(num_features, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **factory))
            self.register_buffer("running_var", ones(num_features, **factory))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # State dicts saved before num_batches_tracked existed (version < 2) load with the
        # counter kept as it is (or 0).
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                current = self.num_batches_tracked
                state_dict[key] = current if current is not None and current.device.type != "meta" \
                    else tensor(0, dtype=_dtype.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)


def _dim_error(layer, expected, input):
    return ValueError(f"{layer}: expected {expected} input (got {input.dim()}D input)")


class BatchNorm1d(_BatchNorm):
    """Batch normalization over a 2D ``(N, C)`` or 3D ``(N, C, L)`` input (statistics per channel C).

    Args:
        num_features: C.
        eps: added to the variance for numerical stability. Default: 1e-5.
        momentum: weight of the batch statistics in the running statistics update; ``None``
            for a cumulative (equal-weight) average. Default: 0.1.
        affine: learnable ``weight`` (ones) and ``bias`` (zeros). Default: True.
        track_running_stats: keep ``running_mean``/``running_var`` (used in eval mode). Default: True.
    """

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise _dim_error(type(self).__name__, "2D or 3D", input)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over a 4D ``(N, C, H, W)`` input (statistics per channel C)."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise _dim_error(type(self).__name__, "4D", input)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over a 5D ``(N, C, D, H, W)`` input (statistics per channel C)."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise _dim_error(type(self).__name__, "5D", input)


class _InstanceNorm(_NormBase):
    _no_batch_dim = 2
    _dims_word = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in (self._no_batch_dim, self._no_batch_dim + 1):
            raise _dim_error(type(self).__name__, self._dims_word, input)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(f"Unexpected running stats buffer(s) {names} for {type(self).__name__} with "
                                  "track_running_stats=False. Remove these keys from state_dict, or set "
                                  "track_running_stats=True to use them.")
                for k in keys:
                    state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence "
                          "this warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``(N, C, L)`` or ``(C, L)``: each channel of each sample over L."""
    _no_batch_dim, _dims_word = 2, "2D or 3D"


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` or ``(C, H, W)``."""
    _no_batch_dim, _dims_word = 3, "3D or 4D"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    _no_batch_dim, _dims_word = 4, "4D or 5D"


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Layer normalization over the trailing ``normalized_shape`` dims of ``(*, *normalized_shape)``.

    Args:
        normalized_shape: int or shape of the trailing dims to normalize.
        eps: added to the variance. Default: 1e-5.
        elementwise_affine: learnable per-element ``weight`` (ones) and ``bias`` (zeros). Default: True.
        bias: whether to learn the bias (with ``elementwise_affine``). Default: True.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, **factory))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalization of ``(N, C, *)``: the C channels in ``num_groups`` groups.

    Args:
        num_groups: number of groups (must divide ``num_channels``).
        num_channels: C.
        eps: added to the variance. Default: 1e-5.
        affine: learnable per-channel ``weight`` (ones) and ``bias`` (zeros). Default: True.
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty(num_channels, **factory))
            if bias:
                self.bias = Parameter(empty(num_channels, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: int or shape of the trailing dims.
        eps: added to the mean square; ``None`` uses the machine epsilon of the input's
            computation dtype. Default: None.
        elementwise_affine: learnable per-element ``weight`` (ones). Default: True.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, **factory))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
