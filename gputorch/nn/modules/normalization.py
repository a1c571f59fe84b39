"""normalization modules."""
__all__ = []
