"""``Dirichlet(concentration)``: distributions over the probability simplex (last dimension)."""
from .._size import Size
from ..ops.gamma_functions import _sample_dirichlet, digamma, lgamma
from . import constraints
from .distribution import Distribution, _expand_params
from .utils import tiny

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """Dirichlet distribution with ``concentration`` (..., K): batch shape ``(...)``, event shape
    ``(K,)``. Samples are normalised gamma draws, reparameterised through them."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Dirichlet, batch_shape, ("concentration",), _instance, keep_dims=1)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _sample_dirichlet(self.concentration.expand(shape))
        x.detach().clamp_(min=tiny(x.dtype))
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        from .. import xlogy
        return ((xlogy(self.concentration - 1.0, value)).sum(-1) + lgamma(self.concentration.sum(-1))
                - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        from ..nn.functional import one_hot
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        if bool(mask.any()):
            mode[mask] = one_hot(mode[mask].argmax(dim=-1), cm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))
