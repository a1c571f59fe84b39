"""bfloat16 on the CPU: ops compute in float32 and round their results to bfloat16.

NumPy holds bfloat16 arrays through the ``ml_dtypes`` package, but computes on them poorly: its
sums accumulate in bfloat16 (100000 ones sum to 256), its matrix products return float32, and
``numpy.finfo`` and ``issubdtype(..., floating)`` do not know the type. So an op with a bfloat16
operand runs, as PyTorch's CPU kernels do, in float32: the dispatcher
(:func:`gputorch._dispatch.apply`) hands it to :func:`forward_in_float32`, which shows the op its
bfloat16 operands holding float32 copies of their arrays (the same tensor objects, so that what the
op saves for backward is the operand) and rounds its floating-point results to bfloat16 when the
op's result type, by PyTorch's promotion, is bfloat16 (bfloat16 beside float16 or float32 gives
float32). The node then casts the gradients of its bfloat16 operands back to bfloat16
(``Node.apply``). View ops (reshape, transpose, slicing) run on the bfloat16 arrays themselves,
since their results must share memory; so do ops whose node class sets ``keeps_bfloat16`` (copies
to another dtype or device, which cast exactly once). A node class that sets ``updates_operands``
(batch norm, whose forward updates the running statistics) gets its operands' float32 copies
written back, rounded, after its forward.

While an op's forward runs, its bfloat16 operands hold float32 arrays: another thread reading the
same tensor at that moment would see them (gputorch's ops are not meant to share a tensor across
threads that run ops on it at once).

Only the CPU computes on bfloat16: CuPy's bfloat16 support (CuPy 14) is experimental, so a
bfloat16 tensor on a CUDA device is refused with :data:`CUDA_MESSAGE`.
"""
import numpy as np

from . import _dtype

__all__ = ["forward_in_float32", "VIEW_OPS", "CUDA_MESSAGE", "check_device"]

# Node classes that make views (filled by the dispatcher's apply_view): they run on bfloat16 as is.
VIEW_OPS = set()

CUDA_MESSAGE = ("bfloat16 tensors are CPU-only in gputorch: CuPy's bfloat16 support is experimental, so "
                "gputorch does not move them to CUDA devices. Use float16 on CUDA (autocast's default there), "
                "or keep the bfloat16 tensor on the CPU.")

_BF16 = _dtype.bfloat16
_F32 = np.dtype(np.float32)


def check_device(device):
    """Raise the CPU-only error when ``device`` is not a CPU (or meta) device, and the missing
    package's error without ``ml_dtypes``."""
    _dtype.require_numpy_dtype(_BF16)
    if device.type not in ("cpu", "meta"):
        raise RuntimeError(CUDA_MESSAGE)


def _bfloat16_tensors(args, found):
    """The bfloat16 tensors of ``args`` (also inside lists and tuples), each once, into ``found``."""
    from ._tensor import Tensor
    for a in args:
        if isinstance(a, Tensor):
            if a._dtype is _BF16 and all(a is not f for f in found):
                found.append(a)
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            _bfloat16_tensors(a, found)
    return found


def _result_is_bfloat16(tensors):
    """Whether PyTorch's result type of ``tensors`` (the op's tensor operands) is bfloat16."""
    return _dtype.result_dtype(tensors) is _BF16


def _all_tensors(args, found):
    """The tensors of ``args``, also those inside lists and tuples, into ``found``."""
    from ._tensor import Tensor
    for a in args:
        if isinstance(a, Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            _all_tensors(a, found)
    return found


def _round(out, to_bf16):
    if type(out) is tuple:
        return tuple(_round(o, to_bf16) for o in out)
    dtype = getattr(out, "dtype", None)    # NumPy arrays and scalars, meta arrays
    if to_bf16 and dtype is not None and np.dtype(dtype).kind == "f":
        return out.astype(_BF16.np)
    return out


def forward_in_float32(cls, forward, ctx, *args, **params):
    """``forward(ctx, *args, **params)`` with the bfloat16 tensors of ``args`` computed in float32,
    the floating results rounded to bfloat16 when the op's result type is bfloat16."""
    for a in args:
        dev = getattr(a, "_device", None)
        if dev is not None:
            check_device(dev)
    from ._tensor import Tensor
    if cls in VIEW_OPS or cls.keeps_bfloat16:
        return forward(ctx, *args, **params)
    operands = [a for a in args if isinstance(a, Tensor)]
    ctx._bfloat16_inputs = frozenset(i for i, t in enumerate(operands) if t._dtype is _BF16)
    # The op sees its bfloat16 operands as float32 tensors for the length of its forward: the same
    # Tensor objects (what it saves for backward is the operand itself), holding float32 copies.
    widened = _bfloat16_tensors(args, [])
    if cls.output_follows_input:   # e.g. layer norm of a bfloat16 input with float32 parameters
        to_bf16 = bool(operands) and operands[0]._dtype is _BF16
    else:
        to_bf16 = _result_is_bfloat16(_all_tensors(args, []))
    kept = [t._data for t in widened]
    for t in widened:
        t._data, t._dtype = t._data.astype(_F32), _dtype.float32
    try:
        out = forward(ctx, *args, **params)
        if cls.updates_operands:   # what the forward wrote into a float32 copy goes back, rounded
            for t, data in zip(widened, kept):
                flags = getattr(data, "flags", None)
                if flags is not None and flags.writeable and not np.array_equal(data.astype(_F32), t._data):
                    data[...] = t._data
    finally:
        for t, data in zip(widened, kept):
            t._data, t._dtype = data, _BF16
    return _round(out, to_bf16)
