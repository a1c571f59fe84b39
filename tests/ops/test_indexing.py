"""Indexing: getitem/setitem (basic views and advanced copies), index_put, gather/scatter,
index_* ops, masks, take/put, copy_/fill_/zero_, nonzero; parity with PyTorch, gradcheck,
version counters, aliasing and errors."""
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.autograd import gradcheck, gradgradcheck
from tests._helpers import assert_close, to_numpy

SHAPE = (3, 4, 5)
MASK_2D = np.random.default_rng(7).uniform(size=(3, 4)) > 0.5


def rand(*shape, device="cpu", requires_grad=True, seed=0):
    data = np.random.default_rng(seed).uniform(-2, 2, shape)
    return gputorch.tensor(data, dtype=gputorch.float64, device=device, requires_grad=requires_grad)


def on(m, device):
    """``m.tensor`` on the device under test (PyTorch tensors stay on the CPU)."""
    if m is gputorch:
        return lambda data, **kw: gputorch.tensor(data, device=device, **kw)
    return m.tensor


# name: (key(m, tensor_factory), grad_fn name in PyTorch); indexing a (3, 4, 5) tensor
KEYS = {
    "int": (lambda m, T: 1, "SelectBackward0"),
    "neg_int": (lambda m, T: -1, "SelectBackward0"),
    "slice": (lambda m, T: slice(1, 3), "SliceBackward0"),
    "slice_step": (lambda m, T: (slice(None), slice(None, None, 2)), "SliceBackward0"),
    "slice_clamped": (lambda m, T: slice(-10, 10), "SliceBackward0"),
    "ints": (lambda m, T: (1, 2), "SelectBackward0"),
    "int_last_dims": (lambda m, T: (slice(None), 1, -2), "SelectBackward0"),
    "none": (lambda m, T: None, "UnsqueezeBackward0"),
    "none_mid": (lambda m, T: (1, None), "UnsqueezeBackward0"),
    "ellipsis_int": (lambda m, T: (Ellipsis, 1), "SelectBackward0"),
    "ellipsis": (lambda m, T: Ellipsis, "AliasBackward0"),
    "empty_tuple": (lambda m, T: (), "AliasBackward0"),
    "mixed_basic": (lambda m, T: (slice(1, None), None, slice(None, None, 3)), "SliceBackward0"),
    "all_ints": (lambda m, T: (2, 3, 4), "SelectBackward0"),
    "zero_d_tensor": (lambda m, T: T(1), "SelectBackward0"),
    "list": (lambda m, T: [0, 2, 0], "IndexBackward0"),
    "tensor": (lambda m, T: T([2, 0, 2]), "IndexBackward0"),
    "neg_tensor": (lambda m, T: T([-1, 0]), "IndexBackward0"),
    "int32_tensor": (lambda m, T: T([1, 2], dtype=m.int32), "IndexBackward0"),
    "tensor_2d": (lambda m, T: T([[0, 1], [1, 1]]), "IndexBackward0"),
    "slice_tensor": (lambda m, T: (slice(None), T([1, 1, 3])), "IndexBackward0"),
    "two_tensors": (lambda m, T: (T([0, 1, 2]), T([3, 2, 3])), "IndexBackward0"),
    "separated_tensors": (lambda m, T: (T([0, 1]), slice(None), T([4, 0])), "IndexBackward0"),
    "int_and_tensor_apart": (lambda m, T: (0, slice(None), T([0, 1])), "IndexBackward0"),
    "tensor_and_int_apart": (lambda m, T: ([0, 2], slice(None), 1), "IndexBackward0"),
    "int_next_to_tensor": (lambda m, T: (slice(None), 0, T([0, 4])), "IndexBackward0"),
    "mask_1d": (lambda m, T: T([True, False, True]), "IndexBackward0"),
    "mask_2d": (lambda m, T: T(MASK_2D), "IndexBackward0"),
    "mask_then_slice": (lambda m, T: (T(MASK_2D), slice(1, 3)), "IndexBackward0"),
    "mask_list": (lambda m, T: [True, True, False], "IndexBackward0"),
    "bool_scalar": (lambda m, T: True, "IndexBackward0"),
    "zero_d_bool": (lambda m, T: T(False), "IndexBackward0"),
    "none_and_list": (lambda m, T: (None, [1]), "IndexBackward0"),
    "empty_list": (lambda m, T: [], "IndexBackward0"),
    "ellipsis_tensor": (lambda m, T: (Ellipsis, T([0, 0])), "IndexBackward0"),
    "legacy_list_of_slices": (lambda m, T: (1, slice(None), [0, 1]), "IndexBackward0"),
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_getitem_parity(name, device):
    torch = pytest.importorskip("torch")
    key_fn, grad_fn_name = KEYS[name]
    data = np.random.default_rng(1).uniform(-2, 2, SHAPE)
    gx = gputorch.tensor(data, device=device, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    out = gx[key_fn(gputorch, on(gputorch, device))]
    expected = tx[key_fn(torch, on(torch, device))]
    assert_close(out, expected, rtol=0, atol=0)
    assert type(out.grad_fn).__name__ == type(expected.grad_fn).__name__ == grad_fn_name
    g = np.random.default_rng(2).standard_normal(tuple(expected.shape))
    out.backward(gputorch.tensor(g, device=device))
    expected.backward(torch.tensor(g))
    assert_close(gx.grad, tx.grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(KEYS))
def test_getitem_gradcheck(name, device):
    key = KEYS[name][0](gputorch, on(gputorch, device))
    x = rand(*SHAPE, device=device)
    assert gradcheck(lambda a: a[key], (x,))
    assert gradgradcheck(lambda a: a[key], (x,))


@pytest.mark.parametrize("name", [n for n, (_, cls) in KEYS.items() if cls != "IndexBackward0"])
def test_basic_index_is_a_view(name, device):
    key = KEYS[name][0](gputorch, on(gputorch, device))
    x = gputorch.zeros(*SHAPE, device=device)
    v = x[key]
    assert v._base is x
    v.fill_(3.0)
    expected = np.zeros(SHAPE)
    expected[key if not isinstance(key, gputorch.Tensor) else int(key)] = 3.0
    np.testing.assert_array_equal(to_numpy(x), expected)
    assert x._version == v._version == 1


@pytest.mark.parametrize("name", [n for n, (_, cls) in KEYS.items() if cls == "IndexBackward0"])
def test_advanced_index_copies(name, device):
    key = KEYS[name][0](gputorch, on(gputorch, device))
    x = gputorch.zeros(*SHAPE, device=device)
    out = x[key]
    assert out._base is None
    out.fill_(1.0)
    assert not to_numpy(x).any()


def test_getitem_matches_numpy_for_basic_keys(device):
    a = np.arange(60.0).reshape(SHAPE)
    x = gputorch.tensor(a, device=device)
    for key in [(slice(None, None, 2), -1), (Ellipsis, slice(1, -1)), (None, 0, slice(3)), (2, 3, 4)]:
        np.testing.assert_array_equal(to_numpy(x[key]), a[key])


def test_repeated_indices_accumulate_gradients(device):
    x = rand(4, device=device)
    x[[0, 0, 3, 0]].sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 0, 0, 1])
    y = rand(2, 3, device=device)
    (y[gputorch.tensor([1, 1], device=device), gputorch.tensor([2, 2], device=device)] * 2).sum().backward()
    np.testing.assert_array_equal(to_numpy(y.grad), [[0, 0, 0], [0, 0, 4]])


# name: (key(m, T), value(m, T, dtype) -> number or tensor requiring grad)
SETS = {
    "int_scalar": (lambda m, T: 1, lambda m, T: 5.0),
    "slice_tensor_broadcast": (lambda m, T: slice(1, None), lambda m, T: T(np.linspace(0, 1, 5), requires_grad=True)),
    "ints_row": (lambda m, T: (0, slice(1, 3)), lambda m, T: T(np.ones((2, 5)) * 3, requires_grad=True)),
    "ellipsis_col": (lambda m, T: (Ellipsis, 1), lambda m, T: T(np.arange(4.0), requires_grad=True)),
    "tensor_rows": (lambda m, T: T([0, 2]), lambda m, T: T(np.arange(5.0), requires_grad=True)),
    "mask_scalar": (lambda m, T: T(MASK_2D), lambda m, T: -1.5),
    "mask_values": (lambda m, T: T(MASK_2D), lambda m, T: T(np.arange(5.0) + 1, requires_grad=True)),
    "mixed_advanced": (lambda m, T: (slice(None), [1, 3], 0), lambda m, T: T(np.ones((3, 2)), requires_grad=True)),
    "zero_d_value": (lambda m, T: (2, 3), lambda m, T: T(4.0, requires_grad=True)),
    "all": (lambda m, T: Ellipsis, lambda m, T: T(np.full((4, 5), 2.0), requires_grad=True)),
}


def _set(x, key, value):
    y = x * 1
    y[key] = value
    return y


@pytest.mark.parametrize("name", sorted(SETS))
def test_setitem_parity(name, device):
    torch = pytest.importorskip("torch")
    key_fn, value_fn = SETS[name]
    data = np.random.default_rng(1).uniform(-2, 2, SHAPE)
    g = np.random.default_rng(2).standard_normal(SHAPE)
    results = []
    for m in (gputorch, torch):
        T = lambda d, m=m, **kw: (on(m, device)(d, dtype=m.float64, **kw))  # noqa: E731
        x = T(data, requires_grad=True)
        value = value_fn(m, T)
        y = _set(x, key_fn(m, on(m, device)), value)
        y.backward(T(g))
        results.append((y, x.grad, value.grad if isinstance(value, (gputorch.Tensor, torch.Tensor)) else None))
    (gy, gxg, gvg), (ty, txg, tvg) = results
    assert_close(gy, ty, rtol=0, atol=0)
    assert_close(gxg, txg, rtol=1e-12, atol=1e-12)
    if tvg is not None:
        assert_close(gvg, tvg, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SETS))
def test_setitem_gradcheck(name, device):
    key_fn, value_fn = SETS[name]
    key = key_fn(gputorch, on(gputorch, device))
    value = value_fn(gputorch, lambda d, **kw: gputorch.tensor(d, dtype=gputorch.float64, device=device, **kw))
    x = rand(*SHAPE, device=device)
    if isinstance(value, gputorch.Tensor):
        fn = lambda a, v: _set(a, key, v)  # noqa: E731
        inputs = (x, value)
    else:
        fn = lambda a: _set(a, key, value)  # noqa: E731
        inputs = (x,)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_setitem_in_place_semantics(device):
    x = gputorch.zeros(3, 4, device=device)
    row = x[1]
    row[2:] = 5
    np.testing.assert_array_equal(to_numpy(x)[1], [0, 0, 5, 5])
    assert x._version == row._version == 1
    x[gputorch.tensor([0, 2], device=device)] = gputorch.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    assert x._version == 2
    np.testing.assert_array_equal(to_numpy(x)[2], [1, 2, 3, 4])
    x[0] = [9, 8, 7, 6]
    np.testing.assert_array_equal(to_numpy(x)[0], [9, 8, 7, 6])
    ints = gputorch.zeros(3, dtype=gputorch.int64, device=device)
    ints[0] = 2.7
    ints[1:] = gputorch.tensor([1.9, -1.9], device=device)
    assert ints.tolist() == [2, 1, -1] and ints.dtype == gputorch.int64


def test_setitem_value_requiring_grad_makes_target_require_grad(device):
    x = gputorch.zeros(4, device=device)
    v = rand(2, device=device)
    x[1:3] = v
    assert x.requires_grad and type(x.grad_fn).__name__ == "IndexPutBackward0"
    (x * gputorch.arange(4.0, device=device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(v.grad), [1, 2])


def test_setitem_on_leaf_and_saved_tensor_errors(device):
    leaf = rand(3, device=device)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf[0] = 1.0
    with gputorch.no_grad():
        leaf[0] = 1.0
    assert leaf[0].item() == 1.0
    y = leaf * 1
    z = y * y
    y[0] = 2.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_write_into_expanded_tensor_errors(device):
    x = gputorch.zeros(1, 3, device=device).expand(2, 3)
    for write in (lambda: x.fill_(1.0), lambda: x.copy_(gputorch.ones(2, 3, device=device)),
                  lambda: x.__setitem__(Ellipsis, 1.0)):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write()


# name: (fn(m, T, x, s), shape of x, shape of s or None, grad_fn name in PyTorch)
OPS = {
    "gather": (lambda m, T, x, s: x.gather(1, T([[0, 0], [3, 1], [2, 2]])), (3, 4), None, "GatherBackward0"),
    "gather_dim0_small": (lambda m, T, x, s: m.gather(x, 0, T([[2, 0, 1]])), (3, 4), None, "GatherBackward0"),
    "gather_int32": (lambda m, T, x, s: x.gather(-1, T([[1], [0], [1]], dtype=m.int32)), (3, 4), None,
                     "GatherBackward0"),
    "scatter_src": (lambda m, T, x, s: x.scatter(1, T([[0, 3], [1, 2]]), s), (3, 4), (2, 2), "ScatterBackward0"),
    "scatter_value": (lambda m, T, x, s: m.scatter(x, 0, T([[2, 0, 1, 1]]), 7.5), (3, 4), None, "ScatterBackward1"),
    "scatter_add": (lambda m, T, x, s: x.scatter_add(0, T([[0, 0, 1], [0, 2, 2]]), s), (3, 4), (2, 3),
                    "ScatterAddBackward0"),
    "scatter_reduce_sum": (lambda m, T, x, s: x.scatter_reduce(0, T([[0, 0, 1], [0, 2, 2]]), s, "sum"), (3, 4),
                           (2, 3), "ScatterReduceBackward0"),
    "scatter_reduce_mean": (lambda m, T, x, s: x.scatter_reduce(0, T([[0, 0, 1], [0, 2, 2]]), s, "mean"), (3, 4),
                            (2, 3), "ScatterReduceBackward0"),
    "scatter_reduce_mean_excl": (lambda m, T, x, s: x.scatter_reduce(1, T([[0, 0], [3, 3]]), s, "mean",
                                                                     include_self=False), (3, 4), (2, 2),
                                 "ScatterReduceBackward0"),
    "scatter_reduce_amax": (lambda m, T, x, s: x.scatter_reduce(0, T([[0, 0, 1], [0, 2, 2]]), s, "amax"), (3, 4),
                            (2, 3), "ScatterReduceBackward0"),
    "scatter_reduce_amin_excl": (lambda m, T, x, s: x.scatter_reduce(0, T([[0, 0, 1], [0, 2, 2]]), s, "amin",
                                                                     include_self=False), (3, 4), (2, 3),
                                 "ScatterReduceBackward0"),
    "scatter_reduce_prod": (lambda m, T, x, s: x.scatter_reduce(0, T([[0, 0, 1], [0, 2, 2]]), s, "prod"), (3, 4),
                            (2, 3), "ScatterReduceBackward0"),
    "index_select": (lambda m, T, x, s: x.index_select(1, T([3, 0, 3])), (3, 4), None, "IndexSelectBackward0"),
    "index_select_0d": (lambda m, T, x, s: m.index_select(x, 0, T(2)), (3, 4), None, "IndexSelectBackward0"),
    "index_add": (lambda m, T, x, s: x.index_add(0, T([2, 0, 2]), s, alpha=-2), (3, 4), (3, 4), "IndexAddBackward0"),
    "index_copy": (lambda m, T, x, s: x.index_copy(1, T([3, 0]), s), (3, 4), (3, 2), "IndexCopyBackward0"),
    "index_fill": (lambda m, T, x, s: x.index_fill(1, T([1, -1]), 2.5), (3, 4), None, "IndexFillBackward0"),
    "index_fill_tensor": (lambda m, T, x, s: x.index_fill(0, T([1]), s.sum()), (3, 4), (2,), "IndexFillBackward1"),
    "masked_fill": (lambda m, T, x, s: x.masked_fill(T(MASK_2D[0]), -3.0), (3, 4), None, "MaskedFillBackward0"),
    "masked_fill_tensor": (lambda m, T, x, s: x.masked_fill(T(MASK_2D), s.sum()), (3, 4), (2,), "MaskedFillBackward1"),
    "masked_fill_bigger_mask": (lambda m, T, x, s: m.masked_fill(x, T(MASK_2D[:, :, None]), 1.0), (4, 5), None,
                                "MaskedFillBackward0"),
    "masked_select": (lambda m, T, x, s: x.masked_select(T(MASK_2D)), (3, 4), None, "MaskedSelectBackward0"),
    "masked_select_broadcast": (lambda m, T, x, s: m.masked_select(x, T(MASK_2D)), (4,), None,
                                "MaskedSelectBackward0"),
    "masked_scatter": (lambda m, T, x, s: x.masked_scatter(T(MASK_2D), s), (3, 4), (4, 4), "MaskedScatterBackward0"),
    "take": (lambda m, T, x, s: x.take(T([[0, 11], [-1, 5]])), (3, 4), None, "TakeBackward0"),
    "put": (lambda m, T, x, s: x.put(T([0, 11, 5]), s), (3, 4), (3,), "PutBackward0"),
    "put_accumulate": (lambda m, T, x, s: x.put(T([1, 1, 5]), s, accumulate=True), (3, 4), (3,), "PutBackward0"),
    "take_along_dim": (lambda m, T, x, s: m.take_along_dim(x, T([[0], [3], [1]]), 1), (3, 4), None,
                       "GatherBackward0"),
    "take_along_dim_bcast": (lambda m, T, x, s: x.take_along_dim(T([[2], [-1]]), dim=0), (3, 4), None,
                             "GatherBackward0"),
    "take_along_dim_flat": (lambda m, T, x, s: m.take_along_dim(x, T([0, 7, 7])), (3, 4), None, "GatherBackward0"),
    "index_put": (lambda m, T, x, s: x.index_put((T([0, 2]),), s), (3, 4), (4,), "IndexPutBackward0"),
    "index_put_accumulate": (lambda m, T, x, s: m.index_put(x, (T([0, 0, 2]), T([1, 1, 3])), s, accumulate=True),
                             (3, 4), (3,), "IndexPutBackward0"),
    "copy_": (lambda m, T, x, s: (x * 1).copy_(s), (3, 4), (4,), "CopyBackwards"),
    "fill_tensor": (lambda m, T, x, s: (x * 1).fill_(s.sum()), (3, 4), (2,), "FillBackward3"),
    "fill_scalar": (lambda m, T, x, s: (x * 1).fill_(2), (3, 4), None, "FillBackward2"),
    "zero_": (lambda m, T, x, s: (x * 1).zero_(), (3, 4), None, "ZeroBackward0"),
    "masked_fill_": (lambda m, T, x, s: (x * 1).masked_fill_(T(MASK_2D), s.sum()), (3, 4), (2,),
                     "MaskedFillBackward1"),
    "index_put_": (lambda m, T, x, s: (x * 1).index_put_((T([1]),), s), (3, 4), (4,), "IndexPutBackward0"),
    "scatter_": (lambda m, T, x, s: (x * 1).scatter_(1, T([[2], [0]]), s), (3, 4), (2, 1), "ScatterBackward0"),
    "index_add_": (lambda m, T, x, s: (x * 1).index_add_(1, T([0, 0]), s), (3, 4), (3, 2), "IndexAddBackward0"),
}


def _op_inputs(m, device, x_shape, s_shape):
    T = on(m, device)
    rng = np.random.default_rng(5)
    x = T(rng.uniform(0.5, 2, x_shape) * rng.choice([-1, 1], x_shape), dtype=m.float64, requires_grad=True)
    s = None if s_shape is None else T(rng.uniform(0.5, 2, s_shape), dtype=m.float64, requires_grad=True)
    return T, x, s


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_parity(name, device):
    torch = pytest.importorskip("torch")
    fn, x_shape, s_shape, grad_fn_name = OPS[name]
    results = []
    for m in (gputorch, torch):
        T, x, s = _op_inputs(m, device, x_shape, s_shape)
        out = fn(m, T, x, s)
        g = np.random.default_rng(2).standard_normal(tuple(out.shape))
        out.backward(on(m, device)(g, dtype=m.float64))
        results.append((out, x.grad, None if s is None else s.grad))
    (out, gx, gs), (exp, tx, ts) = results
    assert_close(out, exp, rtol=1e-12, atol=1e-12)
    assert type(out.grad_fn).__name__ == type(exp.grad_fn).__name__ == grad_fn_name
    assert_close(gx, tx, rtol=1e-12, atol=1e-12)
    if ts is not None:
        assert_close(gs, ts, rtol=1e-12, atol=1e-12)


# Beyond PyTorch: it has no gradient for scatter(reduce=...) and returns a wrongly shaped one for
# a src larger than the index; these are checked against finite differences only.
EXTRA_GRAD_OPS = {
    "scatter_add_reduce": (lambda m, T, x, s: x.scatter(0, T([[0, 0], [0, 2]]), s, reduce="add"), (3, 4), (2, 2),
                           ""),
    "scatter_src_bigger": (lambda m, T, x, s: x.scatter(1, T([[0, 3], [1, 2]]), s), (3, 4), (3, 5), ""),
    "scatter_add_src_bigger": (lambda m, T, x, s: x.scatter_add(0, T([[0], [0]]), s), (3, 4), (2, 2), ""),
}


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("name", sorted(OPS) + sorted(EXTRA_GRAD_OPS))
def test_op_gradcheck(name, device):
    fn, x_shape, s_shape, _ = OPS[name] if name in OPS else EXTRA_GRAD_OPS[name]
    T, x, s = _op_inputs(gputorch, device, x_shape, s_shape)
    if s is None:
        f, inputs = (lambda a: fn(gputorch, T, a, None)), (x,)
    else:
        f, inputs = (lambda a, b: fn(gputorch, T, a, b)), (x, s)
    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


def test_scatter_reduce_forward_matches_torch(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).uniform(-2, 2, (3, 4))
    src = np.random.default_rng(4).uniform(-2, 2, (2, 4))
    idx = np.array([[0, 1, 1, 2], [0, 0, 2, 2]])
    for reduce in ("add", "multiply"):
        with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is deprecated"):
            ours = gputorch.tensor(x, device=device).scatter(0, gputorch.tensor(idx, device=device),
                                                              gputorch.tensor(src, device=device), reduce=reduce)
        with warnings.catch_warnings():   # PyTorch warns once per process
            warnings.simplefilter("ignore")
            theirs = torch.tensor(x).scatter(0, torch.tensor(idx), torch.tensor(src), reduce=reduce)
        assert_close(ours, theirs)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            ours = gputorch.tensor(x, device=device).scatter_reduce(
                0, gputorch.tensor(idx, device=device), gputorch.tensor(src, device=device), reduce,
                include_self=include_self)
            theirs = torch.tensor(x).scatter_reduce(0, torch.tensor(idx), torch.tensor(src), reduce,
                                                    include_self=include_self)
            assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_integer_and_bool_tensors(device):
    torch = pytest.importorskip("torch")
    a = np.arange(12).reshape(3, 4)
    for m in (gputorch, torch):
        T = on(m, device)
        x = T(a)
        outs = [x[T([0, 2])], x.gather(1, T([[1], [0], [3]])), x.masked_fill(T(MASK_2D), 9),
                x.scatter_add(0, T([[0, 1, 2, 0]]), T([[5, 5, 5, 5]])), x.index_select(0, T([1])),
                T(MASK_2D).masked_fill(T(MASK_2D[0]), False), x.take(T([3])),
                x.scatter_reduce(0, T([[0, 1, 2, 0]]), T([[7, -7, 1, 3]]), "mean", include_self=False),
                x.scatter_reduce(0, T([[0, 1, 2, 0]]), T([[7, -7, 1, 3]]), "amax")]
        if m is gputorch:
            ours = outs
        else:
            for o, e in zip(ours, outs):
                assert_close(o, e, rtol=0, atol=0)


def test_copy_converts_dtype_broadcasts_and_routes_grads(device):
    dst = gputorch.zeros(2, 3, dtype=gputorch.float64, device=device)
    src = gputorch.tensor([1.5, 2.5, 3.5], dtype=gputorch.float32, device=device, requires_grad=True)
    out = dst.copy_(src)
    assert out is dst and dst.dtype == gputorch.float64 and dst._version == 1
    np.testing.assert_array_equal(to_numpy(dst), [[1.5, 2.5, 3.5]] * 2)
    assert type(dst.grad_fn).__name__ == "CopyBackwards"
    dst.sum().backward()
    assert src.grad.dtype == gputorch.float32
    np.testing.assert_array_equal(to_numpy(src.grad), [2, 2, 2])
    ints = gputorch.zeros(3, dtype=gputorch.int32, device=device)
    ints.copy_(gputorch.tensor([1.7, -2.2, 0.0], device=device))
    assert ints.tolist() == [1, -2, 0]
    if device == "cpu" and gputorch.cuda.is_available():
        cpu = gputorch.zeros(3)
        cpu.copy_(gputorch.ones(3, device="cuda"))
        assert cpu.tolist() == [1, 1, 1]


def test_in_place_ops_bump_versions_and_alias(device):
    x = gputorch.zeros(3, 4, device=device)
    view = x[:, 1]
    for i, op in enumerate([lambda: x.fill_(1.0), lambda: x.zero_(),
                            lambda: x.masked_fill_(gputorch.tensor(MASK_2D, device=device), 2.0),
                            lambda: x.index_put_((gputorch.tensor([0], device=device),),
                                                 gputorch.tensor(3.0, device=device)),
                            lambda: x.scatter_(0, gputorch.tensor([[1]], device=device), 4.0),
                            lambda: x.index_fill_(1, gputorch.tensor([1], device=device), 5.0),
                            lambda: view.copy_(gputorch.arange(3.0, device=device))], 1):
        assert op() is not None
        assert x._version == view._version == i
    np.testing.assert_array_equal(to_numpy(x)[:, 1], [0, 1, 2])


def test_nonzero_and_argwhere(device):
    torch = pytest.importorskip("torch")
    for data in [np.array([[0, 1.5, 0], [2, 0, -1]]), np.array([0, 0, 3]), np.array(2.0), np.array(0.0),
                 np.zeros((2, 0)), np.array([[True, False], [True, True]])]:
        g, t = gputorch.tensor(data, device=device), torch.tensor(data)
        assert_close(g.nonzero(), t.nonzero())
        assert_close(gputorch.argwhere(g), torch.argwhere(t))
        ours, theirs = gputorch.nonzero(g, as_tuple=True), torch.nonzero(t, as_tuple=True)
        assert len(ours) == len(theirs)
        for o, e in zip(ours, theirs):
            assert_close(o, e)


INDEX_ERRORS = [
    (lambda x, T: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x[-4], IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x[0, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda x, T: x[T([5])], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x[[0, 3]], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
    (lambda x, T: x[::-1], ValueError, "step must be greater than zero"),
    (lambda x, T: x[::0], ValueError, "slice step cannot be zero"),
    (lambda x, T: x[T([1.0])], IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda x, T: x[1.0], IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte"),
    (lambda x, T: x[T([True, False])], IndexError,
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"),
    (lambda x, T: x.__setitem__(0, T([1.0] * 5)), RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (5) at non-singleton dimension 0.  "
     "Target sizes: [4].  Tensor sizes: [5]"),
    (lambda x, T: x.__setitem__(T([0, 1]), T(np.ones(3, np.float32))), RuntimeError,
     "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]"),
    (lambda x, T: x.__setitem__(T([0]), T([1, 2, 3, 4])), RuntimeError,
     "Index put requires the source and destination dtypes match, got Float for the destination and Long"),
    (lambda x, T: x.gather(0, T([[5]])), RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x.gather(0, T([[-1]])), RuntimeError, "index -1 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x.gather(0, T([[0.0]])), RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    (lambda x, T: x.gather(0, T([0])), RuntimeError, "Index tensor must have the same number of dimensions"),
    (lambda x, T: x.gather(0, T(np.zeros((4, 5), np.int64))), RuntimeError,
     "Size does not match at dimension 1 expected index [4, 5] to be no larger than self [3, 4] apart from "
     "dimension 0"),
    (lambda x, T: x.scatter(0, T([[5]]), 1.0), RuntimeError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x.scatter(0, T(np.zeros((2, 2), np.int64)), T([[1.0]])), RuntimeError,
     "to be no larger size than src [1, 1]"),
    (lambda x, T: x.index_select(0, T([5])), IndexError, "index out of range in self"),
    (lambda x, T: x.index_select(0, T([[1]])), IndexError, "index_select(): Index is supposed to be a vector"),
    (lambda x, T: x.index_select(0, T([1.0])), RuntimeError, "index_select(): Expected dtype int32 or int64 for index"),
    (lambda x, T: x.index_add(0, T([0]), T(np.ones((2, 4), np.float32))), RuntimeError,
     "index_add_(): Number of indices (1) should be equal to source.size(dim): (2), for dim: 0"),
    (lambda x, T: x.index_add(0, T([0]), T(np.ones((1, 3), np.float32))), RuntimeError,
     "source tensor shape must match self tensor shape, excluding the specified dimension"),
    (lambda x, T: x.index_add(0, T([5]), T(np.ones((1, 4), np.float32))), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x.index_copy(0, T([-1]), T(np.ones((1, 4), np.float32))), IndexError,
     "index_copy_(): index -1 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x.index_fill(0, T([5]), 1.0), IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x, T: x.masked_fill(T(np.ones((3, 4), np.float32)), 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    (lambda x, T: x.masked_fill(T(np.ones((3, 4), np.int64)), 1.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    (lambda x, T: x.masked_fill(T(np.ones((3, 4), bool)), T([1.0, 2.0])), RuntimeError,
     "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."),
    (lambda x, T: x.masked_fill(T(np.ones((2, 4), bool)), 1.0), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    (lambda x, T: x.masked_fill_(T(np.ones((2, 3, 4), bool)), 1.0), RuntimeError,
     "output with shape [3, 4] doesn't match the broadcast shape [2, 3, 4]"),
    (lambda x, T: x.masked_scatter(T(np.ones((3, 4), bool)), T(np.ones(5, np.float32))), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda x, T: x.masked_scatter(T(np.ones((3, 4), bool)), T(np.ones(12))), RuntimeError,
     "masked_scatter: expected self and source to have same dtypes but gotFloat and Double"),
    (lambda x, T: x.scatter(0, T([[0]]), T(np.ones((1, 1)))), RuntimeError,
     "scatter(): Expected self.dtype to be equal to src.dtype"),
    (lambda x, T: x.scatter_add(0, T([[0]]), T(np.ones((1, 1)))), RuntimeError,
     "scatter(): Expected self.dtype to be equal to src.dtype"),
    (lambda x, T: x.index_add(0, T([0]), T(np.ones((1, 4)))), RuntimeError,
     "index_add_(): self (Float) and source (Double) must have the same scalar type"),
    (lambda x, T: x.index_copy(0, T([0]), T(np.ones((1, 4)))), RuntimeError,
     "index_copy_(): self and source expected to have the same dtype, but got (self) Float and (source) Double"),
    (lambda x, T: x.put(T([0]), T(np.ones(1))), RuntimeError,
     "put_(): self and source expected to have the same dtype, but got self.dtype = Float and source.dtype = Double"),
    (lambda x, T: x.take(T([12])), IndexError, "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda x, T: x.copy_(T(np.ones((2, 4), np.float32))), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    (lambda x, T: x.copy_(T(np.ones((2, 3, 4)))), RuntimeError,
     "output with shape [3, 4] doesn't match the broadcast shape [2, 3, 4]"),
    (lambda x, T: x.fill_(T([1.0, 2.0])), RuntimeError,
     "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."),
    (lambda x, T: x.index_put_((T([0]),), T(1)), RuntimeError,
     "Index put requires the source and destination dtypes match, got Float for the destination and Long for "
     "the source."),
    (lambda x, T: x.index_put((T([0, 1]),), T(np.ones(3, np.float32))), RuntimeError,
     "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]"),
    (lambda x, T: x.take_along_dim(T(np.zeros((2, 3, 1), np.int64)), 2), RuntimeError,
     "input and indices should have the same number of dimensions"),
]


@pytest.mark.parametrize("case", range(len(INDEX_ERRORS)))
def test_errors(case, device):
    fn, exc, message = INDEX_ERRORS[case]
    x = gputorch.zeros(3, 4, device=device)
    with pytest.raises(exc) as info:
        fn(x, on(gputorch, device))
    assert message in str(info.value)


@pytest.mark.parametrize("case", range(len(INDEX_ERRORS)))
def test_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    fn, exc, message = INDEX_ERRORS[case]
    with pytest.raises(exc) as info:
        fn(torch.zeros(3, 4), torch.tensor)
    assert message in str(info.value)


# In-place ops on views of tensors with history (PyTorch's CopySlices): the base's grad_fn changes.
# name: fn(m, x, w) -> tensor; x (3, 4) and w (4,) require grad
VIEW_INPLACE = {
    "mul_row": lambda m, x, w: _modify(x * 1, lambda y: y[1].mul_(2)),
    "mul_by_tensor": lambda m, x, w: _modify(x * 1, lambda y: y[:, 1:3].mul_(w[:2])),
    "add_then_use_view": lambda m, x, w: _use_view(x * 1, lambda v: v.add_(w)),
    "twice": lambda m, x, w: _modify(x * 1, lambda y: y[2].mul_(w).add_(w.exp())),
    "setitem_on_view": lambda m, x, w: _modify(x * 1, lambda y: y[0].__setitem__(slice(1, 3), w[1:3] * 2)),
    "scalar_view": lambda m, x, w: _modify(x * 1, lambda y: y[1][2].mul_(w[0])),
    "view_of_view": lambda m, x, w: _modify(x * 1, lambda y: y.view(12)[2:6].mul_(w)),
    "diagonal": lambda m, x, w: _modify(x * 1, lambda y: y.diagonal().mul_(w[:3])),
    "transposed_view": lambda m, x, w: _modify(x * 1, lambda y: y.t()[1].copy_(w[:3])),
    "permuted_base": lambda m, x, w: _modify(x.t() * 2, lambda y: y[2].mul_(w[:3])),
    "no_grad_base": lambda m, x, w: _modify(m.zeros(3, 4, dtype=m.float64, device=x.device),
                                            lambda y: y[1].copy_(w * x[0])),
    "fill_view": lambda m, x, w: _modify(x * 1, lambda y: y[:, 0].fill_(w.sum())),
    "base_then_view": lambda m, x, w: _modify(x * 1, lambda y: (y.mul_(w), y[0].div_(w))),
}


def _modify(y, op):
    op(y)
    return y * (y + 1)


def _use_view(y, op):
    v = y[1]
    op(v)
    return v * y.sum()


@pytest.mark.parametrize("name", sorted(VIEW_INPLACE))
def test_inplace_on_view_parity(name, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    xd, wd = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, 4)
    results = []
    for m in (gputorch, torch):
        T = on(m, device)
        x, w = T(xd, requires_grad=True), T(wd, requires_grad=True)
        out = VIEW_INPLACE[name](m, x, w)
        g = np.random.default_rng(4).standard_normal(tuple(out.shape))
        out.backward(T(g))
        results.append((out, x.grad, w.grad))
    for ours, theirs in zip(*results):
        if theirs is None:
            assert ours is None
        else:
            assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(VIEW_INPLACE))
def test_inplace_on_view_gradcheck(name, device):
    x = rand(3, 4, device=device, seed=1).detach().abs().add(0.5).requires_grad_()
    w = rand(4, device=device, seed=2).detach().abs().add(0.5).requires_grad_()
    fn = lambda a, b: VIEW_INPLACE[name](gputorch, a, b)  # noqa: E731
    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


def test_inplace_on_view_graph_and_versions(device):
    x = rand(3, 4, device=device)
    y = x * 1
    v = y[1]
    assert v.mul_(2) is v
    assert type(y.grad_fn).__name__ == "CopySlices"
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    assert y._version == v._version == 1
    assert v._base is y
    z = gputorch.zeros(2, 3, device=device)
    w = rand(3, device=device)
    z[1][:] = w
    assert z.requires_grad and type(z.grad_fn).__name__ == "CopySlices"


def test_inplace_on_view_errors(device):
    x = rand(3, 4, device=device)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        x[0].mul_(2)
    for pieces, name in [((x * 1).split(2), "Split"), ((x * 1).split([1, 2]), "SplitWithSizes"),
                         ((x * 1).unbind(), "Unbind"), ((x * 1).chunk(2), "Split")]:
        with pytest.raises(RuntimeError, match=f"Output 1 of {name} is a view and is being modified inplace"):
            pieces[1].mul_(2)
    with gputorch.no_grad():
        x[0].mul_(2)   # allowed without recording
    a, _ = (x * 1).detach().split(2)
    a.mul_(2)   # views without history may be modified


def test_values_with_extra_leading_dims_and_0d_errors(device):
    torch = pytest.importorskip("torch")
    results = []
    for m in (gputorch, torch):
        T = on(m, device)
        x = T(np.zeros((3, 4)), dtype=m.float64, requires_grad=True)
        v = T(np.arange(4.0).reshape(1, 1, 4), dtype=m.float64, requires_grad=True)
        y = x * 1
        y[1] = v
        y[T([0, 2])] = v * 2
        (y * T(np.arange(12.0).reshape(3, 4), dtype=m.float64)).sum().backward()
        results.append((y, x.grad, v.grad))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        gputorch.tensor(1.0, device=device)[0]
