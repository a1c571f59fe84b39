"""Precision-recall curves for TensorBoard's PR Curves plugin (``SummaryWriter.add_pr_curve``).

The plugin reads one float32 tensor of shape ``(6, num_thresholds)``: true positives, false
positives, true negatives, false negatives, precision and recall at thresholds spread evenly over
``[0, 1]``, with ``num_thresholds`` in the summary's metadata (the plugin's own helper makes it).
"""
import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.pr_curve import metadata
from tensorboard.util.tensor_util import make_tensor_proto

__all__ = ["pr_curve_counts", "pr_curve_value"]

_TINY = 1e-7   # the smallest denominator of precision and recall (no division by zero)


def pr_curve_counts(labels, predictions, num_thresholds=127, weights=None):
    """The six rows of the curve: at threshold ``k / (num_thresholds - 1)`` a prediction counts as
    positive when it is at or above the threshold; ``weights`` scales each example's count."""
    labels = np.asarray(labels).astype(np.float64).reshape(-1)
    predictions = np.asarray(predictions, dtype=np.float64).reshape(-1)
    if labels.shape != predictions.shape:
        raise ValueError(f"labels ({labels.size}) and predictions ({predictions.size}) differ in size")
    if num_thresholds < 2:
        raise ValueError(f"num_thresholds should be at least 2, got {num_thresholds}")
    weights = 1.0 if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    # the highest threshold each prediction reaches, then the counts at or above every threshold
    bucket = np.floor(predictions * (num_thresholds - 1)).astype(np.int64)
    edges = (0, num_thresholds - 1)
    positives, _ = np.histogram(bucket, bins=num_thresholds, range=edges, weights=labels * weights)
    negatives, _ = np.histogram(bucket, bins=num_thresholds, range=edges, weights=(1.0 - labels) * weights)
    tp = np.cumsum(positives[::-1])[::-1]
    fp = np.cumsum(negatives[::-1])[::-1]
    fn = tp[0] - tp
    tn = fp[0] - fp
    precision = tp / np.maximum(_TINY, tp + fp)
    recall = tp / np.maximum(_TINY, tp + fn)
    return np.stack([tp, fp, tn, fn, precision, recall])


def pr_curve_value(tag, rows, num_thresholds):
    """The ``Summary.Value`` of a curve's six rows (as float32) under ``tag``."""
    rows = np.asarray(rows, dtype=np.float32)
    if rows.shape != (6, num_thresholds):
        raise ValueError(f"a PR curve has 6 rows of num_thresholds={num_thresholds} values, got shape {rows.shape}")
    meta = metadata.create_summary_metadata(display_name=tag, description="", num_thresholds=num_thresholds)
    return Summary.Value(tag=tag, metadata=meta, tensor=make_tensor_proto(rows))
