"""In-place variants added with the rest of PyTorch's public API (square_, fmod_, float_power_,
deg2rad_, rad2deg_, ldexp_, copysign_, heaviside_, nextafter_), the top-level function forms of
Tensor methods (torch.abs_, torch.fill, torch.detach...), scalar_tensor, and the tensor attributes
layout/name/volatile/is_inference: values, gradients and PyTorch's errors."""
import warnings

import numpy as np
import pytest

import gputorch
from tests._helpers import assert_close

torch = pytest.importorskip("torch")

DATA = [[-2.5, 0.5, 3.0], [1.25, -0.75, 2.0]]


def _pair(device, data=DATA, **kw):
    return (gputorch.tensor(data, device=device, dtype=gputorch.float64, **kw),
            torch.tensor(data, dtype=torch.float64, **kw))


INPLACE = [
    ("square_", lambda lib, d: ()),
    ("fmod_", lambda lib, d: (1.5,)),
    ("float_power_", lambda lib, d: (lib.tensor([2.0, 0.5, 3.0], dtype=lib.float64, **d),)),
    ("deg2rad_", lambda lib, d: ()),
    ("rad2deg_", lambda lib, d: ()),
    ("ldexp_", lambda lib, d: (lib.tensor([1, 0, 3], **d),)),   # torch: 0 gradient for negative ones
    ("copysign_", lambda lib, d: (lib.tensor([-1.0, 0.0, 2.0], dtype=lib.float64, **d),)),
    ("nextafter_", lambda lib, d: (lib.tensor([10.0], dtype=lib.float64, **d),)),
]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_variant_matches_torch_with_gradient(device, name, args):
    leaf, tleaf = _pair(device, requires_grad=True)
    x, tx = leaf * 1, tleaf * 1
    out = getattr(x, name)(*args(gputorch, {"device": device}))
    getattr(tx, name)(*args(torch, {}))
    assert out is x and x._version == 1
    assert_close(x, tx, 1e-13, 1e-13)
    weights = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    (x * gputorch.tensor(weights, device=device, dtype=gputorch.float64)).sum().backward()
    (tx * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    assert_close(leaf.grad, tleaf.grad, 1e-12, 1e-12)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(leaf, name)(*args(gputorch, {"device": device}))


def test_inplace_errors_match_torch(device):
    ints = gputorch.tensor([1, 2], device=device)
    for call in (lambda t: t.deg2rad_(), lambda t: t.copysign_(-1.0), lambda t: t.square_().bool().square_()):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            call(ints.clone())
    with pytest.raises(RuntimeError, match="float_power_ has dtype Float but the operation's result requires "
                                           "dtype Double"):
        gputorch.ones(2, device=device).float_power_(2)
    x = gputorch.tensor([0.0, -1.0, 2.0], device=device)
    assert_close(x.heaviside_(gputorch.tensor([5.0], device=device)), torch.tensor([5.0, 0.0, 1.0]), 0, 0)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        gputorch.ones(3, device=device).fmod_(gputorch.ones(2, 3, device=device))
    assert_close(gputorch.tensor([7, -7], device=device).fmod_(3), torch.tensor([1, -1]), 0, 0)


def test_top_level_forms_of_tensor_methods(device):
    x, tx = _pair(device)
    for name in ("abs_", "neg_", "negative_", "reciprocal_", "square_", "deg2rad_", "rad2deg_", "zero_"):
        a, ta = x.clone(), tx.clone()
        assert getattr(gputorch, name)(a) is a
        getattr(torch, name)(ta)
        assert_close(a, ta, 1e-13, 1e-13)
    a, ta = x.clone(), tx.clone()
    gputorch.ldexp_(a, gputorch.tensor([1, 2, -1], device=device))
    torch.ldexp_(ta, torch.tensor([1, 2, -1]))
    assert_close(a, ta, 0, 0)
    a, ta = x.clone(), tx.clone()
    gputorch.addmv_(a[0], x.t(), gputorch.ones(2, device=device, dtype=gputorch.float64), beta=2)
    torch.addmv_(ta[0], tx.t(), torch.ones(2, dtype=torch.float64), beta=2)
    assert_close(a, ta, 1e-13, 1e-13)
    assert gputorch.fill_(x.clone(), 3).eq(3).all()
    assert gputorch.is_signed(x) and not gputorch.is_signed(gputorch.tensor([1], dtype=gputorch.uint8))
    assert gputorch.get_device(x) == (-1 if device == "cpu" else 0)
    assert not gputorch.is_inference(x) and not x.is_inference()


def test_fill_is_out_of_place_with_the_value_gradient(device):
    a = gputorch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    v = gputorch.tensor(4.0, device=device, requires_grad=True)
    out = gputorch.fill(a, v)
    assert_close(out, torch.full((3,), 4.0), 0, 0)
    assert_close(a, torch.tensor([1.0, 2.0, 3.0]), 0, 0)
    out.sum().backward()
    assert_close(a.grad, torch.zeros(3), 0, 0)
    assert float(v.grad) == 3.0
    assert_close(gputorch.fill(gputorch.tensor([1, 0], device=device), 3.5), torch.tensor([3, 3]), 0, 0)


def test_detach_functions(device):
    a = gputorch.ones(2, device=device, requires_grad=True)
    b = a * 2
    d = gputorch.detach(b)
    assert not d.requires_grad and d.grad_fn is None
    assert gputorch.detach_(b) is b and b.grad_fn is None and not b.requires_grad


def test_scalar_tensor(device):
    for value in (3, True, 2.5):
        ours = gputorch.scalar_tensor(value, device=device)
        theirs = torch.scalar_tensor(value)
        assert ours.shape == () and ours.dtype == gputorch.float32
        assert float(ours) == float(theirs)
    assert gputorch.scalar_tensor(3, dtype=gputorch.int64).dtype == gputorch.int64
    assert gputorch.scalar_tensor(np.int64(7)).item() == 7.0
    with pytest.raises(TypeError, match="must be Number"):
        gputorch.scalar_tensor(gputorch.ones(()))


def test_layout_name_and_volatile_attributes():
    x = gputorch.ones(2)
    assert x.layout is gputorch.strided and x.name is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert x.volatile is False
        x.volatile = True
    assert [str(w.message)[:18] for w in caught] == ["volatile was remov"] * 2
    with pytest.raises(AttributeError):
        x.name = "w"


def test_frombuffer_shares_memory_and_checks_sizes():
    buffer = bytearray(b"\x01\x02\x03\x04")
    t = gputorch.frombuffer(buffer, dtype=gputorch.int16)
    assert t.tolist() == torch.frombuffer(bytearray(buffer), dtype=torch.int16).tolist()
    buffer[0] = 9
    assert t.tolist()[0] == 9 + 2 * 256                    # the buffer's memory, not a copy
    assert gputorch.frombuffer(buffer, dtype=gputorch.int8, count=2, offset=1).tolist() == [2, 3]
    with pytest.raises(ValueError, match="must be a multiple of element size"):
        gputorch.frombuffer(bytearray(3), dtype=gputorch.int16)
    with pytest.raises(ValueError, match="must not be 0"):
        gputorch.frombuffer(bytearray(), dtype=gputorch.int16)
    with pytest.raises(ValueError, match="must not be greater than actual buffer length"):
        gputorch.frombuffer(bytearray(4), dtype=gputorch.int8, count=5)
    with pytest.warns(UserWarning, match="not writable"):
        gputorch.frombuffer(b"\x01\x02", dtype=gputorch.uint8)


def test_embedding_renorm_and_orgqr(device):
    data = [[3.0, 4.0], [1.0, 0.0], [6.0, 8.0]]
    w, tw = gputorch.tensor(data, device=device), torch.tensor(data)
    assert gputorch.embedding_renorm_(w, gputorch.tensor([0, 2, 0], device=device), 1.0, 2.0) is w
    torch.embedding_renorm_(tw, torch.tensor([0, 2, 0]), 1.0, 2.0)
    assert_close(w, tw, 1e-6, 1e-6)
    with pytest.raises(RuntimeError, match="indices' to have one of the following scalar types"):
        gputorch.embedding_renorm_(w, gputorch.tensor([0.0], device=device), 1.0, 2.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        gputorch.embedding_renorm_(gputorch.ones(2, 2, requires_grad=True), gputorch.tensor([0]), 1.0, 2.0)
    a = np.random.default_rng(1).standard_normal((4, 3))
    tau = [0.5, 1.2]
    A, tA = gputorch.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    q, tq = A.orgqr(gputorch.tensor(tau, dtype=gputorch.float64, device=device)), tA.orgqr(torch.tensor(tau,
                                                                                          dtype=torch.float64))
    assert_close(q, tq, 1e-12, 1e-12)
    q.sum().backward()
    tq.sum().backward()
    assert_close(A.grad, tA.grad, 1e-12, 1e-12)
    empty = gputorch.orgqr(A, gputorch.zeros(0, dtype=gputorch.float64, device=device))
    assert empty.requires_grad and empty.tolist() == torch.eye(4, 3).tolist()


def test_tensor_attributes_of_other_layouts():
    x = gputorch.ones(2)
    assert x.to_dense() is x and x.to_dense(gputorch.float64).dtype == gputorch.float64
    assert x.is_distributed() is False
    with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
        x.reinforce(1.0)
    y = gputorch.ones(2, requires_grad=True)
    assert gputorch.from_dlpack(gputorch.to_dlpack(y)).tolist() == [1.0, 1.0]


def test_nonzero_static_pads_or_truncates(device):
    x = gputorch.tensor([[0, 1], [2, 0]], device=device)
    tx = torch.tensor([[0, 1], [2, 0]])
    for size, fill in ((4, -1), (1, 9), (0, -1)):
        assert_close(x.nonzero_static(size=size, fill_value=fill), tx.nonzero_static(size=size, fill_value=fill), 0, 0)
    assert gputorch.tensor(5, device=device).nonzero_static(size=2).shape == (2, 0)
    with pytest.raises(RuntimeError, match="non-negative integer"):
        x.nonzero_static(size=-1)


def test_as_subclass_keeps_data_and_graph():
    class Marked(gputorch.Tensor):
        pass

    leaf = gputorch.ones(2, requires_grad=True)
    a = leaf * 2
    marked = a.as_subclass(Marked)
    assert type(marked) is Marked and marked.requires_grad and marked.grad_fn is not None
    (marked * 3).sum().backward()
    assert leaf.grad.tolist() == [6.0, 6.0]
    plain = gputorch.zeros(2)
    view = plain.as_subclass(gputorch.nn.Parameter)
    view.add_(1)                                       # the same memory
    assert plain.tolist() == [1.0, 1.0] and not view.requires_grad
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        plain.as_subclass(int)
