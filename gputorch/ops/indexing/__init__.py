"""Indexing, one concept per module:

- ``parsing``: an index (what ``tensor[key]`` accepts) parsed once into an :class:`Index`
- ``index_nodes``: ``IndexBackward0`` / ``IndexPutBackward0``, reading and writing at an index
- ``subscripts``: ``__getitem__``, ``__setitem__``, index_put
- ``copy_fill``: copy_, fill_, zero_, fill
- ``masked``: masked_fill, masked_select, masked_scatter, nonzero, argwhere
- ``gather_scatter``: gather, take_along_dim, scatter, scatter_add
- ``scatter_reduction``: scatter_reduce, index_reduce
- ``index_ops``: index_select, index_add, index_copy, index_fill
- ``take_put``: take, put
- ``copy_slices``: in-place ops on views (``inplace_on_view``, PyTorch's CopySlices)
- ``_common``: the helpers they share

Basic indexes give views; indexes with tensors, lists or bools copy (``IndexBackward0``), and
their backward accumulates into zeros so that repeated indices add up.
"""
from . import gather_scatter, index_ops, masked, scatter_reduction, subscripts, take_put
from .gather_scatter import *  # noqa: F401,F403
from .index_ops import *  # noqa: F401,F403
from .masked import *  # noqa: F401,F403
from .scatter_reduction import *  # noqa: F401,F403
from .subscripts import *  # noqa: F401,F403
from .take_put import *  # noqa: F401,F403
# Tensor methods (those in torch's namespace too are named in __all__) and helpers other modules use
from .copy_fill import copy_, fill, fill_, zero_  # noqa: F401
from .copy_slices import inplace_on_view  # noqa: F401
from .gather_scatter import scatter_, scatter_add_  # noqa: F401
from .index_ops import index_add_, index_copy_, index_fill_  # noqa: F401
from .masked import masked_fill_, masked_scatter_  # noqa: F401
from .parsing import Index, parse_index  # noqa: F401
from .scatter_reduction import index_reduce_, scatter_reduce_  # noqa: F401
from .subscripts import getitem, index_put_, setitem  # noqa: F401
from .take_put import put_  # noqa: F401
# the graph nodes, for code that names them
from .copy_fill import CopyBackwards, FillBackward2, FillBackward3, ZeroBackward0  # noqa: F401
from .copy_slices import AsStridedBackward0, CopySlices  # noqa: F401
from .gather_scatter import (GatherBackward0, ScatterAddBackward0, ScatterBackward0,  # noqa: F401
                             ScatterBackward1)
from .index_nodes import IndexBackward0, IndexPutBackward0  # noqa: F401
from .index_ops import (IndexAddBackward0, IndexCopyBackward0, IndexFillBackward0,  # noqa: F401
                        IndexFillBackward1, IndexSelectBackward0)
from .masked import (MaskedFillBackward0, MaskedFillBackward1, MaskedScatterBackward0,  # noqa: F401
                     MaskedSelectBackward0)
from .scatter_reduction import ScatterReduceBackward0  # noqa: F401
from .take_put import PutBackward0, TakeBackward0  # noqa: F401

__all__ = [*index_ops.__all__, *gather_scatter.__all__, *scatter_reduction.__all__, *subscripts.__all__,
           *masked.__all__, *take_put.__all__, "fill", "fill_", "zero_", "index_put_"]
