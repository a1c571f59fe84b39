"""``gputorch.device``: parsing, interning, equality, hashing, printing and errors."""
import pickle

import pytest

import gputorch


@pytest.mark.parametrize("args,type_,index", [
    (("cpu",), "cpu", None), (("cuda",), "cuda", None), (("cuda:0",), "cuda", 0), (("cuda:12",), "cuda", 12),
    (("cuda", 0), "cuda", 0), (("cuda", 3), "cuda", 3), ((1,), "cuda", 1), (("cpu:0",), "cpu", None),
    (("cpu", 0), "cpu", None),
])
def test_parsing(args, type_, index):
    d = gputorch.device(*args)
    assert d.type == type_ and d.index == index


def test_keyword_form_and_device_argument():
    assert gputorch.device(type="cuda", index=2) is gputorch.device("cuda:2")
    d = gputorch.device("cuda:1")
    assert gputorch.device(d) is d
    with pytest.raises(ValueError):
        gputorch.device(d, 0)


def test_interning_equality_and_hashing():
    assert gputorch.device("cuda:0") is gputorch.device("cuda", 0)
    assert gputorch.device("cpu") is gputorch.device("cpu", 0)
    assert gputorch.device("cuda:0") == gputorch.device("cuda", 0)
    assert gputorch.device("cuda") != gputorch.device("cuda:0")
    assert gputorch.device("cuda:0") != gputorch.device("cuda:1")
    assert gputorch.device("cpu") != gputorch.device("cuda")
    assert gputorch.device("cuda:1") == "cuda:1" and gputorch.device("cpu") != "gpu"
    table = {gputorch.device("cuda:1"): "a", gputorch.device("cpu"): "b"}
    assert table[gputorch.device("cuda", 1)] == "a" and table[gputorch.device("cpu")] == "b"
    assert len({gputorch.device("cuda:0"), gputorch.device("cuda", 0), gputorch.device(0)}) == 1
    assert hash(gputorch.device("cuda:0")) == hash(gputorch.device("cuda", 0))


def test_repr_and_str():
    torch = pytest.importorskip("torch")
    for spec in ("cpu", "cuda", "cuda:0", "cuda:3"):
        assert repr(gputorch.device(spec)) == repr(torch.device(spec))
        assert str(gputorch.device(spec)) == str(torch.device(spec))
    assert repr(gputorch.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert str(gputorch.device("cuda", 1)) == "cuda:1"
    assert f"{gputorch.device('cpu')}" == "cpu"


def test_pickle_keeps_identity():
    d = gputorch.device("cuda:2")
    assert pickle.loads(pickle.dumps(d)) is d
    assert pickle.loads(pickle.dumps(gputorch.device("cpu"))) is gputorch.device("cpu")


@pytest.mark.parametrize("spec,exc,message", [
    ("gpu", RuntimeError, "Expected one of cpu, cuda"), ("CUDA", RuntimeError, "Expected one of"),
    ("cuda:x", RuntimeError, "Invalid device string: 'cuda:x'"),
    ("cuda:-1", RuntimeError, "Invalid device string: 'cuda:-1'"),
    ("cuda:0:1", RuntimeError, "Invalid device string"), ("cuda:01", RuntimeError, "Invalid device string"),
    ("cuda:", RuntimeError, "Invalid device string"), (" cuda", RuntimeError, "Expected one of"),
    ("", RuntimeError, "Device string must not be empty"), ("cpu:1", RuntimeError, "CPU device index"),
    (None, TypeError, "device()"), (1.5, TypeError, "float"), (True, TypeError, "bool"),
    ([0], TypeError, "unhashable|list"),
])
def test_bad_specs(spec, exc, message):
    with pytest.raises(exc, match=message.replace("(", "\\(").replace(")", "\\)")):
        gputorch.device(spec)


def test_bad_indices():
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        gputorch.device("cuda", -1)
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        gputorch.device(-1)
    with pytest.raises(TypeError, match="must be int, not float"):
        gputorch.device("cuda", 1.5)
    with pytest.raises(RuntimeError, match="must not include an index because index was passed"):
        gputorch.device("cuda:1", 0)


def test_tensor_device_attribute(device):
    t = gputorch.zeros(2, device=device)
    assert t.device.type == device
    if device == "cpu":
        assert t.device is gputorch.device("cpu") and t.device.index is None and t.is_cpu
    else:
        assert t.device.index == gputorch.cuda.current_device() and t.is_cuda


def test_device_as_default_device_context(device):
    with gputorch.device(device) as d:
        assert d is gputorch.device(device)
        assert gputorch.get_default_device().type == device
        assert gputorch.ones(1).device.type == device
    assert gputorch.get_default_device() == gputorch.device("cpu")


def test_set_default_device():
    gputorch.set_default_device("cpu")
    try:
        assert gputorch.get_default_device() is gputorch.device("cpu")
        assert gputorch.empty(1).device.type == "cpu"
    finally:
        gputorch.set_default_device(None)
    assert gputorch.get_default_device() is gputorch.device("cpu")
