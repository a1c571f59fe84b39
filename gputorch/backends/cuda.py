"""The CUDA backend: CuPy arrays on NVIDIA GPUs.

CuPy is imported on first use. Where it is missing, or no GPU is visible, every
request for a CUDA tensor raises a RuntimeError that says so.
"""
import threading

import numpy as np

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
    """Makes one GPU current for the duration of an op, switching only when needed.

    Re-entrant: an op run inside another's context (a hook inside backward, an op inside an op's
    forward) leaves the outer one's device current when it ends. The devices to restore are kept
    per thread, as CUDA's current device is."""

    __slots__ = ("index", "_runtime", "_local")

    def __init__(self, runtime, index):
        self.index = index
        self._runtime = runtime
        self._local = threading.local()

    def __enter__(self):
        current = self._runtime.getDevice()
        stack = getattr(self._local, "restore", None)
        if stack is None:
            stack = self._local.restore = []
        if current != self.index:
            self._runtime.setDevice(self.index)
            stack.append(current)
        else:
            stack.append(None)
        return self

    def __exit__(self, *exc):
        previous = self._local.restore.pop()
        if previous is not None:
            self._runtime.setDevice(previous)
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
                from .cupy_semantics import numpy_semantics
                self.xp = numpy_semantics(self._cupy)
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
            if isinstance(obj, cp.ndarray):
                if obj.device.id != index:
                    obj = cp.array(obj, copy=True)  # peer copy onto this device
            elif np.ndim(obj) and cp.cuda.get_current_stream().is_capturing():
                raise RuntimeError(
                    f"copying host data (shape {tuple(np.shape(obj))}) to cuda:{index} while the current stream is capturing "
                    f"a CUDA graph is not supported: the graph would copy from a staging buffer that is recycled "
                    f"after capture; create the tensor before capturing and copy_() new values into it")
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


# ================================================================ torch.backends.cuda flags
# PyTorch programs set and read these as ``torch.backends.cuda.<name>``. gputorch records them so
# that such programs run unchanged, and nothing else changes: float32 matrix products are always
# computed in full float32 (cuBLAS through CuPy, in its default math mode), and
# scaled_dot_product_attention always runs as its plain composite of matmul and softmax. Nothing
# here imports CuPy.

def is_built():
    """Whether gputorch can use CUDA at all here: CuPy is installed (or the simulated device is on).
    It does not import CuPy; ``gputorch.cuda.is_available()`` says whether a GPU is visible."""
    import importlib.util
    import os
    return bool(os.environ.get("GPUTORCH_SIMULATE_CUDA")) or importlib.util.find_spec("cupy") is not None


def _require_bool(setter, value):
    if type(value) is not bool:
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: recorded settings, no effect on numerics.

    ``allow_tf32`` is tied to ``gputorch.get_float32_matmul_precision()`` as in PyTorch: True
    means "high", False means "highest".
    """

    _NAMES = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction", "fp32_precision")

    def __init__(self):
        object.__setattr__(self, "float32_matmul_precision", "highest")
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "fp32_precision": "none"})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return self.float32_matmul_precision != "highest"
        values = self.__dict__["_values"]
        if name in values:
            return values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "float32_matmul_precision":
            object.__setattr__(self, name, value)
        elif name == "allow_tf32":
            _require_bool("set_allow_tf32_cublas", value)
            object.__setattr__(self, "float32_matmul_precision", "high" if value else "highest")
        elif name in self._values:
            if name != "fp32_precision":
                _require_bool(f"set_{name}", value)
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _MatmulFlags()

_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind):
    def enabled():
        return _SDP[kind]

    def enable(enabled):
        _require_bool(f"enable_{kind}_sdp", enabled)
        _SDP[kind] = enabled

    enabled.__name__ = f"{kind}_sdp_enabled"
    enabled.__doc__ = f"Whether the {kind} attention kernel is enabled (recorded only: always the composite here)."
    enable.__name__ = f"enable_{kind}_sdp"
    enable.__doc__ = f"Record whether the {kind} attention kernel may be used (no effect here)."
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn")


def is_flash_attention_available():
    """False: gputorch has no flash-attention kernel."""
    return False


class sdp_kernel:
    """Context manager recording which attention kernels are enabled, restored on exit (deprecated
    in PyTorch in favour of ``nn.attention.sdpa_kernel``; no effect here)."""

    def __init__(self, enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
        self._wanted = {"flash": enable_flash, "math": enable_math, "mem_efficient": enable_mem_efficient,
                        "cudnn": enable_cudnn}
        self._saved = None

    def __enter__(self):
        self._saved = dict(_SDP)
        for kind, value in self._wanted.items():
            _require_bool(f"enable_{kind}_sdp", value)
        _SDP.update(self._wanted)
        return self

    def __exit__(self, *exc):
        _SDP.update(self._saved)
        return False


_LINALG_LIBRARY = ["default"]


def preferred_linalg_library(backend=None):
    """Record the preferred linear-algebra library ("default", "cusolver" or "magma"); no effect here
    (CuPy chooses). Returns the recorded choice as a string."""
    if backend is not None:
        name = backend if isinstance(backend, str) else str(backend)
        if name.lower() not in ("default", "cusolver", "magma"):
            raise RuntimeError(f"Unknown input value. Choose from: default, cusolver, magma. Got {backend!r}")
        _LINALG_LIBRARY[0] = name.lower()
    return _LINALG_LIBRARY[0]
