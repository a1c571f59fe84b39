"""Collation: turning a list of samples into a batch.

:func:`default_collate` follows PyTorch's rules, recursively:

- tensors are stacked along a new first dimension;
- NumPy arrays become tensors and are stacked; NumPy scalars become a 1-D tensor of their dtype;
- Python floats become a float64 tensor, ints an int64 tensor, bools a bool tensor;
- strings and bytes stay a list;
- mappings are collated key by key (keeping the mapping type where it can be rebuilt);
- namedtuples field by field (same namedtuple type);
- other sequences are transposed: a list of samples ``[(a0, b0), (a1, b1)]`` becomes
  ``[collate([a0, a1]), collate([b0, b1])]`` (a list for tuples, the same type for lists).

:func:`collate` is the engine: it dispatches on the first element's type through a
``{type: fn(batch, *, collate_fn_map)}`` table, so custom collate functions can extend
``default_collate_fn_map`` for their own types. :func:`default_convert` is what a DataLoader
without batching applies to each sample (arrays to tensors, containers recursed into).
"""
import collections.abc
import copy
import re

import numpy as np

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_NON_NUMERIC = re.compile(r"[SaUO]")   # NumPy dtype kinds that cannot become tensors


def _tensor_cls():
    from ..._tensor import Tensor
    return Tensor


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    """Convert one sample: NumPy arrays and scalars to tensors, recursing through containers."""
    from ...ops.creation import as_tensor
    Tensor = _tensor_cls()
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and _NON_NUMERIC.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(value) for key, value in data.items()}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(converted)
                return clone
            return type(data)(converted)
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                clone[:] = converted
                return clone
            return type(data)(converted)
        except TypeError:
            return converted
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples) using ``collate_fn_map`` for leaf types and
    recursing through mappings, namedtuples and sequences."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(elem_type)
        if fn is None:
            for leaf_type, candidate in collate_fn_map.items():
                if isinstance(elem, leaf_type):
                    fn = candidate
                    break
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(collated)
                return clone
            return elem_type(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return elem_type(*(collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(column, collate_fn_map=collate_fn_map) for column in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                clone[:] = columns
                return clone
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(_ERROR.format(elem_type))


# -- leaf collate functions ------------------------------------------------------------------------
def collate_tensor_fn(batch, *, collate_fn_map=None):
    from ...ops.shape import stack
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    from ...ops.creation import as_tensor
    elem = batch[0]
    if _NON_NUMERIC.search(elem.dtype.str):
        raise TypeError(_ERROR.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    from ...ops.creation import as_tensor
    return as_tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    from ..._dtype import float64
    from ...ops.creation import tensor
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    from ...ops.creation import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


def _build_default_map():
    Tensor = _tensor_cls()
    return {
        Tensor: collate_tensor_fn,
        np.ndarray: collate_numpy_array_fn,
        np.bool_: collate_numpy_scalar_fn,
        np.number: collate_numpy_scalar_fn,
        float: collate_float_fn,
        int: collate_int_fn,
        str: collate_str_fn,
        bytes: collate_str_fn,
    }


default_collate_fn_map = _build_default_map()


def default_collate(batch):
    """Collate a list of samples into a batch with PyTorch's rules (see the module docstring).

    >>> default_collate([(0, 1.5), (1, 2.5)])
    [tensor([0, 1]), tensor([1.5000, 2.5000], dtype=gputorch.float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
