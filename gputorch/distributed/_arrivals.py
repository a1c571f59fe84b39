"""Which ranks have joined a collective: the stall inspector behind timeout errors.

Every rank of a group numbers its collectives 1, 2, ... in call order (all ranks call them in the
same order). A rank that has waited for collective ``seq`` longer than ``ANNOUNCE_AFTER`` seconds
(or a quarter of the timeout, if that is shorter)
sends ``seq`` and the collective's name to each peer as a small non-blocking message on a
communicator of its own (a collective that completes sooner costs nothing: the fast path sends no
message). When a collective times out, the peers whose last announced number is below ``seq``
are the ranks that did not join it (every rank that did is waiting too, so it has announced), and
a peer that announced ``seq`` under another name called a different collective — both named in
the error instead of hanging silently (as Horovod's stall inspector does).
"""
import numpy as np

from ._mpi import mpi

_TAG = 0x6770
ANNOUNCE_AFTER = 0.25      # seconds of waiting before a rank tells its peers where it waits
_NAMES = ["?", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
          "gather", "scatter", "all_to_all_single", "all_to_all", "barrier", "monitored_barrier"]


class ArrivalNotices:
    """Announce and collect the collective numbers of a group's ranks over ``comm`` (duplicated)."""

    def __init__(self, comm):
        self.comm = comm.Dup()
        self.last_seq = [0] * comm.Get_size()
        self.last_name = ["?"] * comm.Get_size()
        self._sends = []
        self._incoming = np.zeros(2, dtype=np.int64)
        self._status = mpi().Status()

    def announce(self, seq, name):
        """Tell every peer that this rank has entered collective ``seq``, called ``name``."""
        MPI = mpi()
        me = self.comm.Get_rank()
        self.last_seq[me] = seq
        self.last_name[me] = name
        code = _NAMES.index(name) if name in _NAMES else 0
        if self._sends and MPI.Request.Testall([r for r, _ in self._sends]):
            self._sends.clear()
        for peer in range(self.comm.Get_size()):
            if peer != me:
                buf = np.array([seq, code], dtype=np.int64)
                self._sends.append((self.comm.Isend(buf, dest=peer, tag=_TAG), buf))
        self.drain()

    def drain(self):
        """Receive the announcements that have arrived."""
        MPI = mpi()
        status = self._status
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=_TAG, status=status):
            src = status.Get_source()
            self.comm.Recv(self._incoming, source=src, tag=_TAG)
            if self._incoming[0] > self.last_seq[src]:
                self.last_seq[src] = int(self._incoming[0])
                self.last_name[src] = _NAMES[int(self._incoming[1])]

    def missing(self, seq):
        """The other group ranks that have not announced collective ``seq``."""
        self.drain()
        me = self.comm.Get_rank()
        return [r for r, last in enumerate(self.last_seq) if last < seq and r != me]

    def elsewhere(self, seq, name):
        """``{rank: other name}`` for the group ranks that announced collective ``seq`` as another one."""
        self.drain()
        return {r: n for r, (last, n) in enumerate(zip(self.last_seq, self.last_name))
                if last == seq and n != name and n != "?"}

    def free(self):
        for req, _ in self._sends:
            if not req.Test():
                req.Cancel()
        self._sends.clear()
        self.comm.Free()
