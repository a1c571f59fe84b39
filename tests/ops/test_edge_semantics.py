"""Edges where gputorch once disagreed with PyTorch: 0-d tensors through ops that write into
their own results, broadcasting and division errors, refused dtypes, scalar conversion,
formatting, writes into expanded tensors. Expected values are PyTorch 2.13's."""
import pickle

import numpy as np
import pytest

import gputorch
import gputorch.nn.functional as F
from tests._helpers import assert_close

ZERO_DIM_OPS = {
    "sigmoid": (gputorch.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (gputorch.tanh, np.tanh),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "logsigmoid": (F.logsigmoid, lambda x: -np.log1p(np.exp(-x))),
    "acos": (gputorch.acos, np.arccos),
    "rsqrt": (gputorch.rsqrt, lambda x: 1 / np.sqrt(x)),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
    "bce_with_logits": (lambda t: F.binary_cross_entropy_with_logits(t, gputorch.tensor(1.0, device=t.device)),
                        lambda x: np.log1p(np.exp(-x))),
}


@pytest.mark.parametrize("name", sorted(ZERO_DIM_OPS))
def test_zero_dim_tensor_forward_and_backward(name, device):
    fn, ref = ZERO_DIM_OPS[name]
    x = gputorch.tensor(0.5, dtype=gputorch.float64, device=device, requires_grad=True)
    y = fn(x)
    assert y.shape == () and y.dtype == gputorch.float64
    assert_close(y, np.array(ref(0.5)), rtol=1e-12, atol=1e-12)
    y.backward()
    h = 1e-6
    assert_close(x.grad, np.array((ref(0.5 + h) - ref(0.5 - h)) / (2 * h)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("method,expected", [("rsqrt_", 2.0), ("sigmoid_", 1 / (1 + np.exp(-0.25))),
                                             ("exp_", np.exp(0.25)), ("tanh_", np.tanh(0.25))])
def test_zero_dim_in_place(method, expected, device):
    x = gputorch.tensor(0.25, device=device)
    assert getattr(x, method)() is x
    assert_close(x, np.array(expected, np.float32), rtol=1e-6)


def test_zero_dim_round_decimals_and_transpose(device):
    x = gputorch.tensor(1.2345, device=device)
    assert x.clone().round_(decimals=2).item() == pytest.approx(1.23)
    assert gputorch.round(x, decimals=1).item() == pytest.approx(1.2)
    y = gputorch.tensor(3.0, device=device, requires_grad=True)
    t = y.transpose(0, -1)
    assert t.shape == () and t.item() == 3.0
    t.backward()
    assert y.grad.item() == 1.0


def test_zero_dim_numpy_is_a_plain_array():
    arr = gputorch.tensor(2.5).numpy()
    assert type(arr) is np.ndarray and arr.shape == () and float(arr) == 2.5
    shared = np.array(1.0)
    t = gputorch.from_numpy(shared)
    shared[...] = 7.0
    assert t.item() == 7.0  # from_numpy of a 0-d array still shares its memory


@pytest.mark.parametrize("make", [
    lambda d: gputorch.ones(2, 3, device=d) + gputorch.ones(4, device=d),
    lambda d: gputorch.ones(2, 3, device=d).mul_(gputorch.ones(2, 4, device=d)),
    lambda d: gputorch.where(gputorch.ones(2, 3, device=d) > 0, gputorch.ones(4, device=d), 1.0),
    lambda d: gputorch.ones(2, 3, device=d) ** gputorch.ones(2, 4, device=d),
    lambda d: gputorch.lerp(gputorch.ones(3, device=d), gputorch.ones(2, 3, device=d), gputorch.ones(4, device=d)),
], ids=["add", "mul_", "where", "pow", "lerp"])
def test_broadcast_failure_is_pytorchs_runtime_error(make, device):
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) "
                                           r"at non-singleton dimension 1"):
        make(device)


def test_broadcast_failure_names_the_accumulated_shape(device):
    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
                                           r"dimension 2"):
        gputorch.addcmul(gputorch.ones(2, 3, device=device), gputorch.ones(3, device=device),
                         gputorch.ones(5, 1, 4, device=device))


@pytest.mark.parametrize("op", [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: gputorch.fmod(a, b),
    lambda a, b: gputorch.div(a, b, rounding_mode="trunc"), lambda a, b: a.clone().floor_divide_(b),
    lambda a, b: a // 0,
])
def test_integer_division_by_zero_is_runtime_error(op, device):
    a = gputorch.tensor([3, 4], device=device)
    b = gputorch.tensor([0, 1], device=device)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        op(a, b)


@pytest.mark.parametrize("op,kernel", [(lambda a, b: a // b, "div_floor_cpu"), (lambda a, b: a % b, "remainder_cpu"),
                                       (gputorch.fmod, "fmod_cpu")])
def test_bool_division_ops_are_refused(op, kernel, device):
    b = gputorch.tensor([True, False], device=device)
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Bool\''):
        op(b, b)
    assert (b // 2).tolist() == [0, 0]  # Bool // int computes in int64


def test_scalar_conversion_errors():
    for convert in (int, float):
        with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
            convert(gputorch.tensor([]))
        with pytest.raises(ValueError, match="only one element tensors"):
            convert(gputorch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(gputorch.tensor([]))
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        bool(gputorch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        gputorch.tensor([1, 2]).item()


def test_in_place_on_expanded_tensor_is_runtime_error(device):
    e = gputorch.ones(1, 3, device=device).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.add_(1)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.mul_(gputorch.full((2, 3), 2.0, device=device))


def test_format_of_zero_dim_tensor_is_the_number():
    assert f"{gputorch.tensor(10.0)}" == "10.0"
    assert f"{gputorch.tensor(10.0):.2f}" == "10.00"
    assert f"{gputorch.tensor(3)}" == "3" and f"{gputorch.tensor(True)}" == "True"
    assert f"{gputorch.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    with pytest.raises(TypeError):
        f"{gputorch.tensor([1.0, 2.0]):.2f}"


def test_dtype_must_be_a_dtype_not_a_string():
    with pytest.raises(TypeError, match="must be gputorch.dtype, not str"):
        gputorch.zeros(2, dtype="float32")


def test_float16_reductions_accumulate_in_float32(device):
    h = gputorch.full((1000,), 60000.0, dtype=gputorch.float16, device=device)
    std, mean = gputorch.std_mean(h)
    assert std.dtype == gputorch.float16 and std.item() == 0.0 and mean.item() == 60000.0
    assert gputorch.var(h).item() == 0.0
    assert gputorch.sum(h).item() == float("inf")  # the float16 result itself overflows, as in PyTorch


def test_load_of_random_bytes_names_the_file(tmp_path):
    rng = np.random.default_rng(0)
    for i in range(60):
        path = tmp_path / f"junk{i}.pt"
        head = (b"", b"\x80\x02", b"PK\x03\x04")[i % 3]
        path.write_bytes(head + rng.bytes(200))
        with pytest.raises((pickle.UnpicklingError, RuntimeError)) as info:
            gputorch.load(path)
        assert str(path) in str(info.value)
