"""flatten modules."""
__all__ = []
