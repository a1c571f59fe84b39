"""A counter-based random engine: Philox4x32-10 written with array integer ops.

Philox (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11)
maps a 128-bit counter and a 64-bit key to 128 random bits with ten rounds of
multiply/xor. Because every block is an independent function of its counter,
the whole stream for one request is computed in a handful of vectorised array
operations, on any NumPy-like module (NumPy on the host, CuPy on a GPU).

The engine's state is ``(seed, offset)``: the key is the seed and ``offset`` is
the number of 128-bit blocks consumed so far. Block ``i`` of the stream uses the
counter ``(offset + i)`` in its two low words and zeros in the high ones.
"""
import math

import numpy as np

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_M0, _M1 = 0xD2511F53, 0xCD9E8D57      # round multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85      # Weyl key increments
_ROUNDS = 10


def philox4x32(xp, c0, c1, c2, c3, k0, k1, rounds=_ROUNDS):
    """Philox4x32 on four arrays of 32-bit words (held in uint64 arrays) and a key of two
    Python ints; returns the four output word arrays (uint64 holding 32-bit values)."""
    for r in range(rounds):
        if r:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
        p0 = c0 * _M0
        p1 = c2 * _M1
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & _MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & _MASK32
    return c0, c1, c2, c3


class PhiloxEngine:
    """Random numbers from Philox4x32-10 on the array module ``xp``.

    ``seed`` is an unsigned 64-bit key. The same ``(seed, offset)`` always gives the
    same numbers, whatever the array module.
    """

    STATE_BYTES = 16   # seed and offset, little-endian uint64 each

    def __init__(self, seed, xp=np):
        self.xp = xp
        self.seed = int(seed) & _MASK64
        self.offset = 0

    # -- the raw stream --------------------------------------------------------------
    def words(self, n):
        """The next ``n`` 32-bit words of the stream, as a uint64 array."""
        xp = self.xp
        blocks = (n + 3) // 4
        ctr = xp.arange(blocks, dtype=xp.uint64) + xp.uint64(self.offset)
        self.offset = (self.offset + blocks) & _MASK64
        zero = xp.zeros(blocks, dtype=xp.uint64)
        out = philox4x32(xp, ctr & _MASK32, ctr >> 32, zero, zero,
                         self.seed & _MASK32, self.seed >> 32)
        return xp.stack(out, axis=1).reshape(-1)[:n]

    def _words64(self, n):
        w = self.words(2 * n)
        return (w[0::2] << 32) | w[1::2]

    # -- distributions ---------------------------------------------------------------
    def random(self, shape, np_dtype=np.float32):
        """Uniform floats in [0, 1) of ``np_dtype`` (as many random bits as its mantissa holds)."""
        xp = self.xp
        np_dtype = np.dtype(np_dtype)
        n = math.prod(shape)
        if np_dtype == np.float64:
            bits = self._words64(n) >> 11
            out = bits.astype(np.float64) * (1.0 / 9007199254740992.0)
        else:
            digits = 24 if np_dtype == np.float32 else 11
            bits = self.words(n) >> (32 - digits)
            out = (bits.astype(np.float32) * np.float32(2.0 ** -digits)).astype(np_dtype, copy=False)
        return out.reshape(shape)

    def standard_normal(self, shape, np_dtype=np.float32):
        """Standard normal floats (Box-Muller on pairs of uniforms)."""
        xp = self.xp
        np_dtype = np.dtype(np_dtype)
        work = np.float64 if np_dtype == np.float64 else np.float32
        n = math.prod(shape)
        pairs = (n + 1) // 2
        u = self.random((2, pairs), work)
        radius = xp.sqrt(-2.0 * xp.log1p(-u[0]))    # 1 - u is in (0, 1]: the log is finite
        angle = (2.0 * math.pi) * u[1]
        z = xp.concatenate([radius * xp.cos(angle), radius * xp.sin(angle)])[:n]
        return z.astype(np_dtype, copy=False).reshape(shape)

    def integers(self, low, high, shape, np_dtype=np.int64):
        """Integers uniform in [low, high) (a range of up to 2**64 values)."""
        xp = self.xp
        span = int(high) - int(low)
        if span <= 0 or span > 1 << 64:
            raise ValueError(f"integers: empty or too large range [{low}, {high})")
        n = math.prod(shape)
        draws = self._words64(n)
        if span != 1 << 64:
            draws = draws % xp.uint64(span)
        values = (draws + xp.uint64(int(low) & _MASK64)).view(np.int64)
        return values.astype(np_dtype, copy=False).reshape(shape)

    def permutation(self, n, np_dtype=np.int64):
        """A random permutation of ``range(n)`` (argsort of random 64-bit keys)."""
        keys = self._words64(n)
        return self.xp.argsort(keys).astype(np_dtype, copy=False)

    # -- state -----------------------------------------------------------------------
    def get_state(self):
        """The state as a host uint8 array: seed and offset, little-endian uint64 each."""
        return np.array([self.seed, self.offset], dtype="<u8").view(np.uint8).copy()

    def set_state(self, state):
        state = np.ascontiguousarray(state, dtype=np.uint8)
        if state.size != self.STATE_BYTES:
            raise RuntimeError(f"Expected a Philox RNG state of size {self.STATE_BYTES} but found the "
                               f"input RNG state size to be {state.size}")
        self.seed, self.offset = (int(v) for v in state.view("<u8"))
