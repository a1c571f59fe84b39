"""Comparisons, logical/bitwise ops, classification, where and closeness: values, dtypes,
promotion, operators, in-place forms, gradients of where, and errors."""
import operator

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close, to_numpy

COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]
OPERATORS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
             "gt": operator.gt, "ge": operator.ge}
ALIASES = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_match_torch(name, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (3, 4)).astype(np.float32)
    b = rng.integers(-2, 3, (4,)).astype(np.float64)
    cases = [(a, b), (a.astype(np.int64), b), (a.astype(np.int32), np.array(1.5, dtype=np.float32)),
             (a > 0, a.astype(np.uint8))]
    for x, y in cases:
        gx, gy = gputorch.tensor(x, device=device), gputorch.tensor(y, device=device)
        tx, ty = torch.tensor(x), torch.tensor(y)
        out = getattr(gputorch, name)(gx, gy)
        assert out.dtype is gputorch.bool
        assert_close(out, getattr(torch, name)(tx, ty))
        assert_close(OPERATORS[name](gx, gy), OPERATORS[name](tx, ty))
        assert_close(getattr(gx, name)(gy), getattr(tx, name)(ty))
    for scalar in [1, 1.5, True, -0.5]:
        gx, tx = gputorch.tensor(a.astype(np.int64), device=device), torch.tensor(a.astype(np.int64))
        assert_close(getattr(gputorch, name)(gx, scalar), getattr(torch, name)(tx, scalar))
        assert_close(OPERATORS[name](gx, scalar), OPERATORS[name](tx, scalar))
        assert_close(OPERATORS[name](scalar, gx), OPERATORS[name](scalar, tx))   # reflected by Python


def test_aliases(device):
    x = gputorch.tensor([1.0, 2.0, 3.0], device=device)
    for alias, name in ALIASES.items():
        assert_close(getattr(gputorch, alias)(x, 2.0), getattr(gputorch, name)(x, 2.0))
        assert_close(getattr(x, alias)(2.0), getattr(x, name)(2.0))
        y = x.clone()
        getattr(y, alias + "_")(2.0)
        assert_close(y, getattr(x, name)(2.0).float())


def test_comparisons_with_nan_and_float16(device):
    nan = float("nan")
    x = gputorch.tensor([nan, 1.0, 2.0], device=device)
    assert to_numpy(x == x).tolist() == [False, True, True]
    assert to_numpy(x != x).tolist() == [True, False, False]
    assert to_numpy(x < nan).tolist() == [False, False, False]
    h = gputorch.tensor([1.0], dtype=gputorch.float16, device=device)
    assert (h == 1.0001).item() is True        # the scalar is taken in the tensor's dtype
    assert (h == gputorch.tensor([1.0001], device=device)).item() is False


def test_comparisons_are_not_differentiable(device):
    x = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    for name in COMPARISONS:
        out = getattr(gputorch, name)(x, 1.5)
        assert out.grad_fn is None and not out.requires_grad


def test_inplace_comparisons_keep_dtype(device):
    torch = pytest.importorskip("torch")
    for name in COMPARISONS:
        for data, other in [([1.0, 2.0, 3.0], [1, 5, 2]), ([1, 2, 3], 2.5), ([True, False], [True, True])]:
            g, t = gputorch.tensor(data, device=device), torch.tensor(data)
            go = gputorch.tensor(other, device=device) if isinstance(other, list) else other
            to = torch.tensor(other) if isinstance(other, list) else other
            r = getattr(g, name + "_")(go)
            assert r is g
            assert_close(g, getattr(t, name + "_")(to))


def test_inplace_comparison_on_graph_gives_zero_grad(device):
    torch = pytest.importorskip("torch")
    x = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).eq_(gputorch.tensor([2.0, 0.0], device=device))
    ty = (tx * 2).eq_(torch.tensor([2.0, 0.0]))
    assert y.grad_fn.name() == ty.grad_fn.name() == "EqBackward1"
    assert (x * 1).lt_(3).grad_fn.name() == "LtBackward0"
    (y * 3).sum().backward()
    assert to_numpy(x.grad).tolist() == [0.0, 0.0]


def test_operator_fallbacks_and_hash(device):
    x = gputorch.tensor([1, 2], device=device)
    assert (x == None) is False  # noqa: E711
    assert (x != "a") is True
    with pytest.raises(TypeError):
        x < None  # noqa: B015
    with pytest.raises(TypeError, match="must be Tensor or Number"):
        gputorch.eq(x, "a")
    assert hash(x) == hash(x)
    assert len({x, gputorch.tensor([1, 2], device=device)}) == 2
    assert {x: 1}[x] == 1


def test_broadcast_errors(device):
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of tensor b \(3\) "
                                           r"at non-singleton dimension 0"):
        gputorch.eq(gputorch.ones(2, device=device), gputorch.ones(3, device=device))
    with pytest.raises(RuntimeError, match="at non-singleton dimension 1"):
        gputorch.ones(4, 2, device=device) < gputorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        gputorch.ones(2, device=device).lt_(gputorch.ones(2, 2, device=device))


# ---------------------------------------------------------------- logical and bitwise
def test_logical_ops(device):
    torch = pytest.importorskip("torch")
    a, b = [0.0, 1.5, -2.0, float("nan")], [0, 0, 3, 1]
    ga, gb, ta, tb = (gputorch.tensor(a, device=device), gputorch.tensor(b, device=device),
                      torch.tensor(a), torch.tensor(b))
    for name in ["logical_and", "logical_or", "logical_xor"]:
        assert_close(getattr(gputorch, name)(ga, gb), getattr(torch, name)(ta, tb))
        assert_close(getattr(ga, name)(gb), getattr(ta, name)(tb))
        g, t = ga.clone(), ta.clone()
        assert getattr(g, name + "_")(gb) is g
        assert_close(g, getattr(t, name + "_")(tb))
        with pytest.raises(TypeError, match="must be Tensor"):
            getattr(gputorch, name)(ga, 0)
    assert_close(gputorch.logical_not(ga), torch.logical_not(ta))
    i = gputorch.tensor(b, device=device)
    assert_close(i.logical_not_(), torch.tensor(b).logical_not_())
    out = gputorch.empty(4, dtype=gputorch.bool, device=device)
    assert gputorch.logical_and(ga, gb, out=out) is out


def test_bitwise_ops(device):
    torch = pytest.importorskip("torch")
    pairs = [([True, False, True], [True, True, False]), ([5, -3, 12], [3, 6, -1]),
             (np.array([5, 200], dtype=np.uint8), np.array([3, 7], dtype=np.int8))]
    for name, op in [("bitwise_and", operator.and_), ("bitwise_or", operator.or_), ("bitwise_xor", operator.xor)]:
        for a, b in pairs:
            ga, gb, ta, tb = (gputorch.tensor(a, device=device), gputorch.tensor(b, device=device),
                              torch.tensor(a), torch.tensor(b))
            assert_close(getattr(gputorch, name)(ga, gb), getattr(torch, name)(ta, tb))
            assert_close(op(ga, gb), op(ta, tb))
        gi, ti = gputorch.tensor([1, 2, 3], device=device), torch.tensor([1, 2, 3])
        assert_close(op(gi, 2), op(ti, 2))
        assert_close(op(3, gi), op(3, ti))                         # __rand__ and friends
        gbool, tbool = gputorch.tensor([True, False], device=device), torch.tensor([True, False])
        assert_close(op(gbool, True), op(tbool, True))
        assert_close(op(gbool, 1), op(tbool, 1))                   # bool with int -> int64
        g, t = gputorch.tensor([6, 5], device=device), torch.tensor([6, 5])
        getattr(g, name + "_")(3)
        getattr(t, name + "_")(3)
        assert_close(g, t)
        with pytest.raises(NotImplementedError, match=name):
            getattr(gputorch, name)(gputorch.ones(2, device=device), gputorch.ones(2, device=device))
        with pytest.raises(NotImplementedError):
            getattr(gputorch, name)(gi, 2.0)
    i, ti = gputorch.tensor([6, 5], device=device), torch.tensor([6, 5])
    i &= gputorch.tensor([True, False], device=device)
    ti &= torch.tensor([True, False])
    assert_close(i, ti)
    i |= 8
    ti |= 8
    assert_close(i, ti)
    b = gputorch.tensor([True, False], device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        b &= gputorch.tensor([1, 2], device=device)


def test_bitwise_not(device):
    torch = pytest.importorskip("torch")
    for data, dtype in [([True, False], "bool"), ([5, -6], "int8"), ([1, 254], "uint8"), ([7, -1], "int64")]:
        g = gputorch.tensor(np.array(data, dtype=dtype), device=device)
        t = torch.tensor(np.array(data, dtype=dtype))
        assert_close(~g, ~t)
        assert_close(gputorch.bitwise_not(g), torch.bitwise_not(t))
        g.bitwise_not_()
        assert_close(g, ~t)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):   # Python's operator
        ~gputorch.ones(2, device=device)
    with pytest.raises(NotImplementedError, match="bitwise_not"):
        gputorch.bitwise_not(gputorch.ones(2, device=device))


# ---------------------------------------------------------------- classification
def test_classification(device):
    torch = pytest.importorskip("torch")
    nan, inf = float("nan"), float("inf")
    data = [0.0, -0.0, 1.0, -2.0, inf, -inf, nan, -nan]
    for dtype in ["float32", "float64", "float16"]:
        g, t = gputorch.tensor(data, dtype=getattr(gputorch, dtype), device=device), \
            torch.tensor(data, dtype=getattr(torch, dtype))
        for name in ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit"]:
            out = getattr(gputorch, name)(g)
            assert out.dtype is gputorch.bool
            assert_close(out, getattr(torch, name)(t))
            assert_close(getattr(g, name)(), getattr(t, name)())
    for data, dtype in [([0, -3, 5], "int64"), ([0, 255], "uint8"), ([True, False], "bool")]:
        g, t = gputorch.tensor(np.array(data, dtype=dtype), device=device), torch.tensor(np.array(data, dtype=dtype))
        for name in ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit"]:
            assert_close(getattr(gputorch, name)(g), getattr(torch, name)(t))


# ---------------------------------------------------------------- where
def test_where_values_and_promotion(device):
    torch = pytest.importorskip("torch")
    cond = [True, False, True]
    gc, tc = gputorch.tensor(cond, device=device), torch.tensor(cond)
    cases = [
        ([1, 2, 3], [1.5, 2.5, 3.5]), ([1, 2, 3], 2.5), (1, 2.5), (1, 2), (True, 3),
        (np.array([1, 2, 3], dtype=np.int32), 2), (np.array([1, 2, 3], dtype=np.int32), np.array(2.0)),
        (1.5, np.array([1, 2, 3], dtype=np.int32)), (np.array([1, 2, 3], dtype=np.float16), 2.0),
    ]
    for x, y in cases:
        gx = gputorch.tensor(x, device=device) if not isinstance(x, (int, float)) else x
        gy = gputorch.tensor(y, device=device) if not isinstance(y, (int, float)) else y
        tx = torch.tensor(x) if not isinstance(x, (int, float)) else x
        ty = torch.tensor(y) if not isinstance(y, (int, float)) else y
        assert_close(gputorch.where(gc, gx, gy), torch.where(tc, tx, ty))
    x = gputorch.tensor([[1.0], [2.0]], device=device)
    assert gputorch.where(gc, x, 0.0).shape == (2, 3)
    assert_close(x.where(gputorch.tensor([[True], [False]], device=device), 7.0), np.array([[1.0], [7.0]],
                                                                                            dtype=np.float32))
    out = gputorch.empty(3, device=device)
    assert gputorch.where(gc, 1.0, 0.0, out=out) is out


def test_where_gradients(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    c = rng.uniform(size=(2, 3)) > 0.5
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3,))
    gx, gy = gputorch.tensor(x, device=device, requires_grad=True), gputorch.tensor(y, device=device,
                                                                                     requires_grad=True)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    out = gputorch.where(gputorch.tensor(c, device=device), gx, gy)
    expected = torch.where(torch.tensor(c), tx, ty)
    assert out.grad_fn.name() == expected.grad_fn.name() == "WhereBackward0"
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    assert_close(gx.grad, tx.grad)
    assert_close(gy.grad, ty.grad)
    cond = gputorch.tensor(c, device=device)
    gx = gputorch.tensor(x, device=device, requires_grad=True)
    gy = gputorch.tensor(y, device=device, requires_grad=True)
    assert gradcheck(lambda a, b: gputorch.where(cond, a, b), (gx, gy))
    assert gradgradcheck(lambda a, b: gputorch.where(cond, a * a, b), (gx, gy))
    assert gradcheck(lambda a: gputorch.where(cond, 2.0, a), (gy,))
    assert gradgradcheck(lambda a: gputorch.where(cond, a ** 2, 0.0), (gx,))
    f32 = gputorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    gputorch.where(gputorch.tensor([True, False], device=device), f32,
                   gputorch.tensor([0.0, 0.0], dtype=gputorch.float64, device=device)).sum().backward()
    assert f32.grad.dtype is gputorch.float32 and to_numpy(f32.grad).tolist() == [1.0, 0.0]


def test_where_single_argument(device):
    torch = pytest.importorskip("torch")
    data = [[1, 0, 2], [0, 0, 3]]
    got = gputorch.where(gputorch.tensor(data, device=device))
    expected = torch.where(torch.tensor(data))
    assert len(got) == len(expected) == 2
    for g, t in zip(got, expected):
        assert_close(g, t)


def test_where_errors(device):
    x = gputorch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        gputorch.where(gputorch.tensor([1, 0, 1], device=device), x, x)
    with pytest.warns(UserWarning, match="uint8"):
        out = gputorch.where(gputorch.tensor([1, 0, 1], dtype=gputorch.uint8, device=device), x, 0.0)
    assert to_numpy(out).tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(TypeError):
        gputorch.where(gputorch.tensor([True], device=device), x)
    with pytest.raises(TypeError, match="must be Tensor or Number"):
        gputorch.where(gputorch.tensor([True], device=device), x, "a")
    with pytest.raises(RuntimeError, match="must match the size"):
        gputorch.where(gputorch.tensor([True, False], device=device), x, 0.0)


# ---------------------------------------------------------------- closeness
def test_isclose_allclose_equal(device):
    torch = pytest.importorskip("torch")
    nan, inf = float("nan"), float("inf")
    a = [1.0, nan, inf, 1.0, -inf, 1e-9, 0.0]
    b = [1.0 + 1e-9, nan, inf, 1.1, inf, 0.0, 1e-7]
    for dtype in ["float32", "float64"]:
        ga, gb = (gputorch.tensor(v, dtype=getattr(gputorch, dtype), device=device) for v in (a, b))
        ta, tb = (torch.tensor(v, dtype=getattr(torch, dtype)) for v in (a, b))
        for kwargs in [{}, {"equal_nan": True}, {"rtol": 0.2, "atol": 0.0}, {"atol": 1e-6}]:
            assert_close(gputorch.isclose(ga, gb, **kwargs), torch.isclose(ta, tb, **kwargs))
            assert gputorch.allclose(ga, gb, **kwargs) == torch.allclose(ta, tb, **kwargs)
            assert ga.isclose(gb, **kwargs).dtype is gputorch.bool
    i, j = gputorch.tensor([1, 2, 3], device=device), gputorch.tensor([1, 2, 4], device=device)
    assert_close(gputorch.isclose(i, j, rtol=0.1, atol=0), torch.isclose(torch.tensor([1, 2, 3]),
                                                                          torch.tensor([1, 2, 4]), rtol=0.1, atol=0))
    f = gputorch.tensor([1.0, 2.0, 3.0], device=device)
    assert gputorch.allclose(f, f + 1e-9) is True
    assert gputorch.equal(f, i) is True and gputorch.equal(f, f.double()) is True
    assert gputorch.equal(f, j) is False and gputorch.equal(f, gputorch.tensor([1.0, 2.0], device=device)) is False
    assert gputorch.equal(gputorch.tensor([nan], device=device), gputorch.tensor([nan], device=device)) is False
    assert f.equal(f) is True
    with pytest.raises(RuntimeError, match="Float did not match Long"):
        gputorch.isclose(f, i)
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero"):
        gputorch.isclose(f, f, rtol=-1)
    with pytest.raises(TypeError, match="must be Tensor"):
        gputorch.isclose(f, 1.0)
    with pytest.raises(RuntimeError, match="must match the size"):
        gputorch.allclose(f, gputorch.ones(2, device=device))


def test_empty_and_zero_dim(device):
    e = gputorch.zeros(0, 2, device=device)
    assert (e == 0).shape == (0, 2) and gputorch.isnan(e).shape == (0, 2)
    assert gputorch.where(e > 0, e, 1.0).shape == (0, 2)
    assert gputorch.allclose(e, e) is True and gputorch.equal(e, e) is True
    s = gputorch.tensor(2.0, device=device)
    assert (s > 1).shape == () and bool(s > 1) is True
    assert ((s > 1) & True).item() is True
    nc = gputorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device).t()
    assert to_numpy(nc > 2.5).tolist() == [[False, True], [False, True]]


def test_out_of_range_int_scalars_wrap_like_torch(device):
    torch = pytest.importorskip("torch")
    data = np.array([0, 1, 255], dtype=np.uint8)
    g, t = gputorch.tensor(data, device=device), torch.tensor(data)
    for op in [operator.eq, operator.lt, operator.ge, operator.and_, operator.xor]:
        assert_close(op(g, -1), op(t, -1))
        assert_close(op(g, 256 + 7), op(t, 256 + 7))
    i8 = np.array([44, -1], dtype=np.int8)
    assert_close(gputorch.tensor(i8, device=device) == 300, torch.tensor(i8) == 300)


def test_float_ops_convert_each_integer_operand_directly(device):
    torch = pytest.importorskip("torch")
    a = np.array([3, 4], dtype=np.uint8)
    b = np.array(-3)                      # 0-dim int64: the common integer dtype would be uint8
    assert_close(gputorch.atan2(gputorch.tensor(a, device=device), gputorch.tensor(b, device=device)),
                 torch.atan2(torch.tensor(a), torch.tensor(b)))
