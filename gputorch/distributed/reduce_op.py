"""``ReduceOp``: how a collective combines the tensors of the ranks."""
import enum

__all__ = ["ReduceOp", "RedOpType"]


class RedOpType(enum.IntEnum):
    """The reductions (PyTorch's numbering)."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ReduceOp:
    """``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX`` and the bitwise ``BAND``, ``BOR``,
    ``BXOR`` (integer and boolean tensors only). ``AVG`` divides the sum by the group's size."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


def as_red_op(op):
    """``op`` as a :class:`RedOpType` (TypeError for anything else)."""
    if isinstance(op, RedOpType):
        return op
    if isinstance(op, str) and op.upper() in RedOpType.__members__:
        return RedOpType[op.upper()]
    raise TypeError(f"expected a gputorch.distributed.ReduceOp, got {op!r}")
