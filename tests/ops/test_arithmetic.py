"""Arithmetic ops: values, promotion, broadcasting, gradients, in-place forms and errors."""
import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close


def rand(*shape, device="cpu", lo=-2.0, hi=2.0, requires_grad=True, seed=0):
    data = np.random.default_rng(seed).uniform(lo, hi, shape)
    return gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


BINARY = {
    "add": lambda a, b: gputorch.add(a, b, alpha=2.5),
    "sub": lambda a, b: gputorch.sub(a, b, alpha=-1.5),
    "mul": gputorch.mul,
    "div": gputorch.div,
    "pow": lambda a, b: gputorch.pow(a.abs() + 0.5, b),
    "remainder": lambda a, b: gputorch.remainder(a, b.abs() + 3.0),
    "fmod": lambda a, b: gputorch.fmod(a, b.abs() + 3.0),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_gradcheck_with_broadcasting(name, device):
    a = rand(2, 3, device=device)
    b = rand(3, device=device, lo=0.5, hi=1.5, seed=1)
    fn = BINARY[name]
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


@pytest.mark.parametrize("fn", [lambda a: -a, lambda a: a.abs(), lambda a: a.reciprocal(),
                                lambda a: a ** 3, lambda a: 2.0 ** a, lambda a: 3 - a,
                                lambda a: 1.5 / a, lambda a: a.square()])
def test_unary_arith_gradcheck(fn, device):
    a = rand(4, device=device, lo=0.5, hi=2.0)
    assert gradcheck(fn, (a,))
    assert gradgradcheck(fn, (a,))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "remainder", "fmod", "pow", "floor_divide"])
def test_parity_with_torch(name, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 3, (4, 1, 3))
    y = rng.uniform(0.5, 3, (5, 1))
    gx = gputorch.tensor(x, device=device, requires_grad=True)
    gy = gputorch.tensor(y, device=device, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.tensor(y, requires_grad=True)
    out = getattr(gputorch, name)(gx, gy)
    expected = getattr(torch, name)(tx, ty)
    assert_close(out, expected, rtol=1e-12, atol=1e-12)
    if name != "floor_divide":
        out.sum().backward()
        expected.sum().backward()
        assert_close(gx.grad, tx.grad, rtol=1e-10, atol=1e-12)
        assert_close(gy.grad, ty.grad, rtol=1e-10, atol=1e-12)


def test_integer_division_semantics(device):
    torch = pytest.importorskip("torch")
    a = [7, -7, 7, -7, 0]
    b = [2, 2, -2, -2, 3]
    for mode in (None, "trunc", "floor"):
        got = gputorch.div(gputorch.tensor(a, device=device), gputorch.tensor(b, device=device), rounding_mode=mode)
        exp = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
        assert_close(got, exp)
    assert_close(gputorch.tensor(a, device=device) % gputorch.tensor(b, device=device),
                 torch.tensor(a) % torch.tensor(b))
    assert_close(gputorch.tensor(a, device=device) // gputorch.tensor(b, device=device),
                 torch.tensor(a) // torch.tensor(b))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):   # PyTorch's type and message
        gputorch.tensor([1], device=device) // 0


def test_scalar_operands_and_reflected(device):
    x = gputorch.tensor([1.0, 2.0, 4.0], device=device)
    assert_close(2 - x, np.array([1.0, 0.0, -2.0], dtype=np.float32))
    assert_close(8 / x, np.array([8.0, 4.0, 2.0], dtype=np.float32))
    assert_close(2 ** x, np.array([2.0, 4.0, 16.0], dtype=np.float32))
    assert_close(7 % x, np.array([0.0, 1.0, 3.0], dtype=np.float32))
    assert_close(x * np.float64(2.0), np.array([2.0, 4.0, 8.0], dtype=np.float32))
    assert (gputorch.tensor([1, 2], device=device) / 2).dtype is gputorch.float32


def test_inplace_ops_bump_version_and_check_dtype(device):
    x = gputorch.zeros(3, device=device)
    v = x._version
    x.add_(1).mul_(3).sub_(1, alpha=2).div_(2)
    assert x._version == v + 4
    assert_close(x, np.full(3, 0.5, dtype=np.float32))
    x += 1
    x *= 2
    assert_close(x, np.full(3, 3.0, dtype=np.float32))
    i = gputorch.zeros(3, dtype=gputorch.int64, device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        gputorch.zeros(3, device=device).add_(gputorch.zeros(2, 3, device=device))


def test_inplace_on_graph_and_saved_self(device):
    w = rand(3, device=device)
    x = rand(3, device=device, seed=2)
    y = x * 1.0
    y.mul_(w)            # y is saved by MulBackward0 for w's gradient: must use the old value
    y.sum().backward()
    assert_close(w.grad, x.detach())
    assert_close(x.grad, w.detach())
    assert y.grad_fn.name() == "MulBackward0"


def test_inplace_on_leaf_requiring_grad_raises(device):
    w = rand(3, device=device)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    with gputorch.no_grad():
        w.add_(1)


def test_modifying_saved_tensor_raises(device):
    a = rand(3, device=device)
    b = a * 2
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_bad_operands(device):
    x = gputorch.ones(3, device=device)
    with pytest.raises(TypeError, match="must be Tensor or Number"):
        gputorch.add(x, "a")
    with pytest.raises(RuntimeError, match="bool"):
        gputorch.ones(2, dtype=gputorch.bool, device=device) - gputorch.ones(2, dtype=gputorch.bool, device=device)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        gputorch.tensor([2], device=device) ** -1
    with pytest.raises((RuntimeError, ValueError)):
        gputorch.ones(2, device=device) + gputorch.ones(3, device=device)


def test_out_argument(device):
    out = gputorch.empty(3, device=device)
    r = gputorch.add(gputorch.ones(3, device=device), 2, out=out)
    assert r is out
    assert_close(out, np.full(3, 3.0, dtype=np.float32))


def test_complex_power_by_half_two_and_minus_one_on_every_device(device):
    # pow(z, 0.5) is sqrt(z), z**2 is z*z and z**-1 is 1/z on every device, as PyTorch computes them: CuPy's
    # complex power, exp(y log z), lost the small part of a huge operand (real part 6e133 instead of
    # 2e-152 on the simulated GPU; differential seed 1).
    z = gputorch.tensor([complex(-1e300, -0.04), 4 + 0j, -4 + 0j], dtype=gputorch.complex128, device=device)
    r = z.pow(0.5).cpu().numpy()
    assert abs(r[0].real - 2e-152) < 1e-160 and r[0].imag == -1e150
    np.testing.assert_array_equal(r[1:], [2 + 0j, 2j])
    np.testing.assert_array_equal((z ** -1).cpu().numpy()[1:], [0.25, -0.25])
    np.testing.assert_array_equal((z[1:] ** 2).cpu().numpy(), [16, 16])
    # real dtypes: sqrt's -0.0 and NaN at -inf, as in PyTorch
    x = gputorch.tensor([-0.0, -float("inf"), 4.0], device=device) ** 0.5
    assert np.signbit(x.cpu().numpy()[0]) and x.cpu().numpy()[2] == 2.0
    assert np.isnan(x.cpu().numpy()[1])


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("case", ["mul", "mul_broadcast", "mul_scalar", "mul_mixed", "sub", "sub_broadcast", "rsub",
                                  "div", "div_broadcast", "rdiv", "exp", "tanh", "sigmoid"])
def test_array_gradients_of_elementwise_ops_equal_tensor_op_gradients(device, dtype, case):
    """Plain backward takes mul's, sub's, div's, exp's, tanh's and sigmoid's gradients on the arrays
    (``array_rule``) where nothing is broadcast or cast; with ``create_graph=True`` it takes the
    Tensor-op rules. Same values (bit for bit), dtypes and shapes."""
    rng = np.random.default_rng(0)
    dt = getattr(gputorch, dtype)
    a = gputorch.tensor(rng.standard_normal((3, 4)), dtype=dt, device=device, requires_grad=True)
    b_shape = (4,) if case.endswith("broadcast") else (3, 4)
    b_dt = gputorch.float64 if case == "mul_mixed" else dt
    b = gputorch.tensor(rng.standard_normal(b_shape), dtype=b_dt, device=device, requires_grad=True)
    fn = {"mul": lambda: a * b, "mul_broadcast": lambda: a * b, "mul_scalar": lambda: a * 0.1,
          "mul_mixed": lambda: a * b, "sub": lambda: a - b, "sub_broadcast": lambda: a - b,
          "rsub": lambda: 1.5 - a, "div": lambda: a / b, "div_broadcast": lambda: a / b, "rdiv": lambda: 0.3 / a,
          "exp": lambda: a.exp(), "tanh": lambda: a.tanh(), "sigmoid": lambda: a.sigmoid()}[case]
    leaves = [a] if case in ("mul_scalar", "rsub", "rdiv", "exp", "tanh", "sigmoid") else [a, b]
    out = fn()
    g = gputorch.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype, device=device)
    plain = gputorch.autograd.grad(fn(), leaves, g)
    recorded = gputorch.autograd.grad(fn(), leaves, g, create_graph=True)
    for p_, r_, leaf in zip(plain, recorded, leaves):
        assert p_.dtype == r_.dtype == leaf.dtype and p_.shape == r_.shape == leaf.shape
        np.testing.assert_array_equal(p_.cpu().numpy(), r_.detach().cpu().numpy())


def test_float16_with_a_python_number_rounds_as_pytorch(device):
    """PyTorch multiplies and divides a float16 tensor by a Python number in float32 (the number is
    not rounded to float16 first: -0.0 * 1e30 is -0.0, x * 1e-5 keeps its digits), but adds and
    subtracts the number as a float16 (65000 - 70000 is -inf). Bit for bit, against values computed
    by hand in NumPy."""
    x = np.array([1000.0, -0.0, 3.0, 0.1, 65000.0, 7.0], np.float16)
    t = gputorch.tensor(x, device=device)
    f32 = x.astype(np.float32)

    def same(got, want):
        with np.errstate(over="ignore"):
            want = want.astype(np.float16)
        np.testing.assert_array_equal(got.cpu().numpy().view(np.uint16), want.view(np.uint16))

    for s in (1e-5, 1e30, 7e4, 3.3):
        same(t * s, f32 * np.float32(s))
        same(s * t, f32 * np.float32(s))
        same(t / s, f32 / np.float32(s))
    with np.errstate(over="ignore"):
        for s in (1e-5, 7e4, 3.3):
            same(t + s, (f32 + np.float32(np.float16(s))))
            same(t - s, (f32 - np.float32(np.float16(s))))


def test_number_divided_by_a_tensor_is_a_reciprocal_times_the_number(device):
    """``s / t`` is ``t.reciprocal() * s`` in PyTorch: the same bits, and that graph."""
    torch = pytest.importorskip("torch")
    x = np.array([3.0, 7.0, 11.0, 0.1, -0.0], np.float32)
    t = gputorch.tensor(x, device=device, requires_grad=True)
    y = 2.5 / t
    np.testing.assert_array_equal(y.detach().cpu().numpy().view(np.uint32),
                                  (2.5 / torch.tensor(x)).numpy().view(np.uint32))
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "ReciprocalBackward0"
    assert (2 / gputorch.tensor([4, 3], device=device)).dtype == gputorch.float32
    with pytest.raises(TypeError, match="unsupported operand"):
        "x" / t


def test_true_division_of_integers_by_a_negative_number_is_not_wrapped(device):
    """-1 / uint8 is -0.125, not 255 / 8: the number is not stored in the integer dtype first."""
    u = gputorch.tensor([8, 4], dtype=gputorch.uint8, device=device)
    np.testing.assert_array_equal((-1 / u).cpu().numpy(), [-0.125, -0.25])
    np.testing.assert_array_equal(gputorch.divide(-1, u).cpu().numpy(), [-0.125, -0.25])
    np.testing.assert_array_equal((u / -2).cpu().numpy(), [-4.0, -2.0])


def test_divisor_gradient_is_minus_grad_times_quotient_over_divisor(device):
    """PyTorch's order, -g * ((a / b) / b): no b * b to overflow (b = 1e20 in float32)."""
    a = gputorch.tensor([3.0, 1e20], device=device, requires_grad=True)
    b = gputorch.tensor([7.0, 1e20], device=device, requires_grad=True)
    (a / b).sum().backward()
    f32 = np.float32
    want = -((f32(3.0) / f32(7.0)) / f32(7.0))
    got = b.grad.cpu().numpy()
    assert got[0] == want and got[1] == np.float32(-1e-20)
