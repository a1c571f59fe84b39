"""Debug levels (``TORCH_DISTRIBUTED_DEBUG`` or ``GPUTORCH_DISTRIBUTED_DEBUG`` = OFF | INFO | DETAIL).

At DETAIL every collective first exchanges a fingerprint (its name, reduction, root, and each
tensor's shape and dtype) among the group's ranks and raises a RuntimeError naming the ranks whose
call differs, instead of letting mismatched buffers corrupt each other or hang.
"""
import enum
import os

import numpy as np

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]

_FINGERPRINT_BYTES = 256


class DebugLevel(enum.IntEnum):
    OFF = 0
    INFO = 1
    DETAIL = 2


_LEVEL = [DebugLevel.OFF]


def set_debug_level(level):
    _LEVEL[0] = DebugLevel(level)


def get_debug_level():
    return _LEVEL[0]


def set_debug_level_from_env():
    value = os.environ.get("GPUTORCH_DISTRIBUTED_DEBUG") or os.environ.get("TORCH_DISTRIBUTED_DEBUG") or "OFF"
    try:
        _LEVEL[0] = DebugLevel[value.upper()]
    except KeyError:
        raise ValueError(f"TORCH_DISTRIBUTED_DEBUG={value!r}: expected OFF, INFO or DETAIL") from None


def describe_tensors(tensors):
    return ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in tensors)


def check_consistent(pg, seq, name, fingerprint):
    """At DETAIL level: every rank of ``pg`` must call collective ``seq`` with the same fingerprint."""
    if _LEVEL[0] < DebugLevel.DETAIL:
        return
    from .work import Work
    text = fingerprint.encode()[:_FINGERPRINT_BYTES]
    mine = np.zeros(_FINGERPRINT_BYTES, dtype=np.uint8)
    mine[:len(text)] = np.frombuffer(text, dtype=np.uint8)
    every = np.empty((pg.size, _FINGERPRINT_BYTES), dtype=np.uint8)
    Work(pg, f"{name} (DETAIL check)", seq, [pg.comm.Iallgather(mine, every)]).wait()
    decoded = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in every]
    if any(d != decoded[0] for d in decoded):
        lines = "\n".join(f"  rank {pg.global_rank(r)}: {d}" for r, d in enumerate(decoded))
        raise RuntimeError(
            f"Detected mismatch between collectives on ranks (collective #{seq} of {pg.describe()}):\n{lines}")
