"""Checkpoints exchanged with PyTorch itself: ``torch.save`` -> ``gputorch.load`` and
``gputorch.save`` -> ``torch.load(weights_only=True)``, every dtype byte for byte, shared storages and
views, Parameters, model and optimizer state dicts, weights-only refusals, map_location, and the
legacy and gputorch 0.1.0 formats."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _bits(dtype, n=24, seed=0):
    """``n`` elements of ``dtype`` from random bytes (floats include NaNs, infinities, subnormals)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    return np.frombuffer(rng.bytes(n * np.dtype(dtype).itemsize), dtype=dtype).copy()


def _raw(x):
    """The elements' bytes (a torch or gputorch tensor), for byte-exact comparison."""
    a = x.detach().cpu().numpy() if hasattr(x, "detach") else x
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def _via_torch(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def _via_gputorch(obj):
    buf = io.BytesIO()
    gputorch.save(obj, buf)
    buf.seek(0)
    return buf


def _torch_load(buf, **kwargs):
    return torch.load(buf, weights_only=True, map_location="cpu", **kwargs)


# ------------------------------------------------------------------------------------- tensors
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_byte_exact_both_ways(dtype, device):
    data = _bits(dtype).reshape(4, 6)
    theirs = torch.from_numpy(data)
    ours = gputorch.load(_via_torch(theirs), map_location=device)
    assert ours.dtype.name == dtype and ours.shape == (4, 6) and ours.device.type == device
    assert _raw(ours) == data.tobytes()
    back = _torch_load(_via_gputorch(ours))
    assert back.dtype == getattr(torch, dtype) and back.shape == (4, 6)
    assert _raw(back) == data.tobytes()


def test_views_of_one_storage_load_as_views(device):
    w = torch.arange(24, dtype=torch.float64).reshape(4, 6)
    obj = {"w": w, "t": w.t(), "s": w[1:, ::2], "row": w[2], "flat": w.view(-1)[5:9]}
    ours = gputorch.load(_via_torch(obj), map_location=device)
    for key, t in obj.items():
        assert ours[key].shape == tuple(t.shape) and ours[key].stride() == t.stride()
        assert_close(ours[key], t, rtol=0, atol=0)
    ours["w"].mul_(-1)                                  # an in-place write is seen through every view
    for key, t in obj.items():
        assert_close(ours[key], -t, rtol=0, atol=0)


def test_gputorch_views_stay_views_in_torch(device):
    w = gputorch.arange(24, dtype=gputorch.float32, device=device).reshape(4, 6)
    obj = {"w": w, "t": w.t(), "s": w[1:, ::2], "row": w[2]}
    buf = _via_gputorch(obj)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert sum("/data/" in n for n in names) == 1           # one storage for the four tensors
    theirs = _torch_load(buf)
    ptr = theirs["w"].untyped_storage().data_ptr()
    expected_offsets = {"w": 0, "t": 0, "s": 6, "row": 12}
    for key, t in obj.items():
        assert theirs[key].untyped_storage().data_ptr() == ptr
        assert theirs[key].stride() == t.stride() and theirs[key].storage_offset() == expected_offsets[key]
        assert_close(t, theirs[key], rtol=0, atol=0)
    theirs["w"].add_(100)
    assert theirs["s"][0, 0].item() == 106.0


def test_layouts_torch_cannot_describe_are_saved_as_copies():
    flipped = gputorch.arange(6.0).flip(0)
    theirs = _torch_load(_via_gputorch({"f": flipped, "e": gputorch.zeros(0, 3), "z": gputorch.tensor(2.5)}))
    assert theirs["f"].tolist() == [5, 4, 3, 2, 1, 0]
    assert theirs["e"].shape == (0, 3) and theirs["z"].item() == 2.5 and theirs["z"].dim() == 0


def test_meta_tensors_both_ways():
    ours = gputorch.load(_via_torch({"m": torch.empty(2, 3, device="meta").t()}))["m"]
    assert ours.device.type == "meta" and ours.shape == (3, 2) and ours.stride() == (1, 3)
    p = nn.Parameter(gputorch.empty(4, device="meta", dtype=gputorch.float16))
    theirs = torch.load(_via_gputorch(p), weights_only=True)
    assert theirs.is_meta and theirs.dtype == torch.float16 and type(theirs) is torch.nn.Parameter


def test_parameters_and_requires_grad_both_ways(device):
    p = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
    frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    leaf = torch.ones(2, requires_grad=True)
    tagged = torch.nn.Parameter(torch.zeros(1))
    tagged.note = "kept"
    a, b, c, d = gputorch.load(_via_torch([p, frozen, leaf, tagged]), map_location=device)
    assert type(a) is nn.Parameter and a.requires_grad and a.is_leaf
    assert_close(a, p, rtol=0, atol=0)
    assert type(b) is nn.Parameter and not b.requires_grad
    assert type(c) is gputorch.Tensor and c.requires_grad and c.is_leaf
    assert type(d) is nn.Parameter and d.note == "kept"
    tp, tb, tc, td = _torch_load(_via_gputorch([a, b, c, d]))
    assert type(tp) is torch.nn.Parameter and tp.requires_grad and torch.equal(tp, p)
    assert type(tb) is torch.nn.Parameter and not tb.requires_grad
    assert type(tc) is torch.Tensor and tc.requires_grad
    assert td.note == "kept"


def test_metadata_objects_both_ways():
    theirs = {"dtype": torch.float16, "size": torch.Size([2, 3]), "dev": torch.device("cuda", 1),
              "cpu": torch.device("cpu"), "ints": {1: (2, 3.5, None, True)}, "s": {1, 2}, "c": 1 + 2j,
              "b": b"\x00\xff", "text": "é"}
    ours = gputorch.load(_via_torch(theirs))
    assert ours["dtype"] is gputorch.float16 and isinstance(ours["size"], gputorch.Size)
    assert ours["size"] == (2, 3) and ours["dev"] == gputorch.device("cuda", 1)
    assert ours["cpu"] == gputorch.device("cpu")
    plain = ("ints", "s", "c", "b", "text")
    assert {k: ours[k] for k in plain} == {k: theirs[k] for k in plain}
    back = _torch_load(_via_gputorch(ours))
    assert back == theirs


# ------------------------------------------------------------------------------------- models
def _torch_net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Tanh(),
                               torch.nn.Linear(4, 3)).double()


def _our_net(device):
    return nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 3)).double().to(device)


def test_torch_state_dict_into_gputorch_model(device):
    theirs = _torch_net()
    theirs.train()
    theirs(torch.randn(8, 5, dtype=torch.float64))       # running statistics move
    theirs.eval()
    sd = gputorch.load(_via_torch(theirs.state_dict()), map_location=device)
    assert isinstance(sd, collections.OrderedDict) and list(sd) == list(theirs.state_dict())
    assert sd._metadata == theirs.state_dict()._metadata
    ours = _our_net(device)
    result = ours.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys
    ours.eval()
    for name, t in theirs.state_dict().items():
        assert _raw(ours.state_dict()[name]) == _raw(t), name
    x = np.random.default_rng(1).standard_normal((6, 5))
    assert_close(ours(gputorch.tensor(x, device=device)), theirs(torch.from_numpy(x)), rtol=1e-12, atol=1e-12)


def test_gputorch_state_dict_into_torch_model(device, tmp_path):
    gputorch.manual_seed(0)
    ours = _our_net(device)
    ours(gputorch.randn(8, 5, dtype=gputorch.float64, device=device))
    ours.eval()
    path = tmp_path / "net.pt"
    gputorch.save(ours.state_dict(), path)
    assert zipfile.ZipFile(path).namelist()[0] == "net/data.pkl"       # named as torch names it
    theirs = _torch_net()
    theirs.load_state_dict(torch.load(path, weights_only=True, map_location="cpu"))
    theirs.eval()
    for name, t in ours.state_dict().items():
        assert _raw(theirs.state_dict()[name]) == _raw(t), name
    x = np.random.default_rng(2).standard_normal((6, 5))
    assert_close(ours(gputorch.tensor(x, device=device)), theirs(torch.from_numpy(x)), rtol=1e-12, atol=1e-12)


def _torch_mlp():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3)).double()


def _our_mlp(device):
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3)).double().to(device)


def _train(model, opt, x, lib, steps=2):
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()


def test_optimizer_state_dicts_both_ways(device):
    x_np = np.random.default_rng(3).standard_normal((4, 5))
    theirs = _torch_mlp()
    t_opt = torch.optim.Adam(theirs.parameters(), lr=0.01)
    _train(theirs, t_opt, torch.from_numpy(x_np), torch)
    model_sd, opt_sd = gputorch.load(_via_torch((theirs.state_dict(), t_opt.state_dict())), map_location=device)
    assert isinstance(opt_sd["state"][0]["step"], gputorch.Tensor) and list(opt_sd["state"]) == list(range(4))
    ours = _our_mlp(device)
    ours.load_state_dict(model_sd)
    o_opt = gputorch.optim.Adam(ours.parameters(), lr=0.01)
    o_opt.load_state_dict(opt_sd)
    x = gputorch.tensor(x_np, device=device)
    _train(ours, o_opt, x, gputorch, steps=1)
    _train(theirs, t_opt, torch.from_numpy(x_np), torch, steps=1)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert_close(a, b, rtol=1e-12, atol=1e-12)
    # and back: torch continues from gputorch's optimizer state
    t_model_sd, t_opt_sd = _torch_load(_via_gputorch((ours.state_dict(), o_opt.state_dict())))
    fresh = _torch_mlp()
    fresh.load_state_dict(t_model_sd)
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.01)
    fresh_opt.load_state_dict(t_opt_sd)
    _train(fresh, fresh_opt, torch.from_numpy(x_np), torch, steps=1)
    _train(ours, o_opt, x, gputorch, steps=1)
    for a, b in zip(ours.parameters(), fresh.parameters()):
        assert_close(a, b, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------- safety
class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class Harmless:
    def __init__(self, value):
        self.value = value


def test_malicious_torch_checkpoint_runs_nothing(tmp_path):
    evil = Evil()
    evil.marker = tmp_path / "pwned"
    buf = _via_torch({"w": torch.ones(2), "x": evil})
    with pytest.raises(pickle.UnpicklingError, match=r"\.system was not an allowed global") as info:
        gputorch.load(buf)
    assert "system" in str(info.value) and "weights_only=False" in str(info.value)
    assert not evil.marker.exists()


def test_weights_only_refuses_other_globals_and_false_trusts_them():
    buf = _via_torch({"obj": Harmless(torch.arange(3))})
    with pytest.raises(pickle.UnpicklingError, match="test_serialization_torch.Harmless was not an allowed global"):
        gputorch.load(buf)
    buf.seek(0)
    obj = gputorch.load(buf, weights_only=False)["obj"]
    assert isinstance(obj, Harmless) and obj.value.tolist() == [0, 1, 2]
    buf.seek(0)
    with gputorch.serialization.safe_globals([Harmless]):
        assert gputorch.load(buf)["obj"].value.tolist() == [0, 1, 2]


def test_whole_torch_model_with_weights_only_false():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    buf = _via_torch(theirs)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        gputorch.load(buf)
    buf.seek(0)
    ours = gputorch.load(buf, weights_only=False)        # torch.nn.* resolves to gputorch.nn.*
    assert isinstance(ours, nn.Sequential)
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    assert_close(ours(gputorch.tensor(x)), theirs(torch.from_numpy(x)), rtol=1e-6, atol=1e-6)


def test_unsupported_dtype_is_named():
    """A storage class gputorch lacks (a quantized one, written in over bfloat16's name) is named."""
    raw = zipfile.ZipFile(io.BytesIO(_via_torch(torch.ones(2, dtype=torch.bfloat16)).getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in raw.namelist():
            data = raw.read(name)
            if name.endswith("data.pkl"):
                data = data.replace(b"BFloat16Storage", b"QUInt8Storage")
            dst.writestr(name, data)
    out.seek(0)
    with pytest.raises(TypeError, match="quint8"):
        gputorch.load(out)


def test_bfloat16_round_trips_with_torch():
    pytest.importorskip("ml_dtypes")
    values = [0.1, -7.0, 3.3, 1e30]
    ours = gputorch.load(_via_torch(torch.tensor(values, dtype=torch.bfloat16)))
    assert ours.dtype is gputorch.bfloat16
    buf = io.BytesIO()
    gputorch.save(ours, buf)
    buf.seek(0)
    theirs = torch.load(buf)
    assert theirs.dtype is torch.bfloat16
    assert theirs.tolist() == ours.tolist() == torch.tensor(values, dtype=torch.bfloat16).tolist()


def test_out_of_bounds_view_is_refused():
    buf = _via_torch(torch.arange(4.0))
    raw = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in raw.namelist():
            data = raw.read(name)
            if name.endswith("data.pkl"):     # claim 5 elements of a 4-element storage
                data = data.replace(b"K\x04\x85", b"K\x05\x85", 1)
            dst.writestr(name, data)
    out.seek(0)
    with pytest.raises(RuntimeError, match="storage"):
        gputorch.load(out)


# ------------------------------------------------------------------------------------- map_location
def test_map_location_variants_on_torch_files():
    buf = _via_torch({"a": torch.arange(3.0), "b": torch.arange(2)})
    assert gputorch.load(buf, map_location="cpu")["a"].tolist() == [0, 1, 2]
    buf.seek(0)
    assert gputorch.load(buf, map_location=gputorch.device("cpu"))["b"].tolist() == [0, 1]
    buf.seek(0)
    assert gputorch.load(buf, map_location={"cpu": "cpu"})["a"].tolist() == [0, 1, 2]
    seen = []
    buf.seek(0)
    out = gputorch.load(buf, map_location=lambda storage, loc: seen.append(loc) or storage * 2)
    assert seen == ["cpu", "cpu"] and out["a"].tolist() == [0, 2, 4]


def test_cuda_tensors_keep_their_device():
    if gputorch.cuda.device_count() < 2:
        pytest.skip("needs two (real or simulated) CUDA devices")
    t = gputorch.arange(4.0, device="cuda:1")
    buf = _via_gputorch({"t": t, "v": t[1:]})
    assert b"cuda:1" in zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("archive/data.pkl")
    back = gputorch.load(buf)
    assert back["t"].device == gputorch.device("cuda:1") and back["v"].tolist() == [1, 2, 3]
    back["t"].add_(1)
    assert back["v"].tolist() == [2, 3, 4]
    buf.seek(0)
    assert gputorch.load(buf, map_location={"cuda:1": "cuda:0"})["t"].device == gputorch.device("cuda:0")
    buf.seek(0)
    assert _torch_load(buf)["v"].tolist() == [1, 2, 3]                   # torch (CPU build) with map_location


@pytest.mark.skipif(gputorch.cuda.is_available(), reason="checks the message without CUDA")
def test_cuda_checkpoint_without_cuda():
    buf = _via_torch(torch.ones(2))
    raw = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in raw.namelist():
            data = raw.read(name)
            dst.writestr(name, data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
                         if name.endswith("data.pkl") else data)
    out.seek(0)
    with pytest.raises(RuntimeError, match=r"CUDA device.*map_location=gputorch.device\('cpu'\)"):
        gputorch.load(out)
    out.seek(0)
    assert gputorch.load(out, map_location="cpu").tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------------------- other formats
def test_torch_legacy_format(device):
    w = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    buf = io.BytesIO()
    torch.save({"w": w, "t": w.t(), "i": torch.tensor([7, 8], dtype=torch.int16),
                "p": torch.nn.Parameter(torch.ones(2))}, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    back = gputorch.load(buf, map_location=device)
    assert back["w"].device.type == device
    assert_close(back["t"], w.t(), rtol=0, atol=0)
    assert back["i"].tolist() == [7, 8] and type(back["p"]) is nn.Parameter
    back["w"].add_(1)
    assert_close(back["t"], w.t() + 1, rtol=0, atol=0)


def test_gputorch_0_1_0_files_still_load(device):
    from gputorch._serialization.gputorch_v1 import write_v1
    w = gputorch.arange(6.0, device=device)
    obj = {"w": w, "again": w, "p": nn.Parameter(gputorch.ones(2, device=device)), "n": 3}
    buf = io.BytesIO()
    write_v1(obj, buf)
    assert b"archive/format" in buf.getvalue()
    buf.seek(0)
    back = gputorch.load(buf)
    assert back["w"] is back["again"] and back["w"].device == w.device and back["n"] == 3
    assert_close(back["w"], w, rtol=0, atol=0) and type(back["p"]) is nn.Parameter


def test_mmap_maps_storages_copy_on_write(tmp_path, device):
    w = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    path = tmp_path / "m.pt"
    torch.save({"w": w, "t": w.t()}, path)
    before = path.read_bytes()
    back = gputorch.load(path, mmap=True, map_location=device)
    assert back["w"].device.type == device
    assert_close(back["t"], w.t(), rtol=0, atol=0)
    back["w"].add_(1)
    assert_close(back["t"], w.t() + 1, rtol=0, atol=0)
    assert path.read_bytes() == before                            # the file never changes
    gputorch.save(back, path)                                     # saving over the mapped file is safe
    assert_close(_torch_load(path)["t"], w.t() + 1, rtol=0, atol=0)
    with pytest.raises(ValueError, match="file path"):
        gputorch.load(io.BytesIO(before), mmap=True)
    legacy = tmp_path / "legacy.pt"
    torch.save(w, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="_use_new_zipfile_serialization=True"):
        gputorch.load(legacy, mmap=True)


def test_legacy_format_written_for_torch(device):
    w = gputorch.arange(6, dtype=gputorch.float64, device=device).reshape(2, 3)
    obj = {"w": w, "t": w.t(), "i": gputorch.tensor([7, 8], dtype=gputorch.int16, device=device),
           "p": nn.Parameter(gputorch.ones(2, device=device))}
    buf = io.BytesIO()
    gputorch.save(obj, buf, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(io.BytesIO(buf.getvalue()))
    buf.seek(0)
    theirs = _torch_load(buf)
    assert theirs["t"].untyped_storage().data_ptr() == theirs["w"].untyped_storage().data_ptr()
    assert_close(w.t(), theirs["t"], rtol=0, atol=0)
    assert theirs["i"].tolist() == [7, 8] and type(theirs["p"]) is torch.nn.Parameter
    buf.seek(0)
    assert_close(gputorch.load(buf)["t"], w.t(), rtol=0, atol=0)
