"""The op table's argument generators ("signatures") and the lists that steer them.

A signature is a function ``sig(b) -> (args, kwargs)`` that draws the source
of an op's arguments with a :class:`CaseBuilder` ``b`` (``args[0]`` is the
tensor a method is called on). :data:`EXPLICIT` maps op names to the
generators in the ``_specs_*`` modules; ops not listed are probed against
torch (unary, then binary) in :mod:`_op_table`, so a new pointwise op is
covered without touching this file.
"""
from . import _specs_creation as creation_specs
from . import _specs_indexing as index_specs
from . import _specs_linalg as linalg_specs
from . import _specs_math as math_specs
from . import _specs_added as added_specs
from . import _specs_complex as complex_specs
from . import _specs_sparse as sparse_specs
from . import _specs_aten_functional as aten_functional_specs
from . import _specs_public_api as public_api_specs
from . import _specs_sets as set_specs
from . import _specs_surface as surface_specs
from ._nn_functional_specs import FUNCTIONAL as _NN_FUNCTIONAL
from . import _specs_shape as shape_specs
from ._inputs import ALL_DTYPES, FLOAT_DTYPES
from ._specs_common import INTEGRAL


# ---------------------------------------------------------------- tables
EXPLICIT = {
    # autocast queries outside any region (regions themselves: tests/amp)
    "is_autocast_enabled": lambda b: ([repr(b.rng.choice(["cuda", "cpu"]))], {}),
    "get_autocast_dtype": lambda b: (["'cuda'"], {}),
    # arithmetic with options
    "add": math_specs.binary_alpha, "sub": math_specs.binary_alpha, "subtract": math_specs.binary_alpha,
    "rsub": math_specs.binary_alpha, "div": math_specs.div, "divide": math_specs.div,
    "bitwise_and": math_specs.binary_integral, "bitwise_or": math_specs.binary_integral,
    "bitwise_xor": math_specs.binary_integral, "gcd": math_specs.binary_integral,
    "lcm": math_specs.lcm,
    "bitwise_not": lambda b: ([b.tensor(pool=INTEGRAL if b.chance(0.8) else ALL_DTYPES)], {}),
    "round": math_specs.round_, "nan_to_num": math_specs.nan_to_num, "clamp": math_specs.clamp,
    "clip": math_specs.clamp, "clamp_min": math_specs.clamp_one, "clamp_max": math_specs.clamp_one,
    "lerp": math_specs.lerp, "addcmul": math_specs.addcmul, "addcdiv": math_specs.addcmul,
    "where": math_specs.where, "isclose": math_specs.isclose, "allclose": math_specs.isclose,
    "equal": math_specs.equal,
    # reductions
    "sum": math_specs.reduction(dtype_kw=True), "nansum": math_specs.reduction(dtype_kw=True),
    "mean": math_specs.reduction(dtype_kw=True), "nanmean": math_specs.reduction(dtype_kw=True),
    "prod": math_specs.reduction(multi=False, dtype_kw=True), "amax": math_specs.reduction(),
    "amin": math_specs.reduction(), "all": math_specs.reduction(), "any": math_specs.reduction(),
    "logsumexp": math_specs.reduction(dim_required=True), "count_nonzero": math_specs.reduction(keepdim=False),
    "argmax": math_specs.dim_reduction(), "argmin": math_specs.dim_reduction(),
    "median": math_specs.dim_reduction(), "nanmedian": math_specs.dim_reduction(),
    "mode": math_specs.dim_reduction(), "max": math_specs.max_min, "min": math_specs.max_min,
    "std": math_specs.std_var, "var": math_specs.std_var, "std_mean": math_specs.std_var,
    "var_mean": math_specs.std_var, "norm": math_specs.norm, "cumsum": math_specs.along_dim(),
    "cumprod": math_specs.along_dim(), "logcumsumexp": math_specs.along_dim(pool=FLOAT_DTYPES),
    "softmax": math_specs.along_dim(pool=FLOAT_DTYPES), "log_softmax": math_specs.along_dim(pool=FLOAT_DTYPES),
    "sort": math_specs.sort, "argsort": math_specs.argsort, "kthvalue": math_specs.kthvalue,
    "topk": math_specs.topk, "pdist": math_specs.pdist,
    # shape
    "reshape": shape_specs.reshape, "view": shape_specs.reshape, "flatten": shape_specs.flatten,
    "unflatten": shape_specs.unflatten, "squeeze": shape_specs.squeeze, "unsqueeze": shape_specs.unsqueeze,
    "transpose": shape_specs.transpose, "swapaxes": shape_specs.transpose, "swapdims": shape_specs.transpose,
    "permute": shape_specs.permute, "movedim": shape_specs.movedim, "moveaxis": shape_specs.movedim,
    "expand": shape_specs.expand, "broadcast_to": shape_specs.broadcast_to, "expand_as": shape_specs.like_other,
    "view_as": shape_specs.like_other, "reshape_as": shape_specs.like_other, "type_as": shape_specs.like_other,
    "repeat": shape_specs.repeat, "tile": shape_specs.tile, "flip": shape_specs.flip, "roll": shape_specs.roll,
    "chunk": shape_specs.chunk, "split": shape_specs.split, "tensor_split": shape_specs.tensor_split,
    "unbind": shape_specs.unbind, "narrow": shape_specs.narrow, "select": shape_specs.select,
    "diagonal": shape_specs.diagonal, "tril": shape_specs.tril_triu, "triu": shape_specs.tril_triu,
    "diag": shape_specs.diag, "diag_embed": shape_specs.diag_embed, "cat": shape_specs.cat,
    "concat": shape_specs.cat, "concatenate": shape_specs.cat, "stack": shape_specs.stack,
    "hstack": shape_specs.stack_like, "vstack": shape_specs.stack_like, "dstack": shape_specs.stack_like,
    "column_stack": shape_specs.stack_like, "row_stack": shape_specs.stack_like,
    "broadcast_tensors": shape_specs.broadcast_tensors, "broadcast_shapes": shape_specs.broadcast_shapes,
    "cross": shape_specs.cross,
    # linear algebra
    "matmul": linalg_specs.matmul, "__matmul__": linalg_specs.matmul, "mm": linalg_specs.mm,
    "bmm": linalg_specs.bmm, "mv": linalg_specs.mv, "dot": linalg_specs.vector_pair,
    "vdot": linalg_specs.vector_pair, "outer": linalg_specs.outer, "ger": linalg_specs.outer,
    "inner": linalg_specs.inner, "kron": linalg_specs.kron, "addmm": linalg_specs.addmm,
    "addmv": linalg_specs.addmv, "addr": linalg_specs.addr, "addbmm": linalg_specs.addbmm,
    "baddbmm": linalg_specs.baddbmm, "det": linalg_specs.square_matrix, "inverse": linalg_specs.square_matrix,
    "trace": linalg_specs.trace, "einsum": linalg_specs.einsum, "tensordot": linalg_specs.tensordot,
    # indexing
    "gather": index_specs.gather, "scatter": lambda b: index_specs.scatter(b, reduce_kw=True, value=True),
    "scatter_add": index_specs.scatter, "scatter_reduce": index_specs.scatter_reduce,
    "index_select": index_specs.index_select, "index_add": index_specs.index_add,
    "index_copy": index_specs.index_copy, "index_fill": index_specs.index_fill,
    "index_put": index_specs.index_put, "masked_fill": index_specs.masked_fill,
    "masked_scatter": index_specs.masked_scatter, "masked_select": index_specs.masked_select,
    "take": index_specs.take, "take_along_dim": index_specs.take_along_dim, "put": index_specs.put,
    "nonzero": index_specs.nonzero,
    # conversions and misc
    "to": creation_specs.to, "copy_": creation_specs.copy_, "fill_": creation_specs.fill_,
    "result_type": math_specs.binary, "promote_types": creation_specs.dtype_pair,
    "can_cast": creation_specs.dtype_pair,
    # creation
    "zeros": creation_specs.zeros, "ones": creation_specs.zeros, "empty": creation_specs.zeros,
    "full": creation_specs.full, "eye": creation_specs.eye, "arange": creation_specs.arange,
    "linspace": creation_specs.linspace, "logspace": creation_specs.logspace,
    "tensor": creation_specs.tensor_ctor, "as_tensor": creation_specs.tensor_ctor,
    "asarray": creation_specs.tensor_ctor, "zeros_like": creation_specs.like, "ones_like": creation_specs.like,
    "empty_like": creation_specs.like, "full_like": creation_specs.full_like,
    "new_zeros": creation_specs.new_sized, "new_ones": creation_specs.new_sized,
    "new_empty": creation_specs.new_sized, "new_full": creation_specs.new_full,
    "new_tensor": creation_specs.new_tensor, "empty_strided": creation_specs.strided,
    "new_empty_strided": creation_specs.new_strided, "from_numpy": creation_specs.from_numpy,
    # random (compared by type, dtype and shape only)
    "bernoulli": creation_specs.bernoulli, "multinomial": creation_specs.multinomial,
    "normal": creation_specs.normal, "randint": creation_specs.randint, "randperm": creation_specs.randperm,
    "rand": creation_specs.zeros, "randn": creation_specs.zeros, "rand_like": creation_specs.like,
    "randn_like": creation_specs.like, "randint_like": creation_specs.randint_like,
    "normal_": creation_specs.random_inplace(lambda b: []),
    "uniform_": creation_specs.random_inplace(lambda b: []),
    "cauchy_": creation_specs.random_inplace(lambda b: []),
    "exponential_": creation_specs.random_inplace(lambda b: []),
    "geometric_": creation_specs.random_inplace(lambda b: [b.choice(["0.5", "0.2"])]),
    "log_normal_": creation_specs.random_inplace(lambda b: []),
    "random_": creation_specs.random_inplace(lambda b: []),
    "bernoulli_": creation_specs.random_inplace(lambda b: [b.choice(["0.5", "0.2"])]),
    **set_specs.SPECS, **added_specs.SPECS, **surface_specs.EXPLICIT_ADDITIONS, **complex_specs.EXPLICIT,
    **sparse_specs.EXPLICIT,
    **aten_functional_specs.SPECS,
    **public_api_specs.SPECS,
}
# The copying variants of views (``permute_copy``...) and the unchecked splits take their view's arguments.
for _copy, _view in {"as_strided_copy": "as_strided", "expand_copy": "expand", "narrow_copy": "narrow",
                     "permute_copy": "permute", "select_copy": "select", "split_copy": "split",
                     "split_with_sizes_copy": "split_with_sizes", "transpose_copy": "transpose",
                     "unfold_copy": "unfold", "unsqueeze_copy": "unsqueeze", "view_copy": "reshape",
                     "unsafe_chunk": "chunk", "unsafe_split": "split"}.items():
    EXPLICIT[_copy] = EXPLICIT[_view]
# nn.functional ops that torch also has at the top level take the same arguments there.
for _name in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"):
    EXPLICIT[_name] = _NN_FUNCTIONAL[_name]


# Ops whose values are random (or uninitialised): compare types, dtypes and shapes only.
RANDOM_OPS = {"poisson", "resize_as_", "resize_", "bernoulli", "bernoulli_", "multinomial", "normal", "normal_", "uniform_", "cauchy_",
              "binomial", "gumbel_softmax", "svd_lowrank", "pca_lowrank", "lobpcg",
              "exponential_", "geometric_", "log_normal_", "random_", "rand", "randn", "randint",
              "randperm", "rand_like", "randn_like", "randint_like", "empty", "empty_like",
              "new_empty", "empty_strided", "new_empty_strided"}

# Ops that get more cases than the default (a multiple of --diff-cases): the
# ones with the largest argument spaces.
CASE_WEIGHT = {"__getitem__": 5, "__setitem__": 5, "matmul": 2, "index_put": 2, "index_put_": 2,
               "sum": 2, "reshape": 2, "cat": 2, "where": 2, "to": 2}

# Dunder operators -> the op whose signature they share.
DUNDER_BASE = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "div": "div", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "matmul": "matmul", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
    "abs": "abs", "neg": "neg", "pos": "positive", "invert": "bitwise_not",
    **surface_specs.DUNDER_ADDITIONS,
}

# Ops that may only be called with a fixed set of arguments or that torch's CPU build cannot run.
NOT_COVERED = {
    "cuda": "torch here is a CPU build: Tensor.cuda() cannot run on the reference side",
    "Generator": "a class, not an op", "Size": "a class, not an op", "Tensor": "a class, not an op",
    "device": "a class, not an op", "dtype": "a class, not an op",
    "enable_grad": "context manager", "no_grad": "context manager", "inference_mode": "context manager",
    "set_grad_enabled": "context manager", "is_grad_enabled": "global state",
    "get_default_dtype": "global state", "is_inference_mode_enabled": "global state",
    "set_default_dtype": "global state",
    "get_default_device": "global state", "set_default_device": "global state",
    "manual_seed": "global RNG state", "seed": "global RNG state", "initial_seed": "global RNG state",
    "get_rng_state": "global RNG state", "set_rng_state": "global RNG state",
    "printoptions": "printing", "get_printoptions": "printing", "set_printoptions": "printing",
    "load": "serialization (files)", "save": "serialization (files)",
    **added_specs.NOT_COVERED,
    "__reversed__": "Python's reversed(); tests/ops/test_surface_additions.py",
    "layout": "a class, not an op", "memory_format": "a class, not an op",
    "as_strided_scatter": "torch's own gradient of it fails its gradcheck; tests/ops/test_surface_additions.py",
}
