"""Views with the dims reordered: permute, transpose (swapaxes, swapdims), t, the ``T``, ``mT``,
``mH`` and ``H`` properties, adjoint and movedim (moveaxis).
"""
import numbers
import warnings

from ..._dispatch import apply_view
from ...autograd.node import Node
from ..registry import tensor_method
from ._common import _int_args

__all__ = ["permute", "transpose", "swapaxes", "swapdims", "t", "adjoint", "movedim", "moveaxis"]


class PermuteBackward0(Node):
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._data.transpose(dims)

    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return grad.permute(inverse)


class TransposeBackward0(Node):
    def forward(ctx, a, dim0, dim1):
        ctx.dim0, ctx.dim1 = dim0, dim1
        if a._data.ndim == 0:  # dims 0 and -1 of a 0-d tensor name the tensor itself
            return a._data.view()
        return a._data.swapaxes(dim0, dim1)

    def backward(ctx, grad):
        return grad.transpose(ctx.dim0, ctx.dim1)


class TBackward0(Node):
    def forward(ctx, a):
        return a._data.T if a._data.ndim == 2 else a._data.view()

    def backward(ctx, grad):
        return grad.t()


@tensor_method("permute")
def permute(input, *dims):
    """A view with the dims reordered: output dim ``i`` is input dim ``dims[i]``."""
    dims = _int_args(dims)
    ndim = input._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(input._wrap_dim(d) for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply_view(PermuteBackward0, input, dims)


@tensor_method("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    """A view with dims ``dim0`` and ``dim1`` swapped."""
    return apply_view(TransposeBackward0, input, input._wrap_dim(dim0), input._wrap_dim(dim1))


swapaxes = swapdims = transpose


@tensor_method("t")
def t(input):
    """Transpose a 2-D tensor (0-D and 1-D tensors are returned as views of themselves)."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return apply_view(TBackward0, input)


def _T(self):
    ndim = self._data.ndim
    if ndim != 2 and ndim > 0:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                      "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                      "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
                      "reverse the dimensions of a tensor.", UserWarning, stacklevel=2)
    return apply_view(PermuteBackward0, self, tuple(range(ndim - 1, -1, -1)))


def _mT(self):
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
        return apply_view(PermuteBackward0, self, ())
    if ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return apply_view(TransposeBackward0, self, ndim - 2, ndim - 1)


def _mH(self):
    ndim = self._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return apply_view(PermuteBackward0, self, ())
    if ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {ndim}-D tensor.")
    return _conjugated(apply_view(TransposeBackward0, self, ndim - 2, ndim - 1))


def _conjugated(view):
    """A complex transpose conjugated (materialised, as gputorch's ``conj``; real ones stay views)."""
    return view.conj() if view._dtype.is_complex else view


def _H(self):
    ndim = self._data.ndim
    if ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor.")
    return _conjugated(apply_view(TransposeBackward0, self, 0, 1) if ndim == 2 else apply_view(TBackward0, self))


tensor_method("T")(property(_T, doc="The tensor with its dims reversed."))
tensor_method("mT")(property(_mT, doc="The last two dims swapped (a batch of transposed matrices)."))
tensor_method("mH")(property(_mH, doc="The conjugate transpose of the last two dims (real: ``mT``)."))
tensor_method("H")(property(_H, doc="The conjugate transpose of a matrix (real: ``T``)."))


@tensor_method("adjoint")
def adjoint(input):
    return _mH(input)


@tensor_method("movedim", "moveaxis")
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or sequences); the rest keep their order."""
    src = (source,) if isinstance(source, numbers.Integral) else tuple(source)
    dst = (destination,) if isinstance(destination, numbers.Integral) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    src = tuple(input._wrap_dim(d) for d in src)
    dst = tuple(input._wrap_dim(d) for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    ndim = input._data.ndim
    if ndim == 0:   # dims 0 and -1 of a 0-d tensor are the tensor itself
        return apply_view(PermuteBackward0, input, ())
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    order = tuple(o if o is not None else next(rest) for o in order)
    return apply_view(PermuteBackward0, input, order)


moveaxis = movedim
