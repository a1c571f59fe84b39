"""Sparse COO tensors: construction and its checks, densify/coalesce against a NumPy reference,
products with dense matrices and their gradients (to the values, to the dense operand, and a
sparse leaf's own gradient: sparse for ``sparse.mm``, dense for ``mm``, as PyTorch), device moves,
printing, and the error for dense-only ops."""
import numpy as np
import pytest

import gputorch as T
from gputorch.autograd import gradcheck
from tests._helpers import assert_close, to_numpy

INDICES = [[0, 1, 1, 0], [2, 0, 2, 2]]
VALUES = [3.0, 4.0, 5.0, 1.0]


def _dense_reference():
    dense = np.zeros((2, 3))
    for (r, c), v in zip(zip(*INDICES), VALUES):
        dense[r, c] += v
    return dense


def _sparse(device, values=VALUES, requires_grad=False, dtype=T.float64):
    return T.sparse_coo_tensor(T.tensor(INDICES, device=device), T.tensor(values, dtype=dtype, device=device),
                               (2, 3), requires_grad=requires_grad)


def test_structure_and_densify(device):
    s = _sparse(device)
    assert isinstance(s, T.Tensor) and s.is_sparse and not T.ones(2).is_sparse
    assert s.layout is T.sparse_coo and s.shape == (2, 3) and s.dtype is T.float64
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.is_coalesced()) == (2, 0, 4, False)
    assert_close(s.to_dense(), _dense_reference())
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 3
    assert to_numpy(c.indices()).tolist() == [[0, 1, 1], [2, 0, 2]]
    assert_close(c.values(), [4.0, 4.0, 5.0])
    with pytest.raises(RuntimeError, match="uncoalesced tensor, please call .coalesce"):
        s.indices()
    assert_close(s.t().to_dense(), _dense_reference().T)
    assert_close((s + s).to_dense(), 2 * _dense_reference())
    assert_close((s * 0.5).to_dense(), 0.5 * _dense_reference())
    assert_close((s + T.ones(2, 3, dtype=T.float64, device=device)), _dense_reference() + 1)
    assert float(T.sparse.sum(s)) == 13.0 and float(s.sum()) == 13.0


def test_dense_dims_and_to_sparse(device):
    x = T.tensor([[0.0, 1.0], [0.0, 0.0], [2.0, 0.0]], device=device)
    s = x.to_sparse()
    assert to_numpy(s.indices()).tolist() == [[0, 2], [1, 0]]
    assert_close(s.to_dense(), to_numpy(x))
    rows = x.to_sparse(1)
    assert rows.sparse_dim() == 1 and rows.dense_dim() == 1 and rows._nnz() == 2
    assert_close(rows.to_dense(), to_numpy(x))
    hybrid = T.sparse_coo_tensor(T.tensor([[0, 2]], device=device), T.ones(2, 4, device=device), (3, 4))
    assert_close(hybrid.to_dense().sum(1), [4.0, 0.0, 4.0])


def test_construction_checks(device):
    i = T.tensor(INDICES, device=device)
    v = T.tensor(VALUES, device=device)
    assert T.sparse_coo_tensor(i, v).shape == (2, 3)          # the size the indices need
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 2"):
        T.sparse_coo_tensor(i, v, (2, 2))
    with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
        T.sparse_coo_tensor(i, v[:3], (2, 3))
    with pytest.raises(RuntimeError, match="found negative index"):
        T.sparse_coo_tensor(T.tensor([[0, -1]], device=device), v[:2], (3,))
    legacy = T.sparse.FloatTensor(i, T.tensor(VALUES, dtype=T.float64, device=device), T.Size([2, 3]))
    assert legacy.dtype is T.float32


def test_products_and_gradients(device):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 2))
    expected = _dense_reference() @ dense
    s = _sparse(device)
    d = T.tensor(dense, device=device)
    for product in (T.sparse.mm(s, d), T.spmm(s, d), T.mm(s, d), s @ d, T.sparse.addmm(T.zeros(2, 2, dtype=T.float64,
                                                                                              device=device), s, d)):
        assert_close(product, expected, rtol=1e-12, atol=1e-12)
    values = T.tensor(VALUES, dtype=T.float64, device=device, requires_grad=True)
    d = T.tensor(dense, device=device, requires_grad=True)

    def through_sparse(v, x):
        return T.spmm(T.sparse_coo_tensor(T.tensor(INDICES, device=device), v, (2, 3)), x).tanh()
    assert gradcheck(through_sparse, (values, d))
    assert gradcheck(lambda v: T.sparse_coo_tensor(T.tensor(INDICES, device=device), v, (2, 3)).coalesce()
                     .to_dense().exp(), (values,))


def test_sparse_leaf_gradients_follow_pytorch(device):
    d = T.tensor(np.arange(6.0).reshape(3, 2), device=device)
    leaf = _sparse(device, requires_grad=True)
    T.sparse.mm(leaf, d).sum().backward()
    assert leaf.grad.is_sparse and leaf.grad._nnz() == 3          # at the distinct stored positions
    assert_close(leaf.grad.to_dense(), [[0.0, 0.0, 9.0], [1.0, 0.0, 9.0]])
    leaf = _sparse(device, requires_grad=True)
    T.mm(leaf, d).sum().backward()                               # mm: the dense gradient
    assert not leaf.grad.is_sparse
    assert_close(leaf.grad, [[1.0, 5.0, 9.0], [1.0, 5.0, 9.0]])
    leaf.to_dense().sum().backward()                             # dense + sparse accumulate densely
    assert_close(leaf.grad, [[1.0, 5.0, 10.0], [2.0, 5.0, 10.0]])


def test_moves_printing_and_refusals(device):
    s = _sparse("cpu").to(device)
    assert str(s.device).startswith(device)
    assert_close(s.to_dense(), _dense_reference())
    assert s.to(T.float32).dtype is T.float32
    text = repr(_sparse("cpu", dtype=T.float32))
    assert text.startswith("tensor(indices=tensor([[0, 1, 1, 0],\n                       [2, 0, 2, 2]]),\n"
                           "       values=tensor([3., 4., 5., 1.]),\n       size=(2, 3), nnz=4, "
                           "layout=torch.sparse_coo)")
    with pytest.raises(RuntimeError, match="needs a dense tensor.*call .to_dense"):
        s.exp()
    with pytest.raises(RuntimeError, match="Sparse tensors do not have strides"):
        s.stride()


def test_pytorch_agrees():
    torch = pytest.importorskip("torch")
    i, v, d = torch.tensor(INDICES), torch.tensor(VALUES, dtype=torch.float64), torch.arange(6.0).reshape(3, 2)
    ours = _sparse("cpu", requires_grad=True)
    theirs = torch.sparse_coo_tensor(i, v, (2, 3), requires_grad=True, check_invariants=True)
    (T.sparse.mm(ours, T.tensor(d.numpy(), dtype=T.float64)) ** 2).sum().backward()
    (torch.sparse.mm(theirs, d.double()) ** 2).sum().backward()
    np.testing.assert_allclose(to_numpy(ours.grad.to_dense()), theirs.grad.to_dense().numpy())


def test_sparse_mm_with_nothing_stored_takes_the_dense_dtype(device):
    # With no stored values PyTorch skips the dtype check: the product has the dense operand's dtype (and
    # gradients flow to it); with values stored, mixed dtypes are refused (an issue-14 leftover).
    empty = T.sparse_coo_tensor(T.zeros((2, 0), dtype=T.int64), T.zeros(0), (3, 4)).to(device)
    for dtype in (T.float64, T.float16, T.int64):
        out = T.sparse.mm(empty, T.ones((4, 2), dtype=dtype, device=device))
        assert out.dtype == dtype and tuple(out.shape) == (3, 2) and not out.cpu().numpy().any()
    dense = T.ones((4, 2), dtype=T.float64, device=device, requires_grad=True)
    T.sparse.mm(empty, dense).sum().backward()
    assert dense.grad.dtype == T.float64 and not dense.grad.cpu().numpy().any()
    stored = T.sparse_coo_tensor(T.tensor([[0], [1]]), T.tensor([2.0]), (3, 4)).to(device)
    with pytest.raises(RuntimeError):
        T.sparse.mm(stored, T.ones((4, 2), dtype=T.float64, device=device))
