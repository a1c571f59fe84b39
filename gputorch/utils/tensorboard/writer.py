"""``SummaryWriter``: scalars, histograms, images, figures, text, PR curves, hyperparameters,
embeddings and graphs for TensorBoard.

Each call appends one ``Event`` (a ``Summary`` with the step and wall time) to the event file of
the writer's run directory, through TensorBoard's own ``EventFileWriter`` (buffered, flushed every
``flush_secs`` and on ``flush()``/``close()``). ``add_scalars`` writes each scalar to a run of its
own, ``<log_dir>/<main_tag>_<tag>``, as PyTorch does, so that TensorBoard draws them in one chart.
Values may be Python numbers, NumPy arrays or tensors on any device. The plugins' own formats
live beside this file: ``hparams.py``, ``pr_curve.py``, ``projector.py`` (files, not events),
``figure.py`` (matplotlib) and ``graph.py``.
"""
import datetime
import os
import socket
import time

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .images import as_numpy as _numpy, hwc_grid as _hwc, png

__all__ = ["SummaryWriter"]


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


class SummaryWriter:
    """``SummaryWriter(log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
    filename_suffix="")``: a run directory (by default ``runs/<date>_<host><comment>``) and its event
    file; ``purge_step`` makes TensorBoard drop what earlier files of the run logged from that step on."""

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
        if purge_step is not None:
            # a session restart at ``purge_step``: TensorBoard drops the events of earlier files of
            # this run from that step on (a run resumed from a checkpoint after a crash)
            self._writer.add_event(Event(step=int(purge_step), wall_time=time.time(),
                                         session_log=SessionLog(status=SessionLog.START)))

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

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of same-sized figures, drawn as one grid) as an image;
        ``close`` closes the figures after drawing them (needs matplotlib)."""
        from .figure import figure_to_hwc
        if isinstance(figure, (list, tuple)):
            pixels = np.stack([figure_to_hwc(f, close) for f in figure])
            self.add_images(tag, pixels, global_step, walltime, dataformats="NHWC")
        else:
            self.add_image(tag, figure_to_hwc(figure, close), global_step, walltime, dataformats="HWC")

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """The precision-recall curve of binary ``labels`` against ``predictions`` in [0, 1], at
        ``num_thresholds`` thresholds spread evenly over [0, 1] (see ``pr_curve.py``)."""
        from .pr_curve import pr_curve_counts, pr_curve_value
        rows = pr_curve_counts(_numpy(labels), _numpy(predictions), num_thresholds,
                               None if weights is None else _numpy(weights))
        self._add(pr_curve_value(tag, rows, num_thresholds), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        """A precision-recall curve from counts computed elsewhere (each ``num_thresholds`` long)."""
        from .pr_curve import pr_curve_value
        rows = [_numpy(v).reshape(-1) for v in (true_positive_counts, false_positive_counts, true_negative_counts,
                                                false_negative_counts, precision, recall)]
        self._add(pr_curve_value(tag, rows, num_thresholds), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """One trial for the HParams dashboard: its hyperparameters and, as scalars, its metrics, in
        the run ``<log_dir>/<run_name>`` (by default the current time), as PyTorch does."""
        from .hparams import hparams_summaries
        summaries = hparams_summaries(hparam_dict, metric_dict, hparam_domain_discrete)
        path = os.path.join(self.log_dir, run_name or str(time.time()))
        with SummaryWriter(log_dir=path) as run:
            for summary in summaries:
                run._writer.add_event(Event(summary=summary, wall_time=time.time()))
            for tag, value in metric_dict.items():
                run.add_scalar(tag, value, global_step)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points (``mat``, ``(N, D)``) for the Projector, with optional labels (``metadata``, a
        list, or rows under ``metadata_header``) and thumbnails (``label_img``, ``(N, C, H, W)``);
        written as files under ``<log_dir>/<global_step>/<tag>`` (see ``projector.py``)."""
        from .projector import write_embedding
        write_embedding(self.log_dir, mat, metadata, label_img, global_step, tag, metadata_header)

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
