"""The CPU backend: NumPy arrays in host memory."""
import numpy as np

from .base import Backend


class CPUBackend(Backend):
    name = "cpu"
    xp = np
    array_type = np.ndarray

    def asarray(self, obj, np_dtype=None, device=None):
        to_numpy = getattr(obj, "get", None)          # a CuPy array: copy device -> host
        if to_numpy is not None and not isinstance(obj, np.ndarray):
            obj = to_numpy()
        return np.asarray(obj, dtype=np_dtype)

    def to_numpy(self, array):
        return array

    def new_rng_engine(self, device, seed):
        from .numpy_engine import NumpyEngine
        return NumpyEngine(seed)


BACKEND = CPUBackend()
