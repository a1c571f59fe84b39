"""nn.Module: registration, traversal, state dicts, device/dtype moves, modes, hooks, printing."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import gputorch
from gputorch import nn
from gputorch.nn.modules import module as module_mod
from tests._helpers import assert_close, to_numpy
from tests.nn._models import copy_state, model_classes, state_to_numpy

Affine, Block, Net = model_classes(gputorch)


def _norm(text):
    """Messages and reprs compared with torch's: our names say gputorch where torch's say torch."""
    return text.replace("gputorch.", "torch.")


def _torch():
    return pytest.importorskip("torch")


class Leaf(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.weight = nn.Parameter(gputorch.ones(2, 2, device=device))

    def forward(self, x):
        return x @ self.weight


# ================================================================ registration
def test_setattr_registers_parameters_buffers_modules(device):
    m = Leaf(device)
    assert list(m._parameters) == ["weight"]
    m.child = Leaf(device)
    m.buf = nn.Buffer(gputorch.zeros(3, device=device))
    m.register_buffer("tmp", gputorch.zeros(1, device=device), persistent=False)
    m.plain = gputorch.zeros(1, device=device)
    assert m._modules["child"] is m.child
    assert "buf" in m._buffers and "tmp" in m._buffers and m._non_persistent_buffers_set == {"tmp"}
    assert "plain" in m.__dict__ and "plain" not in m._buffers
    assert m.weight is m._parameters["weight"]
    assert [n for n, _ in m.named_parameters()] == ["weight", "child.weight"]
    assert [n for n, _ in m.named_buffers()] == ["buf", "tmp"]
    assert list(m.state_dict()) == ["weight", "buf", "child.weight"]


def test_assigning_to_registered_names(device):
    m = Leaf(device)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.(cuda.)?FloatTensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        m.weight = gputorch.ones(2, 2, device=device)
    m.weight = None  # allowed: the parameter slot stays, with no value
    assert "weight" in m._parameters and m.weight is None
    assert list(m.parameters()) == [] and list(m.state_dict()) == []
    m.weight = nn.Parameter(gputorch.zeros(1, device=device))
    assert m.weight.shape == (1,)
    with pytest.raises(TypeError, match="cannot assign 'test_module.Leaf' as parameter 'weight'"):
        m.weight = Leaf(device)  # a parameter name only takes a Parameter or None
    del m.weight
    m.weight = Leaf(device)
    assert "weight" not in m._parameters and isinstance(m._modules["weight"], Leaf)
    with pytest.raises(TypeError, match="as child module 'weight'"):
        m.weight = 3
    m.weight = None
    assert m._modules["weight"] is None
    m.weight = nn.Parameter(gputorch.ones(1, device=device))  # a Parameter takes a module name over
    assert "weight" in m._parameters and "weight" not in m._modules
    m.register_buffer("b", gputorch.zeros(1, device=device), persistent=False)
    m.b = gputorch.ones(2, device=device)  # reassigning keeps it a (non-persistent) buffer
    assert m._buffers["b"].shape == (2,) and "b" in m._non_persistent_buffers_set
    with pytest.raises(TypeError, match="as buffer 'b'"):
        m.b = "x"
    m.b = nn.Parameter(gputorch.ones(1, device=device))  # a Parameter takes the name over
    assert "b" in m._parameters and "b" not in m._buffers and "b" not in m._non_persistent_buffers_set


def test_delattr(device):
    m = Leaf(device)
    m.register_buffer("b", gputorch.zeros(1, device=device), persistent=False)
    m.c = Leaf(device)
    m.d = 5
    for name in ("weight", "b", "c", "d"):
        delattr(m, name)
        assert not hasattr(m, name)
    assert not m._non_persistent_buffers_set
    with pytest.raises(AttributeError):
        del m.nothing


def test_registration_errors_match_torch():
    torch = _torch()

    def cases(lib):
        class B(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2, 2))
                self.x = lib.ones(1)
        b = B()
        return [
            lambda: b.register_parameter("a.b", None),
            lambda: b.register_parameter("", None),
            lambda: b.register_parameter(3, None),
            lambda: b.register_parameter("x", None),
            lambda: b.register_parameter("z", lib.ones(1)),
            lambda: b.register_buffer("w", None),
            lambda: b.register_buffer("a.b", None),
            lambda: b.register_buffer("", None),
            lambda: b.register_buffer("q", 3),
            lambda: b.add_module("m", 3),
            lambda: b.add_module("x", lib.nn.Module()),
            lambda: b.add_module("a.b", lib.nn.Module()),
            lambda: b.add_module("", lib.nn.Module()),
            lambda: b.train("x"),
            lambda: b.get_submodule("w"),
            lambda: b.get_submodule("zz"),
            lambda: b.get_parameter("x"),
            lambda: b.get_parameter("nope"),
            lambda: b.get_buffer("w"),
            lambda: b.zz,
            lambda: lib.nn.Module()(1),
            lambda: lib.nn.Module(3),
            lambda: lib.nn.Module(a=1),
            lambda: b.to(lib.int64),
        ]

    for ours, theirs in zip(cases(gputorch), cases(torch)):
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(expected.type) as got:
            ours()
        assert _norm(str(got.value)) == str(expected.value)


def test_assign_before_init_errors():
    class Early(nn.Module):
        def __init__(self, what):
            self.x = what

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early(nn.Parameter(gputorch.ones(1)))
    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        Early(nn.Identity())


def test_non_leaf_parameter_rejected():
    m = nn.Module()
    p = nn.Parameter(gputorch.ones(2))
    p._grad_fn = (p * 2).grad_fn  # simulate a parameter that became a graph output
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'"):
        m.register_parameter("p", p)


def test_registration_hooks():
    seen = []
    handles = [
        module_mod.register_module_parameter_registration_hook(lambda m, n, p: seen.append(("param", n))),
        module_mod.register_module_buffer_registration_hook(lambda m, n, b: seen.append(("buffer", n))),
        module_mod.register_module_module_registration_hook(lambda m, n, c: seen.append(("module", n))),
    ]
    try:
        m = Leaf()
        m.register_buffer("b", gputorch.zeros(1))
        m.c = nn.Identity()
    finally:
        for h in handles:
            h.remove()
    Leaf()
    assert seen == [("param", "weight"), ("buffer", "b"), ("module", "c")]


# ================================================================ traversal, parity with torch
def _build_pair(torch, device="cpu"):
    _, _, TNet = model_classes(torch)
    ours, theirs = Net(device), TNet()
    copy_state(ours, theirs, torch)
    return ours, theirs


def test_names_order_and_shapes_match_torch(device):
    torch = _torch()
    ours, theirs = _build_pair(torch, device)

    def summary(items):
        return [(n, tuple(t.shape)) for n, t in items]

    assert summary(ours.named_parameters()) == summary(theirs.named_parameters())
    assert summary(ours.named_parameters(remove_duplicate=False)) == \
        summary(theirs.named_parameters(remove_duplicate=False))
    assert summary(ours.named_parameters(prefix="net", recurse=False)) == \
        summary(theirs.named_parameters(prefix="net", recurse=False))
    assert summary(ours.named_buffers()) == summary(theirs.named_buffers())
    assert summary(ours.named_buffers(recurse=False)) == summary(theirs.named_buffers(recurse=False))
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_modules(remove_duplicate=False)] == \
        [n for n, _ in theirs.named_modules(remove_duplicate=False)]
    assert [n for n, _ in ours.named_modules(prefix="root")] == [n for n, _ in theirs.named_modules(prefix="root")]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [type(m).__name__ for m in ours.modules()] == [type(m).__name__ for m in theirs.modules()]
    assert [type(m).__name__ for m in ours.children()] == [type(m).__name__ for m in theirs.children()]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)
    assert [tuple(v.shape) for v in sd.values()] == [tuple(v.shape) for v in tsd.values()]
    assert list(sd._metadata) == list(tsd._metadata)
    assert list(sd._metadata.values()) == list(tsd._metadata.values())
    assert list(ours.state_dict(prefix="p.")) == list(theirs.state_dict(prefix="p."))


def test_shared_parameters_listed_once(device):
    m = nn.Module()
    m.a = Leaf(device)
    m.b = Leaf(device)
    m.b.weight = m.a.weight
    assert [n for n, _ in m.named_parameters()] == ["a.weight"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["a.weight", "b.weight"]
    assert list(m.state_dict()) == ["a.weight", "b.weight"]


def test_named_modules_memo():
    m = nn.Module()
    m.a = Leaf()
    m.b = Leaf()
    memo = {m.a}
    assert [n for n, _ in m.named_modules(memo=memo)] == ["", "b"]
    assert m.a in memo and m.b in memo and m in memo


def test_get_submodule_parameter_buffer_and_set_submodule():
    net = Net()
    assert net.get_submodule("") is net
    assert net.get_submodule("blocks.1.fc") is net.blocks[1].fc
    assert net.get_parameter("head.proj.weight") is net.head.proj.weight
    assert net.get_buffer("blocks.0.running") is net.blocks[0].running
    new = Affine(4, 4)
    net.set_submodule("blocks.1.fc", new)
    assert net.blocks[1].fc is new
    net.set_submodule("blocks.1.extra", nn.Identity())
    assert isinstance(net.blocks[1].extra, nn.Identity)
    with pytest.raises(AttributeError, match="has no attribute `missing`"):
        net.set_submodule("blocks.1.missing", nn.Identity(), strict=True)
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name"):
        net.set_submodule("", nn.Identity())


def test_apply_visits_children_first_like_torch():
    torch = _torch()
    _, _, TNet = model_classes(torch)
    ours, theirs = [], []
    Net().apply(lambda m: ours.append(type(m).__name__))
    TNet().apply(lambda m: theirs.append(type(m).__name__))
    assert ours == theirs


def test_dir_lists_registered_names():
    net = Net()
    names = dir(net)
    for n in ("scale", "blocks", "head", "forward", "training", "state_dict"):
        assert n in names
    assert names == sorted(names)
    assert "running" in dir(net.blocks[0])


def test_forward_matches_torch_after_state_copy(device):
    torch = _torch()
    ours, theirs = _build_pair(torch, device)
    ours.double()
    theirs.double()
    x = np.random.default_rng(1).standard_normal((5, 4))
    out = ours(gputorch.tensor(x, device=device))
    expected = theirs(torch.tensor(x))
    assert_close(out, expected, rtol=1e-12, atol=1e-12)


# ================================================================ state dict
def test_state_dict_round_trip_with_torch(device):
    torch = _torch()
    ours, theirs = _build_pair(torch, device)
    for (k, a), (tk, b) in zip(state_to_numpy(ours.state_dict()).items(),
                               state_to_numpy(theirs.state_dict()).items()):
        assert k == tk
        np.testing.assert_array_equal(a, b)
    # torch -> gputorch: new random torch weights land in our existing parameters.
    _, _, TNet = model_classes(torch)
    fresh = TNet()
    params_before = {n: p for n, p in ours.named_parameters()}
    result = copy_state(fresh, ours, gputorch, device)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for n, p in ours.named_parameters():
        assert p is params_before[n]  # copied in place
    for (k, a), (_, b) in zip(state_to_numpy(ours.state_dict()).items(),
                              state_to_numpy(fresh.state_dict()).items()):
        np.testing.assert_array_equal(a, b, err_msg=k)


def test_state_dict_values_are_detached_and_share_storage(device):
    m = Leaf(device)
    sd = m.state_dict()
    w = sd["weight"]
    assert type(w) is gputorch.Tensor and not w.requires_grad
    w.fill_(3.0)
    np.testing.assert_array_equal(to_numpy(m.weight), np.full((2, 2), 3.0))
    kept = m.state_dict(keep_vars=True)
    assert kept["weight"] is m.weight
    dest = OrderedDict()
    assert m.state_dict(destination=dest, prefix="x.") is dest and list(dest) == ["x.weight"]


def test_load_state_dict_copies_under_no_grad_and_keeps_identity(device):
    m = Leaf(device)
    w = m.weight
    new = gputorch.full((2, 2), 7.0, device=device)
    m.load_state_dict({"weight": new})
    assert m.weight is w and w.requires_grad and w.is_leaf
    np.testing.assert_array_equal(to_numpy(w), np.full((2, 2), 7.0))
    new.fill_(1.0)  # a copy, not an alias
    np.testing.assert_array_equal(to_numpy(w), np.full((2, 2), 7.0))


def test_load_state_dict_assign(device):
    m = Leaf(device)
    m.weight.requires_grad_(False)
    new = gputorch.full((2, 2), 2.0, device=device)
    m.load_state_dict({"weight": new}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and not m.weight.requires_grad
    new.fill_(5.0)  # assign keeps the given storage
    np.testing.assert_array_equal(to_numpy(m.weight), np.full((2, 2), 5.0))


def test_load_state_dict_errors_match_torch():
    torch = _torch()

    def attempt(lib):
        class A(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2, 2))
                self.register_buffer("b", lib.zeros(3))

        m = lib.nn.Sequential(A(), A())
        messages = []
        sd = m.state_dict()
        sd["0.w"] = lib.ones(3, 2)
        sd["extra"] = lib.ones(1)
        sd["1.nested.key"] = lib.ones(1)
        del sd["1.w"]
        for bad in (sd, {"0.w": 3}, {"0.w": lib.ones(2, 2), "0.b": lib.zeros(3), "1.w": lib.ones(2, 2),
                                     "1.b": lib.zeros(3), "2.w": lib.ones(1)}):
            with pytest.raises(RuntimeError) as err:
                m.load_state_dict(bad)
            messages.append(str(err.value))
        loose = m.load_state_dict({"0.w": lib.ones(2, 2), "x.y": lib.ones(1)}, strict=False)
        with pytest.raises(TypeError) as err:
            m.load_state_dict([("0.w", lib.ones(2, 2))])
        return messages, loose, str(err.value)

    (ours, loose, type_msg), (theirs, tloose, ttype_msg) = attempt(gputorch), attempt(torch)
    for a, b in zip(ours, theirs):
        assert _norm(a) == b
    assert "size mismatch for 0.w: copying a param with shape" in ours[0]
    assert loose == tloose and repr(loose) == repr(tloose)
    assert loose.missing_keys == ["0.b", "1.w", "1.b"] and loose.unexpected_keys == ["x.y"]
    assert type_msg == ttype_msg


def test_load_state_dict_zero_dim_from_one_element(device):
    m = nn.Module()
    m.s = nn.Parameter(gputorch.tensor(1.0, device=device))
    m.load_state_dict({"s": gputorch.tensor([4.0], device=device)})
    assert m.s.shape == () and m.s.item() == 4.0


def test_load_state_dict_across_devices_and_dtypes(device):
    m = Leaf(device)
    m.load_state_dict({"weight": gputorch.full((2, 2), 2.0, dtype=gputorch.float64)})
    assert m.weight.dtype == gputorch.float32 and str(m.weight.device).startswith(device)
    np.testing.assert_array_equal(to_numpy(m.weight), np.full((2, 2), 2.0))


def test_subclass_load_from_state_dict_migrates_old_keys():
    class Versioned(nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(gputorch.zeros(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                  unexpected_keys, error_msgs):
            version = local_metadata.get("version", None)
            if (version is None or version < 2) and prefix + "old_weight" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "old_weight")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                          unexpected_keys, error_msgs)

    outer = nn.Sequential(Versioned())
    assert outer.state_dict()._metadata["0"] == {"version": 2}
    old = OrderedDict([("0.old_weight", gputorch.tensor([1.0, 2.0]))])
    old._metadata = OrderedDict([("", {"version": 1}), ("0", {"version": 1})])
    result = outer.load_state_dict(old)
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(to_numpy(outer[0].weight), [1.0, 2.0])


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.counter = 3

        def get_extra_state(self):
            return {"counter": self.counter}

        def set_extra_state(self, state):
            self.counter = state["counter"]

    m = nn.Sequential(WithExtra())
    sd = m.state_dict()
    assert list(sd) == ["0._extra_state"]
    other = nn.Sequential(WithExtra())
    other[0].counter = 0
    other.load_state_dict(sd)
    assert other[0].counter == 3
    with pytest.raises(RuntimeError, match='Missing key.*"0._extra_state"'):
        other.load_state_dict({})
    with pytest.raises(RuntimeError, match='Unexpected key.*"0._extra_state"'):
        nn.Sequential(nn.Identity()).load_state_dict(sd)


def test_state_dict_and_load_hooks():
    calls = []
    m = Leaf()
    h1 = m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))

    def post(mod, sd, prefix, meta):
        calls.append(("post", list(sd)))

    h2 = m.register_state_dict_post_hook(post)
    sd = m.state_dict(prefix="a.")
    assert calls == [("pre", "a."), ("post", ["a.weight"])]

    def bad_post(mod, sd, prefix, meta):
        return {}

    h3 = m.register_state_dict_post_hook(bad_post)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()
    for h in (h1, h2, h3):
        h.remove()

    def load_pre(mod, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        calls.append(("load_pre", mod is m, sorted(state_dict)))
        state_dict[prefix + "weight"] = state_dict.pop(prefix + "renamed")

    def load_post(mod, incompatible):
        calls.append(("load_post", list(incompatible.missing_keys), list(incompatible.unexpected_keys)))

    m.register_load_state_dict_pre_hook(load_pre)
    m.register_load_state_dict_post_hook(load_post)
    calls.clear()
    del sd["a.weight"]
    m.load_state_dict({"renamed": gputorch.ones(2, 2)})
    assert calls == [("load_pre", True, ["renamed"]), ("load_post", [], [])]


def test_non_persistent_and_none_buffers_stay_out_of_state_dict():
    m = nn.Module()
    m.register_buffer("kept", gputorch.zeros(1))
    m.register_buffer("dropped", gputorch.zeros(1), persistent=False)
    m.register_buffer("empty", None)
    assert list(m.state_dict()) == ["kept"]
    assert [n for n, _ in m.named_buffers()] == ["kept", "dropped"]
    m.load_state_dict({"kept": gputorch.ones(1)})
    with pytest.raises(RuntimeError, match='Unexpected key.*"dropped"'):
        m.load_state_dict({"kept": gputorch.ones(1), "dropped": gputorch.ones(1)})


# ================================================================ device and dtype moves
def _with_grads(m, device):
    x = gputorch.ones(3, 4, device=device)
    m(x).sum().backward()
    return {n: (p, p.grad) for n, p in m.named_parameters()}


def test_to_dtype_keeps_parameter_and_grad_identity(device):
    m = Net(device)
    before = _with_grads(m, device)
    buffers_before = dict(m.named_buffers())
    assert m.to(gputorch.float64) is m
    for n, p in m.named_parameters():
        p0, g0 = before[n]
        assert p is p0, n
        assert p.dtype == gputorch.float64 and isinstance(p, nn.Parameter) and p.requires_grad
        if g0 is not None:
            assert p.grad is g0 and g0.dtype == gputorch.float64
    bufs = dict(m.named_buffers())
    assert bufs["blocks.0.running"].dtype == gputorch.float64
    assert bufs["blocks.0.steps"].dtype == gputorch.int64  # integer buffers keep their dtype
    assert bufs["blocks.0.running"] is not buffers_before["blocks.0.running"]  # buffers are replaced
    assert m.cache.dtype == gputorch.float32  # unregistered tensors are not touched
    out = m(gputorch.ones(3, 4, dtype=gputorch.float64, device=device))
    assert out.dtype == gputorch.float64


def test_optimizer_style_references_survive_moves(device):
    m = Leaf(device)
    params = list(m.parameters())  # what an optimizer holds
    m.double()
    m.float()
    m.half()
    assert m.weight.dtype == gputorch.float16
    m.float()
    with gputorch.no_grad():
        params[0].fill_(2.0)  # an in-place update through the old reference
    np.testing.assert_array_equal(to_numpy(m.weight), np.full((2, 2), 2.0))
    out = m(gputorch.ones(1, 2, device=device))
    out.sum().backward()
    assert params[0].grad is not None


def test_to_accepts_tensor_forms(device):
    m = Block(device)
    m.to(gputorch.zeros(1, dtype=gputorch.float64, device=device))
    assert m.fc.weight.dtype == gputorch.float64 and m.steps.dtype == gputorch.int64
    m.to(dtype=gputorch.float32)
    assert m.fc.weight.dtype == gputorch.float32
    m.to(device, gputorch.float64, non_blocking=True)
    assert m.fc.weight.dtype == gputorch.float64
    m.to(device=device, dtype=gputorch.float32)
    m.to("cpu")
    assert m.fc.weight.device.type == "cpu"
    m.type(gputorch.float64)  # type() casts every tensor, integers included (like torch)
    assert m.steps.dtype == gputorch.float64 and m.fc.weight.dtype == gputorch.float64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(gputorch.int32)
    pytest.importorskip("ml_dtypes")    # (m is on the CPU now: bfloat16 works there, through ml_dtypes)
    m.bfloat16()
    assert m.fc.weight.dtype == gputorch.bfloat16


def test_to_device_moves_params_grads_and_buffers():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    m = Net()
    before = _with_grads(m, "cpu")
    m.to("cuda")
    for n, p in m.named_parameters():
        p0, g0 = before[n]
        assert p is p0 and p.device.type == "cuda"
        if g0 is not None:
            assert p.grad is g0 and g0.device.type == "cuda"
    assert all(b.device.type == "cuda" for b in m.buffers())
    out = m(gputorch.ones(3, 4, device="cuda"))
    out.sum().backward()  # gradients accumulate into the moved .grad
    assert m.scale.grad.device.type == "cuda"
    m.cpu()
    assert all(p.device.type == "cpu" for p in m.parameters())
    assert all(p.grad is None or p.grad.device.type == "cpu" for p in m.parameters())
    m.cuda()
    assert m.scale.device.type == "cuda"
    if gputorch.cuda.device_count() > 1:
        m.to("cuda:1")
        assert m.scale.device == gputorch.device("cuda:1") and m.scale.grad.device == gputorch.device("cuda:1")
        m.cuda(0)
        assert m.scale.device == gputorch.device("cuda:0")


def test_to_empty_keeps_shapes(device):
    m = Leaf()
    w = m.weight
    m.to_empty(device=device)
    assert m.weight is w and w.shape == (2, 2) and str(w.device).startswith(device)


# ================================================================ modes and gradients
def test_train_eval_propagate():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.blocks.train()
    assert net.blocks[1].training and not net.training and not net.head.training
    net.train()
    assert all(m.training for m in net.modules())


def test_requires_grad_(device):
    net = Net(device)
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.head.requires_grad_()
    assert [n for n, p in net.named_parameters() if p.requires_grad] == ["head.proj.weight", "head.proj.bias"]


def test_zero_grad(device):
    m = Leaf(device)
    m(gputorch.ones(1, 2, device=device)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is g
    np.testing.assert_array_equal(to_numpy(g), np.zeros((2, 2)))
    m.zero_grad()
    assert m.weight.grad is None
    m.zero_grad()  # no grads: nothing to do


# ================================================================ calling and hooks
class Scale(nn.Module):
    def __init__(self, factor=2.0):
        super().__init__()
        self.factor = factor

    def forward(self, x, bias=0.0):
        return x * self.factor + bias


def test_forward_hook_order_and_replacement():
    calls = []
    m = Scale()
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)

    def pre_replace(mod, args):
        calls.append("pre2")
        return args[0] + 1  # a single value is wrapped into a tuple

    m.register_forward_pre_hook(pre_replace)
    m.register_forward_hook(lambda mod, args, out: calls.append(("post1", args[0].item(), out.item())))

    def post_replace(mod, args, out):
        calls.append("post2")
        return out * 10

    m.register_forward_hook(post_replace)
    m.register_forward_hook(lambda mod, args, out: calls.append("post0"), prepend=True)
    g1 = module_mod.register_module_forward_pre_hook(lambda mod, args: calls.append("global_pre"))
    g2 = module_mod.register_module_forward_hook(lambda mod, args, out: calls.append("global_post"))
    try:
        out = m(gputorch.tensor(1.0))
    finally:
        g1.remove()
        g2.remove()
    assert out.item() == 40.0  # (1 + 1) * 2 * 10
    assert calls == ["global_pre", "pre0", "pre1", "pre2", "global_post", "post0", ("post1", 2.0, 4.0), "post2"]


def test_forward_hooks_with_kwargs():
    m = Scale()
    seen = []

    def pre(mod, args, kwargs):
        seen.append(("pre", dict(kwargs)))
        return (args[0] * 3,), {"bias": kwargs.get("bias", 0.0) + 1.0}

    def post(mod, args, kwargs, out):
        seen.append(("post", args[0].item(), dict(kwargs), out.item()))

    h1 = m.register_forward_pre_hook(pre, with_kwargs=True)
    h2 = m.register_forward_hook(post, with_kwargs=True)
    out = m(gputorch.tensor(1.0), bias=0.5)
    assert out.item() == 7.5  # 3 * 2 + 1.5
    assert seen == [("pre", {"bias": 0.5}), ("post", 3.0, {"bias": 1.5}, 7.5)]
    h1.remove()
    h2.remove()
    assert not m._forward_pre_hooks and not m._forward_pre_hooks_with_kwargs
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs
    m.register_forward_pre_hook(lambda mod, args, kwargs: "bad", with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, new_kwargs\)"):
        m(gputorch.tensor(1.0))


def test_always_call_hooks_run_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    calls = []
    m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    g = module_mod.register_module_forward_hook(lambda mod, args, out: calls.append("global"), always_call=True)
    try:
        with pytest.raises(ValueError, match="boom"):
            m(gputorch.ones(1))
    finally:
        g.remove()
    assert calls == ["global", ("always", None)]


def test_hook_handles_remove_and_context_manager():
    m = Scale()
    calls = []
    h = m.register_forward_hook(lambda mod, args, out: calls.append("a"))
    with m.register_forward_pre_hook(lambda mod, args: calls.append("b")):
        m(gputorch.ones(1))
    m(gputorch.ones(1))
    h.remove()
    h.remove()  # removing twice is harmless
    m(gputorch.ones(1))
    assert calls == ["b", "a", "a"]
    assert not m._forward_hooks and not m._forward_pre_hooks


def test_global_hooks_see_every_module_call():
    seen = []
    h = module_mod.register_module_forward_hook(lambda mod, args, out: seen.append(type(mod).__name__))
    try:
        nn.Sequential(Scale(), nn.Identity())(gputorch.ones(1))
    finally:
        h.remove()
    nn.Identity()(gputorch.ones(1))
    assert seen == ["Scale", "Identity", "Sequential"]


def _bw_record(lib, pre_scale=None, replace_input=None, no_input_grad=False):
    """Run a two-input, two-output module with backward hooks; return the hook records and grads."""

    class Two(lib.nn.Module):
        def forward(self, x, y, k):
            return x * y, (x * 3).sum() + y.sum()

    records = []
    m = Two()

    def pre(mod, grad_output):
        records.append(("pre", [None if g is None else g.detach().cpu().numpy().copy() for g in grad_output]))
        if pre_scale is not None:
            return tuple(None if g is None else g * pre_scale for g in grad_output)
        return None

    def full(mod, grad_input, grad_output):
        records.append(("full", [None if g is None else g.detach().cpu().numpy().copy() for g in grad_input],
                        [None if g is None else g.detach().cpu().numpy().copy() for g in grad_output]))
        if replace_input is not None:
            return tuple(g * replace_input if g is not None and g.is_floating_point() else g for g in grad_input)
        return None

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(full)
    rng = np.random.default_rng(3)
    xa, ya = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    x = lib.tensor(xa, requires_grad=not no_input_grad)
    y = lib.tensor(ya)
    k = lib.tensor([1, 2])
    a, b = m(x, y, k)
    w = lib.tensor(rng.standard_normal((2, 3)), requires_grad=no_input_grad)
    loss = (a * a).sum() + b * 2 if not no_input_grad else (a * w).sum()
    loss.backward()
    grad = (x if not no_input_grad else w).grad.detach().cpu().numpy().copy()
    return records, grad, (a.requires_grad, b.requires_grad)


def _assert_records_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for r, t in zip(ours, theirs):
        assert r[0] == t[0]
        for lists in zip(r[1:], t[1:]):
            assert len(lists[0]) == len(lists[1])
            for a, b in zip(*lists):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"pre_scale": 2.0}, {"replace_input": -1.0}, {"no_input_grad": True}])
def test_full_backward_hooks_match_torch(kwargs):
    torch = _torch()
    ours, ograd, oflags = _bw_record(gputorch, **kwargs)
    theirs, tgrad, tflags = _bw_record(torch, **kwargs)
    _assert_records_equal(ours, theirs)
    np.testing.assert_allclose(ograd, tgrad, rtol=1e-12)
    assert oflags == tflags


def test_backward_hook_nodes_and_order_in_nested_modules(device):
    torch = _torch()

    def run(lib, dev):
        calls = []
        seq = lib.nn.Sequential(Scale(3.0) if lib is gputorch else _TorchScale(torch, 3.0),
                                Scale(5.0) if lib is gputorch else _TorchScale(torch, 5.0))
        for i, sub in enumerate([seq, seq[0], seq[1]]):
            sub.register_full_backward_pre_hook(lambda mod, go, i=i: calls.append(("pre", i)))
            sub.register_full_backward_hook(
                lambda mod, gi, go, i=i: calls.append(("full", i, float(gi[0].sum()), float(go[0].sum()))))
        x = lib.ones(2, device=dev, requires_grad=True) if lib is gputorch else lib.ones(2, requires_grad=True)
        out = seq(x)
        node = type(out.grad_fn).__name__
        out.sum().backward()
        return calls, node, float(x.grad.sum())

    ours = run(gputorch, device)
    theirs = run(torch, "cpu")
    assert ours == theirs
    assert ours[1] == "BackwardHookFunctionBackward"


class _TorchScale:
    """Scale for torch (the test module above is a gputorch module)."""

    def __new__(cls, torch, factor):
        class TScale(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.factor = factor

            def forward(self, x, bias=0.0):
                return x * self.factor + bias

        return TScale()


def test_global_full_backward_hooks():
    calls = []
    h1 = module_mod.register_module_full_backward_pre_hook(lambda mod, go: calls.append("global_pre"))
    h2 = module_mod.register_module_full_backward_hook(lambda mod, gi, go: calls.append("global_full"))
    try:
        m = Scale()
        m.register_full_backward_hook(lambda mod, gi, go: calls.append("local_full"))
        x = gputorch.ones(2, requires_grad=True)
        m(x).sum().backward()
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            module_mod.register_module_backward_hook(lambda *a: None)
    finally:
        h1.remove()
        h2.remove()
        module_mod._global_is_full_backward_hook = None
    assert calls == ["global_pre", "global_full", "local_full"]
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0])


def test_backward_hook_removal_and_no_grad_paths():
    m = Scale()
    calls = []
    h = m.register_full_backward_hook(lambda mod, gi, go: calls.append("full"))
    x = gputorch.ones(2, requires_grad=True)
    with gputorch.no_grad():
        out = m(x)  # no graph: no hook nodes
    assert out.grad_fn is None
    out = m(gputorch.ones(2))  # nothing requires grad
    assert out.grad_fn is None
    h.remove()
    m(x).sum().backward()
    assert calls == []
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m.register_backward_hook(lambda *a: None)


def test_backward_hook_wrong_length_errors():
    m = Scale()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = gputorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError,
                       match="Backward hook returned an invalid number of grad_input, got 2, but expected 1"):
        m(x).sum().backward()
    m2 = Scale()
    m2.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output"):
        m2(x).sum().backward()


def test_non_full_backward_hook_on_output_grad_fn():
    m = Scale()
    seen = []
    m.register_backward_hook(lambda mod, gi, go: seen.append((mod is m, len(gi), len(go))))
    x = gputorch.ones(2, requires_grad=True)
    m(x).sum().backward()
    assert seen and seen[0][0] is True


def test_call_without_hooks_is_forward(device):
    m = Scale()
    x = gputorch.ones(2, device=device)
    assert_close(m(x), m.forward(x))
    m.forward = lambda x: x - 1  # instance attribute forward is honoured
    np.testing.assert_array_equal(to_numpy(m(x)), [0.0, 0.0])


# ================================================================ printing, copying, pickling
def test_repr_matches_torch():
    torch = _torch()
    ours, theirs = _build_pair(torch)
    assert _norm(repr(ours)) == repr(theirs)
    assert repr(nn.Module()) == "Module()"

    class Multi(nn.Module):
        def extra_repr(self):
            return "line one\nline two"

    m = Multi()
    assert repr(m) == "Multi(\n  line one\n  line two\n)"
    m.child = Multi()
    assert repr(m) == "Multi(\n  line one\n  line two\n  (child): Multi(\n    line one\n    line two\n  )\n)"


def test_deepcopy_and_pickle_module(device):
    net = Net(device)
    _with_grads(net, device)
    dup = copy.deepcopy(net)
    assert dup.shared is dup.blocks[0].fc  # sharing is kept
    for (n, p), (_, q) in zip(net.named_parameters(), dup.named_parameters()):
        assert q is not p and isinstance(q, nn.Parameter) and q.requires_grad
        np.testing.assert_array_equal(to_numpy(p), to_numpy(q), err_msg=n)
    with gputorch.no_grad():
        net.scale.fill_(9.0)
    assert dup.scale.item() == 1.0


class Composite(nn.Module):
    """A module-level (picklable) model."""

    def __init__(self):
        super().__init__()
        self.first = Leaf()
        self.rest = nn.Sequential(Leaf(), nn.Identity())
        self.register_buffer("scratch", gputorch.zeros(1), persistent=False)
        self.scale = nn.Parameter(gputorch.full((1,), 2.0))

    def forward(self, x):
        return self.rest(self.first(x)) * self.scale


def test_pickle_module_round_trip():
    net = Composite()
    net.register_forward_hook(_module_level_hook)
    back = pickle.loads(pickle.dumps(net))
    assert list(back.state_dict()) == list(net.state_dict())
    assert isinstance(back.scale, nn.Parameter) and back.scale.requires_grad
    assert back._non_persistent_buffers_set == {"scratch"}
    assert len(back._forward_hooks) == 1
    x = gputorch.ones(3, 2)
    assert_close(back(x), net(x))
    assert back(x) is not None


def _module_level_hook(mod, args, out):
    return None


def test_setstate_fills_missing_hook_dicts():
    m = Leaf()
    state = m.__getstate__()
    for key in ("_forward_pre_hooks", "_forward_hooks_with_kwargs", "_non_persistent_buffers_set",
                "_is_full_backward_hook", "_backward_pre_hooks", "_load_state_dict_post_hooks"):
        state.pop(key)
    fresh = Leaf.__new__(Leaf)
    fresh.__setstate__(state)
    assert fresh._forward_pre_hooks == OrderedDict() and fresh._non_persistent_buffers_set == set()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh(gputorch.ones(1, 2))


def test_share_memory_refuses_rather_than_training_copies():
    with pytest.raises(NotImplementedError, match="shared memory"):
        gputorch.nn.Linear(2, 2).share_memory()
