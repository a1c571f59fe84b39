"""Tensor printing: the same text as PyTorch's repr with ``torch.`` replaced by ``gputorch.``."""
import numpy as np
import pytest

import gputorch

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore_print_options():
    yield
    gputorch.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _same_repr(array, dtype=None, **kwargs):
    """Build the same tensor in both libraries and compare their reprs."""
    ours = gputorch.tensor(array, dtype=dtype and getattr(gputorch, dtype), **kwargs)
    theirs = torch.tensor(array, dtype=dtype and getattr(torch, dtype), **kwargs)
    assert repr(ours) == repr(theirs).replace("torch.", "gputorch."), (repr(ours), repr(theirs))
    return repr(ours)


VALUES = [
    [1.0, 2.0], [1.5, 2.0], [0.1, 123.456], [1e-5, 1.0], [1e10, 1.0], [123456789.0], [1e8, 1.0],
    [-0.0, 0.0], [0.0, 0.0], [float("nan"), 1.0], [float("inf"), -float("inf"), 2.5], [float("nan")],
    [1.0, 1001.0], [1.0, 999.0], [-1.25, 3.0, 100.0], [0.0001, 0.5], [0.00009, 0.5],
    [[1.0, 2.0], [3.0, 4.0]], [[[1.5, -2.0]], [[3.0, 4.0]]], 3.5, 2.0, -0.0, 1e-10, float("nan"),
    [1e300, 1.0], [3.14159265, 2.71828], [123.0, -7.0], [1e20],
]


@pytest.mark.parametrize("values", VALUES, ids=repr)
@pytest.mark.parametrize("dtype", [None, "float64", "float16"])
def test_float_repr_matches_torch(values, dtype):
    arr = np.array(values, dtype=np.float64)
    if dtype == "float16" and np.abs(arr[np.isfinite(arr)]).max(initial=0) > 60000:
        return
    _same_repr(values, dtype)


@pytest.mark.parametrize("values", [[1, 2, 3], [-100, 5], 7, [[1, -2], [30, 4]], [2**40, 1]], ids=repr)
@pytest.mark.parametrize("dtype", [None, "int32", "int8", "uint8", "int16"])
def test_int_repr_matches_torch(values, dtype):
    if dtype and np.abs(np.array(values)).max() > 100 and dtype != "int32" or (
            dtype == "int32" and np.abs(np.array(values)).max() > 2**31):
        return
    if dtype == "uint8" and np.array(values).min() < 0:
        return
    _same_repr(values, dtype)


def test_bool_and_empty_reprs_match_torch():
    _same_repr([True, False])
    _same_repr(True)
    _same_repr([])
    _same_repr([], "int64")
    _same_repr([], "float64")
    _same_repr([[]])
    assert repr(gputorch.zeros(2, 0, 3)) == "tensor([], size=(2, 0, 3))"
    assert repr(gputorch.zeros(0, dtype=gputorch.int32)) == "tensor([], dtype=gputorch.int32)"


@pytest.mark.parametrize("shape", [(2000,), (7,), (1001,), (40, 40), (3, 400), (5, 5, 50), (10, 20, 30)])
def test_large_tensors_are_summarised_like_torch(shape):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert repr(gputorch.from_numpy(data)) == repr(torch.from_numpy(data))
    ints = np.arange(np.prod(shape)).reshape(shape)
    assert repr(gputorch.from_numpy(ints)) == repr(torch.from_numpy(ints))


def test_long_rows_wrap_like_torch():
    for n in (15, 30, 100):
        data = np.linspace(-1000, 1000, n).astype(np.float32)   # no dtype suffix: wrapping depends on
        assert repr(gputorch.tensor(data)) == repr(torch.tensor(data))  # the suffix's (prefixed) length
    data = np.arange(60).reshape(2, 30) * 12345
    assert repr(gputorch.tensor(data)) == repr(torch.tensor(data))


@pytest.mark.parametrize("seed", range(8))
def test_random_values_match_torch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 6, size=rng.integers(1, 4)))
    scale = 10.0 ** rng.integers(-6, 9)
    data = (rng.standard_normal(shape) * scale).astype(np.float32)
    if seed % 2:
        data = np.round(data)
    assert repr(gputorch.from_numpy(data)) == repr(torch.from_numpy(data))


def test_requires_grad_and_grad_fn_suffixes():
    a = gputorch.tensor([1.0, 2.0], requires_grad=True)
    ta = torch.tensor([1.0, 2.0], requires_grad=True)
    assert repr(a) == repr(ta) == "tensor([1., 2.], requires_grad=True)"
    assert repr(a * 2) == repr(ta * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    b = gputorch.tensor([1.5], dtype=gputorch.float64, requires_grad=True)
    assert repr(b * b) == "tensor([2.2500], dtype=gputorch.float64, grad_fn=<MulBackward0>)"
    with gputorch.no_grad():
        assert repr(a * 2) == "tensor([2., 4.])"


def test_suffixes_wrap_onto_a_new_line_like_torch():
    data = np.arange(12.0) * 1.5 + 0.25
    ours = gputorch.tensor(data, requires_grad=True)
    theirs = torch.tensor(data, requires_grad=True)
    assert repr(ours * 2) == repr(theirs * 2).replace("torch.", "gputorch.")
    assert "\n" in repr(ours * 2)


def test_default_dtype_changes_suffix():
    gputorch.set_default_dtype(gputorch.float64)
    try:
        assert repr(gputorch.tensor([1.5])) == "tensor([1.5000])"
        assert repr(gputorch.tensor([1.5], dtype=gputorch.float32)) == "tensor([1.5000], dtype=gputorch.float32)"
    finally:
        gputorch.set_default_dtype(gputorch.float32)


def test_set_printoptions_matches_torch():
    data = np.array([[1.123456789, 22.5], [3.0, -4.75]])
    values = np.random.default_rng(1).standard_normal(50)
    for opts in ({"precision": 2}, {"precision": 8}, {"sci_mode": True}, {"sci_mode": False},
                 {"threshold": 10}, {"threshold": 10, "edgeitems": 1}, {"linewidth": 30},
                 {"profile": "short"}, {"profile": "full"}, {"threshold": 10, "edgeitems": 0}):
        gputorch.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        for arr in (data, values, np.array([1e-6, 1.0])):
            assert repr(gputorch.tensor(arr)) == repr(torch.tensor(arr)).replace("torch.", "gputorch."), opts
        gputorch.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_printoptions_context_and_getter():
    with gputorch.printoptions(precision=2):
        assert gputorch.get_printoptions()["precision"] == 2
        assert repr(gputorch.tensor([1.23456])) == "tensor([1.23])"
    assert gputorch.get_printoptions()["precision"] == 4
    with pytest.raises(ValueError, match="profile"):
        gputorch.set_printoptions(profile="nope")


def test_str_format_and_subclass_prefix():
    t = gputorch.tensor([1.0, 2.5])
    assert str(t) == repr(t) == "tensor([1.0000, 2.5000])"
    assert f"{gputorch.tensor(2.5):.1f}" == "2.5"

    class MyTensor(gputorch.Tensor):
        pass
    sub = MyTensor([1.0, 2.0])
    assert repr(sub) == "MyTensor([1., 2.])"


def test_device_suffix(device):
    t = gputorch.tensor([1.0, 2.0], device=device)
    if device == "cpu":
        assert repr(t) == "tensor([1., 2.])"
    else:
        index = gputorch.cuda.current_device()
        assert repr(t) == f"tensor([1., 2.], device='cuda:{index}')"
