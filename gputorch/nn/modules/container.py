"""container modules."""
__all__ = []
