"""``DistributedSampler``: each of ``num_replicas`` processes reads its own part of a dataset.

The partitioning follows PyTorch: the (optionally shuffled) index list is padded by repeating
its start up to a multiple of ``num_replicas`` (or cut down to one with ``drop_last``), and
replica ``rank`` takes every ``num_replicas``-th index from position ``rank``. Shuffling uses a
generator seeded with ``seed + epoch``, so every replica computes the same permutation; call
``set_epoch`` before each epoch to get a new one.
"""
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Restrict loading to the indices of replica ``rank`` out of ``num_replicas``.

    Args:
        dataset: a map-style dataset (its length is used).
        num_replicas (int): the number of processes sharing the data (default: the default process
            group's world size).
        rank (int): this process's rank in ``[0, num_replicas - 1]`` (default: its rank in the group).
        shuffle (bool): shuffle the indices (default True).
        seed (int): the shuffling seed, the same in every replica (default 0).
        drop_last (bool): drop the tail so the data divides evenly instead of padding it
            with repeated indices (default False).
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler needs num_replicas and rank, or an initialized default "
                                   "process group to read them from (gputorch.distributed.init_process_group)")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = n // num_replicas        # every replica gets the same whole share
        else:
            self.num_samples = -(-n // num_replicas)    # padded up to a multiple of num_replicas
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ... import random as _random
            from ...ops.sampling import randperm
            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            missing = self.total_size - len(indices)
            while missing > 0:                  # repeat from the start (whole copies if needed)
                extra = indices[:missing]
                indices += extra
                missing -= len(extra)
        if len(indices) != self.total_size:
            raise RuntimeError(f"DistributedSampler built {len(indices)} indices instead of {self.total_size}")
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch, which makes the shuffled order differ between epochs."""
        self.epoch = epoch
