"""Creation ops: tensor/as_tensor/from_numpy, filled tensors, new_*, empty_strided, ranges, eye."""
import warnings

import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close, to_numpy


def _torch():
    return pytest.importorskip("torch")


# ---------------------------------------------------------------- tensor(): dtype inference
@pytest.mark.parametrize("data", [
    [1, 2], [1.0, 2], [True, False], [True, 1], [True, 2.5], [], [[]], [[1, 2], [3, 4]],
    ((1, 2), (3, 4)), 3, 2.5, True, [[1.5], [2]], [2**40, -3],
], ids=repr)
def test_tensor_infers_like_torch(data, device):
    torch = _torch()
    t = gputorch.tensor(data, device=device)
    expected = torch.tensor(data)
    assert t.device.type == device
    assert t.shape == tuple(expected.shape)
    assert_close(t, expected)


def test_tensor_infers_numpy_and_tensor_elements(device):
    torch = _torch()
    cases = [
        (np.float32(1.5), torch.float32), (np.int32(3), torch.int32), (np.float16(1), torch.float16),
        ([np.float32(1), np.float32(2)], torch.float32), ([np.int32(1)], torch.int32),
        ([np.float64(1)], torch.float64), ([np.float32(1), 2], torch.float32),
        ([np.int8(1), np.uint8(1)], torch.int16), (np.bool_(True), torch.bool),
    ]
    for data, expected in cases:
        assert gputorch.tensor(data, device=device).dtype.name == str(expected).split(".")[1], data
    assert gputorch.tensor([gputorch.tensor(1), gputorch.tensor(2.5)], device=device).dtype is gputorch.float32
    pair = [gputorch.tensor(1, dtype=gputorch.int32), gputorch.tensor(2, dtype=gputorch.int32)]
    assert gputorch.tensor(pair, device=device).dtype is gputorch.int32
    mixed = gputorch.tensor([gputorch.tensor(1.0, dtype=gputorch.float64), 2], device=device)
    assert mixed.dtype is gputorch.float64
    assert gputorch.tensor([[gputorch.tensor(1), 2]], device=device).tolist() == [[1, 2]]


def test_tensor_follows_default_dtype(device):
    gputorch.set_default_dtype(gputorch.float64)
    try:
        assert gputorch.tensor([1.5], device=device).dtype is gputorch.float64
        assert gputorch.tensor([1], device=device).dtype is gputorch.int64
        assert gputorch.tensor([], device=device).dtype is gputorch.float64
    finally:
        gputorch.set_default_dtype(gputorch.float32)


def test_tensor_numpy_keeps_dtype_and_copies(device):
    for np_dtype in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                     np.uint8, np.bool_):
        a = np.arange(6).reshape(2, 3).astype(np_dtype)
        t = gputorch.tensor(a, device=device)
        assert t.dtype.np == np.dtype(np_dtype)
        np.testing.assert_array_equal(to_numpy(t), a)
    a = np.zeros(3)
    t = gputorch.tensor(a, device=device)
    a[0] = 5
    assert to_numpy(t)[0] == 0


def test_tensor_from_non_contiguous_numpy_is_contiguous(device):
    a = np.arange(12.0).reshape(3, 4).T
    t = gputorch.tensor(a, device=device)
    assert t.is_contiguous() and t.stride() == (3, 1)
    np.testing.assert_array_equal(to_numpy(t), a)
    t2 = gputorch.tensor(a, dtype=gputorch.int32, device=device)
    assert t2.is_contiguous()
    np.testing.assert_array_equal(to_numpy(t2), a.astype(np.int32))


def test_tensor_with_dtype_converts_like_torch(device):
    torch = _torch()
    cases = [([1.7, -1.7], "int32"), ([-1, 255, -255], "uint8"), ([1.5, 0.0], "bool"), ([0.1], "float64"),
             (3.5, "int64"), ([True, False], "float16"), ([-128, 127], "int8"), ([2, 5], "bool"),
             ([1e300], "float32"), ([16777217.0], "int64"), (-1, "uint8")]
    for data, name in cases:
        t = gputorch.tensor(data, dtype=getattr(gputorch, name), device=device)
        assert_close(t, torch.tensor(data, dtype=getattr(torch, name)))
    # float64 from Python floats is exact (not rounded through float32 first)
    assert gputorch.tensor([0.1], dtype=gputorch.float64, device=device).tolist() == [0.1]
    assert gputorch.tensor([1, 2], dtype=float, device=device).dtype is gputorch.float64


def test_tensor_from_tensor_warns_and_copies(device):
    src = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="clone"):
        t = gputorch.tensor(src)
    assert not t.requires_grad and t.is_leaf and t.device == src.device
    t.add_(1)
    assert src.tolist() == [1.0, 2.0]
    with pytest.warns(UserWarning):
        t64 = gputorch.tensor(src, dtype=gputorch.float64)
    assert t64.dtype is gputorch.float64 and t64.tolist() == [1.0, 2.0]


def test_tensor_requires_grad(device):
    t = gputorch.tensor([1.0, 2.0], requires_grad=True, device=device)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    with pytest.raises(RuntimeError, match="floating point"):
        gputorch.tensor([1, 2], requires_grad=True, device=device)


def test_tensor_from_torch_and_range():
    torch = _torch()
    src = torch.arange(4.0)
    t = gputorch.tensor(src)
    src[0] = 10
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and t.dtype is gputorch.float32
    assert gputorch.tensor(range(3)).tolist() == [0, 1, 2]


def test_tensor_errors(device):
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1 \\(got 1\\)"):
        gputorch.tensor([[1, 2], [3]], device=device)
    with pytest.raises(ValueError, match="too many dimensions 'str'"):
        gputorch.tensor(["a"], device=device)
    with pytest.raises(RuntimeError, match="Could not infer dtype of object"):
        gputorch.tensor(object(), device=device)
    with pytest.raises(RuntimeError, match="Could not infer dtype of NoneType"):
        gputorch.tensor([1, None], device=device)
    with pytest.raises(ValueError, match="only one element tensors"):
        gputorch.tensor([gputorch.ones(2), gputorch.ones(2)], device=device)
    with pytest.raises(ValueError, match="Overflow"):
        gputorch.tensor([1, 2**64], device=device)
    with pytest.raises(RuntimeError, match="cannot be converted to type int8 without overflow"):
        gputorch.tensor([128], dtype=gputorch.int8, device=device)
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8 without overflow"):
        gputorch.tensor([-256], dtype=gputorch.uint8, device=device)
    with pytest.raises(RuntimeError, match="cannot be converted to type int64 without overflow"):
        gputorch.tensor([float("nan")], dtype=gputorch.int64, device=device)
    with pytest.raises(TypeError, match="numpy.uint16"):
        gputorch.tensor(np.zeros(2, dtype=np.uint16), device=device)
    with pytest.raises(TypeError, match="complex128, complex64"):   # the message lists what is supported
        gputorch.tensor(np.zeros(2, dtype=np.uint32), device=device)


# ---------------------------------------------------------------- as_tensor / asarray / from_numpy
def test_as_tensor_shares_numpy_memory_when_it_can():
    a = np.zeros(3, dtype=np.float32)
    t = gputorch.as_tensor(a)
    a[0] = 5
    assert t.tolist()[0] == 5
    t2 = gputorch.as_tensor(a, dtype=gputorch.float32)
    t2._data[1] = 7
    assert a[1] == 7
    copy = gputorch.as_tensor(a, dtype=gputorch.float64)
    a[2] = 9
    assert copy.dtype is gputorch.float64 and copy.tolist() == [5.0, 7.0, 0.0]


def test_as_tensor_tensor_and_lists(device):
    t = gputorch.ones(2, device=device)
    assert gputorch.as_tensor(t) is t
    assert gputorch.as_tensor(t, dtype=gputorch.float32, device=device) is t
    t64 = gputorch.as_tensor(t, dtype=gputorch.float64)
    assert t64 is not t and t64.dtype is gputorch.float64
    x = gputorch.as_tensor([1, 2], device=device)
    assert x.dtype is gputorch.int64 and x.tolist() == [1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gputorch.as_tensor(t, dtype=gputorch.float64)


def test_as_tensor_numpy_to_device_copies(device):
    a = np.arange(3.0)
    t = gputorch.as_tensor(a, device=device)
    a[0] = 10
    if device == "cpu":
        assert t.tolist()[0] == 10
    else:
        assert t.tolist()[0] == 0 and t.device.type == "cuda"


def test_as_tensor_negative_strides_error():
    with pytest.raises(ValueError, match="negative"):
        gputorch.as_tensor(np.arange(3.0)[::-1])


def test_asarray_copy_flags():
    a = np.arange(3.0)
    assert gputorch.asarray(a).data_ptr() == a.ctypes.data
    c = gputorch.asarray(a, copy=True)
    a[0] = 4
    assert c.tolist()[0] == 0
    with pytest.raises(ValueError):
        gputorch.asarray(a, dtype=gputorch.float32, copy=False)
    assert gputorch.asarray([1.0], requires_grad=True).requires_grad


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = gputorch.from_numpy(a)
    assert t.dtype is gputorch.int32 and t.shape == (2, 3) and t.device.type == "cpu"
    a[0, 0] = 100
    assert t.tolist()[0][0] == 100
    t._data[1, 2] = -5     # writes through the tensor reach the array
    assert a[1, 2] == -5
    view = gputorch.from_numpy(a[:, 1])        # strided views keep their strides
    assert view.tolist() == [1, 4] and view.stride() == (3,)
    assert gputorch.from_numpy(np.array(2.5)).shape == ()


def test_from_numpy_ignores_default_device():
    gputorch.set_default_device("cpu")
    try:
        assert gputorch.from_numpy(np.zeros(1)).device.type == "cpu"
    finally:
        gputorch.set_default_device(None)


def test_from_numpy_errors():
    with pytest.raises(TypeError, match="expected np.ndarray \\(got list\\)"):
        gputorch.from_numpy([1, 2])
    with pytest.raises(TypeError, match="numpy.uint32"):
        gputorch.from_numpy(np.zeros(2, dtype=np.uint32))
    with pytest.raises(ValueError, match="byte order"):
        gputorch.from_numpy(np.zeros(2, dtype=">f4"))
    with pytest.raises(ValueError, match="negative"):
        gputorch.from_numpy(np.arange(3)[::-1])
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        gputorch.from_numpy(ro)


# ---------------------------------------------------------------- filled tensors
@pytest.mark.parametrize("make", [
    lambda f, d: f(2, 3, device=d), lambda f, d: f((2, 3), device=d), lambda f, d: f([2, 3], device=d),
    lambda f, d: f(gputorch.Size([2, 3]), device=d), lambda f, d: f(np.int64(2), 3, device=d),
    lambda f, d: f(size=(2, 3), device=d),
])
def test_size_forms(make, device):
    for fn, value in ((gputorch.zeros, 0), (gputorch.ones, 1), (gputorch.empty, None)):
        t = make(fn, device)
        assert t.shape == (2, 3) and t.dtype is gputorch.float32 and t.device.type == device
        if value is not None:
            assert (to_numpy(t) == value).all()


def test_factories_dtype_device_requires_grad(device):
    t = gputorch.ones(2, dtype=gputorch.int32, device=device)
    assert t.dtype is gputorch.int32 and t.tolist() == [1, 1]
    assert gputorch.zeros((), device=device).shape == ()
    assert gputorch.zeros(0, 3, device=device).shape == (0, 3)
    g = gputorch.zeros(2, requires_grad=True, device=device)
    assert g.requires_grad and g.is_leaf
    with pytest.raises(RuntimeError, match="floating point"):
        gputorch.zeros(2, dtype=gputorch.int64, requires_grad=True, device=device)
    gputorch.set_default_dtype(gputorch.float64)
    try:
        assert gputorch.ones(1, device=device).dtype is gputorch.float64
    finally:
        gputorch.set_default_dtype(gputorch.float32)


def test_factory_size_errors(device):
    with pytest.raises(RuntimeError, match="negative dimension -1: \\[-1\\]"):
        gputorch.ones(-1, device=device)
    with pytest.raises(RuntimeError, match="negative dimension -2: \\[3, -2\\]"):
        gputorch.zeros((3, -2), device=device)
    with pytest.raises(TypeError, match="float"):
        gputorch.zeros(2, 3.0, device=device)
    with pytest.raises(TypeError, match="bool"):
        gputorch.empty(True, device=device)


def test_full_infers_dtype(device):
    torch = _torch()
    for value in (3, 2.5, True, -1):
        assert_close(gputorch.full((2,), value, device=device), torch.full((2,), value))
    assert gputorch.full([], 1.0, device=device).shape == ()
    assert gputorch.full((2,), 7, dtype=gputorch.float64, device=device).dtype is gputorch.float64
    assert gputorch.full((1,), gputorch.tensor(4.0), device=device).tolist() == [4.0]
    with pytest.raises(TypeError, match="tuple of ints"):
        gputorch.full(2, 1.0, device=device)


def test_like_functions(device):
    x = gputorch.ones(2, 3, dtype=gputorch.float64, device=device)
    for fn, value in ((gputorch.zeros_like, 0), (gputorch.ones_like, 1)):
        y = fn(x)
        assert y.shape == x.shape and y.dtype is gputorch.float64 and y.device == x.device
        assert (to_numpy(y) == value).all()
    assert gputorch.empty_like(x, dtype=gputorch.int32).dtype is gputorch.int32
    f = gputorch.full_like(x, 2.5)
    assert f.dtype is gputorch.float64 and (to_numpy(f) == 2.5).all()
    assert gputorch.full_like(gputorch.zeros(2, dtype=gputorch.int64, device=device), 2.7).tolist() == [2, 2]
    assert gputorch.zeros_like(x, requires_grad=True).requires_grad


def test_out_argument(device):
    out = gputorch.empty(2, 3, device=device)
    res = gputorch.zeros(2, 3, out=out)
    assert res is out and (to_numpy(out) == 0).all()
    res = gputorch.arange(4, out=gputorch.empty(4, dtype=gputorch.int64, device=device))
    assert res.tolist() == [0, 1, 2, 3]


def test_new_methods(device):
    torch = _torch()
    x = gputorch.ones(2, dtype=gputorch.float64, device=device)
    tx = torch.ones(2, dtype=torch.float64)
    assert_close(x.new_zeros(2, 3), tx.new_zeros(2, 3))
    assert_close(x.new_zeros((2, 3)), tx.new_zeros((2, 3)))
    assert_close(x.new_ones(()), tx.new_ones(()))
    assert_close(x.new_full((2,), 1.5), tx.new_full((2,), 1.5))
    assert x.new_empty((3,)).shape == (3,) and x.new_empty(3).dtype is gputorch.float64
    assert_close(x.new_tensor([1, 2]), tx.new_tensor([1, 2]))
    xi = gputorch.ones(2, dtype=gputorch.int32, device=device)
    assert_close(xi.new_full((2,), 1.5), torch.ones(2, dtype=torch.int32).new_full((2,), 1.5))
    assert x.new_zeros(2, dtype=gputorch.int8).dtype is gputorch.int8
    assert x.new_ones(2, requires_grad=True).requires_grad
    assert x.new_tensor([1.0]).device == x.device
    with pytest.warns(UserWarning):
        copy = x.new_tensor(x)
    assert copy.tolist() == [1.0, 1.0]


def test_empty_strided(device):
    t = gputorch.empty_strided((2, 3), (1, 2), device=device)
    assert t.shape == (2, 3) and t.stride() == (1, 2) and not t.is_contiguous()
    assert gputorch.empty_strided((2, 0), (1, 1), device=device).shape == (2, 0)
    assert gputorch.ones(1, dtype=gputorch.int32, device=device).new_empty_strided(
        (2, 2), (2, 1)).dtype is gputorch.int32
    with pytest.raises(RuntimeError, match="dimensionality of sizes \\(2\\) must match"):
        gputorch.empty_strided((2, 3), (3,), device=device)


# ---------------------------------------------------------------- arange
ARANGE_CASES = [
    (5,), (0.0, 1, 0.1), (0, 1, 0.1), (1, 2.5, 0.5), (10, 0, -3), (0, -1, -0.25), (-1.3, 1.3, 0.3),
    (0, 1, 1 / 3), (2, 2), (0, 10, 3), (-5, 5, 2), (0.5, 10.25, 0.75),
]


@pytest.mark.parametrize("args", ARANGE_CASES, ids=repr)
def test_arange_matches_torch(args, device):
    torch = _torch()
    t = gputorch.arange(*args, device=device)
    expected = torch.arange(*args)
    assert t.dtype.name == str(expected.dtype).split(".")[1]
    np.testing.assert_array_equal(to_numpy(t), expected.numpy())


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float64", "float32", "float16", "int8"])
@pytest.mark.parametrize("args", [(0, 5), (0.5, 5, 1.5), (-2.5, 3, 1.7), (0, 2.5, 0.5), (1, 8, 2)], ids=repr)
def test_arange_dtypes_match_torch(args, dtype, device):
    torch = _torch()
    if dtype in ("uint8",) and args[0] < 0:
        return
    try:
        expected = torch.arange(*args, dtype=getattr(torch, dtype))
    except (RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):    # the same exception type (a step truncated to 0: ValueError)
            gputorch.arange(*args, dtype=getattr(gputorch, dtype), device=device)
        return
    t = gputorch.arange(*args, dtype=getattr(gputorch, dtype), device=device)
    assert t.dtype.name == dtype
    np.testing.assert_array_equal(to_numpy(t), expected.numpy())


def test_arange_inference_and_keywords(device):
    assert gputorch.arange(np.int32(5), device=device).dtype is gputorch.int64
    assert gputorch.arange(gputorch.tensor(5), device=device).dtype is gputorch.int64
    assert gputorch.arange(gputorch.tensor(5.0), device=device).dtype is gputorch.float32
    assert gputorch.arange(start=1, end=3, device=device).tolist() == [1, 2]
    assert gputorch.arange(end=3, device=device).tolist() == [0, 1, 2]
    assert gputorch.arange(0.0, 5, 2, requires_grad=True, device=device).requires_grad
    assert gputorch.arange(5, device=device).device.type == device


def test_arange_errors(device):
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        gputorch.arange(0, 5, 0, device=device)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        gputorch.arange(5, 0, 1, device=device)
    with pytest.raises(RuntimeError, match="unsupported range"):
        gputorch.arange(0, float("inf"), device=device)
    with pytest.raises(RuntimeError, match="possible overflow"):
        gputorch.arange(1e20, device=device)
    with pytest.raises(NotImplementedError, match="Bool"):
        gputorch.arange(5, dtype=gputorch.bool, device=device)
    with pytest.raises(RuntimeError, match="floating point"):
        gputorch.arange(5, requires_grad=True, device=device)


# ---------------------------------------------------------------- linspace / logspace / eye
@pytest.mark.parametrize("args", [(0, 1, 5), (0, 1, 7), (-3, 7, 11), (1, 0, 4), (0, -10, 4), (0, 1, 1),
                                  (0, 1, 0), (2.5, -1.25, 6), (0, 1, 1000)], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_linspace_matches_torch(args, dtype, device):
    torch = _torch()
    t = gputorch.linspace(*args, dtype=getattr(gputorch, dtype), device=device)
    expected = torch.linspace(*args, dtype=getattr(torch, dtype))
    assert t.dtype.name == dtype
    if dtype.startswith("float"):   # torch's vectorised CPU loop may round the last bit differently
        tol = 1e-6 if dtype == "float32" else 1e-14
        np.testing.assert_allclose(to_numpy(t), expected.numpy(), rtol=tol, atol=tol)
        if len(t):
            assert to_numpy(t)[0] == expected[0].item() and to_numpy(t)[-1] == expected[-1].item()
    else:
        np.testing.assert_array_equal(to_numpy(t), expected.numpy())


def test_linspace_defaults_and_errors(device):
    t = gputorch.linspace(gputorch.tensor(0.0), gputorch.tensor(1.0), 3, device=device)
    assert t.dtype is gputorch.float32 and t.tolist() == [0.0, 0.5, 1.0]
    assert gputorch.linspace(0, 1, 5, requires_grad=True, device=device).requires_grad
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        gputorch.linspace(0, 1, -1, device=device)
    with pytest.raises(NotImplementedError, match="Bool"):
        gputorch.linspace(0, 1, 3, dtype=gputorch.bool, device=device)
    with pytest.raises(TypeError):
        gputorch.linspace(0, 1, 2.5, device=device)


@pytest.mark.parametrize("args,kwargs", [
    ((0, 2, 3), {}), ((0, 2, 3), {"base": 2}), ((-1, 2, 4), {}), ((-1, 2, 4), {"base": 3.0}),
    ((0, 2, 3), {"dtype": "int64"}), ((-1, 2, 4), {"base": 3.0, "dtype": "float64"}), ((1, 1, 0), {}),
], ids=repr)
def test_logspace_matches_torch(args, kwargs, device):
    torch = _torch()
    dtype = kwargs.pop("dtype", None)
    t = gputorch.logspace(*args, **kwargs, dtype=dtype and getattr(gputorch, dtype), device=device)
    expected = torch.logspace(*args, **kwargs, dtype=dtype and getattr(torch, dtype))
    assert_close(t, expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("args", [(3,), (2, 3), (3, 2), (2, 0), (0,)], ids=repr)
def test_eye_matches_torch(args, device):
    torch = _torch()
    assert_close(gputorch.eye(*args, device=device), torch.eye(*args))
    assert_close(gputorch.eye(*args, dtype=gputorch.int64, device=device), torch.eye(*args, dtype=torch.int64))
    assert_close(gputorch.eye(*args, dtype=gputorch.bool, device=device), torch.eye(*args, dtype=torch.bool))


def test_eye_errors(device):
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        gputorch.eye(-1, device=device)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -1"):
        gputorch.eye(2, m=-1, device=device)


def test_default_device_context(device):
    with gputorch.device(device):
        for t in (gputorch.zeros(2), gputorch.arange(3), gputorch.tensor([1.0]), gputorch.eye(2),
                  gputorch.linspace(0, 1, 3), gputorch.full((1,), 2.0)):
            assert t.device.type == device
    assert gputorch.zeros(1).device.type == "cpu"


def test_arange_checks_the_step_sign_before_an_integer_dtype_truncates_it(device):
    # A fractional step of the wrong sign is refused for its sign (RuntimeError), as in PyTorch, even
    # where int64 truncates it to 0; a fractional step of the right sign that truncates to 0 stays a
    # ValueError. (Differential seed 2: arange(-3, 5, -0.5, dtype=int64).)
    for args in [(-3, 5, -0.5), (5, -3, 0.5), (0.5, 0.2, 0.5)]:
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            gputorch.arange(*args, dtype=gputorch.int64, device=device)
    with pytest.raises(ValueError, match="step must be nonzero"):
        gputorch.arange(3, 5, 0.5, dtype=gputorch.int64, device=device)


def test_full_like_stores_the_value_as_full_does(device):
    """An unsigned dtype takes negative integers down to -max, wrapping (uint8: -1 -> 255,
    -200 -> 56); past that, or NaN for an integer dtype, PyTorch's overflow error."""
    u = gputorch.tensor([1, 2], dtype=gputorch.uint8, device=device)
    np.testing.assert_array_equal(gputorch.full_like(u, -1).cpu().numpy(), [255, 255])
    np.testing.assert_array_equal(gputorch.full_like(u, -200).cpu().numpy(), [56, 56])
    for bad in (300, -256, float("nan")):
        with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
            gputorch.full_like(u, bad)
    assert gputorch.full_like(u, 2.5, dtype=gputorch.float16).dtype == gputorch.float16


@pytest.mark.parametrize("fn,start,end,dtype", [
    ("linspace", 0, 300, "uint8"), ("linspace", -5.5, 100, "uint8"), ("logspace", -3.5, 3, "uint8"),
    ("linspace", 0, 200, "int8"), ("linspace", 0, 1e40, "float32")])
def test_linspace_and_logspace_ends_must_fit_the_dtype(fn, start, end, dtype, device):
    name = {"uint8": "uint8_t", "int8": "int8_t", "float32": "float"}[dtype]
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {name} without overflow"):
        getattr(gputorch, fn)(start, end, 4, dtype=getattr(gputorch, dtype), device=device)
    assert gputorch.linspace(-5, 100, 4, dtype=gputorch.uint8, device=device).cpu().numpy()[0] == 251
    # with fewer than two steps nothing is stepped and nothing is checked (one step is ``start``, wrapped)
    assert getattr(gputorch, fn)(start, end, 0, dtype=getattr(gputorch, dtype), device=device).numel() == 0
    np.testing.assert_array_equal(gputorch.linspace(-2, -3.5, 1, dtype=gputorch.uint8, device=device).cpu().numpy(),
                                  [254])
