"""Datasets: what a DataLoader reads samples from.

A map-style :class:`Dataset` answers ``dataset[i]`` (and usually ``len(dataset)``); an
:class:`IterableDataset` is a stream that is iterated instead. The classes here combine
and slice datasets: :class:`TensorDataset` (rows of tensors), :class:`Subset`,
:class:`ConcatDataset`, :class:`ChainDataset`, :class:`StackDataset`, and
:func:`random_split`.
"""
import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys (usually ``0 .. len-1``) to samples.

    Subclasses implement ``__getitem__`` and, for the default samplers, ``__len__``. They may
    implement ``__getitems__(indices)`` to fetch a whole batch at once.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream of samples: subclasses implement ``__iter__``.

    With ``num_workers > 0`` each worker process iterates its own copy of the dataset; use
    :func:`~gputorch.utils.data.get_worker_info` inside ``__iter__`` to give each worker its
    share (otherwise every sample is produced once per worker)::

        def __iter__(self):
            info = get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(self.start + start, self.end, step))
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors have the same first size."""

    def __init__(self, *tensors):
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Several datasets of one length side by side: sample ``i`` is a tuple (positional
    arguments) or a dict (keyword arguments) of their samples ``i``."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                             "like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = args if args else tuple(kwargs.values())
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        return [self[i] for i in indices]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after the other: indices run through the first, then the second..."""

    @staticmethod
    def cumsum(sequence):
        ends, total = [], 0
        for d in sequence:
            total += len(d)
            ends.append(total)
        return ends

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        if which >= len(self.datasets):
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length {len(self)}")
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other (chained lazily)."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices`` (in that order)."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        picked = [self.indices[i] for i in indices]
        fetch_many = getattr(self.dataset, "__getitems__", None)
        if callable(fetch_many):
            return fetch_many(picked)
        return [self.dataset[i] for i in picked]

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(fractions, n):
    """Split ``n`` items by ``fractions`` (summing to 1): floors first, then the remainder handed
    out one by one from the first split on."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(int(math.floor(n * frac)))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                          stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random :class:`Subset` s.

    ``lengths`` are the sizes of the splits, or fractions summing to 1 (the remainder of the
    rounded-down sizes goes round-robin to the first splits, as in PyTorch). The permutation is
    drawn from ``generator`` (default: the global CPU generator).
    """
    from ... import random as _random
    from ...ops.sampling import randperm
    lengths = list(lengths)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    if generator is None:
        generator = _random.default_generator
    order = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]
