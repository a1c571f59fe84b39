"""``gputorch.utils.data``: datasets, samplers and the DataLoader (PyTorch's ``torch.utils.data``).

- :mod:`.dataset`: Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset, ChainDataset,
  StackDataset, random_split
- :mod:`.sampler`: SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
  BatchSampler; :mod:`.distributed`: DistributedSampler
- :mod:`.dataloader`: DataLoader (worker processes in :mod:`._worker`), default_collate and
  default_convert (:mod:`._collate`), get_worker_info
"""
from ._collate import default_collate, default_convert
from .dataloader import DataLoader
from ._worker import WorkerInfo, get_worker_info
from .dataset import *  # noqa: F401,F403
from .distributed import DistributedSampler
from .sampler import *  # noqa: F401,F403
from . import dataset as _dataset, sampler as _sampler

__all__ = (["DataLoader", "default_collate", "default_convert", "get_worker_info", "WorkerInfo",
            "DistributedSampler"] + _dataset.__all__ + _sampler.__all__)
