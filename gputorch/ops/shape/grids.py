"""Ops that lay tensors out on grids, composites of the view and copy ops (so differentiable):

- ``meshgrid``: coordinate grids from 1-d tensors (``indexing="ij"`` or ``"xy"``)
- ``rot90``: rotation by multiples of 90 degrees in the plane of two dims
- ``repeat_interleave``: each element (or slice along ``dim``) repeated in place
"""
import warnings

from ..._tensor import Tensor
from ..registry import tensor_method
from .broadcasting import expand
from .copies import flip
from .transposing import transpose

__all__ = ["meshgrid", "rot90", "repeat_interleave"]


def meshgrid(*tensors, indexing=None):
    """For 1-d (or 0-d) tensors of sizes ``n1, ..., nk``, ``k`` tensors of shape ``(n1, ..., nk)``
    (``indexing="ij"``) whose i-th varies along dim i; ``indexing="xy"`` swaps the first two dims
    of every output (Cartesian order). The outputs are expanded views of the inputs."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("torch.meshgrid: expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                      "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid(): expected Tensor as element 0 in argument 0, but got {type(t).__name__}")
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    first = tensors[0]
    for t in tensors[1:]:
        if t.dtype is not first.dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype.")
        if t.device != first.device:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same device.")
    sizes = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[i] = sizes[i]
        grid = expand(t.reshape(shape), *sizes)
        grids.append(transpose(grid, 0, 1) if indexing == "xy" and len(tensors) >= 2 else grid)
    return tuple(grids)


@tensor_method("rot90")
def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k * 90`` degrees from the first of ``dims`` towards the second."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = input._wrap_dim(dims[0]), input._wrap_dim(dims[1])
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(transpose(input, d0, d1), (d1,))
    return input.clone()


@tensor_method("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element of ``input`` (flattened when ``dim`` is None), or each slice along ``dim``,
    repeated ``repeats`` times in place; ``repeats`` is an int or a 1-d tensor with one count per
    slice. With only a tensor of counts, ``repeat_interleave(counts)`` gives the indices
    ``0..n-1`` each repeated by its count."""
    from ..creation import arange
    if repeats is None:   # repeat_interleave(repeats): indices repeated by their counts
        counts = input
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(counts.shape[0], device=counts.device), counts, 0)
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    dim = input._wrap_dim(dim)
    n = input.shape[dim]
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype.is_floating_point or repeats.dtype.name == "bool":
            raise RuntimeError("repeats has to be Long or Int tensor")
        if repeats.ndim == 0 or repeats.shape[0] == 1:
            repeats = int(repeats.reshape(-1)[0].item()) if repeats.numel() else 0
        else:
            if repeats.shape[0] != n:
                raise RuntimeError("repeats must have the same size as input along dim, but got "
                                   f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {n}")
            counts = repeats.cpu().tolist()
            if any(c < 0 for c in counts):
                raise RuntimeError("repeats can not be negative")
            index = [i for i, c in enumerate(counts) for _ in range(c)]
            from ..._dtype import int64
            from ..creation import tensor
            return input.index_select(dim, tensor(index, dtype=int64, device=input.device))
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    index = arange(n, device=input.device).reshape(n, 1).expand(n, repeats).reshape(-1)
    return input.index_select(dim, index)
