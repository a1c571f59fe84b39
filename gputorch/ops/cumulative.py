"""Cumulative ops along a dim: cumsum, cumprod, logcumsumexp, cummax, cummin, and diff.

Each forward also runs in reverse (from the end of the dim backwards) for internal use:
the gradient of a cumulative sum is a reversed cumulative sum, so backward formulas stay
closed under differentiation.
"""
import numpy as np

from .. import _dtype, return_types
from .._dispatch import apply, apply_inplace
from .._tensor import Tensor
from ..autograd.node import Node
from ._common import quiet_errors, xp_of
from ._reducing import const, create_graph, wrap_dim, write_results
from .registry import tensor_method

__all__ = ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "diff"]

_F16 = np.dtype(np.float16)


def _scan(xp, fn, x, dim, reverse, dtype=None):
    """Run the scan ``fn(x, axis, dtype)`` along ``dim``, from the end when ``reverse``."""
    if x.ndim == 0:
        return x.astype(dtype) if dtype is not None else x.copy()
    if reverse:
        return xp.flip(fn(xp.flip(x, dim), dim, dtype), dim)
    return fn(x, dim, dtype)


_WIDER_ON_CPU = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}


def _accumulator(out, xp):
    """The dtype a running sum or product of ``out`` accumulates in: float32 for float16, and on the
    CPU double precision for float32 and complex64, as PyTorch's CPU kernels do (so a product that
    passes through float32's overflow range and comes back is finite, as there)."""
    if out == _F16:
        return np.dtype(np.float32)
    if xp is np:
        return _WIDER_ON_CPU.get(out, out)
    return out


def _narrowed(r, out):
    """The accumulated ``r`` in the result dtype ``out`` (values beyond its range become inf silently)."""
    if r.dtype == out:
        return r
    with quiet_errors():
        return r.astype(out)


def _result_dtype(a, dtype):
    if dtype is not None:
        return dtype.np
    return np.dtype(np.int64) if a._dtype._category < 2 else a._data.dtype


# ---------------------------------------------------------------------------- cumsum
class CumsumBackward0(Node):
    def forward(ctx, a, dim, dtype, reverse=False):
        ctx.dim, ctx.reverse, ctx.in_dtype = dim, reverse, a._dtype
        xp = xp_of(a)
        out = _result_dtype(a, dtype)
        x = a._data
        if dtype is not None and x.dtype != out:
            x = x.astype(out)
        acc = _accumulator(out, xp)
        r = _scan(xp, lambda v, ax, dt: xp.cumsum(v, axis=ax, dtype=dt), x, dim, reverse, acc)
        return _narrowed(r, out)

    def backward(ctx, grad):
        g = apply(CumsumBackward0, grad, ctx.dim, None, not ctx.reverse)
        return g if g._dtype is ctx.in_dtype else g.to(ctx.in_dtype)


def reverse_cumsum(t, dim):
    """``t`` summed from the end of ``dim`` backwards (differentiable)."""
    return apply(CumsumBackward0, t, dim, None, True)


@tensor_method("cumsum")
def cumsum(input, dim, *, dtype=None, out=None):
    """Running sum along ``dim``. Integer and bool inputs give int64 unless ``dtype`` is given."""
    result = apply(CumsumBackward0, input, wrap_dim(input, dim),
                   None if dtype is None else _dtype.to_dtype(dtype))
    return result if out is None else write_results(result, out)


@tensor_method("cumsum_")
def cumsum_(self, dim, *, dtype=None):
    """In-place running sum along ``dim`` (the result keeps ``self``'s dtype)."""
    return apply_inplace(CumsumBackward0, self, wrap_dim(self, dim), self._dtype if dtype is None
                         else _dtype.to_dtype(dtype))


# ---------------------------------------------------------------------------- cumprod
class CumprodBackward0(Node):
    saves_result = True

    def forward(ctx, a, dim):
        ctx.save_for_backward(a)
        ctx.dim = dim
        xp = xp_of(a)
        out = _result_dtype(a, None)
        acc = _accumulator(out, xp)
        x = a._data
        if a._dtype.is_complex and x.ndim and x.shape[dim]:
            # PyTorch starts from 1 * x[0] in complex arithmetic: an infinite part makes NaNs there.
            x = x.copy()
            first = (slice(None),) * dim + (slice(0, 1),)
            x[first] = x[first] * x.dtype.type(1)
        r = _scan(xp, lambda v, ax, dt: xp.cumprod(v, axis=ax, dtype=dt), x, dim, False, acc)
        return _narrowed(r, out)

    def backward(ctx, grad):
        (a,) = ctx.saved_values
        x = a._data
        d = ctx.dim
        if x.ndim == 0 or x.shape[d] <= 1:
            return grad
        iszero = x == 0
        if not iszero.any():
            return reverse_cumsum(grad * ctx.saved_result, d) / a
        if create_graph():
            return _cumprod_grad_exact(grad, a, d)
        return _cumprod_grad_zeros(grad, a, ctx.saved_result, d, iszero)


def _cumprod_grad_zeros(grad, a, out, d, iszero):
    """Gradient value when some slices hold zeros, in O(n): with ``z`` the first zero of a slice,
    entries before ``z`` get the usual formula, ``z`` itself gets
    ``prod(x[:z]) * sum_{j>=z} grad[j] * prod(x[z+1:j+1])`` and entries after ``z`` get 0."""
    xp = xp_of(a)
    x = a._data
    n = x.shape[d]
    pos = xp.arange(n).reshape((n,) + (1,) * (x.ndim - d - 1))
    first = xp.where(iszero.any(axis=d, keepdims=True), iszero.argmax(axis=d, keepdims=True), n)
    before, at, after = pos < first, pos == first, pos > first
    usual = reverse_cumsum(grad * out, d) / (a + const(iszero, a)) * const(before, a)
    prefix = (a * const(before, a) + const(~before, a)).prod(d, keepdim=True)
    tail = (a * const(after, a) + const(~after, a)).cumprod(d)
    at_zero = (grad * tail * const(~before, a)).sum(d, keepdim=True)
    return usual + const(at, a) * prefix * at_zero


def _cumprod_grad_exact(grad, a, d):
    """``grad_k = sum_{j>=k} grad_j * prod_{i<=j, i!=k} x_i`` built from cumprods of ``x`` with
    ``x_k`` replaced by 1: exact to every order at zeros (O(n^2) memory along ``d``)."""
    xp = xp_of(a)
    shape = a._data.shape
    n = shape[d]
    tail = (1,) * (len(shape) - d - 1)
    eye = xp.eye(n, dtype=bool).reshape((n, n) + tail)
    upper = xp.triu(xp.ones((n, n), dtype=bool)).reshape((n, n) + tail)  # [k, j]: j >= k
    rows = a.reshape(shape[:d] + (1,) + shape[d:]) * const(~eye, a) + const(eye, a)
    g = grad.reshape(shape[:d] + (1,) + shape[d:])
    return (g * const(upper, a) * rows.cumprod(d + 1)).sum(d + 1)


@tensor_method("cumprod")
def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``. Integer and bool inputs give int64 unless ``dtype`` is given."""
    if dtype is not None:
        input = input.to(_dtype.to_dtype(dtype))
    result = apply(CumprodBackward0, input, wrap_dim(input, dim))
    return result if out is None else write_results(result, out)


@tensor_method("cumprod_")
def cumprod_(self, dim, *, dtype=None):
    """In-place running product along ``dim``."""
    if dtype is not None and _dtype.to_dtype(dtype) is not self._dtype:
        raise RuntimeError(f"cumprod_: dtype {dtype} does not match the tensor's dtype {self._dtype}")
    if self._dtype is _dtype.bool and self._data.ndim and self._data.size:   # (torch runs no kernel for 0-d)
        raise NotImplementedError("\"cumprod_out_cpu\" not implemented for 'Bool'")
    if self._dtype._category != 2:   # integer products are computed in the tensor's own dtype
        return self.copy_(cumprod(self, dim))
    return apply_inplace(CumprodBackward0, self, wrap_dim(self, dim))


# ---------------------------------------------------------------------------- logcumsumexp
def _logaddexp_scan(xp, x, dim, dtype):
    return xp.logaddexp.accumulate(x, axis=dim)


class LogcumsumexpBackward0(Node):
    saves_result = True

    def forward(ctx, a, dim, reverse=False):
        ctx.save_for_backward(a)
        ctx.dim, ctx.reverse = dim, reverse
        xp = xp_of(a)
        x = a._data
        if x.size == 0 or x.ndim == 0:
            return x.copy()
        xa = x.astype(np.float32) if x.dtype == _F16 else x
        with quiet_errors():
            r = _scan(xp, lambda v, ax, dt: _logaddexp_scan(xp, v, ax, dt), xa, dim, reverse)
        return r.astype(x.dtype) if r.dtype != x.dtype else r

    def backward(ctx, grad):
        # grad_k = sum_{j >= k} grad_j * exp(x_k - out_j), summed in log space separately for the
        # positive and negative parts of grad so that nothing overflows.
        (a,) = ctx.saved_values
        x = a._data
        if x.size == 0 or x.ndim == 0:
            return grad
        out, d, rev = ctx.saved_result, ctx.dim, not ctx.reverse
        tiny = np.finfo(x.dtype).max / 4  # stands in for log(0) without producing inf - inf
        g = grad._data
        parts = []
        for sign, mask in ((1, g > 0), (-1, g < 0)):
            if not mask.any():
                continue
            log_g = ((grad * sign) * const(mask, a) + const(~mask, a)).log()
            logs = log_g - const((~mask * tiny).astype(x.dtype), a)
            summed = apply(LogcumsumexpBackward0, logs - out, d, rev)
            term = (a + summed).exp()
            parts.append(term if sign > 0 else -term)
        if not parts:
            return grad * 0
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]


@tensor_method("logcumsumexp")
def logcumsumexp(input, dim, *, out=None):
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow."""
    if not input._dtype.is_floating_point:
        raise NotImplementedError(f"\"logcumsumexp\" not implemented for '{input._dtype.name}'")
    result = apply(LogcumsumexpBackward0, input, wrap_dim(input, dim))
    return result if out is None else write_results(result, out)


# ---------------------------------------------------------------------------- cummax, cummin

class CummaxBackward0(Node):
    """Running maximum (or minimum) with the index it was last attained at: ties and repeated
    NaN take the latest position, and a NaN, once seen, stays (PyTorch's rule)."""
    def forward(ctx, a, dim, largest=True):
        xp = xp_of(a)
        x = a._data
        ctx.shape, ctx.dim = x.shape, dim
        if x.ndim == 0:
            ctx.index = xp.zeros((), dtype=xp.int64)
            return x.copy(), ctx.index
        ufunc = xp.maximum if largest else xp.minimum
        values = ufunc.accumulate(x, axis=dim)
        hit = x == values
        if x.dtype.kind == "f":
            hit |= xp.isnan(x)
        n = x.shape[dim]
        pos = xp.arange(n, dtype=xp.int64).reshape((n,) + (1,) * (x.ndim - dim - 1))
        ctx.index = xp.maximum.accumulate(xp.where(hit, pos, 0), axis=dim)
        return values, ctx.index

    def backward(ctx, grad, grad_indices):
        if grad._data.ndim == 0:
            return grad
        from .creation import zeros
        base = zeros(ctx.shape, dtype=grad._dtype, device=grad._device)
        return base.scatter_add(ctx.dim, const(ctx.index, grad), grad)


class CumminBackward0(CummaxBackward0):
    def forward(ctx, a, dim):
        return CummaxBackward0.forward(ctx, a, dim, largest=False)


def _cumextreme(name, node, input, dim, out):
    # PyTorch checks ``dim`` only for a non-empty input.
    d = 0 if input._data.size == 0 and input._data.ndim else wrap_dim(input, dim)
    values, indices = apply(node, input, d)
    result = getattr(return_types, name)(values, indices)
    return result if out is None else write_results(result, out)


@tensor_method("cummax")
def cummax(input, dim, *, out=None):
    """``(values, indices)``: the running maximum along ``dim`` and where it was last attained."""
    return _cumextreme("cummax", CummaxBackward0, input, dim, out)


@tensor_method("cummin")
def cummin(input, dim, *, out=None):
    """``(values, indices)``: the running minimum along ``dim`` and where it was last attained."""
    return _cumextreme("cummin", CumminBackward0, input, dim, out)


# ---------------------------------------------------------------------------- diff
def _check_diff_operand(name, value, input):
    if value is None:
        return
    if not isinstance(value, Tensor):
        raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if value._data.ndim != input._data.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")


@tensor_method("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The ``n``-th forward difference along ``dim``: ``x[i+1] - x[i]`` applied ``n`` times
    (``!=`` for bool), after joining ``prepend`` and ``append`` to ``input`` along ``dim``.
    Each application shortens ``dim`` by one (down to 0). A composite, so differentiable."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(input, dim)
    _check_diff_operand("prepend", prepend, input)
    _check_diff_operand("append", append, input)
    if n == 0:   # a copy of ``input`` (``prepend`` and ``append`` unused), recorded as PyTorch records it
        from .creation import empty_like
        result = empty_like(input).copy_(input)
        return result if out is None else write_results(result, out)
    if prepend is not None or append is not None:
        from .shape.joining import cat
        parts = [t for t in (prepend, input, append) if t is not None]
        input = cat(parts, d)
    x = input
    for _ in range(min(n, x._data.shape[d])):
        size = x._data.shape[d] - 1
        later, earlier = x.narrow(d, 1, size), x.narrow(d, 0, size)
        x = later != earlier if x._dtype.name == "bool" else later - earlier
    return x if out is None else write_results(x, out)
