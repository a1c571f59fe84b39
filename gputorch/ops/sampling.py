"""Random sampling: rand, randn, randint, randperm (and ``*_like``), normal, bernoulli,
multinomial, and the in-place fills ``normal_``, ``uniform_``, ``bernoulli_``, ``random_``,
``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``.

Every op draws from a :class:`gputorch.Generator` (the ``generator=`` argument or the
device's default one) through its engine, which returns arrays on the right device.
Sampling is not differentiable: ops with tensor inputs record a node whose gradient is
zero, as PyTorch does.
"""
import math
import numbers

import numpy as np

from .. import _dtype
from .._dispatch import apply, apply_inplace
from .._tensor import Tensor, _LEGACY_NAMES
from ..autograd.node import Node
from ..random import generator_for
from ._common import quiet_errors
from .conversion import resolve_device
from .creation import _leaf, _on_device, _size_arg, _sizes, _write_out
from .registry import tensor_method
from .._bfloat16 import check_device as check_bfloat16_device

__all__ = ["rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
           "normal", "bernoulli", "multinomial"]

_C_NAMES = {_dtype.uint8: "unsigned char", _dtype.int8: "signed char", _dtype.int16: "short",
            _dtype.int32: "int", _dtype.int64: "long", _dtype.bool: "bool",
            _dtype.float16: "c10::Half", _dtype.bfloat16: "c10::BFloat16", _dtype.float32: "float",
            _dtype.float64: "double"}


def _not_implemented(op, dt):
    return NotImplementedError(f'"{op}" not implemented for \'{_LEGACY_NAMES[dt]}\'')


def _float_dtype(dtype, op, complex_ok=False):
    dt = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if not (dt.is_floating_point or complex_ok and dt.is_complex):
        raise _not_implemented(op, dt)
    return dt


def _engine(dev, generator):
    return generator_for(dev, generator).engine


def _new(draw, size, dt, device, generator, requires_grad, out):
    """A new tensor of ``size`` filled by ``draw(engine, xp, shape, np_dtype)``."""
    dev = resolve_device(device if device is not None or out is None else out._device)
    if dt is _dtype.bfloat16:
        check_bfloat16_device(dev)
    engine = _engine(dev, generator)
    arr = _on_device(dev, lambda xp: draw(engine, xp, size, dt.np))
    t = _leaf(arr, dev, dt, requires_grad)
    return t if out is None else _write_out(out, t)


def _uniform(engine, xp, shape, np_dtype):
    if np_dtype.kind == "c":   # complex: real and imaginary parts each uniform in [0, 1)
        return _complex_parts(engine.random(tuple(shape) + (2,), _parts(np_dtype)), np_dtype)
    return engine.random(shape, np_dtype)


def _standard_normal(engine, xp, shape, np_dtype):
    if np_dtype.kind == "c":   # complex: E|z|^2 = 1, so each part has variance 1/2
        parts = engine.standard_normal(tuple(shape) + (2,), _parts(np_dtype))
        parts *= parts.dtype.type(0.5 ** 0.5)
        return _complex_parts(parts, np_dtype)
    return engine.standard_normal(shape, np_dtype)


def _parts(np_dtype):
    """The real dtype of a complex NumPy dtype's parts."""
    return np.dtype(np.float32 if np_dtype == np.complex64 else np.float64)


def _complex_parts(parts, np_dtype):
    """An array of shape ``(*S, 2)`` holding (real, imag) pairs as a complex array of shape ``S``."""
    return parts.view(np_dtype)[..., 0]


# ---------------------------------------------------------------- factories
def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1): ``rand(2, 3)`` or ``rand((2, 3))``."""
    dt = _float_dtype(dtype if dtype is not None or out is None else out._dtype, "check_uniform_bounds", True)
    return _new(_uniform, _size_arg(sizes, size), dt, device, generator, requires_grad, out)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples: ``randn(2, 3)`` or ``randn((2, 3))``."""
    dt = _float_dtype(dtype if dtype is not None or out is None else out._dtype, "normal_kernel_cpu", True)
    return _new(_standard_normal, _size_arg(sizes, size), dt, device, generator, requires_grad, out)


def _bounds(dt):
    """The values a dtype holds exactly: ``(lowest, highest)`` (floats: integers up to 2**digits)."""
    if dt is _dtype.bool:
        return 0, 1
    if dt.is_floating_point:
        digits = {2: 11, 4: 24, 8: 53}[dt.itemsize]
        return -(1 << digits), 1 << digits
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max)


def _check_range(low, high, dt):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    lo, hi = _bounds(dt)
    if low < lo or low > hi:
        raise RuntimeError(f"from is out of bounds for {_C_NAMES[dt]}")
    if high - 1 > hi or high - 1 < lo:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES[dt]}")


def _integer_draw(low, high):
    def draw(engine, xp, shape, np_dtype):
        return engine.integers(low, high, shape, np_dtype)
    return draw


def _as_int(x, name):
    if isinstance(x, Tensor):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"randint(): argument '{name}' must be int, not {type(x).__name__}")
    return int(x)


def randint(*args, size=None, low=None, high=None, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    args = list(args)
    if size is None:
        if not args or (len(args) == 1 and not isinstance(args[0], (tuple, list))):
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif args:
        raise TypeError(f"randint() takes at most 3 positional arguments ({len(args) + 1} given)")
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    low = 0 if low is None else _as_int(low, "low")
    high = _as_int(high, "high")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    dt = _dtype.to_dtype(dtype) if dtype is not None else (out._dtype if out is not None else _dtype.int64)
    _check_range(low, high, dt)
    return _new(_integer_draw(low, high), _sizes((size,)), dt, device, generator, requires_grad, out)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` is given)."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dtype.to_dtype(dtype) if dtype is not None else (out._dtype if out is not None else _dtype.int64)
    if n > 0 and n - 1 > _bounds(dt)[1]:
        raise RuntimeError(f"n is too large for result tensor type: '{_LEGACY_NAMES[dt]}'")

    def draw(engine, xp, shape, np_dtype):
        return engine.permutation(n, np_dtype)
    return _new(draw, (n,), dt, device, generator, requires_grad, out)


def _like_args(input, dtype, device):
    return (dtype if dtype is not None else input._dtype,
            device if device is not None else input._device)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return rand(input._data.shape, generator=generator, dtype=dtype, device=device,
                requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return randn(input._data.shape, generator=generator, dtype=dtype, device=device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``; input's dtype by default."""
    if high is None:
        low, high = 0, low
    dtype, device = _like_args(input, dtype, device)
    return randint(low, high, input._data.shape, generator=generator, dtype=dtype, device=device,
                   requires_grad=requires_grad)


# ---------------------------------------------------------------- normal, bernoulli, multinomial
class _ZeroGradSample(Node):
    """Sampling ops with tensor inputs: the sample does not depend smoothly on them."""

    def backward(ctx, grad):
        return tuple(grad.new_zeros(shape) if need else None
                     for shape, need in zip(ctx.shapes, ctx.needs_input_grad))


def _normal_array(ctx, mean, std, generator, dev):
    ctx.shapes = [t._data.shape for t in (mean, std) if isinstance(t, Tensor)]
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    if isinstance(std, Tensor):
        if std._data.size and bool((s < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dt = _dtype.result_dtype([t for t in (mean, std) if isinstance(t, Tensor)])
    shape = np.broadcast_shapes(*(t._data.shape for t in (mean, std) if isinstance(t, Tensor)))
    z = _engine(dev, generator).standard_normal(shape, dt.np)
    return (z * s + m).astype(dt.np, copy=False)


class NormalBackward1(_ZeroGradSample):
    """normal(Tensor mean, float std)."""

    def forward(ctx, mean, std, generator=None):
        return _normal_array(ctx, mean, std, generator, mean._device)


class NormalBackward2(_ZeroGradSample):
    """normal(float mean, Tensor std)."""

    def forward(ctx, mean, std, generator=None):
        return _normal_array(ctx, mean, std, generator, std._device)


class NormalBackward3(_ZeroGradSample):
    """normal(Tensor mean, Tensor std)."""

    def forward(ctx, mean, std, generator=None):
        try:
            np.broadcast_shapes(mean._data.shape, std._data.shape)
        except ValueError:
            raise RuntimeError(f"normal: the shapes of mean {list(mean.shape)} and std {list(std.shape)} "
                               "do not broadcast") from None
        return _normal_array(ctx, mean, std, generator, mean._device)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Normal samples with the given mean and std: numbers with ``size``, or tensors (broadcast)."""
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: a float mean and a "
                            "float std need a size")
        mean, std = float(mean), float(std)
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        dt = _float_dtype(dtype if dtype is not None or out is None else out._dtype, "normal_kernel_cpu")

        def draw(engine, xp, shape, np_dtype):
            z = engine.standard_normal(shape, np_dtype)
            return z if (mean, std) == (0.0, 1.0) else (z * std + mean).astype(np_dtype, copy=False)
        return _new(draw, _sizes((size,)), dt, device, generator, requires_grad, out)
    for t in (mean, std):
        if isinstance(t, Tensor) and not t._dtype.is_floating_point:
            raise _not_implemented("normal_kernel_cpu", t._dtype)
    cls = NormalBackward3 if mean_t and std_t else NormalBackward1 if mean_t else NormalBackward2
    if not mean_t:
        mean = float(mean)
    if not std_t:
        std = float(std)
    result = apply(cls, mean, std, generator=generator)
    return result if out is None else _write_out(out, result)


class BernoulliBackward0(_ZeroGradSample):
    def forward(ctx, input, generator=None):
        ctx.shapes = [input._data.shape]
        p = input._data
        if p.size and not bool(((p >= 0) & (p <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        u = _engine(input._device, generator).random(p.shape, _uniform_dtype(input._dtype))
        return (u < p).astype(p.dtype)


def _uniform_dtype(dt):
    return np.float64 if dt is _dtype.float64 else np.float32


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples: each element is 1 with probability ``input`` (or with the float ``p``)."""
    if p is None:
        if not input._dtype.is_floating_point:
            raise _not_implemented("bernoulli_tensor_cpu_p_", input._dtype)
        result = apply(BernoulliBackward0, input, generator=generator)
    else:
        result = _fresh_like(input).bernoulli_(p, generator=generator)
    return result if out is None else _write_out(out, result)


def _fresh_like(t):
    return Tensor._make(t._data.copy(), t._device, t._dtype)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices sampled from the categorical distributions in the rows of ``input`` (1-D or 2-D,
    non-negative weights); without replacement, each row's samples are distinct."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input._data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_LEGACY_NAMES[input._dtype]}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input._data.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    dev = input._device
    engine = _engine(dev, generator)

    def draw(xp):
        p = input._data.astype(np.float64) if input._dtype is not _dtype.float64 else input._data
        p = p.reshape(-1, n_categories)
        if p.size and not bool((xp.isfinite(p) & (p >= 0)).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        totals = p.sum(axis=1)
        if p.shape[0] and not bool((totals > 0).all()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        rows = p.shape[0]
        if replacement:
            cdf = xp.cumsum(p, axis=1) / totals[:, None]
            cdf[:, -1] = 1.0
            offsets = xp.arange(rows, dtype=np.float64)[:, None]
            u = engine.random((rows, num_samples), np.float64)
            flat = xp.searchsorted((cdf + offsets).reshape(-1), (u + offsets).reshape(-1), side="right")
            idx = flat.reshape(rows, num_samples) - (offsets * n_categories).astype(np.int64)
        else:   # exponential race: the k smallest of Exp(1) / p are a draw without replacement
            with quiet_errors():
                keys = -xp.log1p(-engine.random((rows, n_categories), np.float64)) / p
            idx = xp.argsort(keys, axis=1)[:, :num_samples]
        idx = xp.minimum(idx, n_categories - 1).astype(np.int64)
        return idx.reshape(input._data.shape[:-1] + (num_samples,))
    result = Tensor._make(_on_device(dev, draw), dev, _dtype.int64)
    return result if out is None else _write_out(out, result)


# ---------------------------------------------------------------- in-place fills
class _FillSample(Node):
    """An in-place random fill: the new values do not depend on the old ones."""

    def backward(ctx, grad):
        return (grad.new_zeros(grad.shape),) + (None,) * (len(ctx.needs_input_grad) - 1)


def _check_float(t, op):
    if not t._dtype.is_floating_point:
        raise _not_implemented(op, t._dtype)


class NormalBackward0(_FillSample):
    def forward(ctx, self, mean, std, generator):
        z = _engine(self._device, generator).standard_normal(self._data.shape, self._dtype.np)
        return z if (mean, std) == (0.0, 1.0) else (z * std + mean).astype(self._dtype.np)


class UniformBackward0(_FillSample):
    def forward(ctx, self, low, high, generator):
        u = _engine(self._device, generator).random(self._data.shape, _uniform_dtype(self._dtype))
        return (u * (high - low) + low).astype(self._dtype.np)


class BernoulliBackward1(_FillSample):
    """bernoulli_ with a tensor of probabilities."""

    def forward(ctx, self, p, generator):
        probs = p._data
        if probs.size and not bool(((probs >= 0) & (probs <= 1)).all()):
            raise RuntimeError("bernoulli_ expects p to be in [0, 1]")
        u = _engine(self._device, generator).random(self._data.shape, _uniform_dtype(p._dtype))
        return (u < probs).astype(self._dtype.np)


class BernoulliBackward2(_FillSample):
    """bernoulli_ with a float probability."""

    def forward(ctx, self, p, generator):
        u = _engine(self._device, generator).random(self._data.shape, np.float64)
        return (u < p).astype(self._dtype.np)


class _RandomFill(_FillSample):
    def forward(ctx, self, low, high, generator):
        return _engine(self._device, generator).integers(low, high, self._data.shape, self._dtype.np)


class RandomBackward0(_RandomFill):
    """random_(from, to)."""


class RandomBackward1(_RandomFill):
    """random_(to)."""


class RandomBackward2(_RandomFill):
    """random_()."""


class ExponentialBackward0(_FillSample):
    def forward(ctx, self, lambd, generator):
        u = _engine(self._device, generator).random(self._data.shape, _uniform_dtype(self._dtype))
        return (-_xp(self).log1p(-u) / lambd).astype(self._dtype.np)


class GeometricBackward0(_FillSample):
    def forward(ctx, self, p, generator):
        xp = _xp(self)
        u = _engine(self._device, generator).random(self._data.shape, np.float64)
        with quiet_errors():
            return (xp.floor(xp.log1p(-u) / math.log1p(-p)) + 1).astype(self._dtype.np)


class LogNormalBackward0(_FillSample):
    def forward(ctx, self, mean, std, generator):
        z = _engine(self._device, generator).standard_normal(self._data.shape, _uniform_dtype(self._dtype))
        with quiet_errors():
            return _xp(self).exp(z * std + mean).astype(self._dtype.np)


class CauchyBackward0(_FillSample):
    def forward(ctx, self, median, sigma, generator):
        u = _engine(self._device, generator).random(self._data.shape, _uniform_dtype(self._dtype))
        with quiet_errors():
            return (median + sigma * _xp(self).tan(math.pi * (u - 0.5))).astype(self._dtype.np)


def _xp(t):
    return t._device._backend.xp


@tensor_method("normal_")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std**2)."""
    _check_float(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return apply_inplace(NormalBackward0, self, float(mean), float(std), generator)


@tensor_method("uniform_")
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with samples uniform in [from, to) (``from`` may be passed as a keyword)."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"uniform_() got unexpected keyword arguments {sorted(kwargs)}")
    _check_float(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    return apply_inplace(UniformBackward0, self, float(from_), float(to), generator)


@tensor_method("bernoulli_")
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability ``p`` (a float, or a tensor broadcastable to self), else 0."""
    if isinstance(p, Tensor):
        try:
            p = p.expand(self.shape) if p._data.shape != self._data.shape else p
        except RuntimeError:
            raise RuntimeError(
                f"The expanded size of the tensor ({list(self.shape)}) must match the existing size "
                f"({list(p.shape)})") from None
        return apply_inplace(BernoulliBackward1, self, p, generator)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return apply_inplace(BernoulliBackward2, self, float(p), generator)


_MISSING = object()


@tensor_method("random_")
def random_(self, from_=None, to=_MISSING, *, generator=None, **kwargs):
    """``random_()``: integers the dtype holds exactly, from 0; ``random_(to)``: [0, to);
    ``random_(from, to)``: [from, to) (``to=None``: up to the dtype's largest value)."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
        if to is _MISSING:
            to = None
    if kwargs:
        raise TypeError(f"random_() got unexpected keyword arguments {sorted(kwargs)}")
    hi_lim = _bounds(self._dtype)[1]
    if to is _MISSING:
        if from_ is None:
            cls, low, high = RandomBackward2, 0, hi_lim + 1
        else:
            cls, low, high = RandomBackward1, 0, int(from_)
    else:
        cls, low = RandomBackward0, int(from_ or 0)
        high = hi_lim + 1 if to is None else int(to)
    _check_range(low, high, self._dtype)
    return apply_inplace(cls, self, low, high, generator)


@tensor_method("exponential_")
def exponential_(self, lambd=1.0, *, generator=None):
    _check_float(self, "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return apply_inplace(ExponentialBackward0, self, float(lambd), generator)


@tensor_method("geometric_")
def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return apply_inplace(GeometricBackward0, self, float(p), generator)


@tensor_method("log_normal_")
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    _check_float(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return apply_inplace(LogNormalBackward0, self, float(mean), float(std), generator)


@tensor_method("cauchy_")
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _check_float(self, "cauchy_cpu")
    return apply_inplace(CauchyBackward0, self, float(median), float(sigma), generator)


for _name, _fn in (("bernoulli", bernoulli), ("multinomial", multinomial)):
    tensor_method(_name)(_fn)
