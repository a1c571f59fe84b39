"""``Gamma(concentration, rate)``: shape-rate parameterised gamma distribution, with
reparameterised samples (implicit reparameterisation through the sampler)."""
import numbers

from .. import xlogy
from .._size import Size
from ..ops.gamma_functions import _gammainc, _standard_gamma, digamma, lgamma
from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all, tiny

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers_only = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(Size() if numbers_only else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=tiny(value.dtype))    # not recorded in the graph
        return value

    def log_prob(self, value):
        from .. import as_tensor
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - self.rate.log() + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _gammainc(self.concentration, self.rate * value)
