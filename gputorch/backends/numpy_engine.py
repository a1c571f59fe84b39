"""The CPU random engine: NumPy's ``Generator`` on a PCG64 bit generator.

Its state (seed, the 128-bit PCG64 state and increment, and the buffered half
word) serialises to a fixed-size byte array, so ``Generator.get_state`` and
``set_state`` round-trip exactly.
"""
import numpy as np

_MASK64 = 0xFFFFFFFFFFFFFFFF
_MASK128 = (1 << 128) - 1


class NumpyEngine:
    """Random numbers on the host from ``numpy.random.Generator(PCG64(seed))``."""

    STATE_BYTES = 56   # seed (8), state (16), inc (16), has_uint32 (8), uinteger (8)

    def __init__(self, seed):
        self.seed = int(seed) & _MASK64
        self._rng = np.random.Generator(np.random.PCG64(self.seed))

    # -- distributions ---------------------------------------------------------------
    def random(self, shape, np_dtype=np.float32):
        """Uniform floats in [0, 1) of ``np_dtype``."""
        np_dtype = np.dtype(np_dtype)
        if np_dtype == np.float16:   # 11 random bits: exact in half precision, never rounds up to 1
            bits = self._rng.integers(0, 1 << 11, shape, dtype=np.int32)
            return (bits * np.float32(2.0 ** -11)).astype(np.float16)
        if np_dtype.kind != "f":     # bfloat16 (ml_dtypes): 8 random bits, exact there
            bits = self._rng.integers(0, 1 << 8, shape, dtype=np.int32)
            return (bits * np.float32(2.0 ** -8)).astype(np_dtype)
        return self._rng.random(shape, dtype=np_dtype)

    def standard_normal(self, shape, np_dtype=np.float32):
        np_dtype = np.dtype(np_dtype)
        if np_dtype == np.float16 or np_dtype.kind != "f":   # float16, bfloat16: drawn in float32, rounded
            return self._rng.standard_normal(shape, dtype=np.float32).astype(np_dtype)
        return self._rng.standard_normal(shape, dtype=np_dtype)

    def integers(self, low, high, shape, np_dtype=np.int64):
        """Integers uniform in [low, high) (a range of up to 2**64 values)."""
        low, high = int(low), int(high)
        if high <= low or high - low > 1 << 64:
            raise ValueError(f"integers: empty or too large range [{low}, {high})")
        if -(1 << 63) <= low and high <= 1 << 63:
            values = self._rng.integers(low, high, shape, dtype=np.int64)
        else:   # wider than int64 allows: draw offsets as uint64 and wrap around
            offsets = self._rng.integers(0, high - low, shape, dtype=np.uint64)
            values = (offsets + np.uint64(low & _MASK64)).view(np.int64)
        return values.astype(np_dtype, copy=False)

    def permutation(self, n, np_dtype=np.int64):
        return self._rng.permutation(n).astype(np_dtype, copy=False)

    # -- state -----------------------------------------------------------------------
    def get_state(self):
        st = self._rng.bit_generator.state
        words = [self.seed,
                 st["state"]["state"] & _MASK64, st["state"]["state"] >> 64,
                 st["state"]["inc"] & _MASK64, st["state"]["inc"] >> 64,
                 st["has_uint32"], st["uinteger"]]
        return np.array(words, dtype="<u8").view(np.uint8).copy()

    def set_state(self, state):
        state = np.ascontiguousarray(state, dtype=np.uint8)
        if state.size != self.STATE_BYTES:
            raise RuntimeError(f"Expected a CPU RNG state of size {self.STATE_BYTES} but found the "
                               f"input RNG state size to be {state.size}")
        seed, s_lo, s_hi, i_lo, i_hi, has, extra = (int(w) for w in state.view("<u8"))
        bit_gen = np.random.PCG64()
        bit_gen.state = {"bit_generator": "PCG64",
                         "state": {"state": (s_hi << 64 | s_lo) & _MASK128,
                                   "inc": (i_hi << 64 | i_lo) & _MASK128},
                         "has_uint32": has, "uinteger": extra}
        self.seed = seed
        self._rng = np.random.Generator(bit_gen)
