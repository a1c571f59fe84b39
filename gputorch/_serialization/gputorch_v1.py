"""The checkpoint format of gputorch 0.1.0, still read (and written only by :func:`write_v1`, for tests).

A zip archive ``archive/`` with ``format`` (``gputorch``), ``version`` (``1``), ``data.pkl`` (the
object; every Tensor a persistent id ``("tensor", tensor key, storage key, dtype name, shape,
device, requires_grad)``) and ``data/<storage key>`` (C-ordered little-endian elements). Tensors with
one storage key alias the same memory.
"""
import io
import pickle
import zipfile

from .. import _dtype
from .._tensor import Tensor
from . import placement
from .torch_unpickler import unpickle
from .torch_zip_reader import host_array, native

FORMAT_NAME = b"gputorch"
FORMAT_VERSION = b"1"


def is_v1(zf, prefix):
    """Whether the archive was written in gputorch 0.1.0's format (it has a ``format`` record)."""
    return f"{prefix}/format" in zf.namelist()


def read_v1(zf, prefix, place, weights_only, pickle_module, kwargs):
    if zf.read(f"{prefix}/format") != FORMAT_NAME:
        raise RuntimeError("this zip archive is neither a PyTorch nor a gputorch checkpoint")
    version = zf.read(f"{prefix}/version")
    if version != FORMAT_VERSION:
        raise RuntimeError(f"unsupported gputorch checkpoint version {version.decode(errors='replace')} "
                           f"(this gputorch reads version {FORMAT_VERSION.decode()})")
    reader = _V1Reader(zf, prefix, place)
    with zf.open(f"{prefix}/data.pkl") as data:
        pickled = io.BytesIO(data.read())
    return unpickle(pickled, weights_only, pickle_module, kwargs, persistent_load=reader.persistent_load)


class _V1Reader:
    """Rebuilds each tensor once and each storage once (aliases share memory and version counter)."""

    def __init__(self, zf, prefix, place):
        self.zf, self.prefix, self.place = zf, prefix, place
        self.tensors, self.storages = {}, {}

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 7 and pid[0] == "tensor"):
            raise pickle.UnpicklingError(f"unknown persistent id in checkpoint: {pid!r}")
        _, key, storage, dtype_name, shape, location, requires_grad = pid
        t = self.tensors.get(key)
        if t is not None:
            return t
        base = self.storages.get(storage)
        if base is None:
            base = self.storages[storage] = self._read(pid)
            t = base
        else:
            t = Tensor._make(base._data, base._device, base._dtype)
            t._vc = base._vc
        if requires_grad:
            t.requires_grad_(True)
        self.tensors[key] = t
        return t

    def _read(self, pid):
        _, key, storage, dtype_name, shape, location, requires_grad = pid
        dtype = _dtype._BY_NAME.get(dtype_name) if isinstance(dtype_name, str) else None
        if dtype is None or not isinstance(shape, tuple) or not all(type(s) is int and s >= 0 for s in shape):
            raise pickle.UnpicklingError(f"malformed tensor record in checkpoint: {pid!r}")
        numel = 1
        for s in shape:
            numel *= s
        array = host_array(dtype, numel, little_endian=True)
        with self.zf.open(f"{self.prefix}/data/{storage}") as entry:
            if array.size and entry.readinto(memoryview(array.view("u1"))) != array.nbytes:
                raise pickle.UnpicklingError(f"checkpoint is truncated: tensor {key} has too few bytes")
        flat = placement.storage_tensor(self.place, native(array), location)
        t = Tensor._make(flat._data.reshape(shape), flat._device, flat._dtype)
        t._vc = flat._vc
        return t


def write_v1(obj, stream):
    """Write ``obj`` in gputorch 0.1.0's format (kept to test that such files stay readable)."""
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        writer = _V1Writer(zf)
        data = io.BytesIO()
        pickler = pickle.Pickler(data, protocol=2)
        pickler.persistent_id = writer.persistent_id
        pickler.dump(obj)
        zf.writestr("archive/format", FORMAT_NAME)
        zf.writestr("archive/version", FORMAT_VERSION)
        zf.writestr("archive/data.pkl", data.getvalue())


class _V1Writer:
    def __init__(self, zf):
        self.zf = zf
        self.ids, self.storages, self.keep = {}, {}, []

    def persistent_id(self, obj):
        if type(obj) is not Tensor:
            return None
        pid = self.ids.get(id(obj))
        if pid is not None:
            return pid
        alias = (str(obj._device), obj.data_ptr(), obj._data.shape, obj._data.strides, obj._dtype.name)
        storage = self.storages.get(alias)
        if storage is None:
            storage = self.storages[alias] = str(len(self.storages))
            array = obj._device.backend.to_numpy(obj._data).astype(obj._dtype.np.newbyteorder("<"), order="C")
            self.zf.writestr(f"archive/data/{storage}", array.tobytes())
        pid = ("tensor", str(len(self.ids)), storage, obj._dtype.name, tuple(obj._data.shape), str(obj._device),
               bool(obj._requires_grad))
        self.ids[id(obj)] = pid
        self.keep.append(obj)
        return pid
