"""``gputorch.distributions``: parameterisable probability distributions and sampling functions,
as ``torch.distributions``.

Each family lives in its own module (``normal``, ``categorical``, ...), all built on
:class:`Distribution` (``distribution.py``) and the constraints of ``constraints.py``;
``kl.py`` holds ``kl_divergence`` and the registered closed forms. Samplers and the gamma
function family come from ``gputorch.ops.gamma_functions``.
"""
from . import constraints, transforms  # noqa: F401
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, Transform
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "Gamma", "Geometric", "HalfNormal", "Independent", "Laplace", "LogNormal", "Multinomial",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "StudentT", "TransformedDistribution",
           "Uniform", "kl_divergence", "register_kl", "AffineTransform",
           "ComposeTransform", "ExpTransform", "SigmoidTransform", "Transform"]
