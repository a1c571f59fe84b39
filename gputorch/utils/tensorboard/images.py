"""Images as TensorBoard stores them: HWC uint8 grids encoded as PNG (no imaging library needed)."""
import math
import struct
import zlib

import numpy as np

__all__ = ["as_numpy", "hwc_grid", "png"]


def as_numpy(value):
    """A NumPy array of a number, a NumPy array or a tensor (moved to the host)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def hwc_grid(image, dataformats, columns=8):
    """``image`` as an HWC uint8 array with 3 or 4 channels: floats are in [0, 1] (scaled by 255 and
    clipped), one channel becomes grey RGB, ``N`` images (``NCHW``/``NHWC``) a grid of up to ``columns``
    columns."""
    array = as_numpy(image)
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
    cols = min(n, columns)
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
