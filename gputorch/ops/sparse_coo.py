"""Sparse COO tensors, as graph-network programs use them.

A :class:`SparseCOOTensor` of size ``(*S, *D)`` holds ``indices`` (int64, ``(len(S), nnz)``) and
``values`` (``(nnz, *D)``): the sparse dims ``S`` are addressed by the index columns, the dense dims
``D`` are carried whole. It is a :class:`~gputorch.Tensor` (``isinstance`` holds, ``shape``,
``dtype``, ``device``, ``requires_grad`` and autograd work) whose dense array does not exist: its
``_data`` is a stand-in that answers shape and dtype queries and refuses, with a clear error, any op
that would read it as dense. What it supports: ``to_dense``, ``coalesce``/``is_coalesced``,
``indices``/``values``, products with a dense matrix (``torch.sparse.mm``, ``spmm``, ``mm``,
``matmul``/``@``, ``sparse.addmm``), ``sparse.sum``, ``t``/``transpose``, ``+`` with another sparse
tensor, ``*`` with a number, ``neg``, ``detach``, ``clone`` and device/dtype moves.

Gradients: a sparse tensor built from ``values`` that require grad passes gradients back to them;
``sparse_coo_tensor(..., requires_grad=True)`` is a leaf whose ``.grad`` is sparse (the gradient at
its own indices, as PyTorch gives for ``mm`` and ``to_dense``).
"""
import numpy as np

from .. import _dtype
from .._layouts import sparse_coo
from .._tensor import Tensor
from ..autograd.function import Function
from .registry import tensor_method

__all__ = ["sparse_coo_tensor", "spmm"]

_DENSE_ONLY = ("this operation needs a dense tensor, and gputorch's sparse COO tensors support only "
               "to_dense, coalesce, indices/values, products with a dense matrix (sparse.mm, spmm, mm, matmul), sum, "
               "t/transpose, +, * by a number, neg, detach, clone and to(); call .to_dense() first")


class _SparseStorage:
    """The ``_data`` of a sparse tensor: its shape and dtype for metadata queries, and PyTorch-style
    errors for anything that would read it as a dense array."""

    __slots__ = ("shape", "dtype", "ndim", "size")

    def __init__(self, shape, np_dtype):
        self.shape = tuple(shape)
        self.dtype = np_dtype
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))

    def __getattr__(self, name):
        if name == "strides":
            raise RuntimeError("Sparse tensors do not have strides")
        raise RuntimeError(_DENSE_ONLY)

    def __array__(self, *args, **kwargs):
        raise RuntimeError(_DENSE_ONLY)

    def __array_ufunc__(self, *args, **kwargs):
        raise RuntimeError(_DENSE_ONLY)

    def __array_function__(self, *args, **kwargs):
        raise RuntimeError(_DENSE_ONLY)

    def __getitem__(self, key):
        raise RuntimeError(_DENSE_ONLY)

    def __setitem__(self, key, value):
        raise RuntimeError(_DENSE_ONLY)


class SparseCOOTensor(Tensor):
    """A sparse tensor in coordinate format (see the module docstring)."""

    _sparse = True

    @staticmethod
    def _from_parts(indices, values, size, coalesced):
        """A new sparse tensor over ``indices``/``values`` (trusted: no checks, no copies)."""
        t = object.__new__(SparseCOOTensor)
        t._data = _SparseStorage(size, values._data.dtype)
        t._device = values._device
        t._dtype = values._dtype
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._vc = [0]
        t._indices_t = indices
        t._values_t = values
        t._coalesced = coalesced
        return t

    # ------------------------------------------------------------ structure
    @property
    def is_sparse(self):
        return True

    @property
    def layout(self):
        return sparse_coo

    def sparse_dim(self):
        return self._indices_t.shape[0]

    def dense_dim(self):
        return self._values_t.dim() - 1

    def _nnz(self):
        return self._values_t.shape[0]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._indices_t

    def _values(self):
        return _Values.apply(self)

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices_t

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values()

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse tensors do not have is_contiguous")

    def __repr__(self):
        """PyTorch's layout: the indices and values, then size, nnz, dtype, layout and grad info."""
        from .._tensor_str import _add_suffixes, _contents_str
        indices = self._indices_t._device.backend.to_numpy(self._indices_t._data)
        values = self._values_t._device.backend.to_numpy(self._values_t._data)
        text = ("tensor(indices=tensor(" + _contents_str(indices, 22, False) + "),\n"
                "       values=tensor(" + _contents_str(values, 21, self._dtype._category >= 2) + "),\n"
                f"       size={tuple(self.shape)}")
        suffixes = [f"nnz={self._nnz()}"]
        if self._dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={self._dtype!r}")
        if self._device.type != "cpu":
            suffixes.append(f"device='{self._device}'")
        suffixes.append("layout=torch.sparse_coo")
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self._grad_fn).__name__}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return _add_suffixes(text, suffixes, 7)

    # ------------------------------------------------------------ copies and moves
    def _copy_detached(self):
        return SparseCOOTensor._from_parts(self._indices_t.clone(), self._values_t.detach().clone(),
                                           self.shape, self._coalesced)

    def _detached_alias(self):
        return SparseCOOTensor._from_parts(self._indices_t, self._values_t.detach(), self.shape, self._coalesced)

    def detach(self):
        return self._detached_alias()

    def clone(self, *, memory_format=None):
        return _sparse_from_values(self._indices_t.clone(), self._values().clone(), self.shape, self._coalesced)

    def _moved(self, dtype, device, copy):
        """``to(dtype/device)``: indices and values moved, gradients flowing back through the values."""
        values = self._values().to(device=device, dtype=dtype, copy=copy)
        return _sparse_from_values(self._indices_t.to(device), values, self.shape, self._coalesced)

    def to_dense(self, dtype=None, *, masked_grad=None):
        dense = _ToDense.apply(self)
        return dense if dtype is None else dense.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return self

    def coalesce(self):
        """Indices sorted (row-major) and duplicates summed."""
        if self._coalesced:
            return self
        return _Coalesce.apply(self)

    # ------------------------------------------------------------ arithmetic
    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim():
            raise RuntimeError(f"t() expects a 2-D sparse tensor, but got sparse_dim={self.sparse_dim()}, "
                               f"dense_dim={self.dense_dim()}")
        return self.transpose(0, 1)

    def transpose(self, dim0, dim1):
        d0, d1 = self._wrap_dim(dim0), self._wrap_dim(dim1)
        if max(d0, d1) >= self.sparse_dim():
            raise NotImplementedError("gputorch transposes the sparse dims of a sparse tensor only")
        order = list(range(self.sparse_dim()))
        order[d0], order[d1] = order[d1], order[d0]
        size = list(self.shape)
        size[d0], size[d1] = size[d1], size[d0]
        return _sparse_from_values(self._indices_t[order], self._values(), size, False)

    def __add__(self, other):
        if isinstance(other, Tensor) and not other._sparse:   # sparse + dense: a dense tensor
            return other + self.to_dense()
        if not isinstance(other, Tensor):
            raise RuntimeError("gputorch adds a tensor (sparse or dense) to a sparse COO tensor, not a number")
        if tuple(other.shape) != tuple(self.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(self.shape)} while other has size {list(other.shape)}")
        from .shape import cat
        indices = cat([self._indices_t, other._indices_t.to(self._device)], 1)
        return _sparse_from_values(indices, cat([self._values(), other._values()]), self.shape, False)

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, Tensor):
            raise RuntimeError("gputorch multiplies a sparse COO tensor by a Python number only")
        return _sparse_from_values(self._indices_t, self._values() * other, self.shape, self._coalesced)

    __rmul__ = __mul__
    mul = __mul__

    def sum(self, dim=None, keepdim=False, dtype=None):
        """The sum of the stored values (see :func:`sparse_sum`)."""
        if keepdim:
            raise NotImplementedError("gputorch's sparse sum has no keepdim")
        return sparse_sum(self, dim, dtype)

    def __neg__(self):
        return self * -1

    neg = __neg__

    def __truediv__(self, other):
        return self * (1.0 / other)


# ---------------------------------------------------------------- construction
def _sparse_from_values(indices, values, size, coalesced):
    """A sparse tensor over ``values`` that passes gradients back to them."""
    return _FromValues.apply(values, indices, tuple(int(s) for s in size), coalesced)


class _FromValues(Function):
    @staticmethod
    def forward(ctx, values, indices, size, coalesced):
        ctx.parts = (indices, size)
        return SparseCOOTensor._from_parts(indices, values.detach(), size, coalesced)

    @staticmethod
    def backward(ctx, grad):
        indices, size = ctx.parts
        return _gather(grad, indices, size), None, None, None


class _Values(Function):
    @staticmethod
    def forward(ctx, sparse):
        ctx.parts = (sparse._indices_t, tuple(sparse.shape), sparse._coalesced)
        return sparse._values_t.detach()._detached_alias()

    @staticmethod
    def backward(ctx, grad):
        indices, size, coalesced = ctx.parts
        return SparseCOOTensor._from_parts(indices, grad, size, coalesced)


def _gather(grad, indices, size):
    """The entries of ``grad`` (dense, or sparse with any indices) at each column of ``indices``:
    the gradient of values stored there (a repeated index gets the entry each time)."""
    if not grad._sparse:
        return grad[tuple(indices)]
    if grad._indices_t is indices:
        return grad._values_t
    grad = grad.coalesce()
    known = _linear_index(grad._indices_t, size)
    wanted = _linear_index(indices, size)
    if not known.shape[0]:
        return grad._values_t.new_zeros((wanted.shape[0],) + tuple(grad._values_t.shape[1:]))
    from .bucketing import searchsorted
    at = searchsorted(known, wanted).clamp(max=known.shape[0] - 1)
    found = known[at] == wanted
    values = grad._values_t[at]
    return values * found.reshape((-1,) + (1,) * (values.dim() - 1)).to(values.dtype)


def _unique_columns(indices, size):
    """``(unique index columns in row-major order, position of each column among them)``."""
    linear = _linear_index(indices, size)
    unique, inverse = linear.unique(sorted=True, return_inverse=True)
    coords, rest = [], unique
    for d in reversed(range(indices.shape[0])):
        coords.append(rest % size[d])
        rest = rest.div(size[d], rounding_mode="floor")
    from .shape import stack
    return (stack(coords[::-1]) if coords else indices), inverse


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (duplicates add up when it is
    coalesced or densified). ``size`` defaults to the smallest that holds every index."""
    from .creation import tensor as make_tensor
    if not isinstance(indices, Tensor):
        indices = make_tensor(indices, dtype=_dtype.int64)
    if not isinstance(values, Tensor):
        values = make_tensor(values, dtype=dtype)
    if dtype is not None:
        values = values.to(_dtype.to_dtype(dtype))
    if device is not None:
        values = values.to(device)
    indices = indices.to(values.device)
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(f"indices must be an int64 tensor (got {indices.dtype})")
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dims, nnz = indices.shape
    if values.dim() < 1 or values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz "
                           f"from values: {values.shape[0] if values.dim() else 0}")
    dense_shape = tuple(values.shape[1:])
    host = indices.detach().cpu().numpy() if nnz else np.zeros((sparse_dims, 0), np.int64)
    if size is None:
        size = tuple(int(m) + 1 for m in host.max(1)) if nnz else (0,) * sparse_dims
        size += dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dims + len(dense_shape):
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dims}) + dense_dim "
                           f"({len(dense_shape)}), but got {len(size)}")
    if tuple(size[sparse_dims:]) != dense_shape:
        raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[sparse_dims:]]}, got "
                           f"{[nnz, *dense_shape]}")
    if nnz:
        if (host < 0).any():
            raise RuntimeError(f"found negative index {int(host.min())} for dim "
                               f"{int(np.argwhere(host < 0)[0][0])}")
        for d in range(sparse_dims):
            if host[d].max() >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but "
                                   f"found index {int(host[d].max())}")
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz <= 1
    if values.requires_grad and not requires_grad:
        return _sparse_from_values(indices, values, size, coalesced)
    result = SparseCOOTensor._from_parts(indices, values.detach(), size, coalesced)
    return result.requires_grad_(requires_grad)


@tensor_method("to_sparse")
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO form of a dense tensor: its nonzero entries (over the first ``sparse_dim``
    dims, all by default; a slice along the rest is kept when any of its entries is nonzero)."""
    if self._sparse:
        return self
    if layout not in (None, sparse_coo):
        raise NotImplementedError(f"to_sparse: gputorch has the sparse_coo layout only (got {layout})")
    sparse_dim = self.dim() if sparse_dim is None else int(sparse_dim)
    if not 0 < sparse_dim <= self.dim():
        raise RuntimeError(f"sparse_dim must be in [1, {self.dim()}], got {sparse_dim}")
    mask = self.detach() != 0
    if sparse_dim < self.dim():
        mask = mask.flatten(sparse_dim).any(-1)
    indices = mask.nonzero().t().contiguous()
    return _sparse_from_values(indices, self[tuple(indices)], self.shape, True)


@tensor_method("to_dense")
def to_dense(self, dtype=None, *, masked_grad=None):
    """A dense tensor is its own dense form (cast to ``dtype`` when given)."""
    return self if dtype is None else self.to(dtype)


@tensor_method("to_sparse_coo")
def to_sparse_coo(self):
    """``to_sparse()`` with every dim sparse."""
    return to_sparse(self)


# ---------------------------------------------------------------- densify and coalesce
def _linear_index(indices, size):
    """Row-major positions of the index columns in the sparse dims of ``size``."""
    flat = indices[0].clone()
    for d in range(1, indices.shape[0]):
        flat = flat * size[d] + indices[d]
    return flat


class _ToDense(Function):
    @staticmethod
    def forward(ctx, sparse):
        ctx.parts = (sparse._indices_t, tuple(sparse.shape), sparse._coalesced)
        values = sparse._values_t
        k = sparse._indices_t.shape[0]
        rows = int(np.prod(sparse.shape[:k], dtype=np.int64))
        dense = values.new_zeros((rows,) + tuple(values.shape[1:]))
        dense.index_add_(0, _linear_index(sparse._indices_t, sparse.shape), values)
        return dense.reshape(sparse.shape)

    @staticmethod
    def backward(ctx, grad):
        # PyTorch's sparse_mask: the gradient at each distinct stored position once.
        indices, size, coalesced = ctx.parts
        unique = indices if coalesced else _unique_columns(indices, size)[0]
        return SparseCOOTensor._from_parts(unique, grad[tuple(unique)], size, True)


class _Coalesce(Function):
    @staticmethod
    def forward(ctx, sparse):
        indices, values = sparse._indices_t, sparse._values_t
        size = tuple(sparse.shape)
        unique, inverse = _unique_columns(indices, size)
        summed = values.new_zeros((unique.shape[1],) + tuple(values.shape[1:]))
        summed.index_add_(0, inverse, values)
        ctx.parts = (indices, size)
        return SparseCOOTensor._from_parts(unique, summed, size, True)

    @staticmethod
    def backward(ctx, grad):
        indices, size = ctx.parts
        return SparseCOOTensor._from_parts(indices, _gather(grad, indices, size), size, False)


# ---------------------------------------------------------------- products
class _SparseMm(Function):
    """``sparse (n, k) @ dense (k, m)``: each stored value scales a row of the dense matrix into its
    output row. The sparse operand's own gradient is PyTorch's: with ``masked`` (``sparse.mm``) a
    sparse tensor at its distinct stored positions, else (``mm``, ``spmm``, ``matmul``) the dense
    ``grad @ dense.T``."""

    @staticmethod
    def forward(ctx, sparse, dense, masked):
        rows, cols = sparse._indices_t[0], sparse._indices_t[1]
        values = sparse._values_t
        ctx.save_for_backward(values, dense)
        ctx.parts = (sparse._indices_t, tuple(sparse.shape), sparse._coalesced, masked)
        out = dense.new_zeros((sparse.shape[0], dense.shape[1]))
        if values.shape[0]:
            out.index_add_(0, rows, dense[cols] * values.unsqueeze(1))
        return out

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        indices, size, coalesced, masked = ctx.parts
        grad_sparse = grad_dense = None
        if ctx.needs_input_grad[0]:
            if masked:
                unique = indices if coalesced else _unique_columns(indices, size)[0]
                grad_values = (grad[unique[0]] * dense[unique[1]]).sum(1)
                grad_sparse = SparseCOOTensor._from_parts(unique, grad_values, size, True)
            else:
                grad_sparse = grad @ dense.t()
        if ctx.needs_input_grad[1]:
            rows, cols = indices[0], indices[1]
            grad_dense = dense.new_zeros(dense.shape)
            if values.shape[0]:
                grad_dense.index_add_(0, cols, grad[rows] * values.unsqueeze(1))
        return grad_sparse, grad_dense, None


def sparse_mm(sparse, dense, masked=False):
    """``sparse (n, k) @ dense (k, m)`` for a 2-D sparse COO tensor (no dense dims); ``masked``:
    the gradient for ``sparse`` is sparse (``torch.sparse.mm``), else dense (``mm``)."""
    if not isinstance(dense, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(dense).__name__}")
    if dense._sparse:
        raise NotImplementedError("gputorch multiplies a sparse COO matrix by a dense matrix only")
    if sparse.sparse_dim() != 2 or sparse.dense_dim():
        raise RuntimeError(f"sparse.mm expects a 2-D sparse matrix, but got sparse_dim={sparse.sparse_dim()}, "
                           f"dense_dim={sparse.dense_dim()}")
    if dense.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {dense.dim()}-D tensor")
    if sparse.shape[1] != dense.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sparse.shape[0]}x{sparse.shape[1]} and "
                           f"{dense.shape[0]}x{dense.shape[1]})")
    if sparse._dtype is not dense._dtype and sparse._nnz() == 0:
        sparse = sparse.to(dense._dtype)    # nothing stored: PyTorch skips its check, the result has dense's dtype
    if sparse._dtype is not dense._dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {sparse._dtype} != "
                           f"{dense._dtype}")
    if sparse._device is not dense._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{sparse._device} and {dense._device}!")
    return _SparseMm.apply(sparse, dense, masked)


def spmm(input, mat2):
    """``torch.spmm``: a sparse (or dense) matrix times a dense one."""
    if isinstance(input, Tensor) and input._sparse:
        return sparse_mm(input, mat2)
    from .matmul import mm
    return mm(input, mat2)


def sparse_sum(input, dim=None, dtype=None):
    """The sum of every stored value (duplicates included) as a dense 0-d tensor; with ``dim``, of
    the densified tensor over ``dim`` (a dense result: PyTorch keeps sparse dims sparse)."""
    if not (isinstance(input, Tensor) and input._sparse):
        raise TypeError("sparse.sum expects a sparse COO tensor")
    if dim is None:
        return input._values().sum(dtype=dtype)
    return input.to_dense().sum(dim, dtype=dtype)

