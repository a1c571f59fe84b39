"""Bessel functions of the first and second kind (``bessel_j0``, ``bessel_j1``, ``bessel_y0``,
``bessel_y1``) and Airy's ``Ai``, computed by ``scipy.special`` (Cephes) in float64 and rounded to
the input's floating dtype (integers: the default float). On CUDA the values make a round trip
through host memory. No gradient, as in PyTorch. SciPy is an extra: ``pip install
'gputorch[scipy]'`` (the test extra has it); without it these functions raise an ImportError that
says so.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._common import write_out
from .pointwise._common import _require_tensor

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"]


def _scipy_special():
    try:
        import scipy.special
    except ImportError as exc:
        raise ImportError("gputorch.special's Bessel and Airy functions use SciPy: install it with "
                          "pip install 'gputorch[scipy]'") from exc
    return scipy.special


def _host_function(name, compute):
    def op(input, *, out=None):
        _require_tensor(name, input, "input", 1)
        result = input._dtype if input._dtype.is_floating_point else _dtype.get_default_dtype()
        backend = input._device.backend
        host = np.asarray(backend.to_numpy(input._data), dtype=np.float64)
        with np.errstate(all="ignore"):
            values = np.asarray(compute(_scipy_special(), host)).astype(result.np)
        array = values if input._device.type == "cpu" else backend.asarray(values, None, input._device)
        return write_out(Tensor._make(array, input._device, result), out)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` by ``scipy.special`` (no gradient, as in PyTorch)."
    return op


bessel_j0 = _host_function("bessel_j0", lambda sp, x: sp.j0(x))
bessel_j1 = _host_function("bessel_j1", lambda sp, x: sp.j1(x))
bessel_y0 = _host_function("bessel_y0", lambda sp, x: sp.y0(x))
bessel_y1 = _host_function("bessel_y1", lambda sp, x: sp.y1(x))
airy_ai = _host_function("airy_ai", lambda sp, x: sp.airy(x)[0])
