"""Where the kernel sources are, and the kernel families.

A *family* is one ``kernels/<name>.cu`` file compiled as one module, with the list of template
instantiations (NVRTC name expressions such as ``"softmax_forward_warp<float, true, 4>"``) that
its Python wrappers launch. Every wrapper module declares its family here with :func:`family`;
the loader, :func:`gputorch.cuda.kernels.precompile` and the NVRTC compile checks all read
:data:`FAMILIES`.

Sources are found as ``kernels/README.md`` says: ``gputorch/_kernels`` in an installed wheel,
else ``<repo>/kernels`` in a source checkout.
"""
from pathlib import Path

import numpy as np

_package = Path(__file__).resolve().parents[2]        # .../gputorch
KERNEL_DIR = _package / "_kernels"                    # a built wheel / `pip install .`
if not KERNEL_DIR.is_dir():
    KERNEL_DIR = _package.parent / "kernels"          # a source checkout or `pip install -e .`

#: The C++ type of each storage dtype the kernels take, and of its accumulation type.
CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float16): "__half", np.dtype(np.float64): "double"}
ACC_CTYPES = {"float": "float", "__half": "float", "double": "double"}
ACC_DTYPES = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float16): np.dtype(np.float32),
              np.dtype(np.float64): np.dtype(np.float64)}
TYPES = ("float", "__half", "double")

#: Options of every compile (CuPy adds the architecture of the current device).
BASE_OPTIONS = ("-std=c++17",)


class Family:
    """One kernel source file and the instantiations of its templates that are launched."""

    __slots__ = ("name", "filename", "names", "options", "directory")

    def __init__(self, name, filename, names, options=(), directory=None):
        self.name = name
        self.filename = filename
        self.names = tuple(names)
        self.options = tuple(options)
        self.directory = Path(directory) if directory is not None else None

    @property
    def path(self):
        return (self.directory or KERNEL_DIR) / self.filename

    def source(self):
        """The file's text, preceded by a ``#line`` directive so that compilers report errors
        against the file and its own line numbers."""
        text = self.path.read_text()
        return f'#line 1 "{self.path.as_posix()}"\n{text}'

    def compile_options(self, extra=()):
        return BASE_OPTIONS + (f"-I{KERNEL_DIR.as_posix()}",) + self.options + tuple(extra)

    def __repr__(self):
        return f"<kernel family {self.name!r} ({self.filename}, {len(self.names)} kernels)>"


FAMILIES = {}


def family(name, filename, names, options=()):
    """Declare (or look up, when already declared) the family ``name``."""
    fam = FAMILIES.get(name)
    if fam is None:
        fam = FAMILIES[name] = Family(name, filename, names, options)
    return fam


def load_all_families():
    """Import every wrapper module, so that :data:`FAMILIES` lists every family."""
    from . import (activations, amp, cross_entropy, dropout, embedding, gemm, im2col,  # noqa: F401
                   normalization, optimizers, pooling, reductions, softmax)
    return FAMILIES
