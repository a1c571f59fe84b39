"""``gputorch.multiprocessing``: Python's ``multiprocessing``, plus PyTorch's ``spawn``.

Tensors are pickled (copied) between processes: gputorch has no shared-memory tensors, so
``Tensor.share_memory_`` and Hogwild-style training are not available. For data-parallel training,
start the processes with ``python -m gputorch.distributed.run`` (MPI is gputorch's rendezvous, so
processes made by ``spawn`` cannot form a process group).
"""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

__all__ = list(getattr(_mp, "__all__", [])) + ["spawn", "start_processes", "ProcessRaisedException",
                                                "ProcessExitedException", "get_all_sharing_strategies",
                                                "get_sharing_strategy", "set_sharing_strategy"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code."""

    def __init__(self, msg, error_index, pid, exit_code):
        super().__init__(msg, error_index, pid)
        self.exit_code = exit_code


def _wrap(fn, i, args, errors):
    import traceback
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put((i, traceback.format_exc()))
        raise SystemExit(1)


class ProcessContext:
    """The processes started by :func:`start_processes`; ``join()`` waits for them."""

    def __init__(self, processes, errors):
        self.processes = processes
        self.errors = errors

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for every process; raise if one failed (the others are terminated). True when all ended."""
        for p in self.processes:
            p.join(timeout)
        failed = [(i, p) for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
        if failed:
            for p in self.processes:
                if p.is_alive():
                    p.terminate()
            i, p = failed[0]
            if not self.errors.empty():
                index, trace = self.errors.get()
                raise ProcessRaisedException(f"\n\n-- Process {index} terminated with the following error:\n{trace}",
                                             index, self.processes[index].pid)
            raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid, p.exitcode)
        return all(p.exitcode is not None for p in self.processes)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a new process."""
    ctx = _mp.get_context(start_method)
    errors = ctx.SimpleQueue()
    processes = []
    for i in range(nprocs):
        p = ctx.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, errors)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the "spawn" start method, as PyTorch's ``multiprocessing.spawn``."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)


_SHARING = ["file_system"]


def get_all_sharing_strategies():
    return {"file_system"}


def get_sharing_strategy():
    return _SHARING[0]


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unknown sharing strategy {new_strategy!r}")
    _SHARING[0] = new_strategy
