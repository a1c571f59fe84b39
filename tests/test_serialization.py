"""gputorch.save / gputorch.load (round trips on every device, map_location, weights_only safety)
and the safetensors interchange with PyTorch. Interchange of checkpoints with PyTorch itself:
test_serialization_torch.py; crash safety: test_serialization_atomic.py."""
import collections
import io
import os
import pickle
import sys

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.serialization import (add_safe_globals, clear_safe_globals, get_safe_globals, load_safetensors,
                                    safe_globals, save_safetensors)
from tests._helpers import assert_close

CALLS = []


def record_call(value):
    """A harmless global function a malicious pickle might call."""
    CALLS.append(value)
    return value


class Malicious:
    def __init__(self, target=record_call, arg="pwned"):
        self.target, self.arg = target, arg

    def __reduce__(self):
        return (self.target, (self.arg,))


class Custom:
    def __init__(self, value):
        self.value = value


class TinyNet(nn.Module):
    """A handmade module: parameters, a nested Linear and a buffer."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(gputorch.randn(3, dtype=gputorch.float64))
        self.proj = nn.Linear(3, 2, dtype=gputorch.float64)
        self.register_buffer("offset", gputorch.arange(2, dtype=gputorch.float64))

    def forward(self, x):
        return self.proj(x * self.scale) + self.offset


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    gputorch.save(obj, buf)
    buf.seek(0)
    return gputorch.load(buf, **load_kwargs)


# ------------------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                   "bool"])
def test_tensor_round_trip_every_dtype(device, dtype):
    data = (np.random.default_rng(0).standard_normal((3, 4)) * 10).astype(dtype)
    t = gputorch.tensor(data, device=device)
    back = _round_trip(t)
    assert back.device == t.device and back.dtype == t.dtype and back.shape == t.shape
    assert_close(back, data, rtol=0, atol=0)


@pytest.mark.parametrize("make", [lambda d: gputorch.tensor(3.5, device=d), lambda d: gputorch.zeros(0, 3, device=d),
                                  lambda d: gputorch.arange(12.0, device=d).reshape(3, 4).t(),
                                  lambda d: gputorch.arange(20, device=d)[::3]],
                         ids=["0d", "empty", "transposed", "strided"])
def test_tensor_round_trip_shapes_and_layouts(device, make):
    t = make(device)
    back = _round_trip(t)
    assert back.shape == t.shape and back.dtype == t.dtype and back.device == t.device
    assert_close(back, t, rtol=0, atol=0)


def test_requires_grad_and_parameters(device):
    leaf = gputorch.ones(2, device=device, requires_grad=True)
    computed = leaf * 2
    p = nn.Parameter(gputorch.randn(3, device=device))
    frozen = nn.Parameter(gputorch.randn(2, device=device), requires_grad=False)
    a, b, c, d = _round_trip([leaf, computed, p, frozen])
    assert a.requires_grad and a.is_leaf
    assert b.requires_grad and b.is_leaf and b.grad_fn is None
    assert_close(b, computed.detach())
    assert type(c) is nn.Parameter and c.requires_grad and c.device == p.device
    assert_close(c, p.detach(), rtol=0, atol=0)
    assert type(d) is nn.Parameter and not d.requires_grad


def test_shared_tensors_stay_shared():
    t = gputorch.randn(4)
    a, b, nested = _round_trip([t, t, {"again": t}])
    assert a is b and nested["again"] is a
    a.add_(1)
    assert_close(b, t + 1)


def test_nested_containers_and_metadata_objects(device):
    obj = {
        "tensors": [gputorch.ones(2, device=device), (gputorch.zeros(1, device=device), 3)],
        "numbers": [1, 2.5, True, None, -7, 1e300],
        "text": ("abc", b"bytes"),
        "set": {1, 2}, "complex": 1 + 2j, "bytearray": bytearray(b"ab"),
        "ordered": collections.OrderedDict([("z", 1), ("a", gputorch.arange(3, device=device))]),
        "dtype": gputorch.float16, "device": gputorch.device(device), "size": gputorch.Size([2, 3]),
    }
    back = _round_trip(obj)
    assert back["numbers"] == obj["numbers"] and back["text"] == obj["text"]
    assert back["set"] == {1, 2} and back["complex"] == 1 + 2j and back["bytearray"] == bytearray(b"ab")
    assert isinstance(back["ordered"], collections.OrderedDict) and list(back["ordered"]) == ["z", "a"]
    assert back["dtype"] is gputorch.float16 and back["device"] == gputorch.device(device)
    assert isinstance(back["size"], gputorch.Size) and back["size"] == (2, 3)
    assert isinstance(back["tensors"][1], tuple) and back["tensors"][1][1] == 3
    assert_close(back["ordered"]["a"], np.arange(3), rtol=0, atol=0)


def test_numpy_and_frozenset_need_allowing_as_in_torch():
    obj = {"array": np.arange(4.0), "frozen": frozenset({"a"})}
    buf = io.BytesIO()
    gputorch.save(obj, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="_reconstruct|frozenset"):
        gputorch.load(buf)
    allowed = [np.arange(1).__reduce__()[0], np.ndarray, np.dtype, type(np.dtype("float64")), frozenset]
    with safe_globals(allowed):
        buf.seek(0)
        back = gputorch.load(buf)
    np.testing.assert_array_equal(back["array"], np.arange(4.0))
    assert back["frozen"] == frozenset({"a"})


def test_state_dict_round_trip_into_new_model(device):
    gputorch.manual_seed(0)
    model = TinyNet().to(device)
    sd = _round_trip(model.state_dict())
    assert isinstance(sd, collections.OrderedDict) and list(sd) == list(model.state_dict())
    other = TinyNet().to(device)
    other.load_state_dict(sd)
    x = gputorch.randn(5, 3, dtype=gputorch.float64, device=device)
    assert_close(other(x), model(x), rtol=0, atol=0)


def test_whole_model_round_trip_needs_weights_only_false():
    gputorch.manual_seed(0)
    model = TinyNet()
    buf = io.BytesIO()
    gputorch.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="TinyNet"):
        gputorch.load(buf)
    buf.seek(0)
    back = gputorch.load(buf, weights_only=False)
    x = gputorch.randn(2, 3, dtype=gputorch.float64)
    assert_close(back(x), model(x), rtol=0, atol=0)


def test_optimizer_state_dict_round_trip(device):
    gputorch.manual_seed(0)
    model = TinyNet().to(device)
    opt = gputorch.optim.Adam(model.parameters(), lr=0.01)
    x = gputorch.randn(4, 3, dtype=gputorch.float64, device=device)
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    saved_model, saved_opt = _round_trip((model.state_dict(), opt.state_dict()))
    # continue training the original and a restored copy: same steps
    clone = TinyNet().to(device)
    clone.load_state_dict(saved_model)
    clone_opt = gputorch.optim.Adam(clone.parameters(), lr=0.01)
    clone_opt.load_state_dict(saved_opt)
    for m, o in ((model, opt), (clone, clone_opt)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    for a, b in zip(model.parameters(), clone.parameters()):
        assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("kind", ["str", "pathlib", "file"])
def test_paths_and_files(tmp_path, kind):
    t = gputorch.arange(5)
    path = tmp_path / "t.pt"
    if kind == "file":
        with open(path, "wb") as f:
            gputorch.save(t, f)
        with open(path, "rb") as f:
            back = gputorch.load(f)
    else:
        target = str(path) if kind == "str" else path
        gputorch.save(t, target)
        back = gputorch.load(target)
    assert back.tolist() == [0, 1, 2, 3, 4]


def test_plain_pickle_of_gputorch_objects_loads():
    buf = io.BytesIO()
    pickle.dump({"w": gputorch.ones(2, 2), "p": nn.Parameter(gputorch.zeros(1))}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="numpy"):   # the arrays inside are NumPy's
        gputorch.load(buf)
    buf.seek(0)
    back = gputorch.load(buf, weights_only=False)
    assert_close(back["w"], np.ones((2, 2), np.float32)) and type(back["p"]) is nn.Parameter
    buf.seek(0)
    assert gputorch.load(buf, map_location="cpu", weights_only=False)["w"].shape == (2, 2)


# ------------------------------------------------------------------------------------------ map_location
def _needs_cuda(count=1):
    if gputorch.cuda.device_count() < count:
        pytest.skip(f"needs {count} (real or simulated) CUDA device(s)")


def test_cuda_tensor_loaded_on_cpu():
    _needs_cuda()
    t = gputorch.randn(3, device="cuda")
    p = nn.Parameter(gputorch.randn(2, device="cuda"))
    back, param = _round_trip([t, p], map_location="cpu")
    assert back.device.type == "cpu" and param.device.type == "cpu" and type(param) is nn.Parameter
    assert_close(back, t.cpu(), rtol=0, atol=0)
    assert _round_trip(t).device == t.device


def test_map_location_variants():
    _needs_cuda(2)
    t0 = gputorch.arange(3.0, device="cuda:0")
    t1 = gputorch.arange(3.0, device="cuda:1")
    a, b = _round_trip([t0, t1], map_location={"cuda:1": "cuda:0"})
    assert a.device == gputorch.device("cuda:0") and b.device == gputorch.device("cuda:0")
    a, b = _round_trip([t0, t1], map_location=gputorch.device("cuda:1"))
    assert a.device == gputorch.device("cuda:1") and b.device == gputorch.device("cuda:1")
    seen = []

    def fn(tensor, location):
        seen.append((tensor.device.type, location))
        return None if location == "cuda:0" else tensor

    a, b = _round_trip([t0, t1], map_location=fn)
    assert seen == [("cpu", "cuda:0"), ("cpu", "cuda:1")]
    assert a.device == gputorch.device("cuda:0") and b.device.type == "cpu"
    assert_close(b, np.arange(3.0, dtype=np.float32))


def test_map_location_on_cpu_only_values():
    t = gputorch.arange(4.0)
    assert _round_trip(t, map_location="cpu").device.type == "cpu"
    assert _round_trip(t, map_location={"cpu": "cpu"}).tolist() == [0, 1, 2, 3]
    assert _round_trip(t, map_location=lambda s, loc: s * 2).tolist() == [0, 2, 4, 6]
    with pytest.raises(TypeError, match="map_location"):
        _round_trip(t, map_location=3)


@pytest.mark.skipif(gputorch.cuda.is_available(), reason="checks the no-CUDA message")
def test_cuda_checkpoint_without_cuda_explains():
    buf = io.BytesIO()
    gputorch.save(gputorch.ones(2), buf)
    # rewrite the recorded device, as if the file came from a GPU machine
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):
                assert b"X\x03\x00\x00\x00cpu" in data       # BINUNICODE "cpu"
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x04\x00\x00\x00cuda")
            dst.writestr(name, data)
    out.seek(0)
    with pytest.raises(RuntimeError, match="map_location=gputorch.device\\('cpu'\\)"):
        gputorch.load(out)
    out.seek(0)
    assert gputorch.load(out, map_location="cpu").tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------------------------ weights_only
def test_weights_only_rejects_arbitrary_callables():
    CALLS.clear()
    buf = io.BytesIO()
    gputorch.save({"weights": gputorch.ones(2), "evil": Malicious()}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="record_call was not an allowed global"):
        gputorch.load(buf)
    assert CALLS == []
    buf.seek(0)
    assert gputorch.load(buf, weights_only=False)["evil"] == "pwned" and CALLS == ["pwned"]


def test_weights_only_rejects_os_system(tmp_path):
    marker = tmp_path / "marker"
    buf = io.BytesIO()
    pickle.dump(Malicious(os.system, f"touch {marker}"), buf, protocol=2)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        gputorch.load(buf)
    assert not marker.exists()


def test_safe_globals_extend_the_allow_list():
    buf = io.BytesIO()
    gputorch.save(Custom(gputorch.ones(1)), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        gputorch.load(buf)
    with safe_globals([Custom]):
        buf.seek(0)
        assert gputorch.load(buf).value.tolist() == [1.0]
    assert Custom not in get_safe_globals()
    add_safe_globals([Custom])
    try:
        buf.seek(0)
        assert isinstance(gputorch.load(buf), Custom)
    finally:
        clear_safe_globals()


def test_pickle_module_with_weights_only_is_an_error():
    buf = io.BytesIO()
    gputorch.save(gputorch.ones(1), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        gputorch.load(buf, pickle_module=pickle, weights_only=True)
    buf.seek(0)
    assert gputorch.load(buf, pickle_module=pickle).tolist() == [1.0]


def test_not_a_gputorch_archive():
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("x/other.txt", b"hi")
    buf.seek(0)
    with pytest.raises(RuntimeError, match="not a gputorch or PyTorch checkpoint"):
        gputorch.load(buf)


# ------------------------------------------------------------------------------------------ safetensors
def test_safetensors_round_trip(tmp_path, device):
    pytest.importorskip("safetensors")
    gputorch.manual_seed(0)
    model = TinyNet().to(device)
    path = tmp_path / "model.safetensors"
    save_safetensors(model.state_dict(), path, metadata={"format": "pt"})
    sd = load_safetensors(path, device=device)
    assert set(sd) == set(model.state_dict())
    for name, t in model.state_dict().items():
        assert sd[name].device == t.device and sd[name].dtype == t.dtype
        assert_close(sd[name], t, rtol=0, atol=0)
    with pytest.raises(TypeError, match="not a Tensor"):
        save_safetensors({"x": 1}, tmp_path / "bad.safetensors")


def test_pytorch_loads_gputorch_weights(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    gputorch.manual_seed(0)
    model = TinyNet()
    path = tmp_path / "from_gputorch.safetensors"
    save_safetensors(model.state_dict(), path)
    weights = st_torch.load_file(str(path))

    class TorchTinyNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
            self.proj = torch.nn.Linear(3, 2, dtype=torch.float64)
            self.register_buffer("offset", torch.zeros(2, dtype=torch.float64))

        def forward(self, x):
            return self.proj(x * self.scale) + self.offset

    theirs = TorchTinyNet()
    theirs.load_state_dict(weights)
    x = np.random.default_rng(1).standard_normal((4, 3))
    expected = model(gputorch.tensor(x)).detach()
    assert_close(theirs(torch.from_numpy(x)), expected, rtol=1e-12, atol=1e-12)
    for name, t in model.state_dict().items():
        assert_close(weights[name], t, rtol=0, atol=0)


def test_gputorch_loads_pytorch_weights(tmp_path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    path = tmp_path / "from_torch.safetensors"
    st_torch.save_file(theirs.state_dict(), str(path))
    ours = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    result = ours.load_state_dict(load_safetensors(path))
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    assert_close(ours(gputorch.tensor(x)), theirs(torch.from_numpy(x)), rtol=1e-6, atol=1e-6)


def test_safetensors_missing_package_message(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match="'safetensors' package"):
        save_safetensors({"x": gputorch.ones(1)}, tmp_path / "x.safetensors")


def test_aliases_of_one_storage_are_stored_once_and_stay_shared():
    w = gputorch.randn(50, 20)
    sd = collections.OrderedDict(embed=w.detach(), head=w.detach(), other=w[:5].detach())
    buf = io.BytesIO()
    gputorch.save(sd, buf)
    import zipfile
    entries = [n for n in zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist() if "/data/" in n]
    assert len(entries) == 1                      # one storage, as PyTorch saves it
    buf.seek(0)
    back = gputorch.load(buf)
    assert back["embed"] is not back["head"]
    assert_close(back["other"], w[:5], rtol=0, atol=0)
    back["embed"].add_(1)
    assert_close(back["head"], back["embed"], rtol=0, atol=0)
    assert_close(back["other"], w[:5] + 1, rtol=0, atol=0)   # the slice views the same storage


def test_tied_parameters_in_a_model_state_dict():
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)) if hasattr(nn, "Embedding") \
        else None
    if model is None:
        pytest.skip("nn.Embedding is not available")
    model[1].weight = model[0].weight
    back = _round_trip(model.state_dict())
    assert back["0.weight"].data_ptr() == back["1.weight"].data_ptr()


def test_parameter_attributes_round_trip_but_internals_are_not_planted():
    p = nn.Parameter(gputorch.ones(2))
    p.tag = "keep"
    back = _round_trip(p)
    assert back.tag == "keep"
    from gputorch.nn.parameter import _rebuild_parameter

    class Planted:
        def __reduce__(self):
            return (_rebuild_parameter, (gputorch.ones(1), True, {"_hooks": {0: set}, "ok": 1}))

    back = _round_trip(Planted())
    assert back.ok == 1 and "_hooks" not in back.__dict__


def test_weights_only_refuses_opcodes_that_mutate_other_objects():
    # bytearray() then APPENDS: a plain unpickler calls bytearray.extend; PyTorch's weights-only
    # unpickler (and gputorch's) allows APPENDS on lists only
    crafted = b"\x80\x02cbuiltins\nbytearray\n)R(KAe."
    assert pickle.loads(crafted) == bytearray(b"A")
    with pytest.raises(pickle.UnpicklingError, match="APPENDS.*bytearray"):
        gputorch.load(io.BytesIO(crafted))


class TaggedTensor(gputorch.Tensor):
    """A user Tensor subclass: saved under its own class name."""


def test_tensor_subclass_round_trip():
    t = TaggedTensor._make_subclass(gputorch.arange(3.0), False)
    t.label = "x"
    buf = io.BytesIO()
    gputorch.save(t, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="TaggedTensor"):
        gputorch.load(buf)
    buf.seek(0)
    back = gputorch.load(buf, weights_only=False)
    assert type(back) is TaggedTensor and back.label == "x" and back.tolist() == [0, 1, 2]
