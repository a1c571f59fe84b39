"""``gputorch.cuda`` random state: seeding and saving each GPU's default generator.

Seeding functions work without a GPU (there is nothing to seed, and a seed set with
``manual_seed_all`` still applies to generators made later); reading or restoring a
state needs CUDA and raises RuntimeError without it.
"""
from .. import random as _random
from .._device import device as Device

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _generator(device="cuda"):
    from . import _cuda_device
    return _random.default_generator_for(_cuda_device(device))


def _all_devices():
    from . import device_count
    return [Device("cuda", i) for i in range(device_count())]


def get_rng_state(device="cuda"):
    """The state of a GPU's default generator as a CPU uint8 tensor."""
    return _generator(device).get_state()


def get_rng_state_all():
    return [_random.default_generator_for(d).get_state() for d in _all_devices()]


def set_rng_state(new_state, device="cuda"):
    _generator(device).set_state(new_state)


def set_rng_state_all(new_states):
    for dev, state in zip(_all_devices(), new_states):
        _random.default_generator_for(dev).set_state(state)


def manual_seed(seed):
    """Seed the current GPU's default generator (nothing to do without CUDA)."""
    from . import is_available
    if is_available():
        _generator().manual_seed(seed)
    else:
        _random._check_seed(seed)


def manual_seed_all(seed):
    """Seed every GPU's default generator, including those created later."""
    _random.seed_device_generators(seed)


def seed():
    """Seed the current GPU's default generator non-deterministically."""
    from . import is_available
    if is_available():
        _generator().seed()


def seed_all():
    """Seed every GPU's default generator with one non-deterministic seed."""
    _random.seed_device_generators(_random._nondeterministic_seed())


def initial_seed():
    """The seed of the current GPU's default generator."""
    return _generator().initial_seed()
