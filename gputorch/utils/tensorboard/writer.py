"""``SummaryWriter``: scalars, groups of scalars, histograms, images and text as TensorBoard events.

Each call appends one ``Event`` (a ``Summary`` with the step and wall time) to the event file of
the writer's run directory, through TensorBoard's own ``EventFileWriter`` (buffered, flushed every
``flush_secs`` and on ``flush()``/``close()``). ``add_scalars`` writes each scalar to a run of its
own, ``<log_dir>/<main_tag>_<tag>``, as PyTorch does, so that TensorBoard draws them in one chart.
Values may be Python numbers, NumPy arrays or tensors on any device.
"""
import datetime
import math
import os
import socket
import struct
import time
import zlib

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["SummaryWriter"]


def _numpy(value):
    """A NumPy array of a number, a NumPy array or a tensor (moved to the host)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _scalar(value):
    array = _numpy(value)
    if array.size != 1:
        raise ValueError(f"scalar should be 0D, got a value of shape {tuple(array.shape)}")
    return float(array.reshape(()))


def _default_bucket_limits():
    """TensorFlow's default histogram buckets: 0 and +-1e-12 * 1.1**k up to 1e20 (TensorBoard
    merges neighbouring buckets when it draws)."""
    positive = [1e-12]
    while positive[-1] < 1e20:
        positive.append(positive[-1] * 1.1)
    return np.array([-v for v in reversed(positive)] + [0.0] + positive)


_TF_LIMITS = _default_bucket_limits()


def histogram_proto(values, bins="tensorflow", max_bins=None):
    """A ``HistogramProto`` of the finite ``values``: count, min, max, sum, sum of squares, and the
    non-empty range of buckets (``bins``: "tensorflow", a NumPy bins spec or edges)."""
    values = _numpy(values).astype(np.float64).reshape(-1)
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    edges = _TF_LIMITS if isinstance(bins, str) and bins == "tensorflow" else bins
    counts, limits = np.histogram(values, bins=edges)
    if max_bins is not None and counts.size > max_bins:
        factor = -(-counts.size // max_bins)
        pad = factor * max_bins - counts.size
        counts = np.pad(counts, (0, pad)).reshape(max_bins, factor).sum(axis=1)
        limits = np.concatenate([limits[:-1:factor], limits[-1:]])
        limits = limits[:counts.size + 1]
    filled = np.nonzero(counts)[0]
    first, last = int(filled[0]), int(filled[-1])
    # each bucket is written as its right edge; one empty bucket is kept on the left so that the
    # first bucket's left edge is known
    lo = max(first - 1, 0)
    bucket_counts = counts[lo:last + 1]
    bucket_limits = limits[lo + 1:last + 2]
    return HistogramProto(min=float(values.min()), max=float(values.max()), num=int(values.size),
                          sum=float(values.sum()), sum_squares=float(values @ values),
                          bucket_limit=bucket_limits.tolist(), bucket=bucket_counts.astype(np.float64).tolist())


def _hwc(image, dataformats):
    """``image`` as an HWC uint8 array with 3 or 4 channels: floats are in [0, 1] (scaled by 255 and
    clipped), one channel becomes grey RGB, ``N`` images (``NCHW``/``NHWC``) a grid of up to 8 columns."""
    array = _numpy(image)
    fmt = dataformats.upper()
    if len(fmt) != array.ndim or len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW"):
        raise ValueError(f"dataformats {dataformats!r} does not describe an image of shape {tuple(array.shape)}")
    if "C" not in fmt:
        array, fmt = array[..., None], fmt + "C"
    if "N" not in fmt:
        array, fmt = array[None], "N" + fmt
    array = np.transpose(array, [fmt.index(axis) for axis in "NHWC"])
    if array.shape[-1] == 1:
        array = np.repeat(array, 3, axis=-1)
    if array.shape[-1] not in (3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {array.shape[-1]}")
    if array.dtype != np.uint8:
        array = (array.astype(np.float64) * 255).clip(0, 255).astype(np.uint8)
    n, h, w, c = array.shape
    cols = min(n, 8)
    rows = math.ceil(n / cols)
    grid = np.zeros((rows * h, cols * w, c), dtype=np.uint8)
    for i in range(n):
        r, k = divmod(i, cols)
        grid[r * h:(r + 1) * h, k * w:(k + 1) * w] = array[i]
    return grid


def png(hwc):
    """PNG bytes of an HWC uint8 array (RGB or RGBA; no filtering, zlib-compressed)."""
    h, w, c = hwc.shape
    raw = b"".join(b"\x00" + row.tobytes() for row in np.ascontiguousarray(hwc))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", w, h, 8, {3: 2, 4: 6}[c], 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class SummaryWriter:
    """``SummaryWriter(log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
    filename_suffix="")``: a run directory (by default ``runs/<date>_<host><comment>``) and its event
    file."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            stamp = datetime.datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        self._all_writers = {self.log_dir: self._writer}

    def get_logdir(self):
        return self.log_dir

    def _add(self, value, global_step, walltime, writer=None):
        event = Event(summary=Summary(value=[value]), wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        (writer or self._writer).add_event(event)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One point ``(global_step, scalar_value)`` of the chart ``tag``."""
        self._add(Summary.Value(tag=tag, simple_value=_scalar(scalar_value)), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several charts in one: each ``tag`` goes to the run ``<log_dir>/<main_tag>_<tag>``."""
        walltime = time.time() if walltime is None else walltime
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, f"{main_tag}_{tag}".replace("/", "_"))
            writer = self._all_writers.get(path)
            if writer is None:
                writer = self._all_writers[path] = EventFileWriter(path, self.max_queue, self.flush_secs,
                                                                   self.filename_suffix)
            self._add(Summary.Value(tag=main_tag, simple_value=_scalar(value)), global_step, walltime, writer)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of ``values`` (any shape; non-finite values are left out)."""
        self._add(Summary.Value(tag=tag, histo=histogram_proto(values, bins, max_bins)), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """One image (``CHW`` by default; ``HWC``, ``HW``; floats in [0, 1] or uint8) as a PNG."""
        grid = _hwc(img_tensor, dataformats)
        image = Summary.Image(height=grid.shape[0], width=grid.shape[1], colorspace=grid.shape[2],
                              encoded_image_string=png(grid))
        self._add(Summary.Value(tag=tag, image=image), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (``NCHW`` by default), drawn as one grid of up to 8 columns."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """``text_string`` (Markdown) under ``<tag>/text_summary`` for TensorBoard's text plugin."""
        tensor = TensorProto(dtype="DT_STRING", string_val=[str(text_string).encode("utf-8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
        self._add(Summary.Value(tag=f"{tag}/text_summary", metadata=metadata, tensor=tensor), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The graph of ``model(*input_to_model)`` for TensorBoard's Graphs tab, traced by
        ``gputorch.jit`` (see ``graph.py``); ``verbose`` prints the traced graph too."""
        from .graph import graph_def
        if input_to_model is None:
            raise ValueError("add_graph needs input_to_model: the graph is traced from one call of the model")
        proto = graph_def(model, input_to_model)
        if verbose:
            print(proto)
        self._writer.add_event(Event(graph_def=proto.SerializeToString(), wall_time=time.time()))

    def flush(self):
        for writer in self._all_writers.values():
            writer.flush()

    def close(self):
        for writer in self._all_writers.values():
            writer.flush()
            writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
