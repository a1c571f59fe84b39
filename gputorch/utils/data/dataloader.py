"""``DataLoader``: batches from a dataset, in the main process or in worker processes.

A DataLoader combines a dataset with a sampler (the order of indices), a batch sampler
(indices grouped into batches) and a collate function (samples into a batch). Iterating it
creates an iterator:

- ``num_workers=0``: batches are fetched in the main process, one by one.
- ``num_workers>0``: ``num_workers`` processes fetch batches. The main process hands out
  batch indices round-robin, keeping ``prefetch_factor`` batches per worker in flight, and
  returns the results in sampler order (a batch that arrives early waits). Each worker seeds
  Python's ``random``, NumPy's global generator and gputorch's generators from
  ``base_seed + worker_id``, where ``base_seed`` is drawn from the loader's ``generator`` (or the
  global one) for each iterator, so random transforms differ between workers and are
  reproducible after ``gputorch.manual_seed``. Workers are stopped when the iterator is
  exhausted or garbage collected (or, with ``persistent_workers=True``, when the loader is);
  an exception in a worker is raised again in the main process, naming the worker and
  carrying the original traceback.
"""
import itertools
import os
import pickle
import queue
import sys
import warnings
import weakref

from . import _worker
from ._collate import default_collate, default_convert
from ._fetch import DatasetKind, make_fetcher
from ._pin_memory import pin_memory as _pin, pinning_available
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """The 'sampler' of an iterable dataset: ``None`` forever (workers just take the next items)."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    """'fork' where the platform has it (fast start, nothing to pickle), else the default."""
    import multiprocessing
    if "fork" in multiprocessing.get_all_start_methods() and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _suggested_max_workers():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Args:
        dataset: a map-style :class:`Dataset` (indexable) or an :class:`IterableDataset`.
        batch_size (int or None): samples per batch (default 1); None turns batching off (each
            sample goes through ``collate_fn``, by default :func:`default_convert`, alone).
        shuffle (bool): visit a map-style dataset in a new random order each epoch.
        sampler (Sampler or iterable): the order of indices (excludes ``shuffle``).
        batch_sampler (Sampler or iterable): yields whole lists of indices (excludes
            ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers (int): worker processes (0: load in the main process).
        collate_fn (callable): merges a list of samples into a batch (default :func:`default_collate`).
        pin_memory (bool): copy batches into page-locked host memory, for faster copies to a GPU
            (needs CUDA; a warning and no effect without it).
        drop_last (bool): drop the last batch if it is incomplete.
        timeout (float): seconds to wait for a batch from the workers before raising (0: forever).
        worker_init_fn (callable): called as ``worker_init_fn(worker_id)`` in each worker after seeding.
        multiprocessing_context (str or context): start method ('fork', 'spawn', 'forkserver');
            default 'fork' on Linux.
        generator (Generator): draws the shuffling order and the workers' base seed.
        prefetch_factor (int): batches each worker loads in advance (default 2 with workers).
        persistent_workers (bool): keep the workers (and their dataset copies) across epochs.
        in_order (bool): return batches in sampler order (default); False returns them as they
            arrive from the workers.
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. Let "
                             "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = DatasetKind.Iterable
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, "
                                     f"but got {name}={value}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive "
                             "with drop_last")

        if sampler is None:
            if self._dataset_kind == DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._iterable_len_called = None
        self._initialized = True

    # -- configuration ---------------------------------------------------------------------------
    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            import multiprocessing
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method "
                                     f"in {methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a "
                                f"string specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, name, value):
        if self._initialized and name in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                          "persistent_workers"):
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterator draws from: batches of indices, or single indices without batching."""
        return self.batch_sampler if self._auto_collation else self.sampler

    # -- iteration -------------------------------------------------------------------------------
    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self._check_worker_number()
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shutdown:   # first epoch, or after an error stopped it
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == DatasetKind.Iterable:
            length = len(self.dataset)
            self._iterable_len_called = length
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def _check_worker_number(self):
        limit = _suggested_max_workers()
        if limit is not None and self.num_workers > limit:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total, more than the "
                f"{limit} CPUs this process may use; too many workers can make loading slow or run the "
                f"machine out of memory. Lower num_workers if this is not intended.", stacklevel=3)


class _BaseIter:
    """What both iterators share: the sampler pass, the base seed, length bookkeeping."""

    def __init__(self, loader):
        from ..._dtype import int64
        from ...ops.creation import empty
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._iterable_len_called = loader._iterable_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._pin_memory = loader.pin_memory and self._pinning_possible()
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._base_seed = int(empty((), dtype=int64).random_(generator=loader.generator).item())
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    @staticmethod
    def _pinning_possible():
        if pinning_available():
            return True
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                      "pinned memory won't be used.", stacklevel=4)
        return False

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._iterable_len_called = loader._iterable_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __iter__(self):
        return self

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        expected = self._iterable_len_called
        if self._dataset_kind == DatasetKind.Iterable and expected is not None and self._num_yielded > expected:
            message = (f"Length of IterableDataset {self._dataset} was reported to be {expected} (when "
                       f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not properly "
                            "configuring the IterableDataset replica at each worker (see get_worker_info).")
            warnings.warn(message, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    """Fetches each batch in the calling process."""

    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = make_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()           # StopIteration ends the epoch
        data = self._fetcher.fetch(index)    # ... as does an exhausted iterable dataset
        return _pin(data) if self._pin_memory else data


class _MultiProcessIter(_BaseIter):
    """Hands batch indices to worker processes and returns their batches in order.

    Bookkeeping: ``_send_idx`` numbers the tasks handed out, ``_rcvd_idx`` is the next task to
    return; ``_task_info[i]`` is ``(worker_id,)`` while task ``i`` is outstanding and
    ``(worker_id, data)`` once its result came early. ``_workers_status[w]`` is False once
    worker ``w`` is exhausted (iterable datasets) or stopped.
    """

    def __init__(self, loader):
        super().__init__(loader)
        context = loader.multiprocessing_context or _default_context()
        self._worker_init_fn = loader.worker_init_fn
        self._in_order = loader.in_order
        self._shutdown = False
        pool = _WorkerPool(context, self._num_workers, (
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last,
            self._base_seed, self._worker_init_fn))
        # The pool is stopped when this iterator is freed, by refcount or by the cycle collector (a
        # weakref finalizer, not __del__: the collector may already have closed the queues' feeder
        # threads when __del__ would run, so the workers would never hear that they should exit).
        self._finalizer = weakref.finalize(self, pool.shutdown)
        self._workers = pool.workers
        self._index_queues = pool.index_queues
        self._result_queue = pool.result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: start a new pass; results of the previous one still in the queue
            # arrive before each worker's acknowledgement and are dropped.
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            pending = self._num_workers
            while pending:
                idx, _ = self._get_data()
                if isinstance(idx, _worker.ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return   # every worker is done
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            idx, payload = self._result_queue.get(timeout=timeout)
        except queue.Empty:
            dead = [w for w, active in zip(self._workers, self._workers_status) if active and not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None
        if type(payload) is bytes:
            payload = pickle.loads(payload)
        return True, (idx, payload)

    def _get_data(self):
        if self._timeout > 0:
            ok, item = self._try_get_data(self._timeout)
            if not ok:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return item
        while True:
            ok, item = self._try_get_data(_worker.STATUS_CHECK_INTERVAL)
            if ok:
                return item

    def _next_data(self):
        while True:
            # Skip tasks that will never produce data (given to a worker whose stream ended) and
            # tasks already returned out of order.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])

            if self._shutdown:
                raise StopIteration
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.IterableDatasetStopIteration):
                self._worker_exhausted(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process(data)
            if not self._in_order:
                del self._task_info[idx]
                return self._process(data)
            self._task_info[idx] += (data,)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return _pin(data) if self._pin_memory else data

    def _worker_exhausted(self, worker_id):
        self._workers_status[worker_id] = False
        if not self._persistent_workers:
            self._index_queues[worker_id].put(None)   # let it exit now

    def _shutdown_workers(self):
        """Stop every worker and reap it (terminating those that do not exit in time)."""
        self._shutdown = True
        self._workers_status = [False] * self._num_workers
        self._finalizer()


class _WorkerPool:
    """The worker processes and their queues; ``shutdown`` needs nothing else (see the finalizer)."""

    def __init__(self, context, num_workers, worker_args):
        kind, dataset, auto_collation, collate_fn, drop_last, base_seed, init_fn = worker_args
        self.workers = []
        self.index_queues = []
        self.result_queue = context.Queue()
        self.done_event = context.Event()
        self.closed = False
        try:
            for worker_id in range(num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()   # never block exit on unread indices
                w = context.Process(
                    target=_worker.worker_loop,
                    args=(kind, dataset, index_queue, self.result_queue, self.done_event, auto_collation,
                          collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers),
                    daemon=True)
                w.start()
                self.index_queues.append(index_queue)
                self.workers.append(w)
        except BaseException:
            self.shutdown()
            raise

    def shutdown(self):
        if self.closed:
            return
        self.closed = True
        try:
            self.done_event.set()
            for q in self.index_queues:
                q.put(None)
            for w in self.workers:
                w.join(timeout=_worker.STATUS_CHECK_INTERVAL)
        finally:
            for w in self.workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_worker.STATUS_CHECK_INTERVAL)
            for q in self.index_queues:
                q.close()
            self.result_queue.cancel_join_thread()
            self.result_queue.close()
