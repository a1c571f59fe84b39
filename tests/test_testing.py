"""gputorch.testing: assert_close's verdicts and messages equal torch.testing's on the same inputs;
make_tensor's value ranges, validation and layout options as in PyTorch."""
import math

import numpy as np
import pytest

import gputorch
from gputorch.testing import assert_close, make_tensor

NAN, INF = math.nan, math.inf


def _message(fn, actual, expected, **kwargs):
    """``(exception type name, message)`` from ``fn``, or None when it passes."""
    try:
        fn(actual, expected, **kwargs)
    except Exception as e:   # noqa: BLE001 - the type itself is compared
        return type(e).__name__, str(e).replace("gputorch.", "torch.").replace("torch._tensor.", "torch.")
    return None


def _convert(lib, x):
    """Rebuild a nested test value with ``lib`` (gputorch or torch): ("t", values, dtype) is a tensor."""
    if isinstance(x, tuple) and x and x[0] == "t":
        return lib.tensor(x[1], dtype=getattr(lib, x[2]))
    if isinstance(x, list):
        return [_convert(lib, v) for v in x]
    if isinstance(x, dict):
        return {k: _convert(lib, v) for k, v in x.items()}
    return x


CASES = [
    (("t", [1., 2., 3.], "float32"), ("t", [1., 2.5, 3.1], "float32"), {}),
    (("t", [[1., 2.], [3., 4.]], "float32"), ("t", [[1., 2.], [3., 5.]], "float32"), {}),
    (("t", [1, 2, 3], "int64"), ("t", [1, 2, 4], "int64"), {}),
    (("t", [1, 2], "int32"), ("t", [1, 200], "int32"), {}),
    (("t", [1, 2], "uint8"), ("t", [2, 1], "uint8"), {}),
    (("t", [True, False], "bool"), ("t", [True, True], "bool"), {}),
    (("t", [1., 2.], "float16"), ("t", [1., 2.1], "float16"), {}),
    (("t", [1., 2.], "float64"), ("t", [1., 2.1], "float64"), {}),
    (("t", [1., INF], "float32"), ("t", [1., -INF], "float32"), {}),
    (("t", [1., INF], "float32"), ("t", [1., INF], "float32"), {}),
    (("t", [NAN, 1.], "float32"), ("t", [NAN, 1.], "float32"), {}),
    (("t", [NAN, 1.], "float32"), ("t", [NAN, 1.], "float32"), {"equal_nan": True}),
    (("t", [0., 1.], "float32"), ("t", [1e-9, 1.], "float32"), {}),
    (("t", [1., 2.], "float32"), ("t", [1., 2.], "float64"), {}),
    (("t", [1., 2.], "float32"), ("t", [1., 2.], "float64"), {"check_dtype": False}),
    (("t", [1., 2.], "float16"), ("t", [1., 2.1], "float32"), {"check_dtype": False}),
    (("t", [1., 2., 3.], "float32"), ("t", [1, 2, 4], "int64"), {"check_dtype": False}),
    (("t", [1., 2.], "float32"), ("t", [1., 2., 3.], "float32"), {}),
    (("t", [1., 2.], "float32"), ("t", [1., 2.], "float32"), {"rtol": 0, "atol": 0}),
    (("t", [1., 2.], "float32"), ("t", [1., 3.], "float32"), {"rtol": 0, "atol": 0}),
    (("t", [1, 3], "int64"), ("t", [2, 3], "int64"), {"rtol": 0.1, "atol": 0.1}),
    (("t", [1., 2.], "float32"), ("t", [1., 3.], "float32"), {"rtol": 1e-3}),
    (("t", 1., "float32"), ("t", 2., "float32"), {}),
    (("t", NAN, "float32"), ("t", 1., "float32"), {}),
    (1.0, 1.1, {}), (1, 2, {}), (1, 1.0, {}), (1.0, 0.0, {}), (0.0, 1e-4, {}), (True, False, {}),
    (None, None, {}), (None, 1, {}), ("a", "b", {}), ((1, 2), [1, 2], {}), ([1, 2], [1, 2, 3], {}),
    ([("t", 1., "float32"), ("t", 2., "float32")], [("t", 1., "float32"), ("t", 3., "float32")], {}),
    ([[("t", [1.], "float32")], [1, ("t", [2.], "float32")]],
     [[("t", [1.], "float32")], [1, ("t", [3.], "float32")]], {}),
    ([("t", [1., 2.], "float32")], [("t", [1., 2.], "float64")], {}),
    ({"a": [1.0, 2.0]}, {"a": [1.0, 3.0]}, {}),
    ({"a": 1}, {"b": 1}, {}),
    (("t", [1.], "float32"), 1.0, {}),
    (("t", [1.], "float32"), [1.0], {}),
    (("t", [1., 2.], "float32"), ("t", [1., 3.], "float32"), {"msg": "custom"}),
]


@pytest.mark.parametrize("actual, expected, kwargs", CASES)
def test_assert_close_matches_torch(actual, expected, kwargs):
    torch = pytest.importorskip("torch")
    ours = _message(assert_close, _convert(gputorch, actual), _convert(gputorch, expected), **kwargs)
    theirs = _message(torch.testing.assert_close, _convert(torch, actual), _convert(torch, expected), **kwargs)
    assert ours == theirs


def test_callable_msg_and_tolerance_pairing():
    torch = pytest.importorskip("torch")
    args = ([1., 2.], [1., 3.])
    ours = _message(assert_close, *map(gputorch.tensor, args), msg=lambda m: "pre\n" + m)
    theirs = _message(torch.testing.assert_close, *map(torch.tensor, args), msg=lambda m: "pre\n" + m)
    assert ours == theirs and ours[1].startswith("pre\nTensor-likes are not close!")
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no atol"):
        assert_close(gputorch.ones(1), gputorch.ones(1), rtol=1e-3)


def test_stride_device_and_numpy(device):
    a = gputorch.ones(2, 2, device=device)
    with pytest.raises(AssertionError, match=r"attribute 'stride\(\)' do not match: \(2, 1\) != \(1, 2\)"):
        assert_close(a, a.t().contiguous().t(), check_stride=True)
    assert_close(a, a.t().contiguous().t())
    assert_close(gputorch.ones(2, requires_grad=True) * 2, gputorch.full((2,), 2.0))
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    if device == "cuda":
        with pytest.raises(AssertionError, match="attribute 'device' do not match: cuda:0 != cpu"):
            assert_close(a, gputorch.ones(2, 2))
        assert_close(a, gputorch.ones(2, 2), check_device=False)


def test_assert_allclose_deprecated():
    torch = pytest.importorskip("torch")
    with pytest.warns(FutureWarning, match="deprecated"):
        gputorch.testing.assert_allclose(gputorch.tensor([1.0, NAN]), [1.00005, NAN])
    with pytest.warns(FutureWarning):
        ours = _message(gputorch.testing.assert_allclose, gputorch.tensor([1.]), gputorch.tensor([1.1]))
    with pytest.warns(FutureWarning):
        theirs = _message(torch.testing.assert_allclose, torch.tensor([1.]), torch.tensor([1.1]))
    assert ours == theirs


@pytest.mark.parametrize("dtype, lo, hi", [("float32", -9, 9), ("float64", -9, 9), ("float16", -9, 9),
                                           ("int64", -9, 9), ("int8", -9, 9), ("uint8", 0, 9),
                                           ("bool", 0, 1)])
def test_make_tensor_default_ranges(device, dtype, lo, hi):
    dt = getattr(gputorch, dtype)
    t = make_tensor(4000, dtype=dt, device=device)
    assert t.dtype is dt and t.device.type == device and tuple(t.shape) == (4000,)
    values = t.cpu().numpy().astype(np.float64)
    assert values.min() >= lo and values.max() <= hi
    # the range is filled, not a corner of it
    assert values.min() < lo + 1 and values.max() > hi - 1
    if dt._category == 1:
        assert set(np.unique(values)) == set(range(lo, hi + 1))


def test_make_tensor_low_high_and_options(device):
    ints = make_tensor(3000, dtype=gputorch.int64, device=device, low=-3.5, high=3.5).cpu().numpy()
    assert set(np.unique(ints)) == set(range(-3, 4))                 # [ceil(low), ceil(high))
    ints = make_tensor(3000, dtype=gputorch.int64, device=device, low=-2, high=2, exclude_zero=True).cpu().numpy()
    assert set(np.unique(ints)) == {-2, -1, 1}
    floats = make_tensor(3000, dtype=gputorch.float32, device=device, low=2).cpu().numpy()
    assert floats.min() >= 2 and floats.max() < 9
    tiny = make_tensor(3000, dtype=gputorch.float32, device=device, low=-1e-30, high=1e-30, exclude_zero=True)
    assert (tiny.cpu().numpy() != 0).all()
    t = make_tensor((2, 3), dtype=gputorch.float32, device=device, noncontiguous=True)
    assert tuple(t.shape) == (2, 3) and not t.is_contiguous() and t.stride() == (6, 2)
    assert make_tensor(2, 3, dtype=gputorch.float32, device=device, noncontiguous=True).stride() == (6, 2)
    assert make_tensor([2, 2], dtype=gputorch.float32, device=device).shape == (2, 2)
    assert make_tensor((), dtype=gputorch.float32, device=device).shape == ()
    assert make_tensor(2, dtype=gputorch.float32, device=device, requires_grad=True).requires_grad
    with pytest.warns(FutureWarning):
        same = make_tensor(3, dtype=gputorch.float32, device=device, low=2, high=2)
    assert (same.cpu().numpy() == 2).all()


def test_make_tensor_is_seeded():
    gputorch.manual_seed(3)
    a = make_tensor(5, dtype=gputorch.float32, device="cpu")
    gputorch.manual_seed(3)
    b = make_tensor(5, dtype=gputorch.float32, device="cpu")
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_make_tensor_errors():
    torch = pytest.importorskip("torch")
    for kwargs in (dict(low=2, high=1), dict(low=NAN)):
        with pytest.raises(ValueError) as ours:
            make_tensor(3, dtype=gputorch.float32, device="cpu", **kwargs)
        with pytest.raises(ValueError) as theirs:
            torch.testing.make_tensor(3, dtype=torch.float32, device="cpu", **kwargs)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported for boolean and integral dtypes"):
        make_tensor(3, dtype=gputorch.int64, device="cpu", requires_grad=True)
    with pytest.raises(TypeError):
        make_tensor(3, device="cpu")
