"""Fetchers: how one batch (or one sample) is read from a dataset, in the main process or a worker.

A map-style dataset is indexed (through ``__getitems__`` when it has one); an iterable
dataset is advanced. ``fetch(index)`` returns the collated data, or raises StopIteration
when an iterable dataset is exhausted (or only a partial batch is left and ``drop_last``).
"""

__all__ = []


class DatasetKind:
    Map = 0
    Iterable = 1


class MapFetcher:
    """Reads ``dataset[i]`` for each index of a batch (or one index without batching)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        fetch_many = getattr(self.dataset, "__getitems__", None)
        if fetch_many:
            data = fetch_many(index)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableFetcher:
    """Takes the next ``len(index)`` samples (or the next one without batching) from the stream."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.iterator = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in index:
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    cls = MapFetcher if kind == DatasetKind.Map else IterableFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
