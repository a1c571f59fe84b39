"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``."""
import math

from .. import where
from .._size import Size
from . import constraints
from .distribution import Distribution
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(Distribution):
    """Half-normal distribution of scale ``scale`` on ``[0, inf)``."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self.base_dist = Normal(0, scale, validate_args=False)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape).abs()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
