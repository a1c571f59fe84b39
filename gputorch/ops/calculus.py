"""Numerical calculus on sampled values: ``trapezoid`` (and its old name ``trapz``),
``cumulative_trapezoid`` (integrals by the trapezoidal rule along a dim, at unit or given
spacing ``dx`` or at sample points ``x``) and ``gradient`` (derivatives by central differences
inside, one-sided ones of first or second order at the edges, along one or several dims).

All are composites of slicing and arithmetic, so they are differentiable.
"""
from .. import _dtype
from .._tensor import Tensor

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid", "gradient"]


def _require(name, arg, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}")


def _spacing_along(y, x, dim, name):
    """``x[1:] - x[:-1]`` along ``dim``, broadcastable against ``y`` (a 1-d ``x`` lies along ``dim``)."""
    _require(name, "x", x)
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y._data.ndim
        shape[dim] = x._data.shape[0]
        x = x.reshape(shape)
        d = dim
    else:
        d = dim - y._data.ndim   # counted from the end: x may have fewer leading dims
        if x._data.ndim < -d or x._data.shape[d] != y._data.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    n = x._data.shape[d]
    return x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)


def _integration_dim(y, dim):
    if y._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return y._wrap_dim(dim)


def _pair_sums(y, dim):
    """``y[1:] + y[:-1]`` along ``dim``."""
    n = y._data.shape[dim]
    return y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)


def _refuse_bool(name, y, x):
    """PyTorch's error for bool samples or sample points."""
    x_bool = isinstance(x, Tensor) and x._dtype is _dtype.bool
    if y._dtype is _dtype.bool or x_bool:
        which = "`x` or `y`" if isinstance(x, Tensor) else "`y`"
        raise RuntimeError(f"{name}: received a bool input for {which}, but bool is not supported")


def _floating(y):
    return y if y._dtype._category == 2 else y.to(_dtype.get_default_dtype())


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule: sample points ``x`` (a tensor:
    1-d along ``dim``, or broadcasting with ``y``) or a uniform spacing ``dx`` (default 1)."""
    _require("trapezoid", "y", y)
    d = _integration_dim(y, dim)       # PyTorch checks the dim before the dtypes
    _refuse_bool("trapezoid", y, x)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both x and dx")
    if y._data.shape[d] == 0:   # an empty integral: zeros of y's own dtype
        shape = y._data.shape[:d] + y._data.shape[d + 1:]
        return y.new_zeros(shape)
    if isinstance(x, Tensor):
        return (_spacing_along(y, x, d, "trapezoid") * _pair_sums(y, d)).sum(d) / 2.0
    if x is not None:   # trapz(y, dx) written positionally
        dx = x
    dx = 1 if dx is None else dx
    total = y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5
    return total * dx


def trapz(y, x=None, *, dx=None, dim=-1):
    """The old name of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral of ``y`` along ``dim`` (one value fewer than ``y`` has
    there): sample points ``x`` or a uniform spacing ``dx`` (default 1)."""
    _require("cumulative_trapezoid", "y", y)
    _refuse_bool("cumulative_trapezoid", y, None)   # PyTorch's order: y's dtype, the dim, x's dtype
    d = _integration_dim(y, dim)
    _refuse_bool("cumulative_trapezoid", y, x)
    n = y._data.shape[d]
    if n == 0:
        empty = _floating(y).narrow(d, 0, 0)
        if isinstance(x, Tensor) and x.requires_grad:   # connected to x (zero gradient), as PyTorch's is
            empty = empty + x.sum() * 0
        return empty
    if isinstance(x, Tensor):
        areas = _spacing_along(y, x, d, "cumulative_trapezoid") * _pair_sums(y, d) / 2.0
    else:
        dx = 1 if dx is None else dx
        areas = (dx / 2.0) * _pair_sums(y, d)
    return areas.cumsum(d)


def _check_gradient_args(input, spacing, dim, edge_order):
    """PyTorch's checks, in its order (the edge order, the spacing's length, then the dims, which are
    returned wrapped, then their sizes)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    ndim = input._data.ndim
    count = ndim if dim is None else 1 if isinstance(dim, int) else len(dim)
    if isinstance(spacing, (list, tuple)) and len(spacing) != count:
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
            f"'self.dim() = {ndim}', since dim argument was not given, but got a list of length "
            f"{len(spacing)}" if dim is None else
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to "
            f"have the same length, but got a spacing argument of length {len(spacing)} and a dim argument of "
            f"length {count}.")
    if dim is None:
        dims = list(range(ndim))
    elif isinstance(dim, int):
        dims = [input._wrap_dim(dim)]
    else:
        dims = [input._wrap_dim(d) for d in dim]
    for d in dims:
        if input._data.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return dims


def _uniform_gradient(f, d, h, edge_order):
    n = f._data.shape[d]
    inner = (f.narrow(d, 2, n - 2) - f.narrow(d, 0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / h
        last = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / h
    else:
        first = (-1.5 * f.narrow(d, 0, 1) + 2.0 * f.narrow(d, 1, 1) - 0.5 * f.narrow(d, 2, 1)) / h
        last = (0.5 * f.narrow(d, n - 3, 1) - 2.0 * f.narrow(d, n - 2, 1) + 1.5 * f.narrow(d, n - 1, 1)) / h
    from .shape import cat
    return cat([first, inner, last], d)


def _coordinate_gradient(f, d, x, edge_order):
    """Second-order differences at unevenly spaced points ``x`` (1-d, one per sample along ``d``)."""
    n = f._data.shape[d]
    if x._data.ndim != 1 or x._data.shape[0] != n:
        raise RuntimeError("torch.gradient expected each tensor to be on the same device and of size equal to "
                           "the size of the input along its dimension")
    shape = [1] * f._data.ndim
    shape[d] = n - 1
    h = (x[1:] - x[:-1]).reshape(shape)
    h0, h1 = h.narrow(d, 0, n - 2), h.narrow(d, 1, n - 2)
    a = -h1 / (h0 * (h0 + h1))
    b = (h1 - h0) / (h0 * h1)
    c = h0 / (h1 * (h0 + h1))
    inner = a * f.narrow(d, 0, n - 2) + b * f.narrow(d, 1, n - 2) + c * f.narrow(d, 2, n - 2)
    first_h, last_h = h.narrow(d, 0, 1), h.narrow(d, n - 2, 1)
    if edge_order == 1:
        first = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / first_h
        last = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / last_h
    else:
        g0, g1 = h.narrow(d, 0, 1), h.narrow(d, 1, 1)
        first = (-(2.0 * g0 + g1) / (g0 * (g0 + g1)) * f.narrow(d, 0, 1) + (g0 + g1) / (g0 * g1) * f.narrow(d, 1, 1)
                 - g0 / (g1 * (g0 + g1)) * f.narrow(d, 2, 1))
        k0, k1 = h.narrow(d, n - 3, 1), h.narrow(d, n - 2, 1)
        last = (k1 / (k0 * (k0 + k1)) * f.narrow(d, n - 3, 1) - (k1 + k0) / (k0 * k1) * f.narrow(d, n - 2, 1)
                + (2.0 * k1 + k0) / (k1 * (k0 + k1)) * f.narrow(d, n - 1, 1))
    from .shape import cat
    return cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` along each dim of ``dim`` (an int or a sequence; all dims by
    default), one tensor per dim: central differences inside, one-sided differences of order
    ``edge_order`` (1 or 2) at the edges. ``spacing`` is a number (uniform), one number per dim,
    or one 1-d tensor of sample coordinates per dim."""
    _require("gradient", "input", input)
    dims = _check_gradient_args(input, spacing, dim, edge_order)
    f = _floating(input)
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    results = []
    for d, step in zip(dims, steps):
        if isinstance(step, Tensor) and step._data.ndim == 1:
            results.append(_coordinate_gradient(f, d, _floating(step), edge_order))
        else:
            results.append(_uniform_gradient(f, d, float(step), edge_order))
    return tuple(results)
