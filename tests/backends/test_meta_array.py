"""The shape-only MetaArray against NumPy itself: the same expression on a NumPy array and on a
meta array must give the same shape, dtype, strides and view-ness (base), or the same error."""
import numpy as np
import pytest

from gputorch.backends import meta_xp
from gputorch.backends.meta_array import MetaArray
from gputorch.backends.meta_layout import nocopy_reshape_strides


def _pair(shape=(2, 3, 4), dtype=np.float32):
    return np.zeros(shape, dtype), meta_xp.zeros(shape, dtype)


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    assert isinstance(b, MetaArray), type(b)
    assert b.shape == a.shape
    assert b.dtype == a.dtype
    assert (b.base is None) == (a.base is None)           # a view (or a view of a temporary) or not
    if a.size:      # (a size-1 dim's stride is arbitrary; NumPy itself is not consistent about it)
        assert _real_strides(b) == _real_strides(a), (b.strides, a.strides)
        assert b.flags.c_contiguous == a.flags.c_contiguous
        assert b.flags.f_contiguous == a.flags.f_contiguous


def _real_strides(a):
    return [s for s, n in zip(a.strides, a.shape) if n != 1]


def _check(fn, shape=(2, 3, 4), dtype=np.float32, view=None):
    a, m = _pair(shape, dtype)
    ra, rm = fn(np, a), fn(meta_xp, m)
    _same(ra, rm)
    if view is not None:
        assert (rm.owner is m) == view
        assert np.shares_memory(ra, a) == view
    return rm


LAYOUT_CASES = {
    "transpose": (lambda xp, a: a.transpose(2, 0, 1), True),
    "T": (lambda xp, a: a.T, True),
    "slice": (lambda xp, a: a[:, 1:, ::2], True),
    "negative step": (lambda xp, a: a[::-1, :, 1], True),
    "int index": (lambda xp, a: a[1], True),
    "newaxis ellipsis": (lambda xp, a: a[None, ..., None, 0], True),
    "reshape contiguous": (lambda xp, a: a.reshape(6, 4), True),
    "reshape -1": (lambda xp, a: a.reshape(-1, 2), True),
    "reshape of transposed copies": (lambda xp, a: a.T.reshape(-1), False),
    "reshape of slice that stays a view": (lambda xp, a: a[:, :2].reshape(2, 2, 4), True),
    "reshape of uniform step slice stays a view": (lambda xp, a: a[:, :, ::2].reshape(-1), True),
    "reshape of partial rows copies": (lambda xp, a: a[:, :, :3].reshape(-1), False),
    "reshape split last dim of transposed": (lambda xp, a: a.transpose(2, 0, 1).reshape(2, 2, 2, 3), True),
    "ravel": (lambda xp, a: a.ravel(), True),
    "squeeze": (lambda xp, a: a[:, :1].squeeze(1), True),
    "swapaxes": (lambda xp, a: a.swapaxes(0, 2), True),
    "moveaxis": (lambda xp, a: xp.moveaxis(a, 0, -1), True),
    "expand_dims": (lambda xp, a: xp.expand_dims(a, (0, 2)), True),
    "broadcast_to": (lambda xp, a: xp.broadcast_to(a[:, :1], (5, 2, 3, 4)), True),
    "diagonal": (lambda xp, a: xp.diagonal(a, 1, 1, 2), True),
    "flip": (lambda xp, a: xp.flip(a, 1), True),
    "as_strided": (lambda xp, a: xp.lib.stride_tricks.as_strided(a, (3, 4), (16, 4)), True),
    "copy": (lambda xp, a: a.T.copy(), False),
    "np copy keeps order": (lambda xp, a: xp.copy(a.T), False),
    "astype keeps order": (lambda xp, a: a.transpose(1, 2, 0).astype(np.float64), False),
    "astype no copy": (lambda xp, a: a.astype(np.float32, copy=False), False),
    "ascontiguousarray": (lambda xp, a: xp.ascontiguousarray(a.T), False),
    "empty_like keeps order": (lambda xp, a: xp.empty_like(a.transpose(2, 0, 1)), False),
    "zeros_like dtype": (lambda xp, a: xp.zeros_like(a, dtype=np.int8), False),
}


@pytest.mark.parametrize("name", list(LAYOUT_CASES))
def test_layouts_and_views_match_numpy(name):
    fn, view = LAYOUT_CASES[name]
    if name == "astype no copy":
        a, m = _pair()
        assert m.astype(np.float32, copy=False) is m
        return
    _check(fn, view=view)


UFUNC_CASES = {
    "add broadcast": lambda xp, a: a + a[0, :, :1],
    "exp of transposed keeps order": lambda xp, a: xp.exp(a.transpose(2, 0, 1)),
    "binary mixed layouts": lambda xp, a: a.transpose(2, 0, 1) * a.transpose(2, 1, 0).swapaxes(1, 2),
    "compare": lambda xp, a: a > 0.5,
    "int + float scalar": lambda xp, a: a.astype(np.int32) + 1.5,
    "uint8 + python int": lambda xp, a: a.astype(np.uint8) + 3,
    "int8 * int64": lambda xp, a: a.astype(np.int8) * a.astype(np.int64),
    "float16 + float32 0-d": lambda xp, a: a.astype(np.float16) + xp.zeros((), np.float32),
    "true divide ints": lambda xp, a: a.astype(np.int64) / 2,
    "where": lambda xp, a: xp.where(a > 0, a, 0),
    "where dtype": lambda xp, a: xp.where(a > 0, a.astype(np.int16), np.float32(1)),
    "clip": lambda xp, a: xp.clip(a.T, -1, 1),
    "matmul": lambda xp, a: a @ a.transpose(0, 2, 1),
    "matmul vector": lambda xp, a: a @ a[0, 0],
    "matmul broadcast batch": lambda xp, a: a[:1, None] @ xp.ones((3, 4, 2), np.float64),
    "divmod": lambda xp, a: xp.divmod(a, 3),
    "isnan": lambda xp, a: xp.isnan(a),
    "ufunc reduce": lambda xp, a: xp.maximum.reduce(a, axis=1),
    "ufunc outer": lambda xp, a: xp.multiply.outer(a[0, 0], a[0, :, 0]),
    "in-place add": lambda xp, a: xp.add(a, 1, out=a),
}


@pytest.mark.parametrize("name", list(UFUNC_CASES))
def test_ufuncs_match_numpy(name):
    _check(UFUNC_CASES[name])


def test_inplace_operator_returns_the_same_array():
    m = meta_xp.zeros((2, 3))
    out = m
    out += 1
    assert out is m
    with pytest.raises(TypeError):
        i = meta_xp.zeros((2, 3), np.int64)
        i += 1.5


FUNCTION_CASES = {
    "sum axis": lambda xp, a: a.sum(1),
    "sum keepdims of transposed": lambda xp, a: a.transpose(2, 0, 1).sum(axis=1, keepdims=True),
    "mean int": lambda xp, a: a.astype(np.int32).mean((0, 2)),
    "max": lambda xp, a: a.max(),
    "argmax": lambda xp, a: a.argmax(-1),
    "argmin keepdims": lambda xp, a: xp.argmin(a, axis=0, keepdims=True),
    "any": lambda xp, a: (a > 0).any(axis=2),
    "std ddof": lambda xp, a: a.std(axis=(0, 1), ddof=1),
    "var float16": lambda xp, a: a.astype(np.float16).var(0),
    "prod dtype": lambda xp, a: a.prod(axis=1, dtype=np.float64),
    "cumsum": lambda xp, a: a.cumsum(1),
    "cumsum flat": lambda xp, a: xp.cumsum(a),
    "sort": lambda xp, a: xp.sort(a, axis=0),
    "argsort": lambda xp, a: xp.argsort(a, axis=-1),
    "argpartition": lambda xp, a: xp.argpartition(a, 1, axis=1),
    "concatenate": lambda xp, a: xp.concatenate([a, a[:1]], axis=0),
    "concatenate promote": lambda xp, a: xp.concatenate([a, a.astype(np.int64)], axis=2),
    "concatenate flat": lambda xp, a: xp.concatenate([a, a], axis=None),
    "stack": lambda xp, a: xp.stack([a, a], axis=1),
    "take": lambda xp, a: xp.take(a, xp.asarray([0, 2, 2]), axis=1),
    "take flat": lambda xp, a: xp.take(a, np.array([[1, 2]])),
    "take_along_axis": lambda xp, a: xp.take_along_axis(a, xp.zeros((2, 3, 1), np.int64), axis=2),
    "einsum": lambda xp, a: xp.einsum("bij,bkj->bik", a, a),
    "einsum ellipsis": lambda xp, a: xp.einsum("...j,j->...", a, a[0, 0]),
    "einsum implicit": lambda xp, a: xp.einsum("ij,jk", a[0], a[0].T),
    "einsum transpose view": lambda xp, a: xp.einsum("ijk->kji", a),
    "einsum optimized (strided result)": lambda xp, a: xp.einsum("bij,jk->bik", a, a[0].T, optimize=True),
    "einsum optimized, transposed operand": lambda xp, a: xp.einsum("bji,bkj->bik", a.transpose(0, 2, 1), a,
                                                                    optimize=True),
    "einsum three operands": lambda xp, a: xp.einsum("ij,jk,kl->il", a[0], a[0].T, a[1], optimize="greedy"),
    "einsum attention-like": lambda xp, a: xp.einsum("bqd,bkd->bqk", a, a, optimize=True),
    "tensordot": lambda xp, a: xp.tensordot(a, a, axes=([1, 2], [1, 2])),
    "dot": lambda xp, a: xp.dot(a, a[0].T),
    "outer": lambda xp, a: xp.outer(a[0, 0], a[1]),
    "pad": lambda xp, a: xp.pad(a, ((0, 0), (1, 2), (3, 0))),
    "repeat": lambda xp, a: xp.repeat(a, 3, axis=1),
    "repeat list": lambda xp, a: xp.repeat(a, [1, 0, 2], axis=1),
    "tile": lambda xp, a: xp.tile(a[0], (2, 1, 3)),
    "split": lambda xp, a: xp.split(a, 2, axis=2),
    "array_split": lambda xp, a: xp.array_split(a, [1, 2], axis=1),
    "tril": lambda xp, a: xp.tril(a),
    "searchsorted": lambda xp, a: xp.searchsorted(a[0, 0], a[1]),
    "sliding_window_view": lambda xp, a: xp.lib.stride_tricks.sliding_window_view(a, 2, axis=2),
    "broadcast_arrays": lambda xp, a: xp.broadcast_arrays(a, a[0, :1]),
    "nan_to_num": lambda xp, a: xp.nan_to_num(a),
    "round": lambda xp, a: xp.round(a, 2),
    "atleast_3d": lambda xp, a: xp.atleast_3d(a[0, 0]),
    "arange": lambda xp, a: xp.arange(2, 11, 3),
    "arange float": lambda xp, a: xp.arange(0.5, 3, 0.25),
    "linspace": lambda xp, a: xp.linspace(0, 1, 7, dtype=np.float32),
    "eye": lambda xp, a: xp.eye(3, 5, dtype=np.int8),
    "full": lambda xp, a: xp.full((2, 2), 7),
    "fallback (diff, run on stand-ins)": lambda xp, a: xp.diff(a, axis=1),
}


@pytest.mark.parametrize("name", list(FUNCTION_CASES))
def test_functions_match_numpy(name):
    _check(FUNCTION_CASES[name])


ADVANCED_INDEX_CASES = [
    (lambda a: a[[0, 1]]),
    (lambda a: a[:, [0, 2]]),
    (lambda a: a[:, :, [0, 1]]),
    (lambda a: a[0, :, [0, 1]]),
    (lambda a: a[:, [0, 1], [1, 2]]),
    (lambda a: a[[[0], [1]], :, [1, 2, 3]]),
    (lambda a: a[..., [3, 0]]),
    (lambda a: a[np.array([True, False])]),
    (lambda a: a[:, np.array([True, False, True])]),
    (lambda a: a[None, [1, 0], 1:]),
]


@pytest.mark.parametrize("case", range(len(ADVANCED_INDEX_CASES)))
def test_advanced_indexing_matches_numpy(case):
    a, m = _pair()
    fn = ADVANCED_INDEX_CASES[case]
    ra, rm = fn(a), fn(m)
    _same(ra, rm)
    assert rm.owner is not m


@pytest.mark.parametrize("key", [5, (0, 3), (slice(None), [0, 7]), (0, 0, 0, 0)])
def test_index_errors_match_numpy(key):
    a, m = _pair()
    with pytest.raises(IndexError) as expected:
        a[key]
    with pytest.raises(IndexError) as got:
        m[key]
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("fn", [
    lambda xp, a: a.reshape(5, 5),
    lambda xp, a: a + a[:, :2],
    lambda xp, a: a @ a,
    lambda xp, a: xp.concatenate([a, a[:, :1]], axis=0),
    lambda xp, a: xp.broadcast_to(a, (3, 4)),
    lambda xp, a: a.sum(axis=5),
    lambda xp, a: xp.zeros((0, 3)).max(axis=0),
])
def test_errors_match_numpy(fn):
    a, m = _pair()
    with pytest.raises(Exception) as expected:
        fn(np, a)
    with pytest.raises(type(expected.value)):
        fn(meta_xp, m)


def test_setitem_checks_broadcast_and_writes_nothing():
    a, m = _pair()
    m[0] = meta_xp.zeros((3, 4))
    m[:, 1] = 2.0
    m[m > 0] = 1.0                       # a mask without values: allowed, no shape to check
    with pytest.raises(ValueError):
        m[0] = meta_xp.zeros((2, 4))


def test_no_values():
    m = meta_xp.zeros((2, 3))
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        m[0, 0].item()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        bool(m[0, 0] > 0)
    with pytest.raises(NotImplementedError, match="no data"):
        m.tolist()
    with pytest.raises(NotImplementedError, match="no data"):
        np.asarray(m)
    with pytest.raises(NotImplementedError, match="values"):
        np.nonzero(m)
    with pytest.raises(NotImplementedError, match="values"):
        np.unique(m)
    with pytest.raises(NotImplementedError, match="values"):
        m[m > 0]
    with pytest.raises(NotImplementedError, match="values"):
        np.where(m > 0)


def test_huge_arrays_cost_nothing():
    n = 10 ** 6
    x = meta_xp.empty((n, n), np.float32)
    y = (x @ x.T).sum(axis=0) + meta_xp.arange(n)
    assert y.shape == (n,) and y.dtype == np.float64
    assert x.nbytes == 4 * 10 ** 12
    with pytest.raises(NotImplementedError, match="too large"):
        np.diff(x)                        # no shape rule: refuses to run NumPy on a huge stand-in


def test_views_share_their_owner():
    m = meta_xp.zeros((4, 6))
    v = m[1:].reshape(-1, 2)[1].T
    assert v.base is m and v.owner is m
    assert m.owner is m and m.base is None
    assert np.may_share_memory(v, m)
    assert not np.may_share_memory(m.copy(), m)
    assert v.offset == (6 + 2) * 8
    assert m[1:].T.reshape(-1).owner is not m       # a copy


@pytest.mark.parametrize("shape,strides,new,expected", [
    ((2, 3, 4), (96, 32, 8), (6, 4), (32, 8)),
    ((2, 3, 4), (96, 32, 8), (24,), (8,)),
    ((4, 3), (8, 32), (12,), None),                  # transposed: needs a copy
    ((2, 3), (48, 8), (3, 2), None),                 # rows padded: cannot merge
    ((2, 3), (48, 8), (2, 3, 1), (48, 8, 8)),
    ((3, 1, 4), (32, 999, 8), (3, 4), (32, 8)),      # a size-1 dim's stride is free
])
def test_nocopy_reshape(shape, strides, new, expected):
    assert nocopy_reshape_strides(shape, strides, new, 8) == expected
