"""Random engines (Philox4x32-10, NumPy PCG64), Generator and the module-level seeding API."""
import math
import pickle

import numpy as np
import pytest

import gputorch
from gputorch.backends.numpy_engine import NumpyEngine
from gputorch.backends.philox import PhiloxEngine, philox4x32


# ---------------------------------------------------------------- an independent Philox reference
def _mulhilo(a, b):
    product = a * b
    return product >> 32, product & 0xFFFFFFFF


def reference_philox(counter, key, rounds=10):
    """Philox4x32 on Python ints, following Random123's layout: the key is bumped before
    every round but the first."""
    c = list(counter)
    k0, k1 = key
    for r in range(rounds):
        if r > 0:
            k0 = (k0 + 0x9E3779B9) % 2**32
            k1 = (k1 + 0xBB67AE85) % 2**32
        hi0, lo0 = _mulhilo(0xD2511F53, c[0])
        hi1, lo1 = _mulhilo(0xCD9E8D57, c[2])
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return c


# Random123's published known-answer vectors (kat_vectors): counter, key -> output.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter,key,expected", KAT)
def test_philox_known_answers(counter, key, expected):
    assert tuple(reference_philox(counter, key)) == expected
    arrays = [np.array([c], dtype=np.uint64) for c in counter]
    out = philox4x32(np, *arrays, *key)
    assert tuple(int(o[0]) for o in out) == expected


def test_philox_stream_matches_reference():
    seed = 0x0123456789ABCDEF
    eng = PhiloxEngine(seed, xp=np)
    words = eng.words(10)   # blocks 0, 1, 2 (the last one partly)
    key = (seed & 0xFFFFFFFF, seed >> 32)
    expected = []
    for block in range(3):
        expected += reference_philox((block, 0, 0, 0), key)
    assert words.tolist() == expected[:10]
    assert eng.offset == 3
    # the stream continues at block 3
    assert eng.words(4).tolist() == reference_philox((3, 0, 0, 0), key)


def test_philox_counter_carries_into_high_word():
    eng = PhiloxEngine(7, xp=np)
    eng.offset = 2**32 - 1
    words = eng.words(8)
    assert words[:4].tolist() == reference_philox((2**32 - 1, 0, 0, 0), (7, 0))
    assert words[4:].tolist() == reference_philox((0, 1, 0, 0), (7, 0))


ENGINES = [lambda seed: PhiloxEngine(seed, xp=np), NumpyEngine]
ENGINE_IDS = ["philox", "numpy"]


@pytest.mark.parametrize("make", ENGINES, ids=ENGINE_IDS)
def test_engine_same_seed_same_numbers(make):
    a, b, c = make(123), make(123), make(124)
    for eng in (a, b, c):
        eng.draws = [eng.random((5,), np.float32), eng.standard_normal((3, 2), np.float64),
                     eng.integers(-5, 5, (7,), np.int64), eng.permutation(6, np.int64)]
    for x, y in zip(a.draws, b.draws):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.draws[0], c.draws[0])


@pytest.mark.parametrize("make", ENGINES, ids=ENGINE_IDS)
def test_engine_state_round_trip(make):
    eng = make(99)
    eng.random((3,), np.float64)
    state = eng.get_state()
    assert state.dtype == np.uint8 and state.ndim == 1
    first = eng.random((4,), np.float32)
    other = make(5)
    other.set_state(state)
    np.testing.assert_array_equal(other.random((4,), np.float32), first)
    assert other.seed == 99
    with pytest.raises(RuntimeError, match="state size"):
        other.set_state(state[:-1])


@pytest.mark.parametrize("make", ENGINES, ids=ENGINE_IDS)
@pytest.mark.parametrize("np_dtype", [np.float16, np.float32, np.float64])
def test_engine_uniform_statistics(make, np_dtype):
    u = make(2024).random((20000,), np_dtype)
    assert u.dtype == np_dtype and u.shape == (20000,)
    assert u.min() >= 0 and u.max() < 1
    u = u.astype(np.float64)
    assert abs(u.mean() - 0.5) < 0.01
    assert abs(u.var() - 1 / 12) < 0.005
    counts = np.histogram(u, bins=10, range=(0, 1))[0]
    chi2 = ((counts - 2000) ** 2 / 2000).sum()
    assert chi2 < 35   # 9 degrees of freedom: p ~ 1e-4


@pytest.mark.parametrize("make", ENGINES, ids=ENGINE_IDS)
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_engine_normal_statistics(make, np_dtype):
    z = make(7).standard_normal((4, 5001), np_dtype)
    assert z.dtype == np_dtype and z.shape == (4, 5001)
    z = z.astype(np.float64).ravel()
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 0.04
    assert abs(z.std() - 1) < 0.03
    assert abs((np.abs(z) < 1).mean() - 0.6827) < 0.015
    assert abs(np.mean(z ** 3)) < 0.1 and abs(np.mean(z ** 4) - 3) < 0.25


@pytest.mark.parametrize("make", ENGINES, ids=ENGINE_IDS)
def test_engine_integers_and_permutation(make):
    eng = make(11)
    ints = eng.integers(-3, 4, (7000,), np.int64)
    assert ints.min() == -3 and ints.max() == 3
    counts = np.bincount(ints + 3)
    assert counts.min() > 850 and counts.max() < 1150
    wide = eng.integers(-(2**63), 2**63, (1000,), np.int64)
    assert (wide < 0).mean() == pytest.approx(0.5, abs=0.08)
    as_uint8 = eng.integers(0, 256, (4000,), np.uint8)
    assert as_uint8.dtype == np.uint8 and as_uint8.max() > 240
    perm = eng.permutation(50, np.int64)
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
    assert eng.permutation(0, np.int64).shape == (0,)


def test_philox_lanes_are_independent_bits():
    w = PhiloxEngine(3, xp=np).words(40000)
    bits = ((w[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(np.float64)
    assert np.abs(bits.mean(axis=0) - 0.5).max() < 0.015
    lag = np.corrcoef(w[:-1].astype(np.float64), w[1:].astype(np.float64))[0, 1]
    assert abs(lag) < 0.03


# ---------------------------------------------------------------- Generator
def test_generator_defaults_and_seeding():
    g = gputorch.Generator()
    assert g.device == gputorch.device("cpu")
    assert g.initial_seed() == 67280421310721
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    a = gputorch.rand(4, generator=g)
    g.manual_seed(5)
    b = gputorch.rand(4, generator=g)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**64
    g.manual_seed(-1)
    assert g.initial_seed() == 2**64 - 1
    g.manual_seed(1.7)
    assert g.initial_seed() == 1


def test_generator_seed_errors():
    g = gputorch.Generator()
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2**64)
    with pytest.raises(ValueError, match="Overflow"):
        gputorch.manual_seed(-(2**63) - 1)
    with pytest.raises(ValueError):
        g.manual_seed("a")


def test_generator_state_round_trip():
    g = gputorch.Generator().manual_seed(3)
    gputorch.randn(3, generator=g)
    state = g.get_state()
    assert isinstance(state, gputorch.Tensor) and state.dtype == gputorch.uint8 and state.dim() == 1
    x = gputorch.randn(5, generator=g)
    g2 = gputorch.Generator().set_state(state)
    np.testing.assert_array_equal(gputorch.randn(5, generator=g2).numpy(), x.numpy())
    assert g2.initial_seed() == 3
    # the saved state is a copy, not a live view of the engine
    state2 = g.get_state()
    gputorch.rand(1, generator=g)
    assert not np.array_equal(state2.numpy(), g.get_state().numpy())


def test_generator_set_state_errors():
    g = gputorch.Generator()
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state([1, 2])
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(gputorch.zeros(56))
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(gputorch.zeros(3, dtype=gputorch.uint8))


def test_generator_pickles():
    g = gputorch.Generator().manual_seed(8)
    gputorch.rand(2, generator=g)
    g2 = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(gputorch.rand(3, generator=g).numpy(),
                                  gputorch.rand(3, generator=g2).numpy())


def test_generator_device_type_must_match(device):
    g = gputorch.Generator()
    if device == "cuda":
        with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
            gputorch.rand(2, generator=g, device=device)
    with pytest.raises(TypeError, match="Generator"):
        gputorch.rand(2, generator=1, device=device)


# ---------------------------------------------------------------- module-level API
def test_manual_seed_reproduces(device):
    gputorch.manual_seed(42)
    a = gputorch.rand(3, device=device), gputorch.randn(2, device=device), gputorch.randperm(5, device=device)
    gputorch.manual_seed(42)
    b = gputorch.rand(3, device=device), gputorch.randn(2, device=device), gputorch.randperm(5, device=device)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.cpu().numpy(), y.cpu().numpy())
    assert gputorch.initial_seed() == 42
    assert isinstance(gputorch.manual_seed(1), gputorch.Generator)


def test_default_generator_is_module_attribute():
    gputorch.manual_seed(0)
    assert gputorch.default_generator.initial_seed() == 0
    assert gputorch.random.default_generator is gputorch.default_generator


def test_seed_is_nondeterministic():
    s1 = gputorch.seed()
    assert gputorch.initial_seed() == s1
    s2 = gputorch.seed()
    assert s1 != s2


def test_rng_state_round_trip():
    gputorch.manual_seed(0)
    state = gputorch.get_rng_state()
    a = gputorch.rand(4)
    gputorch.rand(10)
    gputorch.set_rng_state(state)
    np.testing.assert_array_equal(gputorch.rand(4).numpy(), a.numpy())


def test_fork_rng_restores_state():
    gputorch.manual_seed(1)
    with gputorch.random.fork_rng():
        gputorch.manual_seed(99)
        gputorch.rand(5)
    after = gputorch.rand(3)
    gputorch.manual_seed(1)
    np.testing.assert_array_equal(after.numpy(), gputorch.rand(3).numpy())


def test_default_cpu_seed_is_not_fixed():
    # like PyTorch, the CPU default generator starts from a non-deterministic seed
    import subprocess
    import sys
    code = "import gputorch; print(gputorch.initial_seed())"
    seeds = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout for _ in range(2)}
    assert len(seeds) == 2


def test_philox_uniform_float64_uses_53_bits():
    u = PhiloxEngine(1, xp=np).random((1000,), np.float64)
    scaled = u * 2.0 ** 53
    assert (scaled == np.floor(scaled)).all()
    assert (np.abs(scaled - np.floor(scaled / 2**29) * 2**29) > 0).mean() > 0.99   # low bits vary


def test_philox_normal_tail_is_finite():
    eng = PhiloxEngine(0, xp=np)
    z = eng.standard_normal((200001,), np.float32)
    assert np.isfinite(z).all() and z.shape == (200001,)
    assert np.abs(z).max() < 8
    assert math.isclose(float((z > 1.96).mean()), 0.025, abs_tol=0.003)
