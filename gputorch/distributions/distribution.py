"""``Distribution``: the interface every probability distribution implements.

Shapes: a distribution has a ``batch_shape`` (independent, differently parameterised
distributions) and an ``event_shape`` (the shape of one draw). ``sample(sample_shape)`` returns
``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` reduces the event dimensions
and broadcasts the rest.

Validation follows PyTorch: on by default (``Distribution.set_default_validate_args``), parameters
are checked against ``arg_constraints`` at construction and values against ``support`` in
``log_prob``, with ``ValueError`` naming the parameter, constraint and distribution.
"""
import warnings

from .._size import Size
from .._tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class for probability distributions."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for distributions created from now on."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue    # not given: computed from the parameter that was
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                        f"invalid values:\n{value}")

    # -- shapes ---------------------------------------------------------------------------
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()):
        """``sample_shape + batch_shape + event_shape``."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def expand(self, batch_shape, _instance=None):
        """A distribution with parameters expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ "
                "method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    # -- the interface ----------------------------------------------------------------------
    @property
    def arg_constraints(self):
        """``{parameter name: Constraint}``."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint the samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Draw samples of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        from ..autograd import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Reparameterised samples (differentiable in the parameters)."""
        raise NotImplementedError

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    # -- validation -------------------------------------------------------------------------
    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} "
                                 f"vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within "
                f"the support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p].item() if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{self.__class__.__name__}({args})"


def _expand_params(dist, cls, batch_shape, names, _instance=None, keep_dims=0):
    """The body of most ``expand`` methods: a new ``cls`` whose parameters ``names`` are
    ``dist``'s expanded to ``batch_shape`` (keeping each parameter's ``keep_dims`` rightmost sizes)."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        value = getattr(dist, name)
        tail = value.shape[value.dim() - keep_dims:] if keep_dims else Size()
        setattr(new, name, value.expand(batch_shape + tail))
    Distribution.__init__(new, batch_shape, dist._event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
