"""Op definitions, one module per family. Importing this package attaches every
op's Tensor methods and operators (see ``registry.py``)."""
from . import (arithmetic, comparison, conversion, creation, gamma_functions, indexing, linalg,  # noqa: F401
               pointwise, reduction, sampling, shape, special_functions, tensor_queries, ternary)
from .registry import attach_methods
from .._tensor import Tensor

attach_methods(Tensor)
