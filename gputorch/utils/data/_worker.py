"""What runs inside a DataLoader worker process, and the messages it exchanges with the main one.

Protocol (one index queue per worker, one result queue shared by all workers):

- main -> worker: ``(task_idx, index)`` to fetch a batch; :class:`ResumeIteration` to start a
  new epoch (persistent workers); ``None`` to exit.
- worker -> main: ``(task_idx, payload)`` where ``payload`` is the batch pickled in the worker
  (so that a batch that cannot be pickled is reported as an error instead of being lost), an
  :class:`ExceptionWrapper` when fetching raised, :class:`IterableDatasetStopIteration` when the
  worker's copy of an iterable dataset is exhausted, or the ``ResumeIteration`` acknowledgement.

Everything passed to a worker is a top-level, picklable object, so the 'spawn' and
'forkserver' start methods work as well as 'fork'.
"""
import os
import pickle
import queue
import random
import sys
import traceback

from ._fetch import DatasetKind, make_fetcher

__all__ = ["get_worker_info", "WorkerInfo"]

# Seconds between checks that the other side is still alive while waiting on a queue.
STATUS_CHECK_INTERVAL = 2.0

_worker_info = None


class WorkerInfo:
    """Read-only facts about the current worker: ``id``, ``num_workers``, ``seed``, ``dataset``
    (the worker's own copy of the dataset)."""

    _frozen = False

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)
        self._keys = tuple(kwargs)
        self._frozen = True

    def __setattr__(self, key, value):
        if self._frozen:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._keys)
        return f"{type(self).__name__}({fields})"


def get_worker_info():
    """In a DataLoader worker process: its :class:`WorkerInfo`; in the main process: None.

    Use it in an ``IterableDataset.__iter__`` or a ``worker_init_fn`` to give each worker its
    share of the data (``info.id`` out of ``info.num_workers``); ``info.seed`` is the seed of
    this worker's generators (``base_seed + id``).
    """
    return _worker_info


class ResumeIteration:
    """Tells a persistent worker to start a new epoch (and is sent back as acknowledgement)."""


class IterableDatasetStopIteration:
    """Sent by a worker whose copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class KeyErrorMessage(str):
    """A KeyError's message shown as written (KeyError prints the repr of its argument)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its formatted traceback."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __getstate__(self):
        state = dict(self.__dict__)
        try:
            pickle.dumps(self.exc_type)
        except Exception:   # e.g. an exception class defined inside a function
            state["exc_type"] = RuntimeError
        return state

    def reraise(self):
        """Raise the exception again, its message naming where it happened and the original traceback."""
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            # The exception class cannot be rebuilt from a message alone.
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            exc = None   # no frame <-> traceback cycle: the iterator (and its workers) can be freed at once


def _seed_everything(seed, base_seed, worker_id):
    """Seed Python's, gputorch's and NumPy's global generators for this worker."""
    import numpy as np

    from ... import random as _random
    random.seed(seed)
    _random.manual_seed(seed)
    np_seed = np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFFFFFFFFFF]).generate_state(4)
    np.random.seed(np_seed)


def _parent_alive(parent_pid):
    return os.getppid() == parent_pid


def worker_loop(dataset_kind, dataset, index_queue, result_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of a worker process (see the module docstring for the protocol)."""
    # Exit if our parent goes away (the main process, or the forkserver that dies with it).
    parent_pid = os.getppid()
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_everything(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)

        iteration_ended = False
        while _parent_alive(parent_pid):
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, ResumeIteration):
                result_queue.put((task, None))
                iteration_ended = False
                if init_error is None:      # a new pass over the dataset
                    try:
                        fetcher = make_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                    except Exception:
                        init_error = ExceptionWrapper(where=where)
                continue
            if task is None:
                break
            if done_event.is_set() or iteration_ended:
                continue   # draining: the main process is shutting down or this worker's stream ended
            task_idx, index = task
            if init_error is not None:
                payload, init_error = init_error, None
            else:
                try:
                    payload = pickle.dumps(fetcher.fetch(index), pickle.HIGHEST_PROTOCOL)
                except StopIteration:
                    if dataset_kind != DatasetKind.Iterable:
                        payload = ExceptionWrapper(where=where)
                    else:
                        payload = IterableDatasetStopIteration(worker_id)
                        iteration_ended = True
                except Exception:
                    payload = ExceptionWrapper(where=where)
            result_queue.put((task_idx, payload))
            del payload, task, index
    except KeyboardInterrupt:
        pass   # the main process handles Ctrl-C and shuts the workers down
    if done_event.is_set():
        # Do not wait for the result queue to be flushed: nobody is reading it any more.
        result_queue.cancel_join_thread()
        result_queue.close()
