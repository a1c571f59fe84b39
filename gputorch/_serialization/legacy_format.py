"""PyTorch's legacy (pre-1.6, ``_use_new_zipfile_serialization=False``) checkpoints, read and written.

The file is a sequence of pickles: the magic number, the protocol version (1001), a dict of system
info (``little_endian``), the object (storages as persistent ids ``("storage", storage_type, key,
location, numel, view_metadata)``), the sorted list of storage keys; then, for each key in that
order, the element count (8 bytes) and the elements.

Storages come after the object, so the object is unpickled once over empty host storages; the
elements are then read into them. When ``map_location`` (or a non-CPU location) moves storages, the
object is unpickled a second time over the placed storages.
"""
import io
import pickle
import sys

import numpy as np

from . import placement
from .torch_pickler import TorchPickler
from .torch_unpickler import WeightsOnlyUnpickler, unpickle
from .torch_zip_reader import StorageLoader

MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
_MAGIC_BYTES = MAGIC_NUMBER.to_bytes(10, "little")


def is_legacy(stream):
    """Whether ``stream`` starts with PyTorch's legacy magic number (the position is kept)."""
    start = stream.tell()
    head = stream.read(16)
    stream.seek(start)
    return b"\x8a\x0a" + _MAGIC_BYTES in head     # LONG1 of the magic number, after any PROTO


def read_legacy(stream, map_location, place, weights_only, pickle_module, kwargs):
    """The object of a legacy checkpoint (``stream`` is positioned at its start)."""
    if not stream.seekable():
        stream = io.BytesIO(stream.read())

    def header():
        return WeightsOnlyUnpickler(stream, **kwargs).load()

    if header() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = header()
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    sys_info = header()
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True)

    start = stream.tell()
    arrays = {}

    def read_empty(key, dtype, numel):
        arrays[key] = np.empty(numel, dtype=dtype.np)
        return arrays[key]

    first = StorageLoader(read_empty, placement.placement("cpu"))
    obj = unpickle(stream, weights_only, pickle_module, kwargs, persistent_load=first)
    keys = header()
    if not isinstance(keys, list):
        raise RuntimeError("corrupt legacy checkpoint: no storage key list after the object")
    for key in keys:
        count = np.frombuffer(stream.read(8), dtype="<i8" if little else ">i8")
        array = arrays.get(key)
        if array is None or count.size != 1 or int(count[0]) != array.size:
            raise RuntimeError(f"corrupt legacy checkpoint: storage {key!r} does not match its record")
        if array.size and stream.readinto(memoryview(array.view(np.uint8))) != array.nbytes:
            raise RuntimeError(f"legacy checkpoint is truncated: storage {key!r} has too few bytes")
        if little != (sys.byteorder == "little"):
            array.byteswap(inplace=True)
    if map_location is None and all(loc == "cpu" for loc in first.locations.values()):
        return obj        # the storages were read in place, under the tensors already built
    stream.seek(start)
    second = StorageLoader(lambda key, dtype, numel: arrays[key], place)
    return unpickle(stream, weights_only, pickle_module, kwargs, persistent_load=second)


def write_legacy(obj, stream, protocol=2):
    """Write ``obj`` in the legacy format (what ``torch.save(..., _use_new_zipfile_serialization=False)``
    writes), little-endian."""
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION,
                   {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                    "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(header, stream, protocol=protocol)
    data = io.BytesIO()
    pickler = TorchPickler(data, protocol, legacy=True)
    pickler.dump(obj)
    stream.write(data.getbuffer())
    records = sorted(pickler.storages, key=lambda record: record.key)
    pickle.dump([record.key for record in records], stream, protocol=protocol)
    for record in records:
        stream.write(np.array([record.numel], dtype="<i8").tobytes())
        stream.write(record.host_bytes())
