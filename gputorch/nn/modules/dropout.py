"""dropout modules."""
__all__ = []
