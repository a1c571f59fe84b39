"""``Poisson(rate)``: counts of a Poisson process."""
import numbers

from .._size import Size
from ..ops.gamma_functions import lgamma, poisson
from . import constraints
from .distribution import Distribution, _expand_params
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(Distribution):
    """Poisson distribution with mean ``rate``."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_params(self, Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        from ..autograd import no_grad
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - lgamma(value + 1)
