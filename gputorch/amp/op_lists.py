"""PyTorch's autocast op classes, per device type, as gputorch spells its ops.

Four classes, as in ``torch.autocast``:

* *lower*: the op runs in the region's dtype (float16 or bfloat16): its floating-point inputs other
  than float64 are cast down (matrix products, linear, convolutions, einsum);
* *fp32*: its float16/bfloat16 inputs are cast up to float32 (losses, reductions, exp/log on CUDA;
  pooling, padding, linear algebra and FFTs on the CPU);
* *promote*: its floating-point inputs are cast to the widest floating type among them (cat-like
  ops that would otherwise reject mixed dtypes);
* *banned*: the op raises inside a region (``binary_cross_entropy`` on CUDA).

A composite op with a function entry runs its body with autocast off (see ``autocast_function``).

An op implemented as one graph node is named by its node class (``NODES``); a composite op, or one
whose function checks dtypes before its node runs, by its function name (``FUNCTIONS``: its
function carries :func:`~gputorch.amp.autocast_mode.autocast_function`). The CPU lists were checked
op by op against torch 2.13's CPU autocast with ``dtype=float16`` (tests/amp); the CUDA lists follow
PyTorch's documented CUDA lists.
"""

__all__ = ["NODES", "FUNCTIONS", "DEFAULT_DTYPE", "BANNED_MESSAGE"]

_LOWER_COMMON = {"MmBackward0", "BmmBackward0", "MatmulBackward0", "AddmmBackward0", "BaddbmmBackward0",
                 "AddbmmBackward0", "LinearBackward0", "ConvolutionBackward0", "PreluKernelBackward0",
                 "EinsumBackward0"}
_FP32_COMMON = {"MseLossBackward0", "NllLossBackward0", "NllLoss2DBackward0", "CrossEntropyLossBackward0",
                "SmoothL1LossBackward0", "HuberLossBackward0", "BinaryCrossEntropyWithLogitsBackward0",
                "ProdBackward0", "ProdBackward1"}

NODES = {
    "cuda": {
        "lower": _LOWER_COMMON | {"MvBackward0", "AddmvBackward0", "AddrBackward0", "ThnnFusedLstmCellBackward0",
                                  "ThnnFusedGruCellBackward0"},
        "fp32": _FP32_COMMON | {"SoftmaxBackward0", "LogSoftmaxBackward0", "NativeLayerNormBackward0",
                                "NativeGroupNormBackward0", "ExpBackward0", "LogBackward0", "Log10Backward0",
                                "Log2Backward0", "Log1PBackward0", "Expm1Backward0", "PowBackward0",
                                "PowBackward1", "PowBackward2", "CumsumBackward0", "CumprodBackward0",
                                "SumBackward0", "SumBackward1", "LinalgVectorNormBackward0",
                                "LogsumexpBackward0", "ReciprocalBackward0", "RsqrtBackward0", "AcosBackward0",
                                "AsinBackward0", "CoshBackward0", "SinhBackward0", "TanBackward0",
                                "ErfinvBackward0", "SoftplusBackward0"},
        "promote": {"AddcmulBackward0", "AddcdivBackward0", "Atan2Backward0", "LinalgCrossBackward0",
                    "IndexPutBackward0", "ScatterAddBackward0", "DotBackward0"},
        "banned": {"BinaryCrossEntropyBackward0"},
    },
    "cpu": {
        "lower": _LOWER_COMMON,
        "fp32": _FP32_COMMON | {"AvgPool3DBackward0", "MaxPool3DWithIndicesBackward0", "AdaptiveAvgPool3DBackward0",
                                "AdaptiveMaxPool3DBackward0", "ReflectionPad1DBackward0",
                                "ReflectionPad2DBackward0", "ReplicationPad1DBackward0",
                                "ReplicationPad2DBackward0", "ReplicationPad3DBackward0",
                                "BinaryCrossEntropyBackward0", "TraceBackward0", "LinalgCholeskyExBackward0",
                                "LinalgInvExBackward0", "LinalgQrBackward0",
                                "LinalgSvdBackward0", "LinalgEighBackward0", "LinalgSolveExBackward0",
                                "FftC2CBackward0", "FftR2CBackward0", "FftC2RBackward0", "PolarBackward0"},
        "promote": {"StackBackward0", "CatBackward0", "IndexCopyBackward0"},
        "banned": set(),
    },
}

_LOWER_FUNCTIONS = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                    "conv_transpose3d", "scaled_dot_product_attention", "matmul", "mm", "bmm", "addmm", "baddbmm",
                    "addbmm"}
_FP32_FUNCTIONS = {"l1_loss", "kl_div", "cosine_embedding_loss", "poisson_nll_loss", "hinge_embedding_loss",
                   "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
                   "multilabel_margin_loss", "cdist"}

# CPU linear algebra and FFTs run in float32 (torch has no half-precision CPU kernels for them).
_LINALG_FUNCTIONS = {"cholesky", "cholesky_ex", "cholesky_inverse", "cholesky_solve", "eig", "eigh", "eigvals",
                     "eigvalsh", "geqrf", "householder_product", "inv", "inv_ex", "inverse", "lu_solve",
                     "matrix_rank", "ormqr", "pinverse", "qr", "solve", "svd", "svdvals",
                     "legacy.cholesky", "legacy.lu_solve", "legacy.orgqr", "legacy.qr", "legacy.svd"}
_FFT_FUNCTIONS = {"fft." + name for name in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
                                             "irfft2", "rfftn", "irfftn", "hfft", "ihfft")}

# Functions by class; "plain" ones are in no class: no casts, but their composite body runs with
# autocast off, as a one-kernel op does in PyTorch.
FUNCTIONS = {
    "cuda": {
        "lower": _LOWER_FUNCTIONS | {"mv", "multi_dot"},
        "fp32": _FP32_FUNCTIONS | {"cosine_similarity", "multilabel_soft_margin_loss", "pdist", "dist",
                                   "normalize", "renorm"},
        "promote": {"dot", "bilinear", "tensordot", "cross", "index_put", "scatter_add"},
        "plain": {"matrix_exp"},
    },
    "cpu": {
        "lower": _LOWER_FUNCTIONS | {"vecdot"},
        "fp32": _FP32_FUNCTIONS | _LINALG_FUNCTIONS | _FFT_FUNCTIONS | {
            "lstsq", "quantile", "nanquantile", "grid_sample", "ctc_loss", "polar", "view_as_complex",
            "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d"},
        "promote": {"index_copy"},
        "plain": {"matrix_exp"},
    },
}

# The dtype of a region that names none: PyTorch's defaults.
DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}

BANNED_MESSAGE = (
    "gputorch.nn.functional.binary_cross_entropy and gputorch.nn.BCELoss are unsafe to autocast: the "
    "probabilities they take usually come from a sigmoid computed in float16, where they round to 0 or 1. "
    "Combine the sigmoid and the loss in gputorch.nn.functional.binary_cross_entropy_with_logits (or "
    "gputorch.nn.BCEWithLogitsLoss), which autocast runs in float32, or run this loss outside the region.")
