"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as parametrizations.

``weight_norm`` stores a weight as a magnitude ``original0`` (``g``, one value per slice along
``dim``) and a direction ``original1`` (``v``): ``weight = v * (g / ||v||)``.
``spectral_norm`` divides a weight by its largest singular value, estimated by power iteration
with the vectors ``_u`` and ``_v`` kept as buffers (one iteration step per training forward).
"""
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.matmul import mv, vdot
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of every slice of ``v`` along ``dim`` (the other dims reduced, kept as size
    1); ``dim=-1``: the norm of the whole tensor."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(v.shape[0], *([1] * (v.dim() - 1)))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(*([1] * (v.dim() - 1)), v.shape[-1])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """``v * (g / norm_except_dim(v, 2, dim))``: the weight that a magnitude ``g`` and a direction
    ``v`` stand for."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as magnitude times direction; ``dim`` is the dimension
    that keeps one magnitude per slice (None: one magnitude for the whole tensor). The state dict
    holds ``parametrizations.<name>.original0`` (g) and ``original1`` (v); a state dict of the
    older ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) still loads. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _load_older_layout(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                           error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_load_older_layout)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        """``weight`` as a matrix with ``dim`` first: ``(weight.shape[dim], -1)``."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        """Refine ``_u``, ``_v`` in place (outside autograd): ``u = normalize(W v)``,
        ``v = normalize(W^H u)``, ``n_power_iterations`` times."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mv(weight_mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _transposed_conv_types():
    from ..modules import conv
    return tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                 if hasattr(conv, n))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as itself divided by its spectral norm (largest singular
    value of the weight seen as a ``(shape[dim], -1)`` matrix), estimated by power iteration.
    ``dim`` defaults to 1 for transposed convolutions, else 0. State dict:
    ``parametrizations.<name>.original`` and ``parametrizations.<name>.0._u`` / ``._v``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _transposed_conv_types()) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
