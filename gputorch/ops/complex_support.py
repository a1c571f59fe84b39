"""Which ops compute on complex tensors, in one place.

The dispatcher refuses complex operands (and complex results) for every op whose node class does
not set ``supports_complex``: NumPy and CuPy would happily compute most ops on complex arrays, but
a gradient rule written for real numbers is wrong for complex ones. This module sets the flag on
the ops that are right for them:

- ops that only move or select elements (views, reshapes, joins, copies, indexing): their
  gradients move elements back the same way;
- linear ops with real coefficients (add, sub, neg, sum, mean): the real rule is the complex rule;
- holomorphic ops (mul, div, exp, matmul, ...): PyTorch's gradient for a holomorphic ``f`` is
  ``grad * conj(f'(z))``, which is the real rule applied as ``conj(rule(conj(grad)))``; the
  wrapper below does that when the gradient is complex (a real input of a complex op keeps the
  real part, as the rule's own cast to the input's dtype takes it);
- the ops of ``complex_numbers`` (real, imag, angle, conj, ...), which define their own rules.
"""
import inspect

from ..autograd.node import Node
from . import (activation_backward, arithmetic, comparison, conversion, cumulative, einsum, indexing, linalg, matmul,
               matrix_inverse, matrix_structure, reduction, shape, ternary)
from .complex_numbers import conj_of
from .pointwise import exp_log, rounding, trig

_MOVES_ELEMENTS = [shape, indexing]
_REFUSED_MOVES = {"ScatterReduceBackward0"}    # amax/amin reductions need an order
_LINEAR = [arithmetic.AddBackward0, arithmetic.SubBackward0, arithmetic.NegBackward0,
           reduction.SumBackward0, reduction.SumBackward1, reduction.MeanBackward0, reduction.MeanBackward1,
           conversion.ToCopyBackward0, comparison.WhereBackward0,
           cumulative.CumsumBackward0, matrix_structure.TraceBackward0, matrix_structure.DiagEmbedBackward0,
           matrix_structure.DiagonalBackward0_copy]
_HOLOMORPHIC = [arithmetic.MulBackward0, arithmetic.DivBackward0, arithmetic.ReciprocalBackward0,
                arithmetic.PowBackward0, exp_log.ExpBackward0, exp_log.LogBackward0, exp_log.SqrtBackward0,
                trig.SinBackward0, trig.CosBackward0, trig.SinhBackward0, trig.CoshBackward0,
                trig.TanhBackward0, activation_backward.TanhBackwardBackward0, trig.TanBackward0,
                trig.AsinBackward0, trig.AcosBackward0, trig.AtanBackward0, trig.AsinhBackward0,
                trig.AcoshBackward0, trig.AtanhBackward0, exp_log.Exp2Backward0, exp_log.Expm1Backward0,
                exp_log.Log2Backward0, exp_log.Log10Backward0, exp_log.Log1PBackward0, exp_log.RsqrtBackward0,
                ternary.AddcmulBackward0, ternary.AddcdivBackward0, einsum.EinsumBackward0,
                linalg.AddmmBackward0, linalg.BaddbmmBackward0, linalg.AddbmmBackward0,
                matmul.MmBackward0, matmul.BmmBackward0, matmul.MvBackward0, matmul.MatmulBackward0,
                matmul.DotBackward0, matrix_inverse.LinalgInvExBackward0, matrix_inverse.LinalgDetBackward0,
                matrix_inverse.LinalgSolveExBackward0, reduction.ProdBackward0, reduction.ProdBackward1,
                cumulative.CumprodBackward0]


def _node_classes(package):
    """Every Node subclass defined in the modules of ``package``."""
    for module in vars(package).values():
        if inspect.ismodule(module) and module.__name__.startswith(package.__name__ + "."):
            for obj in vars(module).values():
                if inspect.isclass(obj) and issubclass(obj, Node) and obj.__module__ == module.__name__:
                    yield obj


def _conjugated(rule):
    """The complex gradient rule ``conj(rule(conj(grad)))`` of a holomorphic op's real rule."""
    def backward(ctx, *grads):
        if not any(g is not None and g._dtype.is_complex for g in grads):
            return rule(ctx, *grads)
        grads = [conj_of(g) if g is not None else None for g in grads]
        result = rule(ctx, *grads)
        if isinstance(result, tuple):
            return tuple(conj_of(g) if g is not None else None for g in result)
        return conj_of(result)
    backward.__doc__ = rule.__doc__
    backward.__wrapped__ = rule
    return backward


for _package in _MOVES_ELEMENTS:
    for _cls in _node_classes(_package):
        if _cls.__name__ not in _REFUSED_MOVES:
            _cls.supports_complex = True
for _cls in _LINEAR:
    _cls.supports_complex = True
for _cls in _HOLOMORPHIC:
    _cls.supports_complex = True
    _cls.backward = _conjugated(_cls.backward)
arithmetic.AbsBackward0.supports_complex = True     # its backward has its own complex rule (z / |z|)
rounding.SgnBackward0.supports_complex = True       # and so does sgn's
matmul.VdotBackward0.supports_complex = False   # vdot conjugates its first operand: not dot's rule
