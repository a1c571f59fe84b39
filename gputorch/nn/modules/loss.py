"""loss modules."""
__all__ = []
