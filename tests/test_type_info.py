"""finfo and iinfo: every attribute equals PyTorch's (types included), repr, equality, errors."""
import pytest

import gputorch

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = gputorch.finfo(getattr(gputorch, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = gputorch.iinfo(getattr(gputorch, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert repr(ours) == repr(theirs)


def test_defaults_and_python_types():
    assert gputorch.finfo().dtype == "float32"
    gputorch.set_default_dtype(gputorch.float64)
    try:
        assert gputorch.finfo().eps == 2.0 ** -52
    finally:
        gputorch.set_default_dtype(gputorch.float32)
    assert gputorch.finfo(float).bits == 64
    assert gputorch.iinfo(int).max == 2 ** 63 - 1
    assert gputorch.iinfo(gputorch.uint8).min == 0


def test_equality_and_hashing():
    assert gputorch.finfo(gputorch.float32) == gputorch.finfo(gputorch.float32)
    assert gputorch.finfo(gputorch.float32) != gputorch.finfo(gputorch.float64)
    assert gputorch.iinfo(gputorch.int8) == gputorch.iinfo(gputorch.int8)
    with pytest.raises(TypeError, match="unhashable"):
        hash(gputorch.finfo(gputorch.float32))


def test_errors():
    with pytest.raises(TypeError, match="requires a floating point input type"):
        gputorch.finfo(gputorch.int32)
    with pytest.raises(TypeError, match="requires a floating point input type"):
        gputorch.finfo(gputorch.bool)
    with pytest.raises(TypeError, match="requires an integer input type"):
        gputorch.iinfo(gputorch.float32)
    with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
        gputorch.iinfo(gputorch.bool)
    with pytest.raises(TypeError, match="must be torch.dtype, not str"):
        gputorch.finfo("float32")
    with pytest.raises(TypeError):
        gputorch.iinfo()
