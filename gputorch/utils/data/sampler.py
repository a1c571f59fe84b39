"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

A sampler is an iterable of indices (or, for :class:`BatchSampler`, of lists of indices).
Random samplers draw from a ``gputorch.Generator``; without one they seed a fresh generator
from the global CPU generator at the start of each pass, so ``gputorch.manual_seed`` makes
the order reproducible.
"""
from typing import Generic, TypeVar

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: subclasses implement ``__iter__`` (and ``__len__`` where it is known)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


def _is_positive_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _fresh_generator():
    """A CPU generator seeded from the global one (what random samplers use by default)."""
    from ... import random as _random
    from ..._dtype import int64
    from ...ops.creation import empty
    seed = int(empty((), dtype=int64).random_().item())
    return _random.Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into ``data_source``.

    Without replacement: a random permutation (repeated whole as often as ``num_samples``
    requires, then a partial one). With ``replacement=True``: ``num_samples`` independent
    uniform draws. ``num_samples`` defaults to ``len(data_source)``.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not _is_positive_int(self.num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ..._dtype import int64
        from ...ops.sampling import randint, randperm
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        count = self.num_samples
        if self.replacement:
            chunk = 32
            for _ in range(count // chunk):
                yield from randint(0, n, (chunk,), dtype=int64, generator=generator).tolist()
            yield from randint(0, n, (count % chunk,), dtype=int64, generator=generator).tolist()
            return
        for _ in range(count // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[:count % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new permutation each pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        from ...ops.sampling import randperm
        generator = self.generator if self.generator is not None else _fresh_generator()
        for i in randperm(len(self.indices), generator=generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _is_positive_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        from ..._dtype import float64
        from ...ops.creation import as_tensor
        weights = as_tensor(weights, dtype=float64)
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ...ops.sampling import multinomial
        drawn = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``; the last, shorter list is
    kept unless ``drop_last``."""

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_positive_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        size = self.batch_size
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
