"""Reductions: sum, mean, nansum, nanmean, prod, var/std (+ _mean), logsumexp, norms, all/any,
count_nonzero.

Related families live next door and are re-exported here: ``extrema`` (max, min, amax,
amin, argmax, argmin), ``sorting`` (sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode) and ``cumulative`` (cumsum, cumprod, logcumsumexp).

Accumulation: integer and bool sums/products give int64; float16 accumulates in float32.
"""
import math
import warnings

import numpy as np

from .. import _dtype
from .._dispatch import apply
from ..autograd.node import Node
from ._common import quiet_errors, sum_to_shape, xp_of
from ._reducing import (accept_numpy_names, const, count_reduced, create_graph, dtype_word,  # noqa: F401
                        expand_reduced, keep_reduced, normalize_dims, reduced_shape, wrap_dim, write_results)
from .cumulative import *  # noqa: F401,F403
from .cumulative import __all__ as _cumulative_all
from .extrema import *  # noqa: F401,F403
from .extrema import __all__ as _extrema_all
from .registry import METHODS, tensor_method
from .sorting import *  # noqa: F401,F403
from .sorting import __all__ as _sorting_all

__all__ = ["sum", "mean", "nansum", "nanmean", "prod", "var", "std", "var_mean", "std_mean",
           "logsumexp", "norm", "vector_norm", "all", "any", "count_nonzero",
           *_extrema_all, *_sorting_all, *_cumulative_all]

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def _acc(x):
    """The accumulation dtype for a float array (float32 for float16, else its own)."""
    return _F32 if x.dtype == _F16 else None


def _finish(r, x_dtype):
    """Cast an accumulated result back to the input's float dtype (beyond float16's range: inf)."""
    if r.dtype == x_dtype:
        return r
    with quiet_errors():
        return r.astype(x_dtype)


def _opt_dtype(dtype):
    return None if dtype is None else _dtype.to_dtype(dtype)


def _cast_grad(grad, dt):
    return grad if grad._dtype is dt else grad.to(dt)


# ---------------------------------------------------------------------------- sum / mean
def _sum_array(a, dims, keepdim, dtype):
    x = a._data
    if dtype is not None and dtype is not a._dtype:
        x = x.astype(dtype.np)
        cat = dtype._category
    else:
        cat = a._dtype._category
    if cat < 2:
        out = np.int64 if dtype is None else x.dtype
        return x.sum(axis=dims, keepdims=keepdim, dtype=out)
    acc = _acc(x)
    return _finish(x.sum(axis=dims, keepdims=keepdim, dtype=acc), x.dtype)


class SumBackward0(Node):
    """Sum of all elements."""

    def forward(ctx, a, dtype):
        ctx.shape, ctx.in_dtype = a._data.shape, a._dtype
        return _sum_array(a, None, False, dtype)

    def backward(ctx, grad):
        return _cast_grad(grad.expand(ctx.shape), ctx.in_dtype)


class SumBackward1(Node):
    """Sum over given dims."""

    def forward(ctx, a, dims, keepdim, dtype):
        ctx.shape, ctx.in_dtype = a._data.shape, a._dtype
        ctx.dims, ctx.keepdim = dims, keepdim
        return _sum_array(a, dims, keepdim, dtype)

    def backward(ctx, grad):
        return _cast_grad(expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim), ctx.in_dtype)


def _mean_array(ctx, a, dims, keepdim, dtype):
    if dtype is None:
        if a._dtype._category < 2:
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                f"complex dtype. Got: {dtype_word(a._dtype)}")
        x = a._data
    else:
        if dtype._category < 2:
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
                f"complex dtype. Got: {dtype_word(dtype)}")
        x = a._data if dtype is a._dtype else a._data.astype(dtype.np)
    ctx.shape, ctx.in_dtype = a._data.shape, a._dtype
    ctx.dims, ctx.keepdim = dims, keepdim
    n = ctx.count = count_reduced(x.shape, dims)
    s = x.sum(axis=dims, keepdims=keepdim, dtype=_acc(x))
    with quiet_errors():
        return _finish(xp_of(a).asarray(s / n if n else s * float("nan")), x.dtype)


class MeanBackward0(Node):
    """Mean of all elements."""

    def forward(ctx, a, dtype):
        return _mean_array(ctx, a, None, False, dtype)

    def backward(ctx, grad):
        return _cast_grad(grad.expand(ctx.shape) / ctx.count, ctx.in_dtype)


class MeanBackward1(Node):
    """Mean over given dims."""

    def forward(ctx, a, dims, keepdim, dtype):
        return _mean_array(ctx, a, dims, keepdim, dtype)

    def backward(ctx, grad):
        g = expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim) / ctx.count
        return _cast_grad(g, ctx.in_dtype)


@tensor_method("sum")
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` (an int, a sequence, or None/() for all dims).

    Integer and bool inputs sum to int64; ``dtype`` casts the input before summing."""
    dtype = _opt_dtype(dtype)
    if dim is None and not keepdim:
        result = apply(SumBackward0, input, dtype)
    else:
        result = apply(SumBackward1, input, normalize_dims(input, dim), keepdim, dtype)
    return result if out is None else write_results(result, out)


@tensor_method("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Arithmetic mean over ``dim`` (all dims by default); needs a floating dtype (or ``dtype=``)."""
    dtype = _opt_dtype(dtype)
    if dim is None and not keepdim:
        result = apply(MeanBackward0, input, dtype)
    else:
        result = apply(MeanBackward1, input, normalize_dims(input, dim), keepdim, dtype)
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- nansum / nanmean
class NansumBackward0(Node):
    def forward(ctx, a, dims, keepdim, dtype):
        ctx.shape, ctx.in_dtype = a._data.shape, a._dtype
        ctx.dims, ctx.keepdim = dims, keepdim
        if a._dtype._category < 2 and (dtype is None or dtype._category < 2):
            return _sum_array(a, dims, keepdim, dtype)
        ctx.save_for_backward(a)
        x = a._data if dtype is None or dtype is a._dtype else a._data.astype(dtype.np)
        return _finish(xp_of(a).nansum(x, axis=dims, keepdims=keepdim, dtype=_acc(x)), x.dtype)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        x = a._data
        g = expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim) * const(x == x, a)
        return _cast_grad(g, ctx.in_dtype)


@tensor_method("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` treating NaN as zero."""
    dims = None if dim is None else normalize_dims(input, dim)
    result = apply(NansumBackward0, input, dims, keepdim, _opt_dtype(dtype))
    return result if out is None else write_results(result, out)


@tensor_method("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over ``dim`` of the non-NaN elements (NaN where there are none)."""
    if not input._dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{dtype_word(input._dtype)}")
    dims = None if dim is None else normalize_dims(input, dim)
    total = nansum(input, dim, keepdim, dtype=dtype)
    x = input._data
    count = (x == x).sum(axis=dims, keepdims=keepdim, dtype=total._data.dtype)
    result = total / const(count, input)
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- prod
def _prod_array(a, dims, keepdim):
    x = a._data
    if a._dtype._category < 2:
        return x.prod(axis=dims, keepdims=keepdim, dtype=np.int64)
    return _finish(x.prod(axis=dims, keepdims=keepdim, dtype=_acc(x)), x.dtype)


def _products_but_one(x, d):
    """``P[..., k, ...] = prod_{i != k} x[..., i, ...]`` along axis ``d``: exact and differentiable
    to every order (O(n^2) memory along ``d``; used only for create_graph with zeros)."""
    shape = x._data.shape
    n = shape[d]
    xp = xp_of(x)
    eye = xp.eye(n, dtype=bool).reshape((n, n) + (1,) * (len(shape) - d - 1))
    rows = x.reshape(shape[:d] + (1,) + shape[d:]) * const(~eye, x) + const(eye, x)
    return rows.prod(d + 1)


def _prod_grad(g, x, out, d):
    """Gradient of ``prod`` along axis ``d``; ``g`` and ``out`` already broadcast to ``x``'s shape."""
    iszero = x._data == 0
    if not iszero.any():
        return g * out / x
    if create_graph():
        return g * _products_but_one(x, d)
    # One pass: slices without zeros get out/x; with one zero, only the zero gets the product of
    # the others; with more zeros every product of the others is zero.
    zeros = iszero.sum(axis=d, keepdims=True)
    safe = x + const(iszero, x)
    others = safe.prod(d, keepdim=True)
    return g * others * (const(zeros == 0, x) / safe + const((zeros == 1) & iszero, x))


class ProdBackward0(Node):
    """Product of all elements."""

    saves_result = True

    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _prod_array(a, None, False)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        if a._data.ndim == 0:
            return grad
        shape = a._data.shape
        flat = a.reshape(-1)
        n = flat._data.shape[0]
        gi = _prod_grad(grad.expand(n), flat, ctx.saved_result.expand(n), 0)
        return gi.reshape(shape)


class ProdBackward1(Node):
    """Product over one dim."""

    saves_result = True

    def forward(ctx, a, dim, keepdim):
        ctx.save_for_backward(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        if a._data.ndim == 0:
            return _prod_array(a, None, False)
        return _prod_array(a, (dim,), keepdim)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        if a._data.ndim == 0:
            return grad
        shape, dims = a._data.shape, (ctx.dim,)
        g = expand_reduced(grad, shape, dims, ctx.keepdim)
        out = expand_reduced(ctx.saved_result, shape, dims, ctx.keepdim)
        return _prod_grad(g, a, out, ctx.dim)


@tensor_method("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product of all elements, or over one ``dim``. Integer and bool inputs give int64, unless
    ``dtype`` says otherwise (the product is computed in, and returned as, ``dtype``)."""
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
        input = input.to(dtype)
    if dim is None:
        result = apply(ProdBackward0, input)
    elif not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    else:
        result = apply(ProdBackward1, input, wrap_dim(input, dim), keepdim)
    if dtype is not None and result._dtype is not dtype:
        result = result.to(dtype)
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- var / std
def _moments(ctx, a, dims, correction, keepdim):
    """(variance, mean) arrays; records shape/dims/dof on ctx."""
    if a._dtype._category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    x = a._data
    n = count_reduced(x.shape, dims)
    dof = n - correction
    if dof <= 0:
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=5)
        dof = 0
    ctx.shape, ctx.dims, ctx.keepdim, ctx.dof, ctx.count = x.shape, dims, keepdim, dof, n
    # Accumulated in float64 (as PyTorch's CPU kernels do for float32 and float16), so that a
    # standard deviation whose variance overflows the input dtype is still finite.
    xa = x.astype(np.float64) if x.dtype in (_F16, _F32) else x
    with quiet_errors():
        m = xa.sum(axis=dims, keepdims=True) / n if n else xa.sum(axis=dims, keepdims=True) * float("nan")
        dev = xa - m
        v = (dev * dev).sum(axis=dims, keepdims=keepdim) / dof
    xp = xp_of(a)
    if not keepdim:
        m = m.reshape(reduced_shape(x.shape, dims, False))
    return xp.asarray(v), xp.asarray(m)


def _var_grad(g, a, dims, dof):
    """d var / d x for an incoming ``g`` that has the reduced dims kept (size 1)."""
    scale = 2.0 / dof if dof else math.inf
    return g * scale * (a - a.mean(dims, keepdim=True))


def _std_grad(g, a, std, dims, dof):
    """d std / d x for ``g`` and ``std`` with the reduced dims kept (zero where std is 0)."""
    zero = std._data == 0
    if zero.any():
        g = g / (std + const(zero, std)) * const(~zero, std)
    else:
        g = g / std
    return _var_grad(g / 2, a, dims, dof)


class VarBackward0(Node):
    def forward(ctx, a, dims, correction, keepdim):
        ctx.save_for_backward(a)
        return _finish(_moments(ctx, a, dims, correction, keepdim)[0], a._data.dtype)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        g = keep_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return _var_grad(g, a, ctx.dims, ctx.dof)


class StdBackward0(Node):
    saves_result = True

    def forward(ctx, a, dims, correction, keepdim):
        ctx.save_for_backward(a)
        v = _moments(ctx, a, dims, correction, keepdim)[0]
        return _finish(xp_of(a).sqrt(v), a._data.dtype)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        g = keep_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim)
        s = keep_reduced(ctx.saved_result, ctx.shape, ctx.dims, ctx.keepdim)
        return _std_grad(g, a, s, ctx.dims, ctx.dof)


class VarMeanBackward0(Node):
    def forward(ctx, a, dims, correction, keepdim):
        ctx.save_for_backward(a)
        v, m = _moments(ctx, a, dims, correction, keepdim)
        return _finish(v, a._data.dtype), _finish(m, a._data.dtype)

    def backward(ctx, grad_var, grad_mean):
        (a,) = ctx.saved_values
        g = keep_reduced(grad_var, ctx.shape, ctx.dims, ctx.keepdim)
        gm = expand_reduced(grad_mean, ctx.shape, ctx.dims, ctx.keepdim) / ctx.count
        return _var_grad(g, a, ctx.dims, ctx.dof) + gm


class StdMeanBackward0(Node):
    def forward(ctx, a, dims, correction, keepdim):
        ctx.save_for_backward(a)
        ctx.correction = correction
        v, m = _moments(ctx, a, dims, correction, keepdim)
        return _finish(xp_of(a).sqrt(v), a._data.dtype), _finish(m, a._data.dtype)

    def backward(ctx, grad_std, grad_mean):
        (a,) = ctx.saved_values
        # A multi-output node keeps no result: the std is recomputed as a tensor with history.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = var(a, ctx.dims, correction=ctx.correction, keepdim=True) ** 0.5
        g = keep_reduced(grad_std, ctx.shape, ctx.dims, ctx.keepdim)
        gm = expand_reduced(grad_mean, ctx.shape, ctx.dims, ctx.keepdim) / ctx.count
        return _std_grad(g, a, s, ctx.dims, ctx.dof) + gm


def _var_args(name, input, dim, unbiased, correction):
    """Resolve PyTorch's overloads: (dim, unbiased, keepdim), (unbiased,), (dim, *, correction).
    The dtype is checked first, as PyTorch does."""
    if input._dtype._category < 2:
        which = "std and var" if name in ("var", "std") else name
        raise RuntimeError(f"{which} only support floating point and complex dtypes")
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both 'unbiased' and "
                        "'correction'")
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = None if dim is None else normalize_dims(input, dim)
    return dims, correction


def _complex_var(z, dims, correction, keepdim):
    """The (real) variance of complex ``z``: ``sum |z - mean|^2 / (n - correction)``, which is the
    variance of the real parts plus that of the imaginary parts; a composite, so differentiable
    (too few degrees of freedom warn once per part, as in PyTorch)."""
    return apply(VarBackward0, z.real, dims, correction, keepdim) + apply(VarBackward0, z.imag, dims, correction,
                                                                          keepdim)


def _complex_std(z, dims, correction, keepdim):
    """``sqrt`` of :func:`_complex_var`, with a zero gradient where it is 0 (as the real std)."""
    v = _complex_var(z, dims, correction, keepdim)
    zero = v == 0
    return (v + zero).sqrt() * ~zero


@tensor_method("var")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with ``correction`` (Bessel's by default; legacy ``unbiased``). A complex
    input has a real variance: ``mean |z - mean(z)|^2`` with the correction."""
    dims, correction = _var_args("var", input, dim, unbiased, correction)
    if input._dtype.is_complex:
        result = _complex_var(input, dims, correction, keepdim)
    else:
        result = apply(VarBackward0, input, dims, correction, keepdim)
    return result if out is None else write_results(result, out)


@tensor_method("std")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation over ``dim`` (real for complex inputs); see :func:`var` for the arguments."""
    dims, correction = _var_args("std", input, dim, unbiased, correction)
    if input._dtype.is_complex:
        result = _complex_std(input, dims, correction, keepdim)
    else:
        result = apply(StdBackward0, input, dims, correction, keepdim)
    return result if out is None else write_results(result, out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """``(var, mean)`` over ``dim`` in one pass (for complex inputs: a real var, a complex mean)."""
    dims, correction = _var_args("var_mean", input, dim, unbiased, correction)
    if input._dtype.is_complex:
        result = (_complex_var(input, dims, correction, keepdim), mean(input, dims, keepdim))
    else:
        result = apply(VarMeanBackward0, input, dims, correction, keepdim)
    return result if out is None else write_results(result, out)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """``(std, mean)`` over ``dim`` in one pass (for complex inputs: a real std, a complex mean)."""
    dims, correction = _var_args("std_mean", input, dim, unbiased, correction)
    if input._dtype.is_complex:
        result = (_complex_std(input, dims, correction, keepdim), mean(input, dims, keepdim))
    else:
        result = apply(StdMeanBackward0, input, dims, correction, keepdim)
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- logsumexp
class LogsumexpBackward0(Node):
    saves_result = True

    def forward(ctx, a, dims, keepdim):
        ctx.save_for_backward(a)
        ctx.dims, ctx.keepdim = dims, keepdim
        xp = xp_of(a)
        x = a._data
        if a._dtype._category < 2:
            x = x.astype(_dtype.get_default_dtype().np)
        acc = _acc(x)
        xa = x if acc is None else x.astype(acc)
        with quiet_errors():
            if count_reduced(x.shape, dims) == 0:
                r = xp.log(xp.exp(xa).sum(axis=dims, keepdims=keepdim))
            else:
                m = xa.max(axis=dims, keepdims=True)
                m = xp.where(xp.isfinite(m), m, 0)
                r = xp.log(xp.exp(xa - m).sum(axis=dims, keepdims=True)) + m
                if not keepdim:
                    r = r.reshape(reduced_shape(x.shape, dims, False))
        return _finish(xp.asarray(r), x.dtype)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        shape = a._data.shape
        g = keep_reduced(grad, shape, ctx.dims, ctx.keepdim)
        out = keep_reduced(ctx.saved_result, shape, ctx.dims, ctx.keepdim)
        return g * (a - out).exp()


@tensor_method("logsumexp")
def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow."""
    result = apply(LogsumexpBackward0, input, normalize_dims(input, dim), keepdim)
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- norms
class LinalgVectorNormBackward0(Node):
    saves_result = True

    def forward(ctx, a, ord, dims, keepdim, single_entry_exact=True, of_moduli=False):
        """``single_entry_exact``: a norm of one entry is its absolute value (PyTorch's vector norm;
        its distance kernels square it, and overflow, instead, and their count of non-zeros, ord 0,
        is NaN where a difference is NaN). ``of_moduli``: ``a`` holds the moduli
        of a complex tensor (PyTorch then gives the count of non-zeros, ord 0, no gradient at all)."""
        ctx.save_for_backward(a)
        ctx.ord, ctx.dims, ctx.keepdim, ctx.of_moduli = ord, dims, keepdim, of_moduli
        xp = xp_of(a)
        x = a._data
        acc = _acc(x)
        xa = x if acc is None else x.astype(acc)
        reduced = x.size if dims is None else math.prod(x.shape[d] for d in dims)
        with quiet_errors():
            if reduced == 1 and ord != 0 and single_entry_exact:   # |x|, without squaring's overflow
                r = xp.abs(xa).reshape(reduced_shape(x.shape, dims, keepdim))
            elif ord == 2:
                r = xp.sqrt((xa * xa).sum(axis=dims, keepdims=keepdim))
            elif ord == 1:
                r = xp.abs(xa).sum(axis=dims, keepdims=keepdim)
            elif ord == math.inf:
                r = xp.abs(xa).max(axis=dims, keepdims=keepdim)
            elif ord == -math.inf:
                r = xp.abs(xa).min(axis=dims, keepdims=keepdim)
            elif ord == 0:
                r = (xa != 0).sum(axis=dims, keepdims=keepdim, dtype=xa.dtype)
                if not single_entry_exact:   # the distance kernels' count is NaN where a difference is
                    r = xp.where(xp.isnan(xa).any(axis=dims, keepdims=keepdim), xp.nan, r)
            else:
                r = (xp.abs(xa) ** ord).sum(axis=dims, keepdims=keepdim) ** (1.0 / ord)
        return _finish(xp.asarray(r), x.dtype)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        p = ctx.ord
        if p == 0:   # a count of non-zeros: zero gradient (PyTorch gives zeros, not None, to real inputs)
            from .creation import zeros_like
            return None if ctx.of_moduli else zeros_like(a)
        shape, dims = a._data.shape, ctx.dims
        g = keep_reduced(grad, shape, dims, ctx.keepdim)
        if p == 1:
            return g * a.sign()
        out = keep_reduced(ctx.saved_result, shape, dims, ctx.keepdim)
        zero = out._data == 0
        if p == 2:   # a * (g / norm), as PyTorch orders it: g * a could overflow where the ratio does not
            if zero.any():
                return a * (g / (out + const(zero, out)) * const(~zero, out))
            return a * (g / out)
        if p == math.inf or p == -math.inf:
            # Split evenly between the entries that attain the norm (PyTorch's rule for ties); a NaN
            # norm is attained by none, and then the gradient is 0, as PyTorch's (not 0/0).
            x = a._data
            xp = xp_of(a)
            hit = xp.abs(x) == out._data
            share = hit / xp.maximum(hit.sum(axis=dims, keepdims=True), 1)
            return g * a.sign() * const(share.astype(x.dtype), a)
        xzero = a._data == 0
        scaled = a.sign() * (a.abs() + const(xzero, a)) ** (p - 1)
        if zero.any():
            return g * scaled / (out + const(zero, out)) ** (p - 1) * const(~zero, out)
        return g * scaled / out ** (p - 1)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ``ord``-norm over ``dim`` (all elements by default): 2, 1, inf, -inf, 0 or any p.
    Complex inputs give the real norm of their moduli (``dtype``, if given, must then be complex)."""
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.number)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{dtype_word(x._dtype)}")
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
        if x._dtype.is_complex and not dtype.is_complex:
            raise RuntimeError(f"linalg.vector_norm: dtype should be complex for complex inputs, but got "
                               f"{dtype_word(dtype)}")
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{dtype_word(dtype)}")
        if dtype.itemsize < x._dtype.itemsize:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({dtype_word(x._dtype)}) should "
                               f"be convertible without narrowing to the specified dtype ({dtype_word(dtype)})")
        x = x.to(dtype)
    ord = float(ord)
    dims = None if dim is None else normalize_dims(x, dim)
    x_was_complex = x._dtype.is_complex
    if x_was_complex:     # the norm of the moduli (real); abs carries the complex gradient
        x = x.abs()
    if ord == math.inf or ord == -math.inf:
        which = "inf" if ord > 0 else "-inf"
        shape = x._data.shape
        if dims is None and x._data.size == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {which} norm on an empty tensor "
                               "because the operation does not have an identity")
        for d in dims or ():
            if shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {which} norm on the dimension {d} "
                                   "because this dimension is empty and the operation does not have an identity")
    result = apply(LinalgVectorNormBackward0, x, ord, dims, keepdim, True, x_was_complex)
    return result if out is None else write_results(result, out)


@tensor_method("norm")
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm``: a vector norm (``p`` a number, or "fro" over at most 2 dims); "nuc" and
    matrix orders go to ``gputorch.linalg.matrix_norm``."""
    if isinstance(dim, int) and not isinstance(dim, bool):
        dim = (dim,)
    if not isinstance(p, str):
        return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype, out=out)
    if p == "fro" and (dim is None or len(dim) <= 2):
        return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
    if p == "fro":
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    from .. import linalg      # the torch.linalg namespace (it imports this module: imported here)
    matrix_norm = getattr(linalg, "matrix_norm", None)
    if matrix_norm is None:
        raise NotImplementedError(f"norm(p={p!r}) needs gputorch.linalg.matrix_norm")
    return matrix_norm(input, p, dim=(-2, -1) if dim is None else dim, keepdim=keepdim, dtype=dtype, out=out)


# ---------------------------------------------------------------------------- all / any / count_nonzero
class AllBackward0(Node):
    """Logical reduction (not differentiable: the output is bool, or uint8 for uint8 inputs)."""

    def forward(ctx, a, dims, keepdim, any_):
        x = a._data
        r = x.any(axis=dims, keepdims=keepdim) if any_ else x.all(axis=dims, keepdims=keepdim)
        return r.astype(np.uint8) if a._dtype is _dtype.uint8 else r


class CountNonzeroBackward0(Node):
    """Number of non-zero elements (int64; not differentiable)."""

    def forward(ctx, a, dims):
        return (a._data != 0).sum(axis=dims, dtype=np.int64)


def _logical_dims(input, dim):
    """The axes ``all``/``any`` reduce: unlike the arithmetic reductions, an empty ``dim``
    reduces no axis at all."""
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return ()
    return normalize_dims(input, dim)


@tensor_method("all")
def all(input, dim=None, keepdim=False, *, out=None):
    """Whether every element (over ``dim``) is non-zero (``dim=()``: elementwise, as in PyTorch)."""
    result = apply(AllBackward0, input, _logical_dims(input, dim), keepdim, False)
    return result if out is None else write_results(result, out)


@tensor_method("any")
def any(input, dim=None, keepdim=False, *, out=None):
    """Whether some element (over ``dim``) is non-zero (``dim=()``: elementwise, as in PyTorch)."""
    result = apply(AllBackward0, input, _logical_dims(input, dim), keepdim, True)
    return result if out is None else write_results(result, out)


@tensor_method("count_nonzero")
def count_nonzero(input, dim=None):
    """Number of non-zero elements over ``dim`` (all by default), as int64."""
    return apply(CountNonzeroBackward0, input, normalize_dims(input, dim))



@tensor_method("sum_to_size")
def sum_to_size(self, *size):
    """``self`` summed down to ``size``, a shape that broadcasts to ``self``'s (leading dims and
    dims where ``size`` has 1 are summed)."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(int(n) for n in size)
    if not size:   # as PyTorch: a full sum (integers become int64, even for a 0-d input)
        return sum(self)
    shape = self._data.shape
    lead = len(shape) - len(size)
    if lead < 0 or [n for n, m in zip(size, shape[lead:]) if n != 1 and n != m]:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    return sum_to_shape(self, size)


def _accept_numpy_names_everywhere():
    """Give every reduction (this module's and the re-exported families') ``axis=``/``keepdims=``,
    as function and as Tensor method."""
    for name in ("sum", "mean", "nansum", "nanmean", "prod", "var", "std", "var_mean", "std_mean", "logsumexp",
                 "all", "any", "count_nonzero", *_extrema_all, *_sorting_all, *_cumulative_all):
        fn = globals()[name]
        wrapped = accept_numpy_names(fn)
        globals()[name] = wrapped
        for method, registered in list(METHODS.items()):
            if registered is fn:
                METHODS[method] = wrapped


_accept_numpy_names_everywhere()
