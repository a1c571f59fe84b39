"""``Work``: a communication in flight, and the ``Future`` a DDP communication hook returns.

MPI advances non-blocking operations only inside MPI calls, so waiting is a loop of ``Testall``
that gives up at the group's timeout with an error naming the collective, its number in the group
and the ranks that did not join it. The loop spins, as MPI's own blocking calls do (a collective
of several rounds needs every rank to test promptly: sleeping between tests was measured to cost
milliseconds per bucket), yielding the core to any other runnable thread after the first
milliseconds.
"""
import os
import time

from ._arrivals import ANNOUNCE_AFTER
from ._mpi import mpi
from .errors import DistBackendError

__all__ = ["Work", "Future", "COMM_HOOKS"]

# ``hook(work, "start" | "end")`` when an operation is posted and when it completes (the memory
# profiler marks communication on its timeline this way; empty, it costs one check per operation).
COMM_HOOKS = []

_SPIN_SECONDS = 2e-3
_CLOCK_EVERY = 64             # tests between two looks at the clock


class Work:
    """One collective or point-to-point operation posted to the engine.

    ``wait()`` blocks until it is done (raising :class:`DistBackendError` after the group's timeout)
    and returns True; ``is_completed()`` tests without blocking; ``result()`` gives the output
    tensors; ``get_future()`` a :class:`Future` of them.

    Args:
        group: the ProcessGroup it belongs to.
        name (str): the collective's name, for errors ("all_reduce").
        seq (int | None): its number among the group's collectives (None for send/recv).
        requests (list): MPI requests to complete.
        finish (callable | None): runs once when the requests are done (copies staged results back).
        outputs (list): the tensors ``result()`` returns.
        peer (int | None): for send/recv, the group rank on the other side.
        poll (callable | None): ``poll() -> bool`` in place of testing MPI requests (an NCCL
            operation: whether the event recorded after it on its stream is done).
        on_timeout (callable | None): runs before the timeout error is raised (aborts an NCCL
            communicator, whose stream would otherwise never finish).
    """

    def __init__(self, group, name, seq, requests, finish=None, outputs=(), peer=None, poll=None, on_timeout=None):
        self.group = group
        self.name = name
        self.seq = seq
        self._requests = list(requests)
        self._finish = finish
        self._outputs = list(outputs)
        self._peer = peer
        self._done = False
        self._status = None            # an MPI Status to fill (a receive from any source)
        self._poll = poll
        self._on_timeout = on_timeout
        self._started = time.monotonic()
        group._pending.append(self)
        if COMM_HOOKS:
            for hook in COMM_HOOKS:
                hook(self, "start")

    def _complete(self):
        self._done = True
        self._requests = []
        try:
            self.group._pending.remove(self)
        except ValueError:
            pass
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()
        if COMM_HOOKS:
            for hook in COMM_HOOKS:
                hook(self, "end")

    def _test(self):
        if self._poll is not None:
            return self._poll()
        if self._status is not None:
            return self._requests[0].Test(self._status)
        return mpi().Request.Testall(self._requests)

    def is_completed(self):
        """True once the operation has finished (advances MPI's progress; never blocks)."""
        if not self._done and self._test():
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def wait(self, timeout=None):
        """Block until done; ``timeout`` (seconds or timedelta) overrides the group's."""
        if self._done:
            return True
        limit = self.group.timeout_seconds if timeout is None else _seconds(timeout)
        deadline = self._started + limit
        test = self._test
        spin_until = time.monotonic() + _SPIN_SECONDS
        announce_at = self._started + min(ANNOUNCE_AFTER, limit / 4) if self.seq is not None else float("inf")
        tests = 0
        while not test():
            tests += 1
            if tests % _CLOCK_EVERY:
                continue
            now = time.monotonic()
            if now > announce_at:           # a long wait: tell the peers where this rank waits
                self.group.arrivals.announce(self.seq, self.name.split(" ")[0])
                announce_at = float("inf")
            if now > deadline:
                if self._on_timeout is not None:
                    self._on_timeout()
                raise self._timeout_error(limit)
            if now > spin_until:
                os.sched_yield()
        self._complete()
        return True

    def _timeout_error(self, limit):
        group = self.group
        if self.seq is None:
            peer = "any rank" if self._peer is None else f"rank {group.global_rank(self._peer)}"
            what = f"{self.name} with {peer}"
            who = f"{peer} did not take part"
        else:
            what = f"{self.name} (collective #{self.seq} of {group.describe()})"
            missing = [group.global_rank(r) for r in group.arrivals.missing(self.seq)]
            base = self.name.split(" ")[0]
            elsewhere = {group.global_rank(r): n for r, n in group.arrivals.elsewhere(self.seq, base).items()}
            parts = []
            if missing:
                parts.append(f"rank(s) {missing} did not join it")
            for r, other in sorted(elsewhere.items()):
                parts.append(f"rank {r} called {other} as collective #{self.seq} instead")
            who = "; ".join(parts) or "every rank joined it, but it did not finish (a rank may have failed inside it)"
        return DistBackendError(
            f"gputorch.distributed: {what} did not complete within the timeout of {limit:g} s on rank "
            f"{group.global_rank(group.rank)}: {who}")

    @property
    def nbytes(self):
        """The bytes of the output tensors (what the operation delivers here)."""
        return sum(t.numel() * t.element_size() for t in self._outputs)

    def result(self):
        """The output tensors (waits first)."""
        self.wait()
        return list(self._outputs)

    def get_future(self):
        """A :class:`Future` completed with ``result()`` when this work is waited on."""
        return Future(self, lambda _: self.result())

    def exception(self):
        return None

    def synchronize(self):
        self.wait()


class Future:
    """A value produced by a :class:`Work` (``torch.futures.Future`` as DDP communication hooks use it).

    ``then(fn)`` chains ``fn(future)`` into a new Future; ``wait()`` waits for the work and returns the
    value; ``value()`` returns it once done.
    """

    def __init__(self, work=None, produce=None, value=None):
        self._work = work
        self._produce = produce
        self._value = value
        self._done = produce is None

    def wait(self):
        if not self._done:
            self._value = self._produce(self)
            self._done = True
            self._work = None
        return self._value

    def done(self):
        return self._done or self._work is None or self._work.is_completed()  # then() runs on wait()

    def value(self):
        if not self._done:
            raise RuntimeError("Future.value() called before the future completed: call wait() first")
        return self._value

    def set_result(self, value):
        self._value = value
        self._done = True

    def then(self, callback):
        """A Future of ``callback(self)``, run when the new future is waited on."""
        return Future(self._work, lambda _: (self.wait(), callback(self))[1])

    @property
    def work(self):
        return self._work


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
