"""PyTorch's module path ``torch.nn.modules.batchnorm`` (pickles and ``safe_globals`` lists name it):
the batch-norm classes, defined in :mod:`.normalization`."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase  # noqa: F401

__all__ = []
