"""Shape ops: views share storage and version counters, copies do not; values, dtypes, grad_fn
names and gradients match PyTorch; gradcheck/gradgradcheck; errors."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close, to_numpy


def rand(*shape, device="cpu", requires_grad=True, seed=0):
    data = np.random.default_rng(seed).uniform(-2, 2, shape)
    return gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


# name: (input shape, fn(module, x) -> tensor, grad_fn name of the result in PyTorch)
CASES = {
    "view": ((2, 3, 4), lambda m, x: x.view(6, 4), "ViewBackward0"),
    "view_infer": ((2, 3, 4), lambda m, x: x.view(-1, 2), "ViewBackward0"),
    "view_size_arg": ((2, 3, 4), lambda m, x: x.view((4, 6)), "ViewBackward0"),
    "view_of_transposed": ((2, 3, 4), lambda m, x: x.transpose(0, 1).view(3, 2, 2, 2)[:, 1], "SelectBackward0"),
    "reshape_view": ((2, 3, 4), lambda m, x: x.reshape(3, 8), "ViewBackward0"),
    "reshape_copy": ((3, 4), lambda m, x: x.t().reshape(12), "UnsafeViewBackward0"),
    "torch_reshape": ((3, 4), lambda m, x: m.reshape(x, (2, -1)), "ViewBackward0"),
    "flatten": ((2, 3, 4), lambda m, x: x.flatten(1), "ViewBackward0"),
    "flatten_all": ((2, 3, 4), lambda m, x: m.flatten(x), "ViewBackward0"),
    "flatten_noncontig": ((3, 4), lambda m, x: x.t().flatten(), "UnsafeViewBackward0"),
    "unflatten": ((2, 6), lambda m, x: x.unflatten(1, (2, -1)), "ViewBackward0"),
    "permute": ((2, 3, 4), lambda m, x: x.permute(2, 0, 1), "PermuteBackward0"),
    "permute_tuple": ((2, 3, 4), lambda m, x: m.permute(x, (1, -1, 0)), "PermuteBackward0"),
    "transpose": ((2, 3, 4), lambda m, x: x.transpose(0, -1), "TransposeBackward0"),
    "swapaxes": ((2, 3, 4), lambda m, x: m.swapaxes(x, 0, 1), "TransposeBackward0"),
    "swapdims": ((2, 3), lambda m, x: x.swapdims(1, 0), "TransposeBackward0"),
    "t": ((2, 3), lambda m, x: x.t(), "TBackward0"),
    "t_1d": ((3,), lambda m, x: m.t(x), "TBackward0"),
    "T": ((2, 3), lambda m, x: x.T, "PermuteBackward0"),
    "mT": ((2, 3, 4), lambda m, x: x.mT, "TransposeBackward0"),
    "mH": ((3, 4), lambda m, x: x.mH, "TransposeBackward0"),
    "H": ((3, 4), lambda m, x: x.H, "TransposeBackward0"),
    "adjoint": ((2, 3, 4), lambda m, x: x.adjoint(), "TransposeBackward0"),
    "squeeze_all": ((1, 3, 1, 2), lambda m, x: x.squeeze(), "SqueezeBackward0"),
    "squeeze_dim": ((1, 3, 1, 2), lambda m, x: x.squeeze(-2), "SqueezeBackward1"),
    "squeeze_dim_noop": ((1, 3, 1, 2), lambda m, x: m.squeeze(x, 1), "SqueezeBackward1"),
    "squeeze_dims": ((1, 3, 1, 2), lambda m, x: x.squeeze((0, 2)), "SqueezeBackward2"),
    "unsqueeze": ((2, 3), lambda m, x: x.unsqueeze(-1), "UnsqueezeBackward0"),
    "unsqueeze_front": ((2, 3), lambda m, x: m.unsqueeze(x, 0), "UnsqueezeBackward0"),
    "expand": ((3, 1), lambda m, x: x.expand(2, 3, 4), "ExpandBackward0"),
    "expand_keep": ((3, 1), lambda m, x: x.expand(-1, 5), "ExpandBackward0"),
    "expand_as": ((1, 4), lambda m, x: x.expand_as(m.zeros(3, 4, device=x.device)), "ExpandBackward0"),
    "broadcast_to": ((3, 1), lambda m, x: m.broadcast_to(x, (2, 3, 2)), "ExpandBackward0"),
    "repeat": ((2, 3), lambda m, x: x.repeat(2, 1, 3), "RepeatBackward0"),
    "repeat_same": ((2, 3), lambda m, x: x.repeat(1, 1), "RepeatBackward0"),
    "tile": ((2, 3), lambda m, x: x.tile((2,)), "RepeatBackward0"),
    "tile_more": ((2, 3), lambda m, x: m.tile(x, (2, 1, 2)), "RepeatBackward0"),
    "contiguous": ((3, 4), lambda m, x: x.t().contiguous(), "CloneBackward0"),
    "clone": ((3, 4), lambda m, x: x.clone(), "CloneBackward0"),
    "clone_noncontig": ((3, 4), lambda m, x: m.clone(x[:, ::2].t()), "CloneBackward0"),
    "cat": ((2, 3), lambda m, x: m.cat([x, x * 2, x[:1]]), "CatBackward0"),
    "cat_dim1": ((2, 3), lambda m, x: m.cat((x, x.flip(0)), dim=-1), "CatBackward0"),
    "cat_legacy_empty": ((2, 3), lambda m, x: m.concat([m.zeros(0, dtype=m.float64, device=x.device), x, x]),
                         "CatBackward0"),
    "concatenate": ((2, 3), lambda m, x: m.concatenate([x, x.t().t()], 1), "CatBackward0"),
    "stack": ((2, 3), lambda m, x: m.stack([x, x * 2], 1), "StackBackward0"),
    "stack_last": ((2, 3), lambda m, x: m.stack([x, x * 3], -1), "StackBackward0"),
    "hstack": ((2, 3), lambda m, x: m.hstack([x, x]), "CatBackward0"),
    "hstack_1d": ((3,), lambda m, x: m.hstack([x, x]), "CatBackward0"),
    "vstack": ((3,), lambda m, x: m.vstack([x, x * 3]), "CatBackward0"),
    "dstack": ((2, 3), lambda m, x: m.dstack([x, x]), "CatBackward0"),
    "column_stack": ((3,), lambda m, x: m.column_stack([x, x * 2]), "CatBackward0"),
    "split_int": ((5, 3), lambda m, x: x.split(2)[1], "SplitBackward0"),
    "split_last": ((5, 3), lambda m, x: m.split(x, 2)[2], "SplitBackward0"),
    "split_sizes": ((5, 3), lambda m, x: x.split([1, 2], dim=1)[1], "SplitWithSizesBackward0"),
    "split_all": ((5, 3), lambda m, x: m.cat([p * (i + 1) for i, p in enumerate(x.split(2))]), "CatBackward0"),
    "chunk": ((5, 3), lambda m, x: x.chunk(3)[1], "SplitBackward0"),
    "chunk_dim": ((5, 3), lambda m, x: m.chunk(x, 2, 1)[1], "SplitBackward0"),
    "tensor_split_n": ((7, 2), lambda m, x: x.tensor_split(3)[0], "SliceBackward0"),
    "tensor_split_idx": ((7, 2), lambda m, x: m.tensor_split(x, [2, 5])[1], "SliceBackward0"),
    "unbind": ((3, 4), lambda m, x: x.unbind(1)[2], "UnbindBackward0"),
    "unbind_all": ((3, 4), lambda m, x: m.stack(m.unbind(x)[::-1]), "StackBackward0"),
    "narrow": ((4, 5), lambda m, x: x.narrow(1, 1, 3), "SliceBackward0"),
    "narrow_neg": ((4, 5), lambda m, x: m.narrow(x, 0, -2, 2), "SliceBackward0"),
    "select": ((4, 5), lambda m, x: x.select(1, -1), "SelectBackward0"),
    "flip": ((2, 3, 4), lambda m, x: x.flip(0, 2), "FlipBackward0"),
    "flip_tuple": ((2, 3, 4), lambda m, x: m.flip(x, (-1,)), "FlipBackward0"),
    "fliplr": ((2, 3), lambda m, x: x.fliplr(), "FlipBackward0"),
    "flipud": ((2, 3), lambda m, x: m.flipud(x), "FlipBackward0"),
    "roll": ((3, 4), lambda m, x: x.roll(1, 0), "RollBackward0"),
    "roll_multi": ((3, 4), lambda m, x: m.roll(x, (-1, 5), (1, 0)), "RollBackward0"),
    "roll_flat": ((3, 4), lambda m, x: x.roll(5), "RollBackward0"),
    "tril": ((3, 4), lambda m, x: x.tril(), "TrilBackward0"),
    "tril_batched": ((2, 3, 4), lambda m, x: m.tril(x, -1), "TrilBackward0"),
    "triu": ((4, 3), lambda m, x: x.triu(1), "TriuBackward0"),
    "triu_neg": ((2, 4, 3), lambda m, x: m.triu(x, diagonal=-1), "TriuBackward0"),
    "movedim": ((2, 3, 4), lambda m, x: x.movedim(0, -1), "PermuteBackward0"),
    "movedim_multi": ((2, 3, 4), lambda m, x: m.movedim(x, (0, 1), (2, 0)), "PermuteBackward0"),
    "moveaxis": ((2, 3, 4), lambda m, x: m.moveaxis(x, -1, 0), "PermuteBackward0"),
    "diagonal": ((3, 4), lambda m, x: x.diagonal(), "DiagonalBackward0"),
    "diagonal_offset": ((3, 4), lambda m, x: m.diagonal(x, 1), "DiagonalBackward0"),
    "diagonal_neg": ((2, 4, 3), lambda m, x: x.diagonal(-1, 1, 2), "DiagonalBackward0"),
    "diagonal_dims": ((2, 3, 4), lambda m, x: m.diagonal(x, 0, 2, 0), "DiagonalBackward0"),
    "view_as": ((2, 6), lambda m, x: x.view_as(m.zeros(3, 4)), "ViewBackward0"),
    "reshape_as": ((2, 6), lambda m, x: x.t().reshape_as(m.zeros(3, 4)), "UnsafeViewBackward0"),
    "atleast_3d": ((2, 3), lambda m, x: m.atleast_3d(x), "UnsqueezeBackward0"),
    "atleast_2d": ((3,), lambda m, x: m.atleast_2d(x), "UnsqueezeBackward0"),
    "broadcast_tensors": ((3, 1), lambda m, x: m.broadcast_tensors(x, m.zeros(2, 1, 4, dtype=m.float64,
                                                                                  device=x.device))[0],
                          "ExpandBackward0"),
}

# PyTorch names these differently (internal decompositions); values and gradients still match.
NAME_DIFFERS = {"atleast_2d", "atleast_3d"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name, device):
    shape, fn, _ = CASES[name]
    x = rand(*shape, device=device)
    assert gradcheck(lambda a: fn(gputorch, a), (x,))
    assert gradgradcheck(lambda a: fn(gputorch, a), (x,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity_with_torch(name, device):
    torch = pytest.importorskip("torch")
    shape, fn, grad_fn_name = CASES[name]
    data = np.random.default_rng(1).uniform(-2, 2, shape)
    gx = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out, expected = fn(gputorch, gx), fn(torch, tx)
    assert_close(out, expected, rtol=0, atol=0)
    assert out.is_contiguous() == expected.is_contiguous() or name.startswith(("expand", "broadcast"))
    assert type(out.grad_fn).__name__ == type(expected.grad_fn).__name__ == grad_fn_name or name in NAME_DIFFERS
    g = np.random.default_rng(2).standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(gx.grad, tx.grad, rtol=1e-12, atol=1e-12)


# Ops that PyTorch documents as returning views: a write through the result shows in the input.
VIEWS = ["view", "view_infer", "reshape_view", "flatten", "unflatten", "permute", "transpose", "t", "T", "mT",
         "squeeze_all", "squeeze_dims", "unsqueeze", "split_int", "split_sizes", "chunk", "tensor_split_idx",
         "unbind", "narrow", "narrow_neg", "select", "movedim", "diagonal", "diagonal_offset", "diagonal_dims",
         "view_as", "view_of_transposed"]
COPIES = ["reshape_copy", "flatten_noncontig", "repeat_same", "contiguous", "clone", "flip", "roll", "tril",
          "cat", "stack"]


@pytest.mark.parametrize("name", VIEWS)
def test_views_share_storage_and_version(name, device):
    torch = pytest.importorskip("torch")
    shape, fn, _ = CASES[name]
    data = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    gx = gputorch.tensor(data, device=device)
    tx = torch.tensor(data)
    gv, tv = fn(gputorch, gx), fn(torch, tx)
    assert gv._base is gx
    version = gx._version
    gv.mul_(-1)
    tv.mul_(-1)
    assert_close(gx, tx, rtol=0, atol=0)
    assert gx._version == gv._version == version + 1
    gx.add_(100)
    tx.add_(100)
    assert_close(gv, tv, rtol=0, atol=0)


@pytest.mark.parametrize("name", COPIES)
def test_copies_do_not_alias(name, device):
    shape, fn, _ = CASES[name]
    x = rand(*shape, device=device, requires_grad=False)
    before = to_numpy(x).copy()
    out = fn(gputorch, x)
    out.mul_(0)
    np.testing.assert_array_equal(to_numpy(x), before)
    assert out._base is None


def test_view_of_view_points_at_root_and_chains_versions(device):
    x = gputorch.zeros(4, 6, device=device)
    v = x.view(2, 12)[1].unflatten(0, (3, 4))
    assert v._base is x
    v[0].fill_(7.0)
    assert x._version == v._version == 1
    np.testing.assert_array_equal(to_numpy(x)[2], [7, 7, 7, 7, 0, 0])


def test_contiguous_returns_self_when_contiguous(device):
    x = rand(3, 4, device=device)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y is not x and y.is_contiguous() and y._base is None


def test_flatten_same_dim_returns_input_and_0d(device):
    x = rand(3, 4, device=device)
    assert x.flatten(1, 1) is x
    s = gputorch.tensor(2.0, device=device)
    assert s.flatten().shape == (1,)


def test_cat_dtype_promotion_and_grads(device):
    torch = pytest.importorskip("torch")
    for dtypes in [("float32", "int64"), ("int32", "uint8"), ("bool", "int16"), ("float16", "float64")]:
        a = np.ones((2, 2))
        g = gputorch.cat([gputorch.tensor(a, dtype=getattr(gputorch, dtypes[0]), device=device),
                          gputorch.tensor(a, dtype=getattr(gputorch, dtypes[1]), device=device)])
        t = torch.cat([torch.tensor(a, dtype=getattr(torch, dtypes[0])),
                       torch.tensor(a, dtype=getattr(torch, dtypes[1]))])
        assert_close(g, t)
    x32 = gputorch.ones(2, dtype=gputorch.float32, device=device, requires_grad=True)
    x64 = gputorch.ones(3, dtype=gputorch.float64, device=device, requires_grad=True)
    out = gputorch.cat([x32, x64])
    assert out.dtype == gputorch.float64
    (out * gputorch.arange(5, device=device)).sum().backward()
    assert x32.grad.dtype == gputorch.float32 and x64.grad.dtype == gputorch.float64
    np.testing.assert_array_equal(to_numpy(x32.grad), [0, 1])
    np.testing.assert_array_equal(to_numpy(x64.grad), [2, 3, 4])
    s = gputorch.stack([gputorch.ones(2, dtype=gputorch.int32, device=device), gputorch.ones(2, device=device)])
    assert s.dtype == gputorch.float32


def test_cat_out_and_empty_inputs(device):
    out = gputorch.empty(0, device=device)
    res = gputorch.cat([gputorch.ones(2, device=device), gputorch.zeros(1, device=device)], out=out)
    assert res is out
    np.testing.assert_array_equal(to_numpy(out), [1, 1, 0])
    e = gputorch.cat([gputorch.zeros(0, device=device), gputorch.zeros(0, device=device)])
    assert e.shape == (0,)
    assert gputorch.cat([gputorch.zeros(2, 0, device=device), gputorch.zeros(3, 0, device=device)]).shape == (5, 0)


def test_split_chunk_piece_shapes_match_torch(device):
    torch = pytest.importorskip("torch")
    for size in (0, 1, 5, 6, 7):
        g = gputorch.zeros(size, 2, device=device)
        t = torch.zeros(size, 2)
        for args in [(2,), (3,), (size or 1,)]:
            assert [p.shape for p in g.split(*args)] == [tuple(p.shape) for p in t.split(*args)]
        for n in (1, 2, 3, 4):
            assert [p.shape for p in g.chunk(n)] == [tuple(p.shape) for p in t.chunk(n)]
            assert [p.shape for p in g.tensor_split(n)] == [tuple(p.shape) for p in t.tensor_split(n)]
        for idx in ([1, 3], [-2, 10], [4, 2]):
            assert [p.shape for p in g.tensor_split(idx)] == [tuple(p.shape) for p in t.tensor_split(idx)]
    x = gputorch.arange(6, device=device)
    parts = x.tensor_split(gputorch.tensor([2, 4]))
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]]


def test_iteration_unbinds(device):
    x = rand(3, 2, device=device)
    rows = list(x)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    assert type(rows[0].grad_fn).__name__ == "UnbindBackward0"
    sum(r * (i + 1) for i, r in enumerate(rows)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[1, 1], [2, 2], [3, 3]])


def test_broadcast_helpers(device):
    assert gputorch.broadcast_shapes((3, 1), (2, 1, 4), 4) == (2, 3, 4)
    a, b = gputorch.ones(3, 1, device=device), gputorch.ones(1, 4, device=device)
    x, y = gputorch.broadcast_tensors(a, b)
    assert x.shape == y.shape == (3, 4)
    same = gputorch.ones(3, 4, device=device)
    assert gputorch.broadcast_tensors(same, a)[0] is same
    with pytest.raises(RuntimeError, match="must match the size"):
        gputorch.broadcast_tensors(gputorch.ones(3, device=device), gputorch.ones(2, device=device))
    with pytest.raises(RuntimeError, match="Shape mismatch"):
        gputorch.broadcast_shapes((3,), (2,))
    s = gputorch.tensor(1.0, device=device)
    assert gputorch.atleast_1d(s).shape == (1,)
    assert gputorch.atleast_2d(s).shape == (1, 1)
    assert [t.shape for t in gputorch.atleast_3d(s, gputorch.ones(2, device=device))] == [(1, 1, 1), (1, 2, 1)]


def test_T_warns_for_non_2d_and_mT_errors(device):
    x = rand(2, 3, 4, device=device)
    with pytest.warns(UserWarning, match="deprecated"):
        assert x.T.shape == (4, 3, 2)
    with pytest.raises(RuntimeError, match="only supported on matrices or batches of matrices. Got 1-D"):
        rand(3, device=device).mT
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        rand(3, device=device).mH
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        x.t()


def test_view_dtype_reinterprets(device):
    x = gputorch.tensor([1.0, -2.0], dtype=gputorch.float32, device=device)
    bits = x.view(gputorch.int32)
    assert bits.dtype == gputorch.int32 and bits._base is x
    assert bits.tolist() == np.array([1.0, -2.0], np.float32).view(np.int32).tolist()


def test_tril_keeps_infinities(device):
    x = gputorch.full((3, 3), float("-inf"), device=device)
    out = x.triu(1)
    expected = np.triu(np.full((3, 3), -np.inf), 1)
    np.testing.assert_array_equal(to_numpy(out), expected)
    b = gputorch.ones(2, 2, dtype=gputorch.bool, device=device).tril()
    assert b.dtype == gputorch.bool and b.tolist() == [[True, False], [True, True]]


def test_empty_and_zero_dim_inputs(device):
    e = gputorch.zeros(0, 3, device=device, requires_grad=True)
    assert e.view(3, 0).shape == (3, 0)
    assert e.t().reshape(3, -1).shape == (3, 0)
    with pytest.raises(RuntimeError, match="ambiguous"):
        e.reshape(-1, 0)
    assert e.permute(1, 0).shape == (3, 0)
    assert e.repeat(2, 2).shape == (0, 6)
    assert e.flip(0).shape == (0, 3)
    out = gputorch.cat([e, e * 2], 1)
    out.sum().backward()
    assert e.grad.shape == (0, 3)
    s = gputorch.tensor(3.0, device=device, requires_grad=True)
    assert s.unsqueeze(0).shape == (1,)
    assert s.view(1, 1).shape == (1, 1)
    assert s.reshape(-1).shape == (1,)
    assert s.squeeze().shape == ()
    assert s.expand(2, 2).shape == (2, 2)
    assert s.t().shape == () and s.T.shape == ()
    s.expand(4).sum().backward()
    assert s.grad.item() == 4


ERRORS = [
    (lambda x: x.t().view(12), RuntimeError, "view size is not compatible with input tensor's size and stride"),
    (lambda x: x.view(5), RuntimeError, "shape '[5]' is invalid for input of size 12"),
    (lambda x: x.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda x: x.reshape(5, -1), RuntimeError, "is invalid for input of size 12"),
    (lambda x: x.flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda x: x.unflatten(1, (3, 2)), RuntimeError, "Provided sizes [3, 2] don't multiply up to the size of dim 1"),
    (lambda x: x.permute(0), RuntimeError, "does not match the length of the desired ordering"),
    (lambda x: x.permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda x: x.transpose(0, 2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda x: x.squeeze(3), IndexError, "Dimension out of range"),
    (lambda x: x.unsqueeze(3), IndexError, "expected to be in range of [-3, 2]"),
    (lambda x: x.expand(2, 4), RuntimeError, "The expanded size of the tensor (2) must match the existing size (3)"),
    (lambda x: x.expand(4), RuntimeError, "must be greater or equal to the number of dimensions"),
    (lambda x: x.repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be smaller"),
    (lambda x: gputorch.cat([x, gputorch.ones(3, 5, dtype=x.dtype)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 4 but got size 5 for tensor number 1"),
    (lambda x: gputorch.cat([x, x], 2), IndexError, "Dimension out of range"),
    (lambda x: gputorch.cat([]), ValueError, "expected a non-empty list of Tensors"),
    (lambda x: gputorch.cat([x, gputorch.ones(3)]), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    (lambda x: gputorch.cat([x.sum(), x.sum()]), RuntimeError,
     "zero-dimensional tensor (at position 0) cannot be concatenated"),
    (lambda x: gputorch.cat(x), TypeError, "must be tuple of Tensors"),
    (lambda x: gputorch.stack([x, x.t()]), RuntimeError,
     "stack expects each tensor to be equal size, but got [3, 4] at entry 0 and [4, 3] at entry 1"),
    (lambda x: gputorch.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda x: x.split(0), RuntimeError, "split_size can only be 0 if dimension size is 0"),
    (lambda x: x.split([1, 1]), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 3"),
    (lambda x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda x: x.narrow(0, 2, 2), RuntimeError, "start (2) + length (2) exceeds dimension size (3)"),
    (lambda x: x.narrow(0, 5, 0), IndexError, "start out of range"),
    (lambda x: x.select(0, 5), IndexError, "select(): index 5 out of range for tensor of size [3, 4] at dimension 0"),
    (lambda x: x.roll((1, 2), (0,)), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1"),
    (lambda x: x.roll((1, 2)), RuntimeError, "shifts and dimensions must align"),
    (lambda x: x[0].tril(), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda x: x.diagonal(0, 1, 1), RuntimeError, "diagonal dimensions cannot be identical 1, 1"),
    (lambda x: x.movedim((0, 1), (0,)), RuntimeError, "movedim: Invalid source or destination dims"),
    (lambda x: x.flip(0, 0), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda x: x[0].fliplr(), RuntimeError, "Input must be >= 2-d."),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case, device):
    fn, exc, message = ERRORS[case]
    x = gputorch.zeros(3, 4, device=device)
    with pytest.raises(exc) as info:
        fn(x)
    assert message in str(info.value)


def test_error_messages_match_torch():
    torch = pytest.importorskip("torch")
    checks = [lambda m: m.zeros(3, 4).t().view(12), lambda m: m.zeros(3, 4).expand(2, 4),
              lambda m: m.cat([m.zeros(3, 4), m.zeros(3, 5)]), lambda m: m.zeros(3, 4).split([1, 1]),
              lambda m: m.zeros(3, 4).narrow(0, 2, 2), lambda m: m.zeros(3).mT]
    for fn in checks:
        with pytest.raises(Exception) as theirs:
            fn(torch)
        with pytest.raises(type(theirs.value)) as ours:
            fn(gputorch)
        assert str(ours.value) == str(theirs.value)


def test_slice_inverse_is_the_base_of_a_slice_with_the_sources_layout(device):
    base = gputorch.arange(18.0, device=device).reshape(6, 3)
    part = base[1:5:2]
    src = gputorch.zeros(8, 3, device=device)[1:7]       # layout only: offset 3, strides (3, 1)
    whole = part.slice_inverse(gputorch.zeros(6, 3, device=device), 0, 1, 5, 2)
    assert_close(whole, np.arange(18.0, dtype=np.float32).reshape(6, 3))
    whole[0, 0] = 100.0                                    # a view of base's memory
    assert base[0, 0].item() == 100.0
    assert gputorch.slice_inverse(base[:, 1:], base.t(), 1, 1).stride() == (1, 3)
    with pytest.raises(RuntimeError, match="out of bounds"):
        part.slice_inverse(src, 0, 1, 5, 2)
    with pytest.raises(TypeError, match="src"):
        part.slice_inverse([1, 2])
