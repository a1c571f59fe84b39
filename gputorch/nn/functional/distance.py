"""Distances between vectors: ``cosine_similarity``, ``pairwise_distance``, ``pdist``, ``cdist``.

All are composites of differentiable Tensor ops (vector norms, products, sums), written in
PyTorch's order of floating-point operations, so float64 values and gradients agree with
PyTorch's. ``cdist`` with ``p=2`` on larger inputs takes PyTorch's matrix-product route
(``|x|^2 - 2 x.y + |y|^2``, clamped at 0), as PyTorch does by default.
"""
from ..._dispatch import apply
from ...amp.autocast_mode import autocast_function
from ..._dtype import int64, promote_types
from ..._tensor import _LEGACY_NAMES, Tensor
from ...ops.comparison import where
from ...ops.creation import ones_like, tensor, zeros_like
from ...ops.reduction import LinalgVectorNormBackward0, vector_norm
from ...ops.shape import broadcast_shapes, broadcast_tensors, cat

# ``cdist`` is a top-level function in PyTorch, not part of nn.functional: defined here, exported
# by ``gputorch`` itself
__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


def _check_tensors(function, **tensors):
    """PyTorch's TypeError for an argument that is not a Tensor."""
    for position, (name, value) in enumerate(tensors.items(), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{function}(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def _clamped_norm(x, dim, eps):
    """``|x|_2`` over ``dim`` (kept), raised to at least ``eps`` in value only: the gradient is
    that of the unclamped norm (PyTorch clamps the norm in place outside autograd)."""
    norm = vector_norm(x, 2, dim, True)
    value = norm.detach()
    raise_by = where(value < eps, eps - value, zeros_like(value))     # exactly 0 where no clamp (inf too)
    return norm + raise_by


@autocast_function("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` over ``dim``, the inputs broadcast
    together first. Shapes: ``x1``, ``x2`` broadcastable; result the broadcast shape without ``dim``.
    Both are computed in their common dtype, which must be floating point."""
    _check_tensors("cosine_similarity", x1=x1, x2=x2)
    common = promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_LEGACY_NAMES[common]}")
    x1, x2 = broadcast_tensors(x1.to(common), x2.to(common))
    n1 = _clamped_norm(x1, dim, eps)
    n2 = _clamped_norm(x2, dim, eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (of the broadcast shape).
    Shapes: ``(N, D)`` or ``(D,)`` each; result ``(N,)`` or ``()`` (``keepdim`` keeps the dim)."""
    _check_tensors("pairwise_distance", x1=x1, x2=x2)
    ndim = max(x1.dim(), x2.dim())
    if ndim == 0:   # PyTorch squares a single difference here (and may overflow), as in its distance kernels
        return apply(LinalgVectorNormBackward0, x1 - x2 + eps, float(p), None, keepdim, False)
    return vector_norm(x1 - x2 + eps, p, ndim - 1, keepdim)


def _distance_norm(diff, p):
    """The ``p``-norms of the rows of ``diff`` as PyTorch's distance kernels compute them (a single
    column's square may overflow, unlike in ``vector_norm``)."""
    return apply(LinalgVectorNormBackward0, diff, float(p), (diff.dim() - 1,), False, False)


@autocast_function("pdist")
def pdist(input, p=2):
    """The ``p``-norm distance between every pair of rows ``i < j`` of ``input`` ``(N, M)``, in
    row-major order of the pairs: result ``(N * (N - 1) / 2,)``."""
    _check_tensors("pdist", input=input)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, X1 got: {_type_word(input)}")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if input.shape[1] == 0:   # distances between empty rows are 0 for every p (inf included)
        return input.new_zeros((n * (n - 1) // 2,)) + 0 * input.sum()   # (still in the graph)
    first = [i for i in range(n) for _ in range(i + 1, n)]
    second = [j for i in range(n) for j in range(i + 1, n)]
    dev = input.device
    rows_i = input.index_select(0, tensor(first, dtype=int64, device=dev))
    rows_j = input.index_select(0, tensor(second, dtype=int64, device=dev))
    return _distance_norm(rows_i - rows_j, p)


def _euclid_by_matmul(x1, x2):
    """PyTorch's matrix-product form of the euclidean distances of rows of ``x1`` and ``x2``."""
    n1 = x1.pow(2).sum(-1, keepdim=True)
    n2 = x2.pow(2).sum(-1, keepdim=True)
    a = cat([x1.mul(-2), n1, ones_like(n1)], -1)
    b = cat([x2, ones_like(n2), n2], -1)
    return a.matmul(b.mT).clamp_min(0).sqrt()


@autocast_function("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance of every row of ``x1`` ``(*, P, M)`` to every row of ``x2``
    ``(*, R, M)``: result ``(*, P, R)`` (batch dims broadcast). ``compute_mode``: with ``p=2``,
    ``"use_mm_for_euclid_dist_if_necessary"`` uses a matrix product when P or R exceeds 25,
    ``"use_mm_for_euclid_dist"`` always, ``"donot_use_mm_for_euclid_dist"`` never."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    _check_tensors("cdist", x1=x1, x2=x2)
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_type_word(x)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = _COMPUTE_MODES[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    batch = _broadcast_batch(x1.shape[:-2], x2.shape[:-2])
    if x1.shape[-1] == 0 or 0 in batch or r1 == 0 or r2 == 0:
        # nothing to compute: PyTorch returns zeros of x1's dtype before comparing the dtypes
        return (x1.sum() * 0 + x2.sum().to(x1.dtype) * 0).expand(*batch, r1, r2).contiguous()
    if x1._dtype != x2._dtype:
        raise RuntimeError(f"expected scalar type {_type_word(x1)} but found {_type_word(x2)}")
    x1 = x1.expand(*batch, r1, x1.shape[-1])
    x2 = x2.expand(*batch, r2, x2.shape[-1])
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclid_by_matmul(x1, x2)
    return _distance_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)


def _broadcast_batch(a, b):
    return tuple(broadcast_shapes(tuple(a), tuple(b)))


def _type_word(x):
    return _LEGACY_NAMES[x._dtype]
