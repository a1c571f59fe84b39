"""Elementwise bijections for :class:`TransformedDistribution`: ``ExpTransform``,
``AffineTransform``, ``SigmoidTransform`` and ``ComposeTransform``.

A transform maps ``x`` in its ``domain`` to ``y = t(x)`` in its ``codomain``; ``t.inv`` is its
inverse and ``log_abs_det_jacobian(x, y)`` is ``log |dy/dx|`` elementwise.
"""
import numbers

from . import constraints

__all__ = ["Transform", "ExpTransform", "AffineTransform", "SigmoidTransform", "ComposeTransform",
           "identity_transform"]


class Transform:
    """Base class of invertible transforms (elementwise here: ``event_dim`` 0)."""
    bijective = True
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    @property
    def event_dim(self):
        return self.domain.event_dim

    @property
    def inv(self):
        return _InverseTransform(self)

    def __call__(self, x):
        return self._call(x)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inverse(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)


class ComposeTransform(Transform):
    """The transforms in ``parts`` applied in order."""

    def __init__(self, parts):
        self.parts = list(parts)

    @property
    def domain(self):
        return self.parts[0].domain if self.parts else constraints.real

    @property
    def codomain(self):
        return self.parts[-1].codomain if self.parts else constraints.real

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        total = 0.0
        for p in self.parts:
            y_p = p(x)
            total = total + p.log_abs_det_jacobian(x, y_p)
            x = y_p
        return total


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """``y = exp(x)``."""
    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    """``y = 1 / (1 + exp(-x))``."""
    codomain = constraints.unit_interval

    def _call(self, x):
        from .utils import eps
        e = eps(x.dtype)
        return x.sigmoid().clamp(min=e, max=1 - e)

    def _inverse(self, y):
        from .utils import eps
        e = eps(y.dtype)
        y = y.clamp(min=e, max=1 - e)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        from ..nn.functional import softplus
        return -softplus(-x) - softplus(x)


class AffineTransform(Transform):
    """``y = loc + scale * x`` (elementwise)."""

    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        import math
        if isinstance(self.scale, numbers.Real):
            from .. import full_like
            return full_like(x, math.log(abs(self.scale)))
        return self.scale.abs().log().expand(x.shape) if self.scale.shape != x.shape else self.scale.abs().log()
