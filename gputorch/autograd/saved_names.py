"""PyTorch's names for what built-in graph nodes saved: ``node._saved_self``, ``node._saved_mat2``, ...

Graph tools (torchviz's ``make_dot(show_saved=True)``) read these attributes. Each entry names the
positions of a node class's ``save_for_backward`` call in order (``None``: not exposed); every
node whose class saves its output (``saves_result``) also has ``_saved_result``. Classes not listed
expose only that.
"""

__all__ = ["SAVED_NAMES"]

SAVED_NAMES = {
    "MulBackward0": ("self", "other"),
    "DivBackward0": ("self", "other"),
    "MmBackward0": ("self", "mat2"),
    "BmmBackward0": ("self", "mat2"),
    "MatmulBackward0": ("self", "other"),
    "AddmmBackward0": ("mat1", "mat2"),
    "AddmvBackward0": ("mat", "vec"),
    "BaddbmmBackward0": ("batch1", "batch2"),
    "AddbmmBackward0": ("batch1", "batch2"),
    "LogBackward0": ("self",),
    "SinBackward0": ("self",),
    "CosBackward0": ("self",),
    "PowBackward0": ("self",),
    "PowBackward1": ("self", "exponent"),
    "GeluBackward0": ("self",),
    "SiluBackward0": ("self",),
    "LinearBackward0": ("input", "weight"),
    "ConvolutionBackward0": ("input", "weight"),
    "EmbeddingBackward0": ("indices",),
    "NativeLayerNormBackward0": ("input", "weight", "result1", "result2"),
}
