"""Writing PyTorch's zip checkpoint format (what ``torch.save`` writes since PyTorch 1.6).

Archive ``<name>/`` with entries stored uncompressed:

- ``data.pkl``: the object, pickled by :class:`~.torch_pickler.TorchPickler`;
- ``.format_version`` (``1``), ``.storage_alignment`` (``64``), ``byteorder`` (``little``);
- ``data/<key>``: each storage's elements, little-endian, each starting at a multiple of 64 bytes in
  the file (padding in the local header's extra field, as PyTorch does, so it can memory-map them);
- ``version``: ``3``.
"""
import io
import struct
import zipfile

from . import torch_names as names
from .torch_pickler import TorchPickler

_LOCAL_HEADER = 30          # fixed part of a zip local file header
_ZIP64_EXTRA = 20           # zip64 extra field zipfile adds to the local header of a large entry


def write_archive(obj, stream, archive_name="archive", protocol=2, byteorder_record=True):
    """Pickle ``obj`` and write it with its storages as a PyTorch zip archive into ``stream``."""
    data = io.BytesIO()
    pickler = TorchPickler(data, protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        prefix = f"{archive_name}/"
        _write_record(zf, prefix + "data.pkl", data.getbuffer())
        _write_record(zf, prefix + ".format_version", names.ZIP_FORMAT_VERSION)
        _write_record(zf, prefix + ".storage_alignment", str(names.ZIP_ALIGNMENT).encode())
        if byteorder_record:
            _write_record(zf, prefix + "byteorder", b"little")
        for record in pickler.storages:
            _write_record(zf, f"{prefix}data/{record.key}", record.host_bytes())
        _write_record(zf, prefix + "version", names.ZIP_VERSION)


def _write_record(zf, name, payload):
    """One stored entry whose data starts at a multiple of the alignment (small zip64 entries aside)."""
    size = len(payload) if not isinstance(payload, memoryview) else payload.nbytes
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    start = zf.fp.tell() + _LOCAL_HEADER + len(name.encode("utf-8")) + (_ZIP64_EXTRA if zip64 else 0)
    pad = -start % names.ZIP_ALIGNMENT
    if pad and pad < 4:            # an extra field needs 4 bytes of header
        pad += names.ZIP_ALIGNMENT
    if pad:
        info.extra = b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4)
    with zf.open(info, "w") as entry:
        if size:
            entry.write(payload)
