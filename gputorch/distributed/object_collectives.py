"""Collectives of picklable Python objects, built on the tensor collectives (so they share their
timeouts and stall errors): each object travels as its pickle in a uint8 tensor, after the sizes.

As in PyTorch, unpickling runs code chosen by the sender: use these only between trusted processes.
"""
import pickle

import numpy as np

from .collectives import all_gather, broadcast, gather, root_rank, scatter
from .process_group import resolve

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]


def _tensor(array):
    from .._tensor import Tensor
    from .._dtype import from_numpy_dtype
    from .._device import device
    return Tensor._make(array, device("cpu"), from_numpy_dtype(array.dtype))


def _pickled(obj):
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8)


def _unpickled(array):
    return pickle.loads(array.tobytes())


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s entries on every rank by those of global rank ``src`` (same length
    on every rank)."""
    pg = resolve(group)
    if pg is None:
        return
    root = root_rank(pg, src, group_src, "src")
    if pg.rank == root:
        payloads = [_pickled(o) for o in object_list]
        sizes = np.array([len(p) for p in payloads], dtype=np.int64)
    else:
        sizes = np.zeros(len(object_list), dtype=np.int64)
    sizes_t = _tensor(sizes)
    broadcast(sizes_t, group=group, group_src=root)
    total = int(sizes.sum())
    data = np.concatenate(payloads) if pg.rank == root and total else np.zeros(total, dtype=np.uint8)
    broadcast(_tensor(data), group=group, group_src=root)
    if pg.rank != root:
        start = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _unpickled(data[start:start + n])
            start += n


def _exchange_sizes(pg, group, payload):
    mine = _tensor(np.array([len(payload)], dtype=np.int64))
    every = [_tensor(np.zeros(1, dtype=np.int64)) for _ in range(pg.size)]
    all_gather(every, mine, group=group)
    return [int(t._data[0]) for t in every]


def _padded(payload, size):
    out = np.zeros(size, dtype=np.uint8)
    out[:len(payload)] = payload
    return out


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` = rank ``r``'s ``obj``, on every rank (``object_list`` has the group's size)."""
    pg = resolve(group)
    if pg is None:
        return
    if len(object_list) != pg.size:
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries; the group has "
                         f"{pg.size} ranks")
    payload = _pickled(obj)
    sizes = _exchange_sizes(pg, group, payload)
    width = max(sizes)
    every = [_tensor(np.zeros(width, dtype=np.uint8)) for _ in range(pg.size)]
    all_gather(every, _tensor(_padded(payload, width)), group=group)
    for r, (t, n) in enumerate(zip(every, sizes)):
        object_list[r] = _unpickled(t._data[:n])


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's ``obj`` into ``object_gather_list`` of global rank ``dst``."""
    pg = resolve(group)
    if pg is None:
        return
    root = root_rank(pg, dst, group_dst, "dst")
    payload = _pickled(obj)
    sizes = _exchange_sizes(pg, group, payload)
    width = max(sizes)
    every = [_tensor(np.zeros(width, dtype=np.uint8)) for _ in range(pg.size)] if pg.rank == root else None
    gather(_tensor(_padded(payload, width)), every, group=group, group_dst=root)
    if pg.rank == root:
        if object_gather_list is None or len(object_gather_list) != pg.size:
            raise ValueError(f"gather_object: the destination needs an object_gather_list of {pg.size} entries")
        for r, (t, n) in enumerate(zip(every, sizes)):
            object_gather_list[r] = _unpickled(t._data[:n])


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """``scatter_object_output_list[0]`` of rank ``r`` = ``scatter_object_input_list[r]`` of global rank ``src``."""
    pg = resolve(group)
    if pg is None:
        return
    root = root_rank(pg, src, group_src, "src")
    holder = [None]
    if pg.rank == root:
        payloads = [_pickled(o) for o in scatter_object_input_list]
        holder = [max(len(p) for p in payloads)]
    broadcast_object_list(holder, group=group, group_src=root)
    width = holder[0]
    out = _tensor(np.zeros(width + 8, dtype=np.uint8))
    inputs = None
    if pg.rank == root:
        inputs = [_tensor(_padded(np.concatenate([np.array([len(p)], np.int64).view(np.uint8), p]), width + 8))
                  for p in payloads]
    scatter(out, inputs, group=group, group_src=root)
    n = int(out._data[:8].view(np.int64)[0])
    scatter_object_output_list[0] = _unpickled(out._data[8:8 + n])
