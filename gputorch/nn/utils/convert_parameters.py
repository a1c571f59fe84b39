"""``parameters_to_vector`` / ``vector_to_parameters``: a model's parameters as one flat vector and back."""
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    """The device all parameters share (the first one's); TypeError when one differs."""
    if old_device is None:
        return param.device
    if param.device != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (differentiable)."""
    from ...ops.shape import cat
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Point each parameter's data at its slice of ``vec`` (in ``parameters`` order): the
    parameters then share ``vec``'s memory, as in PyTorch."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__module__}.{type(vec).__name__}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
