"""Vision helpers: ``F.pad`` (constant, reflect, replicate, circular), ``F.one_hot`` and
``F.normalize`` (``F.interpolate`` follows below them).

Padding is one op per mode. Constant padding writes the input into a filled tensor (negative
pads crop); its gradient is the same op with the pads negated. Reflect, replicate and circular
padding gather the input along each padded dim with an index vector; their gradient adds the
output gradient back along the same vectors (``PadBackwardBackward0``), whose own gradient is
the gather again.
"""
import numpy as np

from ... import _dtype
from ..._dispatch import apply
from ..._tensor import Tensor
from ...autograd.node import Node
from ...ops._common import xp_of
from ...amp.autocast_mode import autocast_function

__all__ = ["pad", "one_hot", "normalize"]


# ================================================================ pad
class ConstantPadNdBackward0(Node):
    """``input`` placed inside a tensor filled with ``value``; ``pad`` lists (left, right) per dim
    from the last one, negative entries crop."""

    def forward(ctx, a, pad, value):
        x = a._data
        shape = list(x.shape)
        dst, src = [slice(None)] * x.ndim, [slice(None)] * x.ndim
        for i in range(len(pad) // 2):
            d = x.ndim - 1 - i
            left, right = pad[2 * i], pad[2 * i + 1]
            n = shape[d]
            size = n + left + right
            if size < 0:
                raise RuntimeError(f"The input size {n}, plus negative padding {left} and {right} resulted in a "
                                   f"negative output size, which is invalid. Check dimension {d} of your input.")
            start, stop = max(-left, 0), n - max(-right, 0)
            src[d] = slice(start, max(stop, start))
            dst[d] = slice(max(left, 0), max(left, 0) + max(stop - start, 0))
            shape[d] = size
        ctx.pad = pad
        out = xp_of(a).full(shape, value, dtype=x.dtype)
        out[tuple(dst)] = x[tuple(src)]
        return out

    def backward(ctx, grad):
        return apply(ConstantPadNdBackward0, grad, tuple(-p for p in ctx.pad), 0)


class _IndexPad(Node):
    """Gather ``input`` along each padded axis: ``plan`` holds ``(axis, size, kind, left, right)``."""

    def forward(ctx, a, plan):
        xp = xp_of(a)
        ctx.plan = plan
        out = a._data
        for axis, n, kind, left, right in plan:
            out = xp.take(out, _pad_index(xp, kind, n, left, right), axis=axis)
        return out

    def backward(ctx, grad):
        return apply(PadBackwardBackward0, grad, ctx.plan, type(ctx))


class ReflectionPad1DBackward0(_IndexPad):
    pass


class ReflectionPad2DBackward0(_IndexPad):
    pass


class ReflectionPad3DBackward0(_IndexPad):
    pass


class ReplicationPad1DBackward0(_IndexPad):
    pass


class ReplicationPad2DBackward0(_IndexPad):
    pass


class ReplicationPad3DBackward0(_IndexPad):
    pass


class CircularPadBackward0(_IndexPad):
    pass


class PadBackwardBackward0(Node):
    """The gradient of an index pad: ``grad`` added back along each axis's index vector."""

    def forward(ctx, g, plan, pad_cls):
        xp = xp_of(g)
        ctx.plan, ctx.pad_cls = plan, pad_cls
        out = g._data
        for axis, n, kind, left, right in reversed(plan):
            idx = _pad_index(xp, kind, n, left, right)
            moved = xp.moveaxis(out, axis, 0)
            acc = xp.zeros((n,) + moved.shape[1:], dtype=out.dtype)
            xp.add.at(acc, idx, moved)
            out = xp.moveaxis(acc, 0, axis)
        return out

    def backward(ctx, grad):
        return apply(ctx.pad_cls, grad, ctx.plan), None


def _pad_index(xp, kind, n, left, right):
    """The source position of each output position along one padded axis."""
    if kind == "circular":
        # as PyTorch: negative pads crop first, then the kept part wraps around
        start = max(-left, 0)
        kept = n - start - max(-right, 0)
        return xp.mod(xp.arange(-max(left, 0), kept + max(right, 0)), kept) + start
    pos = xp.arange(-left, n + right)
    if kind == "replicate":
        return xp.clip(pos, 0, n - 1)
    if n == 1:
        return xp.zeros_like(pos)
    period = 2 * (n - 1)
    pos = xp.mod(pos, period)
    return xp.where(pos >= n, period - pos, pos)


_PAD_NODES = {
    ("reflect", 1): ReflectionPad1DBackward0, ("reflect", 2): ReflectionPad2DBackward0,
    ("reflect", 3): ReflectionPad3DBackward0, ("replicate", 1): ReplicationPad1DBackward0,
    ("replicate", 2): ReplicationPad2DBackward0, ("replicate", 3): ReplicationPad3DBackward0,
}

_NON_CONSTANT_HELP = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_plan(input, pad, mode):
    """``(axis, size, kind, left, right)`` per padded axis, after PyTorch's checks for ``mode``."""
    shape = input._data.shape
    ndim = len(shape)
    k = len(pad) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
                                  + _NON_CONSTANT_HELP)
    if mode in ("reflect", "replicate"):
        first = 1 if ndim == k + 2 else 0
        if any(s == 0 for s in shape[first:]):
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                               f"other non-zero dimensions for input, but got: {list(shape)}")
    plan = []
    for i in range(k):
        axis = ndim - 1 - i
        n, left, right = shape[axis], pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #{2 + len(pad)}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({left}, {right}) at dimension {axis} of input "
                               f"{list(shape)}")
        if mode == "circular":
            if left > n or right > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if n - max(-left, 0) - max(-right, 0) <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        size = n + left + right
        if size < 0:
            new_shape = list(shape)
            new_shape[axis] = size
            raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {new_shape}")
        plan.append((axis, n, mode, left, right))
    return tuple(plan)


def _check_pad_arg(pad):
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for i, p in enumerate(pad):
        if isinstance(p, Tensor) and p._data.ndim == 0 and p._dtype._category < 2:
            continue
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    return pad


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``: ``pad = (left_last, right_last, left_2nd_last, right_2nd_last, ...)``, from the
    last dim backwards.

    ``mode``: ``"constant"`` (fill with ``value``, default 0; negative pads crop any dims),
    ``"reflect"`` (mirror without repeating the edge), ``"replicate"`` (repeat the edge) or
    ``"circular"`` (wrap around); these three pad the last 1, 2 or 3 dims of a batched or
    unbatched input.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    pad = _check_pad_arg(pad)
    ndim = input._data.ndim
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    if mode == "constant":
        return apply(ConstantPadNdBackward0, input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    plan = _pad_plan(input, pad, mode)
    cls = CircularPadBackward0 if mode == "circular" else _PAD_NODES[(mode, len(pad) // 2)]
    return apply(cls, input, plan)


# ================================================================ one_hot
class OneHot(Node):
    """Not differentiable: integer output."""

    def forward(ctx, a, num_classes):
        xp = xp_of(a)
        x = a._data
        return (x[..., None] == xp.arange(num_classes)).astype(np.int64)


def one_hot(tensor, num_classes=-1):
    """``(*, num_classes)`` int64 tensor with a 1 at each index of the int64 ``tensor``
    (``num_classes=-1``: one more than the largest index)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not {type(tensor).__name__}")
    if tensor._dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    x = tensor._data
    if x.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    if num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return apply(OneHot, tensor, int(num_classes))


# ================================================================ normalize
@autocast_function("normalize")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from ...ops.arithmetic import div
    return div(input, denom, out=out)


# ================================================================ interpolate
# Resampling is separable: along each spatial dim, output position ``o`` reads input
# ``idx0[o]`` (nearest) or ``lam0[o] * x[idx0[o]] + lam1[o] * x[idx1[o]]`` (linear). The
# index/weight plan of each dim is computed on the host with PyTorch's formulas (in float32
# for float32 inputs, as PyTorch's kernels do), the last dim is resampled first (PyTorch's
# order of operations), and the gradient applies each dim's (out, in) weight matrix transposed.
class _ResamplePlan:
    """Per-dim plan: ``idx0``, ``lam0``, ``idx1``, ``lam1`` (host arrays; ``idx1 is None`` for nearest)."""

    __slots__ = ("in_size", "out_size", "idx0", "lam0", "idx1", "lam1")

    def __init__(self, in_size, out_size, idx0, lam0=None, idx1=None, lam1=None):
        self.in_size, self.out_size = in_size, out_size
        self.idx0, self.lam0, self.idx1, self.lam1 = idx0, lam0, idx1, lam1

    def matrix(self, np_dtype):
        a = np.zeros((self.out_size, self.in_size), dtype=np_dtype)
        rows = np.arange(self.out_size)
        if self.idx1 is None:
            a[rows, self.idx0] = 1
        else:
            np.add.at(a, (rows, self.idx0), self.lam0.astype(np_dtype))
            np.add.at(a, (rows, self.idx1), self.lam1.astype(np_dtype))
        return a

    def repeat_factor(self):
        """``k`` when this is nearest upsampling by an integer factor (output ``o`` reads ``o // k``)."""
        if self.idx1 is not None or self.out_size % self.in_size:
            return None
        k = self.out_size // self.in_size
        return k if np.array_equal(self.idx0, np.arange(self.out_size) // k) else None


def _nearest_plan(in_size, out_size, scale, exact):
    o = np.arange(out_size)
    if not exact and out_size == in_size:
        return _ResamplePlan(in_size, out_size, o)
    if not exact and out_size == 2 * in_size:
        return _ResamplePlan(in_size, out_size, o >> 1)
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size) / np.float32(out_size)
    pos = (o.astype(np.float32) + np.float32(0.5)) * s if exact else o.astype(np.float32) * s
    return _ResamplePlan(in_size, out_size, np.minimum(np.floor(pos).astype(np.int64), in_size - 1))


def _linear_plan(in_size, out_size, scale, align_corners, opmath):
    o = np.arange(out_size)
    if out_size == in_size:
        return _ResamplePlan(in_size, out_size, o, np.ones(out_size, opmath), o, np.zeros(out_size, opmath))
    if align_corners:
        s = opmath.type(in_size - 1) / opmath.type(out_size - 1) if out_size > 1 else opmath.type(0)
        src = s * o.astype(opmath)
    else:
        s = opmath.type(1.0 / scale) if scale is not None and scale > 0 else \
            opmath.type(in_size) / opmath.type(out_size)
        src = np.maximum(s * (o.astype(opmath) + opmath.type(0.5)) - opmath.type(0.5), opmath.type(0))
    idx0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    lam1 = np.clip(src - idx0.astype(opmath), opmath.type(0), opmath.type(1))
    idx1 = idx0 + (idx0 < in_size - 1)
    return _ResamplePlan(in_size, out_size, idx0, opmath.type(1) - lam1, idx1, lam1)


def _along(xp, x, axis, idx):
    return xp.take(x, xp.asarray(idx), axis=axis)


def _resample(xp, x, plans):
    n = len(plans)
    for d in reversed(range(n)):
        p, axis = plans[d], d - n
        if p.idx1 is None:
            if p.out_size != p.in_size or not np.array_equal(p.idx0, np.arange(p.out_size)):
                x = _along(xp, x, axis, p.idx0)
            continue
        shape = (-1,) + (1,) * (-axis - 1)
        lam0 = xp.asarray(p.lam0.astype(x.dtype, copy=False).reshape(shape))
        lam1 = xp.asarray(p.lam1.astype(x.dtype, copy=False).reshape(shape))
        with np.errstate(all="ignore"):     # inf * 0 gives NaN silently, as in PyTorch
            x = _along(xp, x, axis, p.idx0) * lam0 + _along(xp, x, axis, p.idx1) * lam1
    return x


def _resample_adjoint(xp, g, plans):
    n = len(plans)
    for d in range(n):
        p, axis = plans[d], d - n
        k = p.repeat_factor()
        if k is not None:          # nearest, integer factor: sum each group of k outputs
            shape = g.shape[:g.ndim + axis] + (p.in_size, k) + g.shape[g.ndim + axis + 1:]
            g = g.reshape(shape).sum(axis=axis)   # the k axis sits where `axis` was
            continue
        a = xp.asarray(p.matrix(g.dtype))
        g = g @ a if axis == -1 else xp.moveaxis(xp.moveaxis(g, axis, -1) @ a, -1, axis)
    return g


class _Resample(Node):
    _adjoint = None

    def forward(ctx, input, plans):
        ctx.plans = plans
        return _resample(xp_of(input), input._data, plans)

    def backward(ctx, grad):
        return apply(type(ctx)._adjoint, grad, ctx.plans)


class _ResampleAdjoint(Node):
    _forward_op = None

    def forward(ctx, grad_output, plans):
        ctx.plans = plans
        return _resample_adjoint(xp_of(grad_output), grad_output._data, plans)

    def backward(ctx, grad):
        return apply(type(ctx)._forward_op, grad, ctx.plans)


class UpsampleNearest1DBackward0(_Resample):
    pass


class UpsampleNearest2DBackward0(_Resample):
    pass


class _UpsampleNearestExact1DBackward0(_Resample):
    pass


class _UpsampleNearestExact2DBackward0(_Resample):
    pass


class UpsampleLinear1DBackward0(_Resample):
    pass


class UpsampleBilinear2DBackward0(_Resample):
    pass


def _pair_resample_ops():
    for op in (UpsampleNearest1DBackward0, UpsampleNearest2DBackward0, _UpsampleNearestExact1DBackward0,
               _UpsampleNearestExact2DBackward0, UpsampleLinear1DBackward0, UpsampleBilinear2DBackward0):
        name = op.__name__.replace("Backward0", "BackwardBackward0")
        op._adjoint = type(name, (_ResampleAdjoint,), {"_forward_op": op, "__module__": __name__,
                                                       "__doc__": f"The gradient of {op.__name__}."})


_pair_resample_ops()

_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _interp_sizes(input, size, scale_factor, recompute_scale_factor, dim):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if isinstance(size, (list, tuple)) and len(size) != dim:
            raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             "(o1, o2, ...,oK) format.")
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size with types {[type(s) for s in sizes]}")
        scales = None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 "format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        sizes = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if sizes is None:
        sizes = [int(np.floor(float(input.shape[2 + i]) * scales[i])) for i in range(dim)]
        if recompute_scale_factor:
            scales = None
    return sizes, scales if scales is not None else [None] * dim


def _check_interp_sizes(input, sizes):
    in_sizes = list(input.shape[2:])
    if all(s > 0 for s in in_sizes + sizes):
        return
    names = "HW"[-len(sizes):] if len(sizes) <= 2 else "DHW"
    fmt = lambda v: ", ".join(f"{n}: {s}" for n, s in zip(names, v))  # noqa: E731
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({fmt(in_sizes)}) "
                       f"output ({fmt(sizes)})")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize ``input`` (N, C, L) or (N, C, H, W) to ``size`` or by ``scale_factor``.

    Modes: ``"nearest"`` (PyTorch's ``floor(out_index * in/out)`` rule), ``"nearest-exact"``,
    ``"linear"`` (3-D input), ``"bilinear"`` (4-D input) with ``align_corners`` (default False:
    source ``(o + 0.5) * in/out - 0.5`` clamped at 0; True: ``o * (in-1)/(out-1)``), and ``"area"``
    (adaptive average pooling). With ``scale_factor`` the output size is ``floor(in * scale)`` and the
    scale itself is used for the source positions unless ``recompute_scale_factor`` is True.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not supported by gputorch")
    dim = input.dim() - 2
    sizes, scales = _interp_sizes(input, size, scale_factor, recompute_scale_factor, max(dim, 0))
    ndim = input.dim()
    if ndim in (3, 4) and mode in ("nearest", "nearest-exact", "linear", "bilinear", "area"):
        if (mode == "linear") != (ndim == 3) and mode in ("linear", "bilinear"):
            need = 3 if mode == "linear" else 4
            raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {need}D input")
        if mode != "area":   # area is adaptive average pooling, which takes empty outputs
            _check_interp_sizes(input, sizes)
        if mode == "area":
            from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
            return (adaptive_avg_pool1d if ndim == 3 else adaptive_avg_pool2d)(input, sizes)
        in_sizes = input.shape[2:]
        if mode.startswith("nearest"):
            if input.dtype.name == "bool":
                raise NotImplementedError(f"\"upsample_nearest{dim}d\" not implemented for 'Bool'")
            exact = mode == "nearest-exact"
            plans = tuple(_nearest_plan(in_sizes[d], sizes[d], scales[d], exact) for d in range(dim))
            op = {(1, False): UpsampleNearest1DBackward0, (2, False): UpsampleNearest2DBackward0,
                  (1, True): _UpsampleNearestExact1DBackward0, (2, True): _UpsampleNearestExact2DBackward0}
            return apply(op[dim, exact], input, plans)
        if not input.is_floating_point():
            name = "upsample_linear1d" if dim == 1 else "upsample_bilinear2d"
            raise NotImplementedError(f"\"{name}\" not implemented for '{_legacy_name(input)}'")
        opmath = np.dtype(np.float64) if input.dtype.name == "float64" else np.dtype(np.float32)
        plans = tuple(_linear_plan(in_sizes[d], sizes[d], scales[d], align_corners, opmath) for d in range(dim))
        return apply(UpsampleLinear1DBackward0 if dim == 1 else UpsampleBilinear2DBackward0, input, plans)
    if ndim in (3, 4, 5) and mode in ("linear", "bilinear", "trilinear", "bicubic"):
        need = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}[mode]
        if ndim != need:
            raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {need}D input")
    if ndim == 5 or mode in ("bicubic", "trilinear", "lanczos"):
        raise NotImplementedError(f"interpolate(): mode '{mode}' with {ndim}D input is not supported by gputorch")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
                              f"modes: {_INTERP_MODES} (got {mode})")


def _legacy_name(t):
    from ..._tensor import _LEGACY_NAMES
    return _LEGACY_NAMES[t.dtype]


__all__ += ["interpolate"]
