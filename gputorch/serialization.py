"""``gputorch.save`` / ``gputorch.load``: PyTorch's checkpoint format, read and written.

``gputorch.save`` writes what ``torch.save`` writes (PyTorch's zip format: ``<archive>/data.pkl`` +
``<archive>/data/<key>`` storage records), so ``torch.load(path, weights_only=True)`` reads gputorch's
checkpoints and ``gputorch.load`` reads PyTorch's: tensors of every dtype gputorch has, their
storages shared (views of one storage load as views of one array), Parameters, state dicts
(OrderedDicts with ``_metadata``), optimizer state dicts and nested containers. PyTorch's legacy
(non-zip) format is read and written too, and ``gputorch.load`` still reads the format gputorch 0.1.0
wrote.

Saving to a path is crash-safe: the checkpoint is written to a temporary file beside it
(``.<name>.<pid>.<8 hex>.gputorch-tmp``), fsynced and renamed onto the path, so the path always
holds the old checkpoint or the new one (see ``gputorch/_serialization/atomic_file.py``).

Loading is safe by default (``weights_only=True``, as in PyTorch 2.6+): only the globals PyTorch's
weights-only unpickler allows are rebuilt; anything else, such as a pickle that would call
``os.system``, raises ``pickle.UnpicklingError`` naming the global, without running it. Extend the
list with :func:`add_safe_globals`, or pass ``weights_only=False`` for files from a trusted source.

The parts live in ``gputorch/_serialization/``. Interchange through safetensors:
:func:`save_safetensors` / :func:`load_safetensors` (the optional ``safetensors`` package).
"""
import collections
import contextlib
import io
import os
import pickle

import numpy as np

from . import _dtype
from ._device import device as Device
from ._tensor import Tensor
from ._serialization.safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._serialization.rebuild import UnsupportedTypeError
# The readers and writers (and zipfile) are imported on first use, to keep ``import gputorch`` light.

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "add_safe_globals", "get_safe_globals",
           "clear_safe_globals", "safe_globals", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2


# ---------------------------------------------------------------------------------------- saving
def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, Parameters, state dicts, optimizer state dicts, nested containers) in
    PyTorch's checkpoint format to ``f``: a path (str or ``os.PathLike``; written crash-safely,
    through a temporary file renamed onto it) or a binary file-like object (written directly).
    ``_use_new_zipfile_serialization=False`` writes PyTorch's legacy (pre-1.6) format instead."""
    if pickle_module is not pickle:
        raise NotImplementedError("gputorch.save writes PyTorch's names with its own pickler; "
                                  "a custom pickle_module is not supported")
    from ._serialization import atomic_file, legacy_format, torch_zip

    def write(stream, name):
        if _use_new_zipfile_serialization:
            torch_zip.write_archive(obj, stream, name, pickle_protocol, not _disable_byteorder_record)
        else:
            legacy_format.write_legacy(obj, stream, pickle_protocol)

    if isinstance(f, (str, os.PathLike)):
        with atomic_file.atomic_write(f) as stream:
            write(stream, _archive_name(f))
        return
    if not hasattr(f, "write"):
        raise AttributeError(f"expected a path or a binary file-like object with a 'write' method, "
                             f"got {type(f).__name__}")
    write(f, "archive")


def _archive_name(path):
    """The archive's top folder: the file's name without extension, as PyTorch names it."""
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return stem if stem and stem.isprintable() and "/" not in stem else "archive"


# ---------------------------------------------------------------------------------------- loading
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved with ``torch.save`` or :func:`save` from a path or a binary file-like object.

    Reads PyTorch's zip format, its legacy format and gputorch 0.1.0's format (told apart from the
    file's contents).

    Args:
        map_location: where storages go: None (the device they were saved from), a device or a
            string ("cpu", "cuda:1"), a dict mapping saved locations to new ones
            (``{"cuda:1": "cuda:0"}``), or a callable ``fn(storage, location)`` returning the tensor
            to use (``storage`` is a 1-D CPU tensor of the storage's elements) or None for the default.
        weights_only (bool): only rebuild the types PyTorch's weights-only unpickler allows
            (default True); False unpickles anything (only for trusted files: a pickle can run
            arbitrary code).
        mmap (bool): memory-map the storages from the file (a path to a zip-format checkpoint)
            instead of reading them: pages are read when used; writes to the tensors stay in
            memory (copy-on-write), the file never changes.
    """
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if weights_only is None:   # PyTorch's environment switch for trusted files of older programs
        weights_only = pickle_module is None and os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") in (
            "0", "", "false", "False")
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    from ._serialization import placement
    place = placement.placement(map_location)
    with _open_for_reading(f) as stream:
        try:
            return _load_stream(stream, map_location, place, weights_only, pickle_module, pickle_load_args,
                                os.fspath(f) if mmap else None)
        except OSError:
            raise
        except (Exception, MemoryError) as exc:   # MemoryError: a damaged length asked for too much
            raise _unreadable(f, exc) from exc


def _load_stream(stream, map_location, place, weights_only, pickle_module, kwargs, mmap_path=None):
    import zipfile
    from ._serialization import gputorch_v1, legacy_format, torch_zip_reader
    from ._serialization.torch_unpickler import unpickle
    if _is_zip(stream):
        with zipfile.ZipFile(stream) as zf:
            prefix = _archive_prefix(zf)
            if gputorch_v1.is_v1(zf, prefix):
                if mmap_path is not None:
                    raise RuntimeError("mmap=True needs a checkpoint in PyTorch's zip format; this file was "
                                       "written by gputorch 0.1.0 (load it without mmap and save it again)")
                return gputorch_v1.read_v1(zf, prefix, place, weights_only, pickle_module, kwargs)
            return torch_zip_reader.read_archive(zf, prefix, place, weights_only, pickle_module, kwargs,
                                                 mmap_path)
    if mmap_path is not None:
        raise RuntimeError("mmap can only be used with files saved with "
                           "`torch.save(_use_new_zipfile_serialization=True)`, please torch.save your "
                           "checkpoint with this option in order to use mmap.")
    if legacy_format.is_legacy(stream):
        return legacy_format.read_legacy(stream, map_location, place, weights_only, pickle_module, kwargs)
    obj = unpickle(stream, weights_only, pickle_module, kwargs)
    return _move_all(obj, place) if map_location is not None else obj


@contextlib.contextmanager
def _open_for_reading(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            yield stream
        return
    if not hasattr(f, "read"):
        raise AttributeError(f"expected a path or a binary file-like object with a 'read' method, "
                             f"got {type(f).__name__}")
    if not (hasattr(f, "seek") and hasattr(f, "tell") and _seekable(f)):
        f = io.BytesIO(f.read())
    yield f


def _seekable(f):
    try:
        return f.seekable() if hasattr(f, "seekable") else True
    except (OSError, ValueError):
        return False


def _archive_prefix(zf):
    names = zf.namelist()
    if not names:
        raise RuntimeError("not a checkpoint: the zip archive is empty")
    prefix = names[0].split("/", 1)[0]
    if f"{prefix}/data.pkl" not in names:
        raise RuntimeError("not a gputorch or PyTorch checkpoint: the zip archive has no data.pkl")
    return prefix


def _unreadable(f, exc):
    """The error for a file that is no readable checkpoint, naming the file: an ``UnpicklingError``
    (a refused global), a RuntimeError or an unsupported dtype keep their type, with the file's name
    added; anything else (garbage bytes) becomes an ``UnpicklingError``."""
    where = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", None)
    if isinstance(exc, (pickle.UnpicklingError, RuntimeError, UnsupportedTypeError)):
        if where is None:
            return exc
        try:
            return type(exc)(f"{where}: {exc}")
        except TypeError:  # a subclass with another constructor
            return RuntimeError(f"{where}: {type(exc).__name__}: {exc}")
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return pickle.UnpicklingError(f"{where if where is not None else 'the file'} is not a readable checkpoint "
                                  f"({detail})")


def _is_zip(stream):
    import zipfile
    start = stream.tell()
    try:
        return zipfile.is_zipfile(stream)
    finally:
        stream.seek(start)


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


def _host_contiguous(t):
    """The tensor's elements as a C-contiguous host array (0-d stays 0-d)."""
    array = t._device.backend.to_numpy(t._data)
    return array if array.flags.c_contiguous else np.array(array, order="C")


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
