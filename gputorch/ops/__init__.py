"""Op definitions, one module per family. Importing this package attaches every
op's Tensor methods and operators (see ``registry.py``)."""
from . import (arithmetic, binomial_sampling, bucketing, calculus, comparison, conversion,  # noqa: F401
               covariance, creation, gamma_functions, indexing, linalg, norm_functions, pointwise, polynomials,
               quantiles, reduction, sampling, set_ops, shape, special_functions, tensor_queries, ternary)
from . import complex_numbers, complex_support  # noqa: F401,E402 - after the ops it marks
from . import short_time_fourier, sparse_coo, spectral_windows  # noqa: F401,E402
from .registry import attach_methods
from .._tensor import Tensor

attach_methods(Tensor)
