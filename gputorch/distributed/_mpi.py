"""The MPI engine under ``gputorch.distributed``: mpi4py, imported on first use.

mpi4py initialises MPI when it is imported, so nothing imports this module until a process
group is made. A missing mpi4py (or MPI library) is an ImportError that names the extra.
"""
import numpy as np

_MPI = None


def mpi():
    """The ``mpi4py.MPI`` module (ImportError naming the ``distributed`` extra when it is missing)."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as exc:
            raise ImportError(
                "gputorch.distributed needs mpi4py and an MPI library: install the 'distributed' extra "
                "(pip install 'gputorch[distributed]', which brings mpi4py and MPICH)") from exc
        _MPI = MPI
    return _MPI


def available():
    """Whether mpi4py can be imported (without initialising MPI when it cannot)."""
    if _MPI is not None:
        return True
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def mpi_op(reduce_op):
    """The MPI reduction for a :class:`ReduceOp` (AVG is a SUM divided afterwards)."""
    from .reduce_op import RedOpType
    MPI = mpi()
    table = {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
             RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
             RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}
    return table[reduce_op]


def wire_dtype(dtype, reduce_op=None):
    """The NumPy dtype a host buffer of ``dtype`` travels in: MPI has no reductions on ``bool``, so
    booleans reduce as uint8 (SUM and MAX as logical or, PRODUCT and MIN as logical and)."""
    if dtype == np.bool_ and reduce_op is not None:
        return np.dtype(np.uint8)
    return dtype


def bool_op(reduce_op):
    """The uint8 MPI reduction standing in for ``reduce_op`` on booleans."""
    from .reduce_op import RedOpType
    MPI = mpi()
    return MPI.MAX if reduce_op in (RedOpType.SUM, RedOpType.MAX, RedOpType.BOR) else MPI.MIN
