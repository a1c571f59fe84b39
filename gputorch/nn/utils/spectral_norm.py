"""The older ``nn.utils.spectral_norm``: the weight is kept as the Parameter ``<name>_orig`` with
the power-iteration vectors ``<name>_u`` and ``<name>_v`` as buffers, and a forward pre-hook sets
``<name> = <name>_orig / sigma`` before every call (one power-iteration step per training call).
PyTorch gives no deprecation warning here (it recommends ``parametrizations.spectral_norm``)."""
from ...autograd.grad_mode import no_grad
from ...ops.matmul import dot, mv
from ..functional import normalize
from ..parameter import Parameter, UninitializedParameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of the older spectral normalisation of ``module.<name>``."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` as a ``(shape[dim], -1)`` matrix."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        """``<name>_orig / sigma`` with ``sigma = u . (W v)``; with ``do_power_iteration``, ``u``
        and ``v`` are refined in place first (``v = normalize(W^T u)``, ``u = normalize(W v)``)."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(normalize(mv(weight_mat, v), dim=0, eps=self.eps))
                u = u.clone()
                v = v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure "
                             "to run the dummy forward before applying spectral normalization")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(_VersionInStateDict(fn))
        module._register_load_state_dict_pre_hook(_CheckLoadedVersion(fn))
        return fn


class _VersionInStateDict:
    """Records ``spectral_norm: {"<name>.version": 1}`` in the module's state-dict metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


class _CheckLoadedVersion:
    """State dicts of the current layout load as they are; the pre-1.0 layout (``<name>`` saved
    without ``<name>_v``) is not supported here."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        version = local_metadata.get("spectral_norm", {}).get(self.fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + self.fn.name
        if all(key + s in state_dict for s in ("_orig", "_u", "_v")) and key not in state_dict:
            return
        if key in state_dict and key + "_v" not in state_dict:
            raise NotImplementedError("loading a spectral_norm state dict saved before PyTorch 1.0 (without "
                                      f"'{key}_v') is not supported")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm before every forward (power iteration on
    ``<name>_u``/``<name>_v``; ``dim`` defaults to 1 for transposed convolutions, else 0).
    Returns ``module``."""
    if dim is None:
        from .parametrizations import _transposed_conv_types
        dim = 1 if isinstance(module, _transposed_conv_types()) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``: ``module.<name>`` becomes a plain Parameter of its current value."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks in (module._state_dict_hooks, module._load_state_dict_pre_hooks):
        for k, hook in list(hooks.items()):
            inner = getattr(hook, "hook", hook)
            if isinstance(inner, (_VersionInStateDict, _CheckLoadedVersion)) and inner.fn.name == name:
                del hooks[k]
    return module
