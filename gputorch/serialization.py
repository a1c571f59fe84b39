"""``gputorch.save`` / ``gputorch.load``: tensors, Parameters, state dicts and containers on disk.

File format (a zip archive, entries stored uncompressed):

- ``archive/format``: ``gputorch`` and ``archive/version``: the format version (``1``);
- ``archive/data.pkl``: the object, pickled; every Tensor in it is replaced by a persistent
  id ``("tensor", tensor key, storage key, dtype name, shape, device, requires_grad)``;
- ``archive/data/<storage key>``: the elements as raw C-ordered little-endian bytes.

A tensor that appears several times in the object is stored once and loads as one tensor;
tensors that alias exactly the same memory (tied weights in a state dict) share one data entry
and load sharing memory. Partial views of a storage (slices) are stored as separate copies.
Parameters are pickled through their ``__reduce_ex__`` (``_rebuild_parameter`` over their data tensor).
Plain pickle files of gputorch objects load too.

Loading is safe by default (``weights_only=True``): the unpickler only rebuilds an allow-list
of types (containers, numbers, strings, OrderedDict, gputorch tensors, Parameters, dtypes,
devices and Sizes, NumPy arrays); anything else, such as a pickle that would call
``os.system``, raises ``pickle.UnpicklingError`` without running it. Extend the list with
:func:`add_safe_globals`, or pass ``weights_only=False`` for files from a trusted source.

Interchange with PyTorch and other frameworks goes through the safetensors format:
:func:`save_safetensors` / :func:`load_safetensors` (the optional ``safetensors`` package).
"""
import _compat_pickle
import collections
import contextlib
import io
import os
import pickle
import sys

import numpy as np

from . import _dtype
from ._device import device as Device
from ._tensor import Tensor

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "add_safe_globals", "get_safe_globals",
           "clear_safe_globals", "safe_globals", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
FORMAT_NAME = b"gputorch"
FORMAT_VERSION = b"1"
_ARCHIVE = "archive"


# ---------------------------------------------------------------------------------------- saving
def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True):
    """Save ``obj`` (tensors, Parameters, state dicts, optimizer state dicts, nested containers)
    to ``f``: a path (str or ``os.PathLike``) or a binary file-like object (e.g. ``io.BytesIO``)."""
    import zipfile
    with _open(f, "wb") as stream, zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        writer = _TensorWriter(zf)
        data = io.BytesIO()
        pickler = pickle_module.Pickler(data, protocol=pickle_protocol)
        pickler.persistent_id = writer.persistent_id
        pickler.dump(obj)
        zf.writestr(f"{_ARCHIVE}/format", FORMAT_NAME)
        zf.writestr(f"{_ARCHIVE}/version", FORMAT_VERSION)
        zf.writestr(f"{_ARCHIVE}/data.pkl", data.getvalue())


class _TensorWriter:
    """Writes each distinct tensor once and names it in the pickle by a persistent id.

    The id names the tensor object (the same object loads as one object) and its storage:
    distinct tensors that alias the very same memory (same address, shape, strides and dtype,
    e.g. tied weights in a state dict) share one data entry and load sharing memory again.
    """

    def __init__(self, zf):
        self.zf = zf
        self.ids = {}        # id(tensor) -> persistent id
        self.storages = {}   # (device, address, shape, strides, dtype) -> storage key
        self.keep = []       # the tensors seen, so their ids stay unique while saving

    def persistent_id(self, obj):
        if type(obj) is not Tensor:
            return None    # Parameters pickle via __reduce_ex__ over their (plain) data tensor
        pid = self.ids.get(id(obj))
        if pid is not None:
            return pid
        alias = (str(obj._device), obj.data_ptr(), obj._data.shape, obj._data.strides, obj._dtype.name)
        storage = self.storages.get(alias)
        if storage is None:
            storage = self.storages[alias] = str(len(self.storages))
            array = _host_contiguous(obj)
            if array.dtype.byteorder == ">":
                array = array.astype(array.dtype.newbyteorder("<"))
            with self.zf.open(f"{_ARCHIVE}/data/{storage}", "w", force_zip64=True) as entry:
                if array.size:
                    entry.write(memoryview(array.reshape(-1)).cast("B"))
        pid = ("tensor", str(len(self.ids)), storage, obj._dtype.name, tuple(obj._data.shape), str(obj._device),
               bool(obj._requires_grad))
        self.ids[id(obj)] = pid
        self.keep.append(obj)
        return pid


def _host_contiguous(t):
    """The tensor's elements as a C-contiguous host array (0-d stays 0-d)."""
    array = t._device.backend.to_numpy(t._data)
    return array if array.flags.c_contiguous else np.array(array, order="C")


@contextlib.contextmanager
def _open(f, mode):
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as stream:
            yield stream
        return
    needed = "write" if "w" in mode else "read"
    if not hasattr(f, needed):
        raise AttributeError(f"expected a path or a binary file-like object with a '{needed}' method, "
                             f"got {type(f).__name__}")
    yield f


# ---------------------------------------------------------------------------------------- loading
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved with :func:`save` from a path or a binary file-like object.

    Args:
        map_location: where tensors go: None (the device they were saved from), a device or a
            string ("cpu", "cuda:1"), a dict mapping saved locations to new ones
            (``{"cuda:1": "cuda:0"}``), or a callable ``fn(cpu_tensor, location)`` returning the
            tensor to use (or None for the default).
        weights_only (bool): only rebuild allow-listed types (default True); False unpickles anything
            (only for trusted files: a pickle can run arbitrary code).
        mmap: not supported (tensors are read into memory).
    """
    if mmap:
        raise ValueError("gputorch.load does not support mmap=True; tensors are read into memory")
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is None:
        pickle_module = pickle
    place = _placement(map_location)
    import zipfile
    with _open(f, "rb") as stream:
        try:
            if _is_zip(stream):
                with zipfile.ZipFile(stream) as zf:
                    return _load_archive(zf, place, weights_only, pickle_module, pickle_load_args)
            unpickler_cls = _RestrictedUnpickler if weights_only else pickle_module.Unpickler
            obj = _load_pickle(unpickler_cls, stream, pickle_load_args)
        except OSError:
            raise
        except Exception as exc:
            raise _unreadable(f, exc) from exc
        except MemoryError as exc:  # a damaged length field asked for an impossible allocation
            raise _unreadable(f, exc) from exc
        return _move_all(obj, place) if map_location is not None else obj


def _unreadable(f, exc):
    """The error for a file that is no readable checkpoint, naming the file: an ``UnpicklingError``
    (a RuntimeError stays a RuntimeError, with the file's name added)."""
    where = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", repr(f))
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, RuntimeError):
        try:
            return type(exc)(f"{where}: {exc}")
        except TypeError:  # a subclass with another constructor
            return RuntimeError(f"{where}: {detail}")
    return pickle.UnpicklingError(f"{where} is not a readable gputorch checkpoint ({detail})")


def _is_zip(stream):
    import zipfile
    start = stream.tell()
    try:
        return zipfile.is_zipfile(stream)
    finally:
        stream.seek(start)


def _load_pickle(unpickler_cls, stream, kwargs, persistent_load=None):
    unpickler = unpickler_cls(stream, **kwargs)
    if persistent_load is not None:
        unpickler.persistent_load = persistent_load
    return unpickler.load()


def _load_archive(zf, place, weights_only, pickle_module, kwargs):
    names = zf.namelist()
    prefix = names[0].split("/", 1)[0] if names else _ARCHIVE
    if f"{prefix}/data.pkl" not in names:
        raise RuntimeError("not a gputorch checkpoint: the zip archive has no data.pkl")
    if f"{prefix}/format" not in names or zf.read(f"{prefix}/format") != FORMAT_NAME:
        raise RuntimeError(
            "this zip archive was not written by gputorch.save (a PyTorch checkpoint?). Save the weights "
            "with safetensors in PyTorch (safetensors.torch.save_file) and read them with "
            "gputorch.serialization.load_safetensors.")
    version = zf.read(f"{prefix}/version")
    if version != FORMAT_VERSION:
        raise RuntimeError(f"unsupported gputorch checkpoint version {version.decode(errors='replace')} "
                           f"(this gputorch reads version {FORMAT_VERSION.decode()})")
    reader = _TensorReader(zf, prefix, place)
    unpickler_cls = _RestrictedUnpickler if weights_only else pickle_module.Unpickler
    with zf.open(f"{prefix}/data.pkl") as data:
        return _load_pickle(unpickler_cls, io.BytesIO(data.read()), kwargs,
                            persistent_load=reader.persistent_load)


class _TensorReader:
    """Rebuilds tensors from persistent ids: each tensor once (shared tensors stay one object), each
    storage once (aliases of one storage share memory and version counter again)."""

    def __init__(self, zf, prefix, place):
        self.zf = zf
        self.prefix = prefix
        self.place = place
        self.tensors = {}
        self.storages = {}

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
        little = sys.byteorder == "little"
        array = np.empty(shape, dtype=dtype.np if little else dtype.np.newbyteorder("<"))
        with self.zf.open(f"{self.prefix}/data/{storage}") as entry:
            if array.size:
                view = memoryview(array.reshape(-1)).cast("B")
                if entry.readinto(view) != array.nbytes:
                    raise pickle.UnpicklingError(f"checkpoint is truncated: tensor {key} has too few bytes")
        if not little:
            array = array.astype(dtype.np)
        return self.place(array, location)


def _placement(map_location):
    """A function ``(host array, saved location) -> Tensor`` implementing ``map_location``."""
    from .ops.creation import from_numpy

    def to_device(array, target):
        t = from_numpy(array)
        dev = Device(target)
        if dev.type == "cpu":
            return t
        if dev.type == "cuda":
            from . import cuda
            if not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but gputorch.cuda.is_available() is "
                    "False. If you are running on a CPU-only machine, please use gputorch.load with "
                    "map_location=gputorch.device('cpu') to map your tensors to the CPU.")
        return t.to(dev)

    if map_location is None:
        return to_device
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda array, location: to_device(array, target)
    if isinstance(map_location, dict):
        mapping = {str(k): v for k, v in map_location.items()}
        return lambda array, location: to_device(array, mapping.get(location, location))
    if callable(map_location):
        def call(array, location):
            result = map_location(from_numpy(array), location)
            if result is None:
                return to_device(array, location)
            if not isinstance(result, Tensor):
                raise TypeError(f"map_location returned {type(result).__name__}, expected a Tensor or None")
            return result
        return call
    raise TypeError(f"map_location should be a device, a string, a dict or a callable, "
                    f"not {type(map_location).__name__}")


def _move_all(obj, place):
    """Apply ``map_location`` to the tensors of an object loaded from a plain pickle."""
    seen = {}

    def visit(x):
        if isinstance(x, Tensor):
            key = id(x)
            if key not in seen:
                moved = place(x._device.backend.to_numpy(x.detach()._data), str(x._device))
                if type(x) is not Tensor:
                    moved = type(x)._make_subclass(moved, x.requires_grad)
                elif x.requires_grad:
                    moved.requires_grad_(True)
                seen[key] = moved
            return seen[key]
        if isinstance(x, dict):
            out = type(x)() if type(x) in (dict, collections.OrderedDict) else {}
            for k, v in x.items():
                out[k] = visit(v)
            return out
        if isinstance(x, list):
            return [visit(v) for v in x]
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(visit(v) for v in x)
        return x
    return visit(obj)


# ------------------------------------------------------------------------------ weights_only allow-list
def _default_safe_globals():
    import builtins
    import codecs
    from . import _size, _tensor
    allowed = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("_codecs", "encode"): codecs.encode,     # bytes under pickle protocol 2
        ("gputorch._size", "Size"): _size.Size,
        ("gputorch._dtype", "_by_name"): _dtype._by_name,
        ("gputorch._device", "device"): Device,
        ("gputorch._tensor", "_rebuild_tensor"): _tensor._rebuild_tensor,
        ("gputorch.nn.parameter", "_rebuild_parameter"): _safe_rebuild_parameter,
    }
    for name in ("set", "frozenset", "complex", "slice", "range", "bytes", "bytearray"):
        allowed[("builtins", name)] = getattr(builtins, name)
    # NumPy arrays, dtypes and scalars (their contents still go through this allow-list).
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(module, "_reconstruct")] = _np_reconstruct()
        allowed[(module, "scalar")] = _np_scalar()
    allowed[("numpy", "ndarray")] = np.ndarray
    allowed[("numpy", "dtype")] = np.dtype
    for name in dir(np.dtypes):
        cls = getattr(np.dtypes, name)
        if isinstance(cls, type) and issubclass(cls, np.dtype):
            allowed[("numpy.dtypes", name)] = cls
    return allowed


def _safe_rebuild_parameter(data, requires_grad, state=None):
    """``_rebuild_parameter`` for weights_only loading: only public attributes are restored (internal
    fields such as hook tables cannot be planted by a file)."""
    from .nn.parameter import _rebuild_parameter
    if state:
        state = {k: v for k, v in state.items() if isinstance(k, str) and not k.startswith("_")}
    return _rebuild_parameter(data, requires_grad, state)


def _np_reconstruct():
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:   # NumPy 1.x
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


def _np_scalar():
    try:
        from numpy._core.multiarray import scalar
    except ImportError:
        from numpy.core.multiarray import scalar
    return scalar


_SAFE = None
_USER_SAFE = {}


def _safe_table():
    global _SAFE
    if _SAFE is None:
        _SAFE = _default_safe_globals()
    return _SAFE


def add_safe_globals(safe_globals):
    """Allow more classes/functions in ``weights_only`` loading: a list of objects, or of
    ``(object, "module.name")`` pairs for objects pickled under another name."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, full_name = entry
            module, _, name = full_name.rpartition(".")
        else:
            obj = entry
            module, name = obj.__module__, obj.__qualname__
        _USER_SAFE[(module, name)] = obj


def get_safe_globals():
    """The objects added with :func:`add_safe_globals`."""
    return list(_USER_SAFE.values())


def clear_safe_globals():
    _USER_SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager: :func:`add_safe_globals` for the duration of the block."""
    saved = dict(_USER_SAFE)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _USER_SAFE.clear()
        _USER_SAFE.update(saved)


class _RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that only resolves allow-listed globals (see the module docstring)."""

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:     # Python 2 names (pickle protocol 2)
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        obj = _safe_table().get((module, name)) or _USER_SAFE.get((module, name))
        if obj is None:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file asks for the global '{module}.{name}', which is not "
                "allowed by default. With weights_only=True (the default) gputorch.load only rebuilds "
                "tensors, Parameters, dtypes, devices, Sizes, NumPy arrays, numbers, strings and "
                "containers, so loading cannot run arbitrary code. If you trust the source of this file, "
                "pass weights_only=False, or allow this object with "
                "gputorch.serialization.add_safe_globals([...]).")
        return obj


# ------------------------------------------------------------------------------------ safetensors
def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError as e:
        raise ImportError("gputorch's safetensors support needs the 'safetensors' package "
                          "(pip install safetensors)") from e
    return safetensors.numpy


def save_safetensors(state_dict, path, metadata=None):
    """Write a ``{name: tensor}`` mapping (e.g. ``model.state_dict()``) to a safetensors file,
    which PyTorch reads with ``safetensors.torch.load_file``. ``metadata``: a ``{str: str}`` dict
    stored in the header."""
    st = _safetensors_numpy()
    arrays = {}
    for name, t in state_dict.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"save_safetensors: value for key '{name}' is a {type(t).__name__}, not a Tensor")
        arrays[name] = _host_contiguous(t)
    st.save_file(arrays, os.fspath(path), metadata=metadata)


def load_safetensors(path, device="cpu"):
    """Read a safetensors file (e.g. written by PyTorch's ``safetensors.torch.save_file``) into an
    ``OrderedDict`` of tensors on ``device``, ready for ``model.load_state_dict``."""
    from .ops.creation import from_numpy
    st = _safetensors_numpy()
    dev = Device(device)
    arrays = st.load_file(os.fspath(path))
    out = collections.OrderedDict()
    for name, array in arrays.items():
        if array.dtype not in _dtype._BY_NP:
            raise TypeError(f"load_safetensors: tensor '{name}' has dtype {array.dtype}, which gputorch "
                            "does not support")
        t = from_numpy(np.require(array, requirements=("C", "W")))
        out[name] = t if dev.type == "cpu" else t.to(dev)
    return out
