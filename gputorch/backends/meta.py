"""The meta backend: tensors with a shape and a dtype and no data.

Every op runs its ordinary forward on :class:`~gputorch.backends.meta_array.MetaArray` (through
``xp = meta_xp``), which computes only the shape, dtype and layout of each result, so whole
training steps can be replayed without allocating (see ``gputorch.profiler.estimate_memory``).
Reading values (``item()``, ``tolist()``, copying to another device) raises, as in PyTorch;
random ops give meta tensors. Ops whose generic forward looks at values register a shape-only
forward in ``overrides`` (see ``meta_overrides.py``).
"""
import numpy as np

from . import meta_xp
from .base import Backend
from .meta_array import NO_DATA, MetaArray
from .philox import PhiloxEngine


class MetaEngine(PhiloxEngine):
    """The random engine of the meta device: draws have the requested shape and dtype only.

    It stands in for a counter-based (Philox) engine: its ``seed`` and ``offset`` are there and
    move on as a Philox engine's would, so an op that needs a Philox generator (the fused dropout
    of a replayed CUDA step, see ``meta_imitation.py``) takes the same path on the meta device.
    Its state is the seed alone."""

    STATE_BYTES = 8

    def __init__(self, seed):
        super().__init__(seed, xp=meta_xp)
        self.seed = int(seed)

    def random(self, shape, np_dtype=np.float32):
        return meta_xp.empty(shape, np_dtype)

    def standard_normal(self, shape, np_dtype=np.float32):
        return meta_xp.empty(shape, np_dtype)

    def integers(self, low, high, shape, np_dtype=np.int64):
        if int(high) <= int(low):
            raise ValueError(f"integers: empty range [{low}, {high})")
        return meta_xp.empty(shape, np_dtype)

    def permutation(self, n, np_dtype=np.int64):
        return meta_xp.empty((n,), np_dtype)

    def get_state(self):
        return np.array([self.seed], dtype="<u8").view(np.uint8).copy()

    def set_state(self, state):
        state = np.ascontiguousarray(state, dtype=np.uint8)
        if state.size != self.STATE_BYTES:
            raise RuntimeError(f"Expected a meta RNG state of size {self.STATE_BYTES} but found the input RNG "
                               f"state size to be {state.size}")
        self.seed = int(state.view("<u8")[0])


class MetaBackend(Backend):
    name = "meta"
    xp = meta_xp
    array_type = MetaArray

    def __init__(self):
        super().__init__()
        from . import meta_overrides
        meta_overrides.install(self.overrides)

    def check_device(self, device):
        if device.index not in (None, 0):
            raise RuntimeError(f"meta device index must be 0 or None, got {device.index}")
        from .._device import device as Device
        return Device("meta")

    def asarray(self, obj, np_dtype=None, device=None):
        return meta_xp.asarray(obj, dtype=np_dtype)

    def to_numpy(self, array):
        raise NotImplementedError(NO_DATA)

    def ensure_array(self, value, device):
        if isinstance(value, MetaArray):
            return value
        return meta_xp.asarray(value)

    def new_rng_engine(self, device, seed):
        return MetaEngine(seed)


BACKEND = MetaBackend()
