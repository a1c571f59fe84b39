"""Shape and layout ops, one concept per module:

- ``view_nodes``: how views are recorded and differentiated (``Key``, ``sub_view``, the view nodes)
- ``reshaping``: view, reshape, flatten, ravel, unflatten, squeeze, unsqueeze, atleast_1d/2d/3d
- ``broadcasting``: expand, broadcast_to, broadcast_shapes, broadcast_tensors
- ``transposing``: permute, transpose, t, T/mT/mH/H, adjoint, movedim
- ``slicing``: narrow, select, diagonal, split, chunk, tensor_split, hsplit/vsplit/dsplit, unbind;
  narrow_copy and select/slice/diagonal_scatter
- ``joining``: cat, stack, hstack, vstack, dstack, column_stack, block_diag
- ``copies``: clone, contiguous, repeat, tile, flip, roll, tril, triu, diagflat; tril_, triu_,
  fill_diagonal_
- ``grids``: meshgrid, rot90, repeat_interleave (composites of the above)
- ``index_grids``: tril_indices, triu_indices, unravel_index, cartesian_prod, combinations
- ``strided``: as_strided and unfold (views with given strides), as_strided_scatter, is_set_to,
  is_same_size
- ``inplace_views``: t_, transpose_, squeeze_, unsqueeze_, as_strided_, resize_ (``self`` becomes the view)
- ``view_copies``: the ``*_copy`` functions (a view op's outputs copied)
- ``_common``: reading shape and dim arguments (``infer_shape``)

Views share the input's storage and version counter (made through ``apply_view``); the
others copy.
"""
from . import (broadcasting, copies, grids, index_grids, inplace_views, joining, reshaping, slicing,  # noqa: F401
               strided, transposing, view_copies)
from .broadcasting import *  # noqa: F401,F403
from .copies import *  # noqa: F401,F403
from .grids import *  # noqa: F401,F403
from .index_grids import *  # noqa: F401,F403
from .inplace_views import *  # noqa: F401,F403
from .strided import *  # noqa: F401,F403
from .view_copies import *  # noqa: F401,F403
from .joining import *  # noqa: F401,F403
from .reshaping import *  # noqa: F401,F403
from .slicing import *  # noqa: F401,F403
from .transposing import *  # noqa: F401,F403
# Tensor methods that are not in torch's namespace (so not in __all__), and helpers other op modules use
from ._common import infer_shape  # noqa: F401
from .broadcasting import expand, expand_as  # noqa: F401
from .copies import contiguous, repeat  # noqa: F401
from .reshaping import reshape_as, view, view_as  # noqa: F401
from .view_nodes import Key, sub_view  # noqa: F401
# the graph nodes, for code that names them
from .broadcasting import ExpandBackward0  # noqa: F401
from .copies import (CloneBackward0, FlipBackward0, RepeatBackward0, RollBackward0,  # noqa: F401
                     TrilBackward0, TriuBackward0)
from .joining import CatBackward0, StackBackward0  # noqa: F401
from .slicing import SplitBackward0, SplitWithSizesBackward0, UnbindBackward0  # noqa: F401
from .transposing import PermuteBackward0, TBackward0, TransposeBackward0  # noqa: F401
from .view_nodes import (AliasBackward0, DiagonalBackward0, SelectBackward0, SliceBackward0,  # noqa: F401
                         SqueezeBackward0, SqueezeBackward1, SqueezeBackward2, UnsafeViewBackward0,
                         UnsqueezeBackward0, ViewBackward0, ViewScatterBackward0)

__all__ = [*reshaping.__all__, *broadcasting.__all__, *transposing.__all__, *slicing.__all__,
           *joining.__all__, *copies.__all__, *grids.__all__, *index_grids.__all__, *inplace_views.__all__,
           *strided.__all__, *view_copies.__all__]
