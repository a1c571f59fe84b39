"""Random number generation: Generator, manual_seed, RNG state."""
__all__ = []
