"""Legacy tensor types (FloatTensor, LongTensor, cuda.FloatTensor, ...): construction, isinstance,
Tensor.type() names and conversions, errors; compared with PyTorch."""
import pytest

import gputorch
from tests._helpers import assert_close

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
         "ByteTensor", "BoolTensor"]


def _types(device):
    return gputorch.cuda if device == "cuda" else gputorch


@pytest.mark.parametrize("name", NAMES)
def test_types_match_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(gputorch, name), getattr(torch, name)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    x = ours([1, 0, 2])
    assert_close(x, theirs([1, 0, 2]))
    assert x.type() == theirs([1, 0, 2]).type() == f"torch.{name}"
    assert ours(2, 3).shape == (2, 3) and ours(2, 3).dtype is ours.dtype
    assert isinstance(x, ours) and isinstance(x, gputorch.Tensor)
    assert not isinstance(x.to(gputorch.float64 if name != "DoubleTensor" else gputorch.float32), ours)
    assert type(x) is gputorch.Tensor
    assert repr(ours) == repr(theirs)
    assert ours.is_cuda is False and gputorch.cuda.FloatTensor.is_cuda is True


def test_construction_forms(device):
    torch = pytest.importorskip("torch")
    types = _types(device)
    assert types.FloatTensor(2, 3).device.type == device
    assert types.FloatTensor(gputorch.Size([2, 3])).shape == (2, 3)
    assert_close(types.FloatTensor((2, 3)), torch.FloatTensor((2, 3)))   # a tuple is data
    assert_close(types.LongTensor([1.7, -2.2]), torch.LongTensor([1.7, -2.2]))
    assert types.FloatTensor().shape == (0,)
    assert types.LongTensor(2, 3).stride() == (3, 1)
    x = gputorch.tensor([1.0, 2.0], device=device)
    alias = types.FloatTensor(x)
    assert alias.data_ptr() == x.data_ptr() and alias._version == x._version   # shares x's memory


def test_isinstance_by_dtype_and_device(device):
    x = gputorch.zeros(2, device=device)
    assert isinstance(x, _types(device).FloatTensor)
    other = gputorch if device == "cuda" else gputorch.cuda
    assert not isinstance(x, other.FloatTensor)
    assert not isinstance(x.long(), _types(device).FloatTensor)
    p = gputorch.nn.Parameter(gputorch.zeros(2, device=device))
    assert isinstance(p, _types(device).FloatTensor)
    assert not isinstance([1.0], gputorch.FloatTensor)


def test_type_names(device):
    prefix = "torch.cuda." if device == "cuda" else "torch."
    for dt, word in ((gputorch.float32, "Float"), (gputorch.bool, "Bool"), (gputorch.uint8, "Byte"),
                     (gputorch.float16, "Half"), (gputorch.int64, "Long")):
        assert gputorch.zeros(1, dtype=dt, device=device).type() == prefix + word + "Tensor"


def test_type_conversions(device):
    x = gputorch.tensor([1.5, -2.5], device=device)
    assert x.type(gputorch.float32) is x
    assert x.type(_types(device).FloatTensor) is x
    y = x.type(gputorch.LongTensor)
    assert y.device.type == "cpu" and y.tolist() == [1, -2]
    assert x.type("torch.DoubleTensor").dtype is gputorch.float64
    assert x.type(gputorch.int32).device == x.device      # a dtype keeps the device
    if gputorch.cuda.is_available():
        z = x.type("torch.cuda.LongTensor")
        assert z.device.type == "cuda" and z.dtype is gputorch.int64
        assert x.type(gputorch.cuda.HalfTensor).type() == "torch.cuda.HalfTensor"


def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    x = gputorch.zeros(2)
    for bad in ("float", "torch.float64", "torch.Foo", "torch.cuda.Foo"):
        with pytest.raises(ValueError, match="invalid type"):
            x.type(bad)
        if "cuda" not in bad:   # (a CPU build of torch cannot look at CUDA names)
            with pytest.raises(ValueError, match="invalid type"):
                torch.zeros(2).type(bad)
    with pytest.raises(ValueError, match="invalid type: 'int'"):
        x.type(int)
    with pytest.raises(TypeError, match="expected torch.FloatTensor"):
        gputorch.FloatTensor(gputorch.tensor([1, 2]))
    with pytest.raises(TypeError, match="data must be a sequence"):
        gputorch.FloatTensor(2.5)
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        gputorch.FloatTensor("a")
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        gputorch.FloatTensor(-1)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        gputorch.FloatTensor([1], [2])
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        gputorch.FloatTensor(2, device="cuda")


def test_tensor_new(device):
    torch = pytest.importorskip("torch")
    x = gputorch.tensor([1, 2], device=device)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype is gputorch.int64 and x.new(2).device == x.device
    assert_close(x.new([1.5, 2.5]), torch.tensor([1, 2]).new([1.5, 2.5]))
    assert x.new().shape == (0,) and x.new(gputorch.Size([1, 2])).shape == (1, 2)
    assert x.new((2, 3)).tolist() == [2, 3]
    assert x.new(x).data_ptr() == x.data_ptr()
    with pytest.raises(TypeError, match="expected torch"):
        x.new(gputorch.tensor([1.0], device=device))
    with pytest.raises(TypeError):
        x.new(2, dtype=gputorch.float32)


def test_typename():
    torch = pytest.importorskip("torch")
    assert gputorch.typename(gputorch.zeros(2)) == torch.typename(torch.zeros(2)) == "torch.FloatTensor"
    assert gputorch.typename(3) == torch.typename(3) == "int"
    assert gputorch.typename(gputorch.nn.Linear) == "gputorch.nn.modules.linear.Linear"
    assert gputorch.typename(gputorch.nn.Linear(2, 2)) == "gputorch.nn.modules.linear.Linear"


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            gputorch.set_default_tensor_type(gputorch.DoubleTensor)
        assert gputorch.get_default_dtype() is gputorch.float64 and gputorch.zeros(1).dtype is gputorch.float64
        with pytest.warns(UserWarning):
            gputorch.set_default_tensor_type("torch.FloatTensor")
        assert gputorch.get_default_dtype() is gputorch.float32
        with pytest.warns(UserWarning), pytest.raises(TypeError, match="only floating-point types"):
            gputorch.set_default_tensor_type(gputorch.LongTensor)
        with pytest.warns(UserWarning), pytest.raises(TypeError, match="invalid type object"):
            gputorch.set_default_tensor_type(gputorch.float64)
        with pytest.warns(UserWarning), pytest.raises(AttributeError, match="no attribute 'Foo'"):
            gputorch.set_default_tensor_type("torch.Foo")
        if gputorch.cuda.is_available():
            with pytest.warns(UserWarning):
                gputorch.set_default_tensor_type(gputorch.cuda.FloatTensor)
            assert gputorch.zeros(1).device.type == "cuda"
    finally:
        gputorch.set_default_dtype(gputorch.float32)
        gputorch.set_default_device(None)
