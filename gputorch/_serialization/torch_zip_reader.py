"""Reading PyTorch's zip checkpoint format (see :mod:`.torch_zip` for the layout).

Each storage named by a persistent id ``("storage", storage_type, key, location, numel)`` is read
once from ``<archive>/data/<key>`` and placed by ``map_location``; tensors rebuilt over it view it.
"""
import io
import pickle
import struct
import zipfile

import numpy as np

from . import placement, rebuild
from .torch_unpickler import unpickle


class StorageLoader:
    """``persistent_load`` for storage ids: reads each storage once (``read(key, dtype, numel)``
    returns its host array), places it, and hands out the same :class:`LoadedStorage` for its key."""

    def __init__(self, read, place):
        self.read = read
        self.place = place
        self.loaded = {}
        self.locations = {}     # key -> the location the file recorded

    def __call__(self, pid):
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id in checkpoint: {pid!r}")
        storage_type, key, location, numel = pid[1:5]
        if len(pid) == 6 and pid[5] is not None:
            raise pickle.UnpicklingError("this legacy checkpoint uses storage views, which gputorch cannot read")
        if isinstance(storage_type, rebuild.Unsupported):
            storage_type()
        if not isinstance(storage_type, rebuild.StorageType):
            raise pickle.UnpicklingError(f"unsupported storage type in checkpoint: {storage_type!r}")
        if not (isinstance(key, str) and isinstance(location, str) and type(numel) is int and numel >= 0):
            raise pickle.UnpicklingError(f"malformed storage record in checkpoint: {pid!r}")
        storage = self.loaded.get(key)
        if storage is None:
            array = self.read(key, storage_type.dtype, numel)
            storage = rebuild.LoadedStorage(placement.storage_tensor(self.place, array, location))
            self.loaded[key] = storage
            self.locations[key] = location
        elif storage.tensor.dtype is not storage_type.dtype:
            raise pickle.UnpicklingError(f"storage {key} is used with two dtypes in this checkpoint")
        return storage


def host_array(dtype, numel, little_endian):
    """An empty host array to read ``numel`` elements stored with the given byte order into."""
    np_dtype = np.dtype(dtype.np).newbyteorder("<" if little_endian else ">")
    return np.empty(numel, dtype=np_dtype)


def native(array):
    """``array`` in native byte order."""
    if array.dtype.isnative:
        return array.view(array.dtype.newbyteorder("="))
    return array.astype(array.dtype.newbyteorder("="))


def read_archive(zf, prefix, place, weights_only, pickle_module, kwargs, mmap_path=None):
    """The object of a PyTorch zip archive whose entries are under ``prefix/``. With ``mmap_path``
    (the archive's file), storages are memory-mapped from it copy-on-write instead of read."""
    names = set(zf.namelist())
    little = True
    if f"{prefix}/byteorder" in names:
        order = zf.read(f"{prefix}/byteorder").strip()
        if order not in (b"little", b"big"):
            raise RuntimeError(f"unknown byteorder {order!r} in checkpoint")
        little = order == b"little"

    def read(key, dtype, numel):
        name = f"{prefix}/data/{key}"
        if name not in names:
            raise RuntimeError(f"checkpoint has no record {name} for storage {key}")
        info = zf.getinfo(name)
        if mmap_path is not None:
            return native(_mapped(zf, info, mmap_path, host_array(dtype, 0, little).dtype, numel))
        array = host_array(dtype, numel, little)
        if info.file_size < array.nbytes:
            raise RuntimeError(f"checkpoint is truncated: storage {key} needs {array.nbytes} bytes, the "
                               f"file has {info.file_size}")
        with zf.open(info) as entry:
            if array.size and entry.readinto(memoryview(array.view(np.uint8))) != array.nbytes:
                raise RuntimeError(f"checkpoint is truncated: storage {key} has too few bytes")
        return native(array)

    with zf.open(f"{prefix}/data.pkl") as data:
        pickled = io.BytesIO(data.read())
    return unpickle(pickled, weights_only, pickle_module, kwargs, persistent_load=StorageLoader(read, place))


def _mapped(zf, info, path, np_dtype, numel):
    """The elements of a stored (uncompressed) entry, memory-mapped copy-on-write from ``path``: writes
    change the loaded tensors, never the file."""
    if info.compress_type != zipfile.ZIP_STORED:
        raise RuntimeError(f"cannot memory-map {info.filename}: the entry is compressed")
    nbytes = numel * np_dtype.itemsize
    if info.file_size < nbytes:
        raise RuntimeError(f"checkpoint is truncated: {info.filename} needs {nbytes} bytes, the file has "
                           f"{info.file_size}")
    zf.fp.seek(info.header_offset)
    header = zf.fp.read(30)
    if len(header) != 30 or header[:4] != b"PK\x03\x04":
        raise RuntimeError(f"bad local header for {info.filename} in checkpoint")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    start = info.header_offset + 30 + name_len + extra_len
    if numel == 0:
        return np.empty(0, dtype=np_dtype)
    return np.memmap(path, dtype=np_dtype, mode="c", offset=start, shape=(numel,)).view(np.ndarray)
