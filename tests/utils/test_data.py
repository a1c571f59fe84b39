"""utils.data in the main process: datasets, samplers, DistributedSampler, collation, DataLoader."""
import collections
import warnings

import numpy as np
import pytest

import gputorch
from gputorch.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                                 DistributedSampler, IterableDataset, RandomSampler, SequentialSampler,
                                 StackDataset, Subset, SubsetRandomSampler, TensorDataset,
                                 WeightedRandomSampler, default_collate, default_convert, get_worker_info,
                                 random_split)
from tests._helpers import assert_close

Point = collections.namedtuple("Point", "x y")


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


class Stream(IterableDataset):
    def __init__(self, n, length=None):
        self.n = n
        self.length = length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if self.length is None:
            raise TypeError("no len")
        return self.length


# ----------------------------------------------------------------------------------------- datasets
def test_dataset_base_and_add():
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        Dataset()[0]
    both = Squares(3) + Squares(2)
    assert isinstance(both, ConcatDataset)
    assert [both[i] for i in range(len(both))] == [0, 1, 4, 0, 1]
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2]


def test_tensor_dataset(device):
    x = gputorch.arange(12.0, device=device).reshape(4, 3)
    y = gputorch.arange(4, device=device)
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert_close(a, np.array([6.0, 7.0, 8.0], dtype=np.float32))
    assert b.item() == 2 and a.device.type == device
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, gputorch.arange(5, device=device))


def test_subset_and_getitems():
    ds = Subset(Squares(10), [9, 2, 4])
    assert len(ds) == 3
    assert [ds[i] for i in range(3)] == [81, 4, 16]
    assert ds.__getitems__([0, 2]) == [81, 16]
    nested = Subset(ds, [2, 0])
    assert nested.__getitems__([0, 1]) == [16, 81]


def test_concat_dataset():
    ds = ConcatDataset([Squares(3), Squares(4)])
    assert ds.cumulative_sizes == [3, 7]
    assert [ds[i] for i in range(7)] == [0, 1, 4, 0, 1, 4, 9]
    assert ds[-1] == 9 and ds[-7] == 0
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-8]
    with pytest.raises(IndexError):
        ds[7]
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream(2)])


def test_chain_and_stack_datasets():
    chain = ChainDataset([Stream(2, 2), Stream(3, 3)])
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([Squares(2)]))
    stacked = StackDataset(Squares(3), Squares(3))
    assert stacked[2] == (4, 4) and len(stacked) == 3
    named = StackDataset(a=Squares(2), b=Squares(2))
    assert named[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(2), Squares(3))


def test_random_split_lengths_cover_dataset():
    parts = random_split(range(10), [3, 7], generator=gputorch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    items = sorted(x for p in parts for x in p)
    assert items == list(range(10))
    again = random_split(range(10), [3, 7], generator=gputorch.Generator().manual_seed(0))
    assert [list(p) for p in parts] == [list(p) for p in again]
    other = random_split(range(10), [3, 7], generator=gputorch.Generator().manual_seed(1))
    assert [list(p) for p in parts] != [list(p) for p in other]


@pytest.mark.parametrize("fractions, n", [([0.33, 0.33, 0.34], 10), ([0.5, 0.5], 7), ([0.1, 0.2, 0.7], 23),
                                          ([0.4, 0.3, 0.3], 2)])
def test_random_split_fractions_like_torch(fractions, n):
    torch = pytest.importorskip("torch")
    from torch.utils.data import random_split as torch_split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = [len(p) for p in torch_split(range(n), fractions)]
        ours = random_split(range(n), fractions)
    assert [len(p) for p in ours] == expected
    assert torch is not None


def test_random_split_errors_and_warning():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 2 is 0"):
        random_split(range(2), [0.4, 0.3, 0.3])


# ----------------------------------------------------------------------------------------- samplers
def test_sequential_sampler():
    s = SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


def test_random_sampler_permutation_and_generator():
    s = RandomSampler(range(20), generator=gputorch.Generator().manual_seed(3))
    first = list(s)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert list(RandomSampler(range(20), generator=gputorch.Generator().manual_seed(3))) == first
    # without a generator the global seed decides
    gputorch.manual_seed(5)
    a = list(RandomSampler(range(20)))
    gputorch.manual_seed(5)
    assert list(RandomSampler(range(20))) == a


def test_random_sampler_num_samples_and_replacement():
    s = RandomSampler(range(4), num_samples=10, generator=gputorch.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == len(s) == 10
    assert sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2
    r = RandomSampler(range(3), replacement=True, num_samples=70, generator=gputorch.Generator().manual_seed(0))
    drawn = list(r)
    assert len(drawn) == 70 and set(drawn) == {0, 1, 2}


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(0))


def test_subset_random_sampler():
    indices = [10, 20, 30, 40]
    s = SubsetRandomSampler(indices, generator=gputorch.Generator().manual_seed(0))
    assert sorted(s) == indices and len(s) == 4


def test_weighted_random_sampler():
    s = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=gputorch.Generator().manual_seed(0))
    drawn = list(s)
    assert len(drawn) == 200 and set(drawn) == {1, 3}
    assert 120 < drawn.count(3) < 185          # P(3) = 0.75
    unique = list(WeightedRandomSampler([1, 2, 3, 4], 4, replacement=False))
    assert sorted(unique) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1, 2], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        WeightedRandomSampler([1, 2], 2, 1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 1\)"):
        WeightedRandomSampler([[1.0]], 2)


@pytest.mark.parametrize("n, size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False),
                                                (2, 5, True)])
def test_batch_sampler(n, size, drop_last):
    s = BatchSampler(SequentialSampler(range(n)), size, drop_last)
    batches = list(s)
    flat = list(range(n))
    expected = [flat[i:i + size] for i in range(0, n, size)]
    if drop_last:
        expected = [b for b in expected if len(b) == size]
    assert batches == expected and len(s) == len(expected)


def test_batch_sampler_errors():
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match=f"batch_size should be a positive integer value, but got batch_size={bad}"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)


@pytest.mark.parametrize("n", [0, 1, 5, 10, 11, 13])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_matches_torch_without_shuffle(n, replicas, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DistributedSampler as TorchSampler
    for rank in range(replicas):
        ours = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) and ours.total_size == theirs.total_size
    assert torch is not None


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (12, 4, False), (2, 5, False)])
def test_distributed_sampler_shuffled_partition(n, replicas, drop_last):
    parts = [list(DistributedSampler(range(n), num_replicas=replicas, rank=r, seed=7, drop_last=drop_last))
             for r in range(replicas)]
    per = len(parts[0])
    assert all(len(p) == per for p in parts)
    # Interleaving the ranks gives back the (padded or cut) permutation every replica shares.
    joined = [parts[r][j] for j in range(per) for r in range(replicas)]
    if drop_last:
        assert per == n // replicas and len(set(joined)) == len(joined)
    else:
        assert sorted(joined[:n]) == list(range(n))
        padded = list(joined[:n])
        while len(padded) < len(joined):
            padded += padded[:len(joined) - len(padded)]
        assert joined == padded


def test_distributed_sampler_epochs_and_errors():
    s = DistributedSampler(range(20), num_replicas=2, rank=0, seed=1)
    first = list(s)
    assert list(s) == first
    s.set_epoch(1)
    assert list(s) != first
    same = DistributedSampler(range(20), num_replicas=2, rank=0, seed=1)
    same.set_epoch(1)
    assert list(same) == list(s)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(3), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="num_replicas and rank"):
        DistributedSampler(range(3))


# ----------------------------------------------------------------------------------------- collation
def _assert_same_structure(ours, theirs):
    """Compare a gputorch collate result with torch's: containers, types, tensor values and dtypes."""
    import torch
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, gputorch.Tensor), type(ours)
        assert_close(ours, theirs, rtol=0, atol=0)
        assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
        return
    if isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for k in theirs:
            _assert_same_structure(ours[k], theirs[k])
        return
    if isinstance(theirs, (list, tuple)) and not isinstance(theirs, str):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same_structure(a, b)
        return
    assert type(ours) is type(theirs) and ours == theirs


def _to_torch(sample):
    import torch
    if isinstance(sample, gputorch.Tensor):
        return torch.from_numpy(np.array(sample.numpy()))
    if isinstance(sample, dict):
        return type(sample)((k, _to_torch(v)) for k, v in sample.items())
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(_to_torch(v) for v in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(_to_torch(v) for v in sample)
    return sample


def _batches():
    rng = np.random.default_rng(0)
    return {
        "ints": [1, 2, 3],
        "floats": [1.5, -2.0],
        "bools": [True, False],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "np_float32": [rng.standard_normal(3).astype(np.float32) for _ in range(2)],
        "np_int32_2d": [rng.integers(0, 9, (2, 2)).astype(np.int32) for _ in range(3)],
        "np_uint8": [np.arange(3, dtype=np.uint8)] * 2,
        "np_bool": [np.array([True, False])] * 2,
        "np_float16": [np.ones(2, np.float16)] * 2,
        "np_mixed_0d": [np.array(1.0), np.array(2)],
        "np_scalars_f32": [np.float32(1), np.float32(2)],
        "np_scalars_i64": [np.int64(1), np.int64(2)],
        "np_scalars_bool": [np.bool_(True), np.bool_(False)],
        "tensors": [gputorch.tensor([1.0, 2.0]), gputorch.tensor([3.0, 4.0])],
        "tensors_0d": [gputorch.tensor(1), gputorch.tensor(2)],
        "tuples": [(1, 2.0, "x"), (3, 4.0, "y")],
        "lists": [[1, 2.0], [3, 4.0]],
        "dicts": [{"a": 1, "b": "x", "c": np.zeros(2)}, {"a": 2, "b": "y", "c": np.ones(2)}],
        "ordered": [collections.OrderedDict(z=1, a=2.0), collections.OrderedDict(z=3, a=4.0)],
        "namedtuples": [Point(1, np.zeros(2)), Point(2, np.ones(2))],
        "nested": [{"img": gputorch.ones(2, 2), "meta": [(1, "a"), {"k": 2.5}]},
                   {"img": gputorch.zeros(2, 2), "meta": [(2, "b"), {"k": 3.5}]}],
        "tensor_label_pairs": [(gputorch.tensor([0.5]), 1), (gputorch.tensor([1.5]), 0)],
    }


@pytest.mark.parametrize("name", list(_batches()))
def test_default_collate_matches_torch(name):
    pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate
    batch = _batches()[name]
    _assert_same_structure(default_collate(batch), torch_collate(_to_torch(batch)))


@pytest.mark.parametrize("sample", [np.zeros(2), (np.ones(2), 1, "s"), {"a": np.int32(3), "b": [np.zeros(1)]},
                                    Point(np.zeros(1), 2), [np.float64(1.5), b"x"], 3, "text"])
def test_default_convert_matches_torch(sample):
    pytest.importorskip("torch")
    from torch.utils.data import default_convert as torch_convert
    _assert_same_structure(default_convert(sample), torch_convert(sample))


def test_default_collate_dtypes_and_values():
    out = default_collate([(0, 1.5), (1, 2.5)])
    assert isinstance(out, list)
    assert out[0].dtype == gputorch.int64 and out[0].tolist() == [0, 1]
    assert out[1].dtype == gputorch.float64 and out[1].tolist() == [1.5, 2.5]
    assert default_collate([True, False]).dtype == gputorch.bool


def test_default_collate_stacks_on_device(device):
    batch = [gputorch.ones(2, device=device), gputorch.zeros(2, device=device)]
    out = default_collate(batch)
    assert out.device.type == device and out.shape == (2, 2)
    assert_close(out, np.array([[1, 1], [0, 0]], dtype=np.float32))


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class 'object'>"):
        default_collate([object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"])])
    with pytest.raises(TypeError, match="NoneType"):
        default_collate([None, None])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([gputorch.zeros(2), gputorch.zeros(3)])


# ----------------------------------------------------------------------------------------- DataLoader
def _as_lists(batches):
    out = []
    for b in batches:
        if isinstance(b, (list, tuple)):
            out.append([x.tolist() if isinstance(x, gputorch.Tensor) else x for x in b])
        else:
            out.append(b.tolist() if isinstance(b, gputorch.Tensor) else b)
    return out


def test_dataloader_batches_and_len():
    ds = TensorDataset(gputorch.arange(10.0), gputorch.arange(10))
    dl = DataLoader(ds, batch_size=4)
    assert len(dl) == 3
    batches = _as_lists(dl)
    assert batches == [[[0.0, 1.0, 2.0, 3.0], [0, 1, 2, 3]], [[4.0, 5.0, 6.0, 7.0], [4, 5, 6, 7]],
                       [[8.0, 9.0], [8, 9]]]
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and len(list(dl)) == 2


def test_dataloader_on_device(device):
    ds = TensorDataset(gputorch.arange(6.0, device=device).reshape(3, 2))
    (batch,) = next(iter(DataLoader(ds, batch_size=3)))
    assert batch.device.type == device and batch.shape == (3, 2)


def test_dataloader_shuffle_reproducible_with_generator():
    ds = Squares(30)
    runs = [[b.tolist() for b in DataLoader(ds, batch_size=7, shuffle=True,
                                            generator=gputorch.Generator().manual_seed(11))] for _ in range(2)]
    assert runs[0] == runs[1]
    flat = [x for b in runs[0] for x in b]
    assert sorted(flat) == sorted(i * i for i in range(30)) and flat != [i * i for i in range(30)]
    gputorch.manual_seed(3)
    a = [b.tolist() for b in DataLoader(ds, batch_size=7, shuffle=True)]
    gputorch.manual_seed(3)
    assert [b.tolist() for b in DataLoader(ds, batch_size=7, shuffle=True)] == a
    # a new epoch is a new order
    dl = DataLoader(ds, batch_size=30, shuffle=True, generator=gputorch.Generator().manual_seed(0))
    assert next(iter(dl)).tolist() != next(iter(dl)).tolist()


def test_dataloader_without_batching_and_custom_samplers():
    assert list(DataLoader(range(5), batch_size=None)) == [0, 1, 2, 3, 4]
    assert list(DataLoader([{"a": 1}], batch_size=None)) == [{"a": 1}]
    out = list(DataLoader(Squares(6), batch_sampler=[[5, 0], [1]]))
    assert [b.tolist() for b in out] == [[25, 0], [1]]
    out = list(DataLoader(Squares(6), sampler=[3, 2, 1], batch_size=2))
    assert [b.tolist() for b in out] == [[9, 4], [1]]
    out = list(DataLoader(Squares(4), batch_size=2, collate_fn=lambda b: sum(b)))
    assert out == [1, 13]


def test_dataloader_iterable_dataset():
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(Stream(7, length=7), batch_size=3)) == 3
    assert len(DataLoader(Stream(7, length=7), batch_size=3, drop_last=True)) == 2
    with pytest.raises(TypeError):
        len(DataLoader(Stream(3)))
    dl = DataLoader(Stream(3, length=2), batch_size=None)
    assert len(dl) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert list(dl) == [0, 1, 2]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(num_workers=-1), ValueError, "num_workers option should be non-negative"),
    (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in multiprocessing"),
    (dict(num_workers=1, prefetch_factor=-1), ValueError, "prefetch_factor option should be non-negative"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
    (dict(sampler=[0], shuffle=True), ValueError, "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), ValueError, "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), ValueError, "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), ValueError, "batch_size=None option disables auto-batching"),
    (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be used with"),
    (dict(num_workers=1, multiprocessing_context="bogus"), ValueError, "should specify a valid start method"),
    (dict(num_workers=1, multiprocessing_context=3), TypeError, "should be a valid context object"),
])
def test_dataloader_argument_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        DataLoader(range(3), **kwargs)


@pytest.mark.parametrize("name", ["shuffle", "sampler", "batch_sampler"])
def test_dataloader_iterable_rejects_sampling_options(name):
    value = {"shuffle": True, "sampler": [0], "batch_sampler": [[0]]}[name]
    with pytest.raises(ValueError, match=f"expected unspecified {name} option, but got {name}="):
        DataLoader(Stream(3), **{name: value})


def test_dataloader_attributes_frozen():
    dl = DataLoader(range(3))
    for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{name} attribute should not be set after DataLoader is initialized"):
            setattr(dl, name, None)
    dl.num_workers = 0   # other attributes stay settable


@pytest.mark.skipif(gputorch.cuda.is_available(), reason="checks the no-accelerator path")
def test_pin_memory_without_cuda_warns_and_keeps_batches():
    with pytest.warns(UserWarning, match="no accelerator is found"):
        out = [b.tolist() for b in DataLoader(Squares(3), batch_size=3, pin_memory=True)]
    assert out == [[0, 1, 4]]


def test_get_worker_info_in_main_process():
    assert get_worker_info() is None


class _Pinned(np.ndarray):
    """Marks arrays that went through the fake pinning hook."""


class _FakeCudaBackend:
    """A CUDA backend stand-in whose ``pin_host_array`` hook copies into a marked array."""

    xp = None

    @staticmethod
    def pin_host_array(array):
        return np.array(array).view(_Pinned)


@pytest.mark.parametrize("num_workers", [0, 1])
def test_pin_memory_goes_through_the_backend_hook(monkeypatch, num_workers):
    from gputorch.utils.data import _pin_memory
    monkeypatch.setattr(_pin_memory, "_cuda_backend", lambda: _FakeCudaBackend())
    ds = [{"x": np.ones(2, np.float32), "pair": (np.zeros(1), 3), "point": Point(np.ones(1), "s")}] * 2
    batch = next(iter(DataLoader(ds, batch_size=2, pin_memory=True, num_workers=num_workers)))
    assert type(batch["x"]._data) is _Pinned and batch["x"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert type(batch["pair"][0]._data) is _Pinned and batch["pair"][1].tolist() == [3, 3]
    assert isinstance(batch["point"], Point) and type(batch["point"].x._data) is _Pinned
    assert batch["point"].y == ("s", "s")   # strings stay as collated (a tuple here, as in torch)
