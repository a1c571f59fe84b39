"""Containers (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict), Flatten, Unflatten, Identity."""
from collections import OrderedDict

import numpy as np
import pytest

import gputorch
from gputorch import nn
from tests._helpers import assert_close, to_numpy


def _norm(text):
    return text.replace("gputorch.", "torch.")


def _torch():
    return pytest.importorskip("torch")


class AddConst(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        return x + self.c

    def extra_repr(self):
        return f"c={self.c}"


# ================================================================ Sequential
def test_sequential_forward_and_indexing(device):
    a, b, c = AddConst(1), AddConst(10), AddConst(100)
    seq = nn.Sequential(a, b, c)
    x = gputorch.zeros(2, device=device)
    np.testing.assert_array_equal(to_numpy(seq(x)), [111.0, 111.0])
    assert len(seq) == 3 and list(seq) == [a, b, c]
    assert seq[0] is a and seq[-1] is c and seq[-3] is a
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        seq[-4]
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and list(tail) == [b, c]
    assert list(tail._modules) == ["1", "2"]  # a slice keeps the original keys (like torch)
    assert list(seq[::2]) == [a, c]
    assert len(nn.Sequential()) == 0
    np.testing.assert_array_equal(to_numpy(nn.Sequential()(x)), [0.0, 0.0])


def test_sequential_ordered_dict_and_mutation():
    a, b, c, d = (AddConst(i) for i in range(4))
    seq = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert list(seq._modules) == ["first", "second"] and seq.second is b
    seq.append(c)
    assert list(seq._modules) == ["first", "second", "2"]
    seq[1] = d
    assert seq.second is d
    seq = nn.Sequential(a, b)
    seq.insert(0, c)
    assert list(seq) == [c, a, b]
    seq.insert(-1, d)
    assert list(seq) == [c, a, d, b]
    with pytest.raises(IndexError, match="Index out of range: 9"):
        seq.insert(9, a)
    with pytest.raises(AssertionError):
        seq.insert(0, "not a module")
    assert seq.pop(1) is a
    assert list(seq) == [c, d, b] and list(seq._modules) == ["0", "1", "2"]
    del seq[-1]
    assert list(seq) == [c, d]
    seq.extend([a, b])
    assert list(seq) == [c, d, a, b]
    del seq[1:3]
    assert list(seq) == [c, b] and list(seq._modules) == ["0", "1"]
    both = nn.Sequential(a) + nn.Sequential(b, c)
    assert list(both) == [a, b, c] and list(both._modules) == ["0", "1", "2"]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        nn.Sequential(a) + [b]
    acc = nn.Sequential(a)
    acc += nn.Sequential(b)
    assert list(acc) == [a, b]
    assert list(nn.Sequential(a, b) * 2) == [a, b, a, b]
    assert list(2 * nn.Sequential(a)) == [a, a]
    rep = nn.Sequential(a, b)
    rep *= 2
    assert list(rep) == [a, b, a, b]
    with pytest.raises(ValueError, match="Non-positive multiplication factor"):
        nn.Sequential(a) * 0
    assert "0" not in dir(rep)


def test_sequential_params_and_state_dict_keys_match_torch():
    torch = _torch()

    def build(lib):
        class P(lib.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(n))

            def forward(self, x):
                return x * self.w

        seq = lib.nn.Sequential(P(2), lib.nn.Sequential(P(2), P(2)), P(2))
        seq.append(P(2))
        del seq[0]
        seq.insert(1, P(2))
        return seq, seq[1:]

    (s, sl), (t, tl) = build(gputorch), build(torch)
    assert list(s.state_dict()) == list(t.state_dict())
    assert list(sl.state_dict()) == list(tl.state_dict())
    assert _norm(repr(s)) == repr(t)


# ================================================================ ModuleList
def test_module_list():
    mods = [AddConst(i) for i in range(5)]
    ml = nn.ModuleList(mods[:3])
    assert len(ml) == 3 and list(ml) == mods[:3]
    assert ml[-1] is mods[2]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ml[3]
    sub = ml[1:]
    assert isinstance(sub, nn.ModuleList) and list(sub) == mods[1:3] and list(sub._modules) == ["0", "1"]
    ml.append(mods[3])
    ml.extend([mods[4]])
    assert list(ml) == mods
    ml[0] = mods[4]
    assert ml[0] is mods[4]
    ml.insert(1, mods[0])
    assert list(ml) == [mods[4], mods[0], mods[1], mods[2], mods[3], mods[4]]
    assert ml.pop(0) is mods[4]
    del ml[-1]
    assert list(ml) == mods[:4] and list(ml._modules) == ["0", "1", "2", "3"]
    del ml[::2]
    assert list(ml) == [mods[1], mods[3]]
    combined = ml + nn.ModuleList([mods[0]])
    assert isinstance(combined, nn.ModuleList) and list(combined) == [mods[1], mods[3], mods[0]]
    ml += [mods[2]]
    assert list(ml) == [mods[1], mods[3], mods[2]]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        ml.extend(3)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        ml.append(3)
    assert nn.ModuleList() is not None and len(nn.ModuleList()) == 0


def test_module_list_repr_matches_torch():
    torch = _torch()

    class TAdd(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c

        def extra_repr(self):
            return f"c={self.c}"

    ours = nn.ModuleList([AddConst(1), AddConst(1), AddConst(1), AddConst(2), nn.Sequential(AddConst(3))])
    theirs = torch.nn.ModuleList([TAdd(1), TAdd(1), TAdd(1), TAdd(2), torch.nn.Sequential(TAdd(3))])
    assert repr(ours).replace("AddConst", "TAdd") == repr(theirs)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())


# ================================================================ ModuleDict
def test_module_dict():
    a, b, c = AddConst(1), AddConst(2), AddConst(3)
    md = nn.ModuleDict({"b": b, "a": a})
    assert list(md) == ["b", "a"] and list(md.keys()) == ["b", "a"]  # insertion order for dicts
    assert md["a"] is a and "a" in md and "z" not in md and len(md) == 2
    md["c"] = c
    assert list(md.values()) == [b, a, c]
    assert list(md.items())[2] == ("c", c)
    md.update([("d", AddConst(4)), ["e", AddConst(5)]])
    assert list(md) == ["b", "a", "c", "d", "e"]
    assert md.pop("a") is a
    del md["b"]
    assert list(md) == ["c", "d", "e"]
    assert [n for n, _ in md.named_children()] == ["c", "d", "e"]
    md.clear()
    assert len(md) == 0
    with pytest.raises(TypeError, match="ModuleDict.update should be called with an iterable"):
        md.update(3)
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 3; 2 is required"):
        md.update([("a", a, b)])
    with pytest.raises(TypeError, match="ModuleDict update sequence element #0 should be Iterable"):
        md.update([3])
    with pytest.raises(KeyError, match="module name can.*contain"):
        md["x.y"] = a


def test_module_dict_repr_and_keys_match_torch():
    torch = _torch()

    def build(lib):
        return lib.nn.ModuleDict({"z": lib.nn.Identity(), "a": lib.nn.Flatten(),
                                  "m": lib.nn.Sequential(lib.nn.Identity())})

    assert repr(build(gputorch)) == repr(build(torch))


# ================================================================ ParameterList
def test_parameter_list(device):
    t = gputorch.ones(2, device=device)
    p = nn.Parameter(gputorch.zeros(3, device=device))
    pl = nn.ParameterList([t, p])
    assert len(pl) == 2
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad  # a Tensor becomes a Parameter
    assert pl[1] is p and pl[-1] is p
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(gputorch.ones(1, device=device))
    pl.extend([gputorch.ones(4, device=device)])
    pl.append("not a tensor")  # any object can be stored; only tensors are parameters
    assert len(pl) == 5 and pl[4] == "not a tensor"
    assert len(list(pl.parameters())) == 4
    sub = pl[1:3]
    assert isinstance(sub, nn.ParameterList) and sub[0] is p
    pl[0] = gputorch.full((2,), 5.0, device=device)
    assert isinstance(pl[0], nn.Parameter) and pl[0][0].item() == 5.0
    assert [type(x).__name__ for x in pl] == ["Parameter"] * 4 + ["str"]
    with pytest.raises(IndexError):
        pl[5]
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(gputorch.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl(1)
    assert list(pl.state_dict()) == ["0", "1", "2", "3"]


def test_parameter_list_repr_matches_torch():
    torch = _torch()

    def build(lib):
        return lib.nn.ParameterList([lib.zeros(2, 3), lib.nn.Parameter(lib.ones(4, dtype=lib.float64)), "obj"])

    assert _norm(repr(build(gputorch))) == repr(build(torch))


# ================================================================ ParameterDict
def test_parameter_dict(device):
    a = gputorch.ones(2, device=device)
    pd = nn.ParameterDict({"b": a, "a": gputorch.zeros(1, device=device)})
    assert list(pd) == ["a", "b"]  # a plain dict is added in sorted key order (like torch)
    assert isinstance(pd["b"], nn.Parameter) and "a" in pd and len(pd) == 2
    pd2 = nn.ParameterDict(OrderedDict([("z", a), ("y", a)]))
    assert list(pd2) == ["z", "y"]
    pd["c"] = nn.Parameter(gputorch.ones(3, device=device))
    pd["note"] = 3  # non-tensors are kept as plain attributes
    assert pd["note"] == 3 and list(pd.keys()) == ["a", "b", "c", "note"]
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.get("missing") is None and pd.get("missing", 7) == 7
    assert pd.setdefault("c") is pd["c"]
    assert pd.setdefault("d", gputorch.ones(1, device=device)).shape == (1,)
    k, v = pd.popitem()
    assert k == "d" and "d" not in pd
    assert pd.pop("note") == 3
    assert list(reversed(pd)) == ["c", "b", "a"]
    copy = pd.copy()
    assert list(copy) == list(pd) and copy["a"] is pd["a"]
    merged = pd | nn.ParameterDict(OrderedDict([("x", a)]))
    assert list(merged) == ["a", "b", "c", "x"]
    pd |= nn.ParameterDict(OrderedDict([("y", a)]))
    assert "y" in pd
    del pd["y"]
    assert "y" not in pd and not hasattr(pd, "y")
    fk = pd.fromkeys(["p", "q"], gputorch.ones(1, device=device))
    assert list(fk) == ["p", "q"]
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key"):
        pd[3]
    with pytest.raises(RuntimeError, match="ParameterDict should not be called"):
        pd(1)
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []


def test_parameter_dict_repr_and_update_match_torch():
    torch = _torch()

    def build(lib):
        pd = lib.nn.ParameterDict({"w": lib.zeros(2, 3), "b": lib.ones(4, dtype=lib.float64)})
        pd.update([("k", "obj"), ("a", lib.zeros(1))])
        return pd

    ours, theirs = build(gputorch), build(torch)
    assert list(ours) == list(theirs)
    assert _norm(repr(ours)) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_parameter_containers_repr_show_cuda_device():
    if not gputorch.cuda.is_available():
        pytest.skip("needs a (real or simulated) CUDA device")
    pl = nn.ParameterList([gputorch.zeros(2, device="cuda")])
    assert "(cuda:0)" in repr(pl)


# ================================================================ Flatten, Unflatten, Identity
def test_flatten_unflatten_match_torch(device):
    torch = _torch()
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    for ours, theirs in ((nn.Flatten(), torch.nn.Flatten()), (nn.Flatten(0, 2), torch.nn.Flatten(0, 2)),
                         (nn.Flatten(-2), torch.nn.Flatten(-2)),
                         (nn.Unflatten(1, (3, 1)), torch.nn.Unflatten(1, (3, 1))),
                         (nn.Unflatten(-1, [5, 1]), torch.nn.Unflatten(-1, [5, 1])),
                         (nn.Unflatten(2, (2, -1)), torch.nn.Unflatten(2, (2, -1)))):
        xt = gputorch.tensor(x, device=device, requires_grad=True)
        tx = torch.tensor(x, requires_grad=True)
        out, expected = ours(xt), theirs(tx)
        assert_close(out, expected)
        g = np.random.default_rng(1).standard_normal(tuple(expected.shape))
        out.backward(gputorch.tensor(g, device=device))
        expected.backward(torch.tensor(g))
        assert_close(xt.grad, tx.grad)
        assert repr(ours) == repr(theirs)


def test_unflatten_argument_errors():
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, "
                                        "but found element of type float at pos 1"):
        nn.Unflatten(1, (2, 2.0))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 4)


def test_identity(device):
    m = nn.Identity(54, unused_argument1=0.1)
    x = gputorch.ones(2, device=device)
    assert m(x) is x
    assert repr(m) == "Identity()"
    assert list(m.parameters()) == []
