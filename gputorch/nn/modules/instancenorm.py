"""PyTorch's module path ``torch.nn.modules.instancenorm`` (pickles and ``safe_globals`` lists name it):
the instance-norm classes, defined in :mod:`.normalization`."""
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm  # noqa: F401

__all__ = []
