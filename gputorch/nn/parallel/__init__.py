"""``nn.parallel``: ``DataParallel`` and ``data_parallel`` on one device (gputorch does not split a
batch over several GPUs: the module runs where its parameters are, which is what these give with
one device; the first use says so once), and ``DistributedDataParallel`` (``distributed.py``), one
replica per process over ``gputorch.distributed``."""
import warnings

from ..modules.module import Module
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]

_WARNED = []


def _say_once():
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn("gputorch.nn.DataParallel runs the module on one device (its parameters' device): "
                      "gputorch does not split batches across GPUs", UserWarning, stacklevel=3)


class DataParallel(Module):
    """Wraps ``module`` as PyTorch's ``DataParallel`` does (``.module``, state_dict keys prefixed with
    ``module.``) and calls it on the whole batch on one device.

    Args:
        module: the module to run.
        device_ids, output_device, dim: accepted as in PyTorch; with more than one device id the
            batch still runs on one device (said once).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        _say_once()
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """``module(*inputs, **module_kwargs)`` on one device (see :class:`DataParallel`)."""
    _say_once()
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
