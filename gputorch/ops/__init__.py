"""Op definitions, one module per family. Importing this package attaches every
op's Tensor methods and operators (see ``registry.py``)."""
from . import (arithmetic, bucketing, comparison, conversion, creation, gamma_functions, indexing,  # noqa: F401
               linalg, norm_functions, pointwise, quantiles, reduction, sampling, set_ops, shape, special_functions,
               tensor_queries, ternary)
from .registry import attach_methods
from .._tensor import Tensor

attach_methods(Tensor)
