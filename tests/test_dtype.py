"""Type promotion must follow PyTorch's rules (checked against torch where installed)."""
import itertools

import numpy as np
import pytest

import gputorch
from gputorch import _dtype

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def test_dtype_objects():
    assert gputorch.float32.is_floating_point and not gputorch.int64.is_floating_point
    assert gputorch.float is gputorch.float32 and gputorch.double is gputorch.float64
    assert gputorch.long is gputorch.int64 and gputorch.half is gputorch.float16
    assert gputorch.float32.itemsize == 4 and gputorch.uint8.itemsize == 1
    assert repr(gputorch.int16) == "gputorch.int16"
    assert not gputorch.uint8.is_signed and gputorch.int8.is_signed


def test_promote_types_examples():
    assert gputorch.promote_types(gputorch.uint8, gputorch.int8) is gputorch.int16
    assert gputorch.promote_types(gputorch.int64, gputorch.float16) is gputorch.float16
    assert gputorch.promote_types(gputorch.bool, gputorch.uint8) is gputorch.uint8
    assert gputorch.promote_types(gputorch.float16, gputorch.float32) is gputorch.float32


def test_promote_types_matches_torch():
    torch = pytest.importorskip("torch")
    for a, b in itertools.product(NAMES, NAMES):
        expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
        got = gputorch.promote_types(getattr(gputorch, a), getattr(gputorch, b))
        assert got.name == str(expected).replace("torch.", ""), (a, b)


def _operands(kind, dt_name, lib):
    """A tensor with dims, a zero-dim tensor, or a Python scalar of the dtype's category."""
    dt = getattr(lib, dt_name)
    if kind == "dim":
        return lib.ones(2, dtype=dt)
    if kind == "zero":
        return lib.ones((), dtype=dt)
    return {"bool": True, "float64": 2.5}.get(dt_name, 2)


@pytest.mark.parametrize("kind", ["dim", "zero", "scalar"])
def test_result_type_matches_torch(kind):
    torch = pytest.importorskip("torch")
    for a, b in itertools.product(NAMES, NAMES if kind != "scalar" else ["bool", "int64", "float64"]):
        ta = torch.ones(2, dtype=getattr(torch, a))
        tb = _operands(kind, b, torch)
        ga = gputorch.ones(2, dtype=getattr(gputorch, a))
        gb = _operands(kind, b, gputorch)
        expected = torch.result_type(ta, tb)
        assert gputorch.result_type(ga, gb).name == str(expected).replace("torch.", ""), (a, b, kind)


def test_binary_op_uses_promotion(device):
    x = gputorch.ones(3, dtype=gputorch.int32, device=device)
    assert (x + 2.5).dtype is gputorch.float32
    assert (x + gputorch.ones((), dtype=gputorch.float64, device=device)).dtype is gputorch.float64
    assert (x + gputorch.ones((), dtype=gputorch.int64, device=device)).dtype is gputorch.int32
    h = gputorch.ones(3, dtype=gputorch.float16, device=device)
    assert (h * 3.0).dtype is gputorch.float16
    assert (h * gputorch.ones((), dtype=gputorch.float64, device=device)).dtype is gputorch.float16
    assert (gputorch.ones(2, dtype=gputorch.bool, device=device) + 1).dtype is gputorch.int64


def test_default_dtype_roundtrip():
    assert gputorch.get_default_dtype() is gputorch.float32
    gputorch.set_default_dtype(gputorch.float64)
    try:
        assert gputorch.tensor([1.5]).dtype is gputorch.float64
        assert (gputorch.ones(2, dtype=gputorch.int64) * 1.5).dtype is gputorch.float64
    finally:
        gputorch.set_default_dtype(gputorch.float32)
    with pytest.raises(TypeError):
        gputorch.set_default_dtype(gputorch.int32)


def test_numpy_dtype_conversion():
    assert _dtype.from_numpy_dtype(np.float32) is gputorch.float32
    assert _dtype.from_numpy_dtype(np.complex128) is gputorch.complex128
    with pytest.raises(TypeError, match="complex128"):
        _dtype.from_numpy_dtype(np.uint16)


def test_can_cast():
    assert gputorch.can_cast(gputorch.int32, gputorch.float16)
    assert not gputorch.can_cast(gputorch.float32, gputorch.int64)
    assert not gputorch.can_cast(gputorch.int8, gputorch.bool)
