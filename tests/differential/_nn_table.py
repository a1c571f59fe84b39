"""Which ``nn.functional`` functions and ``nn`` modules to test, and how.

Functions: every public function of ``gputorch.nn.functional`` that
``torch.nn.functional`` also has, with an explicit generator from
:mod:`_nn_functional_specs` or, failing that, a probe of torch (one float tensor: an
activation; two: a loss).

Modules: every ``gputorch.nn.Module`` subclass torch also has. The main
layers have explicit bodies (:data:`_nn_module_specs.MODULES`); a module that wraps
a functional (losses, pooling, activations, dropout) reuses that function's
generator: tensor arguments go to ``forward``, the other arguments to the
constructor. Modules built without arguments that accept one or two float
tensors are found by probing torch.
"""
import inspect
import warnings

import gputorch

from . import _nn_functional_specs as functional_specs
from . import _nn_module_specs as module_specs
from ._inputs import CaseBuilder
from ._runner import Case

MODULE_FROM_FUNCTIONAL = {
    "AdaptiveAvgPool1d": "adaptive_avg_pool1d", "AdaptiveAvgPool2d": "adaptive_avg_pool2d",
    "AdaptiveMaxPool1d": "adaptive_max_pool1d", "AdaptiveMaxPool2d": "adaptive_max_pool2d",
    "AvgPool1d": "avg_pool1d", "AvgPool2d": "avg_pool2d", "MaxPool1d": "max_pool1d", "MaxPool2d": "max_pool2d",
    "BCELoss": "binary_cross_entropy", "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
    "CosineEmbeddingLoss": "cosine_embedding_loss", "CrossEntropyLoss": "cross_entropy",
    "GaussianNLLLoss": "gaussian_nll_loss", "HuberLoss": "huber_loss", "KLDivLoss": "kl_div",
    "L1Loss": "l1_loss", "MSELoss": "mse_loss", "MarginRankingLoss": "margin_ranking_loss",
    "NLLLoss": "nll_loss", "PoissonNLLLoss": "poisson_nll_loss", "SmoothL1Loss": "smooth_l1_loss",
    "SoftMarginLoss": "soft_margin_loss", "CELU": "celu", "ELU": "elu", "GELU": "gelu",
    "Hardshrink": "hardshrink", "Hardsigmoid": "hardsigmoid", "Hardswish": "hardswish", "Hardtanh": "hardtanh",
    "LeakyReLU": "leaky_relu", "LogSigmoid": "logsigmoid", "Mish": "mish", "ReLU": "relu", "ReLU6": "relu6",
    "RReLU": "rrelu", "SELU": "selu", "SiLU": "silu", "Sigmoid": "sigmoid", "Tanh": "tanh",
    "Tanhshrink": "tanhshrink", "Softplus": "softplus", "Softshrink": "softshrink", "Softsign": "softsign",
    "Threshold": "threshold", "GLU": "glu", "Softmax": "softmax", "LogSoftmax": "log_softmax",
    "Softmin": "softmin", "Dropout": "dropout", "Dropout1d": "dropout1d", "Dropout2d": "dropout2d",
    "Dropout3d": "dropout3d", "AlphaDropout": "alpha_dropout", "FeatureAlphaDropout": "feature_alpha_dropout",
    "AdaptiveAvgPool3d": "adaptive_avg_pool3d", "AdaptiveMaxPool3d": "adaptive_max_pool3d",
    "AvgPool3d": "avg_pool3d", "MaxPool3d": "max_pool3d", "LPPool1d": "lp_pool1d", "LPPool2d": "lp_pool2d",
    "LPPool3d": "lp_pool3d", "PixelShuffle": "pixel_shuffle", "PixelUnshuffle": "pixel_unshuffle",
    "ChannelShuffle": "channel_shuffle", "Unfold": "unfold", "Fold": "fold",
    "LocalResponseNorm": "local_response_norm", "TripletMarginLoss": "triplet_margin_loss",
    "MultiMarginLoss": "multi_margin_loss", "MultiLabelMarginLoss": "multilabel_margin_loss",
}

# Constructor-free keyword options of a functional that its module does not take.
_FORWARD_ONLY_OPTIONS = {"training", "dtype", "weight", "bias", "pos_weight"}

MODULES_NOT_COVERED = {
    "LazyBatchNorm1d": "lazy: parameter shapes are unknown until the first call (torch cannot set them "
                       "either); see tests/nn/test_lazy_modules.py",
    "LazyInstanceNorm1d": "lazy: parameter shapes are unknown until the first call (torch cannot set them "
                          "either); see tests/nn/test_lazy_modules.py",
    "Module": "base class", "ModuleDict": "container", "ModuleList": "container", "Sequential": "container",
    "ParameterDict": "container", "ParameterList": "container", "RNNBase": "base class",
    "RNNCellBase": "base class",
    "TransformerEncoder": "a stack of TransformerEncoderLayer, which is covered",
    "Transformer": "encoder and decoder stacks; forward and backward parity with torch's weights in "
                   "tests/nn/test_transformer_decoder.py",
    "TransformerDecoder": "a stack of TransformerDecoderLayer; parity in tests/nn/test_transformer_decoder.py",
    "TransformerDecoderLayer": "parity with torch's weights (masks, norm_first, batch_first) in "
                               "tests/nn/test_transformer_decoder.py",
    "CTCLoss": "forward takes lengths as sequences; covered through F.ctc_loss",
    "EmbeddingBag": "covered through F.embedding_bag; module parity in tests/nn/test_embedding_bag.py",
    "MaxUnpool1d": "its inputs come from a max pool; covered through F.max_unpool1d",
    "MaxUnpool2d": "its inputs come from a max pool; covered through F.max_unpool2d",
    "MaxUnpool3d": "its inputs come from a max pool; covered through F.max_unpool3d",
    "TripletMarginWithDistanceLoss": "takes a Python callable; covered in tests/nn/test_loss.py",
    "AdaptiveLogSoftmaxWithLoss": "cutoffs and a target; parity in tests/nn/test_adaptive.py",
    "CrossMapLRN2d": "torch's legacy LRN; parity in tests/nn/test_local_response_norm.py",
    "DataParallel": "a one-device wrapper of another module; tests/nn/test_parallel.py",
    "SyncBatchNorm": "needs a process group to differ from BatchNorm (torch's also needs CUDA); 2-process "
                     "training equals single-process BatchNorm in tests/distributed/workers/data_parallel.py",
}
for _dims in ("1d", "2d", "3d"):
    for _kind in ("ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
        MODULES_NOT_COVERED[_kind + _dims] = "a wrapper of F.pad, which is covered; tests/nn/test_padding_modules.py"
    for _kind in ("LazyConv", "LazyConvTranspose", "LazyBatchNorm", "LazyInstanceNorm"):
        MODULES_NOT_COVERED[_kind + _dims] = ("lazy: parameter shapes are unknown until the first call (torch "
                                              "cannot set them either); see tests/nn/test_lazy_modules.py")
MODULES_NOT_COVERED["LazyLinear"] = MODULES_NOT_COVERED["LazyConv1d"]


def _public_functions(module):
    return {n: getattr(module, n) for n in dir(module) if not n.startswith("_")
            and callable(getattr(module, n)) and not inspect.ismodule(getattr(module, n))
            and not isinstance(getattr(module, n), type)}


def _probe(call_one, call_two):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind, call in (("unary", call_one), ("binary", call_two)):
            try:
                call()
                return kind
            except Exception:  # noqa: BLE001 - a probe
                continue
    return None


def functional_plan(torch):
    """``[(name, generator)]`` for the covered functions and ``{name: reason}`` for the rest."""
    plan, not_covered = [], {}
    names = sorted(set(_public_functions(gputorch.nn.functional)) & set(_public_functions(torch.nn.functional)))
    for name in names:
        if name in functional_specs.FUNCTIONAL_NOT_COVERED:
            not_covered[name] = functional_specs.FUNCTIONAL_NOT_COVERED[name]
            continue
        generator = functional_specs.FUNCTIONAL.get(name)
        if generator is None:
            fn = getattr(torch.nn.functional, name)
            kind = _probe(lambda: fn(torch.rand(2, 3)), lambda: fn(torch.rand(2, 3), torch.rand(2, 3)))
            generator = {"unary": functional_specs.activation(), "binary": functional_specs.pointwise_loss()}.get(kind)
        if generator is None:
            not_covered[name] = "no generator and torch accepts neither one nor two tensors"
        else:
            plan.append((name, generator))
    return plan, not_covered


def module_names(torch):
    return sorted(n for n in dir(gputorch.nn) if isinstance(getattr(gputorch.nn, n), type)
                  and issubclass(getattr(gputorch.nn, n), gputorch.nn.Module) and hasattr(torch.nn, n))


def _is_tensor_source(b, src):
    return any(src.startswith(name) for name in b.shapes)


def from_functional(class_name, generator):
    """A module body reusing a functional generator (tensors -> forward, the rest -> constructor)."""
    def body(b):
        args, kwargs = generator(b)
        forward = [a for a in args if _is_tensor_source(b, a)]
        ctor = [a for a in args if not _is_tensor_source(b, a)]
        ctor += [f"{k}={v}" for k, v in kwargs.items()
                 if k not in _FORWARD_ONLY_OPTIONS and not _is_tensor_source(b, v)]
        b.leaves.append(module_specs.module_leaf(f"{class_name}({', '.join(ctor)})", 0))
        return f"a{len(b.leaves) - 1}({', '.join(forward)})"
    return body


def generic_module(class_name, kind):
    def body(b):
        b.leaves.append(module_specs.module_leaf(f"{class_name}()", int(b.rng.integers(1 << 30))))
        m = f"a{len(b.leaves) - 1}"
        x = b.tensor(dtype="float32" if b.chance(0.8) else functional_specs.float_dtype(b),
                     min_ndim=b.choice([0, 3]), max_ndim=4)
        if kind == "unary":
            return f"{m}({x})"
        return f"{m}({x}, {b.tensor(b.shapes[x], b.dtypes[x])})"
    return body


def module_plan(torch):
    """``[(class name, body generator)]`` and ``{class name: reason}`` not covered."""
    plan, not_covered = [], {}
    for name in module_names(torch):
        if name in MODULES_NOT_COVERED:
            not_covered[name] = MODULES_NOT_COVERED[name]
            continue
        body = module_specs.MODULES.get(name)
        if body is None and name in MODULE_FROM_FUNCTIONAL:
            body = from_functional(name, functional_specs.FUNCTIONAL[MODULE_FROM_FUNCTIONAL[name]])
        if body is None:
            cls = getattr(torch.nn, name)
            kind = _probe(lambda: cls().eval()(torch.rand(2, 3, 4)),
                          lambda: cls().eval()(torch.rand(2, 3, 4), torch.rand(2, 3, 4)))
            body = generic_module(name, kind) if kind else None
        if body is None:
            not_covered[name] = "needs constructor arguments and has no explicit generator"
        else:
            plan.append((name, body))
    return plan, not_covered


def make_module_case(name, body, base_seed, index):
    import numpy as np

    from ._op_table import case_seed
    rng = np.random.default_rng(case_seed(base_seed, f"nn.{name}", index))
    b = CaseBuilder(rng, specials=False)
    return Case(op=f"nn.{name}", index=index, leaves=b.leaves, body=body(b))
