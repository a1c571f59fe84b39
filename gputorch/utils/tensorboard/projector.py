"""Embeddings for TensorBoard's Projector (``SummaryWriter.add_embedding``).

The Projector reads plain files, not events: ``<log_dir>/<step>/<tag>/tensors.tsv`` (one point a
row, tab-separated), an optional ``metadata.tsv`` (a label a row, or a header and columns) and an
optional ``sprite.png`` (the points' thumbnails in a square grid), all listed in
``<log_dir>/projector_config.pbtxt``, a text ``ProjectorConfig`` of the plugin's own protocol buffer.
"""
import math
import os

import numpy as np
from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

from .images import as_numpy, hwc_grid, png

__all__ = ["write_embedding"]

CONFIG_NAME = "projector_config.pbtxt"


def _metadata_lines(metadata, header):
    rows = list(metadata)
    if header is None:
        if rows and isinstance(rows[0], (list, tuple)):
            raise ValueError("metadata with several columns needs metadata_header")
        return [str(r) for r in rows]
    lines = ["\t".join(str(h) for h in header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a metadata row has {len(row)} columns, the header {len(header)}")
        lines.append("\t".join(str(v) for v in row))
    return lines


def _sprite(images):
    """NCHW images (floats in [0, 1] or uint8) as one square RGB sheet, ``ceil(sqrt(N))`` a side."""
    side = math.ceil(math.sqrt(images.shape[0]))
    grid = hwc_grid(images, "NCHW", columns=side)[..., :3]
    sheet = np.zeros((side * images.shape[2], side * images.shape[3], 3), dtype=np.uint8)
    sheet[:grid.shape[0], :grid.shape[1]] = grid
    return sheet


def write_embedding(log_dir, mat, metadata=None, label_img=None, global_step=None, tag="default",
                    metadata_header=None):
    """Write one embedding (``mat``: an ``(N, D)`` array) and list it in the run's config."""
    mat = as_numpy(mat)
    if mat.ndim != 2:
        raise ValueError(f"mat should be 2D (N points by D dimensions), got shape {mat.shape}")
    n = mat.shape[0]
    step = 0 if global_step is None else int(global_step)
    subdir = f"{step:05d}/{tag.replace('/', '_')}"
    folder = os.path.join(log_dir, subdir)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "tensors.tsv"), "w") as f:
        for row in mat.astype(np.float64):
            f.write("\t".join(repr(float(v)) for v in row) + "\n")
    config = ProjectorConfig()
    path = os.path.join(log_dir, CONFIG_NAME)
    if os.path.exists(path):
        with open(path) as f:
            text_format.Parse(f.read(), config)
    entry = config.embeddings.add(tensor_name=f"{tag}:{step:05d}", tensor_path=f"{subdir}/tensors.tsv")
    if metadata is not None:
        lines = _metadata_lines(metadata, metadata_header)
        if len(lines) - (metadata_header is not None) != n:
            raise ValueError(f"metadata has {len(lines)} rows for {n} points")
        with open(os.path.join(folder, "metadata.tsv"), "w") as f:
            f.write("\n".join(lines) + "\n")
        entry.metadata_path = f"{subdir}/metadata.tsv"
    if label_img is not None:
        images = as_numpy(label_img)
        if images.ndim != 4 or images.shape[0] != n:
            raise ValueError(f"label_img should be (N, C, H, W) with N={n}, got shape {images.shape}")
        with open(os.path.join(folder, "sprite.png"), "wb") as f:
            f.write(png(_sprite(images)))
        entry.sprite.image_path = f"{subdir}/sprite.png"
        entry.sprite.single_image_dim.extend([images.shape[3], images.shape[2]])
    with open(path, "w") as f:
        f.write(text_format.MessageToString(config))
