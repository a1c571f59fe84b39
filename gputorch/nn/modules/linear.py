"""linear modules."""
__all__ = []
