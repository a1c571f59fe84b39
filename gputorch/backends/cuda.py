"""The CUDA backend: CuPy arrays on NVIDIA GPUs.

CuPy is imported on first use. Where it is missing, or no GPU is visible, every
request for a CUDA tensor raises a RuntimeError that says so.
"""
from .base import Backend


def _load_cupy():
    """Import CuPy; return (module, None) or (None, reason it is unavailable).

    With ``GPUTORCH_SIMULATE_CUDA=N`` set, the simulated CuPy (N devices, tests only) is used instead.
    """
    import os
    if os.environ.get("GPUTORCH_SIMULATE_CUDA"):
        from . import simulated_cupy
        if simulated_cupy.cuda.runtime.getDeviceCount() > 0:
            return simulated_cupy, None
    try:
        import cupy
    except ImportError as e:
        return None, f"CuPy is not installed ({e}); install gputorch[cuda12] or gputorch[cuda13]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError when there is no driver or device
        return None, f"no CUDA device is visible ({type(e).__name__}: {e})"
    if count == 0:
        return None, "no CUDA device is visible"
    return cupy, None


class _DeviceContext:
    """Makes one GPU current for the duration of an op, switching only when needed."""

    __slots__ = ("index", "_runtime", "_previous")

    def __init__(self, runtime, index):
        self.index = index
        self._runtime = runtime
        self._previous = None

    def __enter__(self):
        current = self._runtime.getDevice()
        if current != self.index:
            self._runtime.setDevice(self.index)
            self._previous = current
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            self._runtime.setDevice(self._previous)
            self._previous = None
        return False


class CUDABackend(Backend):
    name = "cuda"

    def __init__(self):
        super().__init__()
        self._cupy = None
        self._reason = None
        self._probed = False

    def _probe(self):
        if not self._probed:
            self._cupy, self._reason = _load_cupy()
            self._probed = True
            if self._cupy is not None:
                self.xp = self._cupy
                self.array_type = self._cupy.ndarray
                from ..cuda.kernels import install   # the hand-written kernels (kernels/*.cu)
                install(self)
        return self._cupy

    def _require(self):
        cp = self._probe()
        if cp is None:
            raise RuntimeError(f"CUDA is not available: {self._reason}. Use device='cpu' instead.")
        return cp

    @property
    def reason_unavailable(self):
        self._probe()
        return self._reason

    def is_available(self):
        return self._probe() is not None

    def device_count(self):
        cp = self._probe()
        return 0 if cp is None else cp.cuda.runtime.getDeviceCount()

    def current_index(self):
        return self._require().cuda.runtime.getDevice()

    def check_device(self, device):
        cp = self._require()
        from .._device import device as Device
        if device.index is None:
            return Device("cuda", cp.cuda.runtime.getDevice())
        count = cp.cuda.runtime.getDeviceCount()
        if device.index >= count:
            raise RuntimeError(
                f"CUDA error: invalid device ordinal: {device} requested but only {count} "
                f"CUDA device{'s are' if count != 1 else ' is'} visible")
        return device

    def context(self, device):
        return _DeviceContext(self._require().cuda.runtime, device.index)

    def synchronize(self, device=None):
        cp = self._require()
        index = cp.cuda.runtime.getDevice() if device is None or device.index is None else device.index
        with cp.cuda.Device(index):
            cp.cuda.runtime.deviceSynchronize()

    def asarray(self, obj, np_dtype=None, device=None):
        cp = self._require()
        index = cp.cuda.runtime.getDevice() if device is None or device.index is None else device.index
        with cp.cuda.Device(index):
            if isinstance(obj, cp.ndarray) and obj.device.id != index:
                obj = cp.array(obj, copy=True)  # peer copy onto this device
            return cp.asarray(obj, dtype=np_dtype)

    def to_numpy(self, array):
        return self._require().asnumpy(array)

    def ensure_array(self, value, device):
        cp = self._require()
        with cp.cuda.Device(device.index):
            return cp.asarray(value)

    def new_rng_engine(self, device, seed):
        from .philox import PhiloxEngine
        return PhiloxEngine(seed, xp=self._require())


BACKEND = CUDABackend()
