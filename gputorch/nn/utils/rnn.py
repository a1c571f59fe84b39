"""Variable-length sequences for the recurrent layers: padding and packing.

A padded batch is ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) with sequence ``b`` valid
for its first ``lengths[b]`` steps. A :class:`PackedSequence` keeps only the valid steps,
time-major: with the batch sorted by decreasing length, ``data`` holds the ``batch_sizes[0]``
rows of step 0, then the ``batch_sizes[1]`` rows of step 1, and so on, where
``batch_sizes[t]`` (a CPU int64 tensor) counts the sequences longer than ``t``. When the batch
was not given sorted, ``sorted_indices`` maps sorted positions to original batch positions and
``unsorted_indices`` is its inverse.

Packing and unpacking are gathers (``index_select``), so gradients flow through both.
"""
from collections import namedtuple

from ..._tensor import Tensor
from ...ops.creation import as_tensor, full, tensor
from ...ops.shape import cat, stack
from ...ops.sorting import sort
from ... import _dtype

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_Fields = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None stays None)."""
    if permutation is None:
        return None
    inverse = permutation.new_empty(permutation.shape)
    inverse[permutation] = tensor(list(range(permutation.numel())), dtype=permutation.dtype,
                                  device=permutation.device)
    return inverse


class PackedSequence(_Fields):
    """A batch of variable-length sequences, packed (see the module docstring).

    Fields: ``data`` ``(sum(lengths), *)``, ``batch_sizes`` (CPU int64, one entry per step),
    ``sorted_indices`` and ``unsorted_indices`` (int64 on ``data``'s device, or None).
    Built by :func:`pack_padded_sequence` / :func:`pack_sequence`, not by hand; the constructor
    also accepts the pair ``(data, batch_sizes)`` as its only argument.
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                                 "created manually. They should be instantiated by functions like "
                                 "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                                 "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise AssertionError("Expected data to be a list or tuple of length 2")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def _with_data(self, data):
        """This sequence with ``data`` replaced, its index tensors following ``data``'s device."""
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def to(self, *args, **kwargs):
        """``data.to(*args, **kwargs)``; the index tensors follow to its device, ``batch_sizes`` stays."""
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._with_data(self.data.cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._with_data(self.data.cpu(*args, **kwargs))

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        """Whether ``data`` is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        return bool(getattr(self.data, "is_pinned", lambda: False)())


# --------------------------------------------------------------------------------- index maps
def _batch_sizes_of(lengths):
    """``batch_sizes[t]`` = how many of the (decreasing) ``lengths`` exceed ``t``."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])]


def _packed_rows(batch_sizes, batch):
    """Row ``t * batch + b`` of the flattened time-major padded batch for each packed row."""
    return [t * batch + b for t, size in enumerate(batch_sizes) for b in range(size)]


def _check_lengths(lengths, batch, steps, enforce_sorted):
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                           f"{lengths.device} Long tensor")
    values = lengths.tolist()
    if len(values) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(values)} "
                           f"(batch_size={batch})")
    if enforce_sorted and any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    if min(values) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if max(values) > steps:
        raise RuntimeError(f"Expected every length to be at most the padded sequence length {steps}, but got "
                           f"{max(values)}")
    return values


# --------------------------------------------------------------------------------- pack / unpack
def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of
    ``lengths`` (a list or 1-D CPU int64 tensor of ``B`` positive values, decreasing unless
    ``enforce_sorted=False``, in which case the batch is sorted here and the permutation kept)."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=_dtype.int64)
    else:
        lengths = as_tensor(lengths, dtype=_dtype.int64, device="cpu")
    sorted_indices = None
    batch_dim = 0 if batch_first else 1
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if not enforce_sorted:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    values = _check_lengths(lengths, batch, steps, enforce_sorted)
    batch_sizes = _batch_sizes_of(values)
    rows = tensor(_packed_rows(batch_sizes, batch), dtype=_dtype.int64, device=input.device)
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, rows)
    return PackedSequence(data, tensor(batch_sizes, dtype=_dtype.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of :func:`pack_padded_sequence`: returns ``(padded, lengths)`` with ``padded``
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``; ``T = total_length`` if given, else the
    longest length), padded with ``padding_value``, in the original batch order, and
    ``lengths`` a CPU int64 tensor."""
    data, batch_sizes, _, unsorted_indices = sequence
    sizes = batch_sizes.tolist()
    steps, batch = len(sizes), sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    # Every padded position reads its packed row; padding positions read one extra row of padding_value.
    pad_row = len(data)
    index = [pad_row] * (steps * batch)
    for k, flat in enumerate(_packed_rows(sizes, batch)):
        index[flat] = k
    feature = tuple(data.shape[1:])
    padding = full((1,) + feature, padding_value, dtype=data.dtype, device=data.device)
    source = cat([data, padding], 0)
    padded = source.index_select(0, tensor(index, dtype=_dtype.int64, device=data.device))
    padded = padded.reshape((steps, batch) + feature)
    lengths = [sum(1 for size in sizes if size > b) for b in range(batch)]
    lengths = tensor(lengths, dtype=_dtype.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted_indices)
        lengths = lengths[unsorted_indices.cpu()]
    return padded, lengths


# --------------------------------------------------------------------------------- lists of tensors
def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with ``batch_first``),
    filling with ``padding_value`` after each sequence (before it with ``padding_side="left"``)."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.size(0) for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    padded = []
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have the trailing shape {trailing} of the "
                               f"first one, but got {tuple(s.shape[1:])}")
        missing = longest - s.size(0)
        if missing:
            fill = full((missing,) + trailing, padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of the ``B`` sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors ``(L_i, *)`` (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = as_tensor([s.size(0) for s in sequences], dtype=_dtype.int64, device="cpu")
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors that :func:`pack_sequence` packed, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
