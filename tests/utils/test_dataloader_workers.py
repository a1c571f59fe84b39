"""DataLoader with worker processes: order, seeding, errors, shutdown, persistence, start methods.

Datasets are small and top-level (so that the 'spawn' start method can pickle them).
"""
import multiprocessing
import os
import random
import time

import numpy as np
import pytest

import gputorch
from gputorch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class Records(Dataset):
    """Samples of several kinds (tensor, NumPy array, number, string) derived from the index."""

    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": gputorch.full((2,), float(i)), "arr": np.arange(3) + i, "label": i % 3, "name": f"s{i}"}


class FailsAt(Dataset):
    def __init__(self, bad, exc_type=ValueError, n=6):
        self.bad, self.exc_type, self.n = bad, exc_type, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc_type(f"cannot load sample {i}")
        return i


class NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class RaisesOddException(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        raise NeedsTwoArgs("x", i)


class RandomDraws(Dataset):
    """Each sample is a draw from gputorch's, NumPy's and Python's global generators, plus the worker id."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return (gputorch.rand(1).item(), float(np.random.rand()), random.random(),
                -1 if info is None else info.id)


class Pids(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return os.getpid()


class Sleepy(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(0.6)
        return i


class ExitsAt(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


class Unpicklable(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return lambda: i


class ShardedRange(IterableDataset):
    """range(start, end) split between workers in contiguous shards (PyTorch's documented pattern)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per = -(-(self.end - self.start) // info.num_workers)
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))


class InfoDataset(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.num_workers, info.seed, info.dataset is not None)


def record_init(worker_id):
    os.environ["GPUTORCH_TEST_INIT"] = str(worker_id)


class ReadsInit(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return int(os.environ.get("GPUTORCH_TEST_INIT", "-1")), get_worker_info().id


def _plain(batches):
    """Batches as nested Python values (tensors as lists) for comparison."""
    def conv(x):
        if isinstance(x, gputorch.Tensor):
            return x.tolist()
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [conv(v) for v in x]
        return x
    return [conv(b) for b in batches]


def _gone(pid):
    """True if the process no longer exists: it exited and was reaped (a zombie still answers kill 0)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# ---------------------------------------------------------------------------------------------- order
@pytest.mark.parametrize("kwargs", [dict(batch_size=4), dict(batch_size=5, drop_last=True), dict(batch_size=None)])
def test_workers_give_same_batches_in_same_order(kwargs):
    single = _plain(DataLoader(Records(), num_workers=0, **kwargs))
    multi = _plain(DataLoader(Records(), num_workers=2, **kwargs))
    assert multi == single and len(single) > 3


def test_workers_shuffle_reproducible_with_generator():
    def run(workers):
        g = gputorch.Generator().manual_seed(1234)
        return _plain(DataLoader(Records(), batch_size=4, shuffle=True, generator=g, num_workers=workers))
    single = run(0)
    assert run(2) == single
    assert run(2) == single
    assert [x for b in single for x in b["label"]] != [i % 3 for i in range(23)]


def test_out_of_order_returns_every_batch():
    batches = _plain(DataLoader(Records(), batch_size=4, num_workers=2, in_order=False))
    assert sorted(x for b in batches for x in b["name"]) == sorted(f"s{i}" for i in range(23))


def test_iterable_dataset_sharding_matches_torch():
    ours = _plain(DataLoader(ShardedRange(0, 11), batch_size=2, num_workers=2))
    assert sorted(x for b in ours for x in b) == list(range(11))
    # worker 0 owns 0..5, worker 1 owns 6..10: batches alternate between them
    assert ours == [[0, 1], [6, 7], [2, 3], [8, 9], [4, 5], [10]]
    torch = pytest.importorskip("torch")
    import torch.utils.data as tud

    class TorchSharded(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            per = -(-11 // info.num_workers)
            lo = info.id * per
            return iter(range(lo, min(lo + per, 11)))

    for drop_last in (False, True):
        theirs = [b.tolist() for b in tud.DataLoader(TorchSharded(), batch_size=2, num_workers=2,
                                                     drop_last=drop_last)]
        mine = _plain(DataLoader(ShardedRange(0, 11), batch_size=2, num_workers=2, drop_last=drop_last))
        assert mine == theirs
    assert torch is not None


def test_iterable_without_sharding_duplicates_per_worker():
    batches = _plain(DataLoader(ShardedRange(0, 3), batch_size=None, num_workers=2))
    # both workers replay the whole range (split range uses worker info, here per == 2)
    assert sorted(batches) == [0, 1, 2]


def test_prefetch_factor_bounds_tasks_in_flight():
    it = iter(DataLoader(Records(40), batch_size=1, num_workers=2, prefetch_factor=3))
    assert it._tasks_outstanding == 6
    next(it)
    assert it._tasks_outstanding <= 6
    del it
    it = iter(DataLoader(Records(40), batch_size=1, num_workers=2))
    assert it._tasks_outstanding == 4   # default prefetch_factor 2
    del it


# ---------------------------------------------------------------------------------------------- errors
def test_worker_exception_names_worker_and_keeps_traceback():
    # With batch_size=1, task 1 goes to worker 1 (round robin).
    with pytest.raises(ValueError) as info:
        list(DataLoader(FailsAt(1), batch_size=1, num_workers=2))
    message = str(info.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 1.")
    assert "Original Traceback (most recent call last):" in message
    assert "cannot load sample 1" in message and "__getitem__" in message


def test_worker_key_error_and_unbuildable_exception():
    with pytest.raises(KeyError) as info:
        list(DataLoader(FailsAt(2, KeyError), batch_size=1, num_workers=2))
    assert "Caught KeyError in DataLoader worker process 0." in str(info.value)
    with pytest.raises(RuntimeError, match="Caught NeedsTwoArgs in DataLoader worker process 0"):
        list(DataLoader(RaisesOddException(), batch_size=1, num_workers=2))


def test_unpicklable_batch_is_reported():
    with pytest.raises(Exception, match="in DataLoader worker process 0") as info:
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1))
    assert "pickle" in str(info.value).lower()


def test_worker_init_fn_error_is_reported():
    def bad_init(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")
    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"):
        list(DataLoader(Records(4), batch_size=2, num_workers=1, worker_init_fn=bad_init))


def test_timeout():
    start = time.time()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
        next(iter(DataLoader(Sleepy(), batch_size=1, num_workers=1, timeout=0.2)))
    assert time.time() - start < 3


def test_worker_that_dies_is_detected(monkeypatch):
    from gputorch.utils.data import _worker
    monkeypatch.setattr(_worker, "STATUS_CHECK_INTERVAL", 0.2)   # how often the main process looks
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(ExitsAt(), batch_size=1, num_workers=2))


# ---------------------------------------------------------------------------------------------- seeding
def test_workers_seeded_differently_and_reproducibly():
    def run():
        gputorch.manual_seed(7)
        return _plain(DataLoader(RandomDraws(), batch_size=2, num_workers=2))
    first = run()
    assert run() == first
    by_worker = {}
    for batch in first:
        ours, np_draws, py_draws, worker = batch
        assert len(set(worker)) == 1
        by_worker.setdefault(worker[0], []).append((ours, np_draws, py_draws))
    assert set(by_worker) == {0, 1}
    w0, w1 = by_worker[0][0], by_worker[1][0]
    for a, b in zip(w0, w1):        # every generator differs between the workers
        assert a != b
    gputorch.manual_seed(8)
    assert _plain(DataLoader(RandomDraws(), batch_size=2, num_workers=2)) != first


def test_worker_info_and_init_fn():
    gen = gputorch.Generator().manual_seed(99)
    out = _plain(DataLoader(InfoDataset(), batch_size=None, num_workers=2, generator=gen))
    (id0, n0, seed0, has0), (id1, n1, seed1, has1) = out
    assert (id0, id1, n0, n1, has0, has1) == (0, 1, 2, 2, True, True)
    assert seed1 == seed0 + 1
    out = _plain(DataLoader(ReadsInit(), batch_size=None, num_workers=2, worker_init_fn=record_init))
    assert all(init == wid for init, wid in out)


# ---------------------------------------------------------------------------------------------- lifetime
def test_workers_stop_when_exhausted_or_collected():
    it = iter(DataLoader(Pids(), batch_size=1, num_workers=2))
    pids = {w.pid for w in it._workers}
    list(it)
    assert all(_gone(p) for p in pids)
    it = iter(DataLoader(Pids(), batch_size=1, num_workers=2))
    next(it)
    pids = {w.pid for w in it._workers}
    del it
    assert all(_gone(p) for p in pids)


def test_persistent_workers_survive_epochs():
    dl = DataLoader(Pids(), batch_size=None, num_workers=2, persistent_workers=True)
    first = list(dl)
    second = list(dl)
    assert set(first) == set(second) and len(set(first)) == 2 and os.getpid() not in first
    # break off mid-epoch: the next epoch starts cleanly
    it = iter(dl)
    next(it)
    assert sorted(list(dl)) == sorted(first)
    pids = set(first)
    del dl, it
    assert all(_gone(p) for p in pids)
    fresh = DataLoader(Pids(), batch_size=None, num_workers=2)
    assert set(list(fresh)).isdisjoint(set(list(fresh)))   # new workers each epoch


def test_persistent_workers_with_iterable_dataset():
    dl = DataLoader(ShardedRange(0, 7), batch_size=2, num_workers=2, persistent_workers=True)
    first = _plain(dl)
    assert first == _plain(dl)
    assert sorted(x for b in first for x in b) == list(range(7))


def test_len_with_workers():
    dl = DataLoader(Records(10), batch_size=3, num_workers=2)
    assert len(dl) == 4
    it = iter(dl)
    assert len(it) == 4
    del it


# ---------------------------------------------------------------------------------------------- start methods
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_other_start_methods(method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not available here")
    # a dataset class of this module (tensors, arrays, numbers and strings in its samples) ...
    expected = _plain(DataLoader(Records(7), batch_size=2))
    assert _plain(DataLoader(Records(7), batch_size=2, num_workers=2, multiprocessing_context=method)) == expected
    # ... and a worker_init_fn travel to the workers
    got = _plain(DataLoader(ReadsInit(), batch_size=None, num_workers=2, worker_init_fn=record_init,
                            multiprocessing_context=method))
    assert got == [[0, 0], [1, 1], [0, 0], [1, 1]]


def test_context_object_accepted():
    ctx = multiprocessing.get_context("fork")
    dl = DataLoader(Records(5), batch_size=5, num_workers=1, multiprocessing_context=ctx)
    assert dl.multiprocessing_context is ctx
    assert _plain(dl)[0]["label"] == [0, 1, 2, 0, 1]


def test_persistent_workers_restart_after_a_timeout():
    dl = DataLoader(Sleepy(), batch_size=1, num_workers=1, persistent_workers=True, timeout=0.2)
    with pytest.raises(RuntimeError, match="timed out"):
        list(dl)
    dl.timeout = 5
    # the timed-out iterator was shut down; a new one is made (its timeout read at creation)
    assert dl._iterator._shutdown
    it = iter(dl)
    assert not it._shutdown
    del it
