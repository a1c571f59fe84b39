"""Every name the core issue promises exists as a function and (where PyTorch has one) a Tensor method."""
import pytest

import gputorch

FUNCTIONS = """
add sub mul div floor_divide remainder pow neg abs reciprocal
eq ne lt le gt ge logical_and logical_or logical_xor logical_not isnan isinf isfinite where
exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan atan2 sinh cosh tanh
sigmoid relu erf erfinv sign floor ceil round trunc clamp clip lerp maximum minimum
sum mean prod max min amax amin argmax argmin var std logsumexp norm cumsum cumprod all any
count_nonzero topk sort argsort
reshape flatten unflatten permute transpose t squeeze unsqueeze cat stack split chunk unbind narrow
index_select gather scatter scatter_add index_add masked_fill masked_select take_along_dim flip roll
tril triu matmul mm bmm mv dot outer addmm baddbmm einsum
tensor as_tensor from_numpy zeros ones full empty zeros_like ones_like full_like empty_like arange
linspace eye rand randn randint randperm manual_seed Generator get_rng_state set_rng_state
from_dlpack result_type promote_types no_grad enable_grad set_grad_enabled inference_mode
is_grad_enabled device
""".split()

METHODS = """
add sub mul div floor_divide remainder pow neg abs reciprocal add_ sub_ mul_ div_ copy_ zero_ fill_
clamp_ masked_fill_ eq ne lt le gt ge logical_not isnan isinf isfinite exp log sqrt sin cos tanh sigmoid
relu erf sign floor ceil round trunc clamp clip lerp maximum minimum sum mean prod max min amax amin
argmax argmin var std logsumexp norm cumsum cumprod all any topk sort argsort view reshape flatten
unflatten permute transpose t expand expand_as repeat squeeze unsqueeze contiguous split chunk unbind
narrow index_select gather scatter scatter_add index_add masked_fill masked_select flip roll tril triu
matmul mm bmm mv dot outer addmm baddbmm to cpu cuda float double half long int bool type_as numpy item
tolist detach detach_ requires_grad_ retain_grad register_hook register_post_accumulate_grad_hook
backward normal_ uniform_ bernoulli_ clone
""".split()

OPERATORS = """__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__
__mod__ __pow__ __rpow__ __neg__ __abs__ __matmul__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __and__
__or__ __xor__ __invert__ __getitem__ __setitem__ __iadd__ __isub__ __imul__ __itruediv__""".split()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_exists(name):
    assert callable(getattr(gputorch, name, None)), f"gputorch.{name} is missing"


@pytest.mark.parametrize("name", METHODS + OPERATORS)
def test_method_exists(name):
    assert callable(getattr(gputorch.Tensor, name, None)), f"Tensor.{name} is missing"


@pytest.mark.parametrize("name", ["mT", "T", "shape", "dtype", "device", "grad", "grad_fn", "is_leaf",
                                  "requires_grad", "data", "is_cuda", "ndim"])
def test_property_exists(name):
    assert hasattr(gputorch.ones(2, 2), name)


def test_submodules():
    assert callable(gputorch.autograd.Function.apply)
    assert callable(gputorch.autograd.function.once_differentiable)
    assert callable(gputorch.autograd.graph.saved_tensors_hooks)
    assert callable(gputorch.linalg.vector_norm)
    for name in ["is_available", "device_count", "current_device", "set_device", "synchronize", "device",
                 "get_rng_state", "set_rng_state", "manual_seed", "manual_seed_all"]:
        assert callable(getattr(gputorch.cuda, name, None)), f"gputorch.cuda.{name} is missing"
