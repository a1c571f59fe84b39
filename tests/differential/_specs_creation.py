"""Generators for conversions, creation ops and random ops."""
import numpy as np

from ._inputs import FLOAT_DTYPES
from ._specs_common import _kw, bool_src
from ._specs_shape import _shape_src


# --------------------------------------------------------- conversions, misc
def to(b):
    x = b.tensor()
    roll = b.rng.random()
    if roll < 0.5:
        return [x, "T." + b.dtype()], {}
    if roll < 0.7:
        return [x], {"dtype": "T." + b.dtype(), "copy": bool_src(b)}
    if roll < 0.85:
        return [x, b.tensor(b.shape(max_ndim=2), grad=False)], {}
    return [x, "dev"], {}


def copy_(b):
    x = b.tensor(grad=False)
    return [x, b.tensor(b.broadcast_partner(b.shapes[x]))], {}


def fill_(b):
    x = b.tensor(grad=False)
    return [x, b.python_scalar() if b.chance(0.8) else b.tensor((), grad=False)], {}


# ------------------------------------------------------------ creation ops
def size_args(b):
    shape = b.shape(max_ndim=4)
    if b.chance(0.4):
        return [str(s) for s in shape] or ["()"]
    return [_shape_src(shape) if b.chance(0.7) else repr(list(shape))]


def dtype_kw(b, p=0.5):
    return _kw(dtype="T." + b.dtype() if b.chance(p) else None)


def zeros(b):
    return size_args(b), dict(dtype_kw(b), device="dev")


def full(b):
    return [_shape_src(b.shape(max_ndim=4)), b.python_scalar()], dict(dtype_kw(b, 0.4), device="dev")


def eye(b):
    args = [str(b.int_in(0, 4))] + ([str(b.int_in(0, 4))] if b.chance(0.5) else [])
    return args, dict(dtype_kw(b), device="dev")


def arange(b):
    kinds = ("int", "float") if b.chance(0.7) else ("int",)
    nums = [b.choice(["0", "1", "-3", "5", "2.5", "0.5", "-1.5"] if "float" in kinds else ["0", "1", "-3", "5", "7"])
            for _ in range(b.int_in(1, 3))]
    if len(nums) == 3:
        nums[2] = b.choice(["1", "2", "-1", "0.5", "0.25", "-0.5"] if "float" in kinds else ["1", "2", "-1", "3"])
    return nums, dict(dtype_kw(b, 0.4), device="dev")


def linspace(b):
    args = [b.choice(["0", "1.5", "-2", "10"]), b.choice(["1", "-3.5", "4", "100"]), str(b.int_in(0, 7))]
    kwargs = dict(dtype_kw(b, 0.4), device="dev")
    return args, kwargs


def logspace(b):
    args, kwargs = linspace(b)
    if b.chance(0.4):
        kwargs["base"] = b.choice(["2", "2.0", "0.5"])
    return args, kwargs


def tensor_ctor(b):
    """``tensor``/``as_tensor``/``asarray`` of nested Python data of mixed types."""
    shape = b.shape(max_ndim=3, max_numel=12)
    flat = [b.python_scalar() for _ in range(int(np.prod(shape)))]
    data = np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]
    source = str(data).replace("'", "")
    if 0 in shape:
        source = repr(np.zeros(shape).tolist())
    return [source], dict(dtype_kw(b, 0.5), device="dev")


def like(b):
    return [b.tensor()], dtype_kw(b, 0.4)


def full_like(b):
    return [b.tensor(), b.python_scalar()], dtype_kw(b, 0.4)


def new_sized(b):
    return [b.tensor()] + size_args(b), dtype_kw(b, 0.4)


def new_full(b):
    return [b.tensor(), _shape_src(b.shape(max_ndim=3)), b.python_scalar()], dtype_kw(b, 0.4)


def new_tensor(b):
    x = b.tensor()
    args, kwargs = tensor_ctor(b)
    kwargs.pop("device")
    return [x] + args, kwargs


def strided(b):
    shape = b.shape(max_ndim=3)
    strides, step = [], 1
    for s in reversed(shape):
        strides.insert(0, step)
        step *= max(s, 1)
    return [_shape_src(shape), _shape_src(strides)], dict(dtype_kw(b), device="dev")


def new_strided(b):
    args, kwargs = strided(b)
    kwargs.pop("device")
    return [b.tensor()] + args, kwargs


def from_numpy(b):
    x = b.tensor(grad=False)
    return [f"{x}.cpu().numpy()"], {}


# ------------------------------------------------------------ random ops
def random_inplace(extra):
    def sig(b):
        x = b.tensor(pool=FLOAT_DTYPES, grad=False)
        return [x] + extra(b), {}
    return sig


def bernoulli(b):
    x = b.tensor(pool=FLOAT_DTYPES, grad=False, values=None)
    return [f"{x}.abs().clamp(0, 1).nan_to_num(0.5)"], {}


def multinomial(b):
    rows = b.int_in(1, 3)
    probs = b.tensor((rows, b.int_in(1, 5)) if b.chance(0.8) else (b.int_in(1, 5),), pool=FLOAT_DTYPES,
                     grad=False, values=None)
    return [f"{probs}.abs().nan_to_num(1.0, 1.0, 1.0) + 0.1", str(b.int_in(1, 3))], _kw(
        replacement=bool_src(b) if b.chance(0.5) else None)


def normal(b):
    return [b.choice(["0.0", "1.5"]), b.choice(["1.0", "2.0"]), _shape_src(b.shape(max_ndim=3))], {"device": "dev"}


def randint(b):
    return [str(b.int_in(1, 5)), str(b.int_in(6, 20)), _shape_src(b.shape(max_ndim=3))], dict(
        dtype_kw(b, 0.3), device="dev")


def randperm(b):
    return [str(b.int_in(0, 7))], dict(dtype_kw(b, 0.3), device="dev")


def randint_like(b):
    return [b.tensor(), str(b.int_in(1, 9))], dtype_kw(b, 0.3)


def dtype_pair(b):
    """``promote_types``/``can_cast``: two dtypes."""
    return ["T." + b.dtype(), "T." + b.dtype()], {}
