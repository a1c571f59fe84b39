"""Random number generation: ``Generator``, the default generators, seeding and RNG state.

A :class:`Generator` belongs to one device and wraps the random *engine* that the
device's backend creates (``Backend.new_rng_engine``): NumPy's PCG64 on the CPU,
a counter-based Philox4x32-10 on CUDA. Sampling ops ask :func:`generator_for` for
the generator to draw from (the one passed by the user, or the device's default).

Seeding follows PyTorch: ``manual_seed(s)`` seeds the CPU generator and every CUDA
device's default generator, including those created later; the CPU default
generator starts from a non-deterministic seed.
"""
import contextlib
import os

from ._device import device as Device
from .backends.numpy_engine import NumpyEngine  # noqa: F401 - the engines, re-exported
from .backends.philox import PhiloxEngine  # noqa: F401

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state"]

DEFAULT_SEED = 67280421310721   # PyTorch's seed for a fresh Generator
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _check_seed(seed):
    """A seed as an unsigned 64-bit int (negative seeds wrap around, like PyTorch)."""
    seed = int(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK64


def _nondeterministic_seed():
    return int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)


class Generator:
    """A random number generator for one device: ``Generator(device="cpu")``.

    ``manual_seed(s)`` restarts it from seed ``s`` (returns the generator), ``seed()``
    reseeds it non-deterministically, ``get_state()``/``set_state(t)`` save and restore
    it as a CPU uint8 tensor.
    """

    def __init__(self, device="cpu"):
        dev = Device(device)
        self._device = dev.backend.check_device(dev)
        self._engine = self._device.backend.new_rng_engine(self._device, DEFAULT_SEED)

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed):
        self._engine = self._device.backend.new_rng_engine(self._device, _check_seed(seed))
        return self

    def seed(self):
        """Reseed from a non-deterministic source; returns the new seed."""
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._engine.seed

    def get_state(self):
        from .ops.creation import from_numpy
        return from_numpy(self._engine.get_state())

    def set_state(self, new_state):
        from ._tensor import Tensor
        from . import _dtype
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a gputorch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._dtype is not _dtype.uint8:
            raise TypeError("RNG state must be a gputorch.ByteTensor")
        self._engine.set_state(new_state._device.backend.to_numpy(new_state._data).reshape(-1))
        return self

    @property
    def engine(self):
        """The backend's random engine (draws arrays on this generator's device)."""
        return self._engine

    def __reduce__(self):
        return (_rebuild_generator, (str(self._device), self._engine.get_state().tobytes()))

    def __repr__(self):
        return f"<gputorch.Generator object on {self._device} at {id(self):#x}>"


def _rebuild_generator(device_str, state_bytes):
    import numpy as np
    g = Generator(device_str)
    g._engine.set_state(np.frombuffer(state_bytes, dtype=np.uint8))
    return g


# -- default generators -------------------------------------------------------------
default_generator = Generator("cpu").manual_seed(_nondeterministic_seed())
_device_generators = {}     # {device: Generator} for non-CPU devices, created on first use
_seed_for_new = [None]      # seed for device generators created later (set by manual_seed)


def default_generator_for(dev):
    """The default generator of a concrete device (created on first use)."""
    if dev.type == "cpu":
        return default_generator
    g = _device_generators.get(dev)
    if g is None:
        g = Generator(dev)
        if _seed_for_new[0] is not None:
            g.manual_seed(_seed_for_new[0])
        _device_generators[dev] = g
    return g


def generator_for(dev, generator=None):
    """The generator a sampling op on device ``dev`` draws from."""
    if generator is None:
        return default_generator_for(dev)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a gputorch.Generator, not {type(generator).__name__}")
    if generator._device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator._device.type}'")
    return generator


def seed_device_generators(seed, devices=None):
    """Seed the default generators of non-CPU devices (all of them, and those created later,
    when ``devices`` is None)."""
    seed = _check_seed(seed)
    if devices is None:
        _seed_for_new[0] = seed
        for g in _device_generators.values():
            g.manual_seed(seed)
    else:
        for dev in devices:
            default_generator_for(dev).manual_seed(seed)


# -- the module-level API ----------------------------------------------------------------
def manual_seed(seed):
    """Seed the CPU generator and every CUDA device's default generator; returns the CPU one."""
    seed = _check_seed(seed)
    seed_device_generators(seed)
    return default_generator.manual_seed(seed)


def seed():
    """Seed every default generator non-deterministically; returns the seed."""
    s = default_generator.seed()
    seed_device_generators(s)
    return s


def initial_seed():
    """The seed of the CPU default generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The CPU default generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cuda"):
    """Restore the CPU generator and device generators on exit (``devices``: the indices or
    devices whose default generators to restore; None: every one created so far)."""
    if not enabled:
        yield
        return
    if devices is None:
        generators = list(_device_generators.values())
    else:
        generators = [default_generator_for(Device(device_type, d) if isinstance(d, int) else Device(d))
                      for d in devices]
    saved = [(g, g.get_state()) for g in [default_generator] + generators]
    try:
        yield
    finally:
        for g, state in saved:
            g.set_state(state)
