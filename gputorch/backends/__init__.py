"""Array backends. A backend turns a device type into an array module (``xp``) and
the handful of services the core needs; see :class:`gputorch.backends.base.Backend`
for the full list of what a backend must provide.

Backends are created on first use, so importing gputorch never imports CuPy.
"""
import importlib

_BACKEND_MODULES = {"cpu": "gputorch.backends.cpu", "cuda": "gputorch.backends.cuda",
                    "meta": "gputorch.backends.meta"}
_loaded = {}


def known_device_types():
    return tuple(_BACKEND_MODULES)


def register_backend(device_type, module_name):
    """Make a new device type available (e.g. a shape-only "meta" backend)."""
    _BACKEND_MODULES[device_type] = module_name


def get_backend(device_type):
    """The backend object for a device type, e.g. ``get_backend("cuda")``."""
    b = _loaded.get(device_type)
    if b is None:
        b = _loaded[device_type] = importlib.import_module(_BACKEND_MODULES[device_type]).BACKEND
    return b


# PyTorch's flag namespaces (``gputorch.backends.cudnn.benchmark = True``, ...): recorded, no
# effect, and none of them imports CuPy.
from . import cuda, cudnn, mps  # noqa: E402,F401
