"""Complex numbers: ``real``, ``imag``, ``view_as_real``, ``view_as_complex``, ``complex``,
``polar``, ``angle``, ``conj`` and their relatives.

Gradients follow PyTorch's convention for a real loss ``L`` of complex ``z = x + iy``: the gradient
stored for ``z`` is ``dL/dx + i dL/dy`` (the conjugate Wirtinger derivative, times two). So
``z.imag.sum()`` gives ``z.grad == 1j`` and ``z.abs()`` gives ``z / |z|``.

``conj`` is materialised: the result is a new tensor holding the conjugate values, not PyTorch's
lazy view with a conjugate bit (so ``is_conj`` is always False and ``resolve_conj`` returns its
input); values and gradients are PyTorch's, but writes into ``z.conj()`` do not reach ``z``.
"""
import math

from .. import _dtype
from .._dispatch import apply, apply_view
from ..autograd.node import Node
from ._common import require_tensor, xp_of
from .registry import tensor_method
from ..amp.autocast_mode import autocast_function

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "angle", "conj",
           "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "is_conj", "is_neg"]


def conj_of(t):
    """``t.conj()`` for a complex tensor, ``t`` itself for a real one (the gradient rules' helper)."""
    return apply(ConjBackward0, t) if t._dtype.is_complex else t


def unit_phase(z):
    """``z / |z|`` for a complex tensor, 0 where ``z`` is 0 (differentiable)."""
    size = z.abs()
    return z / (size + (size == 0))


class RealBackward0(Node):
    supports_complex = True

    def forward(ctx, a):
        ctx.dtype = a._dtype
        return a._data.real

    def backward(ctx, grad):
        return grad.to(ctx.dtype)


class ImagBackward0(Node):
    supports_complex = True

    def forward(ctx, a):
        return a._data.imag

    def backward(ctx, grad):
        return grad * 1j


class ViewAsRealBackward0(Node):
    supports_complex = True

    def forward(ctx, a):
        return a._data[..., None].view(a._dtype.to_real().np)

    def backward(ctx, grad):
        return view_as_complex(grad.contiguous())


class ViewAsComplexBackward0(Node):
    supports_complex = True

    def forward(ctx, a):
        x = a._data
        complex_np = a._dtype.to_complex().np
        if not x.size:   # NumPy gives empty arrays arbitrary strides: nothing to reinterpret
            return xp_of(a).empty(x.shape[:-1], complex_np)
        # Size-1 dims may have any stride: index them away, reinterpret, and put them back.
        ones = tuple(0 if n == 1 else slice(None) for n in x.shape[:-1])
        return x[ones].view(complex_np)[..., 0].reshape(x.shape[:-1])

    def backward(ctx, grad):
        return view_as_real(grad)


class ComplexBackward0(Node):
    supports_complex = True

    def forward(ctx, re, im):
        out = xp_of(re).empty(re._data.shape, re._dtype.to_complex().np)
        out.real[...] = re._data    # through the part views: ``re + 1j * im`` would turn inf into NaN
        out.imag[...] = im._data
        return out

    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (real(grad) if need[0] else None), (imag(grad) if need[1] else None)


class ConjBackward0(Node):
    supports_complex = True

    def forward(ctx, a):
        return xp_of(a).conj(a._data) if a._dtype.is_complex else a._data

    def backward(ctx, grad):
        return conj_of(grad)


class AngleBackward0(Node):
    """The angle of a real tensor: 0 for x >= 0, pi for x < 0, NaN for NaN; zero gradient."""

    def forward(ctx, a):
        xp = xp_of(a)
        x = a._data if a._dtype.is_floating_point else a._data.astype(_dtype.get_default_dtype().np)
        out = xp.where(x < 0, x.dtype.type(math.pi), x.dtype.type(0))
        return xp.where(xp.isnan(x), x, out)

    def backward(ctx, grad):
        return grad * 0


def real(input):
    """The real parts of a complex tensor, as a view sharing its memory; a real tensor itself."""
    require_tensor("real", input)
    if not input._dtype.is_complex:
        return input
    return apply_view(RealBackward0, input)


def imag(input):
    """The imaginary parts of a complex tensor, as a view sharing its memory."""
    require_tensor("imag", input)
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply_view(ImagBackward0, input)


def view_as_real(input):
    """A complex tensor of shape ``(*S)`` as a real view of shape ``(*S, 2)``: (real, imag) pairs."""
    require_tensor("view_as_real", input)
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply_view(ViewAsRealBackward0, input)


@autocast_function("view_as_complex")
def view_as_complex(input):
    """A float tensor of shape ``(*S, 2)`` (last dimension contiguous) as a complex view of shape
    ``(*S)``."""
    require_tensor("view_as_complex", input)
    dt, x = input._dtype, input._data
    if dt is _dtype.float16:
        raise RuntimeError("view_as_complex: gputorch has no complex32 (ComplexHalf) dtype for a float16 tensor to "
                           "view; convert it to float32 first")
    if dt not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {_dtype.legacy_name(dt)}")
    if not x.ndim or x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if x.size and x.strides[-1] != dt.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if x.size and any(s % (2 * dt.itemsize) for s, n in zip(x.strides[:-1], x.shape[:-1]) if n != 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply_view(ViewAsComplexBackward0, input)


def complex(real, imag, *, out=None):
    """The complex tensor ``real + i imag`` (both float32 or both float64; broadcast)."""
    require_tensor("complex", real, "real")
    require_tensor("complex", imag, "imag", 2)
    _check_parts(real, imag)
    from .shape import broadcast_tensors
    real, imag = broadcast_tensors(real, imag)
    result = apply(ComplexBackward0, real, imag)
    return result if out is None else out.copy_(result)


class PolarBackward0(Node):
    """``abs * (cos(angle) + i sin(angle))``. The gradient for ``abs`` follows PyTorch's formula
    through the result's phase ``z / |z|`` (0 where ``abs`` is 0, sign-flipped where it is negative,
    outside the documented domain); the one for ``angle`` is ``Im(grad * conj(z))``."""
    supports_complex = True
    saves_result = True

    def forward(ctx, abs, angle):
        xp = xp_of(abs)
        r, theta = abs._data, angle._data
        out = xp.empty(r.shape, abs._dtype.to_complex().np)
        out.real[...] = r * xp.cos(theta)
        out.imag[...] = r * xp.sin(theta)
        return out

    def backward(ctx, grad):
        z = ctx.saved_result
        need = ctx.needs_input_grad
        return (real(grad * conj_of(unit_phase(z))) if need[0] else None,
                imag(grad * conj_of(z)) if need[1] else None)


@autocast_function("polar")
def polar(abs, angle, *, out=None):
    """The complex tensor ``abs * (cos(angle) + i sin(angle))`` (float32 or float64 operands of one
    dtype; broadcast)."""
    require_tensor("polar", abs, "abs")
    require_tensor("polar", angle, "angle", 2)
    _check_parts(abs, angle)
    from .shape import broadcast_tensors
    abs, angle = broadcast_tensors(abs, angle)
    result = apply(PolarBackward0, abs, angle)
    return result if out is None else out.copy_(result)


def _check_parts(re, im):
    """PyTorch's checks of the two real operands of ``complex`` and ``polar``."""
    if re._dtype is not im._dtype:
        raise RuntimeError(f"Expected object of scalar type {_dtype.legacy_name(re._dtype)} but got scalar "
                           f"type {_dtype.legacy_name(im._dtype)} for second argument")
    if re._dtype is _dtype.float16:
        raise TypeError("Got unsupported ScalarType ComplexHalf")
    if re._dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_dtype.legacy_name(re._dtype)} and {_dtype.legacy_name(im._dtype)}")


@tensor_method("angle")
def angle(input, *, out=None):
    """The argument (phase) of each element, in radians: ``atan2(imag, real)`` for complex tensors."""
    require_tensor("angle", input)
    if input._dtype.is_complex:
        result = imag(input).atan2(real(input))
    else:
        result = apply(AngleBackward0, input)
    return result if out is None else out.copy_(result)


@tensor_method("conj")
def conj(input):
    """The complex conjugate (materialised, see the module's docstring); a real tensor itself."""
    require_tensor("conj", input)
    return conj_of(input)


@tensor_method("conj_physical")
def conj_physical(input, *, out=None):
    """The complex conjugate as a new tensor; a real tensor itself."""
    require_tensor("conj_physical", input)
    result = conj_of(input)
    return result if out is None else out.copy_(result)


@tensor_method("conj_physical_")
def conj_physical_(input):
    """Conjugate in place (nothing to do for a real tensor)."""
    from .._dispatch import apply_inplace
    return apply_inplace(ConjBackward0, input)


@tensor_method("resolve_conj")
def resolve_conj(input):
    """``input`` itself: gputorch's conjugates are always materialised."""
    require_tensor("resolve_conj", input)
    return input


@tensor_method("resolve_neg")
def resolve_neg(input):
    """``input`` itself: gputorch has no lazy negation."""
    require_tensor("resolve_neg", input)
    return input


@tensor_method("is_conj")
def is_conj(input):
    """Always False: gputorch's conjugates are materialised, never a lazy conjugate view."""
    require_tensor("is_conj", input)
    return False


@tensor_method("is_neg")
def is_neg(input):
    """Always False: gputorch has no lazy negation."""
    require_tensor("is_neg", input)
    return False


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


# ``x.real`` and ``x.imag`` are properties (assignable) on tensors, functions at the top level.
tensor_method("real")(property(real, _set_real, doc="The real parts (a view); see :func:`real`."))
tensor_method("imag")(property(imag, _set_imag, doc="The imaginary parts (a view); see :func:`imag`."))
