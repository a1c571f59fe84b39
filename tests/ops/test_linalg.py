"""Matrix products, einsum/tensordot, diagonals and gputorch.linalg: values, gradients, errors."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close


def rand(*shape, device="cpu", seed=0, dtype=gputorch.float64, requires_grad=True, lo=-1.0, hi=1.0):
    data = np.random.default_rng(seed).uniform(lo, hi, shape)
    return gputorch.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def check_grads(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def parity(g_fn, t_fn, shapes, device, dtype="float64", rtol=1e-10, atol=1e-10, grad_fn=None):
    """Run ``g_fn`` on gputorch tensors and ``t_fn`` on torch tensors built from the same random data;
    compare values, dtypes, grad_fn names (if given) and the gradients of a random weighted sum."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    g_in = [gputorch.tensor(a, device=device, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = g_fn(*g_in), t_fn(*t_in)
    assert_close(out, expected, rtol=rtol, atol=atol)
    if grad_fn is not None:
        assert out.grad_fn.name() == grad_fn
    weights = rng.standard_normal(tuple(expected.shape)).astype(dtype)
    (out * gputorch.tensor(weights, device=device)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for g, t in zip(g_in, t_in):
        assert_close(g.grad, t.grad, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- matmul
MATMUL_SHAPES = [
    ((3,), (3,), "DotBackward0"),
    ((2, 3), (3,), "MvBackward0"),
    ((3,), (3, 4), None),
    ((2, 3), (3, 4), "MmBackward0"),
    ((5, 2, 3), (5, 3, 4), "BmmBackward0"),
    ((5, 2, 3), (3, 4), None),
    ((2, 3), (5, 3, 4), None),
    ((5, 1, 2, 3), (6, 3, 4), None),       # broadcast batch dims on both sides
    ((1, 2, 3), (4, 3, 2), None),
    ((3,), (5, 3, 4), None),
    ((5, 2, 3), (3,), None),
    ((2, 4, 2, 3), (3,), None),
    ((2, 0, 3), (3, 4), None),              # empty
    ((2, 0), (0, 3), "MmBackward0"),        # empty contraction -> zeros
]


@pytest.mark.parametrize("sa, sb, node", MATMUL_SHAPES)
def test_matmul_parity(sa, sb, node, device):
    parity(lambda a, b: a @ b, lambda a, b: a @ b, [sa, sb], device, grad_fn=node)


@pytest.mark.parametrize("sa, sb, node", MATMUL_SHAPES[:12])
def test_matmul_gradcheck(sa, sb, node, device):
    check_grads(gputorch.matmul, rand(*sa, device=device), rand(*sb, device=device, seed=1))


def test_matmul_float32_stays_float32(device):
    parity(gputorch.matmul, lambda a, b: a.matmul(b), [(4, 2, 3), (3, 5)], device, dtype="float32",
           rtol=1e-5, atol=1e-5)
    a, b = rand(2, 3, device=device, dtype=gputorch.float32), rand(3, 2, device=device, dtype=gputorch.float32)
    assert (a @ b).dtype is gputorch.float32
    half = gputorch.ones(2, 3, dtype=gputorch.float16, device=device) @ gputorch.ones(3, dtype=gputorch.float16,
                                                                                       device=device)
    assert half.dtype is gputorch.float16 and half.tolist() == [3.0, 3.0]


def test_matmul_integer_values(device):
    a = gputorch.tensor([[1, 2], [3, 4]], device=device)
    b = gputorch.tensor([[5, 6], [7, 8]], dtype=gputorch.int64, device=device)
    out = a @ b
    assert out.dtype is gputorch.int64
    assert out.tolist() == [[19, 22], [43, 50]]
    assert gputorch.mv(a, gputorch.tensor([1, 1], device=device)).tolist() == [3, 7]


def test_matmul_numpy_reference_and_methods(device):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 2))
    a, b = gputorch.tensor(x, device=device), gputorch.tensor(y, device=device)
    expected = x @ y
    assert_close(a @ b, expected, rtol=1e-12)
    assert_close(a.matmul(b), expected, rtol=1e-12)
    assert_close(b.__rmatmul__(a), expected, rtol=1e-12)
    out = gputorch.empty(0, dtype=gputorch.float64, device=device)
    gputorch.matmul(a, b, out=out)
    assert_close(out, expected, rtol=1e-12)


def test_matmul_non_contiguous_inputs(device):
    base = rand(4, 6, device=device)
    a = base.transpose(0, 1)[::2]          # (3, 4), strided
    b = rand(4, 3, device=device, seed=2).transpose(0, 1).transpose(0, 1)
    t = rand(2, 4, 3, device=device, seed=3).transpose(1, 2)
    x = np.asarray(a.detach().cpu()._data)
    assert_close(a @ b, x @ np.asarray(b.detach().cpu()._data), rtol=1e-12)
    assert_close(t @ a.transpose(0, 1), np.asarray(t.detach().cpu()._data) @ x.T, rtol=1e-12)
    check_grads(lambda u, v: u.transpose(0, 1)[::2] @ v, base, rand(4, 3, device=device, seed=2))


def test_matmul_broadcast_grad_reduced(device):
    a = rand(1, 2, 3, device=device)
    b = rand(4, 3, 2, device=device, seed=1)
    (a @ b).sum().backward()
    assert a.grad.shape == (1, 2, 3) and b.grad.shape == (4, 3, 2)
    expected = np.ones((4, 2, 2)) @ np.swapaxes(np.asarray(b.detach().cpu()._data), 1, 2)
    assert_close(a.grad, expected.sum(0, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("sa, sb, exc, fragment", [
    ((2, 3), (4, 5), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    ((3,), (4,), RuntimeError, "inconsistent tensor size, expected tensor [3] and src [4]"),
    ((2, 3), (4,), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    ((3,), (4, 5), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"),
    ((2, 2, 3), (2, 4, 5), RuntimeError, "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]"),
    ((2, 2, 3), (4, 5), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"),
    ((5, 2, 3), (4, 3, 5), RuntimeError, "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 0"),
    ((), (3,), RuntimeError, "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
])
def test_matmul_shape_errors(sa, sb, exc, fragment, device):
    a = gputorch.zeros(*sa, device=device)
    b = gputorch.zeros(*sb, device=device)
    with pytest.raises(exc) as info:
        a @ b
    assert fragment in str(info.value)


@pytest.mark.parametrize("sa, sb, fragment", [
    ((2, 3), (3, 4), "expected m1 and m2 to have the same dtype, but got: float != double"),
    ((3,), (3,), "dot : expected both vectors to have same dtype, but found Float and Double"),
    ((2, 3), (3,), "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
    ((2, 2, 3), (2, 3, 4), "expected scalar type Float but found Double"),
])
def test_matmul_dtype_errors(sa, sb, fragment, device):
    a = gputorch.zeros(*sa, device=device)
    b = gputorch.zeros(*sb, dtype=gputorch.float64, device=device)
    with pytest.raises(RuntimeError, match="same dtype|scalar type") as info:
        gputorch.matmul(a, b)
    assert fragment in str(info.value)
    with pytest.raises(RuntimeError, match="long int != float"):
        gputorch.ones(2, 3, dtype=gputorch.int64, device=device) @ gputorch.ones(3, 2, device=device)


def test_matmul_bad_arguments(device):
    a = gputorch.ones(2, 2, device=device)
    with pytest.raises(TypeError, match="argument 'other' .* must be Tensor, not int"):
        gputorch.matmul(a, 2)
    with pytest.raises(TypeError, match="argument 'mat2' .* must be Tensor, not list"):
        gputorch.mm(a, [[1.0]])
    with pytest.raises(NotImplementedError, match="Bool"):
        gputorch.ones(2, 2, dtype=gputorch.bool, device=device) @ gputorch.ones(2, 2, dtype=gputorch.bool,
                                                                                device=device)


# ---------------------------------------------------------------- mm, bmm, mv, dot, vdot, inner, outer
def test_mm_bmm_mv_dot_grads(device):
    check_grads(gputorch.mm, rand(2, 3, device=device), rand(3, 4, device=device, seed=1))
    check_grads(gputorch.bmm, rand(2, 2, 3, device=device), rand(2, 3, 2, device=device, seed=1))
    check_grads(gputorch.mv, rand(2, 3, device=device), rand(3, device=device, seed=1))
    check_grads(gputorch.dot, rand(4, device=device), rand(4, device=device, seed=1))
    check_grads(gputorch.vdot, rand(4, device=device), rand(4, device=device, seed=1))
    check_grads(gputorch.inner, rand(2, 3, device=device), rand(4, 3, device=device, seed=1))
    check_grads(gputorch.outer, rand(2, device=device), rand(3, device=device, seed=1))


@pytest.mark.parametrize("name, shapes, node", [
    ("mm", [(2, 3), (3, 4)], "MmBackward0"),
    ("bmm", [(3, 2, 4), (3, 4, 5)], "BmmBackward0"),
    ("mv", [(2, 3), (3,)], "MvBackward0"),
    ("dot", [(5,), (5,)], "DotBackward0"),
    ("vdot", [(5,), (5,)], "VdotBackward0"),
    ("inner", [(2, 3), (4, 3)], None),
    ("inner", [(3,), (3,)], None),
    ("inner", [(), (3,)], None),
    ("outer", [(2,), (3,)], "MulBackward0"),
    ("ger", [(2,), (3,)], "MulBackward0"),
])
def test_products_parity(name, shapes, node, device):
    torch = pytest.importorskip("torch")
    parity(getattr(gputorch, name), getattr(torch, name), shapes, device, grad_fn=node)


def test_product_methods(device):
    a, b = rand(2, 3, device=device), rand(3, 2, device=device, seed=1)
    v = rand(3, device=device, seed=2)
    assert_close(a.mm(b), gputorch.mm(a, b), rtol=1e-12)
    assert_close(a.mv(v), gputorch.mv(a, v), rtol=1e-12)
    assert_close(v.dot(v), gputorch.dot(v, v), rtol=1e-12)
    assert_close(v.outer(v), gputorch.outer(v, v), rtol=1e-12)
    assert_close(v.ger(v), gputorch.outer(v, v), rtol=1e-12)
    assert_close(a.unsqueeze(0).bmm(b.unsqueeze(0)), gputorch.mm(a, b).unsqueeze(0), rtol=1e-12)
    assert_close(v.inner(v), gputorch.dot(v, v), rtol=1e-12)


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda d: gputorch.mm(gputorch.ones(2, 2, 3, device=d), gputorch.ones(3, 4, device=d)), RuntimeError,
     "self must be a matrix"),
    (lambda d: gputorch.mm(gputorch.ones(2, 3, device=d), gputorch.ones(3, device=d)), RuntimeError,
     "mat2 must be a matrix"),
    (lambda d: gputorch.mm(gputorch.ones(2, 3, device=d), gputorch.ones(4, 4, device=d)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x4)"),
    (lambda d: gputorch.mm(gputorch.ones(2, 3, device=d), gputorch.ones(3, 4, dtype=gputorch.float64, device=d)),
     RuntimeError, "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda d: gputorch.bmm(gputorch.ones(2, 3, device=d), gputorch.ones(3, 4, device=d)), RuntimeError,
     "batch1 must be a 3D tensor"),
    (lambda d: gputorch.bmm(gputorch.ones(2, 2, 3, device=d), gputorch.ones(3, 3, 4, device=d)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
    (lambda d: gputorch.bmm(gputorch.ones(2, 2, 3, device=d), gputorch.ones(2, 3, 4, dtype=gputorch.float64,
                                                                            device=d)),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda d: gputorch.mv(gputorch.ones(2, 3, device=d), gputorch.ones(3, 1, device=d)), RuntimeError,
     "vector + matrix @ vector expected, got 1, 2, 2"),
    (lambda d: gputorch.mv(gputorch.ones(2, 3, device=d), gputorch.ones(4, device=d)), RuntimeError,
     "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda d: gputorch.dot(gputorch.ones(3, 1, device=d), gputorch.ones(3, device=d)), RuntimeError,
     "1D tensors expected, but got 2D and 1D tensors"),
    (lambda d: gputorch.dot(gputorch.ones(3, device=d), gputorch.ones(4, device=d)), RuntimeError,
     "inconsistent tensor size"),
    (lambda d: gputorch.vdot(gputorch.ones(2, dtype=gputorch.int64, device=d), gputorch.ones(2, device=d)),
     RuntimeError, "expected both vectors to have same dtype, but found Long and Float"),
    (lambda d: gputorch.inner(gputorch.ones(2, 3, device=d), gputorch.ones(4, 4, device=d)), RuntimeError,
     "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4, 4]"),
    (lambda d: gputorch.outer(gputorch.ones(2, 1, device=d), gputorch.ones(3, device=d)), RuntimeError,
     "outer: Expected 1-D argument self, but got 2-D"),
])
def test_product_errors(call, exc, fragment, device):
    with pytest.raises(exc) as info:
        call(device)
    assert fragment in str(info.value)


# ---------------------------------------------------------------- addmm family
ADD_PRODUCTS = [
    ("addmm", [(4,), (2, 3), (3, 4)], "AddmmBackward0"),
    ("addmm", [(2, 4), (2, 3), (3, 4)], "AddmmBackward0"),
    ("addmv", [(2,), (2, 3), (3,)], "AddmvBackward0"),
    ("addmv", [(), (2, 3), (3,)], "AddmvBackward0"),
    ("baddbmm", [(2, 2, 4), (2, 2, 3), (2, 3, 4)], "BaddbmmBackward0"),
    ("baddbmm", [(4,), (2, 2, 3), (2, 3, 4)], "BaddbmmBackward0"),
    ("addbmm", [(2, 4), (5, 2, 3), (5, 3, 4)], "AddbmmBackward0"),
    ("addr", [(2, 4), (2,), (4,)], "AddrBackward0"),
    ("addr", [(1, 4), (2,), (4,)], "AddrBackward0"),
]


@pytest.mark.parametrize("name, shapes, node", ADD_PRODUCTS)
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, -2.0)])
def test_add_products_parity(name, shapes, node, beta, alpha, device):
    torch = pytest.importorskip("torch")
    parity(lambda *a: getattr(gputorch, name)(*a, beta=beta, alpha=alpha),
           lambda *a: getattr(torch, name)(*a, beta=beta, alpha=alpha), shapes, device, grad_fn=node)


@pytest.mark.parametrize("name, shapes, node", ADD_PRODUCTS[::2])
def test_add_products_gradcheck(name, shapes, node, device):
    inputs = [rand(*s, device=device, seed=i) for i, s in enumerate(shapes)]
    check_grads(lambda *a: getattr(gputorch, name)(*a, beta=0.7, alpha=1.3), *inputs)


def test_addmm_beta_zero_ignores_nan(device):
    nan = gputorch.full((1, 1), float("nan"), device=device, requires_grad=True)
    out = gputorch.addmm(nan, gputorch.ones(1, 1, device=device), gputorch.ones(1, 1, device=device), beta=0)
    assert out.tolist() == [[1.0]]
    out.sum().backward()
    assert nan.grad.tolist() == [[0.0]]


def test_add_products_inplace(device):
    rng = np.random.default_rng(0)
    c, x, y = rng.standard_normal((2, 4)), rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    t = gputorch.tensor(c, device=device)
    res = t.addmm_(gputorch.tensor(x, device=device), gputorch.tensor(y, device=device), beta=2, alpha=3)
    assert res is t
    assert_close(t, 2 * c + 3 * (x @ y), rtol=1e-12)
    v = gputorch.zeros(2, dtype=gputorch.float64, device=device)
    v.addmv_(gputorch.tensor(x, device=device), gputorch.ones(3, dtype=gputorch.float64, device=device))
    assert_close(v, x.sum(1), rtol=1e-12)
    r = gputorch.zeros(2, 3, dtype=gputorch.float64, device=device)
    r.addr_(gputorch.tensor([1.0, 2.0], dtype=gputorch.float64, device=device),
            gputorch.tensor([1.0, 0.0, -1.0], dtype=gputorch.float64, device=device))
    assert r.tolist() == [[1, 0, -1], [2, 0, -2]]
    b = gputorch.zeros(2, 2, 4, dtype=gputorch.float64, device=device)
    b.baddbmm_(gputorch.tensor(np.stack([x, x]), device=device), gputorch.tensor(np.stack([y, y]), device=device))
    assert_close(b, np.stack([x @ y, x @ y]), rtol=1e-12)
    a = gputorch.zeros(2, 4, dtype=gputorch.float64, device=device)
    a.addbmm_(gputorch.tensor(np.stack([x, x]), device=device), gputorch.tensor(np.stack([y, y]), device=device))
    assert_close(a, 2 * (x @ y), rtol=1e-12)


def test_add_products_integers(device):
    i = gputorch.ones(2, 2, dtype=gputorch.int64, device=device)
    out = gputorch.addmm(i, gputorch.ones(2, 3, dtype=gputorch.int64, device=device),
                         gputorch.ones(3, 2, dtype=gputorch.int64, device=device), beta=2, alpha=3)
    assert out.dtype is gputorch.int64 and out.tolist() == [[11, 11], [11, 11]]
    with pytest.raises(RuntimeError, match="argument beta must not be a floating point number"):
        gputorch.addr(i, gputorch.ones(2, dtype=gputorch.int64, device=device),
                      gputorch.ones(2, dtype=gputorch.int64, device=device), beta=0.5)


@pytest.mark.parametrize("call, fragment", [
    (lambda d: gputorch.addmm(gputorch.ones(3, device=d), gputorch.ones(2, 3, device=d), gputorch.ones(3, 4, device=d)),
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  "
     "Target sizes: [2, 4].  Tensor sizes: [3]"),
    (lambda d: gputorch.addmm(gputorch.ones(4, dtype=gputorch.float64, device=d), gputorch.ones(2, 3, device=d),
                              gputorch.ones(3, 4, device=d)),
     "self and mat2 must have the same dtype, but got Double and Float"),
    (lambda d: gputorch.addmm(gputorch.ones(4, device=d), gputorch.ones(3, device=d), gputorch.ones(3, 4, device=d)),
     "mat1 must be a matrix, got 1-D tensor"),
    (lambda d: gputorch.addmm(gputorch.ones(4, device=d), gputorch.ones(2, 3, device=d), gputorch.ones(2, 4, device=d)),
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x4)"),
    (lambda d: gputorch.addmv(gputorch.ones(3, device=d), gputorch.ones(2, 3, device=d), gputorch.ones(3, device=d)),
     "size mismatch, got input (3), mat (2x3), vec (3)"),
    (lambda d: gputorch.addmv(gputorch.ones(2, 2, device=d), gputorch.ones(2, 3, device=d), gputorch.ones(3, device=d)),
     "vector + matrix @ vector expected, got 2, 2, 1"),
    (lambda d: gputorch.baddbmm(gputorch.ones(4, dtype=gputorch.float64, device=d), gputorch.ones(2, 2, 3, device=d),
                                gputorch.ones(2, 3, 4, device=d)),
     "Input dtypes must be the same, got: input double, batch1: float, batch2: float"),
    (lambda d: gputorch.baddbmm(gputorch.ones(3, device=d), gputorch.ones(2, 2, 3, device=d),
                                gputorch.ones(2, 3, 4, device=d)),
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 2"),
    (lambda d: gputorch.addbmm(gputorch.ones(2, 4, device=d), gputorch.ones(5, 2, 3, device=d),
                               gputorch.ones(4, 3, 4, device=d)),
     "batch1 and batch2 must have same number of batches, got 5 and 4"),
    (lambda d: gputorch.addbmm(gputorch.ones(2, 4, device=d), gputorch.ones(5, 2, 3, device=d),
                               gputorch.ones(5, 4, 4, device=d)),
     "Incompatible matrix sizes for bmm (2x3 and 4x4)"),
    (lambda d: gputorch.addr(gputorch.ones(2, 4, device=d), gputorch.ones(2, device=d), gputorch.ones(4, 1, device=d)),
     "addr: Expected 1-D argument vec2, but got 2-D"),
])
def test_add_product_errors(call, fragment, device):
    with pytest.raises(RuntimeError) as info:
        call(device)
    assert fragment in str(info.value)


# ---------------------------------------------------------------- einsum and tensordot
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("iii->i", [(2, 2, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),          # broadcast of a size-1 subscript
    ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 3), (4, 3, 2)]),
    ("...ij,jk", [(2, 2, 3), (3, 2)]),
    ("i...->...", [(2, 3, 2)]),
    ("...i->i", [(2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("i,ij,jk->", [(2,), (2, 3), (3, 2)]),
    (",i->i", [(), (3,)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]),
    ("iJ,Jk->ik", [(2, 3), (3, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (2, 3, 3), (2, 3)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES)
def test_einsum_parity(equation, shapes, device):
    torch = pytest.importorskip("torch")
    parity(lambda *a: gputorch.einsum(equation, *a), lambda *a: torch.einsum(equation, *a), shapes, device)


@pytest.mark.parametrize("equation, shapes", [c for c in EINSUM_CASES if c[0] in {
    "ij,jk->ik", "ii->i", "ii->", "iij->ji", "iii->i", "ij,ij->ij", "...ij,...jk->...ik", "ij,jk,kl->il",
    "ii,i->i", ",i->i", "bn,anm,bm->ba"}])
def test_einsum_gradcheck(equation, shapes, device):
    inputs = [rand(*s, device=device, seed=i) for i, s in enumerate(shapes)]
    check_grads(lambda *a: gputorch.einsum(equation, *a), *inputs)


def test_einsum_forms_and_numpy_reference(device):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    a, b = gputorch.tensor(x, device=device), gputorch.tensor(y, device=device)
    expected = np.einsum("ij,jk->ik", x, y)
    assert_close(gputorch.einsum("ij,jk->ik", [a, b]), expected, rtol=1e-12)
    assert_close(gputorch.einsum(a, [0, 1], b, [1, 2], [0, 2]), expected, rtol=1e-12)
    assert_close(gputorch.einsum(a, [0, 1], b, [1, 2]), expected, rtol=1e-12)
    assert_close(gputorch.einsum(a, [Ellipsis, 0], [0]), x.sum(0), rtol=1e-12)
    z = rng.standard_normal((3, 3, 3))
    assert_close(gputorch.einsum("iij->j", gputorch.tensor(z, device=device)), np.einsum("iij->j", z), rtol=1e-12)
    f = gputorch.einsum("ij,jk->ik", a.float(), b.float())
    assert f.dtype is gputorch.float32
    assert_close(f, expected, rtol=1e-5, atol=1e-5, check_dtype=False)
    e = gputorch.einsum("ij,jk->ik", gputorch.ones(2, 0, device=device), gputorch.ones(0, 4, device=device))
    assert e.shape == (2, 4) and e.sum().item() == 0


def test_einsum_result_is_not_an_alias(device):
    a = gputorch.ones(3, 3, device=device)
    out = gputorch.einsum("ij->ji", a)
    out.add_(1)
    assert a.sum().item() == 9


def test_einsum_integer_dtypes(device):
    a = gputorch.ones(2, 3, dtype=gputorch.int32, device=device)
    assert gputorch.einsum("ij->j", a).dtype is gputorch.int64
    assert gputorch.einsum("ij->ji", a).dtype is gputorch.int32
    assert gputorch.einsum("ij,jk->ik", a, a.reshape(3, 2)).tolist() == [[3, 3], [3, 3]]


@pytest.mark.parametrize("args, exc, fragment", [
    (("ij,jk->ik", (2, 3), (4, 4)), RuntimeError,
     "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    (("ij,jk->ik", (2, 3)), RuntimeError, "fewer operands were provided than specified in the equation"),
    (("ijk", (2, 3, 4), (2, 3, 4)), RuntimeError, "more operands were provided than specified in the equation"),
    (("ijk,jk->ik", (2, 3), (3, 4)), RuntimeError,
     "the number of subscripts in the equation (3) does not match the number of dimensions (2) for operand 0"),
    (("ijkl...", (2, 3, 4)), RuntimeError,
     "the number of subscripts in the equation (4) is more than the number of dimensions (3) for operand 0"),
    (("ij->ik", (2, 3)), RuntimeError, "output subscript k does not appear in the equation for any input operand"),
    (("ij->ii", (2, 3)), RuntimeError, "output subscript i appears more than once in the output"),
    (("i1,1k->ik", (2, 3), (3, 4)), RuntimeError, "invalid subscript given at index 1 in the equation string"),
    (("ii->i", (2, 3)), RuntimeError, "subscript i is repeated for operand 0 but the sizes don't match, 2 != 3"),
    (("i..j", (2, 3)), RuntimeError, "found '.' for operand 0 that is not part of any ellipsis"),
    (("ijk->i->j", (2, 3, 4)), RuntimeError, "invalid subscript given at index 6"),
    (("ij->",), ValueError, "must specify the equation string and at least one operand"),
])
def test_einsum_errors(args, exc, fragment, device):
    eq, shapes = args[0], args[1:]
    with pytest.raises(exc) as info:
        gputorch.einsum(eq, *[gputorch.ones(*s, device=device) for s in shapes])
    assert fragment in str(info.value)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        gputorch.einsum("ij,jk", gputorch.ones(2, 3, device=device),
                        gputorch.ones(3, 2, dtype=gputorch.float64, device=device))


@pytest.mark.parametrize("dims, shapes", [
    (2, [(2, 3, 4), (3, 4, 5)]),
    (0, [(2, 3), (2,)]),
    (([1, 2], [1, 0]), [(2, 3, 4), (4, 3, 5)]),
    (([-1], [0]), [(2, 3, 4), (4, 3, 5)]),
    ([[0], [1]], [(3, 2), (2, 3)]),
])
def test_tensordot_parity_and_grads(dims, shapes, device):
    torch = pytest.importorskip("torch")
    parity(lambda a, b: gputorch.tensordot(a, b, dims=dims), lambda a, b: torch.tensordot(a, b, dims=dims),
           shapes, device)
    inputs = [rand(*s, device=device, seed=i) for i, s in enumerate(shapes)]
    check_grads(lambda a, b: gputorch.tensordot(a, b, dims=dims), *inputs)


@pytest.mark.parametrize("dims, fragment", [
    (-1, "tensordot expects dims >= 0, but got dims=-1"),
    (4, "tensordot expects dims < ndim_a or ndim_b, but got dims=4"),
    (3, "contracted dimensions need to match, but first has size 2 in dim -3 and second has size 3 in dim 0"),
    (([1, 2], [0]), "both dimension lists should have same length"),
    (([1], [1]), "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 1"),
    (1.5, "tensordot expects dims to be int or tuple[list[int], list[int]]"),
])
def test_tensordot_errors(dims, fragment, device):
    a, b = gputorch.ones(2, 3, 4, device=device), gputorch.ones(3, 4, 5, device=device)
    with pytest.raises(RuntimeError) as info:
        gputorch.tensordot(a, b, dims=dims)
    assert fragment in str(info.value)
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        gputorch.tensordot(a, b.double(), dims=2)


# ---------------------------------------------------------------- trace, diag, diag_embed, kron, cross
@pytest.mark.parametrize("name, fn, shapes, node", [
    ("trace", lambda m, a: m.trace(a), [(3, 3)], "TraceBackward0"),
    ("trace_rect", lambda m, a: m.trace(a), [(3, 4)], "TraceBackward0"),
    ("diag_vec", lambda m, a: m.diag(a), [(3,)], "DiagEmbedBackward0"),
    ("diag_vec_off", lambda m, a: m.diag(a, -2), [(3,)], "DiagEmbedBackward0"),
    ("diag_mat", lambda m, a: m.diag(a), [(3, 4)], "DiagonalBackward0_copy"),
    ("diag_mat_off", lambda m, a: m.diag(a, 1), [(3, 4)], "DiagonalBackward0_copy"),
    ("diag_mat_neg", lambda m, a: m.diag(a, -1), [(3, 4)], "DiagonalBackward0_copy"),
    ("diag_embed", lambda m, a: m.diag_embed(a), [(2, 3)], "DiagEmbedBackward0"),
    ("diag_embed_dims", lambda m, a: m.diag_embed(a, offset=1, dim1=0, dim2=2), [(2, 3)], "DiagEmbedBackward0"),
    ("diag_embed_rev", lambda m, a: m.diag_embed(a, offset=-1, dim1=-1, dim2=0), [(2, 3)], "DiagEmbedBackward0"),
    ("kron", lambda m, a, b: m.kron(a, b), [(2, 3), (2, 2)], None),
    ("kron_1d_2d", lambda m, a, b: m.kron(a, b), [(2,), (2, 2)], None),
    ("cross", lambda m, a, b: m.cross(a, b, dim=1), [(2, 3), (2, 3)], "LinalgCrossBackward0"),
    ("cross_bcast", lambda m, a, b: m.linalg.cross(a, b), [(1, 3), (4, 3)], "LinalgCrossBackward0"),
])
def test_structure_ops(name, fn, shapes, node, device):
    torch = pytest.importorskip("torch")
    parity(lambda *a: fn(gputorch, *a), lambda *a: fn(torch, *a), shapes, device, grad_fn=node)
    inputs = [rand(*s, device=device, seed=i) for i, s in enumerate(shapes)]
    check_grads(lambda *a: fn(gputorch, *a), *inputs)


def test_structure_values_and_dtypes(device):
    m = gputorch.tensor([[1, 2], [3, 4]], dtype=gputorch.int32, device=device)
    assert m.trace().dtype is gputorch.int64 and m.trace().item() == 5
    assert gputorch.diag(gputorch.tensor([1, 2], device=device), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert gputorch.diag(m).tolist() == [1, 4]
    assert gputorch.diag(gputorch.ones(3, 4, device=device), 5).shape == (0,)
    assert gputorch.trace(gputorch.ones(0, 0, device=device)).item() == 0
    t = gputorch.ones(3, 3, device=device)
    d = gputorch.diag(t)
    d.add_(1)
    assert t.sum().item() == 9                     # diag of a matrix is a copy
    assert gputorch.kron(gputorch.tensor([1, 2], device=device),
                         gputorch.tensor([1, 10], device=device)).tolist() == [1, 10, 2, 20]
    x = gputorch.tensor([[1.0, 0.0, 0.0]], device=device)
    y = gputorch.tensor([[0.0, 1.0, 0.0]], device=device)
    assert gputorch.linalg.cross(x, y).tolist() == [[0.0, 0.0, 1.0]]
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        assert gputorch.cross(x.reshape(3, 1), y.reshape(3, 1)).tolist() == [[0.0], [0.0], [1.0]]


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda d: gputorch.trace(gputorch.ones(3, device=d)), RuntimeError, "trace: expected a matrix, but got tensor with dim 1"),
    (lambda d: gputorch.trace(gputorch.ones(2, 2, dtype=gputorch.bool, device=d)), NotImplementedError,
     "\"trace\" not implemented for 'Bool'"),
    (lambda d: gputorch.diag(gputorch.ones(3, 4, 2, device=d)), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"),
    (lambda d: gputorch.diag_embed(gputorch.ones(3, device=d), dim1=0, dim2=0), RuntimeError,
     "diagonal dimensions cannot be identical 0, 0"),
    (lambda d: gputorch.diag_embed(gputorch.ones((), device=d)), IndexError, "Dimension out of range"),
    (lambda d: gputorch.linalg.cross(gputorch.ones(2, 4, device=d), gputorch.ones(2, 4, device=d)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4"),
    (lambda d: gputorch.linalg.cross(gputorch.ones(3, device=d), gputorch.ones(4, 3, device=d)), RuntimeError,
     "linalg.cross: inputs must have the same number of dimensions."),
])
def test_structure_errors(call, exc, fragment, device):
    with pytest.raises(exc) as info:
        call(device)
    assert fragment in str(info.value)


# ---------------------------------------------------------------- gputorch.linalg
def well_conditioned(*shape, device="cpu", seed=0):
    rng = np.random.default_rng(seed)
    data = rng.uniform(-0.5, 0.5, shape) + 2 * np.eye(shape[-1])
    return gputorch.tensor(data, device=device, requires_grad=True)


@pytest.mark.parametrize("name, shapes, node", [
    ("inv", [(3, 3)], "LinalgInvExBackward0"),
    ("inv", [(2, 3, 3)], "LinalgInvExBackward0"),
    ("det", [(3, 3)], "LinalgDetBackward0"),
    ("det", [(2, 2, 2)], "LinalgDetBackward0"),
    ("solve", [(3, 3), (3,)], "LinalgSolveExBackward0"),
    ("solve", [(3, 3), (3, 2)], "LinalgSolveExBackward0"),
    ("solve", [(2, 3, 3), (2, 3)], "LinalgSolveExBackward0"),
    ("solve", [(2, 3, 3), (3,)], "LinalgSolveExBackward0"),
    ("solve", [(3, 3), (4, 3, 2)], "LinalgSolveExBackward0"),
])
def test_linalg_solvers(name, shapes, node, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    arrays = [rng.uniform(-0.5, 0.5, shapes[0]) + 2 * np.eye(shapes[0][-1])] + \
        [rng.standard_normal(s) for s in shapes[1:]]
    g_in = [gputorch.tensor(a, device=device, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = getattr(gputorch.linalg, name)(*g_in), getattr(torch.linalg, name)(*t_in)
    assert_close(out, expected, rtol=1e-10, atol=1e-12)
    assert out.grad_fn.name() == node
    w = rng.standard_normal(tuple(expected.shape))
    (out * gputorch.tensor(w, device=device)).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    for g, t in zip(g_in, t_in):
        assert_close(g.grad, t.grad, rtol=1e-9, atol=1e-10)
    check_grads(getattr(gputorch.linalg, name), *g_in)


def test_linalg_solve_left_false_and_aliases(device):
    a = well_conditioned(3, 3, device=device)
    b = rand(2, 3, device=device, seed=1)
    x = gputorch.linalg.solve(a, b, left=False)
    assert_close(x @ a, b, rtol=1e-10, atol=1e-12)
    assert_close(gputorch.inverse(a), gputorch.linalg.inv(a), rtol=1e-12)
    assert_close(a.inverse(), gputorch.linalg.inv(a), rtol=1e-12)
    assert_close(a.det(), gputorch.linalg.det(a), rtol=1e-12)
    assert_close(gputorch.det(a), gputorch.linalg.det(a), rtol=1e-12)
    assert gputorch.linalg.det(gputorch.ones(0, 0, device=device)).item() == 1.0


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda d: gputorch.linalg.inv(gputorch.zeros(3, 3, device=d)), gputorch.linalg.LinAlgError, "singular"),
    (lambda d: gputorch.linalg.inv(gputorch.zeros(2, 3, device=d)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda d: gputorch.linalg.det(gputorch.zeros(2, 3, device=d)), RuntimeError,
     "linalg.det: A must be batches of square matrices"),
    (lambda d: gputorch.linalg.inv(gputorch.ones(3, 3, dtype=gputorch.int64, device=d)), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda d: gputorch.linalg.solve(gputorch.ones(3, 3, device=d), gputorch.ones(4, device=d)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)"),
    (lambda d: gputorch.linalg.solve(gputorch.ones(3, 3, device=d), gputorch.ones(2, 3, device=d)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x3)"),
])
def test_linalg_solver_errors(call, exc, fragment, device):
    if "singular" in fragment and device == "cuda":
        pytest.skip("CuPy reports singular matrices only in debug mode")
    with pytest.raises(exc) as info:
        call(device)
    assert fragment in str(info.value)
    assert issubclass(gputorch.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("ord_", ["fro", 1, -1, float("inf"), -float("inf")])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_matrix_norm(ord_, dim, keepdim, device):
    torch = pytest.importorskip("torch")
    parity(lambda a: gputorch.linalg.matrix_norm(a, ord_, dim, keepdim),
           lambda a: torch.linalg.matrix_norm(a, ord_, dim, keepdim), [(3, 2, 4)], device)
    check_grads(lambda a: gputorch.linalg.matrix_norm(a, ord_, dim, keepdim), rand(2, 2, 3, device=device))


@pytest.mark.parametrize("ord_", ["nuc", 2, -2])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((2, 0), True)])
def test_matrix_norm_singular_values(ord_, dim, keepdim, device):
    torch = pytest.importorskip("torch")
    parity(lambda a: gputorch.linalg.matrix_norm(a, ord_, dim, keepdim),
           lambda a: torch.linalg.matrix_norm(a, ord_, dim, keepdim), [(3, 2, 4)], device)
    parity(lambda a: gputorch.norm(a, ord_), lambda a: torch.norm(a, ord_), [(3, 2)], device)
    assert gradcheck(lambda a: gputorch.linalg.matrix_norm(a, ord_, dim, keepdim), (rand(2, 2, 3, device=device),))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Low precision dtypes not supported. Got Half"):
        gputorch.linalg.matrix_norm(gputorch.ones(2, 2, dtype=gputorch.float16, device=device), ord_)


def test_norm_dispatch(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    g, t = gputorch.tensor(x, device=device), torch.tensor(x)
    assert_close(gputorch.linalg.norm(g), torch.linalg.norm(t), rtol=1e-12)
    assert_close(gputorch.linalg.norm(g, dim=(0, 1)), torch.linalg.norm(t, dim=(0, 1)), rtol=1e-12)
    assert_close(gputorch.linalg.norm(g, 1, dim=2), torch.linalg.norm(t, 1, dim=2), rtol=1e-12)
    assert_close(gputorch.linalg.norm(g[0], "fro"), torch.linalg.norm(t[0], "fro"), rtol=1e-12)
    assert_close(gputorch.linalg.norm(g[0], float("inf")), torch.linalg.norm(t[0], float("inf")), rtol=1e-12)
    assert_close(gputorch.linalg.norm(g[0, 0], 3), torch.linalg.norm(t[0, 0], 3), rtol=1e-12)
    assert_close(gputorch.linalg.matrix_norm(g.float(), dtype=gputorch.float64),
                 torch.linalg.matrix_norm(t.float(), dtype=torch.float64), rtol=1e-6)
    assert gputorch.linalg.vector_norm is not None
    with pytest.raises(RuntimeError, match="If dim is not specified but ord is, the input must be 1D or 2D. Got 3D"):
        gputorch.linalg.norm(g, 1)
    with pytest.raises(RuntimeError, match="The input tensor A must have at least 2 dimensions"):
        gputorch.linalg.matrix_norm(g[0, 0])
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        gputorch.linalg.matrix_norm(g, 3)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        gputorch.linalg.matrix_norm(gputorch.ones(2, 2, dtype=gputorch.int64, device=device))


def test_linalg_extras(device):
    torch = pytest.importorskip("torch")
    parity(lambda x, y: gputorch.linalg.vecdot(x, y), lambda x, y: torch.linalg.vecdot(x, y),
           [(2, 3), (2, 3)], device)
    parity(lambda a, b, c: gputorch.linalg.multi_dot([a, b, c]), lambda a, b, c: torch.linalg.multi_dot([a, b, c]),
           [(3,), (3, 4), (4, 2)], device)
    parity(gputorch.linalg.matmul, torch.linalg.matmul, [(2, 3), (3, 2)], device)
