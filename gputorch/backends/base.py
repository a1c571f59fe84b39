"""The contract between the core and an array backend.

Ops are written once against ``xp`` (the NumPy API, which CuPy mirrors). A backend
may replace one op's forward with a specialised implementation by putting it in
``overrides``: keyed by the op's graph-node class (the dispatcher looks there
first), or by an array-level update function such as ``gputorch.optim.adam.adam_update``
(the optimizers look there). Nothing above this layer tests which device it is running on.
"""


def elements_share_memory(x):
    """True when several elements of the non-empty array ``x`` are one memory location (a
    dimension of size > 1 with stride 0: an expanded tensor), so an in-place write into it is
    PyTorch's overlap error. Read from the strides, not from NumPy's read-only flag: CuPy's
    broadcast views are writable."""
    return x.size > 1 and any(stride == 0 and n > 1 for n, stride in zip(x.shape, x.strides))


class Backend:
    """What every backend provides.

    Attributes:
        name: the device type ("cpu", "cuda", ...).
        xp: the array module (``numpy``, ``cupy``).
        array_type: the class of arrays this backend produces.
        overrides: ``{node class: forward function}`` replacing generic op forwards, and
            ``{update function: replacement}`` for the optimizers' array-level updates.
    """

    name = None
    xp = None
    array_type = None

    def __init__(self):
        self.overrides = {}

    # -- devices -----------------------------------------------------------
    def is_available(self):
        return True

    def device_count(self):
        return 1

    def check_device(self, device):
        """Raise RuntimeError if ``device`` cannot hold tensors here; return the concrete device
        (a bare "cuda" becomes "cuda:<current>")."""
        return device

    def context(self, device):
        """A context manager that makes ``device`` current for array creation and ops,
        or None when the backend has no notion of a current device."""
        return None

    def synchronize(self, device=None):
        pass

    # -- arrays --------------------------------------------------------------
    def asarray(self, obj, np_dtype=None, device=None):
        """An array on ``device`` from host data (NumPy array, nested lists, scalars) or
        from an array of this or another backend."""
        raise NotImplementedError

    def to_numpy(self, array):
        """A NumPy array with the same contents (no copy on the CPU)."""
        raise NotImplementedError

    def ensure_array(self, value, device):
        """Turn a 0-d result that the array library returned as a scalar back into an array
        on ``device``."""
        return self.xp.asarray(value)

    def relu(self, x):
        """``max(x, 0)`` elementwise (a NaN stays NaN, -0.0 stays -0.0 as in PyTorch: NumPy's
        ``maximum`` returns its second operand on a tie), as a new array: the ReLU forward."""
        return self.xp.maximum(0, x)

    def fill_where(self, mask, value, values):
        """``values`` with ``value`` (a number or 0-d array of ``values``' dtype) where the boolean
        array ``mask`` (broadcastable to ``values``) is true: masked_fill, and a gradient masked by
        an activation. A non-finite value under the mask is replaced like any other."""
        return self.xp.where(mask, self.xp.asarray(value, dtype=values.dtype), values)

    # -- random numbers ------------------------------------------------------
    def new_rng_engine(self, device, seed):
        """A random engine for ``device`` seeded with ``seed``: an object with ``seed``,
        ``random(shape, np_dtype)`` (uniform in [0, 1)), ``standard_normal(shape, np_dtype)``,
        ``integers(low, high, shape, np_dtype)`` ([low, high)), ``permutation(n, np_dtype)``,
        ``get_state()`` (host uint8 array) and ``set_state(array)``; see ``numpy_engine.py``
        and ``philox.py``."""
        raise NotImplementedError
