"""Spatial transformers: ``F.affine_grid`` (the sampling grid of an affine map) and
``F.grid_sample`` (the input read at a grid of normalised coordinates).

Coordinates are normalised to [-1, 1] across the input: with ``align_corners`` -1 and 1 are the
centres of the corner pixels, without it the outer edges of the corner pixels. ``grid_sample``
reads 4-d inputs ``(N, C, H, W)`` with grids ``(N, Ho, Wo, 2)`` (x, y) and 5-d inputs
``(N, C, D, H, W)`` with grids ``(N, Do, Ho, Wo, 3)`` (x, y, z), with 'bilinear' (trilinear in
3-d) or 'nearest' interpolation and 'zeros', 'border' or 'reflection' padding.

Both are composites: the grid is a matrix product, the sampling a gather of the corner values
weighted by the fractional parts of the coordinates, so gradients flow to the input and (for
bilinear) to the grid, as PyTorch's do.
"""
import itertools
import warnings

from ... import _dtype
from ..._tensor import _LEGACY_NAMES, Tensor
from ...ops.comparison import where
from ...ops.creation import arange, ones
from ...ops.shape import stack
from ...amp.autocast_mode import autocast_function

__all__ = ["affine_grid", "grid_sample"]

_DEFAULT_CHANGED = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                    "grid_sample for details.")


def _align_corners(align_corners):
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=3)
        return False
    return bool(align_corners)


# ------------------------------------------------------------------------------ affine_grid
def _base_coordinates(steps, align_corners, like):
    """``steps`` normalised coordinates in [-1, 1] (0 for a single step)."""
    if steps <= 1:
        return like.new_zeros((steps,))
    r = arange(steps, dtype=like.dtype, device=like.device) * (2.0 / (steps - 1)) - 1.0
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """The ``(N, H, W, 2)`` grid (``(N, D, H, W, 3)`` for a 5-d ``size``) of the points ``theta @ (x, y, 1)``
    for ``theta`` (N, 2, 3) (or (N, 3, 4)) over the normalised output coordinates of ``size``."""
    align_corners = _align_corners(align_corners)
    if not isinstance(theta, Tensor):
        raise TypeError(f"affine_grid(): argument 'theta' must be Tensor, not {type(theta).__name__}")
    if theta._dtype._category != 2:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta._data.ndim != 3 or theta._data.shape[-2:] != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta._data.ndim != 3 or theta._data.shape[-2:] != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[2:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if align_corners and max(spatial) == 1 or align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    # base[..., :] = (x, y[, z], 1) at each output point, x varying along the last dim
    axes = [_base_coordinates(s, align_corners, theta) for s in reversed(spatial)]
    shape = tuple(spatial)
    columns = []
    for k, axis in enumerate(axes):
        view = [1] * len(shape)
        view[len(shape) - 1 - k] = shape[len(shape) - 1 - k]
        columns.append(axis.reshape(view).expand(shape))
    columns.append(ones(shape, dtype=theta.dtype, device=theta.device))
    base = stack(columns, -1).reshape(1, -1, len(columns))
    n = size[0]
    if theta._data.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {len(columns)}] "
                           f"but got: [{theta._data.shape[0]}, {theta._data.shape[2]}].")
    grid = base.expand(n, base.shape[1], len(columns)) @ theta.transpose(1, 2)
    return grid.reshape((n,) + shape + (len(columns) - 1,))


# ------------------------------------------------------------------------------ grid_sample
def _unnormalise(coord, size, align_corners):
    """Normalised coordinates in [-1, 1] to pixel coordinates along a dim of ``size`` pixels."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """``coord`` folded back and forth into [low, high] (bounds given doubled)."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    offset = coord - low
    distance = where(offset < 0, -offset, offset)   # (not abs: PyTorch's slope at 0 is 1)
    extra = distance.fmod(span)
    flips = (distance / span).floor()
    return where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _clip(coord, size):
    """``coord`` clamped to [0, size - 1], with no gradient on the bounds themselves (PyTorch's)."""
    return where((coord > 0) & (coord < size - 1), coord, coord.detach().clamp(0, size - 1))


def _padded(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _check_grid_sample(input, grid, mode, padding_mode):
    for arg, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"grid_sample(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    ndim, gdim = input._data.ndim, grid._data.ndim
    if ndim != gdim or input._data.shape[0] != grid._data.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input._data.shape)} and grid with sizes {list(grid._data.shape)}")
    if ndim not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input._data.shape)} and grid with sizes "
                           f"{list(grid._data.shape)}")
    if grid._data.shape[-1] != ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {ndim - 2} in last dimension, but got grid "
                           f"with sizes {list(grid._data.shape)}")
    if input._dtype is not grid._dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if input._dtype._category != 2:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if ndim == 4 else "grid_sampler_3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_LEGACY_NAMES[input._dtype]}\'')
    if mode == "bicubic" and ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: bicubic interpolation is not implemented in gputorch yet")
    if any(s == 0 for s in input._data.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                           f"sizes {list(input._data.shape)} with dimension 2 being empty")


@autocast_function("grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` (N, C, H, W) read at ``grid`` (N, Ho, Wo, 2): output (N, C, Ho, Wo); 5-d inputs
    with (N, Do, Ho, Wo, 3) grids likewise. Grid values are (x, y[, z]) in [-1, 1]; points outside
    read zeros, the border or the reflection per ``padding_mode``."""
    _check_grid_sample(input, grid, mode, padding_mode)
    align_corners = _align_corners(align_corners)
    n, c = input._data.shape[:2]
    sizes = input._data.shape[2:]            # (H, W) or (D, H, W)
    out_spatial = grid._data.shape[1:-1]
    k = len(sizes)
    # pixel coordinates along each input dim (grid's last axis lists x first: the last input dim)
    coords = [_padded(_unnormalise(grid[..., k - 1 - i], sizes[i], align_corners), sizes[i], padding_mode,
                      align_corners) for i in range(k)]
    flat = input.reshape(n, c, -1)
    strides = [1] * k
    for i in range(k - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]

    def read(points):
        """Input values at integer ``points`` (one tensor per dim), 0 outside: (N, C, *out_spatial),
        and where the points are inside (N, 1, *out_spatial)."""
        inside = None
        index = None
        for i, p in enumerate(points):
            p = p.nan_to_num(nan=-1.0, posinf=-1.0, neginf=-1.0)   # a NaN or infinite point reads nothing
            ok = (p >= 0) & (p <= sizes[i] - 1)
            inside = ok if inside is None else inside & ok
            term = p.clamp(0, sizes[i] - 1).long() * strides[i]
            index = term if index is None else index + term
        index = index.reshape(n, 1, -1).expand(n, c, index[0].numel())
        values = flat.gather(2, index).reshape((n, c) + tuple(out_spatial))
        inside = inside.unsqueeze(1)
        return where(inside, values, 0.0), inside

    if mode == "nearest":
        values, inside = read([p.detach().round() for p in coords])
        result = values
        if grid.requires_grad:   # the grid gets a zero gradient, as in PyTorch (not none)
            result = result + grid.masked_fill(grid.new_ones((), dtype=_dtype.bool), 0.0).sum()
        return result
    lows = [p.detach().floor() for p in coords]
    fractions = [p - low for p, low in zip(coords, lows)]
    result = None
    for corner in itertools.product((0, 1), repeat=k):
        points = [low + bit for low, bit in zip(lows, corner)]
        weight = None
        for frac, bit in zip(fractions, corner):
            w = frac if bit else 1 - frac
            weight = w if weight is None else weight * w
        values, inside = read(points)
        term = values * weight.unsqueeze(1)   # outside, values are 0 (and a NaN weight still gives NaN)
        result = term if result is None else result + term
    return result
