"""Half-precision matrix products accumulate in float32 (gputorch/ops/_gemm.py): the result is the
float32 product rounded once, as PyTorch's, on every backend."""
import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from tests._helpers import to_numpy


def test_float16_products_accumulate_in_float32(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 512)).astype(np.float16)
    b = rng.standard_normal((512, 8)).astype(np.float16)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    ga, gb = gputorch.tensor(a, device=device), gputorch.tensor(b, device=device)
    zeros = gputorch.zeros(16, 8, dtype=gputorch.float16, device=device)
    for got in (ga @ gb, gputorch.mm(ga, gb), F.linear(ga, gb.t()), gputorch.addmm(zeros, ga, gb),
                gputorch.bmm(ga[None], gb[None])[0]):
        assert got.dtype is gputorch.float16
        np.testing.assert_array_equal(to_numpy(got), expected)


def test_float16_products_match_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float16)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float16)
    ours = to_numpy(F.conv2d(gputorch.tensor(x, device=device), gputorch.tensor(w, device=device), padding=1))
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------- array gradients of products
_PRODUCTS = [
    ("matmul", (3, 4), (4, 5)),
    ("matmul", (2, 3, 4), (2, 4, 5)),
    ("matmul", (2, 2, 3, 4), (2, 2, 4, 5)),
    ("matmul", (2, 3, 4), (4, 5)),          # a shared right operand: folded rows
    ("matmul", (2, 1, 3, 4), (3, 4, 5)),    # broadcast batches: the Tensor-op rules
    ("matmul", (4,), (4, 5)),
    ("mm", (3, 4), (4, 5)),
    ("bmm", (2, 3, 4), (2, 4, 5)),
    ("linear", (2, 3, 4), (5, 4)),
    ("linear", (3, 4), (5, 4)),
    ("linear", (4,), (5, 4)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("op, a_shape, b_shape", _PRODUCTS)
@pytest.mark.parametrize("wanted", ["both", "first", "second"])
def test_array_gradients_equal_tensor_op_gradients(device, dtype, op, a_shape, b_shape, wanted):
    """Plain backward takes the products' gradients as array products; backward with
    ``create_graph=True`` takes them with differentiable Tensor ops. Same values, dtypes, shapes
    and memory order (contiguous weight gradients)."""
    rng = np.random.default_rng(0)
    dt = getattr(gputorch, dtype)
    a = gputorch.tensor(rng.standard_normal(a_shape), dtype=dt, device=device, requires_grad=wanted != "second")
    b = gputorch.tensor(rng.standard_normal(b_shape), dtype=dt, device=device, requires_grad=wanted != "first")
    fn = F.linear if op == "linear" else getattr(gputorch, op)
    out = fn(a, b)
    g = gputorch.tensor(rng.standard_normal(tuple(out.shape)), dtype=dt, device=device)
    leaves = [t for t in (a, b) if t.requires_grad]
    plain = gputorch.autograd.grad(fn(a, b), leaves, g)
    recorded = gputorch.autograd.grad(fn(a, b), leaves, g, create_graph=True)
    tol = dict(float64=1e-12, float32=1e-5, float16=2e-3)[dtype]
    for p_, r_, leaf in zip(plain, recorded, leaves):
        assert p_.dtype == r_.dtype == dt and p_.shape == r_.shape == leaf.shape
        assert p_.is_contiguous()
        np.testing.assert_allclose(to_numpy(p_).astype(np.float64), to_numpy(r_.detach()).astype(np.float64),
                                   rtol=tol, atol=tol)


@pytest.mark.parametrize("x_shape, y_shape", [((2, 3, 5), (5, 4)), ((2, 3, 5), (5,)), ((2, 3, 0), (0, 4)),
                                              ((4, 1, 3, 5), (5, 2)), ((2, 0, 5), (5, 3))])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
def test_batch_times_shared_matrix_is_one_product(x_shape, y_shape, dtype):
    """A batch times one matrix runs as one GEMM over the folded rows; values, shape and dtype as
    NumPy's matmul (float16 accumulated in float32)."""
    from gputorch.ops._gemm import product
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(x_shape) * 4).astype(dtype)
    y = (rng.standard_normal(y_shape) * 4).astype(dtype)
    got = product(x, y)
    wide = np.float32 if dtype == np.float16 else dtype
    expected = (x.astype(wide) @ y.astype(wide)).astype(dtype)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=1e-6, atol=1e-6)
    t_x = x[:, ::-1] if len(x_shape) > 2 and x_shape[1] > 1 else x     # non-contiguous: NumPy's loop
    np.testing.assert_allclose(product(t_x, y).astype(np.float64),
                               (t_x.astype(wide) @ y.astype(wide)).astype(dtype).astype(np.float64), rtol=1e-6, atol=1e-6)
