"""Assertions and conversions shared by the tests."""
import os

import numpy as np

import gputorch


def to_numpy(x):
    """A NumPy array from a gputorch tensor (any device), a torch tensor or array-like."""
    if isinstance(x, gputorch.Tensor):
        return np.asarray(x.detach().cpu()._data)
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def flushes_float32_denormals(device):
    """Whether ``device`` flushes float32 denormals to zero: a real GPU does (CuPy compiles every
    kernel with ``-ftz=true``); the CPU and the simulated GPU keep them."""
    return str(device).startswith("cuda") and not os.environ.get("GPUTORCH_SIMULATE_CUDA")


def assert_same_across_devices(actual, desired):
    """Equality of float64 results computed partly on another device. A real GPU fuses
    multiply-adds and rounds ``exp``/``sqrt``/... differently from the CPU's libm, which moves the
    last bits (found on an H200: 1 to 17 units in the last place); any real mistake is far larger."""
    np.testing.assert_allclose(actual, desired, rtol=1e-13, atol=0)


def assert_close(actual, expected, rtol=1e-6, atol=1e-6, check_dtype=True):
    """Values (and dtype, when both sides have one that gputorch knows) must agree."""
    a, e = to_numpy(actual), to_numpy(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if check_dtype and isinstance(actual, gputorch.Tensor) and hasattr(expected, "dtype"):
        exp_name = str(expected.dtype).replace("torch.", "")
        if exp_name in {d.name for d in gputorch._dtype.ALL_DTYPES}:
            assert actual.dtype.name == exp_name, f"dtype {actual.dtype} != expected {expected.dtype}"
    wide = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
    np.testing.assert_allclose(a.astype(wide) if a.dtype != bool else a,
                               e.astype(wide) if e.dtype != bool else e, rtol=rtol, atol=atol)
